"""Numba kernels for stack automata over bytes (:class:`~.pushdown.PushdownIndex`).

A configuration of a ``PushdownBytes`` automaton is a state ``q`` and a stack of return states.
One byte ``b`` moves it as follows (``step``):

1. ``t = table[q, byte_classes[b]]``; if ``t != 0`` the new state is ``t``;
2. else, for the call edge ``e`` of ``q`` whose ``call_first[e, b]`` is set (at most one): push
   ``call_return[e]``, ``q = call_entry[e]``, and go to 1;
3. else, if ``accepting[q]`` and the stack is not empty: ``q = pop()``, and go to 1;
4. else the configuration is dead (state 0).

The kernels:

* :func:`fill_row` walks the vocabulary's token trie from one configuration and writes its packed
  bitmask row, skipping a subtree as soon as the walk dies (like :func:`.kernels.walk_masks`). The
  stack of each trie level is persistent: a level keeps how many entries of the given stack are
  still there (``base``) and a pointer into a linked arena of the entries pushed since (each level
  owns ``cap`` arena slots, reused by its siblings), so the common move (rule 1) copies four
  integers. It also reports how deep into the given stack any token reached, so that the row can
  be reused for every configuration that agrees on that many top entries.

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

__all__ = ["fill_row", "replay_row", "row_of_nodes"]


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
def _walk_sub(i, stop, sym, depth, end, tok_ptr, tok_ids, byte_classes, table, accepting,
              call_ptr, call_entry, call_return, call_first, stack, cap, st, bs, tp, cn, a_val,
              a_par, out):
    """Walk trie nodes ``i .. stop - 1`` (whole subtrees) from the configuration of level
    ``depth[i] - 1``, setting the bits of the tokens that stay live in ``out``.

    Returns ``(lowest base reached, exact, nodes visited)`` (see :func:`fill_row`)."""
    n = stack.shape[0]
    max_ops = 2 * (n + cap) + 4
    min_base = n
    exact = False
    visited = 0
    while i < stop:
        visited += 1
        d = depth[i]
        p = d - 1
        b = sym[i]
        t = table[st[p], byte_classes[b]]
        if t != 0:
            st[d] = t
            bs[d] = bs[p]
            tp[d] = tp[p]
            cn[d] = cn[p]
        else:
            t, nb, nt, nc, empty = _slow_step(
                st[p], b, table, byte_classes, accepting, call_ptr, call_entry, call_return,
                call_first, stack, bs[p], tp[p], cn[p], d * cap, cap, a_val, a_par, max_ops)
            if empty:
                exact = True
            if nb < min_base:
                min_base = nb
            if t == 0:
                i = end[i]
                continue
            st[d] = t
            bs[d] = nb
            tp[d] = nt
            cn[d] = nc
        for j in range(tok_ptr[i], tok_ptr[i + 1]):
            tok = tok_ids[j]
            out[tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
        i += 1
    return min_base, exact, visited


@njit(cache=True)
def fill_row(sym, depth, end, tok_ptr, tok_ids, max_depth, byte_classes, table, accepting,
             call_ptr, call_entry, call_return, call_first, q, stack, cap, can_end, eos_ids, out):
    """The allowed-token row of configuration ``(q, stack)`` (``stack`` bottom first).

    Parameters
    ----------
    sym, depth, end, tok_ptr, tok_ids : arrays
        A :class:`~.trie.TokenTrie`; ``max_depth`` its longest token in bytes.
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
        Zeroed row; token ``t``'s bit is set iff its bytes leave the configuration live.

    Returns
    -------
    used : int
        Most entries of ``stack`` any walked byte popped: the row holds for every stack with the
        same top ``used`` entries...
    exact : bool
        ...unless this is True (a pop found ``stack`` exhausted): then only for this stack length.
    visited : int
        Trie nodes visited.
    """
    n = stack.shape[0]
    st, bs, tp, cn, a_val, a_par = _levels(max_depth, cap)
    st[0] = q
    bs[0] = n
    min_base, exact, visited = _walk_sub(
        1, sym.shape[0], sym, depth, end, tok_ptr, tok_ids, byte_classes, table, accepting,
        call_ptr, call_entry, call_return, call_first, stack, cap, st, bs, tp, cn, a_val, a_par,
        out)
    if can_end:
        for j in range(eos_ids.shape[0]):
            tok = eos_ids[j]
            out[tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
    return n - min_base, exact, visited


@njit(cache=True)
def replay_row(sk_node, sk_depth, sk_exit, sym, depth, end, tok_ptr, tok_ids, max_depth,
               byte_classes, table, accepting, call_ptr, call_entry, call_return, call_first, q,
               stack, cap, out):
    """:func:`fill_row` for a state ``q`` of a stack-free region (no state of its strongly
    connected component accepts or calls, so a zero move there is dead whatever the stack), from
    the region's shared walk (:func:`.kernels.component_walk`): ``out`` holds the tokens that
    stay in the region; this follows the walk's skeleton (``sk_*``: the paths to the nodes whose
    byte leaves the region) from ``q`` and walks the subtrees below its exits with the stack.
    EOS bits are not set (``q`` does not accept).

    Returns ``(used, exact, visited)`` as :func:`fill_row`.
    """
    n = stack.shape[0]
    st, bs, tp, cn, a_val, a_par = _levels(max_depth, cap)
    st[0] = q
    min_base = n
    exact = False
    visited = 0
    for x in range(sk_node.shape[0]):
        v = sk_node[x]
        d = sk_depth[x]
        st[d] = table[st[d - 1], byte_classes[sym[v]]]
        if sk_exit[x]:
            visited += 1
            bs[d] = n
            tp[d] = -1
            cn[d] = 0
            for j in range(tok_ptr[v], tok_ptr[v + 1]):
                tok = tok_ids[j]
                out[tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
            mb, ex, vv = _walk_sub(
                v + 1, end[v], sym, depth, end, tok_ptr, tok_ids, byte_classes, table, accepting,
                call_ptr, call_entry, call_return, call_first, stack, cap, st, bs, tp, cn, a_val,
                a_par, out)
            if mb < min_base:
                min_base = mb
            exact = exact or ex
            visited += vv
    return n - min_base, exact, visited


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
