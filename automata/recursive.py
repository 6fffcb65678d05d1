"""Recursive automata: small modules that call each other, walked with a stack.

A recursive grammar (a JSON Schema whose definitions refer to themselves) unrolled to a fixed
depth is one large DFA: every nesting level is a fresh copy of the definition. Here the pieces stay
small. A *module* is an ordinary code-point :class:`~.dfa.DFA`; a transition on a **hole** code
point ``h`` means "here comes one text of module ``calls[h]``, then go on". Holes are the ASCII
control characters that JSON text never holds raw (:data:`HOLES`), so in UTF-8 a hole is one byte.

There are 28 holes. For more callees, ``calls`` may bind **pairs** of holes instead (2-character
strings over :data:`HOLES`, :data:`HOLE_PAIRS`; 784 of them): a module's text is then read left to
right, hole characters come only as complete bound pairs, and each pair stands for one text of its
callee. All keys of one ``calls`` are single holes or all are pairs. Call sites are found on paths
from the states after complete pairs (``q -h1-> m -h2-> r`` calls from ``q`` and returns to
``r``); the state ``m`` between the two holes is never walked and has no place in the byte form.

:class:`RecursiveDFA` defines the language: exactly the unrolled, depth-cut one. A call to module
``k`` is allowed only while fewer than ``max_depth`` frames of ``k`` are on the stack (the new
frame counts, the top module's own frame does not); a hole nested deeper is the empty language,
and whatever can then no longer complete is trimmed away.

:class:`PushdownBytes` is the byte form a token masker walks. Every reachable (module, per-module
frame counts) configuration is a *variant* (its holes into exhausted or empty callees removed,
then trimmed), and the variants are numbered into one global byte table, so a call statically
knows its callee variant and the stack holds only return states. One byte either moves in the
current module, or starts a call (push the return state), or ends the current module (pop and
retry); construction checks that at most one of these ever applies
(:class:`NondeterministicCall` otherwise).

Example
-------
>>> from tokenfsm.automata import DFA
>>> arr = DFA.from_regex("\\\\[(?:(?:[0-9]|\\x01)(?:,(?:[0-9]|\\x01))*)?\\\\]")
>>> r = RecursiveDFA([arr], {0x01: 0}, max_depth=2)
>>> r.accepts("[1,[2,[]]]"), r.accepts("[[[[]]]]")
(True, False)
>>> r.to_dfa().accepts("[1,[2,[]]]")
True

The same with a pair of holes:

>>> arr2 = DFA.from_regex("\\\\[(?:(?:[0-9]|\\x01\\x05)(?:,(?:[0-9]|\\x01\\x05))*)?\\\\]")
>>> r2 = RecursiveDFA([arr2], {"\\x01\\x05": 0}, max_depth=2)
>>> r2.accepts("[1,[2,[]]]"), r2.accepts("[[[[]]]]"), r2.to_dfa() == r.to_dfa()
(True, False, True)
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .charset import CharSet, refine
from .dfa import DFA, _edge_lists, _embed
from .errors import DEFAULT_BUDGET, AutomatonError, Budget, BudgetExceeded, NondeterministicCall
from .nfa import NFA

__all__ = ["HOLES", "HOLE_SET", "HOLE_PAIRS", "RecursiveDFA", "PushdownBytes",
           "NondeterministicCall"]

#: Code points that stand for a call: the ASCII controls JSON text never holds raw (never NUL,
#: tab, newline or carriage return).
HOLES: tuple[int, ...] = tuple(list(range(0x01, 0x09)) + [0x0B, 0x0C] + list(range(0x0E, 0x20)))
HOLE_SET = CharSet([(h, h) for h in HOLES])
_HOLE_ARRAY = np.array(HOLES, dtype=np.int64)
_HOLE_CHARS = tuple(chr(h) for h in HOLES)
_NONHOLE_BYTES = np.array([b for b in range(256) if b not in HOLES], dtype=np.int64)
#: The 784 pairs of holes, ``HOLE_PAIRS[i] == chr(HOLES[i // 28]) + chr(HOLES[i % 28])``: keys of
#: ``calls`` when 28 single holes are not enough.
HOLE_PAIRS: tuple[str, ...] = tuple(a + b for a in _HOLE_CHARS for b in _HOLE_CHARS)
_HOLES_TEXT = "U+0001-U+0008, U+000B, U+000C, U+000E-U+001F"


def _show_byte(b: int) -> str:
    return f"0x{b:02X}" + (f" {chr(b)!r}" if 0x20 <= b < 0x7F else "")


def _lowest_bit(x: int) -> int:
    return (x & -x).bit_length() - 1


def _show_key(key) -> str:
    """A key of ``calls`` for messages: a hole code point or a pair of holes."""
    if isinstance(key, str):
        return "pair " + " ".join(f"U+{ord(c):04X}" for c in key)
    return f"hole U+{key:04X}"


def _call_key(h):
    """A key of ``calls`` checked: a hole code point (int) or a pair of holes (2-character str)."""
    if isinstance(h, str) and len(h) == 1:
        h = ord(h)
    if isinstance(h, str) and len(h) == 2:
        for c in h:
            if ord(c) not in HOLES:
                raise AutomatonError(f"pair {h!r}: U+{ord(c):04X} is not one of HOLES "
                                     f"({_HOLES_TEXT})")
        return h
    if isinstance(h, str):
        raise AutomatonError(f"hole {h!r} is not one of HOLES ({_HOLES_TEXT}), nor a pair of "
                             "them (a 2-character str)")
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or int(h) not in HOLES:
        raise AutomatonError(f"hole {h!r} is not one of HOLES ({_HOLES_TEXT})")
    return int(h)


def _below(succ: list) -> list[int]:
    """Per node of the graph ``succ``, the bit set of the nodes it reaches by one or more edges
    (strongly connected components, callees first)."""
    n = len(succ)
    index = [-1] * n
    low = [0] * n
    on = [False] * n
    comp = [-1] * n
    reach: list[int] = []                 # per component
    st: list[int] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        st.append(root)
        on[root] = True
        work = [[root, 0]]
        while work:
            top = work[-1]
            v, i = top
            if i < len(succ[v]):
                top[1] = i + 1
                w = succ[v][i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    st.append(w)
                    on[w] = True
                    work.append([w, 0])
                elif on[w] and index[w] < low[v]:
                    low[v] = index[w]
                continue
            work.pop()
            if work and low[v] < low[work[-1][0]]:
                low[work[-1][0]] = low[v]
            if low[v] != index[v]:
                continue
            c = len(reach)
            members = []
            while True:
                w = st.pop()
                on[w] = False
                comp[w] = c
                members.append(w)
                if w == v:
                    break
            r = 0
            for u in members:
                for w in succ[u]:
                    r |= 1 << w
                    if comp[w] != c:
                        r |= reach[comp[w]]
            reach.append(r)
    return [reach[comp[v]] for v in range(n)]


class _PairError(Exception):
    """What :func:`_pair_sites` found wrong (formatted by the caller, who knows the module)."""

    def __init__(self, kind: str, state: int, first: int, second: int = -1):
        super().__init__(kind)
        self.kind, self.state, self.first, self.second = kind, state, first, second


def _sparse(table: np.ndarray) -> tuple:
    """The moves of a transition table as ``(state, column, target)`` arrays, by state."""
    src, col = np.nonzero(table)
    return src, col, table[src, col]


def _pair_sites(moves: tuple, S: int, accepting: np.ndarray, start: int, cols: np.ndarray,
                nonhole: np.ndarray, bound) -> tuple:
    """The call sites of an automaton whose holes come in pairs, found on paths from the start.

    ``moves``: its transitions (:func:`_sparse`) over states ``0 .. S - 1`` (state 0 dead,
    every other state reachable and live); ``accepting``: bool ``[S]``; ``cols``: the column of
    each hole (in :data:`HOLES` order); ``nonhole``: bool per column, whether some other symbol
    reads it; ``bound``: the pairs ``calls`` binds (None: not checked).

    A state is at a *boundary* (after complete pairs) or *inside* a pair: the start, accepting
    states, states that move on a non-hole symbol and targets of such moves are boundaries; a hole
    move flips the phase. Returns ``(inside, sites)``: bool ``[S]`` (None when nothing moves on a
    hole) and the sites ``(q, i1, m, i2, r)``: boundary ``q`` reads hole ``HOLES[i1]`` to the
    inside state ``m``, which reads ``HOLES[i2]`` to ``r``. Raises :class:`_PairError`.
    """
    allsrc, allcol, alldst = moves
    is_hole = np.zeros(nonhole.shape[0], dtype=bool)
    is_hole[cols] = True
    h = is_hole[allcol]
    if not h.any():
        return None, []
    src, ci, dst = allsrc[h], allcol[h], alldst[h]
    # the hole moves (state, hole index, target); a column may stand for several holes
    holes_of: dict[int, list] = {}
    for i, c in enumerate(cols.tolist()):
        holes_of.setdefault(c, []).append(i)
    out: dict[int, list] = {}
    for s, c, t in zip(src.tolist(), ci.tolist(), dst.tolist()):
        got = out.get(s)
        if got is None:
            got = out[s] = []
        for i in holes_of[c]:
            got.append((i, t))
    ends = np.unique(np.concatenate([src, dst]))
    # boundaries for sure: the start, accepting states, states that move on another symbol,
    # states that another symbol reaches
    other = nonhole[allcol]
    plain = np.zeros(S, dtype=bool)
    plain[allsrc[other]] = True
    anchor = plain | np.asarray(accepting, dtype=bool)
    anchor[alldst[other]] = True
    plain = dict(zip(ends.tolist(), plain[ends].tolist()))
    phase = {x: 0 for x in ends[anchor[ends]].tolist()}
    phase[start] = 0
    todo = [s for s in out if s in phase]     # first in, first out: errors nearest the start
    for s in todo:
        want = 1 - phase[s]
        for i, t in out[s]:
            got = phase.get(t)
            if got is None:
                phase[t] = want
                if t in out:
                    todo.append(t)
            elif got != want:
                if want and (plain[t] or accepting[t]):
                    raise _PairError("dangling", t, i)
                raise _PairError("conflict", t, i)
    sites = []
    for q, hops in out.items():
        if phase.get(q) != 0:
            continue
        for i1, m in hops:
            for i2, r in out.get(m, ()):
                if bound is not None and _HOLE_CHARS[i1] + _HOLE_CHARS[i2] not in bound:
                    raise _PairError("unbound", q, i1, i2)
                sites.append((q, i1, m, i2, r))
    inside = np.zeros(S, dtype=bool)
    inside[[x for x, p in phase.items() if p]] = True
    return inside, sites


class _Variant:
    """One (module, frame counts) configuration: its trimmed code-point DFA and live calls."""

    __slots__ = ("module", "frames", "dfa", "callees", "calls_at", "index", "num_states",
                 "inside", "moves")

    def __init__(self, module: int, frames: tuple, dfa: DFA, callees: dict, hole_moves: dict,
                 inside: np.ndarray | None = None):
        self.module = module
        self.frames = frames            # frames of each module on the stack (full vector)
        self.dfa = dfa                  # minimal; hole code points are ordinary symbols
        self.callees = callees          # hole code point (or pair) -> callee _Variant (live only)
        # pairs: the states of dfa.to_bytes() inside a pair (never walked), and per pair its
        # (boundary state, return state) moves in that byte automaton; None for single holes
        self.inside = inside
        self.moves = hole_moves if inside is not None else None
        self.num_states = len(dfa.delta) - 1 - (0 if inside is None else int(inside.sum()))
        # per state: the distinct (callee, return state) pairs of its hole moves
        calls_at: dict[int, list] = {}
        for h, w in callees.items():
            for s, t in hole_moves[h]:
                got = calls_at.setdefault(s, [])
                if (w, t) not in got:
                    got.append((w, t))
        self.calls_at = calls_at
        self.index = -1


class RecursiveDFA:
    """Modules (code-point DFAs) whose hole transitions call each other, up to a depth.

    Parameters
    ----------
    modules : sequence of DFA
        The modules. A transition on a hole code point ``h`` of :data:`HOLES` reads one text of
        module ``calls[h]``; a module may not move on a hole that ``calls`` does not bind.
    calls : mapping int -> int, or mapping str -> int
        Hole code point (an int, or a 1-character str) -> index into ``modules``; or, for more
        than 28 callees, pair of holes (a 2-character str over :data:`HOLES`, see
        :data:`HOLE_PAIRS`) -> index into ``modules``. All keys are single holes or all are
        pairs. With pairs, hole characters may occur in a module's texts only as complete bound
        pairs (read left to right); each pair reads one text of its callee. Callee modules must
        not accept the empty text.
    start : int
        The top module (its own frame is not counted).
    max_depth : int
        A call to module ``k`` is allowed only while fewer than ``max_depth`` frames of ``k`` are
        on the stack, the new frame included (0: no calls at all).
    budget : Budget, optional
        Bounds the depth variants and the byte table :meth:`to_bytes` builds (default
        ``DEFAULT_BUDGET``); :meth:`to_dfa` takes its own.

    Raises
    ------
    AutomatonError
        A hole outside :data:`HOLES`, single holes and pairs mixed in ``calls``, a callee or start
        index out of range, a callee module that accepts the empty text, a module moving on an
        unbound hole (or pair), a module with half a pair where its text may end or go on with
        another character, ``max_depth < 0``.
    """

    __slots__ = ("modules", "calls", "start", "max_depth", "budget", "_split", "_top", "_variants",
                 "_bytes", "_dfa", "_pairs", "_sparse")

    def __init__(self, modules: Sequence[DFA], calls: Mapping[int, int], start: int = 0,
                 max_depth: int = 3, budget: Budget | None = None):
        modules = tuple(modules)
        if not modules:
            raise AutomatonError("a recursive automaton needs at least one module")
        for i, m in enumerate(modules):
            if not isinstance(m, DFA):
                raise AutomatonError(f"module {i} is a {type(m).__name__}, not a DFA")
        if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) or max_depth < 0:
            raise AutomatonError(f"max_depth must be a non-negative int, got {max_depth!r}")
        if isinstance(start, bool) or not isinstance(start, (int, np.integer)) \
                or not 0 <= start < len(modules):
            raise AutomatonError(f"start module {start!r} out of range for {len(modules)} modules")
        table: dict = {}
        for h, k in dict(calls).items():
            h = _call_key(h)
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(modules):
                raise AutomatonError(f"{_show_key(h)} calls module {k!r}, out of range for "
                                     f"{len(modules)} modules")
            table[h] = int(k)
        pairs = any(isinstance(h, str) for h in table)
        if pairs and not all(isinstance(h, str) for h in table):
            single = next(h for h in table if not isinstance(h, str))
            pair = next(h for h in table if isinstance(h, str))
            raise AutomatonError(f"calls mixes single holes and pairs of holes ({_show_key(single)}"
                                 f" and {_show_key(pair)}): its keys are all one hole character "
                                 "or all two")
        for h, k in sorted(table.items()):
            m = modules[k].minimize()
            if m.start in m.accepting:
                raise AutomatonError(f"module {k} (called by {_show_key(h)}) accepts the empty "
                                     "text; a callee must read at least one character")
        self.modules = modules
        self.calls = table
        self.start = int(start)
        self.max_depth = int(max_depth)
        self.budget = budget or DEFAULT_BUDGET
        self._split = [None] * len(modules)
        self._top = None
        self._variants = None
        self._bytes = None
        self._dfa = None
        self._pairs = pairs
        self._sparse: dict[int, tuple] = {}
        for k in range(len(modules)):
            if pairs:
                self._pair_split(k)      # rejects unbound pairs and half pairs now
            else:
                self._module_split(k)    # rejects unbound holes now

    def __reduce__(self):
        # the modules without their cached byte lowerings (rebuilt on demand)
        plain = tuple(DFA(m.classes, m.delta, m.accepting, m.start, m._minimal) for m in self.modules)
        return (RecursiveDFA, (plain, self.calls, self.start, self.max_depth, self.budget))

    def __repr__(self) -> str:
        return (f"<RecursiveDFA: {len(self.modules)} modules, {len(self.calls)} "
                f"{'hole pairs' if self._pairs else 'holes'}, start {self.start}, "
                f"max_depth {self.max_depth}>")

    # ------------------------------------------------------------------ variants
    def _module_split(self, k: int):
        """Module ``k`` with every hole its own class: (classes, delta array, accepting, start,
        {hole: column} of the holes it moves on)."""
        got = self._split[k]
        if got is not None:
            return got
        m = self.modules[k].minimize()
        if m.start == 0:
            got = (m.classes, np.zeros((1, len(m.classes)), dtype=np.int64), m.accepting, 0, {})
            self._split[k] = got
            return got
        classes = refine(list(m.classes) + [CharSet.of(chr(h)) for h in HOLES])
        old = [m.class_of(cs.representative()) for cs in classes]
        delta = np.asarray(m.delta, dtype=np.int64)[:, old]
        holes = {}
        for c, cs in enumerate(classes):
            if len(cs) == 1 and cs.ranges[0][0] in HOLES and delta[:, c].any():
                h = cs.ranges[0][0]
                if h not in self.calls:
                    s = int(np.flatnonzero(delta[:, c])[0])
                    raise AutomatonError(f"module {k} moves on hole U+{h:04X} (state {s}), which "
                                         "no entry of calls binds")
                holes[h] = c
        got = (classes, delta, m.accepting, m.start, holes)
        self._split[k] = got
        return got

    def _pair_split(self, k: int):
        """Module ``k`` with pair holes: (its minimal DFA, the byte states inside a pair or None,
        {pair: [(boundary state, return state), ...]} in the DFA's byte automaton)."""
        got = self._split[k]
        if got is None:
            d = self.modules[k].minimize()
            got = self._split[k] = (d,) + self._pair_info(d, k)
        return got

    def _pair_info(self, d: DFA, k: int | None) -> tuple:
        """(inside, moves) of the minimal ``d`` over the states of ``d.to_bytes()``; module
        ``k`` is checked (unbound pairs, half pairs), ``None``: not checked."""
        if d.start == 0:
            return None, {}
        b = d.to_bytes()
        cols = b.byte_classes[_HOLE_ARRAY]
        nonhole = np.zeros(b.table.shape[1], dtype=bool)
        nonhole[b.byte_classes[_NONHOLE_BYTES]] = True
        try:
            inside, sites = _pair_sites(self._moves(b), b.table.shape[0], b.accepting,
                                        b.start, cols, nonhole,
                                        None if k is None else self.calls)
        except _PairError as e:
            raise self._pair_error(k, d, b, e) from None
        moves: dict[str, list] = {}
        for q, i1, _, i2, r in sites:
            moves.setdefault(_HOLE_CHARS[i1] + _HOLE_CHARS[i2], []).append((q, r))
        return inside, moves

    def _moves(self, b) -> tuple:
        """:func:`_sparse` of the table of ByteDFA ``b`` (kept: the byte table reuses it)."""
        got = self._sparse.get(id(b))
        if got is None or got[0] is not b:
            got = self._sparse[id(b)] = (b,) + _sparse(b.table)
        return got[1:]

    def _pair_error(self, k: int, d: DFA, b, e: _PairError) -> AutomatonError:
        """The error of module ``k`` found at a state of its byte automaton ``b``, named by the
        state of ``d`` and a shortest text that reaches it."""
        # a shortest byte path to the state (hole and ASCII bytes end characters, so the path
        # is whole UTF-8 characters), then the code-point state it reaches
        reps: dict[int, int] = {}
        for byte, c in enumerate(b.byte_classes.tolist()):
            reps.setdefault(c, byte)
        parent = {b.start: None}
        todo = [b.start]
        while e.state not in parent and todo:
            nxt = []
            for q in todo:
                for c, t in enumerate(b.table[q].tolist()):
                    if t and t not in parent:
                        parent[t] = (q, reps[c])
                        nxt.append(t)
            todo = nxt
        if e.state not in parent:             # (every state of a byte automaton is reachable)
            return AutomatonError(f"module {k}: byte state {e.state}: holes not in complete "
                                  "bound pairs")
        path = []
        q = e.state
        while parent[q] is not None:
            q, byte = parent[q]
            path.append(byte)
        text = bytes(reversed(path)).decode("utf-8")
        s = d.start
        for ch in text:
            s = d.delta[s][d.class_of(ch)]
        where = f"module {k}: state {s} (after {text!r})"
        h1 = f"U+{HOLES[e.first]:04X}"
        if e.kind == "unbound":
            return AutomatonError(f"{where} moves on the pair {h1} U+{HOLES[e.second]:04X}, "
                                  "which no entry of calls binds")
        if e.kind == "dangling":
            what = "may end there"
            if s not in d.accepting:
                for c, t in enumerate(d.delta[s]):
                    rest = d.classes[c] - HOLE_SET
                    if t and rest:
                        what = f"moves on the character {rest.representative()!r}"
                        break
            return AutomatonError(f"{where} is half a pair ({h1}) in, but the module {what}: "
                                  "a dangling half pair (holes come only as complete pairs)")
        return AutomatonError(f"{where} is reached both after complete pairs and halfway into "
                              f"a pair ({h1}): holes come only as complete pairs")

    def _cut_pairs(self, k: int, dead: set) -> DFA:
        """Module ``k`` without its calls on the ``dead`` pairs, minimal."""
        m = self.modules[k].minimize()
        # the holes it moves on, each its own class (the others never move: their classes are
        # dead, or the module would have been refused)
        used = sorted({c for p in self._split[k][2] for c in p})
        classes = refine(list(m.classes) + [CharSet.of(c) for c in used])
        old = [m.class_of(cs.representative()) for cs in classes]
        delta = np.asarray(m.delta, dtype=np.int64)[:, old]
        holder: dict[int, int] = {}
        for c, cs in enumerate(classes):
            for lo, hi in cs.ranges:
                for h in range(lo, min(hi, 0x1F) + 1):
                    holder[h] = c
        cols = np.array([holder[h] for h in HOLES], dtype=np.int64)
        nonhole = np.array([not cs.issubset(HOLE_SET) for cs in classes], dtype=bool)
        accepting = np.zeros(len(delta), dtype=bool)
        accepting[list(m.accepting)] = True
        _, sites = _pair_sites(_sparse(delta), len(delta), accepting, m.start, cols, nonhole,
                               None)
        # the state inside a pair, copied per first hole: then a pair is one transition
        S = len(delta)
        copy: dict[tuple, int] = {}
        rows = []
        for q, i1, mid, i2, _ in sites:
            c = copy.get((i1, mid))
            if c is None:
                c = copy[(i1, mid)] = S + len(rows)
                rows.append(delta[mid].copy())
            delta[q, cols[i1]] = c
            if _HOLE_CHARS[i1] + _HOLE_CHARS[i2] in dead:
                rows[c - S][cols[i2]] = 0
        if rows:
            delta = np.vstack([delta] + rows)
        return DFA._minimal_of(classes, delta.tolist(), m.accepting, m.start)

    def _build_variants(self) -> None:
        """Every variant reachable from the top, trimmed, numbered top first."""
        if self._variants is not None:
            return
        n = len(self.modules)
        D = self.max_depth
        pairs = self._pairs
        # the holes (or pairs) each module moves on, and the modules reachable by one or more
        # calls (a variant depends only on their frame counts), as bit sets
        moved = [list(self._pair_split(k)[2] if pairs else self._module_split(k)[4])
                 for k in range(n)]
        below = _below([sorted({self.calls[h] for h in moved[k]}) for k in range(n)])

        # frames: sorted (module, count) pairs of the modules on the stack
        def key(k, frames):
            b = below[k]
            return (k, tuple([p for p in frames if b >> p[0] & 1]))

        memo: dict[tuple, _Variant | None] = {}
        trimmed: dict[tuple, tuple] = {}
        meter = self.budget.meter("recursive variants")
        # a module that calls itself has a variant per depth, each made before the deepest is
        # known: charged before any is made (max_depth=10**6 stops here, not after 200,000)
        reach = below[self.start] | 1 << self.start
        for k in range(n):
            if below[k] >> k & 1 and reach >> k & 1:
                rows = (len(self._pair_split(k)[0].delta) if pairs
                        else self._module_split(k)[1].shape[0]) - 1
                need = D * max(1, rows)
                if need > self.budget.max_states:
                    raise BudgetExceeded(self.budget.max_states, need, "recursive variants")

        def needed(k, frames):
            """(hole, callee frames, callee key) of the holes of ``k`` still allowed."""
            out = []
            have = dict(frames)
            per: dict[int, tuple] = {}
            for h in moved[k]:
                j = self.calls[h]
                got = per.get(j)
                if got is None:
                    c = have.get(j, 0)
                    got = ()
                    if c < D:
                        f = dict(have)
                        f[j] = c + 1
                        f = tuple(sorted(f.items()))
                        got = (f, key(j, f))
                    per[j] = got
                if got:
                    out.append((h, got[0], got[1]))
            return out

        top_frames = ()
        stack = [[self.start, top_frames, key(self.start, top_frames), None]]
        while stack:
            entry = stack[-1]
            k, frames, kk, need = entry
            if kk in memo:
                stack.pop()
                continue
            if need is None:
                need = entry[3] = needed(k, frames)
            missing = [[self.calls[h], f, fk, None] for h, f, fk in need if fk not in memo]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            full = [0] * n
            for j, c in frames:
                full[j] = c
            full = tuple(full)
            live = {}
            for h, _, fk in need:
                w = memo[fk]
                if w is not None:
                    live[h] = w
            if pairs:
                d, inside, moves = self._pair_split(k)
                meter.add(max(1, len(d.delta) - 1))
                dead = tuple(sorted(p for p in moves if p not in live))
                if dead:
                    got = trimmed.get((k, dead))
                    if got is None:
                        d = self._cut_pairs(k, set(dead))
                        got = trimmed[(k, dead)] = (d,) + self._pair_info(d, None)
                    d, inside, moves = got
                if d.start == 0:
                    memo[kk] = None
                    continue
                callees = {p: live[p] for p in moves}
                memo[kk] = _Variant(k, full, d, callees, moves, inside)
                continue
            classes, delta, accepting, start, holes = self._module_split(k)
            meter.add(max(1, delta.shape[0] - 1))
            dead = tuple(sorted(c for h, c in holes.items() if h not in live))
            # variants with the same holes cut share one automaton (and its byte lowering)
            got = trimmed.get((k, dead))
            if got is None:
                if dead:
                    delta = delta.copy()
                    delta[:, list(dead)] = 0
                    d = DFA._minimal_of(classes, delta.tolist(), accepting, start)
                else:
                    d = self.modules[k].minimize()      # nothing cut: the module as it is
                hole_moves = {}
                for h in holes:
                    if h in live:
                        c = d.class_of(chr(h))
                        moves = [(s, row[c]) for s, row in enumerate(d.delta) if row[c]]
                        if moves:
                            hole_moves[h] = moves
                got = trimmed[(k, dead)] = (d, hole_moves)
            d, hole_moves = got
            if d.start == 0:
                memo[kk] = None
                continue
            callees = {h: live[h] for h in hole_moves}
            memo[kk] = _Variant(k, full, d, callees, hole_moves)
        top = memo[key(self.start, top_frames)]
        order: list[_Variant] = []
        if top is not None:
            top.index = 0
            order.append(top)
            i = 0
            while i < len(order):
                v = order[i]
                i += 1
                for w in v.callees.values():
                    if w.index < 0:
                        w.index = len(order)
                        order.append(w)
        self._top = top
        self._variants = order

    # ------------------------------------------------------------------ queries
    def accepts(self, text: str) -> bool:
        """Whether ``text`` is in the language (the stack walk of its UTF-8 bytes).

        Raises :class:`NondeterministicCall` when the byte form cannot be built (see
        :meth:`to_bytes`); :meth:`to_dfa` decides any grammar."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return self.to_bytes().accepts(data)

    def expanded_states(self, cap: int) -> int:
        """Size of the expansion tree: the sum of the state counts of every module copy that
        unrolling makes (one copy of the callee per call edge). Counting stops once above
        ``cap``: the result is then some number above ``cap``, not the full size."""
        self._build_variants()
        if self._top is None:
            return 0
        limit = cap + 1
        size: dict[int, int] = {}
        # children before parents: the variant call graph is acyclic
        for v in self._postorder():
            total = v.num_states
            for pairs in v.calls_at.values():
                for w, _ in pairs:
                    total += size[w.index]
                    if total >= limit:
                        break
                if total >= limit:
                    break
            size[v.index] = min(total, limit)
        return size[self._top.index]

    def _postorder(self) -> list[_Variant]:
        """The variants, every callee before its callers."""
        out: list[_Variant] = []
        done: set[int] = set()
        stack = [(self._top, False)]
        while stack:
            v, expanded = stack.pop()
            if v.index in done:
                continue
            if expanded:
                done.add(v.index)
                out.append(v)
                continue
            stack.append((v, True))
            for w in v.callees.values():
                if w.index not in done:
                    stack.append((w, False))
        return out

    # ------------------------------------------------------------------ exact expansion
    def to_dfa(self, budget: Budget | None = None) -> DFA:
        """The minimal code-point DFA of the same language (every call expanded).

        Built bottom-up: each variant's holes are substituted by the expansions of their callee
        variants (:meth:`DFA.substitute`; with pairs, each call site's path of two holes is
        replaced by an embedded copy of the callee), one determinisation per variant, each
        under ``budget``.

        Raises
        ------
        BudgetExceeded
            A construction went over ``budget`` (the expansion can be exponentially larger than
            the modules).
        """
        if self._dfa is not None:
            return self._dfa
        self._build_variants()
        if self._top is None:
            self._dfa = DFA.empty()
            return self._dfa
        done: dict[int, DFA] = {}
        for v in self._postorder():
            done[v.index] = _expand(v, done, budget)
        self._dfa = done[self._top.index]
        return self._dfa

    # ------------------------------------------------------------------ byte form
    def to_bytes(self) -> "PushdownBytes":
        """The byte form walked by token masks (built once).

        Raises
        ------
        NondeterministicCall
            The stack walk would be ambiguous somewhere (the message names the module, state
            and byte).
        """
        if self._bytes is None:
            self._bytes = _lower(self)
        return self._bytes


def _expand(v: _Variant, done: dict, budget: Budget | None) -> DFA:
    """The DFA of variant ``v`` with every hole replaced by its callee's expansion."""
    if not v.callees:
        return v.dfa
    if v.inside is not None:
        return _expand_pairs(v, done, budget)
    holes = sorted(v.callees)
    hole_cs = CharSet([(h, h) for h in holes])

    def image(cs: CharSet) -> DFA:
        parts = []
        rest = cs - HOLE_SET
        if rest:
            parts.append(DFA.from_charset(rest))
        for h in holes:
            if h in cs:
                parts.append(done[v.callees[h].index])
        return parts[0] if len(parts) == 1 else DFA.union_all(parts, budget)

    if not any(cs & hole_cs for cs in v.dfa.classes):
        return v.dfa
    return v.dfa.substitute(image, budget)


def _expand_pairs(v: _Variant, done: dict, budget: Budget | None) -> DFA:
    """:func:`_expand` with pair holes: an NFA of the variant's boundary states, each call site
    ``q -h1-> m -h2-> r`` an epsilon from ``q`` into a copy of the callee's expansion that
    ends at ``r``."""
    d = v.dfa
    cols = np.array([d.class_of(c) for c in _HOLE_CHARS], dtype=np.int64)
    nonhole = np.array([not cs.issubset(HOLE_SET) for cs in d.classes], dtype=bool)
    accepting = np.zeros(len(d.delta), dtype=bool)
    accepting[list(d.accepting)] = True
    inside, sites = _pair_sites(_sparse(np.asarray(d.delta, dtype=np.int64)), len(d.delta),
                                accepting, d.start, cols, nonhole, None)
    nfa = NFA()
    n = len(d.delta)
    for _ in range(n):
        nfa.new_state()
    edges = _edge_lists(d)
    for s in range(1, n):
        if inside[s]:
            continue
        out = nfa.edges[s]
        for label, t in edges[s]:
            if not label.isdisjoint(HOLE_SET):
                label = label - HOLE_SET
                if not label:
                    continue
            out.append((label, t))
    shared: dict[tuple, int | None] = {}
    for q, i1, _, i2, r in sites:
        p = _HOLE_CHARS[i1] + _HOLE_CHARS[i2]
        k = (p, r)
        if k not in shared:
            shared[k] = _embed(nfa, done[v.callees[p].index], r)
        if shared[k] is not None:
            nfa.eps[q].append(shared[k])
    final = nfa.new_state()
    for a in d.accepting:
        nfa.eps[a].append(final)
    nfa.start = d.start
    nfa.accepting = {final}
    return DFA._from_nfa(nfa, budget, "substitute")


def _joint_byte_classes(lowered: list, live: list) -> tuple[np.ndarray, list[np.ndarray]]:
    """Byte classes of the variants' tables side by side, hole bytes dead.

    ``lowered``: distinct ByteDFAs; ``live``: per ByteDFA, bool per column, whether it moves
    anywhere. Returns the class of each byte (numbered by first byte) and, per ByteDFA, the
    column of its table for each joint class (its zero column ``C`` for a class that does not
    move there)."""
    keys = []
    for b, alive in zip(lowered, live):
        C = b.table.shape[1]
        k = np.asarray(b.byte_classes, dtype=np.int64).copy()
        k[~alive[k]] = C
        k[_HOLE_ARRAY] = C
        keys.append(k)
    stacked = np.ascontiguousarray(np.stack(keys, axis=1))    # [256, number of tables]
    rows = stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))).ravel()
    _, first, inv = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(first.size, dtype=np.int64)
    rank[order] = np.arange(first.size)
    cls = rank[inv.reshape(-1)]
    reps = first[order]
    return cls, [k[reps] for k in keys]


class _Moves(dict):
    """State -> the bytes it moves on (an int, bit b for byte b), found when first asked for
    by ``move_bits`` (a class of the module: one made per call would be cyclic garbage)."""

    def __init__(self, move_bits):
        super().__init__()
        self.move_bits = move_bits

    def __missing__(self, q):
        m = self[q] = self.move_bits([q])[0]
        return m


def _lower(r: RecursiveDFA) -> "PushdownBytes":
    r._build_variants()
    variants = r._variants
    if not variants:
        return PushdownBytes(np.zeros(256, np.uint8), np.zeros((1, 1), np.int32), np.zeros(1, bool),
                             0, np.zeros(2, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32),
                             np.zeros((0, 256), bool), 0)
    meter = r.budget.meter("recursive byte table")
    lowered = []
    slot: dict[int, int] = {}                 # id(ByteDFA) -> index in lowered
    sizes = []
    for v in variants:
        b = v.dfa.to_bytes()                  # variants sharing an automaton share its lowering
        if id(b) not in slot:
            slot[id(b)] = len(lowered)
            lowered.append(b)
        # pairs: the states inside a pair are never walked (a call edge jumps over both holes)
        n = b.table.shape[0] - (0 if v.inside is None else int(v.inside.sum()))
        meter.add(n - 1)
        sizes.append(n - 1)
    # the tables are sparse: their moves as (state, class, target)
    moves_of = []
    live = []
    for b in lowered:
        src, col, dst = r._moves(b)
        moves_of.append((src, col, dst))
        alive = np.zeros(b.table.shape[1], dtype=bool)
        alive[col] = True
        live.append(alive)
    byte_cls, colmaps = _joint_byte_classes(lowered, live)
    J = colmaps[0].shape[0] if colmaps else 1
    S = 1 + sum(sizes)
    table = np.zeros((S, J), dtype=np.int32)
    accepting = np.zeros(S, dtype=bool)
    owner = np.full(S, -1, dtype=np.int32)
    starts: list[int] = []
    raw_edges: list[tuple[int, int, int]] = []     # (state, callee variant, return state)
    prep: dict[int, tuple] = {}               # slot -> its moves as the global table wants them
    total = 1
    for v, n in zip(variants, sizes):
        b = v.dfa.to_bytes()
        si = slot[id(b)]
        got = prep.get(si)
        if got is None:
            C = b.table.shape[1]
            cm = colmaps[si]
            # each class of b is one or more joint classes (none for hole bytes)
            joint = np.flatnonzero(cm < C)
            joint = joint[np.argsort(cm[joint], kind="stable")]
            count = np.bincount(cm[joint], minlength=C)
            begin = np.cumsum(count) - count
            src, col, dst = moves_of[si]
            times = count[col]
            src = np.repeat(src, times)
            dst = np.repeat(dst, times)
            within = np.arange(src.size) - np.repeat(np.cumsum(times) - times, times)
            col = joint[np.repeat(begin[col], times) + within]
            acc = np.asarray(b.accepting)
            renum = None
            holes: dict = {}
            if v.inside is not None:
                # the other states renumbered in order
                keep = ~v.inside
                renum = np.cumsum(keep) - 1
                renum[v.inside] = 0
                outside = keep[src]
                src, col, dst = renum[src[outside]], col[outside], renum[dst[outside]]
                acc = acc[keep]
                renum = renum.tolist()
                start = renum[b.start]
            else:
                start = b.start
                for h in v.callees:
                    hc = b.table[:, b.byte_classes[h]]
                    at = np.flatnonzero(hc)
                    holes[h] = list(zip(at.tolist(), hc[at].tolist()))
            got = prep[si] = (src, col, dst.astype(np.int64), acc[1:], renum, holes, start)
        src, col, dst, acc, renum, holes, start = got
        base = total - 1                      # local state s >= 1 is global base + s
        table[src + base, col] = dst + base
        accepting[total:total + n] = acc
        owner[total:total + n] = v.index
        if renum is not None:
            for p, w in v.callees.items():
                for q, back in v.moves[p]:
                    raw_edges.append((base + renum[q], w.index, base + renum[back]))
        else:
            for h, w in v.callees.items():
                for s, t in holes[h]:
                    raw_edges.append((base + s, w.index, base + t))
        starts.append(base + start)
        total += n

    # call edges, deduplicated and sorted by state
    edges = sorted({(q, starts[w], ret, w) for q, w, ret in raw_edges})
    E = len(edges)
    call_state = np.array([e[0] for e in edges], dtype=np.int64)
    call_entry = np.array([e[1] for e in edges], dtype=np.int32)
    call_return = np.array([e[2] for e in edges], dtype=np.int32)
    call_var = [e[3] for e in edges]
    call_ptr = np.searchsorted(call_state, np.arange(S + 1)).astype(np.int32)
    edges_at: dict[int, list[int]] = {}
    for i, (q, _, _, _) in enumerate(edges):
        edges_at.setdefault(q, []).append(i)

    # the bytes each state moves on, as an int with bit b for byte b (for the states asked about)
    member = np.zeros((J, 256), dtype=bool)
    member[byte_cls, np.arange(256)] = True
    class_words = np.packbits(member, axis=1, bitorder="little").view("<u8")

    def move_bits(states: list) -> list[int]:
        if not states:
            return []
        live = table[states] != 0
        words = np.zeros((len(states), 4), dtype=np.uint64)
        for c in np.flatnonzero(live.any(axis=0)).tolist():
            words[live[:, c]] |= class_words[c]
        blob = words.astype("<u8").tobytes()
        return [int.from_bytes(blob[32 * i:32 * i + 32], "little") for i in range(len(states))]

    moves = _Moves(move_bits)
    asked = sorted(set(starts) | set(edges_at) | set(call_return.tolist()))
    moves.update(zip(asked, move_bits(asked)))

    # first bytes of each variant (callees before callers)
    post = r._postorder()
    first: list[int] = [0] * len(variants)
    for v in post:
        ent = starts[v.index]
        f = moves[ent]
        for i in edges_at.get(ent, ()):
            f |= first[call_var[i]]
        first[v.index] = f
    call_first_mask = [first[w] for w in call_var]

    def where(q: int) -> tuple[int, tuple]:
        v = variants[owner[q]]
        return v.module, v.frames

    def fail(q: int, byte: int, what: str):
        k, frames = where(q)
        # with pairs there may be hundreds of modules: only those on the stack
        shown = {j: c for j, c in enumerate(frames) if c} if r._pairs else frames
        raise NondeterministicCall(
            f"module {k} (frames {shown}), byte state {q}: byte {_show_byte(byte)} {what}",
            module=k, frames=frames, state=q, byte=byte)

    # 1. at each state: moves and every call's first bytes pairwise disjoint
    calls_first_at: dict[int, int] = {}
    for q, idx in edges_at.items():
        seen = moves[q]
        for i in idx:
            both = seen & call_first_mask[i]
            if both:
                b = _lowest_bit(both)
                if moves[q] >> b & 1:
                    fail(q, b, f"continues the module and begins a call to module "
                               f"{variants[call_var[i]].module}")
                fail(q, b, "begins two different calls")
            seen |= call_first_mask[i]
        calls_first_at[q] = seen & ~moves[q]

    # 2. at an accepting state of a called variant: its bytes disjoint from what may follow it
    follow = [0] * len(variants)
    rets = call_return.tolist()
    ret_accepting = accepting[call_return].tolist()
    caller = owner[call_return].tolist()
    reach_base = {}
    for ret in rets:
        if ret not in reach_base:
            reach_base[ret] = moves[ret] | calls_first_at.get(ret, 0)
    # callers before callees (the variant call graph is acyclic): one pass gathers everything
    rank = [0] * len(variants)
    for i, v in enumerate(reversed(post)):
        rank[v.index] = i
    order = sorted(range(E), key=lambda i: rank[caller[i]])
    changed = True
    while changed:
        changed = False
        for i in order:
            got = reach_base[rets[i]]
            if ret_accepting[i]:
                got |= follow[caller[i]]
            w = call_var[i]
            if got & ~follow[w]:
                follow[w] |= got
                changed = True
    acc_states = np.flatnonzero(accepting)
    ends = [(q, follow[o]) for q, o in zip(acc_states.tolist(), owner[acc_states].tolist())
            if follow[o]]
    unknown = [q for q, _ in ends if q not in moves]
    moves.update(zip(unknown, move_bits(unknown)))
    for q, fw in ends:
        both = (moves[q] | calls_first_at.get(q, 0)) & fw
        if both:
            b = _lowest_bit(both)
            fail(q, b, "continues the module where it may end, and also continues its caller")

    # deepest stack: the longest chain of calls (the variant call graph is acyclic)
    depth = [0] * len(variants)
    for v in post:
        d = 0
        for pairs in v.calls_at.values():
            for w, _ in pairs:
                d = max(d, 1 + depth[w.index])
        depth[v.index] = d

    call_first = np.zeros((E, 256), dtype=bool)
    if E:
        bits = np.frombuffer(b"".join(m.to_bytes(32, "little") for m in call_first_mask),
                             dtype=np.uint8).reshape(E, 32)
        call_first = np.unpackbits(bits, axis=1, bitorder="little").astype(bool)
    r._sparse.clear()                         # only the construction needs them
    return PushdownBytes(byte_cls.astype(np.uint8), table, accepting, starts[0], call_ptr,
                         call_entry, call_return, call_first, depth[0])


class PushdownBytes:
    """A recursive automaton over bytes, as immutable arrays (what token masks walk).

    Attributes
    ----------
    byte_classes : uint8[256]
    table : int32[S, C]
        ``table[q, byte_classes[b]]``: the move on byte ``b`` inside the current module; state 0
        is dead (its row all zeros); hole bytes never move.
    accepting : bool[S]
        The current module may end here (return to the caller, or finish when the stack is empty).
    start : int
    call_ptr : int32[S + 1]
        The calls of state ``q`` are edges ``call_ptr[q] .. call_ptr[q + 1] - 1``.
    call_entry : int32[E]
        Start state of the callee variant.
    call_return : int32[E]
        State of the caller to resume at once the callee ends.
    call_first : bool[E, 256]
        Bytes that can begin the callee's text from ``call_entry`` (through calls there too).
    max_stack : int
        The deepest stack any walk reaches.

    One byte ``b`` at ``(q, stack)``: (1) ``t = table[q, byte_classes[b]]``, if nonzero it is the
    new state; (2) else the call edge ``e`` of ``q`` with ``call_first[e, b]`` (at most one):
    push ``call_return[e]``, ``q = call_entry[e]``, back to (1); (3) else if ``accepting[q]`` and
    the stack is not empty: ``q = pop()``, back to (1); (4) else dead. At most one of (1)-(3)
    applies to any ``(q, b)``, and every nonzero state can complete.

    The end of the text ends every open module too (rule 3 without a byte): it is accepted iff
    ``accepting[q]`` and every state on the stack is accepting (:meth:`can_end`); with an empty
    stack that is ``accepting[q]`` alone. A module's call may be followed by its own end (the
    ``x*`` of ``[x, x, ...]`` after an item), so the stack need not be empty at the end.
    """

    __slots__ = ("byte_classes", "table", "accepting", "start", "call_ptr", "call_entry",
                 "call_return", "call_first", "max_stack", "_py")

    def __init__(self, byte_classes, table, accepting, start: int, call_ptr, call_entry,
                 call_return, call_first, max_stack: int):
        bc = np.ascontiguousarray(byte_classes, dtype=np.uint8)
        tab = np.ascontiguousarray(table, dtype=np.int32)
        acc = np.ascontiguousarray(accepting, dtype=np.bool_)
        ptr = np.ascontiguousarray(call_ptr, dtype=np.int32)
        ent = np.ascontiguousarray(call_entry, dtype=np.int32)
        ret = np.ascontiguousarray(call_return, dtype=np.int32)
        first = np.ascontiguousarray(call_first, dtype=np.bool_)
        if bc.shape != (256,):
            raise AutomatonError(f"byte_classes must have shape (256,), got {bc.shape}")
        if tab.ndim != 2 or tab.shape[0] < 1 or tab.shape[1] < 1:
            raise AutomatonError(f"table must be 2-D with at least the dead state, got {tab.shape}")
        S = tab.shape[0]
        if int(bc.max()) >= tab.shape[1]:
            raise AutomatonError("byte_classes refers to a class the table does not have")
        if acc.shape != (S,):
            raise AutomatonError("accepting must have one entry per state")
        if tab.min() < 0 or tab.max() >= S:
            raise AutomatonError("table refers to nonexistent states")
        if tab[0].any() or acc[0]:
            raise AutomatonError("state 0 must be dead: all transitions to 0, not accepting")
        if not 0 <= start < S:
            raise AutomatonError("start state out of range")
        E = ent.shape[0]
        if ptr.shape != (S + 1,) or ptr[0] != 0 or ptr[-1] != E or (np.diff(ptr) < 0).any():
            raise AutomatonError("call_ptr must rise from 0 to the number of call edges, one "
                                 "entry per state and one more")
        if ret.shape != (E,) or ent.ndim != 1 or first.shape != (E, 256):
            raise AutomatonError("call_entry, call_return and call_first need one entry per edge")
        if E and (min(ent.min(), ret.min()) < 1 or max(ent.max(), ret.max()) >= S):
            raise AutomatonError("call edges refer to the dead state or to nonexistent states")
        if ptr[1] != 0:
            raise AutomatonError("the dead state 0 cannot call")
        if E and (tab[:, np.unique(bc[_HOLE_ARRAY])].any() or first[:, _HOLE_ARRAY].any()):
            # (the calls' placeholders: an automaton without calls may move on them)
            raise AutomatonError("hole bytes must be dead (in the table and in call_first)")
        if isinstance(max_stack, bool) or int(max_stack) < 0:
            raise AutomatonError("max_stack must be a non-negative int")
        for arr in (bc, tab, acc, ptr, ent, ret, first):
            arr.setflags(write=False)
        for name, val in (("byte_classes", bc), ("table", tab), ("accepting", acc),
                          ("start", int(start)), ("call_ptr", ptr), ("call_entry", ent),
                          ("call_return", ret), ("call_first", first),
                          ("max_stack", int(max_stack)), ("_py", None)):
            object.__setattr__(self, name, val)

    def __setattr__(self, name, value):
        raise AttributeError("PushdownBytes is immutable")

    @classmethod
    def without_calls(cls, dfa) -> "PushdownBytes":
        """A byte DFA (``byte_classes``, ``table``, ``accepting``, ``start``; every nonzero state
        able to reach acceptance, as ``tokenfsm.masks.index.as_byte_dfa`` leaves it) as a stack
        automaton that never calls: what a lazy index walks to make the rows of a flat
        automaton when they are first needed."""
        n = int(np.asarray(dfa.table).shape[0])
        return cls(dfa.byte_classes, dfa.table, dfa.accepting, int(dfa.start),
                   np.zeros(n + 1, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32),
                   np.zeros((0, 256), np.bool_), 0)

    def __reduce__(self):
        return (PushdownBytes, (self.byte_classes, self.table, self.accepting, self.start,
                                self.call_ptr, self.call_entry, self.call_return,
                                self.call_first, self.max_stack))

    @property
    def num_states(self) -> int:
        """States including the dead state 0."""
        return int(self.table.shape[0])

    @property
    def num_byte_classes(self) -> int:
        return int(self.table.shape[1])

    @property
    def num_calls(self) -> int:
        """Call edges."""
        return int(self.call_entry.shape[0])

    def __repr__(self) -> str:
        return (f"<PushdownBytes: {self.num_states} states (incl. dead), {self.num_byte_classes} "
                f"byte classes, {self.num_calls} call edges, max_stack {self.max_stack}>")

    def _lists(self):
        py = self._py
        if py is None:
            py = (self.table.tolist(), self.byte_classes.tolist(), self.accepting.tolist(),
                  self.call_ptr.tolist(), self.call_entry.tolist(), self.call_return.tolist(),
                  [set(np.flatnonzero(r).tolist()) for r in self.call_first])
            object.__setattr__(self, "_py", py)
        return py

    def step(self, state: int, stack: list, byte: int) -> int:
        """The state after ``byte`` from ``(state, stack)``; 0 = dead. ``stack`` is updated in
        place (pushes for calls, pops for returns)."""
        tab, bc, acc, ptr, ent, ret, first = self._lists()
        q = state
        if q == 0:
            return 0
        c = bc[byte]
        while True:
            t = tab[q][c]
            if t:
                return t
            for e in range(ptr[q], ptr[q + 1]):
                if byte in first[e]:
                    stack.append(ret[e])
                    q = ent[e]
                    break
            else:
                if acc[q] and stack:
                    q = stack.pop()
                    continue
                return 0

    def walk(self, data: bytes, state: int | None = None, stack: list | None = None):
        """``(state, stack)`` after reading ``data`` from ``state`` (default: start) and
        ``stack`` (default: empty; not modified, a new list is returned); state 0 if it died."""
        q = self.start if state is None else int(state)
        st = [] if stack is None else list(stack)
        for b in bytes(data):
            q = self.step(q, st, b)
            if q == 0:
                return 0, st
        return q, st

    def can_end(self, state: int, stack: Sequence[int]) -> bool:
        """Whether the text may end at ``(state, stack)``: ``state`` and every return state on
        the stack accepting (each open module ends in turn)."""
        acc = self.accepting
        return state != 0 and bool(acc[state]) and all(acc[r] for r in stack)

    def accepts(self, data: bytes) -> bool:
        """Whether ``data`` as a whole is in the language."""
        q, st = self.walk(data)
        return self.can_end(q, st)
