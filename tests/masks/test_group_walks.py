"""Ways of walking a band's groups of states (``index.GROUP_WALKS``): each gives the rows, their
numbering and the finished row of the reference (every group walked in the calling thread) and
of the naive walk, on random automata, repeated components and a real schema with a real
vocabulary; the halves are taken by default where a band has enough units; a walk that gives up
on the byte trie gives up as a whole; builds in several threads and in a forked child agree."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mask_helpers import random_byte_dfas, small_vocabs
from test_bands import BOUNDED, same_index
from test_index_properties import check_index_against_reference
from test_shared_walks import repeated_components

from tokenfsm.automata.errors import OptionError
from tokenfsm.masks import IndexCompiler, TokenIndex, Vocabulary
from tokenfsm.masks.builtin_vocab import load_vocabulary
from tokenfsm.masks.index import (GROUP_WALKS, HALVES_MIN_UNITS, RELAXED_APART_MIN_STATES,
                                  _halves, as_byte_dfa)
from tokenfsm.schema import compile_json_schema

#: The build options that take each way everywhere.
WAYS = {"one": dict(threads=1), "halves": dict(threads=2, halves_min_units=0)}


def test_every_way_is_built_with():
    assert set(WAYS) == set(GROUP_WALKS)


@given(st.lists(st.integers(0, 9), max_size=30))
def test_the_halves_hold_every_unit_once_in_group_order(sizes):
    g_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    halves = _halves(g_ptr)
    units = []
    for spans in halves:
        assert spans.dtype == np.int64 and spans.flags.c_contiguous and spans.shape[1] == 3
        assert np.all(np.diff(spans[:, 0]) > 0)                        # group order, once each
        for g, lo, hi in spans.tolist():
            assert g_ptr[g] <= lo < hi <= g_ptr[g + 1]
            units += range(lo, hi)
    assert sorted(units) == list(range(int(g_ptr[-1])))
    # a group of several units is cut in the middle; groups of one go to either in turn
    counts = [sum(hi - lo for _, lo, hi in spans.tolist()) for spans in halves]
    singles = sum(1 for n in sizes if n == 1)
    assert counts == [sum(n // 2 for n in sizes if n >= 2) + (singles + 1) // 2,
                      sum(n - n // 2 for n in sizes if n >= 2) + singles // 2]


def _walked_in_halves(index: TokenIndex) -> bool:
    return index.build_info["walked_in_halves"] > 0


@pytest.mark.parametrize("way", sorted(WAYS))
@given(BOUNDED | repeated_components() | random_byte_dfas(), small_vocabs(),
       st.sampled_from(["bytes", "classes", "auto"]), st.booleans())
def test_each_way_gives_the_rows_of_the_reference(way, dfa, vocab, strategy, group_states):
    # (without groups every state walks: equal rows in both halves, which the numbering merges)
    reference = TokenIndex.build(dfa, vocab, strategy=strategy, group_states=group_states,
                                 threads=1)
    index = TokenIndex.build(dfa, vocab, strategy=strategy, group_states=group_states,
                             **WAYS[way])
    assert _walked_in_halves(index) == (way == "halves")
    same_index(reference, index)
    check_index_against_reference(index, dfa, vocab)


@pytest.fixture(scope="module")
def llama3():
    return load_vocabulary("llama3")


def _object_schema():
    """An object of sixty string and integer members: about 1,500 states, most of them in a
    key's name, which the halves walk on a real vocabulary."""
    props = {f"member_{i:02d}": {"type": "string" if i % 2 else "integer"} for i in range(60)}
    return compile_json_schema({"type": "object", "properties": props, "required": list(props)},
                               whitespace=0)


def test_a_real_schema_is_walked_in_halves_by_default(llama3):
    bt = as_byte_dfa(_object_schema())
    # (large enough that its relaxed blocks are made in the second thread too)
    assert bt.table.shape[0] >= RELAXED_APART_MIN_STATES
    index = TokenIndex.build(bt, llama3, threads=2)
    assert index.build_info["walks"] >= HALVES_MIN_UNITS and _walked_in_halves(index)
    reference = TokenIndex.build(bt, llama3, threads=1)
    assert not _walked_in_halves(reference)
    same_index(reference, index)
    assert 1 < index.mask_rows.shape[0] < bt.table.shape[0]     # (rows shared between states)


def test_few_units_are_walked_in_one_thread(llama3):
    index = TokenIndex.build(compile_json_schema({"type": "integer"}), llama3, threads=2)
    assert index.build_info["walks"] < HALVES_MIN_UNITS and not _walked_in_halves(index)


def test_halves_that_give_up_on_the_byte_trie_walk_the_class_trie():
    # no pass over the byte trie allowed: both halves give up, then walk the merged trie
    vocab = Vocabulary([b"a", b"ab", b"b", b'"', b"ba", None], eos_token_ids=[5])
    dfa = compile_json_schema({"type": "string", "maxLength": 5}, whitespace=0).dfa.to_bytes()
    index = TokenIndex.build(dfa, vocab, byte_walk_passes=0, **WAYS["halves"])
    assert index.build_info["strategy"] == "classes" and _walked_in_halves(index)
    same_index(TokenIndex.build(dfa, vocab, strategy="bytes", threads=1), index)
    check_index_against_reference(index, dfa, vocab)


def test_builds_in_several_threads_agree(llama3):
    bt = as_byte_dfa(_object_schema())
    reference = TokenIndex.build(bt, llama3, threads=1)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: TokenIndex.build(bt, llama3, threads=2), range(6)))
    for index in got:
        assert _walked_in_halves(index)
        same_index(reference, index)


def _rows_in_child(queue, bt, vocab):
    index = TokenIndex.build(bt, vocab, **WAYS["halves"])
    queue.put((index.mask_rows, index.state_row, index.finished_row))


def test_a_forked_child_walks_in_halves():
    # the parent's second thread is not in the child: the child makes its own
    vocab = Vocabulary([b"a", b"ab", b"b", b'"', b"ba", None], eos_token_ids=[5])
    bt = as_byte_dfa(compile_json_schema({"type": "string", "maxLength": 5}, whitespace=0))
    parent = TokenIndex.build(bt, vocab, **WAYS["halves"])
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_rows_in_child, args=(queue, bt, vocab))
    child.start()
    rows, state_row, finished_row = queue.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0
    assert np.array_equal(rows, parent.mask_rows) and np.array_equal(state_row, parent.state_row)
    assert finished_row == parent.finished_row


@pytest.mark.parametrize("options", [dict(threads=0), dict(threads=True), dict(threads=1.5),
                                     dict(halves_min_units=-1)])
def test_bad_thread_options_are_refused(options):
    vocab = Vocabulary([b"a", None], eos_token_ids=[1])
    with pytest.raises(OptionError, match=next(iter(options))):
        TokenIndex.build(compile_json_schema({"type": "integer"}), vocab, **options)


def test_the_compiler_passes_its_threads_on(llama3):
    schema = {"type": "object", "properties": {f"member_{i:02d}": {"type": "integer"}
                                               for i in range(60)}}
    one = IndexCompiler(llama3, max_entries=0, threads=1).json_schema(schema, whitespace=0)
    two = IndexCompiler(llama3, max_entries=0, threads=2).json_schema(schema, whitespace=0)
    assert not _walked_in_halves(one) and _walked_in_halves(two)
    same_index(one, two)
    with pytest.raises(TypeError, match="threads"):
        IndexCompiler(llama3, threads=0)
