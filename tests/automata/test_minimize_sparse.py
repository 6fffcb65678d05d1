"""``minimize_table``'s per-successor way (tables of moderate size) against the other ways.

The per-successor way works on the distinct successors of each state (``set(row)``) and finds a
successor's symbols with ``row.index``/``row.count`` scans, never per symbol in Python; the array
way and Moore's rounds work per cell. On the same tables every way declared in
``minimize.MINIMIZERS`` must give the reference's result, the result must not depend on how the
input states are numbered (canonical numbering), and its size must be Brzozowski's.
"""

import random
from functools import partial

import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata import minimize as mz

from oracles import brzozowski, raw_tables, table_accepts
from ways import minimized_every_way


def _paths(delta, accepting, start):
    """The result of the per-successor way, of the default choice for large tables (finite
    futures or arrays) and of Moore's rounds cut to two (finished by Hopcroft); every declared
    way is checked against the reference on the way."""
    want = minimized_every_way(delta, accepting, start)
    sparse = mz.minimize_groups(delta, accepting, start)[:3]
    arrays = mz._minimize_large(delta, accepting, start)
    moore = mz._minimize_local(delta, accepting, start,
                               partial(mz._refine_moore, max_rounds=2))
    assert sparse == want
    return sparse, arrays, moore


@st.composite
def general_tables(draw):
    """Complete tables with no dead-state convention: state 0 may move and accept, rows repeat
    a few targets (as determinised tables do), some states copy others."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    n = rng.randint(1, 40)
    k = rng.choice([1, 2, 3, 7, 30, 63, 70])
    hot = [rng.randrange(n) for _ in range(3)]

    def row():
        return [rng.choice(hot) if rng.random() < 0.7 else rng.randrange(n) for _ in range(k)]

    delta = [row() for _ in range(n)]
    for s in range(n):
        if rng.random() < 0.3:
            delta[s] = list(delta[rng.randrange(n)])
    accepting = {s for s in range(n) if rng.random() < 0.3}
    return delta, accepting, rng.randrange(n)


def _permuted(delta, accepting, start, rng):
    n = len(delta)
    perm = list(range(n))
    rng.shuffle(perm)
    new = [None] * n
    for s in range(n):
        new[perm[s]] = [perm[t] for t in delta[s]]
    return new, {perm[a] for a in accepting}, perm[start]


@given(general_tables(), st.integers(0, 2**32))
def test_paths_agree_and_numbering_is_canonical(table, seed):
    delta, accepting, start = table
    sparse, arrays, moore = _paths(delta, accepting, start)
    assert sparse == arrays == moore
    # renumbering the input states (tuples as rows this time) changes nothing
    pdelta, pacc, pstart = _permuted(delta, accepting, start, random.Random(seed))
    assert mz.minimize_table([tuple(r) for r in pdelta], pacc, pstart) == sparse


@given(raw_tables(max_states=8, max_classes=3))
def test_sparse_path_is_the_myhill_nerode_quotient(table):
    classes, delta, accepting, start = table
    got_delta, got_acc, got_start = _paths(delta, accepting, start)[0]
    want_delta, _, want_start = brzozowski(classes, delta, accepting, start)
    assert len(got_delta) == len(want_delta)
    assert (got_start == 0) == (want_start == 0)
    assert not any(got_delta[0]) and 0 not in got_acc
    # same language, checked on every string of up to three class representatives
    reps = [chr(c.ranges[0][0]) for c in classes]
    words = [""]
    for _ in range(3):
        words += [w + r for w in words if len(w) == len(words[-1]) for r in reps]
    for w in words:
        assert (table_accepts(classes, delta, accepting, start, w)
                == table_accepts(classes, got_delta, got_acc, got_start, w))


@pytest.mark.parametrize("seed", range(3))
def test_sparse_path_on_a_long_chain_with_copies(seed):
    # a chain of n states on symbol 0 (others dead), doubled: the copies must merge
    rng = random.Random(seed)
    n, k = 120, rng.choice([5, 64, 90])
    delta = [[0] * k]
    for s in range(1, n + 1):
        row = [0] * k
        row[0] = s + 1 if s < n else 0
        delta.append(row)
    for s in range(1, n + 1):
        row = [0] * k
        row[0] = n + s + 1 if s < n else 0
        delta.append(row)
    delta[1][k - 1] = n + 2         # start also enters the copy (one step in) on the last symbol
    accepting = {n, 2 * n}
    sparse, arrays, moore = _paths(delta, accepting, 1)
    assert sparse == arrays == moore
    assert len(sparse[0]) == n + 1


@given(general_tables())
def test_array_input_equals_list_input(table):
    import numpy as np

    delta, accepting, start = table
    # also with state 0 made dead, the usual shape (then the groups come from array sorts)
    dead0 = [[0] * len(delta[0])] + [list(r) for r in delta[1:]]
    acc0 = accepting - {0}
    for d, a in ((delta, accepting), (dead0, acc0)):
        want = mz.minimize_table(d, a, start)
        assert mz.minimize_table(np.asarray(d, dtype=np.int64), a, start) == want
        if len(d) * len(d[0]) >= 1000 and len(d[0]) <= 62 and not any(d[0]) and 0 not in a:
            assert mz._array_groups(np.asarray(d, dtype=np.int64), a) is not None


@given(general_tables(), st.integers(0, 2**32))
def test_pair_pruning_equals_table_pruning(table, seed):
    import numpy as np

    delta, accepting, start = table
    got = mz.prune_groups(delta, accepting, start)
    # arrays take the breadth-first walk over whole rows
    assert got[:3] == mz.prune_table(np.asarray(delta, dtype=np.int64), accepting, start)
    assert got[:3] == mz.prune_table(delta, accepting, start)
    by_row = [{t: sum(1 << c for c, x in enumerate(row) if x == t) for t in set(row) if t}
              for row in got[0]]
    assert [dict(g) for g in got[3]] == by_row
    # and the numbering does not depend on the input's
    pdelta, pacc, pstart = _permuted(delta, accepting, start, random.Random(seed))
    assert mz.prune_table(pdelta, pacc, pstart) == got[:3]
