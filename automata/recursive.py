"""Recursive automata: small modules that call each other, walked with a stack.

A recursive grammar (a JSON Schema whose definitions refer to themselves) unrolled to a fixed
depth is one large DFA: every nesting level is a fresh copy of the definition. Here the pieces stay
small. A *module* is an ordinary code-point :class:`~.dfa.DFA`; a transition on a **hole** code
point ``h`` means "here comes one text of module ``calls[h]``, then go on". Holes are the ASCII
control characters that JSON text never holds raw (:data:`HOLES`), so in UTF-8 a hole is one byte.

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
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .charset import CharSet, refine
from .dfa import DFA
from .errors import DEFAULT_BUDGET, AutomatonError, Budget

__all__ = ["HOLES", "HOLE_SET", "RecursiveDFA", "PushdownBytes", "NondeterministicCall"]

#: Code points that stand for a call: the ASCII controls JSON text never holds raw (never NUL,
#: tab, newline or carriage return).
HOLES: tuple[int, ...] = tuple(list(range(0x01, 0x09)) + [0x0B, 0x0C] + list(range(0x0E, 0x20)))
HOLE_SET = CharSet([(h, h) for h in HOLES])
_HOLE_ARRAY = np.array(HOLES, dtype=np.int64)


class NondeterministicCall(AutomatonError):
    """The deterministic stack walk would be ambiguous: some byte both continues the current
    module and starts a callee (or starts two callees), or both continues a module that may end
    here and continues its caller.

    Attributes
    ----------
    module : int
        The module (index into ``RecursiveDFA.modules``) whose state is ambiguous.
    frames : tuple of int
        The variant: frames of each module on the stack.
    state : int
        The state in the global byte table (:class:`PushdownBytes`).
    byte : int
        A byte that has two meanings there.
    """

    def __init__(self, msg: str, module: int | None = None, frames: tuple | None = None,
                 state: int | None = None, byte: int | None = None):
        self.module = module
        self.frames = frames
        self.state = state
        self.byte = byte
        super().__init__(msg)

    def __reduce__(self):
        return (NondeterministicCall, (self.args[0], self.module, self.frames, self.state, self.byte))


def _show_byte(b: int) -> str:
    return f"0x{b:02X}" + (f" {chr(b)!r}" if 0x20 <= b < 0x7F else "")


def _lowest_bit(x: int) -> int:
    return (x & -x).bit_length() - 1


class _Variant:
    """One (module, frame counts) configuration: its trimmed code-point DFA and live calls."""

    __slots__ = ("module", "frames", "dfa", "callees", "calls_at", "index", "num_states")

    def __init__(self, module: int, frames: tuple, dfa: DFA, callees: dict, hole_moves: dict):
        self.module = module
        self.frames = frames            # frames of each module on the stack (full vector)
        self.dfa = dfa                  # minimal; hole code points are ordinary symbols
        self.callees = callees          # hole code point -> callee _Variant (live holes only)
        self.num_states = len(dfa.delta) - 1
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
    calls : mapping int -> int
        Hole code point -> index into ``modules``. Callee modules must not accept the empty text.
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
        A hole outside :data:`HOLES`, a callee or start index out of range, a callee module that
        accepts the empty text, a module moving on an unbound hole, ``max_depth < 0``.
    """

    __slots__ = ("modules", "calls", "start", "max_depth", "budget", "_split", "_top", "_variants",
                 "_bytes", "_dfa")

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
        table: dict[int, int] = {}
        for h, k in dict(calls).items():
            if isinstance(h, str) and len(h) == 1:
                h = ord(h)
            if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or int(h) not in HOLES:
                raise AutomatonError(f"hole {h!r} is not one of HOLES (U+0001-U+0008, U+000B, "
                                     "U+000C, U+000E-U+001F)")
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(modules):
                raise AutomatonError(f"hole U+{int(h):04X} calls module {k!r}, out of range for "
                                     f"{len(modules)} modules")
            table[int(h)] = int(k)
        for h, k in sorted(table.items()):
            m = modules[k].minimize()
            if m.start in m.accepting:
                raise AutomatonError(f"module {k} (called by hole U+{h:04X}) accepts the empty "
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
        for k in range(len(modules)):
            self._module_split(k)        # rejects unbound holes now

    def __reduce__(self):
        # the modules without their cached byte lowerings (rebuilt on demand)
        plain = tuple(DFA(m.classes, m.delta, m.accepting, m.start, m._minimal) for m in self.modules)
        return (RecursiveDFA, (plain, self.calls, self.start, self.max_depth, self.budget))

    def __repr__(self) -> str:
        return (f"<RecursiveDFA: {len(self.modules)} modules, {len(self.calls)} holes, "
                f"start {self.start}, max_depth {self.max_depth}>")

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

    def _build_variants(self) -> None:
        """Every variant reachable from the top, trimmed, numbered top first."""
        if self._variants is not None:
            return
        n = len(self.modules)
        D = self.max_depth
        # modules reachable by one or more calls: a variant depends only on their frame counts
        succ = [sorted({self.calls[h] for h in self._module_split(k)[4]}) for k in range(n)]
        below: list[tuple] = []
        for k in range(n):
            seen: set[int] = set()
            todo = list(succ[k])
            while todo:
                j = todo.pop()
                if j not in seen:
                    seen.add(j)
                    todo.extend(succ[j])
            below.append(tuple(sorted(seen)))

        def key(k, frames):
            return (k,) + tuple([frames[j] for j in below[k]])

        memo: dict[tuple, _Variant | None] = {}
        trimmed: dict[tuple, tuple] = {}
        meter = self.budget.meter("recursive variants")

        def needed(k, frames):
            """(hole, callee frames, callee key) of the holes of ``k`` still allowed."""
            out = []
            for h in self._module_split(k)[4]:
                j = self.calls[h]
                if frames[j] < D:
                    f = list(frames)
                    f[j] += 1
                    f = tuple(f)
                    out.append((h, f, key(j, f)))
            return out

        top_frames = (0,) * n
        stack = [(self.start, top_frames, key(self.start, top_frames))]
        while stack:
            k, frames, kk = stack[-1]
            if kk in memo:
                stack.pop()
                continue
            need = needed(k, frames)
            missing = [(self.calls[h], f, fk) for h, f, fk in need if fk not in memo]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            classes, delta, accepting, start, holes = self._module_split(k)
            meter.add(max(1, delta.shape[0] - 1))
            live = {}
            for h, _, fk in need:
                w = memo[fk]
                if w is not None:
                    live[h] = w
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
            memo[kk] = _Variant(k, frames, d, callees, hole_moves)
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
        variants (:meth:`DFA.substitute`), one determinisation per variant, each under
        ``budget``.

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


def _joint_byte_classes(lowered: list) -> tuple[np.ndarray, list[np.ndarray]]:
    """Byte classes of the variants' tables side by side, hole bytes dead.

    ``lowered``: distinct ByteDFAs. Returns the class of each byte (numbered by first byte) and,
    per ByteDFA, the column of its table for each joint class (its zero column ``C`` for a class
    that does not move there)."""
    keys = []
    for b in lowered:
        C = b.table.shape[1]
        dead_col = ~b.table.any(axis=0)
        k = np.asarray(b.byte_classes, dtype=np.int64).copy()
        k[dead_col[k]] = C
        k[_HOLE_ARRAY] = C
        keys.append(k)
    stacked = np.stack(keys, axis=1)          # [256, number of tables]
    _, first, inv = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(first.size, dtype=np.int64)
    rank[order] = np.arange(first.size)
    cls = rank[inv.reshape(-1)]
    reps = first[order]
    return cls, [k[reps] for k in keys]


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
    for v in variants:
        b = v.dfa.to_bytes()                  # variants sharing an automaton share its lowering
        if id(b) not in slot:
            slot[id(b)] = len(lowered)
            lowered.append(b)
    byte_cls, colmaps = _joint_byte_classes(lowered)
    J = colmaps[0].shape[0] if colmaps else 1
    parts = [np.zeros((1, J), dtype=np.int32)]
    acc_parts = [np.zeros(1, dtype=bool)]
    owner_parts = [np.full(1, -1, dtype=np.int32)]
    starts: list[int] = []
    raw_edges: list[tuple[int, int, int]] = []     # (state, callee variant, return state)
    total = 1
    for v in variants:
        b = v.dfa.to_bytes()
        n = b.table.shape[0]
        meter.add(n - 1)
        base = total - 1                      # local state s >= 1 is global base + s
        tab = np.zeros((n, b.table.shape[1] + 1), dtype=np.int32)
        tab[:, :-1] = b.table
        tab[tab != 0] += base
        for h, w in v.callees.items():
            col = tab[:, b.byte_classes[h]]
            for s in np.flatnonzero(col).tolist():
                raw_edges.append((base + s, w.index, int(col[s])))
        parts.append(tab[1:, colmaps[slot[id(b)]]])
        acc_parts.append(np.asarray(b.accepting)[1:])
        owner_parts.append(np.full(n - 1, v.index, dtype=np.int32))
        starts.append(base + b.start)
        total += n - 1
    table = np.ascontiguousarray(np.vstack(parts))
    accepting = np.concatenate(acc_parts)
    owner = np.concatenate(owner_parts)
    S = table.shape[0]

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
    class_bits = [0] * J
    for b_, c in enumerate(byte_cls.tolist()):
        class_bits[c] |= 1 << b_

    class _Moves(dict):
        def __missing__(self, q):
            m = 0
            for c in np.flatnonzero(table[q]).tolist():
                m |= class_bits[c]
            self[q] = m
            return m

    moves = _Moves()

    # first bytes of each variant (callees before callers)
    first: list[int] = [0] * len(variants)
    for v in r._postorder():
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
        raise NondeterministicCall(
            f"module {k} (frames {frames}), byte state {q}: byte {_show_byte(byte)} {what}",
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
    reach_base = {}
    for i in range(E):
        ret = int(call_return[i])
        if ret not in reach_base:
            reach_base[ret] = moves[ret] | calls_first_at.get(ret, 0)
    changed = True
    while changed:
        changed = False
        for i in range(E):
            ret = int(call_return[i])
            got = reach_base[ret]
            if accepting[ret]:
                got |= follow[owner[ret]]
            w = call_var[i]
            if got & ~follow[w]:
                follow[w] |= got
                changed = True
    for q in np.flatnonzero(accepting).tolist():
        fw = follow[owner[q]]
        if not fw:
            continue
        both = (moves[q] | calls_first_at.get(q, 0)) & fw
        if both:
            b = _lowest_bit(both)
            fail(q, b, "continues the module where it may end, and also continues its caller")

    # deepest stack: the longest chain of calls (the variant call graph is acyclic)
    depth = [0] * len(variants)
    for v in r._postorder():
        d = 0
        for pairs in v.calls_at.values():
            for w, _ in pairs:
                d = max(d, 1 + depth[w.index])
        depth[v.index] = d

    call_first = np.zeros((E, 256), dtype=bool)
    if E:
        bits = np.array([[m >> (8 * j) & 0xFF for j in range(32)] for m in call_first_mask],
                        dtype=np.uint8)
        call_first = np.unpackbits(bits, axis=1, bitorder="little").astype(bool)
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
        if tab[:, bc[_HOLE_ARRAY]].any() or first[:, _HOLE_ARRAY].any():
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
