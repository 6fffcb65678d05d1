"""The subset construction gives exactly what the straightforward construction gives.

``determinize_groups`` keeps the partitions of label sets it has seen, holds a subset state of
one NFA state without epsilon moves as that state, and interns states inline. The reference
below is the construction without those shortcuts: every label set refined afresh, every subset
a frozenset interned through one dict. Both must give the same classes, the same table (state
numbers included), the same accepting states, start and groups. The automata are random NFAs
shaped like the ones the library builds: copies of an embedded automaton sharing one edge tuple
per state (with their own offsets), states built one by one with overlapping labels, epsilon
moves with cycles, a start with or without epsilon moves. A naive NFA walk over strings checks
the languages independently.
"""

from __future__ import annotations

import bisect

import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata import nfa as nfa_mod
from tokenfsm.automata.charset import CharSet, refine
from tokenfsm.automata.errors import Budget, BudgetExceeded
from tokenfsm.automata.nfa import NFA, determinize, determinize_groups, from_ast

from oracles import asts, fewer

# -- the reference construction -----------------------------------------------------------------


def reference_groups(nfa: NFA, budget=None, operation="determinize", extra_sets=()):
    """The subset construction written plainly (what ``determinize_groups`` must equal)."""
    meter = (budget or nfa_mod.DEFAULT_BUDGET).meter(operation)
    label_sets = {cs for out in nfa.edges for cs, _ in out}
    word_sets: list = []
    has_assertions = nfa.has_assertions
    if has_assertions:
        label_sets.add(nfa_mod._NEWLINE)
        for out in nfa.asserts:
            for a, _ in out:
                if a.word is not None and a.word not in word_sets:
                    word_sets.append(a.word)
        label_sets.update(word_sets)
    label_sets.update(extra_sets)
    classes = refine(label_sets)
    nclasses = len(classes)
    firsts = [c.ranges[0][0] for c in classes]

    def cover(cs):
        return [i for lo, hi in cs.ranges
                for i in range(bisect.bisect_left(firsts, lo), bisect.bisect_right(firsts, hi))]

    if has_assertions:
        moves = []
        for out, off in zip(nfa.edges, nfa.offset):
            m: dict = {}
            for cs, t in out:
                for c in cover(cs):
                    m.setdefault(c, []).append(t + off)
            moves.append(m)
        is_nl = [c == nfa_mod._NEWLINE or (c.ranges[0][0] == 10 and len(c) == 1)
                 for c in classes]
        wid_of = {w: i for i, w in enumerate(word_sets)}
        is_word = [[firsts[c] in w for c in range(nclasses)] for w in word_sets]
        return nfa_mod._determinize_asserts(nfa, moves, classes, meter, is_nl, is_word,
                                            wid_of) + (None,)
    moves = [[(cover(cs), t, sum(1 << c for c in cover(cs))) for cs, t in out]
             for out in nfa.edges]
    union = []
    for ml in moves:
        u = 0
        for _, _, m in ml:
            u = None if u is None or u & m else u | m
        union.append(u)
    return _reference_plain(nfa, moves, union, classes, meter)


def _reference_plain(nfa, moves, union, classes, meter):
    eps, offset, accepting_nfa = nfa.eps, nfa.offset, nfa.accepting
    nclasses = len(classes)

    def closure(states):
        stack = list(states)
        seen = set(stack)
        while stack:
            q = stack.pop()
            for t in eps[q]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return frozenset(seen)

    index = {frozenset(): 0}
    delta: list = [[0] * nclasses]
    groups: list | None = [()]
    accepting: set = set()
    todo: list = []

    def intern(S):
        i = index.get(S)
        if i is None:
            i = len(delta)
            meter.states = i - 1
            meter.add()
            index[S] = i
            delta.append(None)
            if groups is not None:
                groups.append(None)
            if not accepting_nfa.isdisjoint(S):
                accepting.add(i)
            todo.append(S)
        return i

    start = intern(closure([nfa.start]))
    groups_max = max(2, nfa_mod.GROUPS_MAX_CELLS // max(1, nclasses))
    while todo:
        if groups is not None and len(delta) > groups_max:
            groups = None
        S = todo.pop()
        row = [0] * nclasses
        grp = []
        edges = [(cl, t + offset[q], m) for q in S for cl, t, m in moves[q]]
        seen = 0
        for q in S:
            u = union[q]
            if u is None or seen & u:
                break
            seen |= u
        else:
            # no class has two edges: one target per edge, in the order of the edges
            for cl, t, m in edges:
                j = intern(closure((t,)))
                for c in cl:
                    row[c] = j
                grp.append((j, m))
            delta[index[S]] = row
            if groups is not None:
                groups[index[S]] = grp
            continue
        if len(edges) > 8:
            succ: dict = {}
            for cl, t, _ in edges:
                for c in cl:
                    succ.setdefault(c, []).append(t)
            by_j: dict = {}
            for c, ts in succ.items():
                j = intern(closure(ts))
                row[c] = j
                by_j[j] = by_j.get(j, 0) | (1 << c)
            grp = list(by_j.items())
        else:
            parts: list = []
            for _, t, m in edges:
                nxt = []
                for pm, ts in parts:
                    both = pm & m
                    if both:
                        if both != pm:
                            nxt.append((pm & ~m, ts))
                        nxt.append((both, ts + [t]))
                        m &= ~pm
                    else:
                        nxt.append((pm, ts))
                if m:
                    nxt.append((m, [t]))
                parts = nxt
            for pm, ts in parts:
                j = intern(closure(ts))
                for c in range(pm.bit_length()):
                    if pm >> c & 1:
                        row[c] = j
                grp.append((j, pm))
        delta[index[S]] = row
        if groups is not None:
            groups[index[S]] = grp
    meter.states = len(delta) - 1
    return classes, delta, accepting, start, groups


# -- random NFAs shaped like the library's ------------------------------------------------------

_POOL = [
    CharSet.of("a"), CharSet.of("b"), CharSet.of("\n"), CharSet.range("a", "c"),
    CharSet.range("b", "z"), CharSet([(0x30, 0x39), (0x61, 0x61)]), ~CharSet.of("a"),
    CharSet.range(0x80, 0x10FFFF), CharSet.of("\u00e9"), CharSet.any(),
]
# an equal label that is another object (labels are grouped by identity, refined by value)
_LABELS = st.one_of(st.sampled_from(_POOL),
                    st.sampled_from(_POOL).map(lambda cs: CharSet._trusted(cs.ranges)))
_TEXT = ["a", "b", "c", "z", "0", "5", "\n", "\u00e9", "\x00", "\u4e00", "\U0010ffff"]


@st.composite
def nfas(draw, max_plain: int = 6):
    nfa = NFA()
    plain = []                      # states built one by one
    for _ in range(draw(st.integers(1, max_plain))):
        plain.append(nfa.new_state())
    # embedded automata: per template, one edge tuple per state (targets relative to a copy's
    # offset), copied once or more like DFA._embed does
    for _ in range(draw(st.integers(0, 3))):
        size = draw(st.integers(1, 4))
        rows = []
        for _ in range(size):
            # one edge per target with disjoint labels, as in a DFA row; sometimes overlapping
            out = []
            used = CharSet.empty()
            for _ in range(draw(st.integers(0, 3))):
                cs = draw(_LABELS)
                if draw(st.booleans()):
                    cs = cs - used
                    if not cs:
                        continue
                used = used | cs
                out.append((cs, draw(st.integers(1, size))))
            rows.append(tuple(out))
        for _ in range(draw(st.integers(1, 3))):
            base = len(nfa.edges) - 1
            nfa.edges.extend(rows)
            nfa.offset.extend([base] * size)
            nfa.eps.extend([] for _ in range(size))
            nfa.asserts.extend(() for _ in range(size))
    n = nfa.num_states
    states = st.integers(0, n - 1)
    for q in plain:
        nfa.edges[q].extend((draw(_LABELS), draw(states))
                            for _ in range(draw(st.integers(0, 3))))
    # epsilon moves anywhere (cycles and self loops included)
    for _ in range(draw(st.integers(0, n + 2))):
        nfa.eps[draw(states)].append(draw(states))
    nfa.start = draw(states)
    nfa.accepting = set(draw(st.lists(states, max_size=3)))
    return nfa


def nfa_accepts(nfa: NFA, text: str) -> bool:
    """Walk the NFA on ``text`` with sets of states (no determinisation)."""
    def close(states):
        out = set(states)
        stack = list(states)
        while stack:
            for t in nfa.eps[stack.pop()]:
                if t not in out:
                    out.add(t)
                    stack.append(t)
        return out

    cur = close({nfa.start})
    for ch in text:
        cur = close({t + nfa.offset[q] for q in cur for cs, t in nfa.edges[q] if ch in cs})
    return not cur.isdisjoint(nfa.accepting)


def table_accepts(classes, delta, accepting, start, text: str) -> bool:
    s = start
    for ch in text:
        s = delta[s][next(c for c, cs in enumerate(classes) if ch in cs)]
    return s in accepting


def _same(got, want):
    assert got[0] == want[0]                    # classes
    assert got[1] == want[1]                    # table, state numbers included
    assert got[2] == want[2] and got[3] == want[3]
    assert got[4] == want[4]                    # groups, pairs in the same order


# -- properties -----------------------------------------------------------------------------------


@given(nfas(), st.lists(st.sampled_from(_POOL), max_size=2), st.data())
def test_equals_reference_on_random_nfas(nfa, extra, data):
    nfa_mod._partitions.clear()
    want = reference_groups(nfa, extra_sets=extra)
    got = determinize_groups(nfa, extra_sets=extra)
    _same(got, want)
    # again, with the partition kept from the first run
    _same(determinize_groups(nfa, extra_sets=extra), want)
    # without the groups
    assert determinize(nfa, extra_sets=extra) == want[:4]
    # the language, walked on the NFA itself
    for text in data.draw(st.lists(st.text(st.sampled_from(_TEXT), max_size=5), max_size=8)):
        assert table_accepts(*got[:4], text) == nfa_accepts(nfa, text)


@given(asts(assertions=True))
def test_equals_reference_on_regex_trees(node):
    nfa = from_ast(node)
    want = reference_groups(nfa)
    _same(determinize_groups(nfa), want)
    assert determinize(nfa) == want[:4]


@fewer(2)
@given(nfas(max_plain=3), st.integers(1, 6))
def test_budget_stops_at_the_same_state(nfa, limit):
    budget = Budget(max_states=limit)
    try:
        want = reference_groups(nfa, budget)
    except BudgetExceeded as e:
        with pytest.raises(BudgetExceeded) as got:
            determinize_groups(nfa, budget)
        assert (got.value.limit, got.value.reached) == (e.limit, e.reached)
    else:
        _same(determinize_groups(nfa, budget), want)


def _one_label_nfa(cs: CharSet) -> NFA:
    nfa = NFA()
    a, b = nfa.new_state(), nfa.new_state()
    nfa.edges[a].append((cs, b))
    nfa.edges[a].append((CharSet.of("b"), a))
    nfa.start, nfa.accepting = a, {b}
    return nfa


def test_partitions_kept_are_bounded_and_keyed_by_value():
    kept = nfa_mod.PARTITIONS_KEPT
    nfa_mod._partitions.clear()
    firsts = []
    for k in range(kept + 4):       # one new set of labels each time: the oldest are dropped
        nfa = _one_label_nfa(CharSet.range(0x100 + k, 0x100 + k))
        got = determinize_groups(nfa)
        if k < 4 or k >= kept:
            _same(got, reference_groups(nfa))
        firsts.append(frozenset(lab for out in nfa.edges for lab, _ in out))
        assert len(nfa_mod._partitions) <= kept
    assert len(nfa_mod._partitions) == kept
    assert not any(key in nfa_mod._partitions for key in firsts[:4])
    assert all(key in nfa_mod._partitions for key in firsts[4:])
    for k in range(8):
        # a fresh but equal label object each time past the first four
        cs = CharSet.range(0x61, 0x61 + k % 4)
        nfa = _one_label_nfa(CharSet._trusted(cs.ranges))
        before = len(nfa_mod._partitions)
        got = determinize_groups(nfa)
        _same(got, reference_groups(nfa))
        assert len(nfa_mod._partitions) <= kept
        if k >= 4:
            assert list(nfa_mod._partitions)[-4 + k % 4] == frozenset([cs, CharSet.of("b")])
            assert len(nfa_mod._partitions) == before
    # the returned classes are the caller's own list
    got[0].append(None)
    assert determinize_groups(nfa)[0] == reference_groups(nfa)[0]


def test_groups_stop_past_the_cell_limit():
    # a chain longer than the groups limit (many classes, so the limit comes early): groups are
    # dropped the same way
    letters = [CharSet.of(chr(0x100 + i)) for i in range(62)]          # 63 classes
    n = nfa_mod.GROUPS_MAX_CELLS // 63 + 20
    nfa = NFA()
    states = [nfa.new_state() for _ in range(n)]
    for i, (q, t) in enumerate(zip(states, states[1:])):
        nfa.edges[q].append((letters[i % 62], t))
        nfa.edges[q].append((letters[i % 62] | letters[(i + 1) % 62], t))
    nfa.eps[states[3]].append(states[7])
    nfa.start, nfa.accepting = states[0], {states[-1]}
    got = determinize_groups(nfa)
    assert len(got[0]) == 63 and len(got[1]) > nfa_mod.GROUPS_MAX_CELLS // 63
    assert got[4] is None
    _same(got, reference_groups(nfa))
    # one state less than the limit: groups kept
    short = NFA()
    states = [short.new_state() for _ in range(nfa_mod.GROUPS_MAX_CELLS // 63 - 2)]
    for i, (q, t) in enumerate(zip(states, states[1:])):
        short.edges[q].append((letters[i % 62], t))
    short.start, short.accepting = states[0], {states[-1]}
    got = determinize_groups(short)
    assert got[4] is not None
    _same(got, reference_groups(short))
