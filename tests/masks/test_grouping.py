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


def test_each_group_is_walked_from_its_first_state_on_a_cycle():
    # against the rule written out: the first state on a cycle of each group, else its first
    # state; the dead state's group never walks
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        n_blocks = int(rng.integers(1, 8))
        block = rng.integers(0, n_blocks, size=n).astype(np.int32)
        on_cycle = rng.random(n) < 0.3
        want = []
        for b in set(block[1:].tolist()) - {int(block[0])}:
            members = [s for s in range(1, n) if block[s] == b]
            want.append(next((s for s in members if on_cycle[s]), members[0]))
        assert kernels.block_units(block, n_blocks, on_cycle).tolist() == sorted(want)


def test_a_key_name_takes_the_string_body_walk():
    # undeclared keys beside declared ones: over the tokens free of JSON's separators the
    # states of a key's name partway through a declared name ("E", "Ev", ...) move as the key's
    # string body does, so they share its group, which walks from a body state: the body's walk
    # kept from the first build serves the second, where walking the name's first state would
    # visit nearly the whole trie again. The rows are those of the plain build.
    vocab = load_vocabulary("qwen")
    schema = {"type": "object", "additionalProperties": True,
              "properties": {"EventsIds": {}, "MotifId": {"type": "integer"}}}
    bt = as_byte_dfa(compile_json_schema(schema, whitespace=0))
    TokenIndex.build(bt, vocab)
    index = TokenIndex.build(bt, vocab)
    assert index.build_info["kept_walks"] > 0
    assert index.build_info["visited"] < token_trie(vocab).num_nodes
    plain = TokenIndex.build(bt, vocab, group_states=False, share_walks=False,
                             local_classes=False)
    same_index(index, plain)
