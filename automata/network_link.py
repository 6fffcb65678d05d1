"""Link the pieces of a lazy network into one :class:`~.lazy_bytes.LazyBytes`.

Pieces are linked callees first. A piece whose language is empty (or a key-set piece none of
whose terms can be met: each requires a key no member writes) is dropped together with every
call of it; the states that can then no longer end are trimmed. Each kept piece gets what the
walk needs to decide liveness:

* a counted piece, the lasso of ``T(q)`` for each state: the numbers of ticks on the paths from
  ``q`` to an accepting state, found by following the sets of states reachable with ``0, 1, 2,
  ...`` ticks until one repeats (the tail and period of a unary automaton);
* a key-set piece, per state: whether the object can end without another member, and which
  declared keys (and whether an undeclared key) the next member can still write. After every
  member the object must be able to close or to write any member again (the shape of a JSON
  object); the linker checks that.

Then the pieces are numbered into one table over joint byte classes, each call knows the bytes
that begin a live text of its callee (``call_first``, exact), and the walk is checked to be
deterministic, as for :class:`~.recursive.PushdownBytes`: at every state the module's own moves
and the first bytes of its calls are disjoint, and where a called piece may end, its own bytes
are disjoint from what may follow the call (:class:`~.errors.NondeterministicCall` otherwise,
naming the piece, the state and a byte).

Example
-------
>>> from tokenfsm.automata import DFA
>>> from tokenfsm.automata.network import Network, Text, Call, concat
>>> net = Network()
>>> a = net.piece(Text(DFA.literal("a")))
>>> lb = net.build(net.piece(concat(Call(a), Text(DFA.literal("b")))))
>>> lb.num_calls, lb.max_stack, lb.accepts(b"ab")
(1, 1, True)

The checks are those of the stack route (:mod:`.recursive`); the lasso of a unary automaton is
Chrobak's normal form, found here by iteration rather than built.
"""

from __future__ import annotations


import numpy as np

from .cache import ByteLRU
from .errors import DEFAULT_BUDGET, AutomatonError, Budget, BudgetExceeded, NondeterministicCall
from .lazy_bytes import COUNTED, KEY_SET, STATE_MASK, TICK_BIT, LazyBytes, _keys_live
from .minimize import reach_back
from .network_piece import BytePiece, _joint_classes

__all__ = ["link", "LASSO_LIMIT"]

#: Most bits of the lasso (tail + period) a counted piece may need per state.
LASSO_LIMIT = 4096
#: Liveness and frame tables of the pieces kept across networks, per piece and calls.
TABLES = ByteLRU("automata.network_link.tables", 8 << 20)


def _show_byte(b: int) -> str:
    return f"0x{b:02X}" + (f" {chr(b)!r}" if 0x20 <= b < 0x7F else "")


def _lowest_bit(x: int) -> int:
    return (x & -x).bit_length() - 1


class _Kept:
    """A piece after dropping calls of empty pieces: local tables and liveness data."""

    def __init__(self, p: int, bp: BytePiece, calls: list, spec):
        self.p, self.bp, self.calls, self.spec = p, bp, calls, spec
        self.key = None
        self.tail = self.period = 0
        self.bits: dict[int, list] = {}
        self.close = self.kmask = self.kextra = None
        self.keys = 0
        self.terms: list = []      # key sets: (required, forbidden) bit sets, subsumed ones out
        self.extras = False
        self.live = None


def _trim(bp: BytePiece, calls: list) -> tuple[np.ndarray, list]:
    """States of ``bp`` that can still end (given ``calls``), and the calls among them."""
    tab = np.asarray(bp.table) & STATE_MASK
    src, dst = _edges(tab, [(q, r) for q, _, r, _, _ in calls])
    seeds = np.asarray(bp.accepting, dtype=bool).copy()
    seeds[0] = False
    live = reach_back(src, dst, seeds)
    return live, [c for c in calls if live[c[0]] and live[c[2]]]


def _edges(tab: np.ndarray, extra: list = ()) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)``: the moves of ``tab`` (targets, 0 none) and the ``extra`` ``(source,
    target)`` edges, each pair once, sorted by source."""
    n = tab.shape[0]
    rows, cols = np.nonzero(tab)
    pairs = rows * n + tab[rows, cols]
    if extra:
        pairs = np.concatenate([pairs, [q * n + r for q, r in extra]])
    pairs = np.unique(pairs)
    return pairs // n, pairs % n


def _predecessors(tab: np.ndarray) -> list[list[int]]:
    """Per state, the states with a move into it in ``tab`` (targets, 0 none); each once."""
    n = tab.shape[0]
    src, dst = _edges(tab)
    order = np.argsort(dst, kind="stable")
    src = src[order].tolist()
    bounds = np.searchsorted(dst[order], np.arange(n + 1)).tolist()
    return [src[bounds[t]:bounds[t + 1]] for t in range(n)]


def _lasso(k: _Kept, live: np.ndarray) -> None:
    """Tail, period and bits of ``T(q)`` for every live state of a counted piece.

    Bit ``x`` of state ``q`` says whether ``q`` can end after ``x`` more ticks. All states step
    together: the vector of bits after ``x + 1`` ticks is those after ``x`` read back through one
    tick and the moves without one, so the first vector seen twice closes the lasso (an array
    pass per tick, not a set walk per state)."""
    tab = np.asarray(k.bp.table).astype(np.int64)
    n = tab.shape[0]
    src = np.repeat(np.arange(n, dtype=np.int64), tab.shape[1])
    val = tab.ravel()
    dst = val & STATE_MASK
    ok = (src > 0) & (dst > 0) & live[src] & live[dst]
    ticked = (val & TICK_BIT) != 0
    calls = np.array([(q, r, bool(t)) for q, _, r, t, _ in k.calls], dtype=np.int64).reshape(-1, 3)
    calls = calls[live[calls[:, 0]] & live[calls[:, 1]]] if len(calls) else calls

    def edges(tick: bool) -> tuple[np.ndarray, np.ndarray]:
        keep = ok & (ticked if tick else ~ticked)
        c = calls[calls[:, 2] == int(tick)] if len(calls) else calls
        pairs = np.unique(np.concatenate([src[keep] * n + dst[keep], c[:, 0] * n + c[:, 1]]))
        return pairs // n, pairs % n

    e_src, e_dst = edges(False)
    t_src, t_dst = edges(True)

    def close(u: np.ndarray) -> np.ndarray:
        """States that reach a state of ``u`` without a tick."""
        while True:
            more = u.copy()
            more[e_src[u[e_dst]]] = True
            if (more == u).all():
                return u
            u = more

    bits = close(np.asarray(k.bp.accepting, dtype=bool) & live)
    seen: dict[bytes, int] = {}
    rows = []
    while (key := np.packbits(bits).tobytes()) not in seen:
        if len(rows) >= LASSO_LIMIT:
            raise BudgetExceeded(LASSO_LIMIT, len(rows) + 1, f"lasso of counted piece {k.p}")
        seen[key] = len(rows)
        rows.append(bits)
        after = np.zeros(n, dtype=bool)
        after[t_src[bits[t_dst]]] = True
        bits = close(after)
    table = np.array(rows).T
    for q in np.flatnonzero(live[1:]) + 1:
        k.bits[int(q)] = table[q].tolist()
    k.tail, k.period = seen[key], len(rows) - seen[key]


def _key_tables(k: _Kept, live: np.ndarray) -> None:
    """Per state of a key-set piece: close without a member; keys and extras of the next one."""
    tab = np.asarray(k.bp.table)
    if (tab & TICK_BIT).any():
        raise AutomatonError(f"key-set piece {k.p}: members are counted by their calls; no Tick")
    n = tab.shape[0]
    own_keys = [0] * n
    own_extra = [False] * n
    keys_all, extras = 0, False
    for q, _, _, _, key in k.calls:
        if key is None:
            own_extra[q] = True
            extras = True
        else:
            own_keys[q] |= 1 << key
            keys_all |= 1 << key
    alive = live.tolist()
    acc = np.asarray(k.bp.accepting, dtype=bool).tolist()
    close = [a and v for a, v in zip(acc, alive)]
    kmask = own_keys[:]
    kextra = own_extra[:]
    # what a state can still reach without a member, read back along the moves between live
    # states (a worklist: a state is visited again only when what it reaches grew)
    tgt = tab & STATE_MASK
    pre = _predecessors(np.where(live[tgt] & live[:, None], tgt, 0))
    todo = [q for q in range(1, n) if alive[q] and (close[q] or kmask[q] or kextra[q])]
    while todo:
        t = todo.pop()
        c, m, e = close[t], kmask[t], kextra[t]
        for q in pre[t]:
            c2, m2, e2 = close[q] or c, kmask[q] | m, kextra[q] or e
            if c2 != close[q] or m2 != kmask[q] or e2 != kextra[q]:
                close[q], kmask[q], kextra[q] = c2, m2, e2
                todo.append(q)
    for q, _, r, _, _ in k.calls:
        if not (close[r] and kmask[r] == keys_all and kextra[r] == extras):
            raise AutomatonError(
                f"key-set piece {k.p}: after a member (return state {r}) the object must be able "
                "to close or to write any member again")
    k.close, k.kmask, k.kextra, k.keys, k.extras = close, kmask, kextra, keys_all, extras


def _fresh_live(k: _Kept) -> bool:
    """Whether the piece's start with a fresh frame (count 0, no keys) can end."""
    sp, q = k.spec, k.bp.start
    hi = -1 if sp.hi is None else sp.hi
    if sp.kind == COUNTED:
        A, P, bits = k.tail, k.period, k.bits[q]
        return any(bits[x if x < A + P else A + (x - A) % P]
                   for x in range(sp.lo, sp.lo + A + P) if hi < 0 or x <= hi)
    if sp.kind == KEY_SET:
        return _keys_live(k.close[q], k.kmask[q], k.kextra[q], k.keys, k.terms, k.extras,
                          sp.lo, hi, 0, 0)
    return True


def link(specs: list, top: int, budget: Budget | None = None,
         max_depth: int | None = None, depth_of: dict | None = None) -> LazyBytes:
    """One :class:`LazyBytes` of the pieces reachable from ``top``.

    Parameters
    ----------
    specs : list
        Per piece, an object with ``piece`` (:class:`BytePiece`), ``kind``, ``lo``, ``hi``
        (None: unbounded), ``n_keys`` and ``required`` (key-set pieces).
    top : int
    budget : Budget, optional
        Bounds the variants and the states of the linked table.
    max_depth : int, optional
        For pieces that call themselves (through others): a call of piece ``k`` is allowed only
        while fewer than ``max_depth`` frames of ``k`` are on the stack, the new one included
        (the stack route's rule, :class:`~.recursive.RecursiveDFA`). Each (piece, frames of the
        pieces it can reach) is then a *variant* of its own, with the calls that the depth cuts
        removed. Required when the calls from ``top`` have a cycle.
    depth_of : dict, optional
        Piece -> the piece whose frames it counts as its own toward ``max_depth`` (see
        :meth:`.network.Network.same_depth`); a piece not listed counts its own.

    Raises
    ------
    NondeterministicCall, AutomatonError, BudgetExceeded
    """
    from .recursive import _below

    meter = (budget or DEFAULT_BUDGET).meter("network link")
    n = len(specs)
    callees = [sorted({c for c, _, _ in specs[p].piece.call_specs}) if specs[p] is not None else []
               for p in range(n)]
    below = _below(callees)
    reach = below[top] | (1 << top)
    for p in range(n):
        if reach >> p & 1 and specs[p] is None:
            raise AutomatonError(f"piece {p} is declared but never defined")
    if any(reach >> p & 1 and below[p] >> p & 1 for p in range(n)) and max_depth is None:
        raise AutomatonError(f"the pieces reachable from piece {top} call themselves: give "
                             "max_depth (the stack route's bound on nested calls)")
    D = float("inf") if max_depth is None else int(max_depth)
    # frames are counted per group of pieces (a piece alone, unless grouped): a variant keeps
    # the counts of the groups it can still call
    group = [(depth_of or {}).get(p, p) for p in range(n)]
    members = [0] * n
    for p in range(n):
        members[group[p]] |= 1 << p

    def vkey(p: int, frames: tuple) -> tuple:
        return (p, tuple(fc for fc in frames if below[p] & members[fc[0]]))

    memo: dict[tuple, _Kept | None] = {}
    tables: dict[tuple, tuple] = {}
    work = [[top, (), vkey(top, ()), None]]
    while work:
        entry = work[-1]
        p, frames, kk, need = entry
        if kk in memo:
            work.pop()
            continue
        if need is None:
            have = dict(frames)
            need = entry[3] = {}
            for j in callees[p]:
                g = group[j]
                c = have.get(g, 0)
                if c < D:
                    f2 = dict(have)
                    f2[g] = c + 1
                    f2 = tuple(sorted(f2.items()))
                    need[j] = (f2, vkey(j, f2))
        missing = [[j, f2, jk, None] for j, (f2, jk) in need.items() if jk not in memo]
        if missing:
            work.extend(missing)
            continue
        work.pop()
        meter.add()
        memo[kk] = _variant(p, kk, specs[p], {j: jk for j, (_, jk) in need.items()
                                             if memo[jk] is not None}, tables)
    top_key = vkey(top, ())
    if memo[top_key] is None:
        return _empty()
    # number the variants: the top first, then breadth first along calls
    seq = [top_key]
    seen = {top_key}
    i = 0
    while i < len(seq):
        for _, callee, _, _, _ in memo[seq[i]].calls:
            if callee not in seen:
                seen.add(callee)
                seq.append(callee)
        i += 1
    return _assemble([memo[k] for k in seq], meter)


def _variant(p: int, vk: tuple, sp, live_callees: dict, tables: dict) -> _Kept | None:
    """Piece ``p`` with its calls into ``live_callees`` (piece -> variant key) only; None if
    its language is then empty. Variants that keep the same calls share their tables."""
    bp = sp.piece
    if bp.start == 0:
        return None
    calls = []
    for q, c, r, tick in bp.calls:
        callee, _, key = bp.call_specs[c]
        if callee not in live_callees:
            continue
        if sp.kind == KEY_SET:
            if tick:
                raise AutomatonError(f"key-set piece {p}: members are counted by their calls; "
                                     "no Tick")
            tick = True
        calls.append((q, live_callees[callee], r, tick, key))
    shape = (p, tuple((q, r, t, k) for q, _, r, t, k in calls))
    got = tables.get(shape)
    if got is None:
        got = tables[shape] = _kept_tables(p, bp, sp, shape[1])
    if got is False:
        return None
    live, proto = got
    k = _Kept(p, bp, [c for c in calls if live[c[0]] and live[c[2]]], sp)
    for name in ("tail", "period", "bits", "close", "kmask", "kextra", "keys", "terms",
                 "extras"):
        setattr(k, name, getattr(proto, name))
    k.live = live
    k.key = vk
    return k


def _kept_tables(p: int, bp: BytePiece, sp, calls: tuple):
    """:func:`_tables`, kept across links for a piece kept across networks (its arrays are
    read-only, :data:`.network_piece.PIECES`): the same JSON value, the same object's keys,
    linked into every schema that holds them."""
    table = bp.table
    listed = [(q, None, r, t, k) for q, r, t, k in calls]
    if table.flags.writeable:
        return _tables(p, bp, sp, listed)
    # (the entry holds the table, so its id names no other array while the entry lives)
    key = (id(table), sp.kind, sp.lo, sp.hi, sp.n_keys, sp.terms, calls)
    got = TABLES.get(key)
    if got is None or got[0] is not table:
        got = (table, _tables(p, bp, sp, listed))
        if got[1]:
            got[1][0].flags.writeable = False
        n = table.shape[0]
        TABLES.put(key, got, nbytes=400 + 64 * len(calls) + (60 * n if got[1] else 0))
    return got[1]


def _tables(p: int, bp: BytePiece, sp, calls: list):
    """``(live, tables)`` of a piece with these calls, or False if its language is empty."""
    live, calls = _trim(bp, calls)
    if not live[bp.start]:
        return False
    k = _Kept(p, bp, calls, sp)
    if sp.kind == COUNTED:
        _lasso(k, live)
    elif sp.kind == KEY_SET:
        _key_tables(k, live)
        k.terms = _terms(sp.terms, k.keys)
        if not k.terms:
            return False
    k.live = live
    if not _fresh_live(k):
        return False
    return live, k


def _terms(terms: tuple, keys: int) -> list:
    """A key set's terms as ``(required, forbidden)`` bit sets: those whose required keys some
    member writes (``keys``), forbidding only such keys, none implied by another (a term that
    requires and forbids no more than another adds nothing)."""
    bits = []
    for req, forb in terms:
        r, f = sum(1 << i for i in req), sum(1 << i for i in forb) & keys
        if not r & ~keys and (r, f) not in bits:
            bits.append((r, f))
    return [(r, f) for r, f in bits
            if not any((r2, f2) != (r, f) and r2 & ~r == 0 and f2 & ~f == 0 for r2, f2 in bits)]


def _empty() -> LazyBytes:
    return LazyBytes(
        start=0, max_stack=0, byte_classes=np.zeros(256, np.uint8),
        table=np.zeros((1, 1), np.int32), accepting=np.zeros(1, bool),
        call_ptr=np.zeros(2, np.int32), call_entry=np.zeros(0, np.int32),
        call_return=np.zeros(0, np.int32), call_first=np.zeros((0, 256), bool),
        call_tick=np.zeros(0, bool), call_commit=np.zeros(0, np.int32),
        state_piece=np.zeros(1, np.int32), piece_kind=np.zeros(1, np.int8),
        piece_lo=np.zeros(1, np.int64), piece_hi=np.full(1, -1, np.int64),
        piece_keys=np.zeros((1, 1), np.uint64), piece_terms=np.zeros(2, np.int32),
        term_required=np.zeros((0, 1), np.uint64), term_forbidden=np.zeros((0, 1), np.uint64),
        piece_extras=np.zeros(1, bool), piece_tail=np.zeros(1, np.int32),
        piece_period=np.ones(1, np.int32), count_off=np.full(1, -1, np.int32),
        count_bits=np.zeros(0, bool), key_close=np.zeros(1, bool),
        key_mask=np.zeros((1, 1), np.uint64), key_extra=np.zeros(1, bool))


def _words(x: int, W: int) -> list[int]:
    return [(x >> (64 * i)) & 0xFFFFFFFFFFFFFFFF for i in range(W)]


def _assemble(pieces: list[_Kept], meter) -> LazyBytes:
    P = len(pieces)
    index = {k.key: i for i, k in enumerate(pieces)}
    byte_cls, colmaps = _joint_classes([np.asarray(k.bp.byte_classes, np.int64) for k in pieces])
    J = int(byte_cls.max()) + 1
    # local live states renumbered 1.. per piece, then offset
    local: list[np.ndarray] = []
    bases = []
    S = 1
    for k in pieces:
        keep = np.flatnonzero(k.live)
        ren = np.zeros(k.bp.num_states, dtype=np.int64)
        ren[keep] = np.arange(keep.size) + S
        local.append(ren)
        bases.append(S)
        S += keep.size
        meter.add(keep.size)
    if S >= TICK_BIT:
        raise BudgetExceeded(TICK_BIT - 1, S, "network link")
    table = np.zeros((S, J), dtype=np.int32)
    accepting = np.zeros(S, dtype=bool)
    state_piece = np.zeros(S, dtype=np.int32)
    W = max(1, (max((k.spec.n_keys for k in pieces), default=0) + 63) // 64)
    count_off = np.full(S, -1, dtype=np.int32)
    bits: list[bool] = []
    key_close = np.zeros(S, dtype=bool)
    key_mask = np.zeros((S, W), dtype=np.uint64)
    key_extra = np.zeros(S, dtype=bool)
    kinds = np.zeros(P, np.int8)
    lo = np.zeros(P, np.int64)
    hi = np.full(P, -1, np.int64)
    pkeys = np.zeros((P, W), np.uint64)
    pterms = np.zeros(P + 1, np.int32)
    terms: list = []
    pext = np.zeros(P, bool)
    ptail = np.zeros(P, np.int32)
    pperiod = np.ones(P, np.int32)
    starts = []
    edges = []
    for i, k in enumerate(pieces):
        ren = local[i]
        tab = np.asarray(k.bp.table).astype(np.int64)[:, colmaps[i]]
        tgt = tab & STATE_MASK
        mapped = np.where(tgt > 0, ren[tgt] | (tab & TICK_BIT), 0)
        keep = np.flatnonzero(k.live)
        table[ren[keep]] = mapped[keep]
        accepting[ren[keep]] = np.asarray(k.bp.accepting)[keep]
        state_piece[ren[keep]] = i
        starts.append(int(ren[k.bp.start]))
        sp = k.spec
        kinds[i] = sp.kind
        lo[i] = sp.lo
        hi[i] = -1 if sp.hi is None else sp.hi
        if sp.kind == COUNTED:
            ptail[i], pperiod[i] = k.tail, k.period
            for q in keep.tolist():
                count_off[ren[q]] = len(bits)
                bits.extend(k.bits[q])
        elif sp.kind == KEY_SET:
            pkeys[i] = _words(k.keys, W)
            terms += k.terms
            pext[i] = k.extras
            at = ren[keep]
            key_close[at] = np.asarray(k.close, dtype=bool)[keep]
            key_extra[at] = np.asarray(k.kextra, dtype=bool)[keep]
            masks = [k.kmask[q] for q in keep.tolist()]
            for w in range(W):        # a word of keys at a time (most objects: one)
                key_mask[at, w] = np.array([(x >> (64 * w)) & 0xFFFFFFFFFFFFFFFF for x in masks],
                                           dtype=np.uint64)
        pterms[i + 1] = len(terms)
        for q, callee, r, tick, key in k.calls:
            edges.append((int(ren[q]), index[callee], int(ren[r]), bool(tick),
                          -1 if key is None else int(key)))
    edges = sorted(set(edges))
    E = len(edges)
    call_state = np.array([e[0] for e in edges], dtype=np.int64)
    call_ptr = np.searchsorted(call_state, np.arange(S + 1)).astype(np.int32)
    arrays = dict(
        byte_classes=byte_cls, table=table, accepting=accepting, call_ptr=call_ptr,
        call_entry=np.array([starts[e[1]] for e in edges], dtype=np.int32),
        call_return=np.array([e[2] for e in edges], dtype=np.int32),
        call_first=np.zeros((E, 256), dtype=bool),
        call_tick=np.array([e[3] for e in edges], dtype=bool),
        call_commit=np.array([e[4] for e in edges], dtype=np.int32),
        state_piece=state_piece, piece_kind=kinds, piece_lo=lo, piece_hi=hi, piece_keys=pkeys,
        piece_terms=pterms,
        term_required=np.array([_words(r, W) for r, _ in terms], np.uint64).reshape(-1, W),
        term_forbidden=np.array([_words(f, W) for _, f in terms], np.uint64).reshape(-1, W),
        piece_extras=pext, piece_tail=ptail, piece_period=pperiod,
        count_off=count_off, count_bits=np.array(bits, dtype=bool), key_close=key_close,
        key_mask=key_mask, key_extra=key_extra)
    depth = [0] * P
    # longest chain of calls: callees first (post order of the acyclic call graph)
    called: list[set] = [set() for _ in range(P)]
    owner = state_piece.tolist()
    for e in edges:                   # (one pass: a scan per piece is quadratic in the pieces)
        called[owner[e[0]]].add(e[1])
    callees = [sorted(c) for c in called]
    done = [False] * P

    def chain(i: int) -> int:
        stack = [(i, 0)]
        while stack:
            j, pos = stack.pop()
            if pos < len(callees[j]):
                stack.append((j, pos + 1))
                c = callees[j][pos]
                if not done[c]:
                    stack.append((c, 0))
                continue
            depth[j] = max([1 + depth[c] for c in callees[j]], default=0)
            done[j] = True
        return depth[i]

    max_stack = chain(0)
    draft = LazyBytes._draft(start=starts[0], max_stack=max_stack, **arrays)
    for i in range(1, P):
        if draft.accepting[starts[i]] and draft.guard(starts[i], 0, 0):
            raise AutomatonError(f"piece {pieces[i].p} is called but accepts the empty text; a "
                                 "called piece must read at least one byte")
    first = _first_bytes(draft, pieces, starts, edges, byte_cls, callees)
    call_first = np.zeros((E, 256), dtype=bool)
    for e, (_, callee, _, _, _) in enumerate(edges):
        call_first[e] = _bits_to_bool(first[callee])
    arrays["call_first"] = call_first
    lb = LazyBytes(start=starts[0], max_stack=max_stack, **arrays)
    _check_deterministic(lb, pieces, edges, first, starts)
    return lb


def _bits_to_bool(x: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(x.to_bytes(32, "little"), dtype=np.uint8),
                         bitorder="little").astype(bool)


def _class_bits(byte_cls, n: int = 0) -> list[int]:
    """Per byte class (at least ``n`` of them), the bit set of its bytes."""
    member = np.zeros((max(n, int(byte_cls.max()) + 1), 256), dtype=bool)
    member[byte_cls, np.arange(256)] = True
    return [int.from_bytes(r.tobytes(), "little")
            for r in np.packbits(member, axis=1, bitorder="little")]


def _first_bytes(lb: LazyBytes, pieces, starts, edges, byte_cls, callees) -> list[int]:
    """Per piece, the bytes that begin a live text from its fresh start (callees first)."""
    P = len(pieces)
    first = [0] * P
    members = _class_bits(byte_cls)
    ptr = lb.call_ptr.tolist()
    done = [False] * P
    order = []

    def visit(i):
        stack = [(i, 0)]
        while stack:
            j, pos = stack.pop()
            if pos < len(callees[j]):
                stack.append((j, pos + 1))
                if not done[callees[j][pos]]:
                    stack.append((callees[j][pos], 0))
                continue
            if not done[j]:
                done[j] = True
                order.append(j)

    visit(0)
    for i in order:
        q = starts[i]
        f = 0
        for c, v in enumerate(lb.table[q].tolist()):
            if v and lb.live(v & STATE_MASK, 1 if v & TICK_BIT else 0, 0):
                f |= members[c]
        for e in range(ptr[q], ptr[q + 1]):
            _, callee, r, tick, key = edges[e]
            if lb.live(r, int(tick), 0 if key < 0 else 1 << key):
                f |= first[callee]
        first[i] = f
    return first


def _check_deterministic(lb: LazyBytes, pieces, edges, first, starts) -> None:
    """The two checks of the module docstring; NondeterministicCall on the first conflict."""
    S = lb.num_states
    cls_bits = _class_bits(lb.byte_classes, lb.num_byte_classes)
    moves_cache: dict[int, int] = {}

    def moves(q: int) -> int:
        m = moves_cache.get(q)
        if m is None:
            m = 0
            for c in np.flatnonzero(lb.table[q]).tolist():
                m |= cls_bits[c]
            moves_cache[q] = m
        return m

    ptr = lb.call_ptr.tolist()
    sp = lb.state_piece.tolist()

    def fail(q: int, b: int, what: str, callees: tuple = ()):
        p = pieces[sp[q]].p
        raise NondeterministicCall(f"piece {p}, byte state {q}: byte {_show_byte(b)} {what}",
                                   module=p, frames=(), state=q, byte=b,
                                   calls=tuple(pieces[c].p for c in callees))

    calls_first_at: dict[int, int] = {}
    cp = lb.call_ptr
    for q in (np.flatnonzero(cp[1:S] != cp[2:S + 1]) + 1).tolist():     # (states with calls)
        seen = moves(q)
        for e in range(ptr[q], ptr[q + 1]):
            callee = edges[e][1]
            f = first[callee]
            both = seen & f
            if both:
                b = _lowest_bit(both)
                if moves(q) >> b & 1:
                    fail(q, b, f"continues the piece and begins a call of piece "
                               f"{pieces[callee].p}", (callee,))
                other = next(edges[x][1] for x in range(ptr[q], e) if first[edges[x][1]] >> b & 1)
                fail(q, b, f"begins two different calls (of pieces {pieces[other].p} and "
                           f"{pieces[callee].p})", (other, callee))
            seen |= f
        calls_first_at[q] = seen & ~moves(q)
    # what may follow the end of each called piece
    P = len(pieces)
    follow = [0] * P
    acc = lb.accepting
    changed = True
    while changed:
        changed = False
        for q, callee, r, _, _ in edges:
            got = moves(r) | calls_first_at.get(r, 0)
            if acc[r]:
                got |= follow[sp[q]]
            if got & ~follow[callee]:
                follow[callee] |= got
                changed = True
    for q in np.flatnonzero(acc).tolist():
        fw = follow[sp[q]]
        if fw:
            both = (moves(q) | calls_first_at.get(q, 0)) & fw
            if both:
                fail(q, _lowest_bit(both),
                     "continues the piece where it may end, and also continues its caller")
