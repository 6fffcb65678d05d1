"""Minimisation and canonical numbering of complete DFAs given as integer tables.

Both the code-point automata (:mod:`.dfa`) and the byte automata (:mod:`.bytedfa`) are, underneath,
a table ``delta[state][symbol] -> state`` with a dead state 0, a start state and a set of
accepting states. This module works on that representation only:

- :func:`minimize_table` drops unreachable states, merges every state that cannot reach
  acceptance into the dead state 0 (so the result is pruned), merges equivalent states with
  partition refinement (Moore's rounds over arrays for large tables, Hopcroft's algorithm for the
  rest and to finish long chains), and numbers the result canonically (breadth-first from the
  start, symbols in order), so equal languages over the same alphabet give identical tables.
- :func:`prune_table` only does the first two steps (no merging).

Example
-------
>>> delta = [[0, 0], [2, 3], [2, 3], [0, 0]]   # 0 dead; 1 and 2 equivalent
>>> minimize_table(delta, {3}, 1)
([[0, 0], [1, 2], [0, 0]], {2}, 1)

Hopcroft, "An n log n algorithm for minimizing states in a finite automaton" (1971), in the
formulation of Valmari & Lehtinen (2008) with blocks as lists and a splitter worklist.
"""

from __future__ import annotations

from collections import deque

__all__ = ["minimize_table", "prune_table", "reachable", "coreachable"]


def reachable(delta, start: int) -> list[int]:
    """States reachable from ``start``, in breadth-first order by symbol."""
    seen = {start}
    order = [start]
    queue = deque([start])
    while queue:
        s = queue.popleft()
        for t in delta[s]:
            if t not in seen:
                seen.add(t)
                order.append(t)
                queue.append(t)
    return order


def coreachable(delta, accepting, states=None) -> set[int]:
    """States (among ``states``, default all) from which an accepting state can be reached."""
    n = len(delta)
    states = range(n) if states is None else states
    preds: dict[int, list[int]] = {}
    for s in states:
        for t in set(delta[s]):
            preds.setdefault(t, []).append(s)
    live = set(states).intersection(accepting)
    stack = list(live)
    while stack:
        t = stack.pop()
        for s in preds.get(t, ()):
            if s not in live:
                live.add(s)
                stack.append(s)
    return live


def prune_table(delta, accepting, start):
    """Keep reachable states that can reach acceptance; everything else becomes dead state 0.

    Returns ``(delta, accepting, start)`` renumbered breadth-first (dead state 0 first)."""
    order = reachable(delta, start)
    live = coreachable(delta, accepting, order)
    if start not in live:
        return [[0] * len(delta[0]) if delta else []], set(), 0
    keep = [s for s in order if s in live]
    return _renumber(delta, accepting, start, keep, {s: s for s in keep})


def _renumber(delta, accepting, start, keep, rep):
    """Number the representatives of ``keep`` breadth-first from ``start``; others map to 0.

    ``rep`` maps each kept state to its block representative."""
    nsym = len(delta[0])
    number: dict[int, int] = {}
    new_delta = [[0] * nsym]
    queue = deque()
    r0 = rep[start]
    number[r0] = 1
    new_delta.append(None)
    queue.append(r0)
    while queue:
        r = queue.popleft()
        row = []
        for t in delta[r]:
            rt = rep.get(t)
            if rt is None:
                row.append(0)
                continue
            j = number.get(rt)
            if j is None:
                j = len(new_delta)
                number[rt] = j
                new_delta.append(None)
                queue.append(rt)
            row.append(j)
        new_delta[number[r]] = row
    new_accepting = {number[rep[s]] for s in keep if s in accepting and rep[s] in number}
    return new_delta, new_accepting, 1


def minimize_table(delta, accepting, start):
    """Minimal, pruned, canonically numbered equivalent of a complete DFA table.

    Parameters
    ----------
    delta : sequence of sequences of int
        ``delta[s][a]``: successor of ``s`` on symbol ``a``. Must be complete.
    accepting : collection of int
    start : int

    Returns
    -------
    (delta, accepting, start)
        ``delta`` as a list of lists with dead state 0 (all-zero row), ``start`` 1 unless the
        language is empty (then 0 and a single dead state).
    """
    nsym = len(delta[0]) if len(delta) else 0
    order = reachable(delta, start)
    live = coreachable(delta, accepting, order)
    if start not in live:
        return [[0] * nsym], set(), 0
    states = [s for s in order if s in live]
    # Local numbering 0..n-1 for live states; n stands for "dead".
    local = {s: i for i, s in enumerate(states)}
    n = len(states)
    DEAD = n
    tab = [[local.get(t, DEAD) for t in delta[s]] for s in states]
    tab.append([DEAD] * nsym)
    acc_local = [i for i, s in enumerate(states) if s in accepting]
    initial = None
    if (n + 1) * nsym >= MOORE_MIN_CELLS:
        block_of, stable = moore_blocks(tab, acc_local)
        if stable:
            return _quotient(tab, acc_local, block_of, n)
        initial = block_of     # coarser than the answer, refines acceptance: finish with Hopcroft
    return _quotient(tab, acc_local, hopcroft_blocks(tab, acc_local, initial), n)


def _quotient(tab, acc_local, block_of, n):
    """Merge each block into its first state; the dead state's block becomes state 0."""
    dead_block = block_of[n]
    rep = {}
    rep_of_block: dict[int, int] = {}
    for s in range(n):
        b = block_of[s]
        if b == dead_block:
            continue
        rep[s] = rep_of_block.setdefault(b, s)
    return _renumber(tab, set(acc_local), 0, [s for s in range(n) if s in rep], rep)


#: Tables with at least this many cells (states x symbols) are refined with array operations.
MOORE_MIN_CELLS = 200_000
#: Rounds of array refinement before Hopcroft finishes (long chains need one round per link).
MOORE_MAX_ROUNDS = 400


def moore_blocks(tab, acc_local, max_rounds: int | None = None):
    """Moore's partition refinement with array operations.

    Each round gives every state the signature (its block, the blocks of its successors) and
    numbers the distinct signatures. Signatures are compared through a 64-bit hash of the row; a
    collision can only merge states, never separate equivalent ones, so the final partition is
    checked once: if every state agrees with its block's first state on acceptance and on the
    blocks of all successors, it is a congruence coarser than none of the Myhill-Nerode classes,
    hence exactly them.

    Returns
    -------
    (block_of, stable)
        ``block_of[s]`` for every state of ``tab``; ``stable`` is False when the round limit was
        hit or the check failed, in which case ``block_of`` (refined by acceptance) is still a
        valid starting partition for :func:`hopcroft_blocks`.
    """
    import numpy as np

    T = np.asarray(tab, dtype=np.int64)
    total, k = T.shape
    acc = np.zeros(total, dtype=np.int64)
    acc[acc_local] = 1
    block = acc.copy()
    count = len(np.unique(block))
    mult = np.random.default_rng(0x7F4A7C15).integers(1, 2**62, size=k + 1, dtype=np.int64) | 1
    limit = MOORE_MAX_ROUNDS if max_rounds is None else max_rounds
    stable = False
    for _ in range(limit):
        h = block * mult[0] + block[T] @ mult[1:]      # wraps modulo 2**64, which is fine
        _, new = np.unique(h, return_inverse=True)
        new = new.reshape(-1)
        if len(_) == count:
            stable = True
            break
        block, count = new.astype(np.int64), len(_)
    # refine by acceptance (a collision may have merged across it), then check stability
    _, block = np.unique(block * 2 + acc, return_inverse=True)
    block = block.reshape(-1).astype(np.int64)
    if stable:
        first = np.full(block.max() + 1, total, dtype=np.int64)
        np.minimum.at(first, block, np.arange(total))
        rep = first[block]
        succ = block[T]
        stable = bool(np.array_equal(succ, succ[rep]))
    return block.tolist(), stable


def hopcroft_blocks(tab, acc_local, initial=None):
    """Hopcroft's refinement of ``initial`` (default: accepting / not accepting) to a congruence.

    Returns ``block_of`` for every state of ``tab``."""
    total = len(tab)
    acc_set = set(acc_local)
    # inverse transitions per target state: inv[t][a] lists the states moving to t on a
    inv: list[dict[int, list[int]]] = [{} for _ in range(total)]
    for s in range(total):
        for a, t in enumerate(tab[s]):
            got = inv[t].get(a)
            if got is None:
                inv[t][a] = [s]
            else:
                got.append(s)

    blocks: list[set[int]] = []
    block_of = [0] * total
    if initial is None:
        groups = [acc_local, [s for s in range(total) if s not in acc_set]]
    else:
        by_block: dict[int, list[int]] = {}
        for s in range(total):
            by_block.setdefault(initial[s], []).append(s)
        groups = list(by_block.values())
    for members in groups:
        if members:
            b = len(blocks)
            blocks.append(set(members))
            for s in members:
                block_of[s] = b
    # Splitters: for a complete DFA, splitting by one of two complementary blocks implies the
    # other, so the smaller initial block suffices (and afterwards the smaller half of each split).
    # A pending splitter is a block with all its symbols at once: one pass over the block's
    # inverse transitions finds the predecessors per symbol, and symbols without any cost nothing.
    # (from a finer initial partition every block but the largest must be a splitter)
    if initial is None:
        smaller = min(range(len(blocks)), key=lambda b: len(blocks[b])) if len(blocks) > 1 else None
        work = deque() if smaller is None else deque([smaller])
    else:
        largest = max(range(len(blocks)), key=lambda b: len(blocks[b]))
        work = deque(b for b in range(len(blocks)) if b != largest)
    while work:
        b = work.popleft()
        # (a snapshot: splitting by the block as it was is sound, and its parts get queued)
        preds: dict[int, list[int]] = {}
        for t in blocks[b]:
            for a, ss in inv[t].items():
                got = preds.get(a)
                if got is None:
                    preds[a] = list(ss)
                else:
                    got.extend(ss)
        for a in sorted(preds):
            # states with an a-transition into the splitter, grouped by their current block
            marked: dict[int, list[int]] = {}
            for s in preds[a]:
                marked.setdefault(block_of[s], []).append(s)
            for y, xs in marked.items():
                members = blocks[y]
                if len(xs) == len(members):
                    continue
                # keep the larger part in y, the smaller becomes a new block; both in O(len(xs))
                if 2 * len(xs) <= len(members):
                    small = xs
                    members.difference_update(xs)
                else:
                    xs_set = set(xs)
                    small = [s for s in members if s not in xs_set]
                    blocks[y] = xs_set
                z = len(blocks)
                blocks.append(set(small))
                for s in small:
                    block_of[s] = z
                # y pending or not, queueing the smaller half z is enough (Hopcroft)
                work.append(z)
    return block_of
