"""Numba kernels for stack automata over bytes (:class:`~.pushdown.PushdownIndex`).

A configuration of a ``PushdownBytes`` automaton is a state ``q`` and a stack of return states.
One byte ``b`` moves it as follows (``step``):

1. ``t = table[q, byte_classes[b]]``; if ``t != 0`` the new state is ``t``;
2. else, for the call edge ``e`` of ``q`` whose ``call_first[e, b]`` is set (at most one): push
   ``call_return[e]``, ``q = call_entry[e]``, and go to 1;
3. else, if ``accepting[q]`` and the stack is not empty: ``q = pop()``, and go to 1;
4. else the configuration is dead (state 0).

The kernels:

* :func:`fill_row` walks the vocabulary's token trie from one configuration and gives its packed
  bitmask row as its nonzero words, skipping a subtree as soon as the walk dies (like
  :func:`.kernels.walk_masks`). The stack of each trie level is persistent: a level keeps how
  many entries of the given stack are still there (``base``) and a pointer into a linked arena of
  the entries pushed since (each level owns ``cap`` arena slots, reused by its siblings), so the
  common move (rule 1) copies four integers. It also reports how deep into the given stack any
  token reached, so that the row can be reused for every configuration that agrees on that many
  top entries.
* :func:`replay_row` gives what a row adds to its region's shared walk, from the walk's skeleton
  (:func:`skeleton_records`) as a state follows it (:func:`skeleton_exits`).

A row of a configuration met for the first time is a few hundred node visits, so what surrounds
the walk matters as much: a first byte that the configuration cannot take is skipped by a table
of the trie's first-level nodes (:func:`root_children`) without touching its subtree; the nodes
are read as records of one memory line each (:attr:`.trie.TokenTrie.nodes`); every subtree of a
row is walked in one call (:func:`_walk_ranges`: a call per subtree costs more than the subtree);
and the row is written into a zeroed scratch row, listing the words it sets, and handed back as
those words (the scratch row zeroed again), so no row of the vocabulary's size is allocated.

Moving one configuration by a token's few bytes is done in Python (:meth:`.PushdownIndex.step`):
cheaper than a kernel call for a handful of table lookups.

The end of the text ends every open module in turn (rule 3 without a byte): EOS is allowed iff
``accepting[q]`` and every return state on the stack accepts; the caller decides that
(``can_end``).

Every kernel takes plain arrays and scalars, is compiled with ``cache=True`` and runs as ordinary
Python under ``NUMBA_DISABLE_JIT=1``. Inputs are trusted (validated by :mod:`.pushdown`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import _copy_into

_NO_LIMIT = 1 << 62
_STATE = (1 << 30) - 1
#: What :func:`replay_row` is given for exits it is to follow itself (``known`` false).
NO_EXITS = np.zeros((0, 5), dtype=np.int32)

__all__ = ["fill_row", "replay_row", "root_children", "row_of_nodes", "or_words",
           "row_scratch", "skeleton_records", "skeleton_exits", "rows_over_empty_stack"]


@njit(cache=True)
def _slow_step(q, b, table, byte_classes, accepting, call_ptr, call_entry, call_return, call_first,
               stack, base, top, cnt, slot0, cap, a_val, a_par, max_ops):
    """Rules 2-4 of one byte from ``q`` (rule 1 having failed) and rule 1 after each call or pop.

    The level's stack is ``stack[:base]`` under the arena list from ``top`` (``cnt`` entries);
    pushes go to arena slots ``slot0 .. slot0 + cap - 1``.

    Returns ``(state, base, top, cnt, empty_test)``: state 0 if dead (also when the pushes would
    pass ``cap`` or the byte takes more than ``max_ops`` moves, which a valid automaton never
    does); ``empty_test`` is True when rule 3 found the given stack exhausted (the outcome then
    depends on the stack's exact length).
    """
    k = 0
    ops = 0
    while True:
        ops += 1
        if ops > max_ops:
            return 0, base, top, cnt, False
        moved = False
        for e in range(call_ptr[q], call_ptr[q + 1]):
            if call_first[e, b]:
                if k >= cap:
                    return 0, base, top, cnt, False
                s = slot0 + k
                k += 1
                a_val[s] = call_return[e]
                a_par[s] = top
                top = s
                cnt += 1
                q = call_entry[e]
                moved = True
                break
        if not moved:
            if not accepting[q]:
                return 0, base, top, cnt, False
            if cnt > 0:
                q = a_val[top]
                top = a_par[top]
                cnt -= 1
            elif base > 0:
                base -= 1
                q = stack[base]
            else:
                return 0, base, top, cnt, True
        t = table[q, byte_classes[b]]
        if t != 0:
            return t, base, top, cnt, False


def row_scratch(n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """``(out, touched)``: the zeroed row (``uint32[n_words]``) and word list the row kernels
    write into, reused from row to row (each kernel hands them back as it found them). The list
    has one slot more than the row has words: :func:`_set_token` writes that slot, unread, when
    every word is listed already.

    >>> out, touched = row_scratch(4)
    >>> out.tolist(), touched.shape
    ([0, 0, 0, 0], (5,))
    """
    return np.zeros(n_words, dtype=np.uint32), np.empty(n_words + 1, dtype=np.int32)


@njit(cache=True, inline="always")
def _set_token(out, touched, n_set, tok):
    """Set token ``tok``'s bit in ``out``, listing its word in ``touched[n_set]`` if it was zero;
    returns the new count of listed words. Without a branch: the word is written to the next
    slot always and counted only if it was zero (a branch on the word mispredicts on every new
    word; without it a row's tokens are set in a fifth of the time), so ``touched`` has a slot
    more than ``out`` has words (:func:`row_scratch`)."""
    w = tok >> 5
    old = out[w]
    touched[n_set] = w
    out[w] = old | (np.uint32(1) << np.uint32(tok & 31))
    return n_set + (old == 0)


@njit(cache=True, inline="always")
def _low_bit(m):
    """The position of the single set bit of ``m`` (a ``uint64`` power of two), found by
    halving: 32, 16, ... 1 bits."""
    i = 0
    s = 32
    while s:
        if m >> np.uint64(s):
            m >>= np.uint64(s)
            i += s
        s >>= 1
    return i


@njit(cache=True, inline="always")
def _take(out, touched, n_set):
    """The words ``out`` holds at ``touched[:n_set]``, as ``(idx int32[n_set], val
    uint32[n_set])`` in ascending order; ``out`` is zeroed there again. The listed words are
    marked in a bitmap of the row's words and read back in order: no sort (a merge sort of the
    list took four times as long as setting the row's tokens)."""
    n_b = (out.shape[0] + 63) >> 6
    marks = np.zeros(n_b, dtype=np.uint64)
    for x in range(n_set):
        w = touched[x]
        marks[w >> 6] |= np.uint64(1) << np.uint64(w & 63)
    idx = np.empty(n_set, dtype=np.int32)
    val = np.empty(n_set, dtype=np.uint32)
    k = 0
    for b in range(n_b):
        m = marks[b]
        while m != np.uint64(0):
            w = (b << 6) + _low_bit(m & (~m + np.uint64(1)))
            m &= m - np.uint64(1)
            idx[k] = w
            val[k] = out[w]
            out[w] = 0
            k += 1
    return idx, val


@njit(cache=True)
def root_children(nodes):
    """The first-level node of each first byte in a trie's node records (see
    :attr:`.trie.TokenTrie.nodes`), -1 where no token starts with it: ``int32[256]``."""
    out = np.full(256, -1, dtype=np.int32)
    n = nodes.shape[0] - 1
    i = 1
    while i < n:
        out[nodes[i, 0]] = i
        i = nodes[i, 2]
    return out


@njit(cache=True)
def _live_roots(q, roots, nodes, table, byte_classes, accepting, call_ptr, call_first, r_start,
                r_stop):
    """The trie ranges worth walking from state ``q`` into ``r_start``/``r_stop``; returns how
    many: a first byte that neither moves ``q``, nor calls, nor (``q`` accepting) pops is dead at
    once, and its subtree is not read."""
    k = 0
    pops = accepting[q]
    for b in range(256):
        v = roots[b]
        if v < 0:
            continue
        live = pops or table[q, byte_classes[b]] != 0
        if not live:
            for e in range(call_ptr[q], call_ptr[q + 1]):
                if call_first[e, b]:
                    live = True
                    break
        if live:
            r_start[k] = v
            r_stop[k] = nodes[v, 2]
            k += 1
    return k


@njit(cache=True)
def _levels(max_depth, cap):
    """Per trie level: state, ``base``, arena top and pushed count; and the push arena."""
    levels = max_depth + 1
    st = np.zeros(levels, dtype=np.int32)
    bs = np.zeros(levels, dtype=np.int64)
    tp = np.full(levels, -1, dtype=np.int64)
    cn = np.zeros(levels, dtype=np.int64)
    a_val = np.zeros(levels * cap + 1, dtype=np.int32)
    a_par = np.full(levels * cap + 1, -1, dtype=np.int64)
    return st, bs, tp, cn, a_val, a_par


@njit(cache=True)
def _walk_ranges(r_start, r_stop, r_depth, r_state, n_ranges, nodes, tok_ids, byte_classes, table,
                 accepting, call_ptr, call_entry, call_return, call_first, stack, cap, st, bs, tp,
                 cn, a_val, a_par, out, touched, n_set, max_visits):
    """Walk the trie node ranges ``r_start[k] .. r_stop[k] - 1`` (whole subtrees) for ``k <
    n_ranges``, each from the configuration of level ``depth - 1`` of its first node, setting the
    bits of the tokens that stay live in ``out`` (words listed in ``touched``). A range with
    ``r_depth[k] > 0`` first sets that level to state ``r_state[k]`` over the whole given stack
    (nothing pushed). One call walks every range: a call per subtree would cost more than most
    subtrees' walks. The walk stops once it has visited more than ``max_visits`` nodes (the row
    is then incomplete: the caller tells by the count returned).

    Returns ``(lowest base reached, exact, nodes visited, words listed)`` (see
    :func:`fill_row`)."""
    n = stack.shape[0]
    max_ops = 2 * (n + cap) + 4
    min_base = n
    exact = False
    visited = 0
    for k in range(n_ranges):
        sd = r_depth[k]
        if sd > 0:
            st[sd] = r_state[k]
            bs[sd] = n
            tp[sd] = -1
            cn[sd] = 0
        i = r_start[k]
        stop = r_stop[k]
        while i < stop:
            visited += 1
            if visited > max_visits:
                return min_base, exact, visited, n_set
            b = nodes[i, 0]
            d = nodes[i, 1]
            p = d - 1
            t = table[st[p], byte_classes[b]]
            if t != 0:
                st[d] = t
                bs[d] = bs[p]
                tp[d] = tp[p]
                cn[d] = cn[p]
            else:
                t, nb, ntop, ncnt, empty = _slow_step(
                    st[p], b, table, byte_classes, accepting, call_ptr, call_entry, call_return,
                    call_first, stack, bs[p], tp[p], cn[p], d * cap, cap, a_val, a_par, max_ops)
                if empty:
                    exact = True
                if nb < min_base:
                    min_base = nb
                if t == 0:
                    i = nodes[i, 2]
                    continue
                st[d] = t
                bs[d] = nb
                tp[d] = ntop
                cn[d] = ncnt
            for j in range(nodes[i, 3], nodes[i + 1, 3]):
                n_set = _set_token(out, touched, n_set, tok_ids[j])
            i += 1
    return min_base, exact, visited, n_set


@njit(cache=True)
def fill_row(nodes, tok_ids, max_depth, roots, byte_classes, table, accepting, call_ptr,
             call_entry, call_return, call_first, q, stack, cap, can_end, eos_ids, out, touched):
    """The allowed-token row of configuration ``(q, stack)`` (``stack`` bottom first), as its
    nonzero words.

    Parameters
    ----------
    nodes, tok_ids : arrays
        A :class:`~.trie.TokenTrie`'s node records (:attr:`~.trie.TokenTrie.nodes`) and token
        ids; ``max_depth`` its longest token in bytes.
    roots : int32[256]
        The trie's first-level node per first byte (:func:`root_children`): a first byte that
        ``q`` can neither move on, call on nor pop on is skipped without reading its subtree.
    byte_classes, table, accepting, call_ptr, call_entry, call_return, call_first : arrays
        The ``PushdownBytes`` automaton.
    q : int
        A live state.
    stack : int32[n]
    cap : int
        Most entries pushed on top of ``stack`` within one token (the automaton's ``max_stack``
        is enough).
    can_end : bool
        Whether the text may end here (sets the EOS bits).
    eos_ids : int32[k]
    out : uint32[n_words]
        Scratch, zeroed (and zeroed again on return).
    touched : int32[n_words + 1]
        Scratch (see :func:`row_scratch`).

    Returns
    -------
    used : int
        Most entries of ``stack`` any walked byte popped: the row holds for every stack with the
        same top ``used`` entries...
    exact : bool
        ...unless this is True (a pop found ``stack`` exhausted): then only for this stack length.
    visited : int
        Trie nodes visited.
    idx, val : int32[k], uint32[k]
        The row's nonzero words, ascending (token ``t``'s bit is set iff its bytes leave the
        configuration live).
    """
    n = stack.shape[0]
    st, bs, tp, cn, a_val, a_par = _levels(max_depth, cap)
    st[0] = q
    bs[0] = n
    r_start = np.empty(256, dtype=np.int32)
    r_stop = np.empty(256, dtype=np.int32)
    r_depth = np.zeros(256, dtype=np.int32)
    k = _live_roots(q, roots, nodes, table, byte_classes, accepting, call_ptr, call_first,
                    r_start, r_stop)
    min_base, exact, visited, n_set = _walk_ranges(
        r_start, r_stop, r_depth, r_depth, k, nodes, tok_ids, byte_classes, table, accepting,
        call_ptr, call_entry, call_return, call_first, stack, cap, st, bs, tp, cn, a_val, a_par,
        out, touched, np.int64(0), np.int64(_NO_LIMIT))   # (not literals: see .kernels)
    if can_end:
        for j in range(eos_ids.shape[0]):
            n_set = _set_token(out, touched, n_set, eos_ids[j])
    idx, val = _take(out, touched, n_set)
    return n - min_base, exact, visited, idx, val


@njit(cache=True)
def skeleton_records(sk_node, sk_depth, sk_exit, nodes, tok_ids):
    """A shared region walk's skeleton (:func:`.kernels.component_walk`) with what
    :func:`replay_row` reads of its nodes laid out beside it: ``rec int32[m, 6]``, per skeleton
    node ``(node, depth, exit, byte, end of subtree, first of its tokens in toks)`` (the tokens of
    node ``x`` are ``toks[rec[x, 5]:rec[x + 1, 5]]``, exits only; a last record closes the list),
    and ``toks``. The replay then reads the trie only below the exits."""
    m = sk_node.shape[0]
    rec = np.zeros((m + 1, 6), dtype=np.int32)
    n_tok = 0
    for x in range(m):
        if sk_exit[x]:
            v = sk_node[x]
            n_tok += nodes[v + 1, 3] - nodes[v, 3]
    toks = np.empty(n_tok, dtype=np.int32)
    k = 0
    for x in range(m):
        v = sk_node[x]
        rec[x, 0] = v
        rec[x, 1] = sk_depth[x]
        rec[x, 2] = 1 if sk_exit[x] else 0
        rec[x, 3] = nodes[v, 0]
        rec[x, 4] = nodes[v, 2]
        rec[x, 5] = k
        if sk_exit[x]:
            for j in range(nodes[v, 3], nodes[v + 1, 3]):
                toks[k] = tok_ids[j]
                k += 1
    rec[m, 5] = k
    return rec, toks


@njit(cache=True, inline="always")
def skeleton_exits(rec, max_depth, table, byte_classes, q, nodes, accepting, call_ptr):
    """The exits of a shared region walk's skeleton (``rec``: :func:`skeleton_records`) followed
    from state ``q``: ``int32[k, 5]``, per exit where ``q``'s walk is still live ``(record,
    state, depth, ticks, below)``, the ticks being those of the moves on the way (a target's bits
    from 30 up, as a :class:`~tokenfsm.automata.lazy_bytes.LazyBytes` table holds them; 0 in a
    plain table), ``below`` 0 where no token goes on live past the exit whatever the stack and
    frames (the state neither accepts nor calls, and no byte of the trie's next level moves
    from it), else 1. What the moves inside the region reach reads neither the stack nor a
    frame's data, so a state's exits are followed once and replayed for every configuration
    (:func:`replay_row`, :func:`.frame_kernels.replay_row`, which follow them where not given,
    and walk the subtrees below the exits whose ``below`` is 1: past a string's closing quote,
    most bytes die in the state the quote leads to)."""
    m = rec.shape[0] - 1
    st = np.zeros(max_depth + 1, dtype=np.int64)
    ticks = np.zeros(max_depth + 1, dtype=np.int64)
    st[0] = q
    out = np.empty((m, 5), dtype=np.int32)
    k = 0
    for x in range(m):
        d = rec[x, 1]
        t = table[st[d - 1], byte_classes[rec[x, 3]]]
        st[d] = t & _STATE
        ticks[d] = ticks[d - 1] + (t >> 30)
        # (a state whose walk is another's may die where that one leaves: its exits below too)
        if rec[x, 2] and st[d] != 0:
            s = st[d]
            below = accepting[s] or call_ptr[s + 1] > call_ptr[s]
            c = rec[x, 0] + 1
            while c < rec[x, 4] and not below:
                below = table[s, byte_classes[nodes[c, 0]]] != 0
                c = nodes[c, 2]
            out[k, 0] = x
            out[k, 1] = s
            out[k, 2] = d
            out[k, 3] = ticks[d]
            out[k, 4] = 1 if below else 0
            k += 1
    return out[:k].copy()


@njit(cache=True)
def replay_row(rec, exits, known, toks, nodes, tok_ids, max_depth, byte_classes, table,
               accepting, call_ptr, call_entry, call_return, call_first, q, stack, cap, out,
               touched):
    """:func:`fill_row` for a state ``q`` of a stack-free region (no state of its strongly
    connected component accepts or calls, so a zero move there is dead whatever the stack), past
    the region's shared walk (:func:`.kernels.component_walk`: the tokens that stay in the
    region): the tokens that end at the exits of the walk's skeleton (``rec``, ``toks``:
    :func:`skeleton_records` of the paths to the nodes whose byte leaves the region) that ``q``
    reaches (``exits``: :func:`skeleton_exits` from ``q``, followed here unless ``known``), or
    live in the subtrees below them, walked with the stack. The row is the shared walk's row with
    these. EOS bits are not set (``q`` does not accept).

    Returns ``(used, exact, visited, idx, val, exits)``: as :func:`fill_row`, and the exits.
    """
    n = stack.shape[0]
    if not known:
        exits = skeleton_exits(rec, max_depth, table, byte_classes, q, nodes, accepting,
                               call_ptr)
    st, bs, tp, cn, a_val, a_par = _levels(max_depth, cap)
    st[0] = q
    m = exits.shape[0]
    r_start = np.empty(m, dtype=np.int32)
    r_stop = np.empty(m, dtype=np.int32)
    r_depth = np.empty(m, dtype=np.int32)
    r_state = np.empty(m, dtype=np.int32)
    n_set = np.int64(0)     # (np.int64, not literals: see .kernels)
    k = np.int64(0)
    for e in range(m):
        x = exits[e, 0]
        for j in range(rec[x, 5], rec[x + 1, 5]):
            n_set = _set_token(out, touched, n_set, toks[j])
        if exits[e, 4]:
            r_start[k] = rec[x, 0] + 1
            r_stop[k] = rec[x, 4]
            r_depth[k] = exits[e, 2]
            r_state[k] = exits[e, 1]
            k += 1
    min_base, exact, visited, n_set = _walk_ranges(
        r_start, r_stop, r_depth, r_state, k, nodes, tok_ids, byte_classes, table, accepting,
        call_ptr, call_entry, call_return, call_first, stack, cap, st, bs, tp, cn, a_val, a_par,
        out, touched, n_set, np.int64(_NO_LIMIT))
    idx, val = _take(out, touched, n_set)
    return n - min_base, exact, visited + m, idx, val, exits


@njit(cache=True)
def rows_over_empty_stack(states, nodes, tok_ids, max_depth, roots, byte_classes, table, accepting,
                          call_ptr, call_entry, call_return, call_first, cap, max_visits,
                          max_words, max_total, out, touched):
    """The rows of many states' configurations over an empty stack, in one call: for each state
    of ``states`` whose walk neither reads below the stack (``exact``: a pop found it empty) nor
    visits more than ``max_visits`` nodes, its nonzero words (EOS not set), while the words kept
    stay within ``max_words`` and the nodes visited in all within ``max_total`` (-1: no limit;
    the states after are not walked); the others are left to be walked when asked.

    Returns ``(ok bool[m], ptr int64[m + 1], idx int32[...], val uint32[...], visited)``: state
    ``states[i]``'s words are ``idx[ptr[i]:ptr[i + 1]]``, ``val[...]`` where ``ok[i]``.
    """
    m = states.shape[0]
    stack = np.zeros(0, dtype=np.int32)
    st, bs, tp, cn, a_val, a_par = _levels(max_depth, cap)
    r_start = np.empty(256, dtype=np.int32)
    r_stop = np.empty(256, dtype=np.int32)
    r_depth = np.zeros(256, dtype=np.int32)
    ok = np.zeros(m, dtype=np.bool_)
    ptr = np.zeros(m + 1, dtype=np.int64)
    idx = np.empty(1024, dtype=np.int32)
    val = np.empty(1024, dtype=np.uint32)
    total = 0
    visited_all = 0
    for i in range(m):
        if 0 <= max_total <= visited_all:
            ptr[i + 1:] = total
            break
        q = states[i]
        st[0] = q
        bs[0] = 0
        k = _live_roots(q, roots, nodes, table, byte_classes, accepting, call_ptr, call_first,
                        r_start, r_stop)
        _, exact, visited, n_set = _walk_ranges(
            r_start, r_stop, r_depth, r_depth, k, nodes, tok_ids, byte_classes, table, accepting,
            call_ptr, call_entry, call_return, call_first, stack, cap, st, bs, tp, cn, a_val,
            a_par, out, touched, np.int64(0), max_visits)
        visited_all += visited
        w_idx, w_val = _take(out, touched, n_set)
        if not exact and visited <= max_visits and total + n_set <= max_words:
            if total + n_set > idx.shape[0]:
                grow = max(2 * idx.shape[0], total + n_set)
                idx2 = np.empty(grow, dtype=np.int32)
                val2 = np.empty(grow, dtype=np.uint32)
                _copy_into(idx2, idx[:total])
                _copy_into(val2, val[:total])
                idx = idx2
                val = val2
            _copy_into(idx[total:], w_idx)
            _copy_into(val[total:], w_val)
            total += n_set
            ok[i] = True
        ptr[i + 1] = total
    return ok, ptr, idx[:total].copy(), val[:total].copy(), visited_all


@njit(cache=True)
def or_words(dst, idx, val):
    """``dst[idx[x]] |= val[x]`` for every ``x`` (``dst`` a ``uint32`` array or memoryview)."""
    for x in range(idx.shape[0]):
        w = idx[x]
        dst[w] = dst[w] | val[x]


@njit(cache=True)
def row_of_nodes(nodes, tok_ptr, tok_ids, n_words):
    """The packed row of the tokens ending at trie ``nodes``."""
    out = np.zeros(n_words, dtype=np.uint32)
    for x in range(nodes.shape[0]):
        nd = nodes[x]
        for j in range(tok_ptr[nd], tok_ptr[nd + 1]):
            tok = tok_ids[j]
            out[tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
    return out
