"""One piece of a lazy network, from its expression to a small deterministic byte automaton.

A piece's body (:mod:`.network`) is an expression over code-point automata (``Text``), calls of
other pieces (``Call``) and ticks of its count (``Tick``). Each ``Text`` is lowered to UTF-8
(:meth:`~.dfa.DFA.to_bytes`) and the whole body is assembled as an NFA over symbols: the piece's
joint byte classes, one symbol per distinct call (callee, tick, key), and ``TICK``. The subset
construction makes it deterministic; then every tick is moved onto the move that leads to it:

* a tick must be *forced*: the state before it has no other move and does not accept (after a
  complete character of a string, after a call returns). The moves into that state then carry
  the tick (``TICK_BIT`` on a byte move, a ticking call edge when a call returns there), and the
  state disappears. A tick that is not forced means the count of a text is ambiguous (``(ab?)*``
  counting copies of ``ab?``): :class:`~.errors.NondeterministicCall`, and the caller builds the
  flat expansion instead;
* Hopcroft's partition refinement then merges states with the same moves, ticks and calls.

Example
-------
>>> from tokenfsm.automata import DFA
>>> from tokenfsm.automata.network import Text, Tick, concat, star
>>> p = build_piece(star(concat(Text(DFA.from_regex("[0-9]")), Tick())), index=0)
>>> p.num_states, len(p.calls)                       # the dead state and one loop state
(2, 0)

The symbol-level subset construction is the textbook one (Rabin-Scott); moving counter updates
onto transitions follows counting automata (Turonova et al., OOPSLA 2020).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import chain

import numpy as np

from .cache import ByteLRU
from .errors import DEFAULT_BUDGET, AutomatonError, Budget, NondeterministicCall
from .lazy_bytes import STATE_MASK, TICK_BIT
from .minimize import hopcroft_blocks, reach

__all__ = ["BytePiece", "build_piece", "body_shape", "PIECES"]


@dataclass(frozen=True)
class BytePiece:
    """A piece as a byte automaton (state 0 dead, every other state reachable).

    Attributes
    ----------
    byte_classes : uint8[256]
    table : int32[n, J]
        Targets with ``TICK_BIT`` on ticking moves.
    accepting : bool[n]
    start : int
    calls : tuple of (state, call, return, tick)
        ``call`` indexes ``call_specs``; ``tick``: the call ticks this piece's count.
    call_specs : tuple of (callee, tick, key)
        The distinct calls of the body (``key`` None when the call writes no declared key).
    """

    byte_classes: np.ndarray
    table: np.ndarray
    accepting: np.ndarray
    start: int
    calls: tuple
    call_specs: tuple

    @property
    def num_states(self) -> int:
        return int(self.table.shape[0])


#: Pieces by the shape of their body (:func:`body_shape`), kept for every network of the
#: process, their arrays read-only: the same objects recur from schema to schema (a JSON
#: string, any value, an object of the same keys and values), each built once.
PIECES = ByteLRU("automata.network_piece.pieces", 32 << 20)
#: Bodies whose texts hold more states than this in all are built afresh every time (a flat
#: schema's top piece: unique to it, and costly to hash and to keep).
SHAPE_STATES = 4096


def _joint_classes(maps: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The coarsest partition of the bytes finer than every map: ``(classes, per map: joint
    class -> its class)``."""
    if not maps:
        return np.zeros(256, np.uint8), []
    # each byte's classes in the maps so far as one number (the distinct maps only, renumbered
    # before the number could overflow)
    code = None
    for m in {(m.dtype.str, m.tobytes()): m for m in maps}.values():
        m = m.astype(np.int64)
        m -= m.min()
        if code is None:
            code = m
            continue
        span = int(m.max()) + 1
        if int(code.max()) >= (1 << 62) // span:
            code = np.unique(code, return_inverse=True)[1].reshape(-1)
        code = code * span + m
    _, first, inv = np.unique(code, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    # number the joint classes by their first byte, so that results do not depend on np.unique
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    cls = rank[inv]
    reps = first[order]
    return cls.astype(np.uint8), [m[reps] for m in maps]


class _NFA:
    """Thompson assembly over symbols: byte classes ``0 .. J-1``, then calls, then TICK."""

    def __init__(self, J: int):
        self.J = J
        self.rows: list = []           # per state: targets per byte class (-1: none), or None
        self.extra: list[list] = []    # per state: (symbol, target) for calls and TICK
        self.eps: list[list] = []

    def new(self) -> int:
        self.rows.append(None)
        self.extra.append([])
        self.eps.append([])
        return len(self.rows) - 1


def build_piece(body, index: int, budget: Budget | None = None, way: str | None = None) -> BytePiece:
    """The byte automaton of one piece's body (see the module docstring).

    Parameters
    ----------
    body : expression
        Built from :mod:`.network`'s ``Text``, ``Call``, ``Tick``, ``Concat``, ``Choice``, ``SepBy``,
        ``Star``.
    index : int
        The piece's number (for messages).
    budget : Budget, optional
        Bounds the subset construction.
    way : str, optional
        A name of :data:`PIECE_WAYS` (it must apply); default the first that applies.

    Raises
    ------
    NondeterministicCall
        A tick that is not forced (the count would be ambiguous), or two ticks in a row.
    BudgetExceeded
    """
    shape = body_shape(body) if way is None else None
    if shape is not None:
        got = PIECES.get(shape[0])
        if got is not None:
            return _renamed(got, shape[1])
    parts = _Parts(body, index, (budget or DEFAULT_BUDGET).meter("network piece"))
    if way is not None:
        got = PIECE_WAYS[way](parts)
        if got is None:
            raise ValueError(f"the way {way!r} does not apply to piece {index}")
        return got
    got = next(filter(None, (make(parts) for make in PIECE_WAYS.values())), None)
    if got is None:
        raise AssertionError("the reference way applies to every piece")
    if shape is not None:
        for a in (got.byte_classes, got.table, got.accepting):
            a.flags.writeable = False
        slot = {spec: i for i, spec in enumerate(shape[1])}
        PIECES.put(shape[0], (got, tuple(slot[spec] for spec in got.call_specs)),
                   nbytes=got.table.nbytes + got.byte_classes.nbytes + got.accepting.nbytes
                   + shape[2])
    return got


def body_shape(body) -> tuple | None:
    """``(shape, specs, nbytes)`` of a piece's body: ``shape`` its structure, hashable, each
    text by its language (a :class:`~.dfa.DFA` hashes and compares by its minimal form) and
    each distinct call ``(callee, tick, key)`` by its slot, the order of first appearance, with
    its tick; ``specs`` the calls by slot; ``nbytes`` an estimate of the memory the shape holds.
    Two bodies of one shape have the same piece up to the names of their calls. None where the
    texts hold more than :data:`SHAPE_STATES` states, or for what is not an expression."""
    slots: dict = {}
    texts: list = []
    try:
        shape = _shape(body, slots, texts)
    except TypeError:
        return None        # (not an expression: _Parts says what)
    states = sum(d.num_states for d in texts)
    if states > SHAPE_STATES:
        return None
    nbytes = 400 + sum(100 + 8 * d.num_states * (1 + len(d.classes)) for d in texts)
    return shape, tuple(slots), nbytes


def _shape(e, slots: dict, texts: list) -> tuple:
    from .network import Call, Choice, Concat, SepBy, Star, Text, Tick

    if isinstance(e, Text):
        texts.append(e.dfa)
        return ("text", e.dfa, e.tick, tuple((h, _slot(c, slots)) for h, c in e.calls))
    if isinstance(e, Call):
        return ("call", _slot(e, slots))
    if isinstance(e, Tick):
        return ("tick",)
    if isinstance(e, (Concat, Choice)):
        return (type(e).__name__, *(_shape(x, slots, texts) for x in e.items))
    if isinstance(e, Star):
        return ("star", _shape(e.item, slots, texts))
    if isinstance(e, SepBy):
        return ("sep_by", _shape(e.item, slots, texts), _shape(e.sep, slots, texts))
    raise TypeError(type(e).__name__)


def _slot(c, slots: dict) -> tuple[int, bool]:
    spec = (c.piece, c.tick, c.key)
    got = slots.get(spec)
    if got is None:
        got = slots[spec] = len(slots)
    return got, c.tick


def _renamed(kept: tuple, specs: tuple) -> BytePiece:
    """A kept ``(piece, slots of its calls)`` with the calls of a body of the same shape."""
    piece, slots = kept
    call_specs = tuple(specs[i] for i in slots)
    return piece if call_specs == piece.call_specs else replace(piece, call_specs=call_specs)


class _Parts:
    """What every way of building a piece starts from: its ``Text`` s lowered to bytes, the joint
    byte classes (each placeholder and tick marker a class of its own) and the distinct calls."""

    def __init__(self, body, index: int, meter):
        from .network import Call, Choice, Concat, SepBy, Star, Text, Tick, placeholder_chars

        self.body, self.index, self.meter = body, index, meter
        texts: list = []
        specs: dict = {}
        # the expression tree, walked with a list (a nested function calling itself would
        # leave a reference cycle for the collector on every piece)
        todo = [body]
        while todo:
            e = todo.pop()
            if isinstance(e, Text):
                texts.append(e)
                for _, c in e.calls:
                    specs.setdefault((c.piece, c.tick, c.key), len(specs))
            elif isinstance(e, Call):
                specs.setdefault((e.piece, e.tick, e.key), len(specs))
            elif isinstance(e, (Concat, Choice)):
                todo.extend(reversed(e.items))
            elif isinstance(e, Star):
                todo.append(e.item)
            elif isinstance(e, SepBy):
                todo += [e.sep, e.item]
            elif not isinstance(e, Tick):
                raise AutomatonError(f"piece {index}: {type(e).__name__} is not a network "
                                     "expression")
        lowered = {}
        maps = []
        for t in texts:
            if id(t.dfa) not in lowered:
                lowered[id(t.dfa)] = t.dfa.to_bytes()
            b = lowered[id(t.dfa)]
            m = np.asarray(b.byte_classes, dtype=np.int64)
            marks = ([t.tick] if t.tick is not None else []) + list(dict.fromkeys(
                x for h, _ in t.calls for x in placeholder_chars(h)))
            for x in marks:
                same = np.flatnonzero(m == m[x])
                if set(same.tolist()) - set(marks) and np.asarray(b.table)[:, m[x]].any():
                    raise AutomatonError(f"piece {index}: the marker U+{x:04X} is read like other "
                                         "characters in its text; it must be a symbol of its own")
            if marks:
                m = m.copy()
                for i, x in enumerate(marks):
                    m[x] = -1 - i         # each marker byte is a class of its own
            maps.append(m)
        # every Text gets its own map slot (two Texts over one DFA may differ in their marker)
        self.byte_cls, self.colmaps = (_joint_classes(maps) if maps
                                       else (np.zeros(256, np.uint8), []))
        self.texts, self.lowered, self.specs = texts, lowered, specs
        self.J = int(self.byte_cls.max()) + 1
        self.call_specs = tuple(sorted(specs, key=specs.get))


def _by_subsets(parts: _Parts) -> BytePiece:
    """The reference way: the body assembled as an NFA over symbols (byte classes, calls, TICK),
    made deterministic by the subset construction, ticks moved onto moves, minimised."""
    asm = _Assembly(parts)
    final = asm.nfa.new()
    start = asm.build(parts.body, final)
    return _determinize(asm.nfa, start, final, parts.J, len(parts.specs), parts.byte_cls,
                        parts.call_specs, parts.index, parts.meter)


class _Assembly:
    """A piece's body embedded into one :class:`_NFA` over its symbols: the byte classes, then
    one per call, then TICK (see :func:`_by_subsets`)."""

    def __init__(self, parts: _Parts):
        self.parts = parts
        self.nfa = _NFA(parts.J)
        self.tick = parts.J + len(parts.specs)
        self.text_slot: dict = {}
        for i, t in enumerate(parts.texts):
            self.text_slot.setdefault(id(t), i)

    def build(self, e, exit_: int) -> int:
        """Embed ``e`` so that its texts lead to ``exit_``; returns the entry state."""
        from .network import Call, Choice, Concat, SepBy, Text, Tick

        nfa, parts = self.nfa, self.parts
        if isinstance(e, Text):
            i = self.text_slot[id(e)]
            return self.embed_text(parts.texts[i], parts.colmaps[i], exit_)
        if isinstance(e, Call):
            s = nfa.new()
            nfa.extra[s].append((parts.J + parts.specs[(e.piece, e.tick, e.key)], exit_))
            return s
        if isinstance(e, Tick):
            s = nfa.new()
            nfa.extra[s].append((self.tick, exit_))
            return s
        if isinstance(e, Concat):
            entry = exit_
            for x in reversed(e.items):
                entry = self.build(x, entry)
            return entry
        if isinstance(e, Choice):
            s = nfa.new()
            for x in e.items:
                nfa.eps[s].append(self.build(x, exit_))
            return s
        if isinstance(e, SepBy):
            # head -> item -> tail; tail -> exit; tail -> sep -> head (one copy of the item)
            head, tail = nfa.new(), nfa.new()
            nfa.eps[tail].append(exit_)
            nfa.eps[tail].append(self.build(e.sep, head))
            nfa.eps[head].append(self.build(e.item, tail))
            return head
        # Star: head -> item -> head; head -> exit
        head = nfa.new()
        nfa.eps[head].append(exit_)
        nfa.eps[head].append(self.build(e.item, head))
        return head

    def embed_text(self, t, colmap: np.ndarray, exit_: int) -> int:
        nfa, parts = self.nfa, self.parts
        b = parts.lowered[id(t.dfa)]
        tab = np.asarray(b.table)
        n = tab.shape[0]
        if b.start == 0:
            return nfa.new()          # the empty language: an entry with no way out
        parts.meter.add(n - 1)        # (charged before the NFA takes them)
        base = len(nfa.rows) - 1      # local state s >= 1 is NFA state base + s
        for _ in range(1, n):
            nfa.new()
        marker = colmap < 0
        block = tab[:, np.where(marker, 0, colmap)].astype(np.int64)
        block[:, marker] = 0
        rows = np.where(block > 0, block + base, -1).tolist()
        ticks = tab[:, b.byte_classes[t.tick]].tolist() if t.tick is not None else None
        for s in range(1, n):
            tick_to = ticks[s] if ticks is not None else 0
            nfa.rows[base + s] = rows[s]
            if tick_to:
                nfa.extra[base + s].append((self.tick, base + tick_to))
            for h, c in t.calls:      # a placeholder: one text of the called piece
                to = _after_placeholder(tab, b.byte_classes, s, h)
                if to:
                    nfa.extra[base + s].append(
                        (parts.J + parts.specs[(c.piece, c.tick, c.key)], base + to))
            if b.accepting[s]:
                nfa.eps[base + s].append(exit_)
        return base + b.start


def _one_text(parts: _Parts) -> BytePiece | None:
    """A body that is one ``Text`` without a tick is deterministic already: its byte table, the
    placeholders' moves made calls, numbered as the reference's subsets are (None for any other
    body). It is minimal too: a text's byte automaton is (:meth:`~.dfa.DFA.to_bytes`), and
    reading a call where it read the placeholder's bytes tells no more states apart or alike
    (each placeholder is its own call; a pair's inner state is read by nothing else)."""
    from .network import Text

    t = parts.body
    if not isinstance(t, Text) or t.tick is not None:
        return None
    b = parts.lowered[id(t.dfa)]
    tab = np.asarray(b.table)
    n = tab.shape[0]
    parts.meter.add(n - 1)
    colmap = parts.colmaps[0]
    if not t.calls and int(b.start) == 1 and np.array_equal(colmap, np.arange(colmap.size)):
        # no placeholder, the text's own classes: its byte automaton as it is, trimmed and
        # numbered as the reference numbers it already (a minimal automaton, breadth first by
        # column from state 1); walking it again costs milliseconds for a long counted text
        accepting = np.asarray(b.accepting, dtype=bool).copy()
        return BytePiece(parts.byte_cls, tab.astype(np.int32), accepting, 1, (), parts.call_specs)
    marker = colmap < 0
    table = tab[:, np.where(marker, 0, colmap)].astype(np.int64)
    table[:, marker] = 0
    table[0] = 0
    calls = {}
    for h, c in t.calls:
        k = parts.specs[(c.piece, c.tick, c.key)]
        first = h if isinstance(h, int) else ord(h[0])
        for s in np.flatnonzero(tab[:, b.byte_classes[first]]).tolist():
            to = _after_placeholder(tab, b.byte_classes, s, h) if s else 0
            if to:
                calls[(s, k)] = (to, bool(c.tick))
    # (two placeholders calling alike, one call spec, would read as one call: then minimised)
    return _trim_minimize(table, np.asarray(b.accepting, dtype=bool).copy(), calls,
                          int(b.start), parts.byte_cls, parts.call_specs, parts.meter.time_check,
                          minimal=len(parts.specs) == len(t.calls))


def _after_placeholder(tab: np.ndarray, byte_classes, s: int, h) -> int:
    """The state a lowered text reaches from ``s`` over the placeholder ``h`` (a code point, or
    a pair of them: the state inside the pair is never walked), or 0."""
    if isinstance(h, int):
        return int(tab[s, byte_classes[h]])
    m = int(tab[s, byte_classes[ord(h[0])]])
    return int(tab[m, byte_classes[ord(h[1])]]) if m else 0


class _Closures:
    """Epsilon closures of NFA states, each found once; a set's is the union of its states'."""

    def __init__(self, nfa: _NFA):
        self.nfa = nfa
        self.one: dict[int, frozenset] = {}

    def state(self, s: int) -> frozenset:
        got = self.one.get(s)
        if got is None:
            eps = self.nfa.eps
            seen = {s}
            todo = [s]
            while todo:
                for t in eps[todo.pop()]:
                    if t not in seen:
                        seen.add(t)
                        todo.append(t)
            got = self.one[s] = frozenset(seen)
        return got

    def of(self, states) -> frozenset:
        it = iter(states)
        first = next(it, None)
        if first is None:
            return frozenset()
        out = self.state(first)
        rest = [self.state(s) for s in it]
        return out.union(*rest) if rest else out


def _determinize(nfa: _NFA, start: int, final: int, J: int, n_calls: int, byte_cls,
                 call_specs: tuple, index: int, meter) -> BytePiece:
    TICK = J + n_calls
    closures = _Closures(nfa)
    d0 = closures.of([start])
    ids = {d0: 1}
    order = [d0]
    rows: list[list[int]] = [[0] * J]                       # dead state 0
    extras: list[dict] = [{}]
    acc = [False]

    def number(subset: frozenset) -> int:
        """The state of ``subset`` (numbered, and queued, when first met)."""
        k = ids.get(subset)
        if k is None:
            k = ids[subset] = len(order) + 1
            order.append(subset)
        return k

    # (the rows are lists of targets: a subset's row is a few list passes.) A class's targets,
    # one NFA state or a column of them (-1: none), name the same subset wherever they recur:
    # each is closed and numbered once per piece, not once per state that meets it.
    lists = nfa.rows
    state = closures.state
    by_targets: dict = {}
    i = 0
    while i < len(order):
        S = order[i]
        i += 1
        meter.add()
        members = sorted(S)
        brow = [lists[s] for s in members if lists[s] is not None]
        row = []
        if len(brow) == 1:
            for t in brow[0]:
                k = 0
                if t >= 0:
                    k = by_targets.get(t)
                    if k is None:
                        k = by_targets[t] = number(state(t))
                row.append(k)
        elif brow:
            for col in zip(*brow):
                k = by_targets.get(col)
                if k is None:
                    ts = [t for t in col if t >= 0]
                    k = by_targets[col] = number(closures.of(ts)) if ts else 0
                row.append(k)
        else:
            row = [0] * J
        ext: dict = {}
        for s in members:
            for sym, t in nfa.extra[s]:
                ext.setdefault(sym, set()).add(t)
        out = {sym: number(closures.of(ts)) for sym, ts in ext.items()}
        rows.append(row)
        extras.append(out)
        acc.append(final in S)
    table = np.array(rows, dtype=np.int64).reshape(-1, J)
    accepting = np.array(acc, dtype=bool)
    return _ticks_and_minimize(table, accepting, extras, 1, J, n_calls, byte_cls, call_specs,
                               index, meter.time_check)


def _ticks_and_minimize(table, accepting, extras, start, J, n_calls, byte_cls, call_specs, index,
                        check=None):
    """Move forced ticks onto the moves into them, trim, minimise."""
    TICK = J + n_calls
    n = table.shape[0]
    pre = np.zeros(n, dtype=bool)
    tick_to = np.zeros(n, dtype=np.int64)
    for q in range(1, n):
        t = extras[q].get(TICK)
        if t is None:
            continue
        if table[q].any() or len(extras[q]) > 1 or accepting[q]:
            raise NondeterministicCall(
                f"piece {index}: a tick that is not forced (the text may go on or end without "
                "it), so the count of a text would be ambiguous", module=index)
        if q == start:
            raise NondeterministicCall(f"piece {index}: its text may not begin with a tick",
                                       module=index)
        pre[q] = True
        tick_to[q] = t
    if (pre & pre[tick_to]).any():
        raise NondeterministicCall(f"piece {index}: two ticks in a row", module=index)
    tab = table.copy()
    into = pre[tab]
    tab[into] = tick_to[tab[into]] | TICK_BIT
    calls = {}
    for q in range(1, n):
        for sym, r in extras[q].items():
            if sym == TICK:
                continue
            c = sym - J
            tick = bool(call_specs[c][1])
            if pre[r]:
                if tick:
                    raise NondeterministicCall(f"piece {index}: a ticking call followed by a tick",
                                               module=index)
                r, tick = int(tick_to[r]), True
            calls[(q, c)] = (r, tick)
    return _trim_minimize(tab, accepting, calls, start, byte_cls, call_specs, check)


def _trim_minimize(tab, accepting, calls, start, byte_cls, call_specs,
                   check=None, minimal: bool = False) -> BytePiece:
    """Trim, minimise (unless ``minimal``: the live states are told apart already) and number
    canonically."""
    n, J = tab.shape
    tgt = tab & STATE_MASK
    # the moves as edges (table moves, then each call to the state it returns to)
    rows, cols = np.nonzero(tgt)
    src = np.concatenate([rows, np.array([q for q, _ in calls], dtype=np.int64)])
    dst = np.concatenate([tgt[rows, cols].astype(np.int64),
                          np.array([r for r, _ in calls.values()], dtype=np.int64)])
    ok = src > 0
    src, dst = src[ok], dst[ok]
    # reachable from the start, then co-reachable among those (every callee reads some text)
    reach = _closure(np.array([start]), src, dst, n, check=check)
    live = _closure(np.flatnonzero(accepting & reach), dst, src, n, within=reach, check=check)
    live[0] = False
    if not live[start]:
        return BytePiece(byte_cls, np.zeros((1, J), np.int32), np.zeros(1, bool), 0, (), call_specs)
    keep = live.copy()
    tab = np.where(keep[tgt], tab, 0)
    calls = {k: v for k, v in calls.items() if keep[k[0]] and keep[v[0]]}
    if check is not None:
        check()
    idx = np.flatnonzero(keep)
    call_rows: dict[int, list] = {}
    for (q, c), (r, tick) in sorted(calls.items()):
        call_rows.setdefault(q, []).append((c, r, tick))
    k = idx.size
    block = np.zeros(n, dtype=np.int64)
    if minimal:
        block[idx] = np.arange(1, k + 1)
        return _numbered(tab, tgt, accepting, block, idx, start, call_rows, byte_cls, call_specs)
    # the coarsest partition that refines acceptance and that moves (class, tick) and calls
    # (call, tick) respect: Hopcroft's on the live states as a partial automaton whose symbols
    # are those pairs
    local = np.full(n, k, dtype=np.int64)
    local[idx] = np.arange(k)
    T = np.full((k + 1, 2 * (J + len(call_specs))), k, dtype=np.int64)
    moved = tab[idx] > 0
    rows, cols = np.nonzero(moved)
    T[rows, 2 * cols + (tab[idx][rows, cols] >= TICK_BIT)] = local[tgt[idx][rows, cols]]
    for (q, c), (r, tick) in calls.items():
        T[local[q], 2 * (J + c) + tick] = local[r]
    # symbols that no state moves on tell no states apart: most (a move with a tick and one
    # without are two symbols, and most pieces tick nowhere)
    T = T[:, (T[:k] != k).any(axis=0)]
    block_of = hopcroft_blocks(T, np.flatnonzero(accepting[idx]).tolist(), dead=k, check=check)
    block[idx] = np.asarray(block_of[:k], dtype=np.int64) + 1
    return _numbered(tab, tgt, accepting, block, idx, start, call_rows, byte_cls, call_specs)


def _numbered(tab, tgt, accepting, block, idx, start, call_rows, byte_cls,
              call_specs) -> BytePiece:
    """The piece whose states are the ``block`` s (1.., 0 the dead state) of the live states
    ``idx``, numbered canonically."""
    n, J = tab.shape
    # renumber blocks: the start's block first, then in order of first appearance (BFS), each
    # written from its first state
    nb = int(block.max()) + 1
    rep = np.full(nb, n, dtype=np.int64)
    np.minimum.at(rep, block[idx], idx)
    number = [0] * nb
    number[block[start]] = 1
    order = [int(rep[block[start]])]
    succ_blocks = np.where(tgt > 0, block[tgt], 0)
    block_list, rep_list = block.tolist(), rep.tolist()
    i = 0
    while i < len(order):
        q = order[i]
        i += 1
        # each block once, in the order of its first column, then the calls' returns
        for b in chain(dict.fromkeys(succ_blocks[q].tolist()),
                       [block_list[r] for _, r, _ in call_rows.get(q, ())]):
            if b and not number[b]:
                number[b] = len(order) + 1
                order.append(rep_list[b])
    number = np.array(number, dtype=np.int64)
    m = len(order) + 1
    kept = np.array(order, dtype=np.int64)
    out = np.zeros((m, J), dtype=np.int32)
    out[1:] = number[succ_blocks[kept]] | (tab[kept] & TICK_BIT)
    acc = np.zeros(m, dtype=bool)
    acc[1:] = accepting[kept]
    out_calls = []
    for i, q in enumerate(order, start=1):
        for c, r, tick in call_rows.get(q, ()):
            out_calls.append((i, c, int(number[block[r]]), tick))
    return BytePiece(byte_cls, out, acc, 1, tuple(out_calls), call_specs)


#: Levels :func:`_closure` reads by all the edges before it sorts them by source and reads only
#: each frontier's: most pieces are done within them (750 closures of the any-order sample took
#: 44 ms that way, 160 ms sorted), a long chain is linear after them.
CLOSURE_DENSE_LEVELS = 16


def _closure(seeds: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int,
             within: np.ndarray | None = None, check=None,
             dense_levels: int = CLOSURE_DENSE_LEVELS) -> np.ndarray:
    """The states reached from ``seeds`` over the edges ``src -> dst`` (only through states of
    ``within`` when given), as a bool array of ``n``, a level at a time (``check`` called before
    each): the first ``dense_levels`` levels read every edge; past them the edges are sorted by
    source once and each level reads its frontier's edges only, so that a long chain (a
    bounded repetition) costs its edges, not its edges times its length."""
    seen = np.zeros(n, dtype=bool)
    seen[seeds] = True
    frontier = seen.copy()
    for _ in range(dense_levels):
        if check is not None:
            check()
        nxt = np.zeros(n, dtype=bool)
        nxt[dst[frontier[src]]] = True
        if within is not None:
            nxt &= within
        nxt &= ~seen
        if not nxt.any():
            return seen
        seen |= nxt
        frontier = nxt
    # on from the last level (the states before it have no edge left to read)
    later = frontier.copy()
    reach(src, dst, later, within, check)
    return seen | later


#: The ways of building a piece: name -> function ``(parts) -> BytePiece`` or None where the way
#: does not apply. All give the reference's piece (:data:`PIECE_REFERENCE`; the tests build
#: pieces every way that applies); :func:`build_piece` takes the first that applies.
PIECE_WAYS = {
    "one-text": _one_text,
    "subsets": _by_subsets,
}
#: The way that defines the piece: the subset construction.
PIECE_REFERENCE = "subsets"
