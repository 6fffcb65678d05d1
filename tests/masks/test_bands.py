"""Tokens walked in bands of length or of content (``TokenIndex.build(split_lengths=...,
split_bytes=...)``): the rows, their numbering and the finished row equal one walk of the whole
trie (the reference, ``split_lengths=None, split_bytes=None``) and the naive reference walk; a
trie's bands hold exactly the tokens of their lengths, or holding (or free of) the bytes asked;
length-bounded strings on a real vocabulary take the splits by default; and the walks that
decide the splits count the nodes a naive walk visits, each walked once per build."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from mask_helpers import random_byte_dfas, small_vocabs
from test_index_properties import check_index_against_reference
from test_shared_walks import repeated_components

from tokenfsm.masks import TokenIndex, Vocabulary, kernels
from tokenfsm.masks.builtin_vocab import load_vocabulary
from tokenfsm.masks.index import SPLIT_LENGTHS, _visits, as_byte_dfa
from tokenfsm.masks.trie import token_trie
from tokenfsm.schema import compile_json_schema

LENGTHS = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


def same_index(a: TokenIndex, b: TokenIndex) -> None:
    assert np.array_equal(a.mask_rows, b.mask_rows)
    assert np.array_equal(a.state_row, b.state_row)
    assert a.finished_row == b.finished_row


def _bounded(n: int, least: int = 0):
    return compile_json_schema({"type": "string", "minLength": least, "maxLength": n},
                               whitespace=0).dfa.to_bytes()


#: Length-bounded strings: chains of counts, which the bands walk fewer times.
BOUNDED = st.builds(lambda n, least: _bounded(n, min(least, n)), st.integers(4, 24),
                    st.integers(0, 6))


@given(BOUNDED | repeated_components() | random_byte_dfas(), small_vocabs(), LENGTHS,
       st.sampled_from(["bytes", "classes", "auto"]))
def test_bands_give_the_rows_of_one_walk(dfa, vocab, lengths, strategy):
    whole = TokenIndex.build(dfa, vocab, strategy=strategy, split_lengths=None)
    banded = TokenIndex.build(dfa, vocab, strategy=strategy, split_lengths=lengths,
                              split_min_visits=0)
    same_index(whole, banded)
    check_index_against_reference(banded, dfa, vocab)


VOCAB = Vocabulary([b'"', b"a", b"ab", b"abc", b"abcd", b"abcde", b"abcdef", b"bcdefgh",
                    b'xy"', b'hello world"', b"\\n", b"\\u00e9", "é".encode(), b"ccccccccccc",
                    None], eos_token_ids=[14])


def test_a_bounded_string_is_walked_in_bands():
    dfa = _bounded(30)
    whole = TokenIndex.build(dfa, VOCAB, split_lengths=None)
    banded = TokenIndex.build(dfa, VOCAB, split_lengths=(2, 4), split_min_visits=0,
                              split_bytes=None, group_min_visits=0)
    assert whole.build_info["bands"] == 1 and banded.build_info["bands"] == 3
    # counts more than 4 from the bound are one group for the tokens of up to 4 bytes
    assert banded.build_info["walks"] < 2 * whole.build_info["walks"]
    same_index(whole, banded)
    check_index_against_reference(banded, dfa, VOCAB)


def test_a_bounded_string_on_a_real_vocabulary_takes_the_bands():
    # the first 30,000 tokens of a real vocabulary (the whole one walks for a minute without
    # the compiled kernels)
    tokens = load_vocabulary("qwen").tokens[:30000]
    vocab = Vocabulary(list(tokens) + [None], eos_token_ids=[len(tokens)])
    dfa = _bounded(64)
    # (its counts walked one by one: made from one walk of the first, they need no bands)
    default = TokenIndex.build(dfa, vocab, shift_chains=False)
    whole = TokenIndex.build(dfa, vocab, split_lengths=None, shift_chains=False)
    assert default.build_info["bands"] == 1 + sum(k < max(map(len, tokens)) for k in SPLIT_LENGTHS)
    assert default.build_info["bands"] > 1
    same_index(whole, default)
    # a small automaton, or one whose walks are short, is walked whole
    assert TokenIndex.build(_bounded(3), vocab, shift_chains=False).build_info["bands"] == 1


@given(small_vocabs(), st.integers(0, 6), st.integers(0, 6) | st.none())
def test_a_band_holds_the_tokens_of_its_lengths(vocab, shortest, longest):
    trie = token_trie(vocab)
    band = trie.band(shortest, longest)
    want = sorted(i for i, t in enumerate(vocab.tokens) if t is not None and shortest <= len(t)
                  and (longest is None or len(t) <= longest))
    assert sorted(band.tok_ids.tolist()) == want
    # a trie in preorder: each node's subtree is the nodes after it down to a shallower one
    n = band.num_nodes
    assert band.depth[0] == 0 and (n == 1 or band.depth[1:].min() >= 1)
    for i in range(n):
        j = i + 1
        while j < n and band.depth[j] > band.depth[i]:
            j += 1
        assert band.end[i] == j
    # every leaf ends a token (the band keeps the paths of its tokens only)
    ends = np.diff(band.tok_ptr) > 0
    leaves = np.array([band.end[i] == i + 1 for i in range(n)])
    assert (ends[leaves[1:].nonzero()[0] + 1]).all() if n > 1 else True
    # the bytes spelled by the path to each token node are the token's
    path: list[int] = []
    for i in range(1, n):
        del path[band.depth[i] - 1:]
        path.append(int(band.sym[i]))
        for t in band.tok_ids[band.tok_ptr[i]:band.tok_ptr[i + 1]]:
            assert vocab.tokens[t] == bytes(path)


# ---------------------------------------------------------------- bands by content

def _at_least(n: int):
    return compile_json_schema({"type": "string", "minLength": n}, whitespace=0).dfa.to_bytes()


#: Strings of at least some characters: counts that only tokens holding the quote tell apart.
AT_LEAST = st.integers(2, 24).map(_at_least)
SPLITS = st.sampled_from([b'"', b'",:[]{}', b"a", b"ab\\", b'"a'])


@given(AT_LEAST | BOUNDED | repeated_components() | random_byte_dfas(), small_vocabs(), SPLITS,
       st.sampled_from([None, (2,)]), st.sampled_from(["bytes", "classes", "auto"]))
def test_content_bands_give_the_rows_of_one_walk(dfa, vocab, split, lengths, strategy):
    whole = TokenIndex.build(dfa, vocab, strategy=strategy, split_lengths=None, split_bytes=None)
    banded = TokenIndex.build(dfa, vocab, strategy=strategy, split_lengths=lengths,
                              split_min_visits=0, split_bytes=split)
    same_index(whole, banded)
    check_index_against_reference(banded, dfa, vocab)


@given(small_vocabs(), SPLITS)
def test_a_trie_holding_some_bytes_holds_exactly_those_tokens(vocab, some):
    trie = token_trie(vocab)
    tokens = {i: t for i, t in enumerate(vocab.tokens) if t is not None}
    holding = sorted(i for i, t in tokens.items() if any(b in t for b in some))
    assert sorted(trie.holding(some).tok_ids.tolist()) == holding
    assert sorted(trie.holding(some, False).tok_ids.tolist()) == sorted(set(tokens) - set(holding))


def test_a_long_string_is_walked_apart_from_the_tokens_ending_it():
    dfa = _at_least(30)
    whole = TokenIndex.build(dfa, VOCAB, split_lengths=None, split_bytes=None,
                             group_min_visits=0)
    banded = TokenIndex.build(dfa, VOCAB, split_lengths=None, split_min_visits=0,
                              group_min_visits=0)
    assert whole.build_info["bands"] == 1 and banded.build_info["bands"] == 2
    # the 31 counts (each with its escape and UTF-8 states) walk the tokens free of the quote
    # once for all of them, the tokens holding it count by count
    free_walks = banded.build_info["walks"] - whole.build_info["walks"]
    assert 0 < free_walks * 8 < whole.build_info["walks"]
    same_index(whole, banded)
    check_index_against_reference(banded, dfa, VOCAB)


def test_a_long_string_on_a_real_vocabulary_takes_the_content_split():
    tokens = load_vocabulary("qwen").tokens[:30000]
    vocab = Vocabulary(list(tokens) + [None], eos_token_ids=[len(tokens)])
    dfa = compile_json_schema({"type": "object", "properties": {
        "id": {"type": "string", "minLength": 30}, "key": {"type": "string", "minLength": 40}}},
        whitespace=0).dfa.to_bytes()
    default = TokenIndex.build(dfa, vocab)
    whole = TokenIndex.build(dfa, vocab, split_bytes=None)
    # (split by length, not content, the counts walk much of the vocabulary each)
    assert default.build_info["bands"] == 2
    assert default.build_info["visited"] * 4 < whole.build_info["visited"]
    same_index(whole, default)
    # an automaton whose walks are short is walked whole
    small = compile_json_schema({"enum": ["a" * 40, "b" * 40]}, whitespace=0).dfa.to_bytes()
    assert TokenIndex.build(small, vocab).build_info["bands"] == 1


def naive_visits(bt, vocab: Vocabulary, state: int) -> int:
    """Trie nodes a walk from ``state`` visits: the distinct nonempty token prefixes whose own
    prefix (one byte shorter) leads somewhere from ``state`` (a node is looked at, then skipped
    with its subtree where its byte leads to the dead state)."""
    prefixes = {t[:k] for t in vocab.tokens if t for k in range(1, len(t) + 1)}

    def live(p: bytes) -> bool:
        q = state
        for b in p:
            q = int(bt.table[q, bt.byte_classes[b]])
            if q == 0:
                return False
        return True

    return sum(live(p[:-1]) for p in prefixes)


@given(random_byte_dfas(), small_vocabs(), st.data())
def test_visit_counts_are_those_of_naive_walks_and_are_kept(dfa, vocab, data):
    bt = as_byte_dfa(dfa)
    trie = token_trie(vocab)
    n = bt.table.shape[0]
    seen: dict = {}
    for _ in range(3):          # questions asked again of one table reuse the walks made
        states = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=6)), dtype=np.int32)
        need = data.draw(st.integers(1, 60))
        total = sum(naive_visits(bt, vocab, int(s)) for s in states)
        before = dict(seen)
        got = _visits(bt, bt.table, trie, states, need, seen)
        assert (got >= need) == (total >= need)
        assert got == total or got >= need
        assert all(seen[s] == naive_visits(bt, vocab, s) for s in seen)
        assert all(seen[s] == before[s] for s in before)
    counts, done = kernels.walk_visits(trie.sym, trie.depth, trie.end, trie.max_depth,
                                       bt.byte_classes, bt.table, np.arange(n, dtype=np.int32),
                                       1 << 30)
    assert done == n
    assert counts.tolist() == [naive_visits(bt, vocab, s) for s in range(n)]
