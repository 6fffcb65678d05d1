"""Constructions with a shortcut give exactly what the general route gives.

``DFA.literal`` builds its chain directly (and its embedding edges); the general route is the
concatenation of one-character automata, determinised and minimised. ``refine`` sweeps range
boundaries with integer signatures; the oracle compares code points' memberships directly.
"""

import re

import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata import DFA
from tokenfsm.automata.charset import CharSet, refine
from tokenfsm.automata.dfa import _edge_lists

from oracles import POINTS, charsets

# characters around the edges that matter: 0, ASCII, both sides of the surrogate gap, the last
_CHARS = st.sampled_from(["\x00", "a", "b", '"', "\\", "\x7f", "\u00e9", "\ud7ff", "\ue000",
                          "\uffff", "\U00010000", "\U0010ffff"])


@given(st.text(_CHARS, min_size=0, max_size=12))
def test_literal_equals_general_concatenation(s):
    got = DFA.literal(s)
    general = DFA.concat_all([DFA.from_charset(CharSet.of(ch)) for ch in s])
    assert (got.classes, got.delta, got.accepting, got.start) == \
        (general.classes, general.delta, general.accepting, general.start)
    assert got.accepts(s) and not got.accepts(s + "a") and (s == "" or not got.accepts(s[:-1]))
    # the edges set up front are the ones computed from the table
    edges = got._edges
    got._edges = None
    assert edges is None or _edge_lists(got) == edges


def test_literal_rejects_surrogates():
    with pytest.raises(ValueError, match="surrogate"):
        DFA.literal("a\ud800b")


def _members(cs: CharSet, points) -> frozenset:
    return frozenset(p for p in points if p in cs)


@given(st.lists(charsets(), max_size=6))
def test_refine_is_the_coarsest_separating_partition(sets):
    classes = refine(sets)
    # a partition of every scalar value, sorted by first member, in canonical ranges
    assert sum(len(c) for c in classes) == len(CharSet.any())
    assert all(c and CharSet(c.ranges).ranges == c.ranges for c in classes)
    assert [c.min() for c in classes] == sorted(c.min() for c in classes)
    # two points share a class exactly when every set holds both or neither (probe points:
    # each range's ends and their neighbours)
    probes = sorted({x for cs in sets + classes for lo, hi in cs.ranges
                     for x in (lo - 1, lo, hi, hi + 1) if 0 <= x <= 0x10FFFF
                     and not 0xD800 <= x <= 0xDFFF} | {0, 0x10FFFF} | set(POINTS))
    probes = [p for p in probes if not 0xD800 <= p <= 0xDFFF]
    class_of = {p: next(i for i, c in enumerate(classes) if p in c) for p in probes}
    sig = {p: tuple(p in cs for cs in sets) for p in probes}
    for p in probes:
        for q in probes:
            assert (class_of[p] == class_of[q]) == (sig[p] == sig[q])


def test_refine_literal_classes():
    got = refine([CharSet.of("a"), CharSet.of("b"), CharSet.range("0", "9")])
    assert [c.to_class() for c in got] == [r"[^0-9ab]", "[0-9]", "a", "b"]
    assert refine([]) == [CharSet.any()]
    assert refine([CharSet.empty(), CharSet.any()]) == [CharSet.any()]
