"""Torch logits and bitmasks: the same result as the NumPy path, element for element.

The NumPy path of ``apply_token_bitmask_inplace`` is the oracle (itself checked against
``unpack_bitmask`` in the matcher tests); here random bitmasks, widths, vocabulary sizes, row
subsets and dtypes go through both. ``fill_next_token_bitmasks`` fills a torch bitmask from matchers
over several indexes, checked against each matcher's own row and its ``allowed_token_ids``.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from tokenfsm.automata import DFA  # noqa: E402
from tokenfsm.masks import (  # noqa: E402
    BitmaskError,
    Matcher,
    TokenIndex,
    Vocabulary,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    fill_next_token_bitmasks,
    unpack_bitmask,
)
from tokenfsm.masks.matcher import _apply_torch  # noqa: E402

TOKENS = [bytes([c]) for c in b"abxyz0123456789"] + [b"ab", b"12", b"yz", b"aba", b"9x"]
VOCAB = Vocabulary(TOKENS + [None], eos_token_ids=[len(TOKENS)], size=70)  # three bitmask words


def index_of(pattern: str) -> TokenIndex:
    return TokenIndex.build(DFA.from_regex(pattern), VOCAB)


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@st.composite
def problems(draw):
    rows = draw(st.integers(1, 4))
    words = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    bm = rng.integers(-2**31, 2**31, size=(rows, words), dtype=np.int64).astype(np.int32)
    vocab_size = draw(st.none() | st.integers(1, 32 * words))
    least = 1 if vocab_size is None else vocab_size
    width = draw(st.integers(least, 32 * words + 9))
    logits = rng.normal(size=(rows, width)).astype(np.float32)
    indices = draw(st.none() | st.lists(st.integers(0, rows - 1), max_size=rows, unique=True))
    return logits, bm, vocab_size, indices


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("route", ["public", "torch kernel"])
def test_torch_matches_numpy(device, dtype, route):
    # the public function masks CPU float32/float16 through a NumPy view; the torch kernel (CUDA,
    # bfloat16) is also driven directly for every dtype, so that both are held to the NumPy path
    apply = apply_token_bitmask_inplace if route == "public" else _apply_torch

    @given(problems(), st.booleans())
    def check(problem, one_row):
        logits, bm, vocab_size, indices = problem
        if one_row:  # 1-D logits and bitmask
            logits, bm, indices = logits[0], bm[0], None
        want = logits.copy()
        apply_token_bitmask_inplace(want, bm, vocab_size=vocab_size, indices=indices)
        t = torch.from_numpy(logits.copy()).to(device=device, dtype=getattr(torch, dtype))
        apply(t, torch.from_numpy(bm), vocab_size=vocab_size, indices=indices)
        got = t.float().cpu().numpy()
        assert np.array_equal(np.isneginf(got), np.isneginf(want))
        kept = ~np.isneginf(want)
        expect = torch.from_numpy(want[kept]).to(getattr(torch, dtype)).float().numpy()
        assert np.array_equal(got[kept], expect)

    check()


def test_cpu_logits_are_masked_in_place_through_a_view():
    logits = torch.zeros(2, 64)
    view = logits[:, ::2]  # not contiguous
    apply_token_bitmask_inplace(view, torch.tensor([[1, 0], [0, 0]], dtype=torch.int32))
    assert torch.isneginf(logits[:, ::2]).sum() == 63 and (logits[:, 1::2] == 0).all()
    assert logits[0, 0] == 0


def test_numpy_bitmask_on_torch_logits_and_torch_bitmask_on_numpy_logits():
    rng = np.random.default_rng(3)
    bm = rng.integers(-2**31, 2**31, size=(2, 3), dtype=np.int64).astype(np.int32)
    logits = rng.normal(size=(2, 96)).astype(np.float32)
    want = logits.copy()
    apply_token_bitmask_inplace(want, bm)
    t = torch.from_numpy(logits.copy())
    apply_token_bitmask_inplace(t, bm)
    assert np.array_equal(t.numpy(), want)
    n = logits.copy()
    apply_token_bitmask_inplace(n, torch.from_numpy(bm))
    assert np.array_equal(n, want)


def test_torch_errors_leave_logits_alone():
    bm = torch.full((2, 2), -1, dtype=torch.int32)
    logits = torch.zeros(2, 64)
    for bad in [dict(bitmask=bm.to(torch.int64)), dict(logits=torch.zeros(2, 64, dtype=torch.int32)),
                dict(bitmask=bm[:1].expand(3, 2)), dict(vocab_size=65), dict(indices=[2])]:
        kw = dict(logits=logits, bitmask=bm) | bad
        with pytest.raises(BitmaskError):
            apply_token_bitmask_inplace(kw.pop("logits"), kw.pop("bitmask"), **kw)
        assert (logits == 0).all()


def test_fill_a_torch_bitmask_from_several_indexes():
    a, b, c = index_of(r"(ab)+"), index_of(r"[0-9]+"), index_of(r"x|yz")
    ms = [Matcher(a), Matcher(b), None, Matcher(c), Matcher(a)]
    ms[4].accept_string("ab")
    ms[1].accept_string("12")
    bm = torch.zeros((6, (VOCAB.size + 31) // 32), dtype=torch.int32)
    fill_next_token_bitmasks(ms, bm, rows=[5, 0, 1, 2, 3])
    single = allocate_token_bitmask(1, VOCAB.size)
    for m, r in zip(ms, [5, 0, 1, 2, 3]):
        if m is None:
            assert (bm[r] == -1).all()
            continue
        m.fill_next_token_bitmask(single)
        assert np.array_equal(bm[r].numpy(), single[0])
        assert np.array_equal(np.flatnonzero(unpack_bitmask(bm[r].numpy(), VOCAB.size)), m.allowed_token_ids())
    assert (bm[4] == 0).all()  # a row no matcher names is left as it was
