"""Naive reference implementations and hypothesis strategies for the automata tests.

Everything here is deliberately simple and shares no code with the automata it checks: a regex
tree is matched by computing sets of end positions (no NFA, no determinisation), a raw table is
walked by scanning its class ranges, Brzozowski minimisation is written out over plain dicts, and
UTF-8 validity comes from Python's own decoder or from the Unicode standard's table 3-7.
"""

from __future__ import annotations

import re
from collections import deque
from functools import lru_cache

from hypothesis import settings
from hypothesis import strategies as st

from tokenfsm.automata import DFA, CharSet
from tokenfsm.automata.regex_ast import Alt, Assert, Chars, Repeat, Seq
from ast_reference import fullmatch as ast_matches  # noqa: E402  (the naive regex-tree matcher)

def fewer(divisor: int):
    """Settings for an expensive property: the profile's example count divided by ``divisor``."""
    return settings(max_examples=max(10, settings.default.max_examples // divisor))


# --------------------------------------------------------------------------------- alphabet
# Boundary code points that matter: ASCII, the ends of each UTF-8 length, both sides of the
# surrogate gap, the last scalar value, a few common non-ASCII letters.
POINTS = [0x00, 0x0A, 0x30, 0x5F, 0x61, 0x62, 0x63, 0x7F, 0x80, 0xE9, 0xFF, 0x7FF, 0x800,
          0x3002, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF]
POOL = [chr(x) for x in POINTS]

WORD = CharSet([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A), (0xE9, 0xE9)])

ATOMS = [
    CharSet.of("a"), CharSet.of("b"), CharSet.of("\n"), CharSet.of("é"), CharSet.of("😀"),
    CharSet.range("a", "c"),
    CharSet.range(0x7F, 0x800),          # crosses the 1/2- and 2/3-byte boundaries
    CharSet.range(0xD000, 0xE100),       # crosses the surrogate gap
    CharSet.range(0xFFF0, 0x10010),      # crosses the 3/4-byte boundary
    CharSet.range(0x10000, 0x10FFFF),    # astral
    ~CharSet.of("a"), ~CharSet.range(0x61, 0x7F), CharSet.any(),
]


def points_of(sets) -> list[str]:
    """Characters on both sides of every range boundary of ``sets`` (plus U+0000)."""
    out = {0}
    for cs in sets:
        for lo, hi in cs.ranges:
            for x in (lo - 1, lo, hi, hi + 1):
                if 0 <= x <= 0x10FFFF and not 0xD800 <= x <= 0xDFFF:
                    out.add(x)
    return [chr(x) for x in sorted(out)]


ATOM_POINTS = sorted(set(POOL) | set(points_of(ATOMS)))

scalar_chars = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=("Cs",))
pool_chars = st.sampled_from(ATOM_POINTS)
test_chars = st.one_of(pool_chars, pool_chars, pool_chars, scalar_chars)
test_strings = st.lists(test_chars, max_size=7).map("".join)


# --------------------------------------------------------------------------------- regex trees
def charsets():
    return st.one_of(
        st.sampled_from(ATOMS),
        st.tuples(st.sampled_from(ATOMS), st.sampled_from(ATOMS)).map(lambda p: p[0] | p[1]),
        st.tuples(st.sampled_from(ATOMS), st.sampled_from(ATOMS)).map(lambda p: p[0] - p[1]),
    )


def asts(assertions: bool = False, max_leaves: int = 7):
    leaves = [charsets().map(Chars), st.just(Seq(()))]
    if assertions:
        leaves.append(st.sampled_from([
            Assert("start"), Assert("start_line"), Assert("end"), Assert("end_string"),
            Assert("end_line"), Assert("word_boundary", WORD), Assert("not_word_boundary", WORD),
        ]))
    base = st.one_of(*leaves)

    def extend(children):
        return st.one_of(
            st.lists(children, min_size=2, max_size=3).map(lambda xs: Seq(tuple(xs))),
            st.lists(children, min_size=1, max_size=3).map(lambda xs: Alt(tuple(xs))),
            st.tuples(children, st.integers(0, 2), st.sampled_from([None, 0, 1, 2])).map(
                lambda t: Repeat(t[0], t[1], None if t[2] is None else t[1] + t[2])),
        )

    return st.recursive(base, extend, max_leaves=max_leaves)


_B_EMPTY = re.fullmatch(r"\B", "") is not None


def in_set(ch: str, cs: CharSet) -> bool:
    x = ord(ch)
    return any(lo <= x <= hi for lo, hi in cs.ranges)


def ast_min_length(node):
    """Length of a shortest string of an assertion-free tree (None for the empty language)."""
    if isinstance(node, Chars):
        return 1 if node.cs else None
    if isinstance(node, Seq):
        total = 0
        for item in node.items:
            m = ast_min_length(item)
            if m is None:
                return None
            total += m
        return total
    if isinstance(node, Alt):
        ms = [m for m in map(ast_min_length, node.items) if m is not None]
        return min(ms) if ms else None
    if isinstance(node, Repeat):
        if node.min == 0:
            return 0
        m = ast_min_length(node.item)
        return None if m is None else m * node.min
    raise TypeError(node)


# --------------------------------------------------------------------------------- raw tables
@st.composite
def raw_tables(draw, max_states: int = 6, max_classes: int = 4):
    """``(classes, delta, accepting, start)`` for :meth:`DFA.from_parts`: random and usually not
    minimal, with unreachable and dead-end states."""
    cuts = sorted(set(draw(st.lists(st.sampled_from(POINTS[1:]), max_size=6))))
    bounds = [0] + cuts + [0x110000]
    pieces = [CharSet([(bounds[k], bounds[k + 1] - 1)]) for k in range(len(bounds) - 1)]
    pieces = [p for p in pieces if p]
    k = draw(st.integers(1, min(max_classes, len(pieces))))
    owner = list(range(k)) + [draw(st.integers(0, k - 1)) for _ in range(len(pieces) - k)]
    owner = draw(st.permutations(owner))
    classes = [CharSet([r for p, o in zip(pieces, owner) if o == c for r in p.ranges]) for c in range(k)]
    n = draw(st.integers(1, max_states)) + 1
    delta = [[0] * k] + [[draw(st.integers(0, n - 1)) for _ in range(k)] for _ in range(n - 1)]
    accepting = draw(st.sets(st.integers(1, n - 1)))
    start = draw(st.integers(0, n - 1))
    return classes, delta, accepting, start


def raw_dfas(**kw):
    return raw_tables(**kw).map(lambda t: DFA.from_parts(*t))


@st.composite
def automata(draw):
    """(DFA, membership oracle independent of the DFA): from a random tree or a random table."""
    if draw(st.booleans()):
        node = draw(asts(assertions=draw(st.booleans())))
        return DFA.from_ast(node), (lambda s, node=node: ast_matches(node, s))
    t = draw(raw_tables())
    return DFA.from_parts(*t), (lambda s, t=t: table_accepts(*t, s))


def table_accepts(classes, delta, accepting, start, s: str) -> bool:
    """Walk a raw table by scanning class ranges."""
    q = start
    for ch in s:
        x = ord(ch)
        if 0xD800 <= x <= 0xDFFF:
            return False
        for c, cs in enumerate(classes):
            if any(lo <= x <= hi for lo, hi in cs.ranges):
                q = delta[q][c]
                break
        else:
            raise AssertionError(f"{x:#x} in no class")
    return q in accepting


def naive(d: DFA):
    """A membership predicate for ``d`` that walks its raw fields, not ``d.accepts``."""
    classes, delta, accepting, start = d.classes, d.delta, d.accepting, d.start
    return lambda s: table_accepts(classes, delta, accepting, start, s)


# --------------------------------------------------------------------------------- whole automata
def live_states(delta, accepting, start) -> set[int]:
    """States reachable from ``start`` that can reach acceptance (BFS both ways)."""
    seen = {start}
    queue = deque([start])
    while queue:
        q = queue.popleft()
        for t in delta[q]:
            if t not in seen:
                seen.add(t)
                queue.append(t)
    co = set(a for a in accepting if a in seen)
    changed = True
    while changed:
        changed = False
        for q in seen:
            if q not in co and any(t in co for t in delta[q]):
                co.add(q)
                changed = True
    return co


def brzozowski(classes, delta, accepting, start):
    """Minimal DFA by reverse, determinise, reverse, determinise, over the given classes.

    Returns ``(delta, accepting, start)`` with dead state 0 and live states numbered from 1
    (start state 1 unless the language is empty)."""
    k = len(classes)

    def rev_det(delta, accepting, starts):
        # determinise the reverse of (delta, accepting=starts-set) starting from `accepting`
        preds = [dict() for _ in range(len(delta))]
        for q, row in enumerate(delta):
            for c, t in enumerate(row):
                preds[t].setdefault(c, set()).add(q)
        init = frozenset(accepting)
        index = {init: 0}
        order = [init]
        rows = []
        i = 0
        while i < len(order):
            S = order[i]
            i += 1
            row = []
            for c in range(k):
                T = frozenset(p for q in S for p in preds[q].get(c, ()))
                if T not in index:
                    index[T] = len(order)
                    order.append(T)
                row.append(index[T])
            rows.append(row)
        acc = {index[S] for S in order if S & starts}
        return rows, acc, 0

    d1, a1, s1 = rev_det(delta, accepting, {start})
    d2, a2, s2 = rev_det(d1, a1, {s1})
    # map onto the "dead 0" convention: the state for the empty subset is dead
    live = live_states(d2, a2, s2)
    if s2 not in live:
        return [[0] * k], set(), 0
    num = {}
    for q in [s2] + sorted(live - {s2}):
        num[q] = len(num) + 1
    out = [[0] * k] + [None] * len(num)
    for q, i in num.items():
        out[i] = [num.get(t, 0) for t in d2[q]]
    return out, {num[q] for q in a2 if q in num}, 1


def isomorphic(a: DFA, b: DFA) -> bool:
    """Whether the live parts of ``a`` and ``b`` are the same graph up to state renaming.

    Classes may differ in granularity; characters at every class boundary of either are tried."""
    la = live_states(a.delta, a.accepting, a.start)
    lb = live_states(b.delta, b.accepting, b.start)
    if len(la) != len(lb):
        return False
    if not la:
        return True
    probes = points_of(list(a.classes) + list(b.classes))
    ca = [next(c for c, cs in enumerate(a.classes) if in_set(ch, cs)) for ch in probes]
    cb = [next(c for c, cs in enumerate(b.classes) if in_set(ch, cs)) for ch in probes]
    m = {a.start: b.start}
    queue = deque([a.start])
    while queue:
        p = queue.popleft()
        q = m[p]
        if (p in a.accepting) != (q in b.accepting):
            return False
        for i in range(len(probes)):
            tp, tq = a.delta[p][ca[i]], b.delta[q][cb[i]]
            tp, tq = (tp if tp in la else None), (tq if tq in lb else None)
            if (tp is None) != (tq is None):
                return False
            if tp is None:
                continue
            if tp in m:
                if m[tp] != tq:
                    return False
            else:
                m[tp] = tq
                queue.append(tp)
    return len(set(m.values())) == len(m) == len(la)


def fields(d: DFA):
    return d.classes, d.delta, d.accepting, d.start


# --------------------------------------------------------------------------------- UTF-8
def valid_utf8(data: bytes):
    """The decoded string, or None if ``data`` is not strict UTF-8."""
    try:
        return data.decode("utf-8", "strict")
    except UnicodeDecodeError:
        return None


@lru_cache(maxsize=None)
def utf8_validator():
    """The UTF-8 well-formedness automaton of the Unicode Standard, table 3-7.

    Returns ``(step, accept)``: ``step(state, byte) -> state`` (None when invalid) and the
    accepting state 0 (between characters)."""
    # states: 0 = between characters; ("k", lo, hi) = k continuation bytes left, the next one
    # restricted to lo..hi
    def step(state, b):
        if state == 0:
            if b <= 0x7F:
                return 0
            if 0xC2 <= b <= 0xDF:
                return (1, 0x80, 0xBF)
            if b == 0xE0:
                return (2, 0xA0, 0xBF)
            if 0xE1 <= b <= 0xEC or 0xEE <= b <= 0xEF:
                return (2, 0x80, 0xBF)
            if b == 0xED:
                return (2, 0x80, 0x9F)
            if b == 0xF0:
                return (3, 0x90, 0xBF)
            if 0xF1 <= b <= 0xF3:
                return (3, 0x80, 0xBF)
            if b == 0xF4:
                return (3, 0x80, 0x8F)
            return None
        k, lo, hi = state
        if not lo <= b <= hi:
            return None
        return 0 if k == 1 else (k - 1, 0x80, 0xBF)

    return step, 0
