"""``minimize_groups`` and ``prune_groups`` (the per-(state, successor) path for small and
moderate tables) against independent references.

The minimal table comes from Brzozowski's double reversal, renumbered here breadth-first from the
start (symbols in order, dead state 0); the groups returned with it are recomputed from its rows.
Tables are random, with and without the ``groups`` a subset construction would hand over (pairs
shuffled, a target sometimes split over several pairs), with state 0 dead or not, unreachable
states, states that cannot reach acceptance (with loops of their own), an empty language, and
tables that are already minimal under a random numbering. Up to 130 symbols: past the 62 of one
machine word.
"""

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tokenfsm.automata import minimize as mz

from oracles import brzozowski
from ways import minimized_every_way


def _bfs_renumber(delta, accepting, start):
    """The table renumbered breadth-first from ``start`` (symbols in order), dead state 0, only
    the reachable states kept; ``delta`` must already be minimal with dead state 0."""
    k = len(delta[0])
    if start == 0:
        return [[0] * k], set(), 0
    num = {start: 1}
    order = [start]
    i = 0
    while i < len(order):
        for t in delta[order[i]]:
            if t != 0 and t not in num:
                num[t] = len(order) + 1
                order.append(t)
        i += 1
    rows = [[0] * k] + [[num.get(t, 0) for t in delta[s]] for s in order]
    return rows, {num[a] for a in accepting if a in num}, 1


def _groups_of(delta):
    """Per state, its targets other than 0 in the order of their first symbol, each with the bit
    set of its symbols (a plain walk of the cells)."""
    out = []
    for row in delta:
        masks: dict[int, int] = {}
        for c, t in enumerate(row):
            if t != 0:
                masks[t] = masks.get(t, 0) | (1 << c)
        out.append(tuple(masks.items()))
    return out


def _expected(delta, accepting, start):
    k = len(delta[0])
    return _bfs_renumber(*brzozowski([None] * k, delta, accepting, start))


def _given_groups(delta, rng):
    """Groups as a producer may hand them over: pairs in any order, a target's symbols sometimes
    split over two pairs."""
    out = []
    for row in delta:
        pairs = []
        for t, m in _groups_of([row])[0]:
            bits = [c for c in range(m.bit_length()) if m >> c & 1]
            if len(bits) > 1 and rng.random() < 0.3:
                cut = rng.randint(1, len(bits) - 1)
                pairs.append((t, sum(1 << c for c in bits[:cut])))
                pairs.append((t, sum(1 << c for c in bits[cut:])))
            else:
                pairs.append((t, m))
        rng.shuffle(pairs)
        out.append(pairs)
    return out


def _random_table(rng, *, dead0: bool):
    """A random complete table: a live core (loops, chains, copies of states so that some
    merge), traps that cannot reach acceptance, unreachable states; numbered at random."""
    k = rng.choice([1, 2, 3, 7, 40, 62, 63, 70, 130])
    n = rng.randint(1, 40)
    core = list(range(n))
    delta = []
    for s in range(n):
        # mostly the dead state, a few real successors (the shape of JSON text automata)
        row = [-1] * k
        for _ in range(rng.randint(0, 3)):
            lo = rng.randrange(k)
            hi = min(k, lo + rng.choice([1, 1, 2, k]))
            t = rng.choice(core)
            for c in range(lo, hi):
                row[c] = t
        delta.append(row)
    accepting = {s for s in core if rng.random() < 0.3}
    # copies of some states (equivalent states that must merge)
    for s in rng.sample(core, min(len(core), rng.randint(0, 5))):
        delta.append(list(delta[s]))
        if s in accepting:
            accepting.add(len(delta) - 1)
        # some state moves to the copy instead of the original
        p = rng.choice(core)
        delta[p] = [len(delta) - 1 if t == s else t for t in delta[p]]
    # traps: reachable, cannot reach acceptance
    for _ in range(rng.randint(0, 3)):
        trap = len(delta)
        delta.append([rng.choice([trap, -1]) for _ in range(k)])
        p = rng.choice(core)
        delta[p][rng.randrange(k)] = trap
    # unreachable states (some of them accepting, pointing into the core)
    for _ in range(rng.randint(0, 3)):
        delta.append([rng.choice(core + [-1]) for _ in range(k)])
        if rng.random() < 0.5:
            accepting.add(len(delta) - 1)
    start = rng.choice(core)
    # a dead state, then a random numbering (state 0 is the dead state when ``dead0``)
    dead = len(delta)
    delta.append([dead] * k)
    delta = [[dead if t == -1 else t for t in row] for row in delta]
    perm = list(range(len(delta)))
    rng.shuffle(perm)
    if dead0:
        j = perm.index(0)
        perm[j], perm[dead] = perm[dead], 0
    new = [None] * len(delta)
    for s, row in enumerate(delta):
        new[perm[s]] = [perm[t] for t in row]
    return new, {perm[a] for a in accepting}, perm[start]


def _check(delta, accepting, start, groups=None):
    want = _expected(delta, accepting, start)
    got = mz.minimize_groups(delta, accepting, start, groups)
    assert got[:3] == want
    assert got[3] == _groups_of(got[0])
    assert mz.minimize_table(delta, accepting, start, groups) == want
    assert minimized_every_way(delta, accepting, start) == want


@pytest.mark.parametrize("seed", range(300))
def test_minimize_groups_against_brzozowski(seed):
    rng = random.Random(seed)
    delta, accepting, start = _random_table(rng, dead0=seed % 3 != 0)
    _check(delta, accepting, start)
    if delta[0].count(0) == len(delta[0]) and 0 not in accepting:
        _check(delta, accepting, start, _given_groups(delta, rng))


@pytest.mark.parametrize("seed", range(60))
def test_already_minimal_tables_come_back_renumbered(seed):
    """A minimal table under a random numbering: no state merges (every initial block may
    already be a single state), only the numbering changes."""
    rng = random.Random(1000 + seed)
    want = _expected(*_random_table(rng, dead0=True))
    delta, accepting, start = want
    n = len(delta)
    perm = [0] + rng.sample(range(1, n), n - 1)
    shuffled = [None] * n
    for s, row in enumerate(delta):
        shuffled[perm[s]] = [perm[t] for t in row]
    acc = {perm[a] for a in accepting}
    for groups in (None, _given_groups(shuffled, rng)):
        got = mz.minimize_groups(shuffled, acc, perm[start], groups)
        assert got[:3] == want
        assert got[3] == _groups_of(want[0])


@given(st.integers(1, 4), st.integers(1, 9), st.data())
@settings(max_examples=200, deadline=None)
def test_small_tables_against_brzozowski(k, n, data):
    """Every shape of tiny table, state 0 dead or not, any start (including state 0)."""
    delta = [[data.draw(st.integers(0, n - 1)) for _ in range(k)] for _ in range(n)]
    accepting = data.draw(st.sets(st.integers(0, n - 1)))
    start = data.draw(st.integers(0, n - 1))
    _check(delta, accepting, start)
    if all(t == 0 for t in delta[0]) and 0 not in accepting:
        _check(delta, accepting, start, _groups_of(delta))


def test_empty_language_and_lone_start():
    delta = [[0, 0], [1, 2], [2, 2]]            # nothing accepting
    assert mz.minimize_groups(delta, set(), 1) == ([[0, 0]], set(), 0, [()])
    assert mz.minimize_groups(delta, {2}, 0) == ([[0, 0]], set(), 0, [()])    # 2 unreachable
    assert mz.minimize_groups(delta, {1}, 1) == ([[0, 0], [1, 0]], {1}, 1, [(), ((1, 1),)])


@pytest.mark.parametrize("seed", range(40))
def test_prune_groups_against_a_plain_prune(seed):
    """No merging: the reachable states that can reach acceptance, renumbered breadth-first."""
    rng = random.Random(5000 + seed)
    delta, accepting, start = _random_table(rng, dead0=True)
    # independent pruning: forward walk, then backward fixpoint
    seen, stack = {start}, [start]
    while stack:
        for t in delta[stack.pop()]:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    live = {s for s in seen if s in accepting}
    changed = True
    while changed:
        changed = False
        for s in seen - live:
            if any(t in live for t in delta[s]):
                live.add(s)
                changed = True
    if start not in live:
        want = ([[0] * len(delta[0])], set(), 0)
    else:
        # rename the non-live states to 0, then the breadth-first numbering
        pruned = [[t if t in live else 0 for t in row] if s in live else [0] * len(row)
                  for s, row in enumerate(delta)]
        want = _bfs_renumber(pruned, accepting & live, start)
    got = mz.prune_groups(delta, accepting, start)
    assert got[:3] == want
    assert got[3] == _groups_of(got[0])


@pytest.mark.parametrize("seed", range(10))
def test_array_tables_take_the_same_path(seed):
    """A numpy table small enough for the per-pair path gets its groups from array sorts."""
    rng = random.Random(9000 + seed)
    while True:
        delta, accepting, start = _random_table(rng, dead0=True)
        k = len(delta[0])
        if k <= 62 and len(delta) * k >= 1000:
            break
    want = _expected(delta, accepting, start)
    assert mz.minimize_table(np.array(delta, dtype=np.int64), accepting, start) == want


@pytest.mark.parametrize("seed", range(60))
def test_list_groups_by_array_operations_against_a_walk(seed):
    """The groups of a list table found over its non-zero cells with array operations (tables
    of at most 62 symbols) are a state's pairs by increasing target, and the result does not
    depend on which way the groups were found (row scans, array operations, or the default
    choice between them)."""
    rng = random.Random(7000 + seed)
    while True:
        delta, accepting, start = _random_table(rng, dead0=True)
        if len(delta[0]) <= 62:
            break
    want_groups = [sorted(g) for g in _groups_of(delta)]
    assert mz._list_groups(delta) == want_groups
    want = _expected(delta, accepting, start)
    for groups in (None, mz._list_groups(delta)):
        got = mz._minimize_pairs(delta, accepting, start, groups)
        assert got[:3] == want
        assert got[3] == _groups_of(want[0])
    assert mz.minimize_groups(delta, accepting, start) == got


@pytest.mark.parametrize("k", [1, 40, 62])
def test_tables_without_transitions(k):
    """A table whose every cell is the dead state 0, large enough for its groups to come from
    array operations: no groups, and a start that accepts the empty word alone or nothing."""
    delta = [[0] * k for _ in range(1000 // k + 2)]
    assert mz._list_groups(delta) == [[] for _ in delta]
    for acc in (set(), {1}):
        want = _expected(delta, acc, 1)
        assert want == (([[0] * k, [0] * k], {1}, 1) if acc else ([[0] * k], set(), 0))
        assert mz.minimize_groups(delta, acc, 1)[:3] == want
        assert mz.minimize_table(delta, acc, 1) == want
        assert mz.minimize_table(np.array(delta, dtype=np.int64), acc, 1) == want
        assert minimized_every_way(delta, acc, 1) == want
