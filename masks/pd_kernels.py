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

__all__ = ["fill_row"]


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
    n_nodes = sym.shape[0]
    n = stack.shape[0]
    levels = max_depth + 1
    st = np.zeros(levels, dtype=np.int32)
    bs = np.zeros(levels, dtype=np.int64)
    tp = np.full(levels, -1, dtype=np.int64)
    cn = np.zeros(levels, dtype=np.int64)
    a_val = np.zeros(levels * cap + 1, dtype=np.int32)
    a_par = np.full(levels * cap + 1, -1, dtype=np.int64)
    max_ops = 2 * (n + cap) + 4
    st[0] = q
    bs[0] = n
    min_base = n
    exact = False
    visited = 0
    i = 1
    while i < n_nodes:
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
    if can_end:
        for j in range(eos_ids.shape[0]):
            tok = eos_ids[j]
            out[tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
    return n - min_base, exact, visited
