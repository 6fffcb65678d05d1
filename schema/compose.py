"""Deterministic composition of minimal DFAs joined by epsilon moves, without a full subset
construction.

Object and array automata (:mod:`.jsontext`) are "skeletons" of counter states whose epsilon moves
lead into embedded member texts (key, colon, value, whitespace, comma), each a minimal DFA whose
accepting states lead on by epsilon to a skeleton state. The general route is an NFA determinised
state set by state set; here a state set that is the closure of *one* state ``s`` of an embedded
DFA ``m`` (the usual case inside a member value: once the key is read, only that value can go on)
is not explored: every state of ``m`` is copied as a block of table rows at once (array
operations), its accepting rows completed with the moves of what follows ``m``. That is exact when
those moves never share a character with the moves ``m`` itself makes from an accepting state
(JSON values end before ``ws , } ]``); an embedded DFA for which that fails is explored state set
by state set like any other. Only the state sets over several embedded states (the choice of the
next key after ``{`` or ``,``) are built one by one.

A small result is minimised at once. A large one is returned as a :class:`LazyDFA`: co-reachable
but not minimised, its table kept as an array, minimised only when an operation needs the minimal
automaton (a product, the compiled schema at the top). Nested in a larger composition it is copied
as it is, so a deep schema is minimised once instead of once per nesting level. (The composition of
minimal members is itself minimal in practice; minimising at the top keeps the contract whatever.)

The language is the one the NFA of the same parts accepts (``tests/schema/test_compose.py``
compares both constructions).

Example
-------
>>> from tokenfsm.automata.dfa import DFA
>>> c = Composer()
>>> end = c.node()
>>> mid = c.chain([DFA.literal(","), DFA.from_regex("[0-9]+")], end)
>>> start = c.chain([DFA.from_regex("[0-9]+")], end)
>>> c.link(end, mid)
>>> d = c.build(start, end)
>>> d.accepts("1,22,3"), d.accepts("1,"), d == DFA.from_regex("[0-9]+(,[0-9]+)*")
(True, False, True)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from tokenfsm.automata.arrays import unique_rows
from tokenfsm.automata.cache import ByteLRU
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA, _merge_classes, _segments
from tokenfsm.automata.errors import DEFAULT_BUDGET, Budget, BudgetExceeded
from tokenfsm.automata.minimize import ARRAY_MIN_CELLS, minimize_table, prune_table

__all__ = ["Composer", "LazyDFA", "union_composed"]

#: Embedded automata with at least this many live states are copied as blocks when possible.
BLOCK_MIN = 2
#: Compositions of at least this many table cells are returned unminimised (:class:`LazyDFA`).
LAZY_MIN_CELLS = 4_000
#: Minimal automata of :class:`LazyDFA` tables, kept across compilations.
MINIMAL = ByteLRU("schema.compose.minimal", 32 << 20)


def _joint(dfas: Sequence[DFA]) -> tuple[list[CharSet], list[np.ndarray]]:
    """The common refinement of the alphabet partitions of ``dfas``: its classes, and for each
    automaton an array giving its own class of each joint class."""
    bounds = set()
    for m in dfas:
        for lo, hi, _ in m._segs:
            bounds.add(lo)
            bounds.add(hi + 1)
    B = np.array(sorted(bounds), dtype=np.int64)
    B = B[B <= 0x10FFFF]
    ends = np.append(B[1:] - 1, 0x10FFFF)
    # elementary intervals [B[i], ends[i]]; those outside every segment (surrogates) dropped
    first = dfas[0]
    seg_lo = np.array([s[0] for s in first._segs], dtype=np.int64)
    seg_hi = np.array([s[1] for s in first._segs], dtype=np.int64)
    at = np.searchsorted(seg_lo, B, side="right") - 1
    inside = (at >= 0) & (B <= seg_hi[np.maximum(at, 0)])
    B, ends = B[inside], ends[inside]
    sig = np.empty((len(dfas), B.size), dtype=np.int64)
    for i, m in enumerate(dfas):
        starts = np.asarray(m._starts, dtype=np.int64)
        cls = np.asarray(m._seg_class, dtype=np.int64)
        sig[i] = cls[np.searchsorted(starts, B, side="right") - 1]
    first_of, inverse = unique_rows(sig.T)
    # joint classes numbered by their first interval (so sorted by least member)
    order = np.argsort(first_of, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    jcls = rank[inverse]
    ranges: list[list] = [[] for _ in range(order.size)]
    for j, lo, hi in zip(jcls.tolist(), B.tolist(), ends.tolist()):
        ranges[j].append((lo, hi))
    # (canonical as they come: ascending, without surrogates, and two adjacent intervals are
    # never of one joint class, since some automaton's class changes where one ends)
    classes = [CharSet._trusted(tuple(r)) for r in ranges]
    reps = first_of[order]
    return classes, [sig[i][reps] for i in range(len(dfas))]


class Composer:
    """Skeleton nodes with epsilon moves into embedded minimal DFAs; :meth:`build` returns the
    minimal DFA of the texts from a start node to the accepting node."""

    def __init__(self):
        self.node_links: list[list[tuple[str, int]]] = []  # node -> [("n", node) | ("p", part)]
        self.parts: list[tuple[DFA, int]] = []              # part -> (minimal DFA, exit node)
        self.suffixes: dict[tuple[int, int], int] = {}      # (id of a part, exit) -> entry node

    def node(self) -> int:
        self.node_links.append([])
        return len(self.node_links) - 1

    def link(self, a: int, b: int) -> None:
        """An epsilon move from node ``a`` to node ``b``."""
        self.node_links[a].append(("n", b))

    def chain(self, parts: Sequence[DFA], exit_: int) -> int | None:
        """A node from which the concatenation of ``parts`` leads to ``exit_``; None when the
        concatenation is empty."""
        entry = exit_
        for d in reversed(parts):
            m = d if isinstance(d, LazyDFA) else d.minimize()
            if m.start == 0:
                return None
            # chains that end alike share their common suffix (the member after "," and the
            # first member, say): one copy of a value per place it can be followed from
            key = (id(m), entry)
            got = self.suffixes.get(key)
            if got is None:
                self.parts.append((m, entry))
                got = self.node()
                self.node_links[got].append(("p", len(self.parts) - 1))
                self.suffixes[key] = got
            entry = got
        return entry

    # ------------------------------------------------------------------ determinisation
    def build(self, start: int, accept: int, budget: Budget | None = None,
              operation: str = "compose") -> DFA:
        budget = budget or DEFAULT_BUDGET
        meter = budget.meter(operation)
        parts = self.parts
        if not parts:
            return DFA.epsilon() if self._reaches(start, accept) else DFA.empty()
        distinct: dict[int, int] = {}
        dfas: list[DFA] = []
        for m, _ in parts:
            if id(m) not in distinct:
                distinct[id(m)] = len(dfas)
                dfas.append(m)
        classes, colmaps = _joint(dfas)
        J = len(classes)
        # global item numbering: part k, state s (1..n-1) -> base[k] + s - 1
        base = []
        total = 0
        for m, _ in parts:
            base.append(total)
            total += _size(m) - 1
        # every copy of a part is numbered (a part embedded at many places many times over):
        # charged as table cells before the numbering is allocated
        if total > budget.max_cells:
            raise BudgetExceeded(budget.max_cells, total, operation, kind="cells")
        item_part = np.empty(total, dtype=np.int64)
        for k, (m, _) in enumerate(parts):
            item_part[base[k]:base[k] + _size(m) - 1] = k
        item_part = item_part.tolist()
        tables: dict[int, np.ndarray] = {}   # distinct automaton -> its table over joint classes

        def table(k: int) -> np.ndarray:
            i = distinct[id(parts[k][0])]
            t = tables.get(i)
            if t is None:
                m = dfas[i]
                a = m._array if isinstance(m, LazyDFA) else np.asarray(m.delta, dtype=np.int64)
                t = tables[i] = a[:, colmaps[i]]
            return t

        # node closures: the part entries and whether the accepting node is reached
        node_memo: dict[int, tuple[frozenset, bool]] = {}

        def node_closure(q: int) -> tuple[frozenset, bool]:
            got = node_memo.get(q)
            if got is not None:
                return got
            items, acc, seen, stack = set(), False, {q}, [q]
            while stack:
                x = stack.pop()
                if x == accept:
                    acc = True
                for kind, y in self.node_links[x]:
                    if kind == "n":
                        if y not in seen:
                            seen.add(y)
                            stack.append(y)
                    else:
                        m = parts[y][0]
                        items.add(base[y] + m.start - 1)
            meter.add(0, visits=len(seen) + len(items))
            node_memo[q] = got = (frozenset(items), acc)
            return got

        accepting_item: dict[int, bool] = {}

        def item_accepts(g: int) -> bool:
            a = accepting_item.get(g)
            if a is None:
                k = item_part[g]
                a = accepting_item[g] = (g - base[k] + 1) in parts[k][0].accepting
            return a

        def closure(kernel) -> tuple[frozenset, bool]:
            out, acc, stack = set(), False, list(kernel)
            while stack:
                g = stack.pop()
                if g in out:
                    continue
                out.add(g)
                if item_accepts(g):
                    items, a = node_closure(parts[item_part[g]][1])
                    acc = acc or a
                    stack.extend(items)
            meter.add(0, visits=len(out))
            return frozenset(out), acc

        # which parts can be copied as blocks: the moves after an accepting state never share
        # a class with the part's own moves from it
        after: dict[int, tuple[frozenset, bool]] = {}
        blockable = []
        for k, (m, exit_) in enumerate(parts):
            ok = _size(m) - 1 >= BLOCK_MIN
            if ok:
                x_items, x_acc = closure(node_closure(exit_)[0])
                after[k] = (x_items, x_acc or node_closure(exit_)[1])
                follow = np.zeros(J, dtype=bool)
                for g in after[k][0]:
                    kk = item_part[g]
                    follow |= table(kk)[g - base[kk] + 1] != 0
                acc = sorted(m.accepting)
                if acc and table(k)[acc][:, follow].any():
                    ok = False
            blockable.append(ok)

        rows: list = [None]          # state -> row (list over joint classes) or None for blocks
        accepting_states: set = set()
        interned: dict[frozenset, int] = {}
        block_at: dict[int, int] = {}  # part -> first state number of its block
        blocks: list[int] = []
        todo: list[tuple[int, frozenset]] = []
        item_rows: dict[int, list] = {}

        def moves_of(g: int) -> list:
            r = item_rows.get(g)
            if r is None:
                k = item_part[g]
                t = table(k)[g - base[k] + 1]
                nz = np.flatnonzero(t)
                r = item_rows[g] = list(zip(nz.tolist(), (t[nz] + (base[k] - 1)).tolist()))
            return r

        def state_of(kernel: frozenset) -> int:
            if len(kernel) == 1:
                (g,) = kernel
                k = item_part[g]
                if blockable[k]:
                    at = block_at.get(k)
                    if at is None:
                        at = block_at[k] = len(rows)
                        n = _size(parts[k][0]) - 1
                        meter.add(n)
                        rows.extend([None] * n)
                        blocks.append(k)
                    return at + g - base[k]
            q = interned.get(kernel)
            if q is None:
                q = interned[kernel] = len(rows)
                rows.append([])
                meter.add()
                todo.append((q, kernel))
            return q

        def row_of(items) -> list:
            by_class: dict[int, set] = {}
            for g in items:
                for j, t in moves_of(g):
                    s = by_class.get(j)
                    if s is None:
                        by_class[j] = {t}
                    else:
                        s.add(t)
            row = [0] * J
            seen: dict[frozenset, int] = {}
            for j, s in by_class.items():
                kern = frozenset(s)
                q = seen.get(kern)
                if q is None:
                    q = seen[kern] = state_of(kern)
                row[j] = q
            return row

        s_items, s_acc = node_closure(start)
        start_kernel = frozenset(s_items) | frozenset([-1]) if s_acc else frozenset(s_items)
        q0 = len(rows)
        rows.append([])
        meter.add()
        todo.append((q0, start_kernel))
        after_rows: dict[int, list] = {}
        while todo or len(after_rows) < len(blocks):
            while todo:
                q, kernel = todo.pop()
                acc = -1 in kernel
                items, a = closure(g for g in kernel if g != -1)
                rows[q] = row_of(items)
                if acc or a:
                    accepting_states.add(q)
            for k in blocks:
                if k not in after_rows:
                    after_rows[k] = row_of(after[k][0])
        # assemble the table: generic rows, then the blocks (part rows over joint classes,
        # accepting rows completed with the moves that follow the part)
        N = len(rows)
        T = np.zeros((N, J), dtype=np.int64)
        generic = sorted([q0, *interned.values()])      # (the states not in a block)
        if generic:
            T[generic] = np.array([rows[q] for q in generic], dtype=np.int64)
        for k in blocks:
            m = parts[k][0]
            at = block_at[k]
            n = _size(m) - 1
            t = table(k)[1:]
            np.add(t, at - 1, out=T[at:at + n], where=t != 0)     # (T is zero there)
            acc = np.array(sorted(m.accepting), dtype=np.int64)
            if acc.size:
                xrow = np.asarray(after_rows[k], dtype=np.int64)
                sub = T[at + acc - 1]
                T[at + acc - 1] = np.where(sub != 0, sub, xrow[None, :])
                if after[k][1]:
                    accepting_states.update((at + acc - 1).tolist())
        if T.size < LAZY_MIN_CELLS:
            return _minimal(classes, T, accepting_states, q0)
        # co-reachable states, found on the graph of generic states and whole blocks: every
        # state of an embedded automaton (itself co-reachable throughout) reaches one of its
        # accepting states, so a block is co-reachable exactly when what follows it is
        owner = np.arange(N, dtype=np.int64)
        for k in blocks:
            owner[block_at[k]:block_at[k] + _size(parts[k][0]) - 1] = block_at[k]
        preds: dict[int, list] = {}
        for q in generic:
            for x in set(owner[np.asarray(rows[q], dtype=np.int64)].tolist()):
                preds.setdefault(x, []).append(q)
        for k in blocks:
            for x in set(owner[np.asarray(after_rows[k], dtype=np.int64)].tolist()):
                preds.setdefault(x, []).append(block_at[k])
        live = {q for q in generic if q in accepting_states}
        live.update(block_at[k] for k in blocks if after[k][1] and parts[k][0].accepting)
        stack = list(live)
        while stack:
            for p in preds.get(stack.pop(), ()):
                if p not in live:
                    live.add(p)
                    stack.append(p)
        return _trimmed(classes, T, accepting_states, q0, owner, live)

    def _reaches(self, a: int, b: int) -> bool:
        seen, stack = {a}, [a]
        while stack:
            x = stack.pop()
            if x == b:
                return True
            for kind, y in self.node_links[x]:
                if kind == "n" and y not in seen:
                    seen.add(y)
                    stack.append(y)
        return False


class LazyDFA(DFA):
    """A co-reachable (every state can reach acceptance; some may be unreachable), not necessarily
    minimal DFA whose table is kept as an array: what :class:`Composer` returns for large tables. It is minimised once,
    when an operation needs the minimal automaton (:meth:`minimize` is cached), while a
    :class:`Composer` embeds it as it is: nested objects are minimised once, at the top, rather
    than at every level."""

    __slots__ = ("_array", "_min", "_rows")

    def __init__(self, classes, array: np.ndarray, accepting, start):
        # the base fields, without converting the table to tuples
        self.classes = tuple(classes)
        self._array = array
        self._rows = None
        self._min = None
        self.accepting = frozenset(accepting)
        self.start = int(start)
        self._minimal = False
        self._segs = _segments(self.classes)
        self._starts = [x[0] for x in self._segs]
        self._seg_class = [x[2] for x in self._segs]
        self._hash = None
        self._bytes = None
        self._dist = None
        self._edges = None

    @property
    def delta(self):
        if self._rows is None:
            self._rows = self._array.tolist()
        return self._rows

    def minimize(self) -> DFA:
        if self._min is None:
            # the same compositions recur from schema to schema (a Kubernetes object's metadata
            # as a member's value): their minimal automata are kept by their tables
            a = self._array
            key = (self.classes, self.start, a.shape, a.dtype.str,
                   hashlib.blake2b(a.tobytes(), digest_size=16).digest(),
                   hash(self.accepting))
            got = MINIMAL.get(key)
            if got is not None and got[1] == self.accepting and np.array_equal(got[0], a):
                self._min = got[2]
            else:
                self._min = _minimal(list(self.classes), a, self.accepting, self.start)
                m = self._min
                MINIMAL.put(key, (a, self.accepting, m), nbytes=a.nbytes + 16 * len(
                    self.accepting) + 8 * m.num_states * (2 + len(m.classes)) + 400)
        return self._min

    def is_empty(self) -> bool:
        return self.start == 0   # co-reachable: the start is live unless the language is empty

    def reachable(self) -> tuple[np.ndarray, list]:
        """``(table, accepting)`` without the states that only dropped states move into, the
        start aside (a member's automaton copied as a block where the composition enters it
        past its start: a key's name after its first character), the dead state 0 and the start
        1 first, the others in their order (not minimised).

        States are dropped by their count of moves into them, as each drop lowers the counts
        of its targets; a cycle of states that nothing else reaches would stay (a composition
        enters its blocks at their start or in a key's name, which has no cycle). That costs a
        few passes where a breadth-first search costs one per level (Kubernetes kb_1041, its
        key names 70 levels deep: 1.47 -> 0.45 ms, the renumbering included)."""
        a = self._array
        n = a.shape[0]
        into = np.bincount(a.ravel(), minlength=n)
        into[0] += 1
        into[self.start] += 1       # (neither is dropped)
        kept = np.ones(n, dtype=bool)
        drop = np.flatnonzero(into == 0)
        while drop.size:
            kept[drop] = False
            into -= np.bincount(a[drop].ravel(), minlength=n)
            drop = np.flatnonzero((into == 0) & kept)
        kept[0] = kept[self.start] = False
        order = np.concatenate([[0, self.start], np.flatnonzero(kept)])
        number = np.zeros(n, dtype=np.int64)
        number[order] = np.arange(order.size)
        accepting = sorted(int(number[s]) for s in self.accepting if s == self.start or kept[s])
        # (renumbered in place, each entry read before it is written: a second table as large
        # is fresh memory, whose first writes cost more than the renumbering)
        table = a[order]
        number.take(table, out=table, mode="clip")
        return table, accepting

    def to_bytes_as_composed(self):
        """The UTF-8 byte automaton of the states reached (:meth:`reachable`) as they are,
        without minimising them first: a composition of minimal automata is minimal but for a
        few states where its blocks meet (a Kubernetes object's 1,784 states of 1,833 rows all
        are), and the minimisation would cost more than the lowering. Nor are its states
        numbered canonically: they come in the order :meth:`reachable` gives, then the states
        inside UTF-8 sequences. What an index needs; :meth:`to_bytes` stays the canonical
        minimal automaton."""
        from tokenfsm.automata.bytedfa import ByteDFA, _lower_minimal

        if self._min is not None:
            return self._min.to_bytes()
        if self.start == 0:
            return self.to_bytes()
        table, accepting = self.reachable()
        view = _TableView(table, self.classes, accepting, 1, self._segs)
        return ByteDFA._trusted(*_lower_minimal(view, numbered=False))

    def prune(self) -> DFA:
        return self.minimize()


class _TableView:
    """What :func:`~tokenfsm.automata.bytedfa._lower_minimal` reads of a code-point DFA."""

    __slots__ = ("delta", "classes", "accepting", "start", "_segs")

    def __init__(self, delta, classes, accepting, start, segs):
        self.delta, self.classes, self.accepting = delta, classes, accepting
        self.start, self._segs = start, segs


def _size(m: DFA) -> int:
    """Number of table rows (the dead state included), without building a lazy table's rows."""
    return len(m._array) if isinstance(m, LazyDFA) else len(m.delta)


def _merge_columns(classes: list[CharSet], T: np.ndarray) -> tuple[list[CharSet], np.ndarray]:
    """Classes whose columns are identical merged into one (classes sorted by least member)."""
    J = T.shape[1]
    if J <= 1:
        return classes, T
    rng = np.random.default_rng(12345)
    h = T.T @ rng.integers(1, 2**61, size=T.shape[0], dtype=np.int64)   # wraps: a hash
    groups: dict = {}
    for c, x in enumerate(h.tolist()):
        for g in groups.setdefault(x, []):
            if np.array_equal(T[:, g[0]], T[:, c]):
                g.append(c)
                break
        else:
            groups[x].append([c])
    gs = [g for lst in groups.values() for g in lst]
    if len(gs) == J:
        return classes, T
    merged = [CharSet.union_of_disjoint([classes[c] for c in g]) if len(g) > 1 else classes[g[0]]
              for g in gs]
    order = sorted(range(len(gs)), key=lambda i: merged[i].min())
    return [merged[i] for i in order], np.ascontiguousarray(T[:, [gs[i][0] for i in order]])


def _minimal(classes: list[CharSet], T: np.ndarray, accepting, start: int) -> DFA:
    """The canonical minimal DFA of a table over ``classes`` (identical columns merged first)."""
    classes, T = _merge_columns(classes, T)
    # small tables are minimised over lists, large ones over arrays
    delta, accepting, start = minimize_table(T if T.size >= ARRAY_MIN_CELLS else T.tolist(),
                                             accepting, start)
    classes, delta, changed = _merge_classes(list(classes), delta)
    if changed and len(delta) > 1:
        delta, accepting, start = prune_table(delta, accepting, start)
    return DFA(classes, delta, accepting, start, _minimal=True)


def _trimmed(classes: list[CharSet], T: np.ndarray, accepting, start: int, owner: np.ndarray,
             live: set) -> DFA:
    """The co-reachable part of a table (``owner`` maps each state to its node in ``live``, the
    set of co-reachable nodes), identical columns merged: a :class:`LazyDFA`."""
    N = T.shape[0]
    node_live = np.zeros(N, dtype=bool)
    if live:
        node_live[np.fromiter(live, dtype=np.int64, count=len(live))] = True
    keep = node_live[owner]
    keep[0] = False
    if not keep[start]:
        return DFA.empty()
    if keep[1:].all():
        T2, new = T, None
    else:
        states = np.flatnonzero(keep)
        new = np.zeros(N, dtype=np.int64)
        new[states] = np.arange(1, states.size + 1)
        T2 = np.empty((states.size + 1, T.shape[1]), dtype=np.int64)
        T2[0] = 0
        T2[1:] = new[T[states]]
    acc = [a for a in accepting if keep[a]]
    acc2 = set(acc) if new is None else set(new[np.asarray(acc, dtype=np.int64)].tolist())
    start = start if new is None else int(new[start])
    classes, T2 = _merge_columns(classes, T2)
    return LazyDFA(classes, T2, acc2, start)


def union_composed(ds: Sequence[DFA], budget: Budget | None = None) -> DFA:
    """The union of ``ds`` built by a :class:`Composer` (a start node linked to each), or
    side by side when their first characters are disjoint (see :func:`_union_disjoint`)."""
    got = _union_disjoint(ds, budget)
    if got is not None:
        return got
    c = Composer()
    accept = c.node()
    start = c.node()
    for d in ds:
        entry = c.chain([d], accept)
        if entry is not None:
            c.link(start, entry)
    return c.build(start, accept, budget, "union")


def _union_disjoint(ds: Sequence[DFA], budget: Budget | None = None) -> DFA | None:
    """The union of co-reachable automata whose start states move on pairwise disjoint
    characters (texts of different JSON types: a value's first character tells its type), as a
    :class:`LazyDFA`: their tables side by side over the joint classes and a new start state
    whose row is the union of theirs. None when two start states share a character (or there is
    nothing to put side by side)."""
    ds = [d if isinstance(d, LazyDFA) else d.minimize() for d in ds if not d.is_empty()]
    if len(ds) < 2:
        return None
    classes, colmaps = _joint(ds)
    arrays = [d._array if isinstance(d, LazyDFA) else np.asarray(d.delta, dtype=np.int64)
              for d in ds]
    firsts = np.stack([a[d.start][cm] != 0 for d, a, cm in zip(ds, arrays, colmaps)])
    if (firsts.sum(axis=0) > 1).any():
        return None
    total = 2 + sum(a.shape[0] - 1 for a in arrays)   # dead, new start, every part's live rows
    (budget or DEFAULT_BUDGET).meter("union").add(total - 1)
    T = np.zeros((total, len(classes)), dtype=np.int64)
    accepting: set = set()
    at = 2
    for d, a, cm in zip(ds, arrays, colmaps):
        n = a.shape[0] - 1
        rows = a[1:][:, cm]
        np.add(rows, at - 1, out=T[at:at + n], where=rows != 0)   # moves into the dead state stay 0
        T[1] += T[at + d.start - 1]                  # the start rows touch disjoint columns
        accepting.update(x + at - 1 for x in d.accepting)
        if d.start in d.accepting:
            accepting.add(1)
        at += n
    return LazyDFA(classes, T, accepting, 1)
