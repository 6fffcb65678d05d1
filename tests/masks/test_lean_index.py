"""The lean index (rows only, next states walked on demand) against the naive reference walk;
the lazily built CSR; the saved format's version; the cached bitmask fill; padded logits."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mask_helpers import random_byte_dfas, small_vocabs

from tokenfsm.masks import (
    FORMAT_VERSION,
    BitmaskError,
    CorruptIndexError,
    Matcher,
    TokenIndex,
    TokenRejected,
    Vocabulary,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    kernels,
    unpack_bitmask,
)
from tokenfsm.masks.reference import reference_allowed, reference_walk
from tokenfsm.masks.trie import token_trie


def reference_csr(dfa, vocab):
    ptr, tok, nxt = [0, 0], [], []
    for s in range(1, dfa.num_states):
        ref = reference_allowed(dfa, vocab, s)
        tok += sorted(ref)
        nxt += [ref[t] for t in sorted(ref)]
        ptr.append(len(tok))
    return ptr, tok, nxt


@given(random_byte_dfas(), small_vocabs(), st.sampled_from(["bytes", "classes"]), st.booleans())
def test_lazy_csr_equals_the_reference_table(dfa, vocab, strategy, group):
    index = TokenIndex.build(dfa, vocab, strategy=strategy, group_states=group)
    assert index._csr is None  # nothing per pair is built up front
    lean = index.nbytes
    ptr, tok, nxt = reference_csr(dfa, vocab)
    assert index.num_allowed_pairs == len(tok)
    # one state at a time, before the table exists
    for s in range(dfa.num_states):
        ids, nexts = index.transitions(s)
        assert ids.tolist() == tok[ptr[s]:ptr[s + 1]] and nexts.tolist() == nxt[ptr[s]:ptr[s + 1]]
    assert index.csr_ptr.tolist() == ptr
    assert index.csr_tok.tolist() == tok and index.csr_next.tolist() == nxt
    assert index.csr_tok.dtype == np.int32 and index.csr_ptr.dtype == np.int64
    assert index.nbytes > lean or not tok
    with pytest.raises(ValueError):
        index.csr_next[:1] = 1  # read-only like the rest
    for s in range(dfa.num_states):  # and again, from the table
        ids, nexts = index.transitions(s)
        assert ids.tolist() == tok[ptr[s]:ptr[s + 1]] and nexts.tolist() == nxt[ptr[s]:ptr[s + 1]]


@given(random_byte_dfas(), small_vocabs())
def test_grouping_states_changes_nothing(dfa, vocab):
    a = TokenIndex.build(dfa, vocab, group_states=False)
    b = TokenIndex.build(dfa, vocab, group_states=True)
    assert np.array_equal(a.mask_rows, b.mask_rows) and np.array_equal(a.state_row, b.state_row)
    assert a.finished_row == b.finished_row
    assert b.build_info["walks"] <= a.build_info["walks"] == dfa.num_states - 1


@given(random_byte_dfas(max_states=9, max_classes=3), st.integers(0, 4))
def test_refined_blocks_agree_on_short_strings(dfa, rounds):
    block, n_blocks = kernels.refine_states(dfa.table, rounds)
    assert block[0] == 0 and n_blocks == len(set(block.tolist()))
    assert (block[1:] != 0).all()
    strings = [b""]
    for length in range(rounds):
        strings += [w + bytes([c]) for w in strings if len(w) == length for c in range(dfa.num_byte_classes)]
    classes = {k: bytes([int(np.flatnonzero(dfa.byte_classes == k)[0])]) for k in range(dfa.num_byte_classes)}
    texts = [b"".join(classes[c] for c in w) for w in strings]
    for s in range(1, dfa.num_states):
        for t in range(1, dfa.num_states):
            if block[s] == block[t]:
                for w in texts:
                    assert (reference_walk(dfa, s, w) != 0) == (reference_walk(dfa, t, w) != 0)


@given(random_byte_dfas(), small_vocabs())
def test_advance_and_next_state_match_the_reference(dfa, vocab):
    index = TokenIndex.build(dfa, vocab)
    eos = set(vocab.eos_token_ids)
    for s in range(dfa.num_states):
        ref = reference_allowed(dfa, vocab, s)
        for t in range(vocab.size):
            assert index.next_state(s, t) == ref.get(t, 0)
            for tok in (t, np.int32(t)):
                m = Matcher(index)
                m._state = s
                if t in eos:
                    assert m.try_advance(tok) == bool(s and dfa.accepting[s])
                    continue
                if t in ref:
                    m.advance(tok)
                    assert m.state == ref[t]
                else:
                    with pytest.raises(TokenRejected):
                        m.advance(tok)
                    assert m.state == s


@given(random_byte_dfas(), small_vocabs())
@settings(max_examples=20)
def test_saved_files_hold_rows_not_pairs(tmp_path_factory, dfa, vocab):
    index = TokenIndex.build(dfa, vocab)
    index.csr_tok  # materialised or not, the file is the same
    path = tmp_path_factory.mktemp("ix") / "i.npz"
    index.save(path)
    with np.load(path) as z:
        assert not {"csr_ptr", "csr_tok", "csr_next"} & set(z.files)
        assert json.loads(bytes(z["meta"]).decode())["version"] == FORMAT_VERSION == 3
    back = TokenIndex.load(path, vocab)
    assert back._csr is None
    assert np.array_equal(back.csr_tok, index.csr_tok) and np.array_equal(back.csr_next, index.csr_next)


def test_version_1_files_are_refused_with_a_hint(tmp_path):
    vocab = Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    classes = np.zeros(256, dtype=np.uint8)
    classes[ord("a")] = 1
    table = np.array([[0, 0], [0, 1]], dtype=np.int32)
    from mask_helpers import SimpleByteDFA

    index = TokenIndex.build(SimpleByteDFA(classes, table, np.array([False, True]), 1), vocab)
    path = tmp_path / "new.npz"
    index.save(path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    meta["version"] = 1
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    arrays.update(csr_ptr=np.zeros(3, np.int64), csr_tok=np.zeros(0, np.int32), csr_next=np.zeros(0, np.int32))
    old = tmp_path / "old.npz"
    np.savez(old, **arrays)
    with pytest.raises(CorruptIndexError, match="version 1.*rebuild"):
        TokenIndex.load(old, vocab)


def test_fill_reuses_a_validated_bitmask_and_follows_the_state():
    vocab = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3], size=70)
    classes = np.zeros(256, dtype=np.uint8)
    classes[ord("a")], classes[ord("b")] = 1, 2
    from mask_helpers import SimpleByteDFA

    dfa = SimpleByteDFA(classes, np.array([[0, 0, 0], [0, 2, 0], [0, 0, 1]], dtype=np.int32),
                        np.array([False, True, False]), 1)  # (ab)*
    index = TokenIndex.build(dfa, vocab)
    m, other = Matcher(index), Matcher(index)
    bm = allocate_token_bitmask(3, vocab.size)
    for step in [0, 1, None, 3]:  # a, b, EOS
        for row in (0, 2, np.int64(1)):
            m.fill_next_token_bitmask(bm, row)
            assert np.array_equal(bm[int(row)], index.mask_row(m.state) if not m.is_finished()
                                  else index.mask_rows[index.finished_row])
        other.fill_next_token_bitmask(bm, 0)  # another matcher writing the same array
        assert np.array_equal(bm[0], index.mask_row(other.state))
        m.fill_next_token_bitmask(bm, 0)
        assert np.array_equal(bm[0], index.mask_row(m.state)) or m.is_finished()
        if step is None:
            m.advance(3)
        elif step < 3:
            m.advance(step)
    with pytest.raises(BitmaskError):
        m.fill_next_token_bitmask(bm, True)
    with pytest.raises(BitmaskError):
        m.fill_next_token_bitmask(bm, 3)
    c = m.copy()
    c.fill_next_token_bitmask(bm, 1)
    assert np.array_equal(bm[1], index.mask_rows[index.finished_row])


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_padded_logits(backend):
    if backend == "torch":
        torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    words = 2  # covers ids 0..63
    bm = rng.integers(-2**31, 2**31, size=(3, words), dtype=np.int64).astype(np.int32)
    allowed = unpack_bitmask(bm, 64)

    def run(logits, **kw):
        if backend == "numpy":
            out = logits.copy()
            apply_token_bitmask_inplace(out, bm, **kw)
            return out
        t = torch.from_numpy(logits.copy())
        apply_token_bitmask_inplace(t, torch.from_numpy(bm), **kw)
        return t.numpy()

    orig = rng.normal(size=(3, 80)).astype(np.float32)
    # wider than the bitmask: the padding columns are never tokens
    out = run(orig)
    assert np.isneginf(out[:, 64:]).all()
    assert np.array_equal(out[:, :64][allowed], orig[:, :64][allowed]) and np.isneginf(out[:, :64][~allowed]).all()
    # an explicit vocabulary size: from it on, padding
    out = run(orig, vocab_size=50)
    assert np.isneginf(out[:, 50:]).all()
    assert np.array_equal(out[:, :50][allowed[:, :50]], orig[:, :50][allowed[:, :50]])
    assert np.isneginf(out[:, :50][~allowed[:, :50]]).all()
    # narrower than the bitmask's cover: fine (the last word's spare bits); only given rows
    out = run(orig[:, :40].copy())
    assert np.array_equal(np.isneginf(out), ~allowed[:, :40])
    out = run(orig, indices=[1])
    assert np.array_equal(out[[0, 2]], orig[[0, 2]]) and np.isneginf(out[1, 64:]).all()
    for bad in [dict(vocab_size=81), dict(vocab_size=65), dict(vocab_size=0)]:
        with pytest.raises(BitmaskError):
            run(orig, **bad)
    with pytest.raises(BitmaskError):
        run(orig[:, :40].copy(), vocab_size=50)  # narrower than the vocabulary


def test_flat_bytes_and_trie_depth():
    vocab = Vocabulary([b"ab", None, b"c", b"", "é"], eos_token_ids=[1])
    flat, off = vocab.flat_bytes
    assert bytes(flat[: off[-1]]) == b"abc\xc3\xa9"
    assert [bytes(flat[off[t]:off[t + 1]]) for t in range(vocab.size)] == [b"ab", b"", b"c", b"", "é".encode()]
    assert token_trie(vocab).max_depth == 2


@given(random_byte_dfas(), small_vocabs())
def test_forced_byte_is_the_only_live_byte(dfa, vocab):
    """``forced_byte[s]``: the one byte keeping ``s`` alive when there is exactly one and ``s``
    does not accept, else -1 -- checked byte by byte on the pruned automaton."""
    index = TokenIndex.build(dfa, vocab)
    for s in range(dfa.num_states):
        live = [b for b in range(256) if index.table[s, index.byte_classes[b]] != 0]
        want = live[0] if len(live) == 1 and not index.accepting[s] else -1
        assert int(index.forced_byte[s]) == want, s



def test_an_index_leaves_its_automaton_writeable():
    """An index's arrays are read-only views; the automaton it was built from keeps writeable
    arrays, so that the next index built from it hands the kernels the same Numba types (a
    read-only array is another type: compiled, or loaded, again)."""
    from tokenfsm.masks.index import as_byte_dfa
    from tokenfsm.schema import compile_json_schema

    bt = as_byte_dfa(compile_json_schema({"type": "string", "maxLength": 3}, whitespace=0))
    vocab = Vocabulary([b'"', b"a", b'ab"', b"\\", b'"x', None], eos_token_ids=[5])
    index = TokenIndex.build(bt, vocab)
    assert bt.table.flags.writeable and bt.byte_classes.flags.writeable
    assert not index.table.flags.writeable and not index.mask_rows.flags.writeable
    typed = {name: len(getattr(kernels, name).signatures) for name in dir(kernels)
             if hasattr(getattr(kernels, name), "signatures")}      # (none under NOJIT)
    again = TokenIndex.build(bt, vocab)
    assert np.array_equal(again.mask_rows, index.mask_rows)
    assert {name: len(getattr(kernels, name).signatures) for name in typed} == typed
