"""Constructions with a shortcut give exactly what the general route gives.

``DFA.literal`` builds its chain directly (and its embedding edges); the general route is the
concatenation of one-character automata, determinised and minimised. ``refine`` sweeps range
boundaries with integer signatures; the oracle compares code points' memberships directly.
"""

import numpy as np
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


# -- subset construction groups -> minimisation -> embedding edges ----------------------------

from tokenfsm.automata.dfa import _columns_distinct  # noqa: E402
from tokenfsm.automata.minimize import minimize_groups, minimize_table  # noqa: E402
from tokenfsm.automata.nfa import determinize, determinize_groups, from_ast  # noqa: E402

from oracles import asts, raw_tables  # noqa: E402


def _row_groups_naive(row):
    by_t = {}
    for c, t in enumerate(row):
        if t:
            by_t[t] = by_t.get(t, 0) | (1 << c)
    return by_t


def _dense_edges(m):
    """Embedding edges computed from the table alone, class by class."""
    out = [()]
    for row in m.delta[1:]:
        by_t = {}
        for c, t in enumerate(row):
            if t:
                by_t.setdefault(t, []).append(c)
        out.append(tuple((CharSet.union_of_disjoint([m.classes[c] for c in cs]), t)
                         for t, cs in by_t.items()))
    return out


@given(asts(assertions=False))
def test_groups_route_equals_table_route(node):
    nfa = from_ast(node)
    classes, delta, accepting, start, groups = determinize_groups(nfa)
    # the groups describe the table exactly: per state, its non-dead targets and their classes
    assert not any(delta[0]) and groups[0] in ((), [])
    for row, g in zip(delta, groups):
        merged = {}
        for t, m in g:
            assert t != 0 and not merged.get(t, 0) & m
            merged[t] = merged.get(t, 0) | m
        assert merged == _row_groups_naive(row)
    # minimisation with and without them
    got = minimize_groups(delta, accepting, start, groups)
    assert got[:3] == minimize_groups(delta, accepting, start)[:3] == \
        minimize_table(delta, accepting, start)
    assert [dict(g) for g in got[3]] == [_row_groups_naive(r) for r in got[0]]
    # the automaton: same fields by the pair route (with the groups, or scanning the rows) and
    # by the general route (columns merged by transposing the table, taken for arrays)
    fast = DFA._minimal_of(classes, delta, accepting, start, groups)
    scanned = DFA._minimal_of(*determinize(nfa))
    general = DFA._minimal_of(classes, np.asarray(delta, dtype=np.int64), accepting, start)
    for other in (scanned, general):
        assert (fast.classes, fast.delta, fast.accepting, fast.start) == \
            (other.classes, other.delta, other.accepting, other.start)
    assert _edge_lists(fast) == _dense_edges(general)


@given(raw_tables(max_states=8, max_classes=4))
def test_pair_route_merges_classes_like_the_general_route(table):
    # random tables: classes often become alike after minimisation
    classes, delta, accepting, start = table
    # classes in order of their first member (what the pair route expects; else it steps aside)
    order = sorted(range(len(classes)), key=lambda c: classes[c].min())
    classes = [classes[c] for c in order]
    delta = [[row[c] for c in order] for row in delta]
    fast = DFA._minimal_of(classes, delta, accepting, start)
    general = DFA._minimal_of(classes, np.asarray(delta, dtype=np.int64), accepting, start)
    assert (fast.classes, fast.delta, fast.accepting, fast.start) == \
        (general.classes, general.delta, general.accepting, general.start)
    assert _edge_lists(fast) == _dense_edges(general)


@given(raw_tables(max_states=8, max_classes=4))
def test_columns_distinct_equals_transposition(table):
    _, delta, accepting, start = table
    got = minimize_groups(delta, accepting, start)
    k = len(delta[0])
    assert _columns_distinct(got[3], k) == (len(set(zip(*got[0]))) == k)
