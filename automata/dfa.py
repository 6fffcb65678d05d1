"""Deterministic finite automata over Unicode code points, with a set algebra.

A :class:`DFA` reads code points. Its alphabet is partitioned into classes (:class:`CharSet`\\ s
whose members the automaton never tells apart), and it is stored as a complete table
``delta[state][class]`` with state 0 the dead state. Every operation returns a new, minimal,
pruned, canonically numbered automaton, so sizes are honest and two automata of the same language
are identical objects field by field (``==`` is language equality).

Construction: :meth:`DFA.from_regex` (Python ``re`` dialect), :meth:`DFA.literal`,
:meth:`DFA.from_charset`, :meth:`DFA.excluding` (strings with none of some substrings),
:meth:`DFA.from_interegular`. Composition: concatenation (``+``), union (``|``), intersection
(``&``), difference (``-``), symmetric difference (``^``), complement (``~``), star, optional,
bounded repetition, and :meth:`DFA.substitute` (replace each character by a language). Products
are built over reachable pairs only and every construction runs under a :class:`Budget`.

Example
-------
>>> d = DFA.from_regex(r"[a-z]+@[a-z]+\\.com")
>>> d.accepts("ada@x.com"), d.num_states
(True, 8)
>>> (d & DFA.excluding(["xx"])).accepts("ada@xx.com")
False

Where the ideas come from: the alphabet partition and set operators follow greenery; the layering
(regex tree, NFA, DFA, byte DFA) follows rust-lang/regex's regex-automata.
"""

from __future__ import annotations

import bisect
import random as _random
from collections import deque
from itertools import repeat
from typing import Callable, Iterable, Sequence

from .cache import byte_lru_cache
from .gcpause import gc_paused, gc_paused_call
from .charset import CharSet, refine
from .errors import (DEFAULT_BUDGET, AutomatonError, Budget, BudgetExceeded, OpaqueSymbolError,
                     as_budget, check_deadline)
from .minimize import (ARRAY_MIN_CELLS, minimize_groups, minimize_table, prune_groups,
                       prune_table)
from .nfa import NFA, determinize_groups, from_ast
from .regex_ast import Node

__all__ = ["DFA", "OpaqueSymbolError"]


def _segments(classes: Sequence[CharSet]) -> list[tuple[int, int, int]]:
    """Sorted (lo, hi, class) ranges covering the alphabet."""
    segs = [(lo, hi, c) for c, cs in enumerate(classes) for lo, hi in cs.ranges]
    segs.sort()
    return segs


def _joint_classes(a: "DFA", b: "DFA") -> tuple[list[CharSet], list[int], list[int]]:
    """The common refinement of two partitions: classes plus each one's class in ``a`` and ``b``."""
    sa, sb = a._segs, b._segs
    i = j = 0
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    while i < len(sa) and j < len(sb):
        lo = max(sa[i][0], sb[j][0])
        hi = min(sa[i][1], sb[j][1])
        if lo <= hi:
            groups.setdefault((sa[i][2], sb[j][2]), []).append((lo, hi))
        if sa[i][1] < sb[j][1]:
            i += 1
        else:
            j += 1
    items = sorted(groups.items(), key=lambda kv: kv[1][0][0])
    classes = [CharSet(rs) for _, rs in items]
    return classes, [k[0] for k, _ in items], [k[1] for k, _ in items]


def _joint_classes_all(parts: Sequence["DFA"]) -> tuple[list[CharSet], list[list[int]]]:
    """The common refinement of several partitions: classes plus, per automaton, the class of
    each in it (:func:`_joint_classes` for two)."""
    segs = [p._segs for p in parts]
    at = [0] * len(segs)
    top = segs[0][-1][1]
    groups: dict[tuple, list[tuple[int, int]]] = {}
    lo = 0
    while lo <= top:
        hi = min(sg[i][1] for sg, i in zip(segs, at))
        groups.setdefault(tuple(sg[i][2] for sg, i in zip(segs, at)), []).append((lo, hi))
        lo = hi + 1
        for j, sg in enumerate(segs):
            if sg[at[j]][1] < lo:
                at[j] += 1
    items = sorted(groups.items(), key=lambda kv: kv[1][0][0])
    return [CharSet(rs) for _, rs in items], [[k[j] for k, _ in items] for j in range(len(segs))]


def _closed_end(m: "DFA") -> bool:
    """Whether minimal ``m`` has one accepting state and nothing leaves it (a JSON string or
    container, a key, a separator: no string of it goes on into a longer one)."""
    if len(m.accepting) != 1:
        return False
    (f,) = m.accepting
    return not any(m.delta[f])


def _one_character(d: "DFA") -> CharSet | None:
    """The characters of a minimal automaton whose strings are exactly those characters, each
    alone; None for any other language."""
    if len(d.delta) != 3 or d.start == 0 or d.start in d.accepting or len(d.accepting) != 1:
        return None
    (end,) = d.accepting
    if any(t != 0 for t in d.delta[end]) or any(t not in (0, end) for t in d.delta[d.start]):
        return None
    return CharSet([r for c, t in enumerate(d.delta[d.start]) if t == end
                    for r in d.classes[c].ranges])


class DFA:
    """An immutable, complete DFA over code-point classes; state 0 is dead.

    Use the constructors (:meth:`from_regex`, :meth:`literal`, ...) rather than ``DFA(...)``;
    :meth:`from_parts` builds one from raw tables.

    Attributes
    ----------
    classes : tuple of CharSet
        The alphabet partition; ``delta[s][c]`` is the successor on any character of ``classes[c]``.
    delta : tuple of tuple of int
    accepting : frozenset of int
    start : int
    """

    __slots__ = ("classes", "delta", "accepting", "start", "_minimal", "_segs", "_starts",
                 "_seg_class", "_hash", "_bytes", "_dist", "_edges", "_groups", "_complement",
                 "_text")

    def __init__(self, classes, delta, accepting, start, _minimal: bool = False):
        self.classes = tuple(classes)
        self.delta = tuple(map(tuple, delta))
        self.accepting = frozenset(accepting)
        self.start = int(start)
        self._minimal = _minimal
        # (tuples of ints: the collector stops tracking them, which matters for the automata
        # kept in caches, walked by every full collection otherwise)
        self._segs = tuple(_segments(self.classes))
        self._starts = tuple([s[0] for s in self._segs])
        self._seg_class = tuple([s[2] for s in self._segs])
        self._hash = None
        self._bytes = None
        self._dist = None
        self._edges = None
        self._groups = None
        self._complement = None     # the minimal automaton this one is the complement of
        self._text = None           # the one string it accepts, when built as DFA.literal

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_parts(cls, classes: Sequence[CharSet], delta: Sequence[Sequence[int]],
                   accepting: Iterable[int], start: int) -> "DFA":
        """Build from raw tables, validating them. State 0 must be a dead state.

        Parameters
        ----------
        classes : sequence of CharSet
            A partition of every scalar value (disjoint, non-empty, covering all).
        delta : sequence of sequences of int
            Complete transition table, ``len(classes)`` entries per state.
        accepting : iterable of int
        start : int
        """
        classes = list(classes)
        n = len(delta)
        total = 0
        for c in classes:
            if not isinstance(c, CharSet) or not c:
                raise AutomatonError("classes must be non-empty CharSets")
            total += len(c)
        if total != len(CharSet.any()) or len(refine(classes)) != len(classes):
            raise AutomatonError("classes must partition all Unicode scalar values")
        if n == 0:
            raise AutomatonError("a DFA needs at least the dead state 0")
        for s, row in enumerate(delta):
            if len(row) != len(classes):
                raise AutomatonError(f"state {s} has {len(row)} transitions for {len(classes)} classes")
            for t in row:
                if not 0 <= t < n:
                    raise AutomatonError(f"state {s} moves to nonexistent state {t}")
        if any(t != 0 for t in delta[0]):
            raise AutomatonError("state 0 must be dead (all its transitions to 0)")
        acc = frozenset(accepting)
        if 0 in acc:
            raise AutomatonError("state 0 must not be accepting")
        if not all(0 <= a < n for a in acc) or not 0 <= start < n:
            raise AutomatonError("accepting or start state out of range")
        return cls(classes, delta, acc, start)

    @classmethod
    def _minimal_of(cls, classes, delta, accepting, start, groups=None, check=None) -> "DFA":
        """Minimise a raw table, merge equivalent classes, return the canonical DFA.

        ``groups``: per state, its ``(target, bit set of classes)`` pairs (see
        :func:`.minimize.minimize_table`), when the producer knows them (else the rows are
        scanned). ``check``: the construction's clock, for large tables."""
        if (len(delta) * len(classes) < ARRAY_MIN_CELLS and not hasattr(delta, "tolist")
                and all(classes[i].ranges[0][0] < classes[i + 1].ranges[0][0]
                        for i in range(len(classes) - 1))):
            # moderate sizes: minimised pair by pair; the classes are merged afterwards, in the
            # rare case that some became alike (the result is the same either way)
            delta, accepting, start, groups = minimize_groups(delta, accepting, start, groups)
            if _columns_distinct(groups, len(classes)):
                d = cls(classes, delta, accepting, start, _minimal=True)
                d._groups = groups
                return d
            # some classes are alike (products over joint classes): merging them keeps the
            # automaton minimal, but the numbering must follow the new class order
            classes, delta, _ = _merge_classes(list(classes), delta)
            delta, accepting, start, groups = prune_groups(delta, accepting, start)
            d = cls(classes, delta, accepting, start, _minimal=True)
            d._groups = groups
            return d
        # Identical columns before minimisation stay identical after it: merging them first
        # gives Hopcroft fewer symbols to refine over.
        classes, delta, _ = _merge_classes(list(classes), delta, check)
        if check is not None:
            check()
        delta, accepting, start = minimize_table(delta, accepting, start, check=check)
        if check is not None:
            check()
        classes, delta, changed = _merge_classes(classes, delta, check)
        # Merging keeps the automaton minimal but changes the class order that the breadth-first
        # numbering follows: renumber (no merging needed) to stay canonical.
        if changed and len(delta) > 1:
            delta, accepting, start = prune_table(delta, accepting, start)
        return cls(classes, delta, accepting, start, _minimal=True)

    @classmethod
    def _from_nfa(cls, nfa: NFA, budget: Budget | None, operation: str) -> "DFA":
        with gc_paused():
            tables = determinize_groups(nfa, budget, operation)
            return cls._minimal_of(*tables, check=_clock(budget, operation))

    # ------------------------------------------------------------------ basic languages
    @classmethod
    def empty(cls) -> "DFA":
        """The automaton of no strings."""
        return cls([CharSet.any()], [[0]], (), 0, _minimal=True)

    @classmethod
    def epsilon(cls) -> "DFA":
        """The automaton of the empty string only."""
        return cls([CharSet.any()], [[0], [0]], {1}, 1, _minimal=True)

    @classmethod
    def universal(cls) -> "DFA":
        """Every string (``[\\s\\S]*``)."""
        return cls([CharSet.any()], [[0], [1]], {1}, 1, _minimal=True)

    @classmethod
    def from_charset(cls, cs: CharSet) -> "DFA":
        """Exactly one character from ``cs``."""
        if not cs:
            return cls.empty()
        if cs == CharSet.any():
            return cls([cs], [[0], [2], [0]], {2}, 1, _minimal=True)
        return cls([cs, ~cs] if cs.min() < (~cs).min() else [~cs, cs],
                   *(([[0, 0], [2, 0], [0, 0]], {2}, 1) if cs.min() < (~cs).min()
                     else ([[0, 0], [0, 2], [0, 0]], {2}, 1)), _minimal=True)

    @classmethod
    def literal(cls, s: str, budget: Budget | None = None) -> "DFA":
        """Exactly the string ``s``.

        Its ``len(s) + 2`` states, each with a class per distinct character, are charged to
        ``budget`` first (:class:`BudgetExceeded`, operation ``"literal"``)."""
        budget = as_budget(budget)
        if not isinstance(s, str):
            raise TypeError(f"DFA.literal takes a str, got {type(s).__name__}")
        if len(s) > 1000:                # (shorter ones fit any budget's cells)
            meter = (budget or DEFAULT_BUDGET).meter("literal")
            meter.width = 1 + len(set(s))
            if len(s) + 2 > meter.state_limit():
                meter.add(len(s) + 1)
        if cls is DFA:
            return _literal(s)      # the same names come back again and again (property keys)
        return cls._literal(s)

    @classmethod
    def _literal(cls, s: str) -> "DFA":
        if not s:
            return cls.epsilon()
        # the classes: one per distinct character of ``s``, and every other character
        cps = sorted(set(map(ord, s)))
        if cps[-1] >= 0xD800 and any(0xD800 <= x <= 0xDFFF for x in cps):
            raise AutomatonError(f"{s[:80]!r} holds a surrogate, which is not a Unicode scalar value")
        rest = ~CharSet._trusted(tuple((x, x) for x in cps))
        first_rest = rest.ranges[0][0] if rest.ranges else None
        classes = []
        col = {}
        for x in cps:
            if first_rest is not None and first_rest < x:
                classes.append(rest)
                first_rest = None
            col[chr(x)] = len(classes)
            classes.append(CharSet._trusted(((x, x),)))
        if first_rest is not None:
            classes.append(rest)
        n = len(s)
        zero = (0,) * len(classes)
        delta = [zero]
        edges: list = [()]
        for k, ch in enumerate(s):
            row = [0] * len(classes)
            c = col[ch]
            row[c] = k + 2
            delta.append(tuple(row))
            edges.append(((classes[c], k + 2),))
        delta.append(zero)
        edges.append(())
        # Already canonical: a chain is minimal (its states have different distances to the end),
        # numbered breadth-first from the start, and no two classes have the same column (each
        # character of ``s`` labels its own positions, the rest labels none).
        d = cls(classes, delta, {n + 1}, 1, _minimal=True)
        d._edges = edges
        d._text = s             # (its UTF-8 lowering is a chain too: see bytedfa.lower_literal)
        return d

    @classmethod
    def from_ast(cls, node: Node, budget: Budget | None = None) -> "DFA":
        """The automaton of a regex tree (:mod:`.regex_ast`)."""
        budget = as_budget(budget)
        with gc_paused():       # (millions of containers, no cycles: see .gcpause)
            return cls._from_nfa(from_ast(node, budget), budget, "determinize")

    @classmethod
    def from_regex(cls, pattern: str, flags: int = 0, budget: Budget | None = None) -> "DFA":
        """Compile a Python ``re`` pattern; accepts exactly the strings ``re.fullmatch`` matches.

        Parameters
        ----------
        pattern : str
        flags : int
            ``re`` flags (IGNORECASE, DOTALL, MULTILINE, ASCII, VERBOSE).
        budget : Budget, optional

        Raises
        ------
        RegexError
            Malformed patterns and constructs that are not regular (back-references,
            look-around, conditionals, atomic groups), with the position.
        BudgetExceeded
            Past ``budget``; a pattern longer than ``budget.max_states`` characters before it is
            parsed (parsing takes time in proportion to it).
        """
        budget = as_budget(budget)
        if isinstance(pattern, str) and len(pattern) > budget.max_states:
            raise BudgetExceeded(budget.max_states, len(pattern), "regex", kind="characters")
        from .regex_parse import parse_regex
        return cls.from_ast(parse_regex(pattern, flags), budget)

    @classmethod
    def excluding(cls, substrings: Iterable[str], budget: Budget | None = None) -> "DFA":
        """Strings that contain none of ``substrings`` (an Aho-Corasick automaton)."""
        budget = as_budget(budget)
        from .exclusion import excluding_table
        if isinstance(substrings, str):
            raise TypeError("excluding takes a collection of strings, not one string")
        classes, delta, accepting, start = excluding_table(list(substrings), budget)
        return cls._minimal_of(classes, delta, accepting, start)

    # ------------------------------------------------------------------ queries
    @property
    def num_states(self) -> int:
        """Live states (the dead state is not counted)."""
        if self._minimal:       # (every state but the dead one: counted, not listed)
            return len(self.delta) - 1 if self.start else 0
        return len(self._live_states())

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def num_transitions(self) -> int:
        """Transitions between live states, one per (state, class) pair."""
        live = self._live_states()
        return sum(1 for s in live for t in self.delta[s] if t in live)

    def _live_states(self) -> set[int]:
        if self._minimal:
            return set(range(1, len(self.delta))) if self.start else set()
        from .minimize import coreachable, reachable
        order = reachable(self.delta, self.start)
        return coreachable(self.delta, self.accepting, order) - {0}

    def class_of(self, ch: str) -> int:
        """The index of the class containing the character ``ch``."""
        x = ord(ch)
        i = bisect.bisect_right(self._starts, x) - 1
        return self._seg_class[i]

    def accepts(self, s: str) -> bool:
        """Whether the whole string ``s`` is in the language."""
        state = self.start
        delta = self.delta
        starts, seg_class = self._starts, self._seg_class
        br = bisect.bisect_right
        for ch in s:
            x = ord(ch)
            if 0xD800 <= x <= 0xDFFF:
                return False
            state = delta[state][seg_class[br(starts, x) - 1]]
            if state == 0:
                return False
        return state in self.accepting

    def is_empty(self) -> bool:
        return self.minimize().start == 0

    def is_universal(self) -> bool:
        return self.complement().is_empty()

    def is_finite(self) -> bool:
        """Whether the language has finitely many strings."""
        m = self.minimize()
        if m.start == 0:
            return True
        # a cycle among live states means infinitely many strings
        color = {}
        stack = [(m.start, iter(set(m.delta[m.start])))]
        color[m.start] = 1
        while stack:
            s, it = stack[-1]
            for t in it:
                if t == 0:
                    continue
                c = color.get(t)
                if c == 1:
                    return False
                if c is None:
                    color[t] = 1
                    stack.append((t, iter(set(m.delta[t]))))
                    break
            else:
                color[s] = 2
                stack.pop()
        return True

    def equivalent(self, other: "DFA") -> bool:
        """Whether both accept the same language (canonical minimal forms are compared)."""
        a, b = self.minimize(), other.minimize()
        return (a.classes, a.delta, a.accepting, a.start) == (b.classes, b.delta, b.accepting, b.start)

    def issubset(self, other: "DFA", budget: Budget | None = None) -> bool:
        return self.difference(other, budget=budget).is_empty()

    def __le__(self, other: "DFA") -> bool:
        return self.issubset(other)

    def __ge__(self, other: "DFA") -> bool:
        return other.issubset(self)

    def __lt__(self, other: "DFA") -> bool:
        return self.issubset(other) and not self.equivalent(other)

    def __gt__(self, other: "DFA") -> bool:
        return other < self

    def __eq__(self, other) -> bool:
        if not isinstance(other, DFA):
            return NotImplemented
        return self.equivalent(other)

    def __hash__(self) -> int:
        if self._hash is None:
            m = self.minimize()
            self._hash = hash((m.classes, m.delta, m.accepting, m.start))
        return self._hash

    def __repr__(self) -> str:
        return f"<DFA: {self.num_states} states, {len(self.classes)} classes>"

    # ------------------------------------------------------------------ normal forms
    def minimize(self) -> "DFA":
        """The minimal, pruned, canonically numbered DFA of the same language, with the coarsest
        alphabet partition."""
        if self._minimal:
            return self
        return DFA._minimal_of(self.classes, self.delta, self.accepting, self.start)

    def prune(self) -> "DFA":
        """Remove states that are unreachable or cannot reach an accepting state."""
        if self._minimal:
            return self
        delta, accepting, start = prune_table(self.delta, self.accepting, self.start)
        return DFA(self.classes, delta, accepting, start)

    # ------------------------------------------------------------------ products
    @gc_paused_call
    def _product(self, other: "DFA", accept: Callable[[bool, bool], bool], operation: str,
                 budget: Budget | None, dead: str, way: str | None = None) -> "DFA":
        """The product automaton over reachable pairs, built the way named ``way`` in
        :data:`PRODUCTS` (default: chosen by :func:`_product_way`). ``dead`` says which pairs
        are dead without being walked (:data:`DEAD_PAIRS`): those with a dead side
        (``"either"``, an intersection), with a dead first side (``"first"``, a difference:
        nothing it leads to accepts), or only the pair of dead states (``"both"``)."""
        budget = as_budget(budget)
        if not isinstance(other, DFA):
            raise TypeError(f"{operation} takes a DFA, not {type(other).__name__}")
        if dead not in DEAD_PAIRS:
            raise ValueError(f"dead must be one of {sorted(DEAD_PAIRS)}, not {dead!r}")
        if way is None and not accept(False, False) and self._same_tables(other):
            # (an automaton with itself, as the lowering meets it: a member's open value less
            # the open value of a condition on undeclared members): every pair is (s, s)
            return self.minimize() if accept(True, True) else DFA.empty()
        classes, ca, cb = _joint_classes(self, other)
        meter = (budget or DEFAULT_BUDGET).meter(operation)
        meter.width = len(classes)
        if way is None:
            way = _product_way(len(self.delta), len(other.delta), operation,
                               DEAD_PAIRS[dead](self.start, other.start))
        return PRODUCTS[way](self, other, classes, ca, cb, accept, operation, meter, dead)

    def _same_tables(self, other: "DFA") -> bool:
        """Whether ``other`` is this automaton's tables as they are (not language equality)."""
        return other is self or (
            self.start == other.start and self.classes == other.classes
            and self.accepting == other.accepting and self.delta == other.delta)

    def _product_pairs(self, other: "DFA", classes, ca, cb, accept, operation: str, meter,
                       dead: str) -> "DFA":
        """:meth:`_product` pair by pair from a queue: the reference way."""
        da, db = self.delta, other.delta
        acc_a, acc_b = self.accepting, other.accepting
        # a pair (x, y) is the int x * nb + y
        nb = len(db)
        index: dict[int, int] = {0: 0}
        delta: list = [[0] * len(classes)]
        accepting = set()
        todo = []
        pairs_ab = list(zip(ca, cb))

        def intern(p):
            i = len(delta)
            index[p] = i
            delta.append(None)
            meter.add()
            if accept(p // nb in acc_a, p % nb in acc_b):
                accepting.add(i)
            todo.append(p)
            return i

        start_pair = self.start * nb + other.start
        if DEAD_PAIRS[dead](self.start, other.start):
            return DFA.empty()
        start = intern(start_pair)
        either = dead == "either"
        timed, rows_done = meter.deadline is not None, 0
        while todo:
            p = todo.pop()
            rows_done += 1
            if timed and not rows_done & 4095:    # (rows of states already made count too)
                meter.check_time()
            ra, rb = da[p // nb], db[p % nb]
            row = []
            if dead != "both":
                for x, y in pairs_ab:
                    a, b = ra[x], rb[y]
                    if a == 0 or (either and b == 0):
                        row.append(0)
                        continue
                    q = a * nb + b
                    j = index.get(q)
                    if j is None:
                        j = intern(q)
                    row.append(j)
            else:
                for x, y in pairs_ab:
                    q = ra[x] * nb + rb[y]
                    j = index.get(q)
                    if j is None:
                        j = intern(q)
                    row.append(j)
            delta[index[p]] = row
        return DFA._minimal_of(classes, delta, accepting, start,
                               check=meter.time_check)

    def _product_arrays(self, other: "DFA", classes, ca, cb, accept, operation: str, meter,
                        dead: str) -> "DFA":
        """:meth:`_product` a breadth-first level at a time with array operations: a pair
        ``(x, y)`` is the index ``x * nb + y`` of a dense table of pair numbers (a pair accepts by
        the array form of ``operation`` in ``_ACCEPT_ARRAYS``; ``accept`` is not read)."""
        import numpy as np
        na, nb = len(self.delta), len(other.delta)
        K = len(classes)
        A = np.asarray(self.delta, dtype=np.int64)[:, ca]
        B = np.asarray(other.delta, dtype=np.int64)[:, cb]
        pid = np.full(na * nb, -1, dtype=np.int64)
        pid[0] = 0
        start_key = self.start * nb + other.start
        if DEAD_PAIRS[dead](self.start, other.start):
            return DFA.empty()
        pid[start_key] = 1
        meter.add()
        count = 2
        frontier = np.array([start_key], dtype=np.int64)
        keys = [frontier]
        rows = [np.zeros((1, K), dtype=np.int64)]
        while frontier.size:
            sa = A[frontier // nb]
            sb = B[frontier % nb]
            succ = sa * nb + sb
            if dead == "either":
                succ[(sa == 0) | (sb == 0)] = 0
            elif dead == "first":
                succ[sa == 0] = 0
            flat = succ.ravel()
            new = np.unique(flat[pid[flat] < 0])
            if new.size:
                pid[new] = np.arange(count, count + new.size)
                count += new.size
                # over the budget: stop at the first state past it, as state-by-state metering does
                meter.add(min(int(new.size), meter.state_limit() - meter.states + 1))
                meter.check_time()
                keys.append(new)
            rows.append(pid[succ])
            frontier = new
        allkeys = np.concatenate(keys)
        acc_a = np.zeros(na, dtype=bool)
        acc_a[list(self.accepting)] = True
        acc_b = np.zeros(nb, dtype=bool)
        acc_b[list(other.accepting)] = True
        acc = _ACCEPT_ARRAYS[operation](acc_a[allkeys // nb], acc_b[allkeys % nb])
        accepting = (np.flatnonzero(acc) + 1).tolist()
        delta = np.vstack(rows).tolist()
        return DFA._minimal_of(classes, delta, accepting, 1,
                               check=meter.time_check)

    def intersect(self, other: "DFA", budget: Budget | None = None) -> "DFA":
        """Strings in both (product over reachable pairs, under ``budget``)."""
        return self._product(other, lambda x, y: x and y, "intersect", budget, "either")

    def union(self, other: "DFA", budget: Budget | None = None) -> "DFA":
        return self._product(other, lambda x, y: x or y, "union", budget, "both")

    def difference(self, other: "DFA", budget: Budget | None = None) -> "DFA":
        """Strings in ``self`` but not in ``other``."""
        return self._product(other, lambda x, y: x and not y, "difference", budget, "first")

    def symmetric_difference(self, other: "DFA", budget: Budget | None = None) -> "DFA":
        return self._product(other, lambda x, y: x != y, "symmetric_difference", budget, "both")

    def complement(self) -> "DFA":
        """Every string not in the language (over all Unicode scalar values). The result keeps
        the minimal automaton it was made from: its own complement is that one, not made again
        (the names left to undeclared keys are complemented twice, once each way)."""
        if self._complement is not None:
            return self._complement
        m = self.minimize()
        # complete automaton: flip acceptance; the old dead state becomes an accepting sink
        n = len(m.delta)
        acc = {s for s in range(n) if s not in m.accepting}
        # state 0 is now accepting: move it to a fresh sink and keep 0 as a (unreachable) dead state
        sink = n
        delta = [[sink if t == 0 else t for t in row] for row in m.delta]
        delta[0] = [0] * len(m.classes)
        delta.append([sink] * len(m.classes))
        acc.discard(0)
        acc.add(sink)
        start = m.start if m.start != 0 else sink
        got = DFA._minimal_of(m.classes, delta, acc, start)
        got._complement = m
        return got

    __and__ = intersect
    __or__ = union
    __sub__ = difference
    __xor__ = symmetric_difference
    __invert__ = complement

    @staticmethod
    def intersect_all(parts: Sequence["DFA"], budget: Budget | None = None) -> "DFA":
        """Intersection of several automata (smallest first, stopping early when empty)."""
        parts = sorted(parts, key=lambda d: d.minimize().num_states)
        if not parts:
            return DFA.universal()
        acc = parts[0]
        for p in parts[1:]:
            acc = acc.intersect(p, budget)
            if acc.is_empty():
                break
        return acc

    @staticmethod
    def union_all(parts: Sequence["DFA"], budget: Budget | None = None) -> "DFA":
        """Union of several automata, built as one NFA and determinised once."""
        budget = as_budget(budget)
        parts = list(parts)
        if not parts:
            return DFA.empty()
        if len(parts) == 1:
            return parts[0].minimize()
        nfa = NFA(budget, "union")
        start = nfa.new_state()
        final = nfa.new_state()
        for p in parts:
            e = _embed(nfa, p, final)
            if e is not None:
                nfa.eps[start].append(e)
        nfa.start = start
        nfa.accepting = {final}
        return DFA._from_nfa(nfa, budget, "union")

    # ------------------------------------------------------------------ regular operations
    @staticmethod
    def concat_all(parts: Sequence["DFA"], budget: Budget | None = None) -> "DFA":
        """Concatenation of several automata: one of the ways of :data:`CONCATS` (by default
        glued end to start where each part but the last has a closed end, else built as one
        NFA and determinised once)."""
        budget = as_budget(budget)
        parts = [p.minimize() for p in parts]
        if not parts:
            return DFA.epsilon()
        if any(p.start == 0 for p in parts):
            return DFA.empty()
        if len(parts) == 1:
            return parts[0]
        return CONCATS[_concat_way(parts)](parts, budget)

    def concat(self, other: "DFA", budget: Budget | None = None) -> "DFA":
        """Strings ``xy`` with ``x`` in ``self`` and ``y`` in ``other``."""
        return DFA.concat_all([self, other], budget)

    __add__ = concat

    def repeat(self, min: int, max: int | None = None, budget: Budget | None = None) -> "DFA":
        """Between ``min`` and ``max`` (None: unbounded) concatenated copies.

        The copies are charged to ``budget`` before any is made: a count whose copies would pass
        it is a :class:`BudgetExceeded` at once."""
        budget = as_budget(budget)
        for bound in (min, max):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
                raise TypeError(f"repetition bounds must be ints, not {bound!r}")
        if min < 0 or (max is not None and max < min):
            raise ValueError(f"bad repetition bounds {min}, {max}")
        m = self.minimize()
        if m.start == 0:
            return DFA.epsilon() if min == 0 else DFA.empty()
        nfa = NFA(budget, "repeat")
        copies = min + 1 if max is None else max
        nfa.reserve(2 + (len(m.delta) - 1) * copies + (1 if max is None else max - min))
        final = nfa.new_state()
        nxt = final
        if max is None:
            # loop: head -> copy -> head; head -> final
            head = nfa.new_state()
            nfa.eps[head].append(final)
            entry = _embed(nfa, m, head)
            nfa.eps[head].append(entry)
            nxt = head
        else:
            # optional copies nested from the end: (x(x(x)?)?)?
            for _ in range(max - min):
                entry = _embed(nfa, m, nxt)
                skip = nfa.new_state()
                nfa.eps[skip].append(entry)
                nfa.eps[skip].append(final)
                nxt = skip
        for _ in range(min):
            nxt = _embed(nfa, m, nxt)
        nfa.start = nxt
        nfa.accepting = {final}
        return DFA._from_nfa(nfa, budget, "repeat")

    def star(self, budget: Budget | None = None) -> "DFA":
        return self.repeat(0, None, budget)

    def plus(self, budget: Budget | None = None) -> "DFA":
        return self.repeat(1, None, budget)

    def optional(self, budget: Budget | None = None) -> "DFA":
        return self.union(DFA.epsilon(), budget)

    def substitute(self, image: Callable[[CharSet], "DFA"], budget: Budget | None = None, *,
                   prefix: "DFA | None" = None, suffix: "DFA | None" = None) -> "DFA":
        """Replace every character by a language: the homomorphic image of the automaton.

        Parameters
        ----------
        image : callable
            ``image(cs)`` returns the DFA of the strings that the characters of class ``cs`` may
            become. It is called once per alphabet class that some live transition reads.
        budget : Budget, optional
        prefix, suffix : DFA, optional
            Languages concatenated before and after the image in the same construction (one
            determinisation instead of a substitution and a concatenation).

        Returns
        -------
        DFA
            Accepts ``w1 w2 ... wn`` where each ``wi`` is in the image of the class of the
            ``i``-th character of some string ``c1 ... cn`` of ``self`` (between ``prefix`` and
            ``suffix`` when given).
        """
        budget = as_budget(budget)
        m = self.minimize()
        if m.start == 0:
            return m
        images: dict[int, DFA] = {}
        nfa = NFA(budget, "substitute")
        n = len(m.delta)
        nfa.reserve(n + 1)
        for _ in range(n):
            nfa.new_state()
        shared: dict[tuple[int, int], int] = {}
        single: dict[int, CharSet | None] = {}
        for s in range(1, n):
            for c, t in enumerate(m.delta[s]):
                if t == 0:
                    continue
                im = images.get(c)
                if im is None:
                    im = images[c] = image(m.classes[c]).minimize()
                    single[c] = _one_character(im)
                if im.start == 0:
                    continue
                if single[c] is not None:
                    # an image of one character each (a class written as itself, the most of
                    # a JSON string's): an edge, no copy of the image and no epsilon to close
                    nfa.edges[s].append((single[c], t))
                    continue
                key = (c, t)
                entry = shared.get(key)
                if entry is None:
                    entry = _embed(nfa, im, t)
                    shared[key] = entry
                nfa.eps[s].append(entry)
        final = nfa.new_state()
        after = final if suffix is None else _embed(nfa, suffix, final)
        before = m.start if prefix is None else _embed(nfa, prefix, m.start)
        if after is None or before is None:
            return DFA.empty()
        for a in m.accepting:
            nfa.eps[a].append(after)
        nfa.start = before
        nfa.accepting = {final}
        return DFA._from_nfa(nfa, budget, "substitute")

    def reverse(self, budget: Budget | None = None) -> "DFA":
        """The automaton of the reversed strings."""
        budget = as_budget(budget)
        m = self.minimize()
        if m.start == 0:
            return m
        nfa = NFA(budget, "reverse")
        n = len(m.delta)
        nfa.reserve(n + 1)
        for _ in range(n + 1):
            nfa.new_state()
        new_start = n
        for s in range(1, n):
            by_target: dict[int, list[tuple[int, int]]] = {}
            for c, t in enumerate(m.delta[s]):
                if t:
                    by_target.setdefault(t, []).extend(m.classes[c].ranges)
            for t, rs in by_target.items():
                nfa.edges[t].append((CharSet(rs), s))
        for a in m.accepting:
            nfa.eps[new_start].append(a)
        nfa.start = new_start
        nfa.accepting = {m.start}
        return DFA._from_nfa(nfa, budget, "reverse")

    # ------------------------------------------------------------------ strings out
    def _distance_to_accept(self) -> list[int]:
        """Per state of the minimal automaton, the length of a shortest way to acceptance."""
        m = self.minimize()
        if m._dist is not None:
            return m._dist
        INF = 1 << 60
        dist = [INF] * len(m.delta)
        preds: dict[int, set[int]] = {}
        for s, row in enumerate(m.delta):
            for t in row:
                preds.setdefault(t, set()).add(s)
        queue = deque()
        for a in m.accepting:
            dist[a] = 0
            queue.append(a)
        while queue:
            t = queue.popleft()
            for s in preds.get(t, ()):
                if dist[s] == INF:
                    dist[s] = dist[t] + 1
                    queue.append(s)
        m._dist = dist
        return dist

    def viable_prefix_length(self, text: str) -> int:
        """How many leading characters of ``text`` can still be completed to an accepted string.

        ``len(text)`` when the whole text is a viable prefix; where a sampler would be stopped."""
        m = self.minimize()
        dist = m._distance_to_accept()
        s = m.start
        if s == 0:
            return 0
        for i, ch in enumerate(text):
            if 0xD800 <= ord(ch) <= 0xDFFF:
                return i
            s = m.delta[s][m.class_of(ch)]
            if s == 0 or dist[s] >= (1 << 60):
                return i
        return len(text)

    def shortest(self) -> str | None:
        """A shortest accepted string (None if the language is empty)."""
        m = self.minimize()
        if m.start == 0:
            return None
        dist = m._distance_to_accept()
        out = []
        s = m.start
        while dist[s] > 0:
            for c, t in enumerate(m.delta[s]):
                if t and dist[t] == dist[s] - 1:
                    out.append(m.classes[c].representative())
                    s = t
                    break
        return "".join(out)

    def sample(self, rng: _random.Random | None = None, max_length: int = 64) -> str:
        """A random accepted string.

        Walks the automaton choosing uniformly among stopping (where accepting) and the live
        classes, then a character in the class (half the time an ASCII one when the class has
        any). Past ``max_length`` characters it steers along a shortest way to acceptance.
        """
        rng = rng or _random.Random()
        m = self.minimize()
        if m.start == 0:
            raise ValueError("cannot sample from an empty language")
        dist = m._distance_to_accept()
        out = []
        s = m.start
        ascii_ = CharSet.range(0x20, 0x7E)
        while True:
            live = [c for c, t in enumerate(m.delta[s]) if t]
            if len(out) >= max_length:
                if s in m.accepting:
                    break
                live = [c for c in live if dist[m.delta[s][c]] < dist[s]]
            options = len(live) + (1 if s in m.accepting else 0)
            k = rng.randrange(options)
            if k == len(live):
                break
            cs = m.classes[live[k]]
            sub = cs & ascii_
            out.append(sub.sample(rng) if sub and rng.random() < 0.5 else cs.sample(rng))
            s = m.delta[s][live[k]]
        return "".join(out)

    def examples(self, n: int = 10, max_length: int = 1000) -> list[str]:
        """Up to ``n`` distinct accepted strings, shortest first, one readable character per class.

        Breadth-first by length, keeping at most ``n`` partial strings per state at each length:
        the frontier stays bounded by ``n`` times the number of states, and every live state stays
        represented, so acceptance is always reached when the language is not empty.
        """
        m = self.minimize()
        if m.start == 0 or n <= 0:
            return []
        reps = [c.representative() for c in m.classes]
        out: list[str] = []
        frontier = [(m.start, "")]
        for _ in range(max_length + 1):
            for s, w in frontier:
                if s in m.accepting:
                    out.append(w)
                    if len(out) == n:
                        return out
            quota: dict[int, int] = {}
            nxt = []
            for s, w in frontier:
                for c, t in enumerate(m.delta[s]):
                    if t and quota.get(t, 0) < n:
                        quota[t] = quota.get(t, 0) + 1
                        nxt.append((t, w + reps[c]))
            if not nxt:
                break
            frontier = nxt
        return out

    # ------------------------------------------------------------------ output for people
    def _grouped(self):
        """Per live state, its outgoing transitions grouped by target: {target: CharSet}."""
        m = self.minimize()
        out = {}
        for s in range(1, len(m.delta)) if m.start else ():
            by_t: dict[int, list] = {}
            for c, t in enumerate(m.delta[s]):
                if t:
                    by_t.setdefault(t, []).extend(m.classes[c].ranges)
            out[s] = {t: CharSet(rs) for t, rs in by_t.items()}
        return m, out

    def to_rules(self) -> str:
        """EBNF-like rules, one per live state, alternatives grouped by target state.

        ``S1 ::= [a-z] S2 | "@" S3 | ε``. The number of alternatives is :attr:`rule_count`, the
        unit in which grammar blowup is counted.
        """
        m, grouped = self._grouped()
        if m.start == 0:
            return "S1 ::= ∅"
        lines = []
        for s in sorted(grouped):
            alts = [f"{_show(cs)} S{t}" for t, cs in sorted(grouped[s].items())]
            if s in m.accepting:
                alts.append("ε")
            lines.append(f"S{s} ::= " + " | ".join(alts))
        return "\n".join(lines)

    @property
    def rule_count(self) -> int:
        """Number of rule alternatives in :meth:`to_rules` (grouped transitions plus one ε per
        accepting state)."""
        m, grouped = self._grouped()
        return sum(len(g) for g in grouped.values()) + len(m.accepting)

    def to_dot(self) -> str:
        """A Graphviz ``digraph`` of the live states."""
        m, grouped = self._grouped()
        lines = ["digraph DFA {", "  rankdir=LR;", '  node [shape=circle];', '  __start [shape=point];']
        for s in sorted(grouped):
            shape = "doublecircle" if s in m.accepting else "circle"
            lines.append(f'  S{s} [shape={shape}];')
        if m.start:
            lines.append(f"  __start -> S{m.start};")
        for s in sorted(grouped):
            for t, cs in sorted(grouped[s].items()):
                label = _show(cs).replace("\\", "\\\\").replace('"', '\\"')
                lines.append(f'  S{s} -> S{t} [label="{label}"];')
        lines.append("}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ lowering and interop
    def to_bytes(self):
        """The UTF-8 byte automaton accepting exactly the encodings of this language.

        Returns
        -------
        ByteDFA
        """
        if self._bytes is None:
            from .bytedfa import ByteDFA
            self._bytes = ByteDFA.from_codepoint_dfa(self.minimize())
        return self._bytes

    @classmethod
    def from_interegular(cls, fsm) -> "DFA":
        """Convert an ``interegular.fsm.FSM``."""
        from .interop import from_interegular
        return from_interegular(cls, fsm)

    def to_interegular(self):
        """Convert to an ``interegular.fsm.FSM`` (its alphabet lists characters one by one, so
        classes other than the largest must be of moderate size)."""
        from .interop import to_interegular
        return to_interegular(self.minimize())


#: Products of ``na * nb`` pairs in this range are built with array operations (past it, their
#: table of pair numbers would be too large).
PRODUCT_ARRAY_MIN = 10_000
PRODUCT_ARRAY_MAX = 4_000_000
_ACCEPT_ARRAYS = {
    "intersect": lambda x, y: x & y,
    "union": lambda x, y: x | y,
    "difference": lambda x, y: x & ~y,
    "symmetric_difference": lambda x, y: x ^ y,
}
#: Which pairs of a product are dead without being walked, by the states of the pair: a pair
#: that no string leads from to acceptance, whatever the second side does, when the first side
#: is dead (a difference, an intersection) or the second is (an intersection).
DEAD_PAIRS = {
    "either": lambda a, b: a == 0 or b == 0,
    "first": lambda a, b: a == 0,
    "both": lambda a, b: a == 0 and b == 0,
}


def _concat_subsets(parts: Sequence[DFA], budget: Budget) -> DFA:
    """:meth:`DFA.concat_all` of minimal, non-empty automata as one NFA, determinised and
    minimised: the reference way."""
    nfa = NFA(budget, "concat")
    final = nfa.new_state()
    nxt = final
    for p in reversed(parts):
        nxt = _embed(nfa, p, nxt)
    nfa.start = nxt
    nfa.accepting = {final}
    return DFA._from_nfa(nfa, budget, "concat")


def _concat_glued(parts: Sequence[DFA], budget: Budget) -> DFA:
    """:meth:`DFA.concat_all` of minimal automata, each but the last with a closed end
    (:func:`_closed_end`): the accepting state of each becomes the start of the next, no
    subset construction needed.

    Where no part but the first moves back into its start (a JSON value, a key and a
    separator do not), the result is minimal as it stands and is only numbered
    canonically. The states of one part stay apart: a part's strings from its states are
    closed at their end, prefix codes, and prefix codes followed by one language ``R`` give
    equal languages only when equal. A state ``p`` of one part and ``r`` of a later one are
    apart too: were they equal, a string ``u`` taking ``p`` to the start ``e`` of the next
    part would take ``r`` to a state equal to ``e``: not ``e`` (neither its part nor a later
    one moves into it), nor another state of its part (apart), nor one of a later part (apart,
    by induction on the parts from the last). Otherwise the result is minimised."""
    classes, cols = _joint_classes_all(parts)
    meter = budget.meter("concat")
    meter.width = len(classes)
    meter.add(sum(len(m.delta) - 1 for m in parts))
    last = len(parts) - 1
    base, total = [], 1
    for m in parts:
        base.append(total - 1)
        total += len(m.delta) - 1
    # where each part is entered: its start, or the next one's when it is only the empty
    # string (its start is its closed end)
    entry = [0] * len(parts)
    entry[last] = base[last] + parts[last].start
    for i in range(last - 1, -1, -1):
        (end,) = parts[i].accepting
        entry[i] = entry[i + 1] if parts[i].start == end else base[i] + parts[i].start
    # each part's states as numbered here (its closed end: the next part's entry)
    new = []
    for i, m in enumerate(parts):
        got = [0] + list(range(base[i] + 1, base[i] + len(m.delta)))
        if i < last:
            (end,) = m.accepting
            got[end] = entry[i + 1]
        new.append(got)

    def minimised() -> DFA:
        delta = [[0] * len(classes)]
        for i, m in enumerate(parts):
            delta.extend([new[i][row[c]] for c in cols[i]] for row in m.delta[1:])
        accepting = {base[last] + a for a in parts[last].accepting}
        return DFA._minimal_of(classes, delta, accepting, entry[0], check=meter.time_check)

    # numbered canonically: breadth first from the start, a state's successors in the order of
    # the first class leading to each (the same order over a part's own classes); the walk
    # reads every move, so it also finds a part but the first moving back into its start
    back = [m.start if i and entry[i] == base[i] + m.start else -1 for i, m in enumerate(parts)]
    owner = []
    for i, m in enumerate(parts):
        owner += [i] * (len(m.delta) - 1)
    number = [0] * total
    queue = [entry[0]]
    number[entry[0]] = 1
    for g in queue:
        i = owner[g - 1]
        to = new[i]
        for t in dict.fromkeys(parts[i].delta[g - base[i]]):
            if t == back[i]:
                return minimised()
            if t:
                h = to[t]
                if not number[h]:
                    number[h] = len(queue) + 1
                    queue.append(h)
    delta = [(0,) * len(classes)] + [()] * len(queue)
    for i, m in enumerate(parts):
        tr = [number[h] for h in new[i]]
        col = cols[i]
        same = col == list(range(len(m.classes)))
        for s in range(1, len(m.delta)):
            k = number[base[i] + s]
            if k:
                row = m.delta[s]
                delta[k] = tuple(map(tr.__getitem__, row if same else map(row.__getitem__, col)))
    accepting = {number[base[last] + a] for a in parts[last].accepting}
    return DFA(classes, delta, accepting, 1, _minimal=True)


#: The ways to concatenate minimal, non-empty automata (:meth:`DFA.concat_all`), all with the
#: same result: name -> function taking ``(parts, budget)``. ``glued`` applies where every part
#: but the last has a closed end (:func:`_closed_end`); :func:`_concat_way` chooses. The tests
#: run every entry that applies on the same automata.
CONCATS = {
    "subsets": _concat_subsets,
    "glued": _concat_glued,
}
#: The way that defines the result.
CONCAT_REFERENCE = "subsets"


def _concat_way(parts: Sequence[DFA]) -> str:
    """The default way of :data:`CONCATS`: ``glued`` wherever it applies."""
    return "glued" if all(_closed_end(m) for m in parts[:-1]) else "subsets"


#: The ways to build a product (:meth:`DFA._product`), all with the same result: name -> method
#: taking ``(self, other, classes, ca, cb, accept, operation, meter, dead)``. The tests
#: run every entry on the same automata; :func:`_product_way` chooses one by default.
PRODUCTS = {
    "pairs": DFA._product_pairs,
    "arrays": DFA._product_arrays,
}
#: The way that defines the result.
PRODUCT_REFERENCE = "pairs"


def _product_way(na: int, nb: int, operation: str, dead_start: bool) -> str:
    """The default way of :data:`PRODUCTS` for automata of ``na`` and ``nb`` states: arrays
    for :data:`PRODUCT_ARRAY_MIN` to :data:`PRODUCT_ARRAY_MAX` pairs and the operations of
    ``_ACCEPT_ARRAYS``, unless the start pair is dead (``dead_start``: an intersection with an
    empty side, which the pair way answers at once); else pairs."""
    if (PRODUCT_ARRAY_MIN <= na * nb <= PRODUCT_ARRAY_MAX and operation in _ACCEPT_ARRAYS
            and not dead_start):
        return "arrays"
    return "pairs"


def _show(cs: CharSet) -> str:
    """One character as a quoted literal (``"a"``, ``'"'``), anything else as a class."""
    if len(cs.ranges) == 1 and cs.ranges[0][0] == cs.ranges[0][1]:
        c = chr(cs.ranges[0][0])
        if c == '"':
            return "'\"'"
        if c.isprintable() and c != "\\":
            return f'"{c}"'
    return cs.to_class()


def _merge_classes(classes: list[CharSet], delta, check=None):
    """Merge alphabet classes whose columns are identical in every state (coarsest partition).

    Returns ``(classes, delta, changed)``: classes sorted by first member, and whether anything
    was merged or reordered. ``check`` (a construction's clock) is called every so many rows."""
    ncls = len(classes)
    if ncls <= 1:
        return classes, delta, False
    cols: dict[tuple, list[int]] = {}
    if check is None:
        columns = zip(*delta)
    else:                       # (a slice of rows at a time, the clock looked at after each)
        parts: list[list] = [[] for _ in range(ncls)]
        for lo in range(0, len(delta), 1 << 14):
            for c, col in enumerate(zip(*delta[lo:lo + (1 << 14)])):
                parts[c].append(col)
            check()
        columns = map(tuple, parts)
    for c, col in enumerate(columns):
        cols.setdefault(col, []).append(c)
    if len(cols) == ncls and all(classes[i].min() < classes[i + 1].min() for i in range(ncls - 1)):
        return classes, delta, False
    groups = list(cols.values())
    merged = [CharSet([r for c in g for r in classes[c].ranges]) if len(g) > 1 else classes[g[0]]
              for g in groups]
    order = sorted(range(len(groups)), key=lambda i: merged[i].min())
    new_classes = [merged[i] for i in order]
    reps = [groups[i][0] for i in order]
    if check is None:
        new_delta = [[row[c] for c in reps] for row in delta]
    else:
        new_delta = []
        for lo in range(0, len(delta), 1 << 14):
            new_delta += [[row[c] for c in reps] for row in delta[lo:lo + (1 << 14)]]
            check()
    return new_classes, new_delta, True


def _clock(budget: Budget | None, operation: str):
    """The check a minimisation calls for a construction with a deadline (None without one)."""
    b = budget or DEFAULT_BUDGET
    if b.deadline is None and b.max_seconds is None:
        return None
    b = b.started()
    return lambda: check_deadline(b, operation)


@byte_lru_cache("automata.dfa.literal", 8 << 20)
def _literal(s: str) -> DFA:
    return DFA._literal(s)


def _columns_distinct(groups, nclasses: int) -> bool:
    """Whether no two classes have the same column, given a table's groups (per state, distinct
    targets with the bit sets of their classes; the rest go to the dead state): the classes are
    split by every distinct bit set, stopping as soon as all are apart."""
    masks = {m for g in groups for _, m in g}
    # a class that is the only class of some transition is apart from all others at once
    single = 0
    for m in masks:
        if not m & (m - 1):
            single |= m
    nsingle = bin(single).count("1")
    rest = ((1 << nclasses) - 1) & ~single
    blocks = [rest] if rest else []
    for m in masks:
        if nsingle + len(blocks) == nclasses:
            return True
        if not m & rest:
            continue
        nb = []
        for b in blocks:
            x = b & m
            if x and x != b:
                nb.append(x)
                nb.append(b ^ x)
            else:
                nb.append(b)
        blocks = nb
    return nsingle + len(blocks) == nclasses


def _edge_lists(m: DFA) -> list:
    """Per state of the minimal ``m``, its live transitions grouped by target: ``(CharSet, t)``
    pairs (cached on ``m``: the same automaton is embedded many times)."""
    edges = m._edges
    groups = getattr(m, "_groups", None) if edges is None else None
    if groups is not None:
        # from the groups the minimisation left (targets in the order of their first class)
        classes = m.classes
        labels: dict[int, CharSet] = {}
        edges = [()]
        for g in groups[1:]:
            out = []
            for t, mask in g:
                label = labels.get(mask)
                if label is None:
                    if not mask & (mask - 1):
                        label = classes[mask.bit_length() - 1]
                    else:
                        label = CharSet.union_of_disjoint(
                            [classes[c] for c in range(mask.bit_length()) if mask >> c & 1])
                    labels[mask] = label
                out.append((label, t))
            edges.append(tuple(out))
        m._edges = edges
    if edges is None and len(m.delta) * len(m.classes) >= 4096 and len(m.classes) <= 62:
        # large tables: the (state, target) groups and their class bit sets from array sorts
        from .minimize import _row_groups
        classes = m.classes
        src, dst, masks = _row_groups(m.delta, 0, masks=True)
        labels: dict[int, CharSet] = {}
        rows: list = [[] for _ in range(len(m.delta))]
        for s, t, mask in zip(src.tolist(), dst.tolist(), masks.tolist()):
            label = labels.get(mask)
            if label is None:
                members = [classes[c] for c in range(len(classes)) if mask >> c & 1]
                label = labels[mask] = (members[0] if len(members) == 1
                                        else CharSet.union_of_disjoint(members))
            rows[s].append((label, t))
        edges = [tuple(r) for r in rows]
        m._edges = edges
    if edges is None:
        edges = [()]
        classes = m.classes
        merged: dict[tuple, CharSet] = {}     # one label object per group of classes
        for row in m.delta[1:]:
            by_t: dict[int, list] = {}
            for c, t in enumerate(row):
                if t:
                    got = by_t.get(t)
                    if got is None:
                        by_t[t] = [c]
                    else:
                        got.append(c)
            out = []
            for t, cs in by_t.items():
                if len(cs) == 1:
                    out.append((classes[cs[0]], t))
                    continue
                key = tuple(cs)
                label = merged.get(key)
                if label is None:
                    label = merged[key] = CharSet.union_of_disjoint([classes[c] for c in cs])
                out.append((label, t))
            edges.append(tuple(out))
        m._edges = edges
    return edges


def _embed(nfa: NFA, d: DFA, exit_: int) -> int | None:
    """Copy the live part of ``d`` into ``nfa``; accepting states get an epsilon to ``exit_``.

    Returns the NFA state for ``d``'s start, or None if ``d`` is empty."""
    m = d.minimize()
    if m.start == 0:
        return None
    n = len(m.delta)
    nfa.reserve(n - 1)
    base = len(nfa.edges) - 1
    # the copy shares m's edge tuples (targets relative to the copy's offset)
    nfa.edges.extend(_edge_lists(m)[1:])
    nfa.offset.extend([base] * (n - 1))
    nfa.eps.extend([[] for _ in range(n - 1)])
    nfa.asserts.extend(repeat((), n - 1))      # embedded states never get assertions
    for s in m.accepting:
        nfa.eps[base + s].append(exit_)
    return base + m.start
