"""Numba kernels for lazy networks: mask rows of configurations whose frames hold data.

A :class:`~tokenfsm.automata.lazy_bytes.LazyBytes` configuration is a top frame ``(q, count,
keys)`` and a stack of frames ``(return state, count, keys)``; one byte moves it by the rules of
that module's docstring, and a move is allowed only if the frame that moved stays *live*.
:func:`fill_row` walks the vocabulary's token trie from one configuration, like
:func:`.pd_kernels.fill_row` for plain stack automata: each trie level keeps its top frame, how
many entries of the given stack are still there and a pointer into a linked arena of the frames
pushed since, so the common move copies a few integers (and the key words).

The automaton's arrays travel packed into a few arrays (:func:`automaton_tuple`) and are taken
back out as one tuple in the order ``AUTOMATON_FIELDS``; key sets are ``uint64`` words (``W``
per frame).

Every kernel takes plain arrays and scalars, is compiled with ``cache=True`` and runs as ordinary
Python under ``NUMBA_DISABLE_JIT=1``. Inputs are trusted (validated by the index).

Example
-------
>>> out, touched = row_scratch(n_words)                                   # doctest: +SKIP
>>> used, exact, visited, idx, val = fill_row(trie.nodes, trie.tok_ids, trie.max_depth, roots,
...     automaton_tuple(lb), q, c, keys, st_ret, st_cnt, st_keys, cap, can_end, eos_ids, out,
...     touched, -1, NO_NEED, NO_SPAN)                                    # doctest: +SKIP

The persistent stack per trie level is :mod:`.pd_kernels`'s; liveness of counts from a lasso of
tick counts follows counting automata (Turonova et al., OOPSLA 2020).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .pd_kernels import _live_roots, _set_token, _take, skeleton_exits

__all__ = ["AUTOMATON_FIELDS", "FIELD_TYPES", "automaton_tuple", "fill_row", "replay_row",
           "region_needs", "set_tokens", "tick_targets"]

#: The automaton's fields, in the order the kernels index them (``a[k]``), and the type each
#: is read as: (dtype, dimensions).
FIELD_TYPES = {
    "table": (np.int32, 2), "byte_classes": (np.uint8, 1), "accepting": (np.bool_, 1),
    "call_ptr": (np.int32, 1), "call_entry": (np.int32, 1), "call_return": (np.int32, 1),
    "call_first": (np.bool_, 2), "call_tick": (np.bool_, 1), "call_commit": (np.int32, 1),
    "state_piece": (np.int32, 1), "piece_kind": (np.int8, 1), "piece_lo": (np.int64, 1),
    "piece_hi": (np.int64, 1), "piece_keys": (np.uint64, 2), "term_required": (np.uint64, 2),
    "piece_extras": (np.bool_, 1), "piece_tail": (np.int32, 1), "piece_period": (np.int32, 1),
    "count_off": (np.int32, 1), "count_bits": (np.bool_, 1), "key_close": (np.bool_, 1),
    "key_mask": (np.uint64, 2), "key_extra": (np.bool_, 1), "piece_terms": (np.int32, 1),
    "term_forbidden": (np.uint64, 2),
}
AUTOMATON_FIELDS = tuple(FIELD_TYPES)

_MASK = (1 << 30) - 1
#: The needs :func:`fill_row` takes where the walk is not a band's (never read).
NO_NEED = np.zeros(0, dtype=np.int32)
#: The span :func:`fill_row` takes where the counts its row holds for are not asked (never read).
NO_SPAN = np.zeros(0, dtype=np.int64)
#: The EOS ids of a band's walk (none; read-only, as an index's own are).
NO_EOS = np.zeros(0, dtype=np.int32)
NO_EOS.flags.writeable = False
#: Exit states whose key-set test :func:`replay_row` keeps within one row.
_SEEN = 64


#: The four flat arrays the fields are packed into, by element type (one-byte types share one).
_GROUPS = (np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.uint8))


def automaton_tuple(arrays) -> tuple:
    """The arrays of ``AUTOMATON_FIELDS`` from an object or dict, as the kernels take them:
    packed into four flat arrays by element type (``int32``, ``int64``, ``uint64``, and one byte
    for ``uint8``, ``bool`` and ``int8``) and a layout ``int64[fields, 3]`` (offset, rows,
    columns). Numba's dispatcher types a tuple of 25 arrays in about 1.8 us and one of five in
    0.4; the kernels take the fields back out (:func:`_fields`, views: no copy).

    >>> import numpy as np
    >>> arrays = {n: np.zeros((3, 2) if d == 2 else 3, t) for n, (t, d) in FIELD_TYPES.items()}
    >>> arrays["table"][2, 1] = 7
    >>> packed = automaton_tuple(arrays)
    >>> [a.dtype.name for a in packed]
    ['int32', 'int64', 'uint64', 'uint8', 'int64']
    >>> int(_fields(packed)[0][2, 1])
    7
    """
    get = arrays.__getitem__ if isinstance(arrays, dict) else lambda n: getattr(arrays, n)
    parts: list[list] = [[] for _ in _GROUPS]
    size = [0] * len(_GROUPS)
    layout = np.zeros((len(AUTOMATON_FIELDS), 3), dtype=np.int64)
    for i, name in enumerate(AUTOMATON_FIELDS):
        dtype, dims = FIELD_TYPES[name]
        arr = np.ascontiguousarray(get(name), dtype=dtype)
        if arr.ndim != dims:
            raise ValueError(f"{name} has {arr.ndim} dimensions, not {dims}")
        g = next(j for j, d in enumerate(_GROUPS) if d.itemsize == arr.itemsize
                 and (d.kind == arr.dtype.kind or d.itemsize == 1))
        layout[i] = (size[g], arr.shape[0], arr.shape[1] if dims == 2 else 0)
        parts[g].append(arr.reshape(-1).view(_GROUPS[g]))
        size[g] += arr.size
    return tuple(np.concatenate(p) if p else np.zeros(0, g) for p, g in zip(parts, _GROUPS)) + (
        layout,)


@njit(cache=True, inline="always")
def _flat(buf, layout, i):
    return buf[layout[i, 0]:layout[i, 0] + layout[i, 1]]


@njit(cache=True, inline="always")
def _rows(buf, layout, i):
    n = layout[i, 1] * layout[i, 2]
    return buf[layout[i, 0]:layout[i, 0] + n].reshape((layout[i, 1], layout[i, 2]))


@njit(cache=True, inline="always")
def _fields(packed):
    """The fields of :func:`automaton_tuple`'s packing as the kernels index them (``a[k]`` is
    ``AUTOMATON_FIELDS[k]``, typed as ``FIELD_TYPES`` says), views into the packed arrays."""
    i32, i64, u64, b1, at = packed
    return (_rows(i32, at, 0), _flat(b1, at, 1), _flat(b1, at, 2).view(np.bool_),
            _flat(i32, at, 3), _flat(i32, at, 4), _flat(i32, at, 5),
            _rows(b1, at, 6).view(np.bool_), _flat(b1, at, 7).view(np.bool_), _flat(i32, at, 8),
            _flat(i32, at, 9), _flat(b1, at, 10).view(np.int8), _flat(i64, at, 11),
            _flat(i64, at, 12), _rows(u64, at, 13), _rows(u64, at, 14),
            _flat(b1, at, 15).view(np.bool_), _flat(i32, at, 16), _flat(i32, at, 17),
            _flat(i32, at, 18), _flat(b1, at, 19).view(np.bool_),
            _flat(b1, at, 20).view(np.bool_), _rows(u64, at, 21), _flat(b1, at, 22).view(np.bool_),
            _flat(i32, at, 23), _rows(u64, at, 24))


@njit(cache=True, inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, inline="always")
def _members_ok(c1, r1, free1, lo, hi, ext):
    if hi >= 0 and c1 > hi:
        return False
    need = r1
    if lo - c1 > need:
        need = lo - c1
    if need < 0:
        need = 0
    if hi >= 0 and need > hi - c1:
        return False
    return ext or need <= free1


@njit(cache=True, inline="always")
def _count_need(c, lo, tail, period, off, bits):
    """The fewest further ticks in ``T(t)`` (the lasso at ``bits[off:]``) that bring count ``c``
    to at least ``lo``, with no upper bound; -1 if none."""
    x = lo - c
    if x < 0:
        x = 0
    need = -1
    for _ in range(tail + period):
        idx = x
        if x >= tail + period:
            idx = tail + (x - tail) % period
        if bits[off + idx]:
            need = x
            break
        x += 1
    return need


@njit(cache=True, inline="always")
def _count_live(t, c, lo, hi, tail, period, off, bits):
    """Whether some number of further ticks in ``T(t)`` (the lasso at ``bits[off:]``) brings
    count ``c`` into ``lo..hi`` (``hi`` -1: unbounded)."""
    m = _count_need(c, lo, tail, period, off, bits)
    live = False
    if m >= 0:
        live = hi < 0 or m <= hi - c
    return live


@njit(cache=True, inline="always")
def _span_slot(base, pushed, n, track0, track1):
    """Which frame of a walk's given configuration is on top (0: the top frame, nothing pushed
    above it; 2: the stack's top, the frame above it popped), where its counts are spanned
    (see :func:`_walk_ranges`); -1 otherwise."""
    if pushed == 0:
        if base == n and track0:
            return 0
        if base == n - 1 and track1:
            return 2
    return -1


@njit(cache=True, inline="always")
def _count_spanned(c, c0, lo, hi, tail, period, off, bits, span, at):
    """:func:`_count_live` for a frame that the walk found at count ``c0``, now at ``c``.

    With ``c0`` at least ``lo`` (the fewest further ticks do not depend on the count there),
    its *need*, the ticks since ``c0`` and the fewest further ones, goes into ``span[at:at +
    2]``: the most need that the bound let live and the least it did not. Below ``lo`` (no
    upper bound then), a state whose counts to come are endless (a set bit in its lasso's
    period) is live at every count; one whose are not, at most ``M`` more ticks, is live where
    ``c + M`` reaches ``lo``: the ticks since ``c0`` plus ``M`` go to :func:`_pop_spanned`'s
    entries, as those of an end (``M`` 0)."""
    if c0 < lo:
        most = -1
        for i in range(tail + period):
            if bits[off + i]:
                if i >= tail:
                    return True
                most = i
        if most < 0:
            return False              # (no count ends it: dead at every count)
        return _pop_spanned(c + most, c0, lo, span, at)
    m = _count_need(c, lo, tail, period, off, bits)
    if m < 0:
        return False
    need = c - c0 + m
    if hi < 0 or need <= hi - c0:
        if need > span[at]:
            span[at] = need
        return True
    if need < span[at + 1]:
        span[at + 1] = need
    return False


@njit(cache=True, inline="always")
def _count_ok(t, c, at, c0, lo, hi, tail, period, off, bits, span):
    """:func:`_count_live` of state ``t`` at count ``c``, or :func:`_count_spanned` where
    ``at`` names the spanned frame moving (see :func:`_span_slot`; ``c0``: its count when the
    walk found it)."""
    if at >= 0:
        return _count_spanned(c, c0, lo, hi, tail, period, off, bits, span, at)
    return _count_live(t, c, lo, hi, tail, period, off, bits)


@njit(cache=True, inline="always")
def _pop_spanned(cc, c0, lo, span, at):
    """A spanned frame found below ``lo`` at count ``c0`` ends at count ``cc`` (allowed from
    ``lo`` on): of the ticks ``cc - c0`` it took, ``span[at]`` keeps the most of those that
    ended too soon and ``span[at + 1]`` the fewest of those that did not. Whether it may."""
    k = cc - c0
    if cc >= lo:
        if k < span[at + 1]:
            span[at + 1] = k
        return True
    if k > span[at]:
        span[at] = k
    return False


@njit(cache=True, inline="always")
def _terms(a):
    """The key sets' terms of an automaton tuple, as :func:`_keys_live` and :func:`_term_met`
    take them: ``(piece_terms, term_required, term_forbidden)``."""
    return a[23], a[14], a[24]


@njit(cache=True, inline="always")
def _keys_live(t, p, c, kw, row, lo, hi, piece_keys, terms, piece_extras, key_close, key_mask,
               key_extra):
    """Whether a key-set frame at ``t`` with count ``c`` and key words ``kw[row]`` can end,
    under one of its piece's terms (``terms``: piece_terms, term_required, term_forbidden) that
    no written key breaks.

    (This and the other helpers taking arrays return at one place only: with an early return,
    Numba keeps the reference counting of the inlined helper's arrays, an atomic increment and
    decrement per array per call: about 50 ns a call here, against 1 to 12 ns without.)"""
    piece_terms, term_required, term_forbidden = terms
    ext = piece_extras[p]
    live = False
    x = piece_terms[p]
    end = piece_terms[p + 1]
    if hi >= 0 and c > hi:
        end = x
    while x < end and not live:
        r = 0
        free = 0
        any_kq = False
        kq_req = False
        broken = False
        for w in range(kw.shape[1]):
            F = term_forbidden[x, w]
            if F & kw[row, w] != np.uint64(0):
                broken = True
                break
            R = term_required[x, w] & ~kw[row, w]
            r += _popcount(R)
            free += _popcount(piece_keys[p, w] & ~kw[row, w] & ~F)
            kq = key_mask[t, w] & ~kw[row, w] & ~F
            if kq != np.uint64(0):
                any_kq = True
                if kq & R != np.uint64(0):
                    kq_req = True
        if not broken:
            if key_close[t] and r == 0 and c >= lo:
                live = True
            elif any_kq and _members_ok(c + 1, r - 1 if kq_req else r, free - 1, lo, hi, ext):
                live = True
            elif key_extra[t] and _members_ok(c + 1, r, free, lo, hi, ext):
                live = True
        x += 1
    return live


@njit(cache=True, inline="always")
def _term_met(terms, p, kw, row):
    """Whether the key words ``kw[row]`` meet one of piece ``p``'s terms: its required keys
    written, none of its forbidden ones."""
    piece_terms, term_required, term_forbidden = terms
    met = False
    x = piece_terms[p]
    while x < piece_terms[p + 1] and not met:
        met = True
        for w in range(kw.shape[1]):
            if (term_required[x, w] & ~kw[row, w]) | (term_forbidden[x, w] & kw[row, w]) \
                    != np.uint64(0):
                met = False
                break
        x += 1
    return met


@njit(cache=True)
def _levels(max_depth, cap, W):
    """Per trie level: the top frame (state, count, key words), how many entries of the given
    stack are left, the arena top and the count pushed; and the push arena."""
    levels = max_depth + 1
    return (np.zeros(levels, dtype=np.int32), np.zeros(levels, dtype=np.int64),
            np.zeros((levels, W), dtype=np.uint64), np.zeros(levels, dtype=np.int64),
            np.full(levels, -1, dtype=np.int64), np.zeros(levels, dtype=np.int64),
            np.zeros(levels * cap + 1, dtype=np.int32), np.zeros(levels * cap + 1, dtype=np.int64),
            np.zeros((levels * cap + 1, W), dtype=np.uint64),
            np.full(levels * cap + 1, -1, dtype=np.int64))


@njit(cache=True)
def _walk_ranges(r_start, r_stop, r_depth, r_state, r_count, n_ranges, nodes, tok_ids, a, lq, lc,
                 lk, bs, tp, cn, st_ret, st_cnt, st_keys, a_ret, a_cnt, a_keys, a_par, cap, out,
                 touched, n_set, band, nd, tok_need, span):
    """Walk the trie node ranges ``r_start[k] .. r_stop[k] - 1`` (whole subtrees) for ``k <
    n_ranges``, each from the configuration of level ``depth - 1`` of its first node, setting the
    bits of the tokens that stay live in ``out`` (words listed in ``touched``). A range with
    ``r_depth[k] > 0`` first sets that level's top frame to state ``r_state[k]``, count
    ``r_count[k]`` and level 0's keys, over the whole given stack. One call walks every range
    (see :func:`.pd_kernels._walk_ranges`).

    With ``band`` a piece (else -1; ``nd``, int64 per level, and ``tok_need`` are then not
    read) the walk is that band's, a counted piece whose frame is level 0's: that frame's upper
    bound is left out (its moves are live where some count could end them), and each token's
    need (the most its ticks so far plus the fewest further ticks its state needs, over the
    token's moves in that frame) goes to ``tok_need`` (see :func:`fill_row`). One compiled
    walk serves both: a band's branch costs the other walks a test per node, and a second
    compilation of this walk and its callers costs seconds on first use.

    With ``span`` of four entries (``band`` -1), each test of the count of the top frame (where
    ``span[1] >= 0``) or of the stack's top frame (where ``span[3] >= 0``), each a counted
    piece's, while that frame is on top (its moves, its calls' returns, its moves once its
    callees pop, its end) also goes into ``span[0:2]`` or ``span[2:4]`` (see
    :func:`_count_spanned`, :func:`_pop_spanned`). From the lower bound, the row then holds at
    every count ``c'`` of that frame with ``span[at] <= hi - c' < span[at + 1]``; below it
    (no upper bound), at every ``c'`` below it with ``span[at] < lo - c' <= span[at + 1]``;
    the other frame's count either the same or in its own such run.

    Returns ``(fewest entries of the given stack left, exact, nodes visited, words listed)``
    (see :func:`fill_row`)."""
    n = st_ret.shape[0]
    track0 = span.shape[0] == 4 and span[1] >= 0
    track1 = span.shape[0] == 4 and span[3] >= 0
    W = lk.shape[1]
    # the arrays of the common move, taken out of the tuple once (not per node)
    table, byte_classes, accepting, state_piece, piece_kind = a[0], a[1], a[2], a[9], a[10]
    call_ptr, call_entry, call_return, call_first, call_tick, call_commit = (
        a[3], a[4], a[5], a[6], a[7], a[8])
    piece_lo, piece_hi, piece_tail, piece_period, count_off, count_bits = (
        a[11], a[12], a[16], a[17], a[18], a[19])
    piece_keys, terms, piece_extras, key_close, key_mask, key_extra = (
        a[13], _terms(a), a[15], a[20], a[21], a[22])
    max_ops = 2 * (n + cap) + 4
    min_base = n
    exact = False
    visited = 0
    for k in range(n_ranges):
        sd = r_depth[k]
        if sd > 0:
            lq[sd] = r_state[k]
            lc[sd] = r_count[k]
            for w in range(W):
                lk[sd, w] = lk[0, w]
            bs[sd] = n
            tp[sd] = -1
            cn[sd] = 0
        i = r_start[k]
        stop = r_stop[k]
        while i < stop:
            visited += 1
            d = nodes[i, 1]
            p = d - 1
            t = table[lq[p], byte_classes[nodes[i, 0]]]
            if t != 0:
                # rule 1: the frame moves (and may tick); it must stay live
                c2 = lc[p] + (t >> 30)
                t = t & _MASK
                sp = state_piece[t]
                kind = piece_kind[sp]
                alive = True
                if band >= 0:
                    nd[d] = nd[p]
                    if sp == band and bs[p] == n:
                        # the band's own frame (it calls nothing: it is on top until it pops):
                        # live where some count ends it, its need kept
                        m = _count_need(c2, piece_lo[sp], piece_tail[sp], piece_period[sp],
                                        count_off[t], count_bits)
                        alive = m >= 0
                        if c2 - lc[0] + m > nd[d]:
                            nd[d] = c2 - lc[0] + m
                        kind = 0
                if kind == 1:
                    at = _span_slot(bs[p], cn[p], n, track0, track1)
                    alive = _count_ok(t, c2, at, lc[0] if at <= 0 else st_cnt[n - 1],
                                      piece_lo[sp], piece_hi[sp], piece_tail[sp],
                                      piece_period[sp], count_off[t], count_bits, span)
                elif kind == 2:
                    alive = _keys_live(t, sp, c2, lk, p, piece_lo[sp], piece_hi[sp], piece_keys,
                                       terms, piece_extras, key_close, key_mask, key_extra)
                if not alive:
                    i = nodes[i, 2]
                    continue
                lq[d] = t
                lc[d] = c2
                for w in range(W):
                    lk[d, w] = lk[p, w]
                bs[d] = bs[p]
                tp[d] = tp[p]
                cn[d] = cn[p]
            else:
                # rules 2-4: calls (push the caller, moved to its return state) and pops, each
                # followed by rule 1, until the byte moves a frame or the configuration dies;
                # written out here rather than called (a call with this many arrays costs more
                # than the move)
                W = lk.shape[1]
                if band >= 0:
                    nd[d] = nd[p]
                b = nodes[i, 0]
                cls = byte_classes[b]
                q = lq[p]
                cc = lc[p]
                for w in range(W):
                    lk[d, w] = lk[p, w]
                base = bs[p]
                top = tp[p]
                cnt = cn[p]
                pushed = 0
                slot0 = d * cap
                alive = False
                for _ in range(max_ops):
                    moved = False
                    for e in range(call_ptr[q], call_ptr[q + 1]):
                        if call_first[e, b]:
                            moved = True
                            if pushed >= cap:
                                break
                            s = slot0 + pushed
                            pushed += 1
                            for w in range(W):
                                a_keys[s, w] = lk[d, w]
                            key = call_commit[e]
                            if key >= 0:
                                wi = key >> 6
                                bit = np.uint64(1) << np.uint64(key & 63)
                                if a_keys[s, wi] & bit != np.uint64(0):
                                    pushed = cap + 1          # a key written twice: dead
                                    break
                                a_keys[s, wi] |= bit
                            r = call_return[e]
                            c2 = cc + (1 if call_tick[e] else 0)
                            sp = state_piece[r]
                            kind = piece_kind[sp]
                            if kind == 1:
                                at = _span_slot(base, cnt, n, track0, track1)
                                ok = _count_ok(r, c2, at, lc[0] if at <= 0 else st_cnt[n - 1],
                                               piece_lo[sp], piece_hi[sp], piece_tail[sp],
                                               piece_period[sp], count_off[r], count_bits, span)
                            elif kind == 2:
                                ok = _keys_live(r, sp, c2, a_keys, s, piece_lo[sp], piece_hi[sp],
                                                piece_keys, terms, piece_extras, key_close,
                                                key_mask, key_extra)
                            else:
                                ok = True
                            if not ok:
                                pushed = cap + 1
                                break
                            a_ret[s] = r
                            a_cnt[s] = c2
                            a_par[s] = top
                            top = s
                            cnt += 1
                            q = call_entry[e]
                            cc = 0
                            for w in range(W):
                                lk[d, w] = 0
                            break
                    if pushed > cap or (moved and pushed == 0):
                        break
                    if not moved:
                        if not accepting[q]:
                            break
                        sp = state_piece[q]
                        kind = piece_kind[sp]
                        if kind == 1:
                            at = _span_slot(base, cnt, n, track0, track1)
                            if at >= 0:
                                c0 = lc[0] if at == 0 else st_cnt[n - 1]
                                if c0 < piece_lo[sp]:
                                    _pop_spanned(cc, c0, piece_lo[sp], span, at)
                        if kind != 0 and (cc < piece_lo[sp] or (kind == 2 and not _term_met(
                                terms, sp, lk, d))):
                            break
                        if cnt > 0:
                            q = a_ret[top]
                            cc = a_cnt[top]
                            for w in range(W):
                                lk[d, w] = a_keys[top, w]
                            top = a_par[top]
                            cnt -= 1
                        elif base > 0:
                            base -= 1
                            q = st_ret[base]
                            cc = st_cnt[base]
                            for w in range(W):
                                lk[d, w] = st_keys[base, w]
                        else:
                            exact = True              # the outcome depends on the stack's length
                            break
                    t = table[q, cls]
                    if t != 0:
                        c2 = cc + (t >> 30)
                        t = t & _MASK
                        sp = state_piece[t]
                        kind = piece_kind[sp]
                        if kind == 1:
                            at = _span_slot(base, cnt, n, track0, track1)
                            ok = _count_ok(t, c2, at, lc[0] if at <= 0 else st_cnt[n - 1],
                                           piece_lo[sp], piece_hi[sp], piece_tail[sp],
                                           piece_period[sp], count_off[t], count_bits, span)
                        elif kind == 2:
                            ok = _keys_live(t, sp, c2, lk, d, piece_lo[sp], piece_hi[sp],
                                            piece_keys, terms, piece_extras, key_close,
                                            key_mask, key_extra)
                        else:
                            ok = True
                        if ok:
                            alive = True
                            lq[d] = t
                            lc[d] = c2
                            bs[d] = base
                            tp[d] = top
                            cn[d] = cnt
                        break
                # pops made on the way count even when the byte then dies: the outcome depends on
                # the frames they read
                if base < min_base:
                    min_base = base
                if not alive:
                    i = nodes[i, 2]
                    continue
            for j in range(nodes[i, 3], nodes[i + 1, 3]):
                n_set = _set_token(out, touched, n_set, tok_ids[j])
                if band >= 0:
                    tok_need[tok_ids[j]] = nd[d]
            i += 1
    return min_base, exact, visited, n_set


@njit(cache=True)
def fill_row(nodes, tok_ids, max_depth, roots, packed, q, c, keys, st_ret, st_cnt,
             st_keys, cap, can_end, eos_ids, out, touched, band, tok_need, span):
    """The allowed-token row of configuration ``((q, c, keys), stack)``.

    Parameters
    ----------
    nodes, tok_ids : arrays
        A :class:`~.trie.TokenTrie`'s node records and token ids; ``max_depth`` its longest
        token in bytes.
    roots : int32[256]
        The trie's first-level node per first byte (:func:`.pd_kernels.root_children`).
    packed : tuple
        :func:`automaton_tuple` of the ``LazyBytes``.
    q, c : int
        Top frame's state (live) and count.
    keys : uint64[W]
        Top frame's key words.
    st_ret, st_cnt, st_keys : arrays
        The stack's frames, bottom first: ``int32[n]``, ``int64[n]``, ``uint64[n, W]``.
    cap : int
        Most frames pushed within one token (the automaton's ``max_stack`` is enough).
    can_end : bool
        Whether the text may end here (sets the EOS bits).
    eos_ids : int32[k]
    out, touched : uint32[n_words], int32[n_words + 1]
        Scratch (:func:`.pd_kernels.row_scratch`); ``out`` zeroed (and zeroed again on return).
    band, tok_need : int, int32[vocabulary]
        With ``band`` -1, ``tok_need`` is not read (:data:`NO_NEED`). Else ``band`` is the top
        frame's piece, a counted piece that calls nothing, ``c`` at least its lower bound: the
        row is then the band's (every count of the frame at once), its upper bound left out, and
        each token's need written to ``tok_need``: the token is allowed at count ``c'`` (at
        least the lower bound) iff its need is at most ``hi - c'`` (a token of ``L`` bytes ticks
        at most ``L`` times, so that holds for every count; see
        :meth:`.frames.FrameAutomaton.band_piece`).
    span : int64[0] or int64[4]
        :data:`NO_SPAN`, or (``band`` -1) per frame, the top one then the stack's top: where it
        is a counted piece's at a count of at least its lower bound, ``[0, a number past its
        bound]``; below it (no upper bound), ``[-1, a number past any count]``; else ``[0,
        -1]``: the walk narrows each to the needs that decide the row (see
        :func:`_walk_ranges`).

    Returns
    -------
    used : int
        Most frames of the stack any walked byte popped.
    exact : bool
        A pop found the stack exhausted (the row then holds for this stack length only).
    visited : int
        Trie nodes visited.
    idx, val : int32[k], uint32[k]
        The row's nonzero words, ascending.
    """
    a = _fields(packed)
    n = st_ret.shape[0]
    W = keys.shape[0]
    lq, lc, lk, bs, tp, cn, a_ret, a_cnt, a_keys, a_par = _levels(max_depth, cap, W)
    lq[0] = q
    lc[0] = c
    for w in range(W):
        lk[0, w] = keys[w]
    bs[0] = n
    r_start = np.empty(256, dtype=np.int32)
    r_stop = np.empty(256, dtype=np.int32)
    r_zero = np.zeros(256, dtype=np.int32)
    r_count = np.zeros(256, dtype=np.int64)
    k = _live_roots(q, roots, nodes, a[0], a[1], a[2], a[3], a[6], r_start, r_stop)
    # (np.int64, not literals: see .kernels)
    min_base, exact, visited, n_set = _walk_ranges(
        r_start, r_stop, r_zero, r_zero, r_count, k, nodes, tok_ids, a, lq, lc, lk, bs, tp, cn,
        st_ret, st_cnt, st_keys, a_ret, a_cnt, a_keys, a_par, cap, out, touched, np.int64(0), band,
        np.zeros(max_depth + 1 if band >= 0 else 0, dtype=np.int64), tok_need, span)
    if can_end:
        for j in range(eos_ids.shape[0]):
            n_set = _set_token(out, touched, n_set, eos_ids[j])
    idx, val = _take(out, touched, n_set)
    return n - min_base, exact, visited, idx, val


@njit(cache=True)
def replay_row(rec, exits, known, toks, nodes, tok_ids, max_depth, packed, q, c, keys, st_ret,
               st_cnt, st_keys, cap, can_end, eos_ids, out, touched):
    """:func:`fill_row` for a state ``q`` of a region where the walk cannot depend on the frames
    (no state of its strongly connected component accepts or calls, the count lies where every
    state of its piece is live; or a key set's names, the frame able to take one more member
    under an undeclared key), past the region's shared walk: the exits of the walk's skeleton
    (``rec``, ``toks``: :func:`.pd_kernels.skeleton_records`) that ``q`` reaches (``exits``:
    :func:`.pd_kernels.skeleton_exits` from ``q``, with the ticks on the way; followed here
    unless ``known``) give the tokens that end there, where the move out is live, or live in
    the subtrees below them, walked with the frames (see :func:`.pd_kernels.replay_row`), and
    the EOS tokens where ``can_end``.

    Returns ``(used, exact, visited, idx, val, exits)``: as :func:`fill_row`, and the exits.
    """
    a = _fields(packed)
    if not known:
        exits = skeleton_exits(rec, max_depth, a[0], a[1], q, nodes, a[2], a[3])
    n = st_ret.shape[0]
    W = keys.shape[0]
    # the arrays the exits' test reads, taken out of the tuple once (not per exit)
    state_piece, piece_kind = a[9], a[10]
    piece_lo, piece_hi, piece_tail, piece_period, count_off, count_bits = (
        a[11], a[12], a[16], a[17], a[18], a[19])
    piece_keys, terms, piece_extras, key_close, key_mask, key_extra = (
        a[13], _terms(a), a[15], a[20], a[21], a[22])
    lq, lc, lk, bs, tp, cn, a_ret, a_cnt, a_keys, a_par = _levels(max_depth, cap, W)
    lq[0] = q
    lc[0] = c
    for w in range(W):
        lk[0, w] = keys[w]
    m = exits.shape[0]
    r_start = np.empty(m, dtype=np.int32)
    r_stop = np.empty(m, dtype=np.int32)
    r_depth = np.empty(m, dtype=np.int32)
    r_state = np.empty(m, dtype=np.int32)
    r_count = np.empty(m, dtype=np.int64)
    # a key set's test at an exit state and count, kept: a key's names leave at a few states
    # (the closing quotes), each met from many exits
    seen_t = np.empty(_SEEN, dtype=np.int64)
    seen_c = np.empty(_SEEN, dtype=np.int64)
    seen_ok = np.empty(_SEEN, dtype=np.bool_)
    n_seen = 0
    # (np.int64, not literals: see .kernels)
    k = np.int64(0)
    n_set = np.int64(0)
    for e in range(m):
        x = exits[e, 0]
        t = exits[e, 1]
        c2 = c + exits[e, 3]
        # an exit: the move out of the region is live only by the frame's own test (a key
        # set's names lead to states that read the keys)
        # (the frame's test written out as in _walk_ranges: a helper dispatching on the kind,
        # inlined with the helpers it inlines, keeps the reference counting of its arrays,
        # about 80 ns a call)
        sp = state_piece[t]
        kind = piece_kind[sp]
        alive = True
        if kind == 1:
            alive = _count_live(t, c2, piece_lo[sp], piece_hi[sp], piece_tail[sp],
                                piece_period[sp], count_off[t], count_bits)
        elif kind == 2:
            found = -1
            for j in range(n_seen):
                if seen_t[j] == t and seen_c[j] == c2:
                    found = j
                    break
            if found >= 0:
                alive = seen_ok[found]
            else:
                alive = _keys_live(t, sp, c2, lk, 0, piece_lo[sp], piece_hi[sp], piece_keys,
                                   terms, piece_extras, key_close, key_mask, key_extra)
                if n_seen < _SEEN:
                    seen_t[n_seen] = t
                    seen_c[n_seen] = c2
                    seen_ok[n_seen] = alive
                    n_seen += 1
        if not alive:
            continue
        for j in range(rec[x, 5], rec[x + 1, 5]):
            n_set = _set_token(out, touched, n_set, toks[j])
        if not exits[e, 4]:
            continue          # no token goes on live past this exit
        r_start[k] = rec[x, 0] + 1
        r_stop[k] = rec[x, 4]
        r_depth[k] = exits[e, 2]
        r_state[k] = t
        r_count[k] = c2
        k += 1
    min_base, exact, visited, n_set = _walk_ranges(
        r_start, r_stop, r_depth, r_state, r_count, k, nodes, tok_ids, a, lq,
        lc, lk, bs, tp, cn, st_ret, st_cnt, st_keys, a_ret, a_cnt, a_keys, a_par, cap, out,
        touched, n_set, np.int64(-1), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32),
        np.zeros(0, dtype=np.int64))
    if can_end:
        for j in range(eos_ids.shape[0]):
            n_set = _set_token(out, touched, n_set, eos_ids[j])
    idx, val = _take(out, touched, n_set)
    return n - min_base, exact, visited + k, idx, val, exits


@njit(cache=True)
def region_needs(nodes, tok_ids, max_depth, table, byte_classes, comp, least, r):
    """The tokens whose bytes move state ``r`` without leaving its region (the states ``s`` with
    ``comp[s] == comp[r]``; the table's entries with their tick bits), each with its *need*: the
    ticks on its way plus ``least`` of the state it ends in (the fewest further ticks that state
    needs to end its piece, -1 where it cannot: those subtrees are dropped). Along a token's
    way its need never falls (the fewest ticks from a state include those of every state after
    it), so the token is allowed at a count ``c`` at least the lower bound iff its need is at
    most ``hi - c`` (see :func:`.row_ways.region_band_way`).

    Returns ``(tokens, needs, visited)``: ``int32[k]``, ``int64[k]``, trie nodes visited."""
    lq = np.zeros(max_depth + 1, dtype=np.int32)
    lt = np.zeros(max_depth + 1, dtype=np.int64)
    lq[0] = r
    g = comp[r]
    toks = np.empty(tok_ids.shape[0], dtype=np.int32)
    needs = np.empty(tok_ids.shape[0], dtype=np.int64)
    k = 0
    visited = 0
    n = nodes.shape[0] - 1
    i = 1
    while i < n:
        visited += 1
        d = nodes[i, 1]
        t = table[lq[d - 1], byte_classes[nodes[i, 0]]]
        s = t & _MASK
        if s == 0 or comp[s] != g or least[s] < 0:
            i = nodes[i, 2]
            continue
        lq[d] = s
        lt[d] = lt[d - 1] + (t >> 30)
        for j in range(nodes[i, 3], nodes[i + 1, 3]):
            toks[k] = tok_ids[j]
            needs[k] = lt[d] + least[s]
            k += 1
        i += 1
    return toks[:k].copy(), needs[:k].copy(), visited


@njit(cache=True)
def tick_targets(table):
    """Per state of a table whose moves hold their ticks in the bits from 30 up, whether some
    move ticks into it."""
    out = np.zeros(table.shape[0], dtype=np.bool_)
    for s in range(table.shape[0]):
        for k in range(table.shape[1]):
            t = table[s, k]
            if t >> 30:
                out[t & _MASK] = True
    return out


@njit(cache=True)
def set_tokens(row, toks, start, stop, on):
    """Set (``on``) or clear the bits of tokens ``toks[start:stop]`` in ``row`` (uint32 words)."""
    for j in range(start, stop):
        t = toks[j]
        bit = np.uint32(1) << np.uint32(t & 31)
        if on:
            row[t >> 5] |= bit
        else:
            row[t >> 5] &= ~bit
