"""Matcher misuse: every wrong argument is a clear, typed error, and nothing moves.

Each case is run on a flat matcher and on a stack matcher (a recursive schema), part-way through a
document; the oracle is the matcher itself before the call: its state, finished flag, history
length, mask, and the caller's bitmask must all be as they were.
"""

import numpy as np
import pytest

from tokenfsm.masks import (
    BitmaskError,
    BitmaskTypeError,
    InvalidTextError,
    Matcher,
    PushdownIndex,
    RollbackError,
    TokenIndex,
    UnknownTokenError,
    Vocabulary,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    fill_next_token_bitmasks,
)
from tokenfsm.schema import SchemaWarning, compile_json_schema

TOKENS = [b"[", b"]", b",", b"1", b"2", b"[1", b"]]", b" ", b'"', b"a", b"{", b"}", b":"]
TOKENS += [b"x%d" % i for i in range(80)]       # rows of several words
VOCAB = Vocabulary(TOKENS + [None], eos_token_ids=[len(TOKENS)])
WORDS = (VOCAB.size + 31) // 32
NESTED = {"$defs": {"n": {"anyOf": [{"type": "integer"},
                                    {"type": "array", "items": {"$ref": "#/$defs/n"}}]}},
          "$ref": "#/$defs/n"}


@pytest.fixture(scope="module", params=["flat", "stack"])
def index(request):
    assert WORDS == 3
    if request.param == "flat":
        return TokenIndex.build(compile_json_schema({"type": "array", "items": {"type": "integer"}},
                                                    whitespace=0), VOCAB)
    with pytest.warns(SchemaWarning, match="cut at depth"):
        cs = compile_json_schema(NESTED, whitespace=0, recursion="stack")
    return PushdownIndex(cs.recursive.to_bytes(), VOCAB)


def _fortran(rows):
    return np.asfortranarray(np.full((rows, WORDS), -1, dtype=np.int32))


MISUSES = [
    # (what, call(m, bm), expected error)
    ("rollback(1.7)", lambda m, bm: m.rollback(1.7), TypeError),
    ("rollback('1')", lambda m, bm: m.rollback("1"), TypeError),
    ("rollback(True)", lambda m, bm: m.rollback(True), TypeError),
    ("rollback(None)", lambda m, bm: m.rollback(None), TypeError),
    ("rollback(-1)", lambda m, bm: m.rollback(-1), RollbackError),
    ("rollback(99)", lambda m, bm: m.rollback(99), RollbackError),
    ("accept_string(5)", lambda m, bm: m.accept_string(5), TypeError),
    ("accept_string(None)", lambda m, bm: m.accept_string(None), TypeError),
    ("accept_string(['1'])", lambda m, bm: m.accept_string(["1"]), TypeError),
    ("accept_string(lone surrogate)", lambda m, bm: m.accept_string("1\ud800"), InvalidTextError),
    ("advance(1.0)", lambda m, bm: m.advance(1.0), UnknownTokenError),
    ("advance('3')", lambda m, bm: m.advance("3"), UnknownTokenError),
    ("advance(None)", lambda m, bm: m.advance(None), UnknownTokenError),
    ("advance(True)", lambda m, bm: m.advance(True), UnknownTokenError),
    ("advance(-1)", lambda m, bm: m.advance(-1), UnknownTokenError),
    ("advance(size)", lambda m, bm: m.advance(VOCAB.size), UnknownTokenError),
    ("fill(Fortran-ordered)", lambda m, bm: m.fill_next_token_bitmask(_fortran(3), 1), BitmaskError),
    ("fill(reversed rows)", lambda m, bm: m.fill_next_token_bitmask(bm[:, ::-1], 0), BitmaskError),
    ("fill(uint32)", lambda m, bm: m.fill_next_token_bitmask(bm.view(np.uint32), 0), BitmaskError),
    ("fill(row=0.9)", lambda m, bm: m.fill_next_token_bitmask(bm, 0.9), BitmaskTypeError),
    ("fill(row='0')", lambda m, bm: m.fill_next_token_bitmask(bm, "0"), BitmaskTypeError),
    ("fill(row=None)", lambda m, bm: m.fill_next_token_bitmask(bm, None), BitmaskTypeError),
    ("fill(row=-1)", lambda m, bm: m.fill_next_token_bitmask(bm, -1), BitmaskError),
    ("fill(row=3)", lambda m, bm: m.fill_next_token_bitmask(bm, 3), BitmaskError),
    ("batch rows [0.9]", lambda m, bm: fill_next_token_bitmasks([m], bm, rows=[0.9]), TypeError),
    ("batch rows ['0']", lambda m, bm: fill_next_token_bitmasks([m], bm, rows=["0"]), TypeError),
    ("batch rows [True]", lambda m, bm: fill_next_token_bitmasks([m], bm, rows=[True]), TypeError),
    ("batch rows too few", lambda m, bm: fill_next_token_bitmasks([m, m], bm, rows=[0]), BitmaskError),
    ("batch row out of range", lambda m, bm: fill_next_token_bitmasks([m], bm, rows=[3]), BitmaskError),
    ("batch of a non-matcher", lambda m, bm: fill_next_token_bitmasks([m, "m"], bm), TypeError),
    ("batch Fortran-ordered", lambda m, bm: fill_next_token_bitmasks([m, m], _fortran(2)), BitmaskError),
    ("apply indices [0.5]", lambda m, bm: apply_token_bitmask_inplace(
        np.zeros((3, VOCAB.size), np.float32), bm, indices=[0.5]), TypeError),
    ("apply indices [7]", lambda m, bm: apply_token_bitmask_inplace(
        np.zeros((3, VOCAB.size), np.float32), bm, indices=[7]), BitmaskError),
]


def _snapshot(m, bm):
    mask = allocate_token_bitmask(1, VOCAB.size)
    m.fill_next_token_bitmask(mask)
    return (m.state, m.is_finished(), repr(m), mask.tobytes(), bm.tobytes())


@pytest.mark.parametrize("what, call, error", MISUSES, ids=[m[0] for m in MISUSES])
def test_misuse_is_a_typed_error_and_changes_nothing(index, what, call, error):
    m = Matcher(index)
    m.advance(TOKENS.index(b"["))
    m.advance(TOKENS.index(b"1"))
    bm = np.arange(3 * WORDS, dtype=np.int32).reshape(3, WORDS)
    m.fill_next_token_bitmask(bm, 2)          # a kept view for (bm, 2): misuse must not use it
    before = _snapshot(m, bm)
    with pytest.raises(error) as e:
        call(m, bm)
    assert str(e.value)                       # says what is wrong
    assert _snapshot(m, bm) == before
    m.advance(TOKENS.index(b"]"))             # and the matcher still works
    assert m.is_accepting()


def test_a_single_row_fortran_bitmask_is_row_major_too(index):
    m = Matcher(index)
    f = _fortran(1)
    m.fill_next_token_bitmask(f)
    c = allocate_token_bitmask(1, VOCAB.size)
    m.fill_next_token_bitmask(c)
    assert np.array_equal(f, c)


def test_numpy_integers_are_counts_and_rows(index):
    m = Matcher(index)
    m.advance(np.int64(TOKENS.index(b"[")))
    bm = allocate_token_bitmask(2, VOCAB.size)
    m.fill_next_token_bitmask(bm, np.int32(1))
    fill_next_token_bitmasks([m], bm, rows=np.array([0]))
    assert np.array_equal(bm[0], bm[1])
    m.rollback(np.int64(1))
    assert m.state == Matcher(index).state
    assert m.accept_string(bytearray(b"[1")) and m.accept_string(memoryview(b",2"))
