"""States grouped or walked one by one (``TokenIndex.build(group_min_visits=...)``): the index
asks whether the walks the grouping would spare are long, from a few of them, and takes either
way with the same rows as the reference (``group_states=False``) and the naive walk; the answer
follows the trie nodes those walks visit, counted in full."""

from __future__ import annotations

import numpy as np
import pytest
from test_bands import same_index

from tokenfsm.automata import DFA
from tokenfsm.masks import TokenIndex, Vocabulary, kernels, unpack_bitmask
from tokenfsm.masks.builtin_vocab import load_vocabulary
from tokenfsm.masks.index import (GROUP_MIN_STATES, _acyclic_units, _regions, _visits,
                                  _walks_long, as_byte_dfa)
from tokenfsm.masks.reference import reference_mask
from tokenfsm.masks.trie import token_trie
from tokenfsm.schema import compile_json_schema


@pytest.fixture(scope="module")
def vocab():
    # (the first 5,000 tokens of a real vocabulary: the reference walks state by state)
    tokens = load_vocabulary("qwen").tokens[:5000]
    return Vocabulary(list(tokens) + [None], eos_token_ids=[len(tokens)])


def _keys():
    """An object of forty integer members: states told apart by the keys, short walks."""
    names = [f"field_{i:02d}_name" for i in range(40)]
    return compile_json_schema({"type": "object", "properties": {k: {"type": "integer"}
                                                                 for k in names},
                                "required": names}, whitespace=0)


def _text():
    """Words of free text, counted: few states whose walks visit most of the trie."""
    return DFA.from_regex(r"[a-z ]{0,6}(-[a-z ]{1,6}){0,80}")


def _walked_alone(bt, trie) -> int:
    """The trie nodes the walks from the states outside cycles visit, one walk each."""
    alone = _acyclic_units(np.arange(bt.table.shape[0], dtype=np.int32), _regions(bt))
    return _visits(bt, bt.table, trie, alone, 1 << 62, {})


@pytest.mark.parametrize("make,grouped", [(_keys, False), (_text, True)])
def test_states_are_grouped_where_their_walks_are_long(vocab, make, grouped):
    bt = as_byte_dfa(make())
    assert bt.table.shape[0] >= GROUP_MIN_STATES          # (smaller ones are not asked)
    visited = _walked_alone(bt, token_trie(vocab))
    # the keys' walks, ten times over, are still short; half the free text's are long
    least = 10 * visited if not grouped else visited // 2
    index = TokenIndex.build(bt, vocab, group_min_visits=least)
    always = TokenIndex.build(bt, vocab, group_min_visits=0)
    plain = TokenIndex.build(bt, vocab, group_states=False)
    assert index.build_info["grouped"] is grouped
    assert always.build_info["grouped"] and not plain.build_info["grouped"]
    assert index.build_info["walks"] == (always if grouped else plain).build_info["walks"]
    same_index(index, plain)
    same_index(always, plain)
    rng = np.random.default_rng(0)
    for s in rng.choice(np.arange(1, bt.table.shape[0]), size=8, replace=False).tolist():
        assert unpack_bitmask(index.mask_row(s), vocab.size).tolist() == \
            reference_mask(bt, vocab, s)


def test_the_question_reads_the_walks_of_most_bytes(vocab):
    # the free text's states that move on the most strings of two bytes walk the most: asked
    # whether the walks visit a little more than the sixteen of most ways do, the answer is no
    # where those sixteen walk less than an eighth of it
    bt = as_byte_dfa(_text())
    trie = token_trie(vocab)
    alone = _acyclic_units(np.arange(bt.table.shape[0], dtype=np.int32), _regions(bt))
    sizes = np.bincount(bt.byte_classes, minlength=bt.table.shape[1]).astype(np.int64)
    ways = kernels.two_byte_ways(bt.table, sizes, alone.astype(np.int64))
    naive = [sum(int(sizes[c]) * sum(int(sizes[d]) for d in range(bt.table.shape[1])
                                     if bt.table[bt.table[s, c], d])
                 for c in range(bt.table.shape[1]) if bt.table[s, c]) for s in alone.tolist()]
    assert ways.tolist() == naive
    top = alone[np.argsort(-ways, kind="stable")[:16]]
    heavy = _visits(bt, bt.table, trie, top, 1 << 62, {})
    assert _walks_long(bt, trie, alone, 8 * heavy)
    assert not _walks_long(bt, trie, alone, 8 * heavy + 8 * _walked_alone(bt, trie))


def test_short_walks_look_for_no_chain():
    # a bounded string's counts on a vocabulary of a few tokens: their walks are short, so its
    # copies are neither grouped nor made from one walk of the first; the rows are the same
    from test_bands import VOCAB, _bounded

    dfa = _bounded(100)
    assert dfa.num_states >= GROUP_MIN_STATES
    default = TokenIndex.build(dfa, VOCAB)
    asked_not = TokenIndex.build(dfa, VOCAB, group_min_visits=0)
    assert not default.build_info["grouped"] and default.build_info["chain_states"] == 0
    assert asked_not.build_info["grouped"] and asked_not.build_info["chain_states"] > 0
    same_index(default, asked_not)
    for s in range(1, dfa.num_states, 37):
        assert unpack_bitmask(default.mask_row(s), VOCAB.size).tolist() == \
            reference_mask(dfa, VOCAB, s)
