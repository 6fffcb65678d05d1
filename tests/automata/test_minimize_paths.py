"""The ways ``minimize_table`` can take agree exactly.

Large tables are refined with array operations (Moore's rounds over hashed rows, checked for
stability at the end); small ones, and long chains past the round limit, with Hopcroft's
algorithm. Tables past ``ARRAY_MIN_CELLS`` are pruned and renumbered with array operations, and
Hopcroft's algorithm skips the transitions into the dead state (a partial automaton). Every way
declared in ``minimize.MINIMIZERS`` must give the reference's canonical result on the same random
tables, and the result must be the Myhill-Nerode quotient (checked against Brzozowski's
construction).
"""

import random
from collections import deque
from functools import partial

import numpy as np
import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata import DFA, minimize as mz
from tokenfsm.automata.charset import CharSet

from oracles import brzozowski, raw_tables
from ways import minimized_every_way


def _moore(rounds=None, weights=None):
    """Moore's refinement (finished by Hopcroft's) cut to ``rounds`` rounds or hashing with
    ``weights``."""
    return partial(mz._refine_moore, max_rounds=rounds, weights=weights)


def _reference(delta, accepting, start):
    return mz.MINIMIZERS[mz.MINIMIZER_REFERENCE](delta, accepting, start)


@st.composite
def big_random_tables(draw):
    """Random complete tables with many redundant states (copies of a small core)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    core = rng.randint(2, 12)
    k = rng.randint(1, 5)
    copies = rng.randint(1, 6)
    n = 1 + core * copies
    acc_core = {q for q in range(core) if rng.random() < 0.4}
    core_delta = [[rng.randrange(core + 1) for _ in range(k)] for _ in range(core)]   # core: dead
    delta = [[0] * k]
    for s in range(1, n):
        q = (s - 1) % core
        row = []
        for t in core_delta[q]:
            row.append(0 if t == core else 1 + t + core * rng.randrange(copies))
        delta.append(row)
    accepting = {s for s in range(1, n) if (s - 1) % core in acc_core}
    return delta, accepting, 1 + rng.randrange(n - 1)


@given(big_random_tables())
def test_every_way_equals_the_reference(table):
    delta, accepting, start = table
    hop = minimized_every_way(delta, accepting, start)
    assert mz.minimize_table(delta, accepting, start) == hop
    # Moore's rounds cut short: Hopcroft finishes the job, on lists and on arrays
    assert mz._minimize_local(delta, accepting, start, _moore(rounds=1)) == hop
    assert mz._minimize_arrays(delta, accepting, start, _moore(rounds=1)) == hop


@given(raw_tables(max_states=8, max_classes=3))
def test_every_way_is_the_myhill_nerode_quotient(table):
    classes, delta, accepting, start = table
    got = minimized_every_way(delta, accepting, start)
    want_delta, _, want_start = brzozowski(classes, delta, accepting, start)
    assert len(got[0]) == len(want_delta)
    assert (got[2] == 0) == (want_start == 0)


def test_long_chain_past_the_round_limit():
    # [\s\S]{0,n} is a chain: distinguishing its states takes one round per link
    d = DFA.from_charset(CharSet.any()).repeat(0, 300)
    delta, accepting, start = [list(r) for r in d.delta], set(d.accepting), d.start
    # a second copy of the chain behind the start state: the language becomes [\s\S]{0,301},
    # and the two copies must merge into one chain
    n = len(delta)
    doubled = delta + [[t + n - 1 if t else 0 for t in row] for row in delta[1:]]
    doubled[start] = [n - 1 + start]
    acc2 = accepting | {a + n - 1 for a in accepting}
    want = minimized_every_way(doubled, acc2, start)
    assert mz._minimize_local(doubled, acc2, start, _moore(rounds=50)) == want
    assert len(want[0]) == n + 1 == len(DFA.from_charset(CharSet.any()).repeat(0, 301).delta)


@pytest.mark.parametrize("seed", range(3))
def test_hash_collisions_are_caught(seed):
    # with a degenerate hash every row collides; the stability check must notice and fall back
    rng = random.Random(seed)
    k, n = 3, 40
    delta = [[0] * k] + [[rng.randrange(n) for _ in range(k)] for _ in range(n - 1)]
    accepting = {s for s in range(1, n) if rng.random() < 0.5}
    want = _reference(delta, accepting, 1)
    zero = np.zeros(k + 1, dtype=np.int64)
    assert mz._minimize_local(delta, accepting, 1, _moore(weights=zero)) == want
    assert mz._minimize_arrays(delta, accepting, 1, _moore(weights=zero)) == want
    # (the collisions happen: every state hashes alike, so Moore's rounds leave the partition by
    # acceptance, which the check finds unstable)
    assert mz.moore_blocks(delta, sorted(accepting), weights=zero) == \
        ([int(s in accepting) for s in range(n)], False)


def _same_partition(a, b) -> bool:
    pairs = set(zip(a, b))
    return len(pairs) == len(set(a)) == len(set(b))


@pytest.mark.parametrize("k", [3, 40, 70])     # 70: past the 62 symbols of the bit-mask arrays
@pytest.mark.parametrize("seed", range(4))
def test_partial_refinement_equals_complete(k, seed):
    # tables where every state but the last (dead) one reaches acceptance, as minimize_table
    # passes them; most transitions go to the dead state, some states copy others
    rng = random.Random(seed)
    n = 150
    core = [[rng.randrange(n) if rng.random() < 0.3 else n for _ in range(k)] for _ in range(n // 2)]
    tab = [list(core[s % len(core)]) for s in range(n)]
    for s in range(n - 1):
        tab[s][rng.randrange(k)] = s + 1          # a chain, so every state reaches the last live
    tab.append([n] * k)
    acc = [s for s in range(n) if s % len(core) in (len(core) - 1, 7)] + [n - 1]
    acc = sorted(set(acc))
    complete = mz.hopcroft_blocks(tab, acc)
    partial = mz.hopcroft_blocks(tab, acc, dead=n)
    assert _same_partition(complete, partial)
    # and with a coarse initial partition (what Moore's rounds hand over)
    initial = [1 if s in set(acc) else 0 for s in range(n + 1)]
    assert _same_partition(mz.hopcroft_blocks(tab, acc, initial, dead=n), complete)
    # the result is a congruence that separates acceptance
    for s in range(n + 1):
        for t in range(n + 1):
            if complete[s] == complete[t]:
                assert (s in acc) == (t in acc)
                assert [complete[x] for x in tab[s]] == [complete[x] for x in tab[t]]


# ---------------------------------------------------------------- finite futures (Revuz)

def _finite(delta, accepting, start):
    """The finite-future way, taken whenever state 0 is dead (whether it pays or not)."""
    return mz.MINIMIZERS["finite"](delta, accepting, start)


@st.composite
def forward_tables(draw):
    """Random tables whose transitions mostly go forward (finite futures, with copies of the
    same suffix so that states merge), with a few back edges and self-loops (cycles), states
    numbered at random so that the topological order is not the numbering."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    n = rng.randint(2, 60)
    k = rng.randint(1, 6)
    back = rng.choice([0.0, 0.0, 0.02, 0.1, 0.3])
    dens = rng.random()
    delta = [[0] * k for _ in range(n)]
    for s in range(1, n):
        for a in range(k):
            if rng.random() < dens:
                if rng.random() < back or s == n - 1:
                    delta[s][a] = rng.randrange(1, n)
                else:
                    # forward, often to one of a few targets (so suffixes repeat)
                    delta[s][a] = rng.choice([rng.randrange(s + 1, n), min(n - 1, s + 1)])
    accepting = {s for s in range(1, n) if rng.random() < 0.3}
    perm = [0] + rng.sample(range(1, n), n - 1)
    shuffled = [None] * n
    for s in range(n):
        shuffled[perm[s]] = [perm[t] for t in delta[s]]
    return shuffled, {perm[a] for a in accepting}, perm[rng.randrange(1, n)]


@given(forward_tables())
def test_finite_path_equals_hopcroft(table):
    delta, accepting, start = table
    want = minimized_every_way(delta, accepting, start)
    got = _finite(delta, accepting, start)
    assert got is not None          # no rule: every table with a dead state 0 qualifies
    assert got == want


@given(big_random_tables())
def test_finite_path_equals_hopcroft_on_copies(table):
    delta, accepting, start = table
    assert _finite(delta, accepting, start) == minimized_every_way(delta, accepting, start)


@given(raw_tables(max_states=8, max_classes=3))
def test_finite_path_is_the_myhill_nerode_quotient(table):
    classes, delta, accepting, start = table
    got = _finite(delta, accepting, start)
    if got is None:                 # state 0 is not a dead state here: the path does not apply
        assert any(delta[0]) or 0 in accepting
        return
    want_delta, _, want_start = brzozowski(classes, delta, accepting, start)
    assert len(got[0]) == len(want_delta)
    assert (got[2] == 0) == (want_start == 0)


def test_finite_path_on_a_long_object_like_chain():
    # many fixed keys in a fixed order, the first few with a looping value: a chain of
    # thousands of links whose tail has a finite future; the default dispatch takes the finite
    # path (the states before the last loop are refined by Hopcroft)
    n_keys = 400
    d = DFA.concat_all([DFA.from_regex(f'"k{i}":(null|"[a-z]*"),') if i < 40 and i % 7 == 0
                        else DFA.literal(f'"k{i}":null,') for i in range(n_keys)])
    delta, accepting, start = [list(r) for r in d.delta], set(d.accepting), d.start
    # a second copy behind the start state, as in the long chain test: the copies must merge
    n = len(delta)
    doubled = delta + [[t + n - 1 if t else 0 for t in row] for row in delta[1:]]
    doubled[start] = [n - 1 + t if t else 0 for t in delta[start]]
    acc2 = accepting | {a + n - 1 for a in accepting}
    assert mz._minimize_finite(doubled, acc2, start, mz._finite_pays) is not None
    want = minimized_every_way(doubled, acc2, start)
    assert mz.minimize_table(doubled, acc2, start) == want
    assert len(want[0]) == n


def test_moore_hands_a_stalled_chain_to_hopcroft():
    # a chain with loops hanging off it (not a finite future): Moore splits a block or two per
    # round; after MOORE_STALL_ROUNDS such rounds it stops and Hopcroft finishes, same result
    d = DFA.concat_all([DFA.from_regex(f'"k{i}":(null|"[a-z]*"),') for i in range(150)])
    delta, accepting, start = [list(r) for r in d.delta], set(d.accepting), d.start
    rounds = []

    def refine(tab, acc_local, dead, check=None):
        rounds.append(mz.moore_blocks(tab, acc_local)[1])     # what the Moore way starts from
        return mz._refine_moore(tab, acc_local, dead, check)

    want = minimized_every_way(delta, accepting, start)
    assert mz._minimize_arrays(delta, accepting, start, refine) == want
    assert rounds == [False]        # stopped before stability: Hopcroft did the rest
    assert len(want[0]) == len(delta)


# ---------------------------------------------------------------- sparse tables (chains)

def _bfs_canonical(delta, accepting, start):
    """A minimal table renumbered breadth-first from the start, symbols in order, dead state 0
    (written independently of the module: the form ``minimize_table`` promises)."""
    if start == 0:
        return [[0] * len(delta[0])], set(), 0
    num = {start: 1}
    order = [start]
    for s in order:
        for t in delta[s]:
            if t and t not in num:
                num[t] = len(order) + 1
                order.append(t)
    rows = [[0] * len(delta[0])] + [[num.get(t, 0) for t in delta[s]] for s in order]
    return rows, {num[a] for a in accepting if a in num}, 1


def _oracle(delta, accepting, start):
    k = len(delta[0])
    return _bfs_canonical(*brzozowski([None] * k, delta, accepting, start))


@st.composite
def chain_tables(draw):
    """Tables shaped like a schema object's: a chain of links on one symbol each, some links with
    a looping piece (a state looping on several symbols), optional links (a skip edge), back
    edges, reachable states that cannot reach acceptance (with loops of their own), and a copy
    of the whole chain entered halfway (so that states merge across the copies); up to 130
    symbols (past the 62 of one bit-set word), states numbered at random."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    k = rng.choice([1, 2, 5, 62, 63, 70, 101, 130])
    links = rng.randint(1, 150)
    delta = [[0] * k]

    def new():
        delta.append([0] * k)
        return len(delta) - 1

    chain = [new()]
    skips = []
    for _ in range(links):
        s = chain[-1]
        t = new()
        delta[s][rng.randrange(k)] = t
        r = rng.random()
        if r < 0.3:                                   # a looping value
            for a in rng.sample(range(k), rng.randint(1, min(k, 8))):
                delta[t][a] = t
        elif r < 0.4 and len(chain) > 1:              # a back edge
            delta[t][rng.randrange(k)] = rng.choice(chain)
        elif r < 0.5:                                 # an optional link
            skips.append(s)
        elif r < 0.6:                                 # a dead end that loops
            x = new()
            delta[s][rng.randrange(k)] = x
            delta[x][rng.randrange(k)] = x
        chain.append(t)
    for s in skips:
        later = [t for t in chain if t > s + 1]
        if later:
            delta[s][rng.randrange(k)] = rng.choice(later)
    accepting = {chain[-1]} | {s for s in chain if rng.random() < 0.05}
    if rng.random() < 0.6:                            # a copy, entered halfway
        n = len(delta)
        delta += [[t + n - 1 if t else 0 for t in row] for row in delta[1:]]
        accepting |= {a + n - 1 for a in accepting}
        p = rng.randrange(len(chain) - 1)
        delta[chain[p]][rng.randrange(k)] = chain[p + 1] + n - 1
    n = len(delta)
    perm = [0] + rng.sample(range(1, n), n - 1)
    shuffled = [None] * n
    for s in range(n):
        shuffled[perm[s]] = [perm[t] for t in delta[s]]
    return shuffled, {perm[a] for a in accepting}, perm[chain[0]]


@given(chain_tables())
def test_sparse_path_on_chains_is_the_canonical_quotient(table):
    delta, accepting, start = table
    want = _oracle(delta, accepting, start)
    assert _finite(delta, accepting, start) == want
    assert _finite(np.asarray(delta, dtype=np.int64), accepting, start) == want
    # the default choice between the ways for large tables, taken on these small ones
    assert mz._minimize_large(delta, accepting, start) == want
    assert minimized_every_way(delta, accepting, start) == want
    assert mz.minimize_table(delta, accepting, start) == want              # the default way


@pytest.mark.parametrize("k", [1, 5, 62, 63, 124, 125, 200])
def test_pair_masks_against_a_dict(k):
    rng = random.Random(k)
    n = 30
    cells = {(rng.randrange(n), rng.randrange(k)): rng.randrange(n) for _ in range(400)}
    src = np.array([s for s, _ in cells], dtype=np.int64)
    sym = np.array([a for _, a in cells], dtype=np.int64)
    dst = np.array(list(cells.values()), dtype=np.int64)
    want: dict = {}
    for (s, a), t in cells.items():
        want[s, t] = want.get((s, t), 0) | (1 << a)
    got_s, got_t, got_m = mz._pair_masks(src, dst, sym, n, k)
    assert list(zip(got_s, got_t)) == sorted(want)
    assert dict(zip(zip(got_s, got_t), got_m)) == want
    assert all(type(m) is int for m in got_m)
    assert mz._pair_masks(src[:0], dst[:0], sym[:0], n, k) == ([], [], [])


def test_sparse_tables_take_the_sparse_path():
    # a chain of keys with looping values: few states have a finite future (everything before
    # the last loop reaches it), but each state has few transitions, so the sparse path runs;
    # a dense table of loops goes to the array path
    d = DFA.concat_all([DFA.from_regex(f'"k{i}":(null|"[a-z]*"),') for i in range(300)])
    delta, accepting, start = [list(r) for r in d.delta], set(d.accepting), d.start
    assert len(delta) * len(delta[0]) >= mz.ARRAY_MIN_CELLS
    facts = []

    def pays(*got):
        facts.append(got)
        return mz._finite_pays(*got)

    assert mz._minimize_finite(delta, accepting, start, pays) is not None
    (peeled, live, transitions, depth), = facts
    assert peeled < mz.FINITE_MIN_SHARE * live                          # not by finite share
    assert depth > mz.SHALLOW_MAX_DEPTH                                 # deep: not by Moore
    assert transitions <= mz.SPARSE_MAX_TRANSITIONS * live              # by structure alone
    assert mz.minimize_table(delta, accepting, start) == _reference(delta, accepting, start)
    rng = random.Random(1)
    k = 40
    dense = [[0] * k] + [[rng.randrange(1, 1000) for _ in range(k)] for _ in range(999)]
    assert mz._minimize_finite(dense, {5, 7}, 1, mz._finite_pays) is None
    assert mz._minimize_finite(dense, {5, 7}, 1) is not None           # (no rule: it applies)


@pytest.mark.parametrize("k", [3, 62, 63, 101, 130])
@pytest.mark.parametrize("dead", ["last", None])
@pytest.mark.parametrize("as_array", [False, True])
def test_inverse_masks_against_a_walk_of_the_cells(k, dead, as_array):
    # past 62 symbols the bit sets are joined from 62-bit words; below 4096 cells of lists (or
    # ARRAY_INVERSE_MIN_CELLS of an array) a Python walk
    import numpy as np
    rng = random.Random(k)
    for n in (200, 10):
        d = n - 1 if dead == "last" else None
        tab = [[rng.randrange(n) if rng.random() < 0.2 else n - 1 for _ in range(k)]
               for _ in range(n)]
        if d is not None:
            tab[d] = [d] * k                          # a dead state moves only to itself
        want: list = [{} for _ in range(n)]
        for s in range(n):
            for a, t in enumerate(tab[s]):
                if s != d and t != d:
                    want[t][s] = want[t].get(s, 0) | (1 << a)
        got = mz._inverse_masks(np.array(tab) if as_array else tab, d)
        assert [dict(pairs) for pairs in got] == want
        assert all(len(dict(pairs)) == len(pairs) for pairs in got)    # one entry per pair


@pytest.mark.parametrize("seed", range(4))
def test_array_searches_against_plain_walks(seed):
    # a chain (narrow levels, walked in Python) that opens into a wide random part (levels as
    # arrays) and narrows again: the breadth-first order by symbol and the co-reachable states
    # must be those of plain walks
    import numpy as np

    rng = random.Random(seed)
    n, k = 600, rng.choice([3, 20, 70])
    tab = [[0] * k for _ in range(n)]
    for s in range(200):
        a, b, c = rng.sample(range(k), 3)
        tab[s][a] = s + 1
        tab[s][b] = rng.randrange(s + 1)
        if rng.random() < 0.3:
            tab[s][c] = s + 2                     # two new states from one: their order counts
    for s in range(200, 400):
        tab[s] = [rng.randrange(200, 400) if rng.random() < 0.5 else rng.randrange(n)
                  for _ in range(k)]
    for s in range(400, n - 1):
        tab[s][rng.randrange(k)] = s + 1
    skip = rng.choice([None, 0, 250])
    want, seen = [], {1} if skip is None else {1, skip}
    queue = deque([1])
    while queue:
        s = queue.popleft()
        want.append(s)
        for t in tab[s]:
            if t not in seen:
                seen.add(t)
                queue.append(t)
    T = np.asarray(tab, dtype=np.int64)
    order, number = mz._bfs_levels(T, 1, n, skip=skip)
    assert order.tolist() == want
    assert [number[s] for s in want] == list(range(len(want)))
    acc = {rng.randrange(n) for _ in range(3)} | {n - 1}
    acc_mask = np.zeros(n, dtype=bool)
    acc_mask[list(acc)] = True
    live = mz._coreachable_mask(T, order, acc_mask)
    assert set(np.flatnonzero(live).tolist()) == mz.coreachable(tab, acc, want)


def test_shallow_tables_of_cycles_are_refined_by_moore():
    # the digits of multiples of 7 or of 11 (a product of residue automata): every state accepts
    # within a few digits, none has a finite future; the rule sends it to Moore's rounds over
    # arrays, whose result is the reference's
    from tokenfsm.schema.numbers import multiple_of

    d = multiple_of(7) | multiple_of(11) | multiple_of(13)
    d = d.intersect(multiple_of(3) | multiple_of(5))
    delta, accepting, start = [list(r) for r in d.delta], set(d.accepting), d.start
    facts = []

    def pays(*got):
        facts.append(got)
        return mz._finite_pays(*got)

    assert mz._minimize_finite(delta, accepting, start, pays) is None
    (peeled, live, transitions, depth), = facts
    assert peeled < mz.FINITE_MIN_SHARE * live and depth <= mz.SHALLOW_MAX_DEPTH
    assert mz.minimize_table(delta, accepting, start) == _reference(delta, accepting, start)
