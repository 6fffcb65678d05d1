"""Nondeterministic automata over code-point sets, and their determinisation.

An :class:`NFA` has transitions labelled with :class:`~.charset.CharSet`, epsilon moves, and
zero-width assertion moves (``^``, ``$``, ``\\b`` ...). It is the meeting point of the regex tree
(:func:`from_ast`, Thompson's construction) and of the code-level combinators on DFAs
(concatenation, star, repetition), which embed whole DFAs as NFA fragments.

:func:`determinize` is the subset construction over alphabet classes: the coarsest partition of the
code points that every transition label is a union of (:func:`.charset.refine`), so a DFA state has
one transition per class, not per character. :func:`determinize_groups` also returns, per state,
its targets with the bit sets of their classes, which minimisation uses instead of scanning rows.

Assertions are handled exactly, wherever they occur (``a^b`` matches nothing, ``a$\\n`` matches
``"a\\n"``). Each assertion has a look-behind part, checked while computing an epsilon closure
(the character just read is known), and a look-ahead part that becomes an *obligation* carried by
the NFA state into the next step: "the next character must be a word character", "only a final
newline may follow" and so on. A subset-construction state is a set of (NFA state, obligations)
pairs; obligations are discharged, transformed or violated by the next character, or checked at
the end of the input for acceptance. This is the same idea as regex-automata's look-around
handling (rust-lang/regex), generalised to Python's ``$``, which may look two characters ahead.

Example
-------
>>> from tokenfsm.automata.regex_ast import Chars, Repeat
>>> from tokenfsm.automata.charset import CharSet
>>> n = from_ast(Repeat(Chars(CharSet.range("a", "c")), 2, 3))
>>> classes, delta, accepting, start = determinize(n)
>>> len(classes)
2
"""

from __future__ import annotations

import bisect
import re
from typing import Sequence

from .cache import BoundedMemo
from .charset import CharSet, refine
from .errors import (DEFAULT_BUDGET, NFA_STATES_PER_STATE, Budget, BudgetExceeded,
                     check_deadline)
from .minimize import ARRAY_MIN_CELLS
from .regex_ast import Alt, Assert, Chars, Node, Repeat, Seq

__all__ = ["NFA", "from_ast", "determinize", "determinize_groups", "thompson_states",
           "NFA_STATES_PER_STATE"]

# Does this interpreter's \B match the empty string? (CPython changed it in 3.14.)
_NOT_BOUNDARY_MATCHES_EMPTY = re.fullmatch(r"\B", "") is not None
_NEWLINE = CharSet.of("\n")


class NFA:
    """A mutable Thompson NFA under construction.

    States are integers. ``edges[q]`` holds ``(CharSet, target)`` pairs, ``eps[q]`` epsilon
    targets, ``asserts[q]`` ``(Assert, target)`` pairs (an empty tuple for the states of an
    embedded automaton, which have none). ``start`` and ``accepting`` are set by the
    builder. ``offset[q]`` is added to the targets of ``edges[q]``: the copies of an embedded
    automaton share one (immutable) edge tuple per state, each copy with its own offset; it is 0
    for states built one by one.
    """

    __slots__ = ("edges", "eps", "asserts", "start", "accepting", "offset", "budget", "max_states",
                 "operation")

    def __init__(self, budget: Budget | None = None, operation: str = "nfa"):
        self.edges: list[list[tuple[CharSet, int]]] = []
        self.eps: list[list[int]] = []
        self.asserts: list[list[tuple[Assert, int]]] = []
        self.offset: list[int] = []
        self.start = 0
        self.accepting: set[int] = set()
        self.budget = budget or DEFAULT_BUDGET
        #: most states this NFA may reach (see :data:`NFA_STATES_PER_STATE`)
        self.max_states = NFA_STATES_PER_STATE * self.budget.max_states
        self.operation = operation

    def reserve(self, n: int) -> None:
        """Charge ``n`` states about to be added: :class:`BudgetExceeded` (nothing added) if the
        NFA would pass :attr:`max_states`."""
        total = len(self.edges) + n
        if total > self.max_states:
            raise BudgetExceeded(self.max_states, total, self.operation, kind="nfa_states")
        check_deadline(self.budget, self.operation)

    def new_state(self) -> int:
        self.edges.append([])
        self.eps.append([])
        self.asserts.append([])
        self.offset.append(0)
        return len(self.edges) - 1

    @property
    def num_states(self) -> int:
        return len(self.edges)

    @property
    def has_assertions(self) -> bool:
        return any(self.asserts)

    def add_fragment(self, node: Node) -> tuple[int, int]:
        """Add the Thompson fragment of ``node``; return its (entry, exit) states."""
        if isinstance(node, Chars):
            a, b = self.new_state(), self.new_state()
            if node.cs:
                self.edges[a].append((node.cs, b))
            return a, b
        if isinstance(node, Seq):
            if not node.items:
                a = self.new_state()
                return a, a
            entry, cur = self.add_fragment(node.items[0])
            for item in node.items[1:]:
                s, e = self.add_fragment(item)
                self.eps[cur].append(s)
                cur = e
            return entry, cur
        if isinstance(node, Alt):
            a, b = self.new_state(), self.new_state()
            for item in node.items:
                s, e = self.add_fragment(item)
                self.eps[a].append(s)
                self.eps[e].append(b)
            return a, b
        if isinstance(node, Repeat):
            return self._add_repeat(node)
        if isinstance(node, Assert):
            a, b = self.new_state(), self.new_state()
            self.asserts[a].append((node, b))
            return a, b
        raise TypeError(f"not a regex tree node: {node!r}")

    def _add_repeat(self, node: Repeat) -> tuple[int, int]:
        lo, hi = node.min, node.max
        if lo < 0 or (hi is not None and hi < lo):
            raise ValueError(f"bad repetition bounds {{{lo},{hi}}}")
        entry = cur = self.new_state()
        timed = self.budget.deadline is not None
        for k in range(lo):
            if timed and not k & 255:
                check_deadline(self.budget, self.operation)
            s, e = self.add_fragment(node.item)
            self.eps[cur].append(s)
            cur = e
        if hi is None:
            # x* as a loop: entry -> item -> back; exit reachable from the loop head
            head = self.new_state()
            self.eps[cur].append(head)
            s, e = self.add_fragment(node.item)
            self.eps[head].append(s)
            self.eps[e].append(head)
            return entry, head
        # optional copies nested as (x(x(x)?)?)?, so a subset holds O(1) positions, not O(n)
        exit_ = self.new_state()
        self.eps[cur].append(exit_)
        for k in range(hi - lo):
            if timed and not k & 255:
                check_deadline(self.budget, self.operation)
            s, e = self.add_fragment(node.item)
            self.eps[cur].append(s)
            self.eps[e].append(exit_)
            cur = e
        return entry, exit_


def thompson_states(node: Node, limit: int | None = None) -> int:
    """States :func:`from_ast` builds for ``node``, counted without building them (shared
    subtrees once per occurrence, as they are built); past ``limit`` the count may stop early, at
    some number above it."""
    sizes: dict[int, int] = {}
    stack = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in sizes:
            continue
        kids = (n.items if isinstance(n, (Seq, Alt)) else (n.item,) if isinstance(n, Repeat)
                else ())
        if not ready and kids:
            stack.append((n, True))
            stack.extend((k, False) for k in kids if id(k) not in sizes)
            continue
        if isinstance(n, Seq):
            size = sum(sizes[id(k)] for k in n.items) if n.items else 1
        elif isinstance(n, Alt):
            size = 2 + sum(sizes[id(k)] for k in n.items)
        elif isinstance(n, Repeat):
            item = sizes[id(n.item)]
            copies = n.min + (1 if n.max is None else max(n.max - n.min, 0))
            size = 2 + item * copies
        else:                                      # Chars, Assert
            size = 2
        if limit is not None and size > limit:
            return size
        sizes[id(n)] = size
    return sizes[id(node)]


def from_ast(node: Node, budget: Budget | None = None) -> NFA:
    """Thompson's construction: an NFA accepting exactly the strings ``node`` matches.

    Raises :class:`BudgetExceeded` (operation ``"regex"``), before building anything, when it
    would have more than ``NFA_STATES_PER_STATE * budget.max_states`` states."""
    nfa = NFA(budget, "regex")
    nfa.reserve(thompson_states(node, nfa.max_states))
    s, e = nfa.add_fragment(node)
    nfa.start = s
    nfa.accepting = {e}
    return nfa


# -- obligations -------------------------------------------------------------------------------
# An obligation is a small tuple: ("end",), ("nl_end",), ("nl",), ("w", wid), ("nw", wid),
# ("nw!", wid). ``wid`` indexes the distinct word-character sets of the pattern.
_END = ("end",)
_OK = object()      # obligation discharged
_FAIL = None        # obligation violated


def _lookbehind(a: Assert, prev, is_nl, is_word, wid_of):
    """Apply the look-behind part of ``a`` given the previous class (None at the start).

    Returns ``_FAIL``, ``_OK`` (no obligation) or the obligation left on the future."""
    k = a.kind
    if k == "start":
        return _OK if prev is None else _FAIL
    if k == "start_line":
        return _OK if prev is None or is_nl[prev] else _FAIL
    if k == "end":
        return ("nl_end",)
    if k == "end_string":
        return _END
    if k == "end_line":
        return ("nl",)
    wid = wid_of[a.word]
    prev_word = prev is not None and is_word[wid][prev]
    if k == "word_boundary":
        return ("nw", wid) if prev_word else ("w", wid)
    # not_word_boundary
    if prev_word:
        return ("w", wid)
    if prev is None and not _NOT_BOUNDARY_MATCHES_EMPTY:
        return ("nw!", wid)
    return ("nw", wid)


def _discharge(ob, c, is_nl, is_word):
    """What the obligation ``ob`` becomes after reading class ``c``."""
    k = ob[0]
    if k == "end":
        return _FAIL
    if k == "nl_end":
        return _END if is_nl[c] else _FAIL
    if k == "nl":
        return _OK if is_nl[c] else _FAIL
    if k == "w":
        return _OK if is_word[ob[1]][c] else _FAIL
    return _FAIL if is_word[ob[1]][c] else _OK   # "nw", "nw!"


def _ok_at_end(ob) -> bool:
    return ob[0] in ("end", "nl_end", "nl", "nw")


def determinize(nfa: NFA, budget: Budget | None = None, operation: str = "determinize",
                extra_sets: Sequence[CharSet] = ()):
    """Subset construction.

    Parameters
    ----------
    nfa : NFA
    budget : Budget, optional
        Limits the number of DFA states created.
    operation : str
        Name reported in :class:`~.errors.BudgetExceeded`.
    extra_sets : sequence of CharSet
        Further sets the alphabet partition must separate.

    Returns
    -------
    classes : list of CharSet
        The alphabet partition.
    delta : list of list of int
        ``delta[s][c]``: the successor of state ``s`` on class ``c``. State 0 is the dead state.
    accepting : set of int
    start : int
    """
    return _subsets(nfa, budget, operation, extra_sets, False)[:4]


def determinize_groups(nfa: NFA, budget: Budget | None = None, operation: str = "determinize",
                       extra_sets: Sequence[CharSet] = ()):
    """:func:`determinize`, also returning ``groups``: per state, its ``(target, bit set of
    classes)`` pairs for the targets other than the dead state (a target may appear in more than
    one pair), or None when the construction does not record them (patterns with assertions, and
    tables past :data:`GROUPS_MAX_CELLS`)."""
    return _subsets(nfa, budget, operation, extra_sets, True)


#: NFA states looked at between two looks at the clock, where the subset construction starts.
_SLICE = 1 << 14


def _subsets(nfa: NFA, budget: Budget | None, operation: str, extra_sets: Sequence[CharSet],
             with_groups: bool):
    """The subset construction; groups are recorded when ``with_groups`` (else None)."""
    meter = (budget or DEFAULT_BUDGET).meter(operation)
    edges = nfa.edges
    # shared edge tuples (copies of an embedded automaton) are looked at once, and the labels
    # by identity (CharSet hashes in Python): equal copies are refined together; in slices, with
    # a look at the clock after each
    if len(edges) <= _SLICE:
        ids = list(map(id, edges))
        distinct = dict(zip(ids, edges))
        labels = {id(cs): cs for out in distinct.values() for cs, _ in out}
    else:
        ids, distinct, labels = [], {}, {}
        for lo in range(0, len(edges), _SLICE):
            part = edges[lo:lo + _SLICE]
            part_ids = list(map(id, part))
            ids += part_ids
            distinct.update(zip(part_ids, part))
            meter.check_time()
        outs = list(distinct.values())
        for lo in range(0, len(outs), _SLICE):
            labels.update({id(cs): cs for out in outs[lo:lo + _SLICE] for cs, _ in out})
            meter.check_time()
    label_sets = list(labels.values())
    word_sets: list[CharSet] = []
    has_assertions = nfa.has_assertions
    if has_assertions:
        label_sets.append(_NEWLINE)
        for out in nfa.asserts:
            for a, _ in out:
                if a.word is not None and a.word not in word_sets:
                    word_sets.append(a.word)
        label_sets.extend(word_sets)
    label_sets.extend(extra_sets)

    meter.check_time()                  # the NFA's edges were looked at (linear, no states made)
    if not has_assertions:
        # the same labels come back often (the same embedded automata): their partition and
        # covers are kept by the set of labels
        key = frozenset(label_sets)
        got = _partitions.get(key)
        if got is None:
            got = _partition(key)
        classes, cover_of = got
        cover = {k: cover_of[cs] for k, cs in labels.items()}      # by id(label)
        # per distinct edge tuple: (classes, target - offset[q], bit set of the classes) per edge,
        # and the bit set of all classes it moves on, None when two of its edges share one
        moves_of: dict[int, list] = {}
        union_of: dict[int, int | None] = {}
        timed = meter.deadline is not None
        for n_seen, (k, out) in enumerate(distinct.items()):
            if timed and not n_seen & 4095:
                meter.check_time()
            ml = []
            u = 0
            for cs, t in out:
                cl, m = cover[id(cs)]
                ml.append((cl, t, m))
                u = None if u is None or u & m else u | m
            moves_of[k] = ml
            union_of[k] = u
        moves = list(map(moves_of.__getitem__, ids))
        union = list(map(union_of.__getitem__, ids))
        return _determinize_plain(nfa, moves, union, list(classes), meter, with_groups)
    classes = refine(label_sets)
    nclasses = len(classes)
    # which classes each label covers: a class lies wholly inside or outside every label
    firsts = [c.ranges[0][0] for c in classes]
    cover_cache: dict[CharSet, list[int]] = {}

    def cover(cs: CharSet) -> list[int]:
        got = cover_cache.get(cs)
        if got is None:
            got = [i for lo, hi in cs.ranges
                   for i in range(bisect.bisect_left(firsts, lo), bisect.bisect_right(firsts, hi))]
            cover_cache[cs] = got
        return got

    # moves[q]: class -> list of targets
    moves: list[dict[int, list[int]]] = []
    for out, off in zip(nfa.edges, nfa.offset):
        m: dict[int, list[int]] = {}
        for cs, t in out:
            for c in cover(cs):
                m.setdefault(c, []).append(t + off)
        moves.append(m)
    is_nl = [c == _NEWLINE or (c.ranges[0][0] == 10 and len(c) == 1) for c in classes]
    wid_of = {w: i for i, w in enumerate(word_sets)}
    is_word = [[firsts[c] in w for c in range(nclasses)] for w in word_sets]
    return _determinize_asserts(nfa, moves, classes, meter, is_nl, is_word, wid_of) + (None,)


#: Partitions kept (sets of labels -> classes and covers), the oldest dropped first.
PARTITIONS_KEPT = 1024
_partitions = BoundedMemo("automata.nfa.partitions", 16 << 20)


def _partition(labels: frozenset):
    """Record and return ``(classes, cover)`` for ``labels``: ``classes`` is their
    :func:`~.charset.refine`, ``cover[cs]`` the list of the classes inside the label ``cs`` and
    their bit set."""
    classes = refine(labels)
    # The classes are sorted by first member and lie wholly inside or outside each label: the
    # ones inside are those whose first member falls in one of its ranges, a run of consecutive
    # classes per range.
    firsts = [c.ranges[0][0] for c in classes]
    bl, br = bisect.bisect_left, bisect.bisect_right
    cover: dict[CharSet, tuple[list[int], int]] = {}
    for cs in labels:
        cl: list[int] = []
        m = 0
        for lo, hi in cs.ranges:
            a = bl(firsts, lo)
            b = br(firsts, hi, a)
            if a < b:
                cl.extend(range(a, b))
                m |= (1 << b) - (1 << a)
        cover[cs] = (tuple(cl), m)      # (kept: a tuple of ints the collector drops)
    if len(_partitions) >= PARTITIONS_KEPT:
        _partitions.pop(next(iter(_partitions), None), None)
    got = (classes, cover)
    _partitions.put(labels, got, sum(200 + 80 * len(c.ranges) for c in classes)
                    + sum(150 + 8 * len(cl) for cl, _ in cover.values()) + 64 * len(labels))
    return got


#: Subset constructions record groups while their table has fewer cells than this: larger ones
#: are minimised with array operations, which do not use them.
GROUPS_MAX_CELLS = ARRAY_MIN_CELLS


class _Sink:
    """A list that keeps nothing (appending to it when groups are not recorded)."""

    __slots__ = ()

    def append(self, item) -> None:
        pass


_SINK = _Sink()


class _Interner:
    """Numbers subset states as they are discovered; state 0 is the empty (dead) subset."""

    __slots__ = ("index", "delta", "accepting", "todo", "meter", "nclasses", "is_accepting")

    def __init__(self, nclasses: int, meter, is_accepting):
        self.index: dict[frozenset, int] = {frozenset(): 0}
        self.delta: list = [[0] * nclasses]
        self.accepting: set[int] = set()
        self.todo: list[frozenset] = []
        self.meter = meter
        self.nclasses = nclasses
        self.is_accepting = is_accepting

    def __call__(self, S: frozenset) -> int:
        i = self.index.get(S)
        if i is None:
            self.meter.add(1, len(S))
            i = len(self.delta)
            self.index[S] = i
            self.delta.append(None)
            if self.is_accepting(S):
                self.accepting.add(i)
            self.todo.append(S)
        return i


def _determinize_plain(nfa: NFA, moves, union, classes, meter, with_groups: bool = True):
    # A subset state is held as its one NFA state (an int) when it is reached as the closure of
    # a target without epsilon moves (most states inside an embedded automaton), else as the
    # frozenset of its closure. A closure holds its targets, so a one-state set {q} comes only
    # from the target q itself, and targets are looked up by number first: the two forms never
    # name the same set.
    eps = nfa.eps
    offset = nfa.offset
    accepting_nfa = nfa.accepting
    nclasses = len(classes)
    meter.width = nclasses
    max_states = meter.state_limit()            # by states, and by cells at this width
    timed = meter.deadline is not None
    clock = meter.clock_every()

    def closure(states) -> frozenset:
        stack = list(states)
        seen = set(stack)
        while stack:
            q = stack.pop()
            for t in eps[q]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return frozenset(seen)

    index: dict[frozenset, int] = {frozenset(): 0}
    delta: list = [[0] * nclasses]
    groups: list | None = [()] if with_groups else None
    accepting: set[int] = set()
    todo: list = []                 # (state number, int or frozenset)

    visits = [0, meter.visit_limit()]     # NFA states in the subsets made so far, and the most

    def intern(S: frozenset) -> int:
        i = index.get(S)
        if i is None:
            i = len(delta)
            visits[0] += len(S)
            # the meter counts states as they are created (state 0 is not one), and the visits
            if i > max_states or visits[0] > visits[1] or (timed and (i & clock) == 0):
                meter.states = i - 1
                meter.visits = visits[0] - len(S)
                meter.add(1, len(S))
            index[S] = i
            delta.append(None)
            if groups is not None:
                groups.append(None)
            if not accepting_nfa.isdisjoint(S):
                accepting.add(i)
            todo.append((i, S))
        return i

    def single(t: int) -> int:
        """A new DFA state for the NFA state ``t``, which has no epsilon moves."""
        i = len(delta)
        if i > max_states or (timed and (i & clock) == 0):
            meter.states = i - 1
            meter.add()
        delta.append(None)
        if groups is not None:
            groups.append(None)
        if t in accepting_nfa:
            accepting.add(i)
        todo.append((i, t))
        return i

    # the DFA state of the closure of one NFA target (0: not seen yet), and of several targets
    # by their set
    target_state = [0] * len(eps)
    targets_state: dict[frozenset, int] = {}
    q0 = nfa.start
    start = target_state[q0] = intern(closure((q0,))) if eps[q0] else single(q0)

    def state_of(ts: list) -> int:
        """The DFA state of the closure of the NFA targets ``ts`` (interned on first sight)."""
        t = ts[0]
        if len(ts) > 1:
            key = frozenset(ts)
            if len(key) > 1:
                j = targets_state.get(key)
                if j is None:
                    j = targets_state[key] = intern(closure(ts))
                return j
        j = target_state[t]
        if not j:
            j = target_state[t] = intern(closure((t,))) if eps[t] else single(t)
        return j

    classes_of: dict[int, list[int]] = {}      # bit set -> its classes
    # groups serve tables that will be minimised pair by pair (moderate sizes) only
    groups_max = max(2, GROUPS_MAX_CELLS // max(1, nclasses))
    while todo:
        if groups is not None and len(delta) > groups_max:
            groups = None
        i, S = todo.pop()
        row = [0] * nclasses
        grp = [] if groups is not None else _SINK
        if S.__class__ is int:
            S = (S,)
        seen = 0
        for q in S:
            u = union[q]
            if u is None or seen & u:
                break
            seen |= u
        else:
            # no class has two edges (always so inside an embedded automaton): one target each
            for q in S:
                off = offset[q]
                for cl, t, m in moves[q]:
                    t += off
                    j = target_state[t]
                    if not j:
                        j = target_state[t] = (intern(closure((t,))) if eps[t]
                                               else single(t))
                    for c in cl:
                        row[c] = j
                    if groups is not None:
                        grp.append((j, m))
            delta[i] = row
            if groups is not None:
                groups[i] = grp
            continue
        edges = [(cl, t + offset[q], m) for q in S for cl, t, m in moves[q]]
        if len(edges) > 8:
            # many overlapping edges: class by class
            succ: dict[int, list[int]] = {}
            for cl, t, _ in edges:
                for c in cl:
                    got = succ.get(c)
                    if got is None:
                        succ[c] = [t]
                    else:
                        got.append(t)
            by_j: dict[int, int] = {}
            for c, ts in succ.items():
                j = state_of(ts)
                row[c] = j
                by_j[j] = by_j.get(j, 0) | (1 << c)
            delta[i] = row
            if groups is not None:
                groups[i] = list(by_j.items())
            continue
        # a few overlapping edges: split the classes they cover by the set of edges holding them
        parts: list = []            # (bit set, targets)
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
            j = state_of(ts)
            cl = classes_of.get(pm)
            if cl is None:
                cl = classes_of[pm] = [c for c in range(pm.bit_length()) if pm >> c & 1]
            for c in cl:
                row[c] = j
            grp.append((j, pm))
        delta[i] = row
        if groups is not None:
            groups[i] = grp
    meter.states = len(delta) - 1
    return classes, delta, accepting, start, groups


def _determinize_asserts(nfa: NFA, moves, classes, meter, is_nl, is_word, wid_of):
    eps = nfa.eps
    asserts = nfa.asserts
    accepting_nfa = nfa.accepting
    nclasses = len(classes)

    def closure(items, prev) -> frozenset:
        """items: iterable of (q, obligations frozenset). prev: class just read, None at start."""
        stack = list(items)
        seen = set(stack)
        while stack:
            q, obs = stack.pop()
            for t in eps[q]:
                item = (t, obs)
                if item not in seen:
                    seen.add(item)
                    stack.append(item)
            for a, t in asserts[q]:
                r = _lookbehind(a, prev, is_nl, is_word, wid_of)
                if r is _FAIL:
                    continue
                nobs = obs if r is _OK else obs | {r}
                if _contradictory(nobs):
                    continue
                item = (t, nobs)
                if item not in seen:
                    seen.add(item)
                    stack.append(item)
        return frozenset(seen)

    def step_obligations(obs, c):
        out = set()
        for ob in obs:
            r = _discharge(ob, c, is_nl, is_word)
            if r is _FAIL:
                return None
            if r is not _OK:
                out.add(r)
        return frozenset(out)

    empty = frozenset()

    def accepts_at_end(S: frozenset) -> bool:
        return any(q in accepting_nfa and all(_ok_at_end(ob) for ob in obs) for q, obs in S)

    meter.width = nclasses
    intern = _Interner(nclasses, meter, accepts_at_end)
    start = intern(closure([(nfa.start, empty)], None))
    while intern.todo:
        S = intern.todo.pop()
        row = [0] * nclasses
        for c in range(nclasses):
            nxt = []
            for q, obs in S:
                ts = moves[q].get(c)
                if not ts:
                    continue
                nobs = step_obligations(obs, c) if obs else empty
                if nobs is None:
                    continue
                nxt.extend((t, nobs) for t in ts)
            if nxt:
                T = closure(nxt, c)
                row[c] = intern(T) if T else 0
        intern.delta[intern.index[S]] = row
    return classes, intern.delta, intern.accepting, start


def _contradictory(obs: frozenset) -> bool:
    """Obligations no continuation can satisfy together (kept small, not exhaustive)."""
    if len(obs) < 2:
        return False
    kinds = {ob[0] for ob in obs}
    if "end" in kinds and (kinds & {"w", "nw!"}):
        return True
    ws = {ob[1] for ob in obs if ob[0] == "w"}
    nws = {ob[1] for ob in obs if ob[0] in ("nw", "nw!")}
    return bool(ws & nws)
