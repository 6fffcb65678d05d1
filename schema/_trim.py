"""Numba kernel of :mod:`.compose`: the live (reachable and co-reachable) states of a table."""

import numba
import numpy as np


@numba.njit(cache=True)
def live_mask(T, start, acc_mask):
    """Reachable from ``start`` and co-reachable to ``acc_mask``; the dead state 0 is not live."""
    n, k = T.shape
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    if start != 0:
        seen[start] = True
        stack[0] = start
        top = 1
    indeg = np.zeros(n + 1, dtype=np.int64)
    while top:
        top -= 1
        s = stack[top]
        for c in range(k):
            t = T[s, c]
            if t != 0:
                indeg[t + 1] += 1
                if not seen[t]:
                    seen[t] = True
                    stack[top] = t
                    top += 1
    for i in range(n):
        indeg[i + 1] += indeg[i]
    fill = indeg[:n].copy()
    src = np.empty(indeg[n], dtype=np.int64)
    for s in range(n):
        if seen[s]:
            for c in range(k):
                t = T[s, c]
                if t != 0:
                    src[fill[t]] = s
                    fill[t] += 1
    live = np.zeros(n, dtype=np.bool_)
    for s in range(n):
        if seen[s] and acc_mask[s] and s != 0:
            live[s] = True
            stack[top] = s
            top += 1
    while top:
        top -= 1
        t = stack[top]
        for i in range(indeg[t], indeg[t + 1]):
            s = src[i]
            if not live[s]:
                live[s] = True
                stack[top] = s
                top += 1
    live[0] = False
    return live
