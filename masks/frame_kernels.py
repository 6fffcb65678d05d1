"""Numba kernels for lazy networks: mask rows of configurations whose frames hold data.

A :class:`~tokenfsm.automata.lazy_bytes.LazyBytes` configuration is a top frame ``(q, count,
keys)`` and a stack of frames ``(return state, count, keys)``; one byte moves it by the rules of
that module's docstring, and a move is allowed only if the frame that moved stays *live*.
:func:`fill_row` walks the vocabulary's token trie from one configuration, like
:func:`.pd_kernels.fill_row` for plain stack automata: each trie level keeps its top frame, how
many entries of the given stack are still there and a pointer into a linked arena of the frames
pushed since, so the common move copies a few integers (and the key words).

The automaton's arrays travel as one tuple (:func:`automaton_tuple`), in the order
``AUTOMATON_FIELDS``; key sets are ``uint64`` words (``W`` per frame).

Every kernel takes plain arrays and scalars, is compiled with ``cache=True`` and runs as ordinary
Python under ``NUMBA_DISABLE_JIT=1``. Inputs are trusted (validated by the index).

Example
-------
>>> row = np.zeros(n_words, np.uint32)                                   # doctest: +SKIP
>>> used, exact, visited = fill_row(*trie_arrays, automaton_tuple(lb), q, c, keys,
...                                 st_ret, st_cnt, st_keys, cap, can_end, eos_ids, row)  # doctest: +SKIP

The persistent stack per trie level is :mod:`.pd_kernels`'s; liveness of counts from a lasso of
tick counts follows counting automata (Turonova et al., OOPSLA 2020).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["AUTOMATON_FIELDS", "automaton_tuple", "fill_row", "replay_row", "frame_live"]

AUTOMATON_FIELDS = (
    "table", "byte_classes", "accepting", "call_ptr", "call_entry", "call_return", "call_first",
    "call_tick", "call_commit", "state_piece", "piece_kind", "piece_lo", "piece_hi", "piece_keys",
    "piece_required", "piece_extras", "piece_tail", "piece_period", "count_off", "count_bits",
    "key_close", "key_mask", "key_extra",
)

_MASK = (1 << 30) - 1


def automaton_tuple(arrays) -> tuple:
    """The arrays of ``AUTOMATON_FIELDS`` from an object or dict, as private writeable copies
    (read-only arrays are another Numba type)."""
    get = arrays.__getitem__ if isinstance(arrays, dict) else lambda n: getattr(arrays, n)
    return tuple(np.array(get(n), copy=True) for n in AUTOMATON_FIELDS)


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
def _count_live(t, c, lo, hi, tail, period, off, bits):
    """Whether some number of further ticks in ``T(t)`` (the lasso at ``bits[off:]``) brings
    count ``c`` into ``lo..hi`` (``hi`` -1: unbounded)."""
    if hi >= 0 and c > hi:
        return False
    x = lo - c
    if x < 0:
        x = 0
    for _ in range(tail + period):
        if hi >= 0 and x > hi - c:
            return False
        idx = x
        if x >= tail + period:
            idx = tail + (x - tail) % period
        if bits[off + idx]:
            return True
        x += 1
    return False


@njit(cache=True, inline="always")
def _keys_live(t, p, c, kw, row, lo, hi, piece_keys, piece_required, piece_extras, key_close,
               key_mask, key_extra):
    """Whether a key-set frame at ``t`` with count ``c`` and key words ``kw[row]`` can end."""
    if hi >= 0 and c > hi:
        return False
    r = 0
    free = 0
    any_kq = False
    kq_req = False
    for w in range(kw.shape[1]):
        R = piece_required[p, w] & ~kw[row, w]
        r += _popcount(R)
        free += _popcount(piece_keys[p, w] & ~kw[row, w])
        kq = key_mask[t, w] & ~kw[row, w]
        if kq != np.uint64(0):
            any_kq = True
            if kq & R != np.uint64(0):
                kq_req = True
    ext = piece_extras[p]
    if key_close[t] and r == 0 and c >= lo:
        return True
    if any_kq:
        r1 = r - 1 if kq_req else r
        if _members_ok(c + 1, r1, free - 1, lo, hi, ext):
            return True
    return key_extra[t] and _members_ok(c + 1, r, free, lo, hi, ext)


@njit(cache=True, inline="always")
def _live(t, c, kw, row, state_piece, piece_kind, piece_lo, piece_hi, piece_tail, piece_period,
          count_off, count_bits, piece_keys, piece_required, piece_extras, key_close, key_mask,
          key_extra):
    """:func:`frame_live` with the arrays given one by one (taken out of the tuple once)."""
    p = state_piece[t]
    kind = piece_kind[p]
    if kind == 0:
        return True
    if kind == 1:
        return _count_live(t, c, piece_lo[p], piece_hi[p], piece_tail[p], piece_period[p],
                           count_off[t], count_bits)
    return _keys_live(t, p, c, kw, row, piece_lo[p], piece_hi[p], piece_keys, piece_required,
                      piece_extras, key_close, key_mask, key_extra)


@njit(cache=True)
def frame_live(a, t, c, keys):
    """Whether a frame at state ``t`` with count ``c`` and key words ``keys`` can end its piece
    (``a``: :func:`automaton_tuple`)."""
    return _live(t, c, keys.reshape(1, -1), 0, a[9], a[10], a[11], a[12], a[16], a[17], a[18],
                 a[19], a[13], a[14], a[15], a[20], a[21], a[22])


@njit(cache=True, inline="always")
def _has_required(piece_required, p, kw, row):
    """Whether the key words ``kw[row]`` hold every required key of piece ``p``."""
    for w in range(kw.shape[1]):
        if piece_required[p, w] & ~kw[row, w] != np.uint64(0):
            return False
    return True


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
def _walk_range(i, stop, sym, depth, end, tok_ptr, tok_ids, a, lq, lc, lk, bs, tp, cn, st_ret,
                st_cnt, st_keys, a_ret, a_cnt, a_keys, a_par, cap, out):
    """Walk trie nodes ``i .. stop - 1`` (whole subtrees) from the configuration of level
    ``depth[i] - 1``, setting the bits of the tokens that stay live in ``out``.

    Returns ``(fewest entries of the given stack left, exact, nodes visited)`` (see
    :func:`fill_row`)."""
    n = st_ret.shape[0]
    W = lk.shape[1]
    # the arrays of the common move, taken out of the tuple once (not per node)
    table, byte_classes, accepting, state_piece, piece_kind = a[0], a[1], a[2], a[9], a[10]
    call_ptr, call_entry, call_return, call_first, call_tick, call_commit = (
        a[3], a[4], a[5], a[6], a[7], a[8])
    piece_lo, piece_hi, piece_tail, piece_period, count_off, count_bits = (
        a[11], a[12], a[16], a[17], a[18], a[19])
    piece_keys, piece_required, piece_extras, key_close, key_mask, key_extra = (
        a[13], a[14], a[15], a[20], a[21], a[22])
    max_ops = 2 * (n + cap) + 4
    min_base = n
    exact = False
    visited = 0
    while i < stop:
        visited += 1
        d = depth[i]
        p = d - 1
        t = table[lq[p], byte_classes[sym[i]]]
        if t != 0:
            # rule 1: the frame moves (and may tick); it must stay live
            c2 = lc[p] + (t >> 30)
            t = t & _MASK
            sp = state_piece[t]
            kind = piece_kind[sp]
            alive = True
            if kind == 1:
                alive = _count_live(t, c2, piece_lo[sp], piece_hi[sp], piece_tail[sp],
                                    piece_period[sp], count_off[t], count_bits)
            elif kind == 2:
                alive = _keys_live(t, sp, c2, lk, p, piece_lo[sp], piece_hi[sp], piece_keys,
                                   piece_required, piece_extras, key_close, key_mask, key_extra)
            if not alive:
                i = end[i]
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
            # followed by rule 1, until the byte moves a frame or the configuration dies; written
            # out here rather than called (a call with this many arrays costs more than the move)
            W = lk.shape[1]
            b = sym[i]
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
                            ok = _count_live(r, c2, piece_lo[sp], piece_hi[sp], piece_tail[sp],
                                             piece_period[sp], count_off[r], count_bits)
                        elif kind == 2:
                            ok = _keys_live(r, sp, c2, a_keys, s, piece_lo[sp], piece_hi[sp],
                                            piece_keys, piece_required, piece_extras, key_close,
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
                    if kind != 0 and (cc < piece_lo[sp] or (kind == 2 and not _has_required(
                            piece_required, sp, lk, d))):
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
                        ok = _count_live(t, c2, piece_lo[sp], piece_hi[sp], piece_tail[sp],
                                         piece_period[sp], count_off[t], count_bits)
                    elif kind == 2:
                        ok = _keys_live(t, sp, c2, lk, d, piece_lo[sp], piece_hi[sp], piece_keys,
                                        piece_required, piece_extras, key_close, key_mask,
                                        key_extra)
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
                i = end[i]
                continue
        for j in range(tok_ptr[i], tok_ptr[i + 1]):
            tok = tok_ids[j]
            out[tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
        i += 1
    return min_base, exact, visited


@njit(cache=True)
def fill_row(sym, depth, end, tok_ptr, tok_ids, max_depth, a, q, c, keys, st_ret, st_cnt, st_keys,
             cap, can_end, eos_ids, out):
    """The allowed-token row of configuration ``((q, c, keys), stack)``.

    Parameters
    ----------
    sym, depth, end, tok_ptr, tok_ids : arrays
        A :class:`~.trie.TokenTrie`; ``max_depth`` its longest token in bytes.
    a : tuple
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
    out : uint32[n_words]
        Zeroed row.

    Returns
    -------
    used : int
        Most frames of the stack any walked byte popped.
    exact : bool
        A pop found the stack exhausted (the row then holds for this stack length only).
    visited : int
        Trie nodes visited.
    """
    n = st_ret.shape[0]
    W = keys.shape[0]
    lq, lc, lk, bs, tp, cn, a_ret, a_cnt, a_keys, a_par = _levels(max_depth, cap, W)
    lq[0] = q
    lc[0] = c
    for w in range(W):
        lk[0, w] = keys[w]
    bs[0] = n
    min_base, exact, visited = _walk_range(1, sym.shape[0], sym, depth, end, tok_ptr, tok_ids, a,
                                           lq, lc, lk, bs, tp, cn, st_ret, st_cnt, st_keys, a_ret,
                                           a_cnt, a_keys, a_par, cap, out)
    if can_end:
        for j in range(eos_ids.shape[0]):
            tok = eos_ids[j]
            out[tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
    return n - min_base, exact, visited


@njit(cache=True)
def replay_row(sk_node, sk_depth, sk_exit, sym, depth, end, tok_ptr, tok_ids, max_depth, a, q, c,
               keys, st_ret, st_cnt, st_keys, cap, out):
    """:func:`fill_row` for a state ``q`` of a region where the walk cannot depend on the frames
    (no state of its strongly connected component accepts or calls, the count lies where every
    state of its piece is live), from the region's shared walk: ``out`` holds the tokens that stay
    in the region; this follows the walk's skeleton from ``q`` (ticks counted on the way) and
    walks the subtrees below its exits with the frames. EOS bits are not set (``q`` does not
    accept).

    Returns ``(used, exact, visited)`` as :func:`fill_row`.
    """
    n = st_ret.shape[0]
    W = keys.shape[0]
    table, byte_classes = a[0], a[1]
    lq, lc, lk, bs, tp, cn, a_ret, a_cnt, a_keys, a_par = _levels(max_depth, cap, W)
    lq[0] = q
    lc[0] = c
    for w in range(W):
        lk[0, w] = keys[w]
    min_base = n
    exact = False
    visited = 0
    for x in range(sk_node.shape[0]):
        v = sk_node[x]
        d = sk_depth[x]
        t = table[lq[d - 1], byte_classes[sym[v]]]
        lq[d] = t & _MASK
        lc[d] = lc[d - 1] + (t >> 30)
        for w in range(W):
            lk[d, w] = lk[d - 1, w]
        if sk_exit[x]:
            visited += 1
            bs[d] = n
            tp[d] = -1
            cn[d] = 0
            for j in range(tok_ptr[v], tok_ptr[v + 1]):
                tok = tok_ids[j]
                out[tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
            mb, ex, vv = _walk_range(v + 1, end[v], sym, depth, end, tok_ptr, tok_ids, a, lq, lc,
                                     lk, bs, tp, cn, st_ret, st_cnt, st_keys, a_ret, a_cnt, a_keys,
                                     a_par, cap, out)
            if mb < min_base:
                min_base = mb
            exact = exact or ex
            visited += vv
    return n - min_base, exact, visited
