"""Minimisation and canonical numbering of complete DFAs given as integer tables.

Both the code-point automata (:mod:`.dfa`) and the byte automata (:mod:`.bytedfa`) are, underneath,
a table ``delta[state][symbol] -> state`` with a dead state 0, a start state and a set of
accepting states. This module works on that representation only:

- :func:`minimize_table` drops unreachable states, merges every state that cannot reach
  acceptance into the dead state 0 (so the result is pruned), merges equivalent states with
  partition refinement (Moore's rounds over arrays for large tables, Hopcroft's algorithm for the
  rest and to finish long chains), and numbers the result canonically (breadth-first from the
  start, symbols in order), so equal languages over the same alphabet give identical tables.
  Tables of moderate size are handled per distinct successor of a state rather than per symbol
  (their rows mostly repeat the dead state), and Hopcroft starts there from the length of each
  state's shortest accepted word and its symbols into live states (most tables are then already
  split into single states and need no refinement). Large ones that are sparse (few non-dead
  transitions per state) or mostly made of states with a finite future (long chains of fixed
  keys) are handled over their non-dead transitions, by Revuz's construction for the states with
  a finite future and Hopcroft's for the rest; the others with array operations. These ways
  are declared as data, with the reference and the rule that chooses among them, in
  :data:`MINIMIZERS`; the tests run every entry on the same tables.
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

from collections import defaultdict, deque
from functools import partial
from itertools import chain

from .arrays import unique_inverse
from .cache import BoundedMemo
from .gcpause import gc_paused

__all__ = ["minimize_table", "minimize_groups", "prune_table", "prune_groups", "reachable",
           "coreachable", "reach_back"]


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


def reach_back(src, dst, seeds) -> np.ndarray:
    """The states (a bool array, as ``seeds``) from which a seed is reached along the edges
    ``src -> dst`` (int arrays): predecessor lists read back from the seeds, each edge once."""
    import numpy as np

    n = seeds.shape[0]
    order = np.argsort(dst, kind="stable")
    pre, bounds = src[order].tolist(), np.searchsorted(dst[order], np.arange(n + 1)).tolist()
    out = seeds.tolist()
    todo = np.flatnonzero(seeds).tolist()
    while todo:
        t = todo.pop()
        for q in pre[bounds[t]:bounds[t + 1]]:
            if not out[q]:
                out[q] = True
                todo.append(q)
    return np.array(out, dtype=bool).reshape(n)


def prune_table(delta, accepting, start):
    """Keep reachable states that can reach acceptance; everything else becomes dead state 0.

    Returns ``(delta, accepting, start)`` renumbered breadth-first (dead state 0 first)."""
    if not hasattr(delta, "tolist"):
        return prune_groups(delta, accepting, start)[:3]
    order = reachable(delta, start)
    live = coreachable(delta, accepting, order)
    if start not in live:
        return [[0] * len(delta[0]) if len(delta) else []], set(), 0
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


def _no_check() -> None:
    """The clock of a construction without a time budget."""


#: States a large-table pass handles between two calls of its ``check``.
_TICK_MASK = (1 << 14) - 1


def _as_array(delta, check):
    """``delta`` as an ``int64`` array, converted a slice of rows at a time with ``check`` called
    after each (a list of hundreds of thousands of rows takes a second)."""
    import numpy as np
    if hasattr(delta, "dtype"):
        return np.asarray(delta, dtype=np.int64)
    n = len(delta)
    out = np.empty((n, len(delta[0]) if n else 0), dtype=np.int64)
    for lo in range(0, n, _TICK_MASK + 1):
        out[lo:lo + _TICK_MASK + 1] = delta[lo:lo + _TICK_MASK + 1]
        check()
    return out


def minimize_table(delta, accepting, start, groups=None, check=None):
    """Minimal, pruned, canonically numbered equivalent of a complete DFA table.

    Parameters
    ----------
    delta : sequence of sequences of int
        ``delta[s][a]``: successor of ``s`` on symbol ``a``. Must be complete.
    accepting : collection of int
    start : int
    groups : list, optional
        What the table's producer may already know (a subset construction does): per state, its
        ``(target, bit set of symbols)`` pairs for every target but state 0, which must then be a
        dead state (a target may appear in more than one pair). It spares scanning the rows.
    check : callable, optional
        Called between phases and every so many steps of the large-table paths (a construction's
        clock: it raises when the time budget is spent).

    Returns
    -------
    (delta, accepting, start)
        ``delta`` as a list of lists with dead state 0 (all-zero row), ``start`` 1 unless the
        language is empty (then 0 and a single dead state).

    Notes
    -----
    The table is minimised one of the ways declared in :data:`MINIMIZERS`, all with the same
    result, chosen by its size (see there).
    """
    nsym = len(delta[0]) if len(delta) else 0
    if len(delta) * nsym >= ARRAY_MIN_CELLS:
        # (tens of thousands of rows, sets and tuples that stay alive, no cycles: the cyclic
        # collector would traverse them again and again, freeing nothing)
        with gc_paused():
            return _minimize_large(delta, accepting, start, check)
    if len(delta) * nsym < MOORE_MIN_CELLS:
        if groups is None and hasattr(delta, "tolist"):
            # an array: its groups come cheaper from array sorts than from row scans
            groups = _array_groups(delta, accepting)
            delta = delta.tolist()
        return minimize_groups(delta, accepting, start, groups)[:3]
    return _minimize_local(delta, accepting, start, check=check)


def _minimize_large(delta, accepting, start, check=None):
    """The default way for a large table: :func:`_minimize_finite` where :func:`_finite_pays`,
    else :func:`_minimize_arrays`, refined by Moore's rounds when the table is shallow
    (:data:`SHALLOW_MAX_DEPTH`) and as :func:`_refine_by_rule` says otherwise (``check``: the
    construction's clock, see :func:`minimize_table`)."""
    depths = []

    def pays(peeled: int, live: int, transitions: int, depth: int) -> bool:
        depths.append(depth)
        return _finite_pays(peeled, live, transitions, depth)

    got = _minimize_finite(delta, accepting, start, pays, check)
    if got is not None:
        return got
    shallow = bool(depths) and depths[0] <= SHALLOW_MAX_DEPTH
    return _minimize_arrays(delta, accepting, start, refine=_refine_moore if shallow else None,
                            check=check)


def _minimize_local(delta, accepting, start, refine=None, check=None):
    """:func:`minimize_table` the textbook way: prune, copy the live states into a local table
    (plus a dead state), refine its partition with ``refine`` (a function ``(tab, acc_local,
    dead, check) -> block_of``: :func:`_refine_hopcroft`, :func:`_refine_moore`, or by default
    :func:`_refine_by_rule`) and number the quotient canonically. With Hopcroft's refinement it
    is the reference of :data:`MINIMIZERS`."""
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
    return _quotient(tab, acc_local, (refine or _refine_by_rule)(tab, acc_local, DEAD, check), n)


def _array_groups(T, accepting):
    """The groups (see :func:`minimize_table`) of an integer array table whose state 0 is dead,
    from array sorts; None when state 0 is not dead, the bit sets would not fit 62 symbols or
    the table is too small for array operations to pay (:func:`_groups_by_arrays`)."""
    n, k = T.shape
    if not _groups_by_arrays(n * k, k) or 0 in accepting or T[0].any():
        return None
    return _groups_of(T)


def _reach_rows(delta, accepting, start, groups=None):
    """The ``(target, bit set)`` pairs of every state reachable from ``start`` (``groups`` when
    given, else a dict from the rows), and those states in breadth-first order. Transitions into
    state 0 are left out when it is a dead state (the usual case: most transitions lead there)."""
    if groups is not None:
        rows = groups
        seen = {start}
        order = [start]
        for s in order:
            for t, _ in groups[s]:
                if t not in seen:
                    seen.add(t)
                    order.append(t)
        return rows, order
    nsym = len(delta[0])
    skip = 0 if 0 not in accepting and delta[0].count(0) == nsym else None
    rows: dict[int, list] = {start: None}
    order = [start]
    for s in order:                 # breadth-first: ``order`` grows while it is walked
        row = delta[s]
        g = []
        # a row's occurrences of a target found with C-speed scans (set, index, count): a few
        # Python steps per target, not per symbol
        for t in set(row):
            if t != skip:
                i = row.index(t)
                m = 1 << i
                c = row.count(t)
                while c > 1:
                    i = row.index(t, i + 1)
                    m |= 1 << i
                    c -= 1
                g.append((t, m))
                if t not in rows:
                    rows[t] = None  # discovered (its pairs are filled in when it is visited)
                    order.append(t)
        rows[s] = g
    return rows, order


def _list_groups(delta):
    """:func:`_groups_of` a list table (of at most 62 symbols, state 0 dead)."""
    import numpy as np
    n, k = len(delta), len(delta[0])
    return _groups_of(np.fromiter(chain.from_iterable(delta), dtype=np.int64,
                                  count=n * k).reshape(n, k))


def _groups_of(T):
    """The groups (see :func:`minimize_table`) of an integer array table of at most 62 symbols
    whose state 0 is dead: its non-zero cells found, paired by (source, target) and their symbols
    joined into bit sets with array operations. A state's pairs come in increasing target
    order."""
    import numpy as np
    n = T.shape[0]
    src, sym = np.nonzero(T)
    if not src.size:                            # no transitions at all
        return [[] for _ in range(n)]
    key = src * n + T[src, sym]
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    masks = np.bitwise_or.reduceat(np.left_shift(np.int64(1), sym[order]), starts).tolist()
    key = key[starts]
    groups: list = [[] for _ in range(n)]
    for s, t, m in zip((key // n).tolist(), (key % n).tolist(), masks):
        groups[s].append((t, m))
    return groups


def _sparse_rows(delta, accepting, start, groups=None):
    """The ``(target, bit set)`` pairs of every state reachable from ``start`` (see
    :func:`_reach_rows`), and the set of those that can reach acceptance."""
    rows, order = _reach_rows(delta, accepting, start, groups)
    preds: dict[int, list[int]] = {}
    for s in order:
        for t, _ in rows[s]:
            if t != s:
                got = preds.get(t)
                if got is None:
                    preds[t] = [s]
                else:
                    got.append(s)
    live = set(accepting).intersection(order)
    stack = list(live)
    while stack:
        for s in preds.get(stack.pop(), ()):
            if s not in live:
                live.add(s)
                stack.append(s)
    return rows, live


def _canonical(delta, accepting, start, block_of, members, rows):
    """The quotient of ``delta`` by a congruence on its live states, numbered canonically.

    ``block_of[s]`` is the block of a live state (None for the others), ``members[b]`` one state
    of block ``b``, ``rows[s]`` the ``(target, bit set)`` pairs of a state. The other states all
    become the dead state 0; the blocks are numbered 1, 2, ... breadth-first from the start's,
    each row's successors in the order of their first symbol. Returns the new table, accepting
    states and start, and its groups (per state, distinct targets in the order of their first
    symbol)."""
    number: dict[int, int] = {block_of[start]: 1}
    queue = [block_of[start]]
    new_groups: list = [()]
    for b in queue:
        g = rows[members[b]]
        if len(g) > 1:
            if len(g) == 2:
                (_, m0), (_, m1) = g
                if m1 & -m1 < m0 & -m0:
                    g = g[::-1]
            else:
                g = sorted(g, key=_first_symbol)
        out = []
        for t, m in g:
            bt = block_of[t]
            if bt is not None:
                j = number.get(bt)
                if j is None:
                    j = number[bt] = len(queue) + 1
                    queue.append(bt)
                out.append((j, m))
        if len(out) > 1 and len({j for j, _ in out}) < len(out):
            merged: dict[int, int] = {}
            for j, m in out:
                merged[j] = merged.get(j, 0) | m
            out = list(merged.items())
        new_groups.append(tuple(out))   # (kept on the automaton: a tuple the collector drops)
    # the rows, written from the groups (cells into the dead state stay 0)
    zero = [0] * len(delta[0])
    new_delta = [zero]
    cells = _SYMBOLS_OF
    if len(cells) > _SYMBOLS_OF_MAX:
        cells.clear()
    for g in new_groups[1:]:
        row = zero[:]
        for j, m in g:
            cl = cells.get(m)
            if cl is None:
                cl = _symbols(m)
                cells.put(m, cl, 100 + 8 * len(cl) + m.bit_length() // 8)
            for c in cl:
                row[c] = j
        new_delta.append(row)
    new_acc = set()
    n = len(block_of)
    for a in accepting:
        if 0 <= a < n:
            b = block_of[a]
            if b is not None:
                new_acc.add(number[b])
    return new_delta, new_acc, 1, new_groups


#: bit set -> its symbols in increasing order, kept across calls (the same sets recur: the
#: symbols are the classes of the automata being minimised); cleared when it grows past the cap
_SYMBOLS_OF = BoundedMemo("automata.minimize.symbols_of", 8 << 20)
_SYMBOLS_OF_MAX = 1 << 14


def _symbols(m: int) -> list[int]:
    """The positions of the bits set in ``m``, in increasing order."""
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def _first_symbol(tm):
    """Sort key of a ``(target, bit set)`` pair: its lowest symbol's bit."""
    m = tm[1]
    return m & -m


def prune_groups(delta, accepting, start, groups=None):
    """:func:`prune_table` working per (state, successor) pair; returns ``(delta, accepting,
    start, groups)`` as :func:`minimize_groups` does."""
    rows, live = _sparse_rows(delta, accepting, start, groups)
    if start not in live:
        return [[0] * len(delta[0])], set(), 0, [()]
    block_of: list = [None] * len(delta)
    for s in live:
        block_of[s] = s
    return _canonical(delta, accepting, start, block_of, range(len(delta)), rows)


def minimize_groups(delta, accepting, start, groups=None):
    """:func:`minimize_table` working per (state, successor) pair rather than per symbol (same
    result), for tables of moderate size.

    Returns ``(delta, accepting, start, groups)``: the result and its groups (see
    :func:`minimize_table`; here each target appears once per state, in the order of its first
    symbol)."""
    nsym = len(delta[0])
    if (groups is None and _groups_by_arrays(len(delta) * nsym, nsym) and 0 not in accepting
            and delta[0].count(0) == nsym):
        groups = _list_groups(delta)
    return _minimize_pairs(delta, accepting, start, groups)


def _minimize_pairs(delta, accepting, start, groups=None):
    """:func:`minimize_groups` with the groups given, or else found by scanning the rows."""
    total = len(delta)
    # inverse transitions between reachable states, one entry per (source, target) pair with the
    # bit set of its symbols (a live target, one that can reach acceptance, has live sources
    # only), and per state the symbols that do not lead to state 0 when it is dead
    inv: list = [None] * total
    out: list = [0] * total
    if groups is None:
        rows, order = _reach_rows(delta, accepting, start)
        for s in order:
            inv[s] = []
        for s in order:
            mm = 0
            for t, m in rows[s]:
                inv[t].append((s, m))
                mm |= m
            out[s] = mm
    else:
        # the reachable states found while the inverse is built (a new target is one without
        # predecessors yet)
        rows = groups
        inv[start] = []
        order = [start]
        for s in order:
            mm = 0
            for t, m in rows[s]:
                mm |= m
                got = inv[t]
                if got is None:
                    inv[t] = [(s, m)]
                    order.append(t)
                else:
                    got.append((s, m))
            out[s] = mm
    # the live states a level at a time backwards from acceptance: the length of a state's
    # shortest accepted word is a language invariant, so the levels are a partition coarser than
    # the answer (and finer than acceptance) to start Hopcroft from
    acc = accepting if isinstance(accepting, (set, frozenset, dict)) else set(accepting)
    level = [s for s in order if s in acc]
    if not level:
        return [[0] * len(delta[0])], set(), 0, [()]
    dist: list = [None] * total
    levels = []
    d = 0
    while level:
        for s in level:
            dist[s] = d
        levels.append(level)
        nxt = []
        for t in level:
            for s, _ in inv[t]:
                if dist[s] is None:
                    dist[s] = -1
                    nxt.append(s)
        level = nxt
        d += 1
    if dist[start] is None:
        return [[0] * len(delta[0])], set(), 0, [()]
    # ... and within a level by the symbols that lead to live states (those that do not lead to
    # the dead state): equivalent states agree on both
    block_of = dist             # (reused: every live state gets its block below)
    blocks: list = []
    n_live = sum(map(len, levels))
    all_live = n_live == len(order)
    for level in levels:
        first: dict[int, int] = {}      # symbols into live states -> block
        for s in level:
            if all_live:
                mm = out[s]
            else:
                mm = 0
                for t, m in rows[s]:
                    if dist[t] is not None:
                        mm |= m
            b = first.get(mm)
            if b is None:
                first[mm] = b = len(blocks)
                blocks.append([s])
            else:
                blocks[b].append(s)
            block_of[s] = b
    if n_live > len(blocks):
        # Hopcroft on the partial automaton (non-live states are the dead state, left out):
        # every initial block is a splitter
        blocks = [set(b) for b in blocks]
        _refine(blocks, block_of, inv, deque(range(len(blocks))))
        members = [next(iter(b)) for b in blocks]
    else:
        members = [b[0] for b in blocks]
    return _canonical(delta, accepting, start, block_of, members, rows)


#: Searches over arrays go a level at a time, but a level of at most this many states (a chain
#: has one per level) is done in Python: its array operations would cost more than its steps.
PYTHON_MAX_FRONTIER = 8


def _bfs_levels(T, start: int, n: int, skip: int | None = None):
    """Breadth-first order (by symbol within a row) of the states reachable from ``start`` in the
    table ``T`` (an int array, rows = states), computed a level at a time; ``skip`` is a state
    never entered (left out, with what lies only behind it).

    Returns ``(order, number)``: the states in order, and ``number[s]`` (-1 when unreachable)."""
    import numpy as np
    number = np.full(n, -1, dtype=np.int64)
    if skip is not None:
        number[skip] = -2
    number[start] = 0
    seen = bytearray(n)                     # number[s] != -1, for the Python steps
    seen_a = np.frombuffer(seen, dtype=np.uint8)
    seen_a[number != -1] = 1
    slot = np.zeros(n, dtype=np.int64)      # scratch: first position of each candidate
    frontier = np.array([start], dtype=np.int64)
    parts = [frontier]
    count = 1
    while frontier.size:
        if frontier.size <= PYTHON_MAX_FRONTIER:
            # a narrow level (a chain): its successors in Python, distinct in order of symbol
            nxt = []
            for s in frontier.tolist():
                for t in dict.fromkeys(T[s].tolist()):
                    if not seen[t]:
                        seen[t] = 1
                        nxt.append(t)
            frontier = np.array(nxt, dtype=np.int64)
            number[frontier] = np.arange(count, count + frontier.size)
            count += frontier.size
            parts.append(frontier)
            continue
        cand = T[frontier].ravel()
        cand = cand[number[cand] == -1]
        if not cand.size:
            break
        # first occurrences, in order of appearance: the queue order of breadth-first search
        pos = np.arange(cand.size)
        slot[cand] = cand.size
        np.minimum.at(slot, cand, pos)
        frontier = cand[slot[cand] == pos]
        number[frontier] = np.arange(count, count + frontier.size)
        seen_a[frontier] = 1
        count += frontier.size
        parts.append(frontier)
    return np.concatenate(parts), number


def _coreachable_mask(T, rows, accepting_mask):
    """Among the states ``rows`` (whose successors are ``T[rows]``), those that can reach a state
    of ``accepting_mask``; a boolean mask over all states."""
    import numpy as np
    n = accepting_mask.shape[0]
    src, dst, _ = _row_groups(T[rows], None)
    src = rows[src]
    keep = src != dst
    in_rows = np.zeros(n, dtype=bool)
    in_rows[rows] = True
    live = accepting_mask & in_rows
    reach(dst[keep], src[keep], live)
    return live


def reach(src, dst, seen, within=None, check=None) -> None:
    """Mark in ``seen`` (a boolean mask over the states, updated in place) every state reached
    from those already marked over the edges ``src -> dst``, only through states of ``within``
    when given: breadth first, the edges sorted by source once and each level reading its
    frontier's only (a narrow level, a chain's, in Python; ``check`` called before each level).
    """
    import numpy as np
    n = seen.shape[0]
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    bounds = np.searchsorted(src, np.arange(n + 1))
    frontier = np.flatnonzero(seen)
    dst_list = bound_list = within_list = None
    while frontier.size:
        if check is not None:
            check()
        if frontier.size <= PYTHON_MAX_FRONTIER:
            # a narrow level (a chain): its successors in Python
            if dst_list is None:
                dst_list, bound_list = dst.tolist(), bounds.tolist()
                within_list = within.tolist() if within is not None else None
            nxt = []
            for s in frontier.tolist():
                for t in dst_list[bound_list[s]:bound_list[s + 1]]:
                    if not seen[t] and (within_list is None or within_list[t]):
                        seen[t] = True
                        nxt.append(t)
            frontier = np.array(nxt, dtype=np.int64)
            continue
        lo, hi = bounds[frontier], bounds[frontier + 1]
        lens = hi - lo
        total = int(lens.sum())
        if not total:
            break
        # the frontier's edges: each state's run of sorted edges, end to end
        idx = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(total)
        nxt = np.unique(dst[idx])
        nxt = nxt[~seen[nxt]]
        if within is not None:
            nxt = nxt[within[nxt]]
        seen[nxt] = True
        frontier = nxt


def _minimize_arrays(delta, accepting, start, refine=None, check=None):
    """:func:`minimize_table` with the pruning, the local table and the canonical numbering of
    the quotient done with array operations (same result); ``refine`` as for
    :func:`_minimize_local`."""
    import numpy as np
    D = _as_array(delta, check or _no_check)
    n_all, nsym = D.shape
    order, _ = _bfs_levels(D, start, n_all)
    acc_mask = np.zeros(n_all, dtype=bool)
    acc_list = [a for a in accepting if 0 <= a < n_all]
    acc_mask[acc_list] = True
    live = _coreachable_mask(D, order, acc_mask)
    if not live[start]:
        return [[0] * nsym], set(), 0
    states = order[live[order]]
    n = states.size
    local = np.full(n_all, n, dtype=np.int64)
    local[states] = np.arange(n)
    tab = np.vstack([local[D[states]], np.full((1, nsym), n, dtype=np.int64)])
    acc_local = np.flatnonzero(acc_mask[states]).tolist()
    block_of = (refine or _refine_by_rule)(tab, acc_local, n, check)
    # quotient: one row per block (its first state), the dead state's block dropped as 0
    blk = np.asarray(block_of, dtype=np.int64)
    nb = int(blk.max()) + 1
    first = np.full(nb, n + 1, dtype=np.int64)
    np.minimum.at(first, blk, np.arange(n + 1))
    Q = blk[tab[first]]                         # block -> block
    # the dead block becomes 0 and the others 1.. in breadth-first order
    order_b, _ = _bfs_levels(Q, int(blk[0]), nb, skip=int(blk[n]))
    new_num = np.zeros(nb, dtype=np.int64)
    new_num[order_b] = np.arange(1, order_b.size + 1)
    rows = new_num[Q[order_b]]
    new_delta = [[0] * nsym] + rows.tolist()
    acc_blocks = np.unique(blk[acc_local]) if acc_local else np.zeros(0, dtype=np.int64)
    new_accepting = set(new_num[acc_blocks].tolist())
    new_accepting.discard(0)
    return new_delta, new_accepting, 1


def _minimize_finite(delta, accepting, start, pays=None, check=None):
    """:func:`minimize_table` for large *sparse* tables, or those made mostly of states with a
    finite future, over the non-dead transitions only; None when the table does not qualify (the
    array path then runs): when state 0 is not dead, or when ``pays`` says the way does not pay
    on this table (a function ``(peeled, live, transitions, depth) -> bool`` of the numbers of
    live states with a finite future, of live states and of their non-dead transitions, and of
    the longest shortest accepted word of a live state, such as the default rule
    :func:`_finite_pays`; None: the way is taken whenever state 0 is dead).

    A state that cannot reach a cycle of live states has a finite language, and only such states
    can be equivalent to it. Those states are classed exactly by Revuz's construction: in reverse
    topological order, each by its acceptance and the classes of its successors (decided before
    it), one dictionary lookup per state. The states on or above a cycle start in blocks by the
    length of their shortest accepted word and are refined by Hopcroft, with the finite classes
    as further splitters. A long chain (an
    object with many required keys in a fixed order) would cost Moore one round per link and a
    level-by-level array search one step per link; here it costs a few passes over its
    transitions.

    The result and its breadth-first numbering are those of :func:`_minimize_arrays`."""
    import numpy as np
    tick = check or _no_check
    D = _as_array(delta, tick)
    n_all, nsym = D.shape
    if n_all < 2 or D[0].any() or 0 in accepting:
        return None
    rows, cols = np.nonzero(D)                 # row-major: by state, then by symbol
    tgt = D[rows, cols]
    ptr_a = np.zeros(n_all + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_all), out=ptr_a[1:])
    ptr = ptr_a.tolist()
    tl = tgt.tolist()
    acc = accepting if isinstance(accepting, (set, frozenset)) else set(accepting)
    # reachable from the start (over distinct successors), then co-reachable among those
    seen = bytearray(n_all)
    seen[start] = 1
    order = [start]
    succ: dict = {}
    for k, s in enumerate(order):              # ``order`` grows while it is walked
        if not k & _TICK_MASK:
            tick()
        ts = set(tl[ptr[s]:ptr[s + 1]])
        succ[s] = ts
        for u in ts:
            if not seen[u]:
                seen[u] = 1
                order.append(u)
    tick()
    preds: dict = {s: [] for s in order}
    for s in order:
        for u in succ[s]:
            preds[u].append(s)
    tick()
    # co-reachable, breadth-first backwards from acceptance: ``dist[s]`` is the length of the
    # shortest word ``s`` accepts (a property of its language, so equivalent states share it)
    live = bytearray(n_all)
    dist = [0] * n_all
    todo = [s for s in order if s in acc]
    for s in todo:
        live[s] = 1
    for t in todo:
        d = dist[t] + 1
        for s in preds[t]:
            if not live[s]:
                live[s] = 1
                dist[s] = d
                todo.append(s)
    if not live[start]:
        return [[0] * nsym], set(), 0
    tick()
    states = [s for s in order if live[s]] if len(todo) < len(order) else order
    if len(states) < len(order):
        # transitions into states that cannot reach acceptance lead to the dead state
        keep = np.frombuffer(bytes(live), dtype=np.uint8).astype(bool)[tgt]
        rows, cols, tgt = rows[keep], cols[keep], tgt[keep]
        ptr_a[1:] = np.cumsum(np.bincount(rows, minlength=n_all))
        ptr = ptr_a.tolist()
        tl = tgt.tolist()
        for s in states:
            succ[s] = {u for u in succ[s] if live[u]}
    # finite futures: peel states all of whose live successors are peeled (reverse Kahn; a
    # state on a cycle, a self-loop included, is never peeled). A live state's predecessors
    # are live.
    tick()
    pending = [0] * n_all
    peel = []
    for s in states:
        k = len(succ[s])
        pending[s] = k
        if not k:
            peel.append(s)
    for t in peel:
        for s in preds[t]:
            pending[s] -= 1
            if not pending[s]:
                peel.append(s)
    if pays is not None:
        live_mask = np.frombuffer(bytes(live), dtype=np.uint8).view(bool)
        transitions = int(np.diff(ptr_a)[live_mask].sum())     # non-dead, of the live states
        if not pays(len(peel), len(states), transitions, max(dist[s] for s in states)):
            return None
    tick()
    cl = cols.tolist()
    blk = [-1] * n_all                         # the class of each live state
    bget = blk.__getitem__
    number: dict = {}
    reps: list = []                            # per class, one of its states
    acc_of: list = []
    for s in peel:
        i, j = ptr[s], ptr[s + 1]
        a = s in acc
        key = (a, tuple(cl[i:j]), tuple(map(bget, tl[i:j])))
        b = number.get(key)
        if b is None:
            b = number[key] = len(acc_of)
            reps.append(s)
            acc_of.append(a)
        blk[s] = b
    tick()
    if len(peel) < len(states):
        _refine_infinite(states, peel, blk, reps, acc_of, dist, rows, cols, tgt, n_all, nsym, tick)
    tick()
    # canonical numbering: breadth-first from the start's class, symbols in order (each class
    # written from one of its states)
    num = [0] * len(acc_of)
    first = blk[start]
    num[first] = 1
    queue = [first]
    zero = [0] * nsym
    out = [zero[:]]
    for k, b in enumerate(queue):
        if not k & _TICK_MASK:
            tick()
        row = zero[:]
        s = reps[b]
        i = ptr[s]
        for u in tl[i:ptr[s + 1]]:
            c = blk[u]
            j = num[c]
            if not j:
                j = num[c] = len(queue) + 1
                queue.append(c)
            row[cl[i]] = j
            i += 1
        out.append(row)
    new_accepting = {num[b] for b in queue if acc_of[b]}
    return out, new_accepting, 1


def _pair_masks(src, dst, sym, n: int, nsym: int):
    """The distinct ``(src, dst)`` pairs of the transitions ``src --sym--> dst`` (arrays; states
    below ``n``, symbols below ``nsym``), each with the bit set of its symbols as a Python int.

    Returns three lists ``(src, dst, mask)``, pairs in order of ``(src, dst)``. The bit sets are
    made with array operations 62 symbols at a time (one 64-bit word per pair and word used),
    and words of one pair joined in Python: a step per pair, not per symbol."""
    import numpy as np
    if not src.size:
        return [], [], []
    words = (nsym + 61) // 62
    key = (src * n + dst) * words
    if words > 1:
        key += sym // 62
        bit = sym % 62
    else:
        bit = sym
    o = np.argsort(key, kind="stable")
    key = key[o]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    vals = np.bitwise_or.reduceat(np.left_shift(np.int64(1), bit[o]), starts)
    key = key[starts]
    if words == 1:
        return src[o][starts].tolist(), dst[o][starts].tolist(), vals.tolist()
    pair = key // words
    new = np.concatenate(([True], pair[1:] != pair[:-1]))
    masks: list = []
    for p, w, v in zip(new.tolist(), (key % words).tolist(), vals.tolist()):
        if w:
            v <<= 62 * w
        if p:
            masks.append(v)
        else:
            masks[-1] |= v
    pair = pair[new]
    return (pair // n).tolist(), (pair % n).tolist(), masks


def _refine_infinite(states, peel, blk, reps, acc_of, dist, rows, cols, tgt, n_all: int,
                     nsym: int, check=None) -> None:
    """Classes for the live states :func:`_minimize_finite` did not peel (those with an infinite
    future), by Hopcroft with the finite classes as fixed splitters; sets them in ``blk`` and
    appends one state of each and its acceptance to ``reps`` and ``acc_of``.

    The unpeeled states start in blocks by ``dist`` (the length of their shortest accepted word,
    0 for accepting states): a partition that refines acceptance and that equivalent states never
    straddle, so Hopcroft's refinement of it, with every block a splitter, still ends at the
    equivalence. On a chain it is the answer already: the refinement then only checks it instead
    of splitting one link off per step."""
    import numpy as np
    rest = [s for s in states if blk[s] < 0]
    # blocks: the finite classes (only splitters, never split), then the rest by distance
    blocks: list = [set() for _ in range(len(acc_of))]
    for s in peel:
        blocks[blk[s]].add(s)
    block_of = blk[:]
    by_dist: dict = {}
    for s in rest:
        b = by_dist.get(dist[s])
        if b is None:
            b = by_dist[dist[s]] = len(blocks)
            blocks.append({s})
        else:
            blocks[b].add(s)
        block_of[s] = b
    # inverse transitions into every live state, from the unpeeled states only (the finite
    # classes never split: their predecessors that matter are the unpeeled ones)
    is_rest = np.zeros(n_all, dtype=bool)
    is_rest[np.asarray(rest, dtype=np.int64)] = True
    sel = is_rest[rows]
    inv: defaultdict = defaultdict(list)
    for s, t, m in zip(*_pair_masks(rows[sel], tgt[sel], cols[sel], n_all, nsym)):
        inv[t].append((s, m))
    _refine(blocks, block_of, inv, deque(range(len(blocks))), check)
    # number the unpeeled blocks after the finite ones
    renum: dict = {}
    for s in rest:
        b = block_of[s]
        c = renum.get(b)
        if c is None:
            c = renum[b] = len(acc_of)
            acc_of.append(dist[s] == 0)
            reps.append(s)
        blk[s] = c


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


#: Rounds of array refinement before Hopcroft finishes (long chains need one round per link).
MOORE_MAX_ROUNDS = 400
#: After this many rounds, a round that adds fewer than one block per ``MOORE_STALL_STATES``
#: states hands over to Hopcroft: a long chain splits a few blocks per round, each round costs a
#: sort of the whole table, while Hopcroft pays per split.
MOORE_STALL_ROUNDS = 12
MOORE_STALL_STATES = 500


def moore_blocks(tab, acc_local, max_rounds: int | None = None, weights=None, check=None):
    """Moore's partition refinement with array operations.

    Each round names every state's block by a 64-bit hash of its signature (its block, the
    blocks of its successors) and counts the distinct names; the blocks are numbered once, when
    the count stops growing. A collision can only merge states, never separate equivalent ones,
    so the final partition is checked once: if every state agrees with its block's first state
    on acceptance and on the blocks of all successors, it is a congruence coarser than none of
    the Myhill-Nerode classes, hence exactly them.

    Parameters
    ----------
    tab : sequence of sequences of int, or int array
        A complete table (``k`` symbols).
    acc_local : list of int
        Its accepting states.
    max_rounds : int, optional
        Stop after this many rounds (default :data:`MOORE_MAX_ROUNDS`, and earlier when rounds
        stall, see :data:`MOORE_STALL_ROUNDS`).
    weights : int array of ``k + 1``, optional
        The multipliers of the row hash (default: odd numbers drawn from a fixed seed).

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
    count = 2 if 0 < acc.sum() < total else 1
    mult = _weights(k) if weights is None else np.asarray(weights, dtype=np.int64)
    limit = MOORE_MAX_ROUNDS if max_rounds is None else max_rounds
    stable = False
    stall = max(1, total // MOORE_STALL_STATES)
    for r in range(limit):
        if check is not None:
            check()
        h = block * mult[0] + block[T] @ mult[1:]      # wraps modulo 2**64, which is fine
        distinct = len(np.unique_values(h))
        if distinct == count:
            stable = True
            break
        grew = distinct - count
        block, count = h, distinct
        if r >= MOORE_STALL_ROUNDS and grew < stall and max_rounds is None:
            break                                      # a chain: Hopcroft finishes
    # refine by acceptance (a collision may have merged across it), then check stability
    block = unique_inverse(unique_inverse(block) * 2 + acc)
    if stable:
        first = np.full(block.max() + 1, total, dtype=np.int64)
        np.minimum.at(first, block, np.arange(total))
        succ = block[T]
        stable = bool(np.array_equal(succ, np.take(succ, first[block], axis=0)))
    return block.tolist(), stable


def _weights(k: int):
    """The default multipliers of :func:`moore_blocks`' row hash for ``k`` symbols: odd numbers
    drawn from a fixed seed, the first ``k + 1`` of :data:`_WEIGHTS` (read only)."""
    if k < len(_WEIGHTS):
        return _WEIGHTS[:k + 1]
    return _draw_weights(k + 1)


def _draw_weights(n: int):
    import numpy as np
    mult = np.random.default_rng(0x7F4A7C15).integers(1, 2**62, size=n, dtype=np.int64) | 1
    mult.flags.writeable = False
    return mult


#: Multipliers for tables of up to 1,023 symbols, drawn once.
_WEIGHTS = _draw_weights(1024)


def _row_groups(tab, dead, masks: bool = False):
    """The distinct (source, target) pairs of a table, targets other than ``dead``, as arrays
    ``(src, dst, mask)``: ``mask`` the bit set of the symbols taking ``src`` to ``dst`` (only
    when asked, for at most 62 symbols). Each row is sorted on its own (few symbols per row)."""
    import numpy as np
    T = np.asarray(tab, dtype=np.int64)
    n, k = T.shape
    order = np.argsort(T, axis=1, kind="stable")
    Ts = np.take_along_axis(T, order, axis=1)
    new = np.ones((n, k), dtype=bool)
    new[:, 1:] = Ts[:, 1:] != Ts[:, :-1]
    starts = np.flatnonzero(new.ravel())
    dst = Ts.ravel()[starts]
    src = starts // k
    mask = None
    if masks:
        bits = np.left_shift(np.int64(1), order.ravel())
        mask = np.bitwise_or.reduceat(bits, starts) if starts.size else bits[:0]
    if dead is not None:
        keep = dst != dead
        src, dst = src[keep], dst[keep]
        if mask is not None:
            mask = mask[keep]
    return src, dst, mask


def _inverse_masks(tab, dead):
    """``inv[t]``: the ``(s, mask)`` pairs of states ``s`` with a transition into ``t``, ``mask`` the
    bit set of the symbols that take ``s`` to ``t`` (transitions into ``dead`` left out).

    One entry per (source, target) pair rather than per symbol: a state that moves to the same
    target on most symbols (the inside of a JSON string) costs one entry, not dozens."""
    total = len(tab)
    k = len(tab[0]) if total else 0
    inv: list = [[] for _ in range(total)]
    if k <= 62 and total * k >= (ARRAY_INVERSE_MIN_CELLS if hasattr(tab, "shape") else 4096):
        src, dst, masks = _row_groups(tab, dead, masks=True)
        for s, t, m in zip(src.tolist(), dst.tolist(), masks.tolist()):
            inv[t].append((s, m))
        return inv
    if total * k >= 4096:
        # wider than one 64-bit word: the non-dead cells, joined into bit sets 62 symbols at a
        # time by array operations
        import numpy as np
        T = np.asarray(tab, dtype=np.int64)
        if dead is None:
            src, sym = np.repeat(np.arange(total), k), np.tile(np.arange(k), total)
        else:
            src, sym = np.nonzero(T != dead)
            keep = src != dead
            src, sym = src[keep], sym[keep]
        dst = T[src, sym]
        for s, t, m in zip(*_pair_masks(src, dst, sym, total, k)):
            inv[t].append((s, m))
        return inv
    if not isinstance(tab, list):
        tab = tab.tolist()
    for s in range(total):
        if s == dead:
            continue
        by_t: dict[int, int] = {}
        for a, t in enumerate(tab[s]):
            if t != dead:
                by_t[t] = by_t.get(t, 0) | (1 << a)
        for t, m in by_t.items():
            inv[t].append((s, m))
    return inv


def hopcroft_blocks(tab, acc_local, initial=None, dead=None, check=None):
    """Hopcroft's refinement of ``initial`` (default: accepting / not accepting) to a congruence.

    ``dead``, when given, is a state with every transition to itself such that every *other*
    state can reach acceptance. Then the automaton is refined as a partial one: transitions into
    ``dead`` are never looked at (in these tables they are most of them), ``dead`` keeps a block
    of its own, and every other initial block is a splitter (Valmari & Lehtinen's variant for
    partial automata: with ``dead`` left out, no block is implied by the others). The result is
    the same partition.

    A splitter is applied for all symbols at once: each predecessor gets the bit set of symbols
    that lead into the splitter, and each block splits by that signature (a multi-way split:
    all parts but the largest become pending splitters, which is Hopcroft's "smaller half"
    generalised).

    Returns ``block_of`` for every state of ``tab``."""
    total = len(tab)
    inv = _inverse_masks(tab, dead)

    blocks: list[set[int]] = []
    block_of = [0] * total
    if initial is None:
        acc_set = set(acc_local)
        groups = [list(acc_local), [s for s in range(total) if s not in acc_set and s != dead]]
    else:
        by_block: dict[int, list[int]] = {}
        for s in range(total):
            if s != dead:
                by_block.setdefault(initial[s], []).append(s)
        groups = list(by_block.values())
    for members in groups:
        if members:
            b = len(blocks)
            blocks.append(set(members))
            for s in members:
                block_of[s] = b
    live_blocks = len(blocks)
    if dead is not None:
        block_of[dead] = len(blocks)
        blocks.append({dead})
    # Splitters: for a complete DFA, splitting by one of two complementary blocks implies the
    # other, so all initial blocks but one suffice (and afterwards all parts of a split but one).
    # Without the dead state's transitions the automaton is partial and every live initial block
    # must be a splitter.
    if dead is not None:
        work = deque(range(live_blocks))
    elif initial is None:
        smaller = min(range(len(blocks)), key=lambda b: len(blocks[b])) if len(blocks) > 1 else None
        work = deque() if smaller is None else deque([smaller])
    else:
        largest = max(range(len(blocks)), key=lambda b: len(blocks[b]))
        work = deque(b for b in range(len(blocks)) if b != largest)
    _refine(blocks, block_of, inv, work, check)
    return block_of


def _refine(blocks: list, block_of, inv, work, check=None) -> None:
    """Hopcroft's splitting loop: apply the pending splitters ``work`` (a deque of block numbers)
    until none is left. ``blocks[b]`` is the set of states of block ``b``, ``block_of[s]`` the
    block of ``s`` (both updated in place), ``inv[t]`` the ``(s, mask)`` pairs of the states
    ``s`` moving into ``t`` on the symbols of ``mask``; ``check`` is called every 1,024
    splitters."""
    steps = 0
    while work:
        steps += 1
        if check is not None and not steps & 1023:
            check()
        b = work.popleft()
        splitter = blocks[b]
        if len(splitter) == 1:
            # one state: when at most one of its predecessors lies in a block of more than one
            # state (chains, a self-loop besides), at most that predecessor splits off
            for t in splitter:
                preds = inv[t]
            one = None
            for s, _ in preds:
                if len(blocks[block_of[s]]) > 1:
                    if one is not None:
                        break
                    one = s
            else:
                if one is not None:
                    blocks[block_of[one]].discard(one)
                    block_of[one] = z = len(blocks)
                    blocks.append({one})
                    work.append(z)
                continue
        # (a snapshot: splitting by the block as it was is sound, and its parts get queued)
        sig: dict[int, int] = {}
        for t in splitter:
            for s, m in inv[t]:
                got = sig.get(s)
                sig[s] = m if got is None else got | m
        # predecessors grouped by their current block, then by signature (a block of one state
        # cannot split)
        touched: dict[int, dict[int, list[int]]] = {}
        for s, m in sig.items():
            y = block_of[s]
            if len(blocks[y]) == 1:
                continue
            by_sig = touched.get(y)
            if by_sig is None:
                touched[y] = {m: [s]}
            else:
                got = by_sig.get(m)
                if got is None:
                    by_sig[m] = [s]
                else:
                    got.append(s)
        for y, by_sig in touched.items():
            members = blocks[y]
            parts = list(by_sig.values())
            marked = sum(len(p) for p in parts) if len(parts) > 1 else len(parts[0])
            unmarked = len(members) - marked
            if unmarked == 0 and len(parts) == 1:
                continue
            if unmarked >= marked:
                # the unmarked part is the largest and keeps the block: O(marked)
                for p in parts:
                    members.difference_update(p)
            else:
                # scanning the block costs less than twice the marked states
                if unmarked:
                    ms = set(parts[0]) if len(parts) == 1 else {s for p in parts for s in p}
                    parts.append([s for s in members if s not in ms])
                big = max(range(len(parts)), key=lambda i: len(parts[i]))
                blocks[y] = set(parts[big])
                parts = parts[:big] + parts[big + 1:]
            # the other parts become new blocks, pending splitters
            for p in parts:
                z = len(blocks)
                blocks.append(set(p))
                for s in p:
                    block_of[s] = z
                work.append(z)


# ---------------------------------------------------------------- the ways, and the rule

#: Tables with at least this many cells are pruned, numbered and quotiented with array operations
#: (or, when most states have a finite future, minimised by :func:`_minimize_finite`).
ARRAY_MIN_CELLS = 32_000
#: Tables with at least this many cells (states x symbols) are refined with array operations
#: (Moore's rounds, :func:`_refine_moore`).
MOORE_MIN_CELLS = 1_000_000
#: Large tables where at least this share of the live states have a finite future are
#: minimised by :func:`_minimize_finite` (above 1: never).
FINITE_MIN_SHARE = 0.5
#: ... or at most this many non-dead transitions per live state (on average): sparse tables.
#: Compiled schema tables (mostly minimal already, long chains) go faster that way at every
#: density they show; dense tables with much to merge (Moore done in a few rounds) do not.
SPARSE_MAX_TRANSITIONS = 24
#: A table with at least this many cells (and at most 62 symbols, state 0 dead) gets its groups
#: from array operations over its non-zero cells rather than from row scans (measured on the
#: object automata of a large schema, ~40 classes: about a quarter less from ~1,000 cells)
LIST_GROUPS_MIN_CELLS = 1000
#: Hopcroft's predecessor lists of a table given as an array of at least this many cells (at
#: most 62 symbols) are found with array operations (:func:`_row_groups`); a table given as
#: lists, from 4,096 cells (lists are already at hand there).
ARRAY_INVERSE_MIN_CELLS = 512


#: ... unless every live state accepts within this many symbols, and too few have a finite
#: future: a table of cycles that all end quickly (the residues of ``multipleOf`` and their
#: products) is told apart in about as many rounds of Moore's over arrays (the digits that
#: tell two residues apart), where Hopcroft's in Python pays per split. Handwritten allany8
#: (products of 24,000 states): 2.8 -> 2.1 s to compile. A JSON object's table is deep.
SHALLOW_MAX_DEPTH = 12


def _finite_pays(peeled: int, live: int, transitions: int, depth: int | None = None) -> bool:
    """Whether a large table goes to :func:`_minimize_finite` (else :func:`_minimize_arrays`):
    ``peeled`` of its ``live`` states have a finite future, they have ``transitions`` non-dead
    transitions, and the longest of their shortest accepted words is ``depth`` symbols long
    (see :data:`FINITE_MIN_SHARE`, :data:`SPARSE_MAX_TRANSITIONS`, :data:`SHALLOW_MAX_DEPTH`:
    a shallow table's arrays are refined by Moore's rounds)."""
    if peeled >= FINITE_MIN_SHARE * live:
        return True
    if depth is not None and depth <= SHALLOW_MAX_DEPTH:
        return False
    return transitions <= SPARSE_MAX_TRANSITIONS * live


def _groups_by_arrays(cells: int, nsym: int) -> bool:
    """Whether the groups of a table of ``cells`` cells and ``nsym`` symbols whose state 0 is
    dead are found by array operations (:func:`_groups_of`) rather than by scanning its rows."""
    return nsym <= 62 and cells >= LIST_GROUPS_MIN_CELLS


def _refine_hopcroft(tab, acc_local, dead, check=None):
    """The Myhill-Nerode partition of a local table (every state but ``dead`` live) by
    Hopcroft's algorithm on the partial automaton: the reference refinement (``check``: the
    construction's clock)."""
    return hopcroft_blocks(tab, acc_local, dead=dead, check=check)


def _refine_moore(tab, acc_local, dead, check=None, max_rounds=None, weights=None):
    """:func:`_refine_hopcroft` by Moore's rounds over arrays (:func:`moore_blocks`, which takes
    ``max_rounds`` and ``weights``), finished by Hopcroft's algorithm when they stop short of a
    stable partition (theirs is then coarser than the answer and refines acceptance: a valid
    start)."""
    block_of, stable = moore_blocks(tab, acc_local, max_rounds, weights, check)
    if stable:
        return block_of
    return hopcroft_blocks(tab, acc_local, block_of, dead=dead, check=check)


def _refine_by_rule(tab, acc_local, dead, check=None):
    """The default refinement: Moore's rounds from :data:`MOORE_MIN_CELLS` cells, else
    Hopcroft's algorithm."""
    if len(tab) * len(tab[0]) >= MOORE_MIN_CELLS:
        return _refine_moore(tab, acc_local, dead, check)
    return _refine_hopcroft(tab, acc_local, dead, check)


def _minimize_pairs_scanned(delta, accepting, start):
    """:func:`minimize_groups` with the groups found by scanning the rows."""
    return _minimize_pairs(delta, accepting, start)[:3]


def _minimize_pairs_from_arrays(delta, accepting, start):
    """:func:`minimize_groups` with the groups found by array operations; None where they do not
    apply (more than 62 symbols, or state 0 not a dead state)."""
    nsym = len(delta[0])
    if nsym > 62 or 0 in accepting or any(delta[0]):
        return None
    return _minimize_pairs(delta, accepting, start, _list_groups(delta))[:3]


#: Every way to minimise a table: name -> function ``(delta, accepting, start)`` returning what
#: :func:`minimize_table` returns, or None where the way does not apply to the table. All give
#: the reference's result (:data:`MINIMIZER_REFERENCE`), which the tests check by running every
#: entry on the same tables. :func:`minimize_table` chooses among them by size: tables of at least
#: :data:`ARRAY_MIN_CELLS` cells go to ``finite`` where :func:`_finite_pays`, else to ``arrays``
#: (:func:`_minimize_large`), refined by Moore's rounds where :func:`_refine_by_rule` says so;
#: smaller ones to ``pairs``, their groups found by arrays where :func:`_groups_by_arrays` (and
#: ``moore`` would take tables between :data:`MOORE_MIN_CELLS` and :data:`ARRAY_MIN_CELLS` cells,
#: were the first below the second).
MINIMIZERS = {
    "hopcroft": partial(_minimize_local, refine=_refine_hopcroft),
    "moore": partial(_minimize_local, refine=_refine_moore),
    "pairs": _minimize_pairs_scanned,
    "pairs-from-arrays": _minimize_pairs_from_arrays,
    "arrays": partial(_minimize_arrays, refine=_refine_hopcroft),
    "arrays-moore": partial(_minimize_arrays, refine=_refine_moore),
    "finite": _minimize_finite,
}
#: The way that defines the result: local table, Hopcroft's algorithm, canonical numbering.
MINIMIZER_REFERENCE = "hopcroft"
