"""The array lowering of minimal code-point DFAs (:func:`tokenfsm.automata.bytedfa._lower_minimal`).

Oracle: the general lowering (suffix-shared UTF-8 sequences, then a full minimisation), which the
array lowering must reproduce table for table -- same byte classes, same canonical numbering.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracles import automata, charsets, fewer
from tokenfsm.automata import DFA, ByteDFA, CharSet
from tokenfsm.automata import bytedfa
from tokenfsm.automata.bytedfa import _lower_minimal


def same(a: ByteDFA, b: ByteDFA) -> bool:
    return (a.start == b.start and np.array_equal(a.byte_classes, b.byte_classes)
            and np.array_equal(a.table, b.table) and np.array_equal(a.accepting, b.accepting))


def check(d: DFA) -> ByteDFA:
    m = d.minimize()
    fast = ByteDFA.from_codepoint_dfa(m)
    if m.start != 0:
        assert _lower_minimal(m) is not None, "the array lowering gave up on a minimal DFA"
    assert same(fast, ByteDFA._lower_general(m))
    return fast


@fewer(2)
@given(automata())
def test_array_lowering_equals_general_lowering(a):
    check(a[0])


@fewer(2)
@given(st.lists(charsets(), min_size=1, max_size=4), st.integers(0, 3))
def test_array_lowering_of_class_sequences(sets, reps):
    d = DFA.epsilon()
    for cs in sets:
        if cs:
            d = d + DFA.from_charset(cs).repeat(0, reps)
    check(d)


@pytest.mark.parametrize("pattern", [
    r"[\s\S]{0,40}", r"\w+", r"\p{L}+\d?", r"[^\"\\]{0,20}", "é+ü", "[\u0800-\uffff]+x",
    "[\U00010000-\U0010ffff]?[\u00e0-\u00ff]*", "[\u07ff\u0800\uffff\U00010000]+",
    "[\ud7ff\ue000]a", "[\U0010fff0-\U0010ffff]|[\u0080-\u00bf]{2}",
])
def test_array_lowering_on_patterns(pattern):
    b = check(DFA.from_regex(pattern))
    for text in ("", "a", "é", "\ud7ff", "\U0010ffff", "xyz", "éü"):
        try:
            want = DFA.from_regex(pattern).accepts(text)
        except Exception:  # noqa: BLE001 - not every text is valid for every pattern's alphabet
            continue
        assert b.accepts(text.encode("utf-8", "surrogatepass")) == want


def test_unmarked_tables_take_the_general_path():
    # the same language as a non-minimal table (two equivalent accepting states)
    d = DFA([CharSet.of("a"), ~CharSet.of("a")], [[0, 0], [2, 0], [3, 0], [2, 0]], {2, 3}, 1)
    assert not d._minimal
    assert same(ByteDFA.from_codepoint_dfa(d), DFA.from_regex("a+").to_bytes())


# -- the class tree is shared between DFAs whose classes agree above ASCII ------------------------
HIGH = CharSet([(0x80, 0xD7FF), (0xE000, 0x10FFFF)])


@fewer(2)
@given(st.lists(charsets(), min_size=1, max_size=3), st.lists(charsets(), min_size=1, max_size=3),
       st.sampled_from([HIGH, CharSet([(0xE9, 0xE9)]), CharSet([(0x800, 0xFFFF)]), CharSet()]))
def test_cached_class_tree_equals_general_lowering(left, right, high):
    # two automata whose classes cut ASCII differently (so the same non-ASCII classes get
    # different numbers) but share the non-ASCII sets: the second reuses the first's class tree
    def build(sets):
        d = DFA.from_charset(high | CharSet([(0x22, 0x22)])).repeat(0, 3) if high else DFA.epsilon()
        for cs in sets:
            if cs:
                d = d + DFA.from_charset((cs & CharSet([(0, 0x7F)])) | high).repeat(0, 2)
        return d
    bytedfa._class_tree.cache_clear()
    bytedfa._tree_plan.cache_clear()
    bytedfa._TEMPLATES.clear()
    check(build(left))
    check(build(right))       # warm: the tree (and templates) may come from the cache
    bytedfa._class_tree.cache_clear()
    bytedfa._tree_plan.cache_clear()
    bytedfa._TEMPLATES.clear()
    check(build(right))       # cold


# -- byte classes by column hashing ------------------------------------------------------------
@fewer(2)
@given(st.integers(1, 40), st.integers(1, 6), st.randoms(use_true_random=False))
def test_hashed_byte_classes_equal_exact_grouping(rows, distinct, rnd):
    cols = [[rnd.randrange(rows) for _ in range(rows)] for _ in range(distinct)]
    table = np.array([cols[rnd.randrange(distinct)] for _ in range(256)], dtype=np.int64).T.copy()
    want = bytedfa.BYTE_CLASSES[bytedfa.BYTE_CLASSES_REFERENCE](table)
    for way in bytedfa.BYTE_CLASSES.values():
        got = way(table)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_hash_collisions_fall_back_to_exact_grouping():
    table = np.zeros((3, 256), dtype=np.int64)
    table[1, 7] = 2
    table[2, 200] = 1
    # all-zero weights: every column hashes alike, so the check must catch the collision
    got = bytedfa._byte_classes_np(table, weights=np.zeros(8, dtype=np.int64))
    want = bytedfa._byte_classes(table)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert int(got[0].max()) == 2
