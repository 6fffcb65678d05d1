"""The Numba index against the naive pure-Python walk, on random DFAs and vocabularies."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mask_helpers import SimpleByteDFA, prune, random_byte_dfas, small_vocabs

from tokenfsm.masks import Matcher, TokenIndex, TokenRejected, Vocabulary, kernels, unpack_bitmask
from tokenfsm.masks.reference import (
    reference_allowed,
    reference_forced_string,
    reference_mask,
    reference_walk,
)


def check_index_against_reference(index: TokenIndex, dfa, vocab: Vocabulary) -> None:
    assert index.num_states == dfa.num_states
    for s in range(dfa.num_states):
        ref = reference_allowed(dfa, vocab, s)
        lo, hi = index.csr_ptr[s], index.csr_ptr[s + 1]
        got = dict(zip(index.csr_tok[lo:hi].tolist(), index.csr_next[lo:hi].tolist()))
        assert got == ref, f"state {s}"
        assert index.csr_tok[lo:hi].tolist() == sorted(ref)
        mask = unpack_bitmask(index.mask_row(s), vocab.size)
        assert mask.tolist() == reference_mask(dfa, vocab, s), f"mask of state {s}"
        expected_ids = sorted(set(ref) | (set(vocab.eos_token_ids) if s and dfa.accepting[s] else set()))
        assert index.allowed_token_ids(s).tolist() == expected_ids


@given(random_byte_dfas(), small_vocabs(), st.sampled_from(["bytes", "classes", "auto"]))
def test_index_is_sound_and_complete(dfa, vocab, strategy):
    index = TokenIndex.build(dfa, vocab, strategy=strategy)
    check_index_against_reference(index, dfa, vocab)


@given(random_byte_dfas(), small_vocabs())
def test_strategies_agree(dfa, vocab):
    a = TokenIndex.build(dfa, vocab, strategy="bytes")
    b = TokenIndex.build(dfa, vocab, strategy="classes")
    for name in ("csr_ptr", "csr_tok", "csr_next", "state_row", "mask_rows"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@given(random_byte_dfas(), small_vocabs(), st.data())
def test_matcher_walk_matches_reference(dfa, vocab, data):
    index = TokenIndex.build(dfa, vocab)
    m = Matcher(index)
    bitmask = np.zeros((2, (vocab.size + 31) // 32), dtype=np.int32)
    state, path = dfa.start, []
    for _ in range(8):
        m.fill_next_token_bitmask(bitmask, row=1)
        assert unpack_bitmask(bitmask[1], vocab.size).tolist() == reference_mask(dfa, vocab, state)
        assert m.find_jump_forward_string() == reference_forced_string(dfa, state)
        allowed = reference_allowed(dfa, vocab, state)
        # a token that is not allowed (if any) is rejected without moving
        rejected = [t for t in range(vocab.size) if t not in allowed and t not in vocab.eos_token_ids]
        if rejected:
            t = data.draw(st.sampled_from(rejected))
            with pytest.raises(TokenRejected) as e:
                m.advance(t)
            assert e.value.token_id == t and e.value.state == state and m.state == state
        if not allowed:
            break
        t = data.draw(st.sampled_from(sorted(allowed)))
        m.advance(t)
        path.append(state)
        state = allowed[t]
        assert m.state == state
        assert m.is_accepting() == bool(dfa.accepting[state])
    # rollback retraces the path exactly
    while path:
        m.rollback(1)
        assert m.state == path.pop()
    assert m.state == dfa.start


@given(random_byte_dfas(), st.binary(max_size=6))
def test_accept_string_follows_the_bytes(dfa, data):
    vocab = Vocabulary([b"a"])
    index = TokenIndex.build(dfa, vocab)
    m = Matcher(index)
    expected = reference_walk(dfa, dfa.start, data) if dfa.start else 0
    ok = m.accept_string(data)
    if not data:
        assert ok and m.state == dfa.start
    elif expected == 0:
        assert not ok and m.state == dfa.start
    else:
        assert ok and m.state == expected
        m.rollback(1)
        assert m.state == dfa.start


@given(random_byte_dfas(), small_vocabs())
@settings(max_examples=20)
def test_save_load_roundtrip(tmp_path_factory, dfa, vocab):
    index = TokenIndex.build(dfa, vocab)
    path = tmp_path_factory.mktemp("ix") / "i.npz"
    index.save(path)
    back = TokenIndex.load(path, vocab)
    for name in ("csr_ptr", "csr_tok", "csr_next", "state_row", "mask_rows", "table", "accepting",
                 "byte_classes", "forced_byte", "eos_ids"):
        assert np.array_equal(getattr(index, name), getattr(back, name)), name
    assert (back.start, back.finished_row) == (index.start, index.finished_row)


def test_unpruned_dfa_is_treated_as_pruned():
    # state 2 is a trap (no way to accept): a token ending there must not be allowed
    classes = np.zeros(256, dtype=np.uint8)
    classes[ord("a")] = 1
    classes[ord("b")] = 2
    table = np.array([[0, 0, 0], [0, 3, 2], [0, 2, 2], [0, 0, 0]], dtype=np.int32)
    acc = np.array([False, False, False, True])
    dfa = SimpleByteDFA(classes, table, acc, 1)
    vocab = Vocabulary([b"a", b"b", b"ab"])
    index = TokenIndex.build(dfa, vocab)
    assert index.allowed_token_ids(1).tolist() == [0]
    pruned = prune(classes, table, acc, 1)
    assert TokenIndex.build(pruned, vocab).allowed_token_ids(pruned.start).tolist() == [0]


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(0, n - 1), min_size=3, max_size=3), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n))))
def test_coreachable_states_are_those_that_reach_acceptance(drawn):
    rows, acc = drawn
    table = np.array(rows, dtype=np.int32)
    table[0] = 0
    acc = np.array(acc, dtype=bool)
    acc[0] = False
    live = acc.copy()
    while True:   # (the naive fixpoint: a state is live once one of its moves leads to one)
        more = live | (live[table] & (table != 0)).any(axis=1)
        more[0] = False
        if np.array_equal(more, live):
            break
        live = more
    assert kernels.coreachable(table, acc).tolist() == live.tolist()


def test_an_index_does_not_change_with_the_callers_tables():
    classes = np.zeros(256, dtype=np.uint8)
    classes[ord("a")] = 1
    table = np.array([[0, 0], [0, 2], [0, 2]], dtype=np.int32)    # a+ (every state live)
    acc = np.array([False, False, True])
    vocab = Vocabulary([b"a", b"aa", None], eos_token_ids=[2])
    index = TokenIndex.build(SimpleByteDFA(classes, table, acc, 1), vocab)
    table[2, 1] = 0
    acc[2] = False
    assert index.table[2, 1] == 2 and index.accepting[2]
    assert index.allowed_token_ids(2).tolist() == [0, 1, 2]


def test_empty_language_allows_nothing():
    dfa = SimpleByteDFA(np.zeros(256, dtype=np.uint8), np.zeros((1, 1), dtype=np.int32),
                        np.array([False]), 0)
    vocab = Vocabulary([b"a", None], eos_token_ids=[1])
    m = Matcher(TokenIndex.build(dfa, vocab))
    assert m.allowed_token_ids().tolist() == []
    with pytest.raises(TokenRejected):
        m.advance(1)
