"""The fast lowering of minimal code-point DFAs to UTF-8 byte DFAs, piece by piece.

Oracles: the general lowering (UTF-8 sequences of every class range, suffix-shared, then a full
minimisation -- it shares no code with the fast path), which every lowering declared in
``bytedfa.LOWERINGS`` must reproduce array for array; a plain breadth-first walk written out
here, which every way of ``bytedfa.NUMBERINGS`` must reproduce; NumPy's own conversions and
column comparisons; and Python's UTF-8 encoder for membership.
"""

from __future__ import annotations

import random
import re
import string
from collections import deque
from functools import partial

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import fewer
from tokenfsm.automata import DFA, BudgetExceeded, ByteDFA, CharSet, bytedfa

# Code points where UTF-8 changes: the ends of each sequence length, both sides of the surrogate
# gap, the last scalar value, the lead bytes with a narrowed second byte (E0, ED, F0, F4).
EDGES = [0x00, 0x01, 0x22, 0x5C, 0x7E, 0x7F, 0x80, 0x81, 0xBF, 0xC0, 0x7FF, 0x800, 0x801, 0xFFF,
         0x1000, 0xD7FF, 0xE000, 0xE001, 0xFFFF, 0x10000, 0x10001, 0x3FFFF, 0x40000, 0xFFFFF,
         0x100000, 0x10FFFE, 0x10FFFF]
LENGTHS = [(0x00, 0x7F), (0x80, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
cut_points = st.one_of(st.sampled_from(EDGES),
                       st.sampled_from(LENGTHS).flatmap(lambda r: st.integers(r[0], r[1])))


@st.composite
def class_partitions(draw, max_classes: int = 6):
    """Classes covering every scalar value, cut at UTF-8 edges and random points of each length;
    a class may own several pieces anywhere."""
    cuts = sorted(set(draw(st.lists(cut_points, max_size=10))) - {0})
    bounds = [0] + cuts + [0x110000]
    pieces = [CharSet([(bounds[i], bounds[i + 1] - 1)]) for i in range(len(bounds) - 1)]
    pieces = [p for p in pieces if p]                    # (a piece inside the surrogate gap)
    k = draw(st.integers(1, min(max_classes, len(pieces))))
    owner = list(range(k)) + [draw(st.integers(0, k - 1)) for _ in range(len(pieces) - k)]
    owner = draw(st.permutations(owner))
    return [CharSet([r for p, o in zip(pieces, owner) if o == c for r in p.ranges]) for c in range(k)]


@st.composite
def minimal_dfas(draw, max_states: int = 9, max_classes: int = 6):
    classes = draw(class_partitions(max_classes))
    k = len(classes)
    n = draw(st.integers(1, max_states)) + 1
    delta = [[0] * k] + [[draw(st.integers(0, n - 1)) for _ in range(k)] for _ in range(n - 1)]
    accepting = draw(st.sets(st.integers(1, n - 1), min_size=1))
    start = draw(st.integers(1, n - 1))
    return DFA.from_parts(classes, delta, accepting, start).minimize()


def same(a: ByteDFA, b: ByteDFA) -> bool:
    return (a.start == b.start
            and all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in
                    ((a.byte_classes, b.byte_classes), (a.table, b.table), (a.accepting, b.accepting))))


def probes(d: DFA) -> list[str]:
    """Characters on both sides of every class boundary."""
    out = {0}
    for cs in d.classes:
        for lo, hi in cs.ranges:
            out.update(x for x in (lo - 1, lo, hi, hi + 1) if 0 <= x <= 0x10FFFF and not 0xD800 <= x <= 0xDFFF)
    return [chr(x) for x in sorted(out)]


def check(m: DFA) -> ByteDFA:
    """Every lowering of ``bytedfa.LOWERINGS`` took ``m`` and agrees with the general lowering,
    and so does the fast path's own choice; membership spot checks."""
    assert m._minimal
    want = bytedfa.LOWERINGS[bytedfa.LOWERING_REFERENCE](m)
    if m.start == 0:
        assert same(ByteDFA.from_codepoint_dfa(m), want)
        return want
    for name, lower in bytedfa.LOWERINGS.items():
        if name == bytedfa.LOWERING_REFERENCE:
            continue
        got = lower(m)
        if got is None and name in bytedfa.PARTIAL_LOWERINGS:
            continue
        assert got is not None, f"the {name} lowering gave up on a minimal DFA"
        assert same(got, want), name
    got = bytedfa._lower_minimal(m)
    assert got is not None, "the fast lowering gave up on a minimal DFA"
    for way in ("templates", "arrays"):
        # the states as built, numbered breadth-first, are the canonical table
        raw, canon = bytedfa._lower_minimal(m, way, numbered=False), bytedfa._lower_minimal(m, way)
        table, accepting = bytedfa._number_states(raw[1], raw[2], raw[3])
        assert raw[1].dtype == np.int32 and np.array_equal(raw[0], canon[0])
        assert np.array_equal(table, canon[1]) and np.array_equal(accepting, canon[2])
    got = ByteDFA(*got)            # the checking constructor
    assert same(got, want)
    fast = ByteDFA.from_codepoint_dfa(m)          # built without the checks
    assert same(fast, want)
    for arr in (fast.byte_classes, fast.table, fast.accepting):
        assert arr.flags.c_contiguous and not arr.flags.writeable
    chars = probes(m)
    for a in chars[:12]:
        for b in chars[:12]:
            s = a + b
            assert got.accepts(s.encode()) == m.accepts(s)
    return got


@fewer(2)
@given(minimal_dfas())
def test_random_dfas_equal_general_lowering(m):
    check(m)                # (every way of building partial sequences: templates, arrays)


texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@fewer(2)
@given(texts)
def test_literals_equal_general_lowering(s):
    # DFA.literal's automaton is lowered as a chain (bytedfa.lower_literal): every way, that
    # one included, gives the general lowering's table; so does the same language built
    # otherwise (no literal mark), and the chain accepts the string's bytes and no prefix
    m = DFA.literal(s)
    assert bytedfa.LOWERINGS["literal"](m) is not None
    got = check(m)
    assert same(check(DFA.from_regex(re.escape(s))), got)
    data = s.encode()
    assert got.accepts(data) and not any(got.accepts(data[:k]) for k in range(len(data)))
    assert not got.accepts(data + data[-1:])


def test_only_literals_take_the_literal_lowering():
    # a language of one string built by other means carries no mark: the literal way declines
    for m in (DFA.from_regex("ab"), DFA.from_regex("a") + DFA.from_regex("b"), DFA.epsilon()):
        assert bytedfa.LOWERINGS["literal"](m.minimize()) is None


@fewer(3)
@given(minimal_dfas(max_states=5, max_classes=3), minimal_dfas(max_states=5, max_classes=3))
def test_products_and_sequences_equal_general_lowering(a, b):
    # larger automata, with classes cut by both sides (a star or a concatenation of random
    # automata may pass its budget: their subsets can number 2^n, and that is no lowering's)
    for make in (lambda: a + b, lambda: (a | b).star(), lambda: a & ~b):
        try:
            d = make()
        except BudgetExceeded:
            continue
        check(d.minimize())


@fewer(2)
@given(class_partitions(max_classes=4), st.data())
def test_templates_are_shared_across_numberings(classes, data):
    # automata with the same classes but their states numbered apart: a later lowering may
    # take the partial-sequence states from an earlier one's template, renamed
    bytedfa._TEMPLATES.clear()
    k = len(classes)
    for _ in range(3):
        n = data.draw(st.integers(2, 8))
        delta = [[0] * k] + [[data.draw(st.integers(0, n - 1)) for _ in range(k)] for _ in range(n - 1)]
        check(DFA.from_parts(classes, delta, {n - 1}, 1).minimize())


def test_template_is_reused_under_renaming():
    bytedfa._TEMPLATES.clear()
    # the same pattern of targets on the non-ASCII class (dead, or one state), other states
    first = check(DFA.from_regex("ab[\u0080-\U0010ffff]x").minimize())
    (template,) = bytedfa._TEMPLATES.values()
    second = check(DFA.from_regex("[\u0080-\U0010ffff]y").minimize())
    (again,) = bytedfa._TEMPLATES.values()
    assert again is template and first.num_states != second.num_states    # built once


_HIGH = bytedfa._split_classes(DFA.from_charset(CharSet([(0x80, 0x10FFFF)])).minimize())[1]
_HIGH_KEY = tuple(r for r, _ in _HIGH)


def _template_inputs(n_rows: int, pattern: int):
    """``_partial_states`` arguments for the class above ASCII of ``[\u0080-\U0010ffff]`` and
    ``n_rows`` rows, row ``j`` dead where bit ``j`` of ``pattern`` is set: a distinct renamed
    pattern for each ``pattern`` below ``2 ** n_rows``."""
    rows = [[0] if pattern >> j & 1 else [j + 1] for j in range(n_rows)]
    return _HIGH_KEY, bytedfa._tree_plan(_HIGH_KEY), rows


def test_template_cache_is_bounded():
    kept, cells = bytedfa._TEMPLATES_MAX, bytedfa._TEMPLATE_CELLS
    bytedfa._TEMPLATES.clear()
    for pattern in range(kept - 2):          # small templates, all different
        bytedfa._partial_states(*_template_inputs(10, pattern))
    assert len(bytedfa._TEMPLATES) == kept - 2
    # lowerings that fill the cache, and then make it start afresh, are still right
    any_high = CharSet([(0x80, 0x10FFFF)])
    sizes = []
    for i in range(1, 8):        # ever longer chains: a new renamed row pattern each time
        d = DFA.from_charset(any_high | CharSet.of("a")).repeat(i, i)
        check(d.minimize())
        sizes.append(len(bytedfa._TEMPLATES))
    assert sizes == [kept - 1, kept, 1, 2, 3, 4, 5]
    # a template past the cell limit is built and not kept
    key, plan, rows = _template_inputs(400, 0)
    values, template = bytedfa._partial_states(key, plan, rows)
    assert sum(a.size for a in template[2:4] if a is not None) > cells
    assert len(bytedfa._TEMPLATES) == 5 and values == list(range(1, 401))


@pytest.mark.parametrize("pattern", [
    r"[^\"\\\x00-\x1f]*", r"[\u0080-\u07ff]{1,3}", r"[\u0800-\uffff]+\U00010000",
    "[\ud7ff\ue000]{2}", "[\U0010ffff\U0010fffe]?\u0080", r"[^a]{0,4}a", "\u00e9|\u00e8+|[\u4e00-\u9fff]",
    r"(?:[\u0100-\u017f]x|[\u0400-\u04ff]+y|[\u0590-\u05ff]?z)*",
    r"[\u0080-\u00ff\u0800\u0fff\U00010000\U0010ffff]{0,3}",
])
def test_patterns_equal_general_lowering(pattern):
    check(DFA.from_regex(pattern).minimize())


def test_many_classes_above_ascii():
    # a class per 128 code points of the two-byte range: many class nodes and distinct rows
    d = DFA.epsilon()
    for lo in range(0x80, 0x800, 0x80):
        d = d | (DFA.from_charset(CharSet([(lo, lo + 0x7F)])) + DFA.from_charset(CharSet.of(chr(lo // 0x80 + 0x40))))
    check(d.star().minimize())


def test_deep_chain():
    # a long counted repetition: thousands of breadth-first levels of one state each
    check(DFA.from_regex(r"[^\"]{0,3000}\"").minimize())


def test_unreachable_state_falls_back_to_general():
    a = CharSet.of("a")
    rest = ~a
    # state 3 is unreachable; the table claims to be minimal
    d = DFA([a, rest], [[0, 0], [2, 0], [2, 0], [1, 1]], {2}, 1, _minimal=True)
    assert bytedfa._lower_minimal(d) is None
    assert same(ByteDFA.from_codepoint_dfa(d), DFA.from_regex("a+").to_bytes())


# -- breadth-first numbering ----------------------------------------------------------------
def reference_numbering(tab: np.ndarray, start: int):
    """Breadth-first from ``start``, rows read left to right: the new number of each state."""
    num = {0: 0, start: 1}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        for t in tab[s].tolist():
            if t not in num:
                num[t] = len(num)
                queue.append(t)
    if len(num) != tab.shape[0]:
        return None
    out = np.zeros(tab.shape, dtype=np.int32)
    for old, new in num.items():
        out[new] = [num[t] for t in tab[old].tolist()]
    return out, [old for old, _ in sorted(num.items(), key=lambda kv: kv[1])]


@st.composite
def reachable_tables(draw):
    """Tables with dead state 0 whose states are (usually) all reachable from the start: wide
    levels, long chains, or a mix."""
    n = draw(st.integers(2, 700))
    cols = draw(st.integers(1, 5))
    rnd = draw(st.randoms(use_true_random=False))
    shape = draw(st.sampled_from(["wide", "chain", "mixed"]))
    tab = np.zeros((n, cols), dtype=np.int32)
    for s in range(1, n):
        for c in range(cols):
            if shape == "chain":
                t = s + 1 if c == 0 and s + 1 < n else rnd.choice([0, rnd.randrange(1, n)])
            elif shape == "wide":
                t = rnd.randrange(n)
            else:
                t = rnd.choice([0, 0, min(s + 1 + rnd.randrange(3), n - 1), rnd.randrange(1, n)])
            tab[s, c] = t
    if draw(st.booleans()):                 # make everything reachable from 1
        for s in range(2, n):
            p = rnd.randrange(1, s)
            tab[p, rnd.randrange(cols)] = s
    fits = [np.int32, np.int64] + ([np.uint16] if n <= 1 << 16 else []) + ([np.uint8] if n <= 256 else [])
    return tab.astype(draw(st.sampled_from(fits))), draw(st.integers(1, n - 1))


def every_numbering():
    """The default choice, every way of ``bytedfa.NUMBERINGS``, and the level-by-level way with
    array rounds from levels of 1, 3 and 40 states."""
    return [None, *bytedfa.NUMBERINGS.values()] + \
        [partial(bytedfa.NUMBERINGS["levels"], wide=w) for w in (1, 3, 40)]


@fewer(2)
@given(reachable_tables())
def test_numbering_equals_plain_breadth_first(case):
    tab, start = case
    acc = np.arange(tab.shape[0]) % 3 == 1
    acc[0] = False
    want = reference_numbering(tab, start)
    for order in every_numbering():
        got = bytedfa._number_states(tab, acc, start, order)
        if want is None:
            assert got is None
            continue
        table, accepting = got
        assert table.dtype == np.int32 and np.array_equal(table, want[0])
        assert np.array_equal(accepting, acc[want[1]])


@pytest.mark.parametrize("seed", range(4))
def test_numbering_over_distinct_targets_equals_plain_breadth_first(seed):
    # tables past _DISTINCT_TARGETS_CELLS are numbered over each row's distinct targets: rows
    # of a few targets repeated over many columns, in runs and not, as byte tables have them
    rnd = np.random.default_rng(seed)
    n, cols = 700, 12
    tab = np.zeros((n, cols), dtype=np.int32)
    for s in range(1, n):
        targets = np.concatenate([[0], rnd.integers(1, n, size=3)])
        tab[s] = np.sort(rnd.choice(targets, size=cols)) if s % 2 else rnd.choice(targets, cols)
        tab[s, rnd.integers(cols)] = s + 1 if s + 1 < n else 0     # every state reachable
    assert tab.size >= bytedfa._DISTINCT_TARGETS_CELLS
    want = reference_numbering(tab, 1)
    acc = np.arange(n) % 5 == 2
    for order in every_numbering():
        table, accepting = bytedfa._number_states(tab, acc, 1, order)
        assert np.array_equal(table, want[0]) and np.array_equal(accepting, acc[want[1]])


def test_wide_levels_of_a_large_table_use_array_rounds():
    # many random words: a large table whose breadth-first levels are wide
    rnd = random.Random(5)
    alpha = string.ascii_letters + string.digits
    words = sorted({"".join(rnd.choice(alpha) for _ in range(6)) + "\u00e9" for _ in range(1500)})
    d = DFA.from_regex("|".join(words)).minimize()
    b = check(d)
    assert b.table.size > bytedfa._PY_QUEUE_CELLS
    for w in words[:50]:
        assert b.accepts(w.encode()) and not b.accepts(w[:-1].encode())


@pytest.mark.parametrize("pattern", [r"[^\"]{0,300}\"", r"(?:[a-c][\u0080-\U0010ffff]?){1,4}\.", r"\w{2,5}"])
def test_array_rounds_on_lowered_tables(pattern):
    # byte tables as the lowering numbers them (deep chains, wide UTF-8 levels), their states
    # shuffled: every way of numbering gives the canonical table back
    b = check(DFA.from_regex(pattern).minimize())
    n = b.num_states
    perm = np.concatenate([[0], 1 + np.random.default_rng(n).permutation(n - 1)])
    shuffled = np.zeros_like(b.table)
    shuffled[perm] = perm[b.table]
    accepting = np.zeros(n, dtype=bool)
    accepting[perm] = b.accepting
    for order in every_numbering() + [partial(bytedfa.NUMBERINGS["levels"], wide=2)]:
        table, acc = bytedfa._number_states(shuffled, accepting, int(perm[b.start]), order)
        assert np.array_equal(table, b.table) and np.array_equal(acc, b.accepting)


# -- small pieces ----------------------------------------------------------------------------
@pytest.mark.parametrize("n, dtype", [(2, np.uint8), (256, np.uint8), (257, np.uint16),
                                      (65536, np.uint16), (65537, np.uint32)])
def test_delta_array_widths(n, dtype):
    rng = np.random.default_rng(n)
    want = rng.integers(0, n, size=(n, 3))
    want[:, 0] = n - 1
    got = bytedfa._delta_array(tuple(map(tuple, want.tolist())), n, 3)
    assert got.dtype == dtype and np.array_equal(got, want)


@fewer(2)
@given(st.integers(1, 30), st.integers(1, 40), st.sampled_from([np.uint8, np.uint16, np.int32]),
       st.randoms(use_true_random=False))
def test_same_columns(rows, cols, dtype, rnd):
    # columns drawn from a few, some of them permutations of one another (equal sums, unequal
    # columns), compared as bytes or by sums first
    base = [rnd.randrange(3) for _ in range(rows)]
    pool = [base, [0] * rows] + [rnd.sample(base, rows) for _ in range(rnd.randint(0, 30))]
    pool += [[rnd.randrange(3) for _ in range(rows)] for _ in range(3)]
    table = np.array([rnd.choice(pool) for _ in range(cols)], dtype=dtype).T.copy()
    which = sorted(rnd.sample(range(cols), rnd.randint(1, cols)))
    want = []
    for i, c in enumerate(which):
        if not table[:, c].any():
            want.append(-1)
        else:
            want.append(next(j for j in range(i + 1) if np.array_equal(table[:, which[j]], table[:, c])))
    assert bytedfa._same_columns(table, which) == want
    for compare in bytedfa.SAME_COLUMNS.values():       # as bytes, or by sums first
        assert bytedfa._same_columns(table, which, compare) == want


@fewer(2)
@given(class_partitions(max_classes=8))
def test_split_classes(classes):
    d = DFA(classes, [[0] * len(classes)], set(), 0)
    runs, high = bytedfa._split_classes(d)
    for b in range(128):
        owner = [c for lo, hi, c in runs if lo <= b <= hi]
        assert owner == [next(c for c, cs in enumerate(classes) if chr(b) in cs)]
    want = sorted((tuple((max(lo, 0x80), hi) for lo, hi in cs.ranges if hi >= 0x80), c)
                  for c, cs in enumerate(classes) if cs.ranges[-1][1] >= 0x80)
    assert high == want


@fewer(2)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=30),
       st.sampled_from([[0], [1], [0, 1], [1, 0]]))
def test_distinct_rows(delta, cols):
    rows, where = bytedfa._distinct_rows(delta, cols)
    picked = [[r[c] for c in cols] for r in delta]
    assert len(rows) == len({tuple(p) for p in picked})
    assert [rows[i] for i in where.tolist()] == picked


def test_classes_that_leave_gaps():
    # a table over classes that do not cover the alphabet (characters in no class die)
    classes = [CharSet.of("a"), CharSet.range("c", "d"), CharSet([(0xE9, 0xE9), (0x10000, 0x10000)])]
    delta = [[0, 0, 0], [2, 0, 0], [0, 3, 1], [0, 0, 4], [1, 0, 0]]
    d = DFA(classes, delta, {4}, 1, _minimal=True)
    got = ByteDFA.from_codepoint_dfa(d)
    assert same(got, ByteDFA._lower_general(d))
    assert got.accepts("acé".encode()) and got.accepts("a\U00010000adé".encode())
    assert not got.accepts(b"ab") and not got.accepts("ac\u00e8".encode())
