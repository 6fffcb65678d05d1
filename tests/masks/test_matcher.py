"""Matcher behaviour on regex automata: EOS, rollback, bad input, jump-forward, batch helpers."""

import threading

import numpy as np
import pytest

from tokenfsm.automata import DFA
from tokenfsm.masks import (
    BitmaskError,
    Matcher,
    RollbackError,
    TokenIndex,
    TokenRejected,
    UnknownTokenError,
    Vocabulary,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    fill_next_token_bitmasks,
    unpack_bitmask,
)

TOKENS = [b"{", b'"', b'{"', b'{"name', b'":', b'"', b"a", b"b", b"ab", b"}", b"\xc3", b"\xa9", "é".encode(),
          b" ", b"1", b"12"]
EOS = len(TOKENS)
VOCAB = Vocabulary(TOKENS + [None], eos_token_ids=[EOS], size=40)


def index_of(pattern: str, vocab: Vocabulary = VOCAB) -> TokenIndex:
    return TokenIndex.build(DFA.from_regex(pattern), vocab)


def ids(*toks: bytes) -> list[int]:
    return [TOKENS.index(t) for t in toks]


def test_allowed_and_eos_only_where_accepting():
    m = Matcher(index_of(r"(ab)+"))
    assert m.allowed_token_ids().tolist() == ids(b"a", b"ab")
    m.advance(ids(b"ab")[0])
    assert m.is_accepting() and EOS in m.allowed_token_ids().tolist()
    m.advance(ids(b"a")[0])
    assert not m.is_accepting() and EOS not in m.allowed_token_ids().tolist()
    with pytest.raises(TokenRejected) as e:
        m.advance(EOS)
    assert e.value.token_id == EOS
    m.advance(ids(b"b")[0])
    m.advance(EOS)
    assert m.is_finished() and m.is_accepting()
    # finished: only EOS, and EOS again is a harmless step
    assert m.allowed_token_ids().tolist() == [EOS]
    bm = allocate_token_bitmask(1, VOCAB.size)
    m.fill_next_token_bitmask(bm)
    assert np.flatnonzero(unpack_bitmask(bm[0], VOCAB.size)).tolist() == [EOS]
    with pytest.raises(TokenRejected):
        m.advance(ids(b"a")[0])
    m.advance(EOS)
    m.rollback(2)
    assert not m.is_finished() and m.is_accepting()


def test_rejections_leave_state_untouched():
    m = Matcher(index_of(r"ab"))
    m.advance(ids(b"a")[0])
    s = m.state
    for bad in [ids(b"a")[0], 30, EOS]:  # not allowed / a None id / EOS too early
        with pytest.raises(TokenRejected):
            m.advance(bad)
        assert m.state == s and not m.is_finished()
    for unknown in [-1, 40, 10**9, 1.5, "3"]:
        with pytest.raises(UnknownTokenError):
            m.advance(unknown)
        assert m.state == s
    assert not m.try_advance(ids(b"a")[0]) and m.try_advance(ids(b"b")[0])


def test_rollback_and_reset():
    m = Matcher(index_of(r"a+b"))
    start = m.state
    with pytest.raises(RollbackError):
        m.rollback(1)
    m.advance(ids(b"a")[0])
    s1 = m.state
    m.advance(ids(b"a")[0])
    assert m.accept_string("ab")
    with pytest.raises(RollbackError):
        m.rollback(4)
    with pytest.raises(RollbackError):
        m.rollback(-1)
    m.rollback(2)
    assert m.state == s1
    m.reset()
    assert m.state == start
    limited = Matcher(m.index, max_rollback=1)
    limited.advance(ids(b"a")[0])
    limited.advance(ids(b"a")[0])
    with pytest.raises(RollbackError):
        limited.rollback(2)


def test_accept_string_any_tokenisation_and_failures():
    m = Matcher(index_of(r'\{"name": "é+"\}'))
    assert m.accept_string('{"na')
    assert not m.accept_string("x")
    assert m.accept_string(b'me": "\xc3')  # ends inside a character
    assert m.allowed_token_ids().tolist() == ids(b"\xa9")
    m.advance(ids(b"\xa9")[0])
    assert m.accept_string('é"}') and m.is_accepting()
    assert m.accept_string("") and m.is_accepting()


def test_jump_forward_strings():
    m = Matcher(index_of(r'\{"name": "[a-z]+"\}'))
    assert m.find_jump_forward_string() == '{"name": "'
    assert m.state == m.index.start  # a query, not a move
    assert m.accept_string('{"name": "ab')
    assert m.find_jump_forward_string() == ""
    m.accept_string('"')
    assert m.find_jump_forward_string() == "}"
    # forced bytes that end inside a character stop at the last whole character
    m = Matcher(index_of(r"xé(a|b)"))
    assert m.find_jump_forward_string() == "xé"
    m = Matcher(index_of(r"ab|abc"))
    assert m.find_jump_forward_string() == "ab"  # stops at an accepting state


def test_bitmask_validation_writes_nothing():
    m = Matcher(index_of(r"ab"))
    words = (VOCAB.size + 31) // 32
    good = allocate_token_bitmask(2, VOCAB.size)
    assert good.shape == (2, words) and good.dtype == np.int32 and (good == -1).all()
    for bad in [np.zeros((2, words), dtype=np.int64), np.zeros((2, words + 1), dtype=np.int32),
                np.zeros((words,), dtype=np.int32), [[0] * words]]:
        before = np.array(bad, copy=True)
        with pytest.raises(BitmaskError):
            m.fill_next_token_bitmask(bad)
        assert np.array_equal(np.asarray(bad), before)
    for row in [2, -1, 1.0, True]:
        with pytest.raises(BitmaskError):
            m.fill_next_token_bitmask(good, row=row)
    assert (good == -1).all()
    ro = allocate_token_bitmask(1, VOCAB.size)
    ro.flags.writeable = False
    with pytest.raises(BitmaskError):
        m.fill_next_token_bitmask(ro)


def test_batch_fill_and_apply():
    a, b = index_of(r"(ab)+"), index_of(r"[0-9]+")
    ms = [Matcher(a), None, Matcher(b), Matcher(a)]
    ms[3].advance(ids(b"ab")[0])
    bm = np.zeros((5, (VOCAB.size + 31) // 32), dtype=np.int32)
    fill_next_token_bitmasks(ms, bm, rows=[4, 0, 1, 2])
    single = allocate_token_bitmask(1, VOCAB.size)
    for m, r in zip(ms, [4, 0, 1, 2]):
        if m is None:
            assert (bm[r] == -1).all()
        else:
            m.fill_next_token_bitmask(single)
            assert np.array_equal(single[0], bm[r])
    assert (bm[3] == 0).all()
    with pytest.raises(BitmaskError):
        fill_next_token_bitmasks(ms, bm, rows=[0, 1, 2, 5])
    logits = np.random.default_rng(0).normal(size=(5, VOCAB.size)).astype(np.float32)
    orig = logits.copy()
    apply_token_bitmask_inplace(logits, bm)
    allowed = unpack_bitmask(bm, VOCAB.size)
    assert np.array_equal(logits[allowed], orig[allowed]) and np.isneginf(logits[~allowed]).all()
    lg = orig.copy()
    apply_token_bitmask_inplace(lg, bm, indices=[4])
    assert np.array_equal(lg[:4], orig[:4])
    lg1 = orig[4].copy()
    apply_token_bitmask_inplace(lg1, bm[4], vocab_size=10)
    assert np.isneginf(lg1[10:]).all()
    with pytest.raises(BitmaskError):
        apply_token_bitmask_inplace(orig.astype(np.int32), bm)
    wide = np.zeros((5, 100), np.float32)  # padded logits: columns past the bitmask are no tokens
    apply_token_bitmask_inplace(wide, bm)
    assert np.isneginf(wide[:, 64:]).all() and np.array_equal(np.isneginf(wide[:, :64]), ~unpack_bitmask(bm, 64))
    with pytest.raises(BitmaskError):
        apply_token_bitmask_inplace(np.zeros((5, 30), np.float32), bm, vocab_size=VOCAB.size)


def test_index_shared_across_threads():
    index = index_of(r"(a|b|ab)+1")
    expected = {}

    def run(seed, out):
        rng = np.random.default_rng(seed)
        m = Matcher(index)
        trace = []
        for _ in range(200):
            allowed = m.allowed_token_ids()
            allowed = allowed[allowed != EOS]
            if not len(allowed):
                m.reset()
                continue
            t = int(rng.choice(allowed))
            m.advance(t)
            trace.append((t, m.state))
        out[seed] = trace

    threads = [threading.Thread(target=run, args=(s, expected)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    again = {}
    for s in range(4):
        run(s, again)
    assert again == expected
    with pytest.raises(ValueError):
        index.csr_tok[0] = 1  # immutable arrays


def test_copy_is_independent():
    m = Matcher(index_of(r"a+"))
    m.advance(ids(b"a")[0])
    c = m.copy()
    c.advance(ids(b"a")[0])
    c.rollback(2)
    assert m.state != c.state
    m.rollback(1)
    assert m.state == c.state


def test_advance_agrees_with_next_state_for_every_token_and_id_type():
    index = index_of(r'\{"name":"(a|b|é)*"\}|12?')
    for state in range(1, index.num_states):
        for t in range(VOCAB.size):
            for tok in (t, np.int64(t)):  # plain int (the fast path) and numpy ints alike
                m = Matcher(index)
                m._state = state
                if t == EOS:
                    assert m.try_advance(tok) == bool(index.accepting[state])
                    continue
                expect = index.next_state(state, t)
                assert m.try_advance(tok) == (expect != 0)
                assert m.state == (expect or state)
    m = Matcher(index)
    with pytest.raises(UnknownTokenError):
        m.advance(VOCAB.size)
    with pytest.raises(UnknownTokenError):
        m.advance(-1)
