"""Shared walks (:func:`kernels.relaxed_blocks`, the skeleton replay in :func:`kernels.walk_masks`)
against the naive reference walk, on DFAs built to repeat one strongly connected component with
different exits -- the shape of a schema's string properties -- and on random DFAs."""

from __future__ import annotations

from collections import deque

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from mask_helpers import ALPHABET, SimpleByteDFA, prune, random_byte_dfas, small_vocabs
from test_index_properties import check_index_against_reference

from tokenfsm.masks import TokenIndex, kernels
from tokenfsm.masks.builtin_vocab import load_vocabulary


@st.composite
def repeated_components(draw, max_body: int = 4, max_copies: int = 4) -> SimpleByteDFA:
    """A random "body" automaton (a strongly connected piece) copied several times, each copy
    entered from the start on its own byte and left on the quote class towards its own random
    tail; so the copies' states agree until they exit, and differ after."""
    c = draw(st.integers(2, 4))
    classes = np.zeros(256, dtype=np.uint8)
    classes[:] = draw(st.integers(0, c - 1))
    for b in ALPHABET:
        classes[b] = draw(st.integers(0, c - 1))
    quote = int(classes[ord('"')])
    k = draw(st.integers(1, max_body))
    body = [[draw(st.integers(0, k)) for _ in range(c)] for _ in range(k)]   # 0 dead, 1..k body
    exits = [draw(st.booleans()) for _ in range(k)]       # body states left on the quote class
    copies = draw(st.integers(2, max_copies))
    tail_len = draw(st.integers(1, 3))
    loop_back = draw(st.integers(0, 3)) == 0   # tails back to the start: one big component
    n = 2 + copies * (k + tail_len)
    table = np.zeros((n, c), dtype=np.int32)
    accepting = np.zeros(n, dtype=bool)
    start = 1
    for j in range(copies):
        base = 2 + j * (k + tail_len)
        tail = base + k
        for s in range(k):
            for a in range(c):
                t = body[s][a]
                table[base + s, a] = base + t - 1 if t else 0
            if exits[s]:
                table[base + s, quote] = tail        # the exit
        for x in range(tail_len):
            for a in range(c):
                if draw(st.booleans()):
                    table[tail + x, a] = tail + x + 1 if x + 1 < tail_len else (1 if loop_back else 0)
            accepting[tail + x] = x + 1 == tail_len or draw(st.booleans())
        table[start, draw(st.integers(0, c - 1))] = base
    accepting[start] = draw(st.booleans())
    used = sorted(set(classes.tolist()))
    remap = {a: i for i, a in enumerate(used)}
    classes = np.array([remap[a] for a in classes.tolist()], dtype=np.uint8)
    return prune(classes, table[:, used], accepting, start)


def components(table) -> list[int]:
    """Naive components: s and t together iff each reaches the other (transitions to 0 ignored)."""
    n = table.shape[0]
    reach = []
    for s in range(n):
        seen = {s}
        todo = deque([s])
        while todo:
            u = todo.popleft()
            for v in table[u].tolist():
                if v and v not in seen and u:
                    seen.add(v)
                    todo.append(v)
        reach.append(seen)
    return [min(t for t in range(n) if t in reach[s] and s in reach[t]) for s in range(n)]


@given(random_byte_dfas(max_states=9) | repeated_components())
def test_components_and_relaxed_blocks(dfa):
    table = dfa.table
    comp = kernels.scc_ids(table)
    naive = components(table)
    n = table.shape[0]
    for s in range(n):
        for t in range(n):
            assert (comp[s] == comp[t]) == (naive[s] == naive[t]), (s, t)
    block, n_blocks = kernels.relaxed_blocks(table, comp, 1024)
    assert n_blocks == len(set(block.tolist())) and block[0] == 0
    # the defining property, step by step: same block -> same kind of move on every class
    for s in range(1, n):
        for t in range(1, n):
            if block[s] != block[t]:
                continue
            for a in range(table.shape[1]):
                u, v = table[s, a], table[t, a]
                assert (u == 0) == (v == 0)
                if u:
                    leave_s, leave_t = comp[u] != comp[s], comp[v] != comp[t]
                    assert leave_s == leave_t
                    if not leave_s:
                        assert block[u] == block[v]


@given(repeated_components(), small_vocabs(), st.sampled_from(["bytes", "classes"]), st.booleans())
def test_shared_walks_are_sound_and_complete(dfa, vocab, strategy, group):
    index = TokenIndex.build(dfa, vocab, strategy=strategy, group_states=group)
    check_index_against_reference(index, dfa, vocab)
    plain = TokenIndex.build(dfa, vocab, strategy=strategy, group_states=group, share_walks=False)
    assert plain.build_info["shared_walks"] == 0
    assert np.array_equal(index.mask_rows, plain.mask_rows)
    assert np.array_equal(index.state_row, plain.state_row)
    assert index.finished_row == plain.finished_row


def test_string_properties_share_one_walk():
    """Three free string properties: their string bodies are walked in full once, not three times;
    rows agree with the unshared build on the real Qwen vocabulary."""
    from tokenfsm.schema import compile_json_schema

    schema = {"type": "object", "properties": {k: {"type": "string"} for k in ("a", "b", "c")},
              "required": ["a", "b", "c"], "additionalProperties": False}
    cs = compile_json_schema(schema, whitespace=0)
    vocab = load_vocabulary("qwen")
    shared = TokenIndex.build(cs, vocab)
    plain = TokenIndex.build(cs, vocab, share_walks=False)
    assert shared.build_info["shared_walks"] >= 1
    assert shared.build_info["visited"] < plain.build_info["visited"] / 2
    assert np.array_equal(shared.mask_rows, plain.mask_rows)
    assert np.array_equal(shared.state_row, plain.state_row)


def test_lone_states_of_a_large_cycle_walk_alone():
    """The residues of a number under multipleOf: one component of digit moves, past
    MAX_SIGNATURE_STATES, each state a group of its own. Their walks cannot be kept, so none is
    shared (a shared walk would only add its replay); rows agree with the unshared build."""
    from tokenfsm.masks.index import MAX_SIGNATURE_STATES
    from tokenfsm.schema import compile_json_schema

    schema = {"type": "number", "minimum": 1, "multipleOf": 7, "not": {"multipleOf": 11}}
    cs = compile_json_schema(schema, whitespace=0)
    dfa = cs.to_bytes()
    comp = kernels.scc_ids(dfa.table)
    assert np.bincount(comp).max() > MAX_SIGNATURE_STATES
    vocab = load_vocabulary("qwen")
    index = TokenIndex.build(dfa, vocab, group_states=False)
    plain = TokenIndex.build(dfa, vocab, group_states=False, share_walks=False)
    assert index.build_info["walks"] > 70
    assert index.build_info["shared_walks"] <= 2
    assert np.array_equal(index.mask_rows, plain.mask_rows)
    assert np.array_equal(index.state_row, plain.state_row)


@given(repeated_components() | random_byte_dfas(), small_vocabs())
def test_auto_moves_to_the_class_trie_when_walks_run_long(dfa, vocab):
    from tokenfsm.masks.trie import token_trie

    a = TokenIndex.build(dfa, vocab, strategy="bytes")
    token_trie(vocab).walk_cache.clear()   # kept walks are not walked again, so not "long"
    b = TokenIndex.build(dfa, vocab, strategy="auto", byte_walk_passes=0)
    if a.build_info["visited"] > 0:
        assert b.build_info["strategy"] == "classes"
    assert np.array_equal(a.mask_rows, b.mask_rows) and np.array_equal(a.state_row, b.state_row)
    assert a.finished_row == b.finished_row


def _renumbered(dfa, rng, extra: int):
    """``dfa`` with ``extra`` isolated accepting states put first (the others shifted, in the same
    order) and its byte classes renumbered at random; returns it and the old -> new state map."""
    n, c = dfa.table.shape
    new_of = np.concatenate([[0], np.arange(1, n) + extra]).astype(np.int32)
    cperm = rng.permutation(c).astype(np.int32)                                # old class -> new
    table = np.zeros((n + extra, c), dtype=np.int32)
    for s in range(n):
        for a in range(c):
            table[new_of[s], cperm[a]] = new_of[dfa.table[s, a]]
    accepting = np.zeros(n + extra, dtype=bool)
    accepting[new_of] = dfa.accepting
    accepting[1:extra + 1] = True
    return SimpleByteDFA(cperm[dfa.byte_classes].astype(np.uint8), table, accepting,
                         int(new_of[dfa.start])), new_of


@given(repeated_components(), small_vocabs(), st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_kept_walks_serve_a_renumbered_automaton(dfa, vocab, seed, extra):
    """The second build of the same automaton, its states and classes renumbered, takes every
    shared walk from the trie's cache, and its masks are those of the first, state for state."""
    from hypothesis import assume

    from tokenfsm.masks.trie import token_trie

    # with no text token, refinement runs no round and the extra states join the others' blocks
    assume(token_trie(vocab).max_depth > 0)
    token_trie(vocab).walk_cache.clear()
    first = TokenIndex.build(dfa, vocab, strategy="bytes")
    other, perm = _renumbered(dfa, np.random.default_rng(seed), extra)
    second = TokenIndex.build(other, vocab, strategy="bytes")
    assert second.build_info["shared_walks"] == first.build_info["shared_walks"]
    if first.build_info["shared_walks"]:
        assert second.build_info["kept_walks"] >= 1
    for s in range(dfa.num_states):
        assert np.array_equal(first.mask_row(s), second.mask_row(int(perm[s]))), s
    check_index_against_reference(second, other, vocab)


@given(random_byte_dfas(max_states=9) | repeated_components(), small_vocabs(),
       st.sampled_from(["bytes", "classes"]), st.integers(1, 3))
def test_split_regions_and_kept_walks_are_sound_and_complete(dfa, vocab, strategy, max_sig):
    """Components over MAX_SIGNATURE_STATES are split into regions (forced here on small DFAs);
    builds that reuse kept walks of earlier examples still match the reference walk."""
    index = TokenIndex.build(dfa, vocab, strategy=strategy, max_signature_states=max_sig)
    again = TokenIndex.build(dfa, vocab, strategy=strategy, max_signature_states=max_sig)
    check_index_against_reference(index, dfa, vocab)
    plain = TokenIndex.build(dfa, vocab, strategy=strategy, share_walks=False)
    for built in (index, again):
        assert np.array_equal(built.mask_rows, plain.mask_rows)
        assert np.array_equal(built.state_row, plain.state_row)
        assert built.finished_row == plain.finished_row


def test_string_bodies_are_walked_once_per_vocabulary():
    """On Qwen: the string body of one schema is kept and serves another schema, also where the
    strings lie on a cycle (an array of objects); masks agree with unshared builds."""
    from tokenfsm.masks.trie import token_trie
    from tokenfsm.schema import compile_json_schema

    vocab = load_vocabulary("qwen")
    token_trie(vocab).walk_cache.clear()
    one = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
           "additionalProperties": False}
    many = {"type": "array", "items": {
        "type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "number"},
                                         "z": {"type": "string"}},
        "required": ["x", "y", "z"], "additionalProperties": False}}
    first = TokenIndex.build(compile_json_schema(one, whitespace=0), vocab)
    assert first.build_info["kept_walks"] == 0
    assert first.build_info["visited"] > token_trie(vocab).num_nodes / 2   # the body, walked
    cs = compile_json_schema(many, whitespace=0)
    second = TokenIndex.build(cs, vocab)
    assert second.build_info["kept_walks"] >= 1
    assert second.build_info["visited"] < token_trie(vocab).num_nodes / 4  # the body, kept
    plain = TokenIndex.build(cs, vocab, share_walks=False)
    assert np.array_equal(second.mask_rows, plain.mask_rows)
    assert np.array_equal(second.state_row, plain.state_row)


def naive_moore(table, comp, rounds, relaxed):
    """Moore's refinement as written in textbooks, round by round over whole label vectors."""
    n, c = table.shape
    block = [0] + [1] * (n - 1)
    for _ in range(rounds):
        def label(s, k):
            t = int(table[s, k])
            if relaxed and t == 0:
                return -1
            if relaxed and comp[t] != comp[s]:
                return -2
            return block[t]
        sig = [(block[s],) + tuple(label(s, k) for k in range(c)) for s in range(n)]
        ids: dict = {}
        new = [ids.setdefault(sig[s], len(ids)) for s in range(n)]
        stable = len(ids) == len(set(block))
        block = new
        if stable:
            return block, True
    return block, False


def same_partition(a, b) -> bool:
    return all((a[s] == a[t]) == (b[s] == b[t]) for s in range(len(a)) for t in range(len(a)))


@given(random_byte_dfas(max_states=12) | repeated_components(), st.integers(0, 6))
def test_refinement_is_moores_round_by_round(dfa, rounds):
    """The refinement kernel (which re-examines only the states a round can split) gives exactly
    Moore's partition after each number of rounds, plain and relaxed."""
    table = dfa.table
    block, n_blocks = kernels.refine_states(table, rounds)
    ref, _ = naive_moore(table, None, rounds, False)
    assert same_partition(block.tolist(), ref) and n_blocks == len(set(ref))
    firsts = [block.tolist().index(b) for b in range(n_blocks)]
    assert firsts == sorted(firsts)   # numbered by first state
    comp = kernels.scc_ids(table)
    for max_rounds in (rounds, 1024):
        got, n_got = kernels.relaxed_blocks(table, comp, max_rounds)
        ref, stable = naive_moore(table, comp.tolist(), max_rounds, True)
        if stable:
            assert same_partition(got.tolist(), ref) and n_got == len(set(ref))
        else:
            assert got.tolist() == list(range(table.shape[0]))


@given(repeated_components(), small_vocabs(), st.data())
def test_a_region_spelled_with_more_states_takes_the_kept_walk(dfa, vocab, data):
    """A copy of a body state (same moves), entered on some of the body's moves, leaves the
    region's walk as it was: the second automaton gets the first's signature and kept walk,
    and its masks match the reference walk."""
    from hypothesis import assume

    from tokenfsm.masks.index import _regions
    from tokenfsm.masks.trie import token_trie

    assume(token_trie(vocab).max_depth > 0)
    comp = _regions(dfa)
    n, c = dfa.table.shape
    body = [s for s in range(1, n) if any(dfa.table[s, a] and comp[dfa.table[s, a]] == comp[s]
                                          for a in range(c))]
    assume(body)
    s = data.draw(st.sampled_from(body))
    table = np.vstack([dfa.table, dfa.table[s:s + 1]])          # state n: a copy of s
    into = [(u, a) for u in range(1, n) for a in range(c)
            if dfa.table[u, a] == s and comp[u] == comp[s]]      # (s lies on a cycle)
    moved = data.draw(st.lists(st.sampled_from(into), min_size=1, unique=True))
    assume(len(moved) < len(into))                     # s stays on its cycle, n joins it
    for u, a in moved:
        table[u, a] = n
    spelled = SimpleByteDFA(dfa.byte_classes, table, np.append(dfa.accepting, dfa.accepting[s]),
                            dfa.start)
    # (a move on a byte that cuts regions does not make n part of s's region)
    comp2 = _regions(spelled)
    assume(set(np.flatnonzero(comp2 == comp2[s])) == set(np.flatnonzero(comp == comp[s])) | {n})

    def signature(d, q):
        cmp = _regions(d)
        one = np.array([q], dtype=np.int32)
        return kernels.component_signatures(np.ascontiguousarray(d.table, dtype=np.int32),
                                            np.ascontiguousarray(d.byte_classes), cmp, one,
                                            np.array([0, 1], dtype=np.int32), 64)[2].tolist()

    assert signature(spelled, n) == signature(spelled, s) == signature(dfa, s)
    index = TokenIndex.build(spelled, vocab, strategy="bytes")
    check_index_against_reference(index, spelled, vocab)
    assert np.array_equal(index.mask_row(n), index.mask_row(s))


def _naive_region_blocks(table, comp, cr, members):
    """The coarsest partition of ``members`` whose blocks agree per class on the move (dead,
    out of component ``cr``, or into one block): Moore's rounds over tuples, as a set of
    frozensets."""
    def label(t, blk):
        return -1 if t == 0 else (-2 if comp[t] != cr else blk[t])
    blk = {s: 0 for s in members}
    while True:
        keys = {s: (blk[s],) + tuple(label(t, blk) for t in table[s]) for s in members}
        number = {k: i for i, k in enumerate(dict.fromkeys(keys.values()))}
        new = {s: number[keys[s]] for s in members}
        if len(number) == len(set(blk.values())):
            break
        blk = new
    groups = {}
    for s in members:
        groups.setdefault(blk[s], set()).add(s)
    return {frozenset(g) for g in groups.values()}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_region_blocks_are_the_coarsest_partition(data):
    """The hashed rounds of :func:`kernels._region_blocks` give the partition of the naive
    rounds, on random components (states 1..m of one component, others outside)."""
    m = data.draw(st.integers(1, 40))
    c = data.draw(st.integers(1, 5))
    outside = data.draw(st.integers(0, 3))
    n = 1 + m + outside
    table = np.array([[0] * c] + [[data.draw(st.integers(0, n - 1)) for _ in range(c)]
                                  for _ in range(n - 1)], dtype=np.int32)
    comp = np.array([0] + [1] * m + [2 + i for i in range(outside)], dtype=np.int64)
    members = list(range(1, m + 1))
    queue = np.array(data.draw(st.permutations(members)) + [0] * (n - m), dtype=np.int32)
    canon = np.full(n, -1, dtype=np.int32)
    canon[queue[:m]] = np.arange(m, dtype=np.int32)
    blk = kernels._region_blocks(table, comp, 1, canon, queue, m, c)
    got = {}
    for x in range(m):
        got.setdefault(int(blk[x]), set()).add(int(queue[x]))
    assert {frozenset(g) for g in got.values()} == _naive_region_blocks(table, comp, 1, members)


def _random_table(data, max_states: int) -> np.ndarray:
    """A random byte table of 2..``max_states`` states and 1..4 classes (state 0 dead)."""
    n = data.draw(st.integers(2, max_states))
    c = data.draw(st.integers(1, 4))
    return np.array([[0] * c] + [[data.draw(st.integers(0, n - 1)) for _ in range(c)]
                                 for _ in range(n - 1)], dtype=np.int32)


def _naive_simulated_pairs(table, comp, quiet, g, q):
    """Whether ``g`` simulates ``q`` (see :func:`tokenfsm.masks.row_ways.twin_of`) and the
    pairs met: the definition, one pair and one class at a time."""
    n = table.shape[0]
    seen, todo = {(q, g)}, [(q, g)]
    while todo:
        a, b = todo.pop()
        for ta, tb in zip(table[a].tolist(), table[b].tolist()):
            if tb == 0 and ta != 0:
                return False, set()
            if tb != 0 and comp[tb] == comp[g]:
                if not quiet[ta]:
                    return False, set()
                if (ta, tb) not in seen:
                    seen.add((ta, tb))
                    todo.append((ta, tb))
    return True, {a * n + b for a, b in seen}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_simulated_pairs_follow_the_definition(data):
    table = _random_table(data, 12)
    n = table.shape[0]
    comp = np.array([0] + [data.draw(st.integers(1, 3)) for _ in range(n - 1)], dtype=np.int64)
    quiet = np.array([False] + [data.draw(st.booleans()) for _ in range(n - 1)])
    g, q = data.draw(st.integers(1, n - 1)), data.draw(st.integers(1, n - 1))
    ok, pairs = kernels.simulated_pairs(table, comp, quiet, g, q)
    want_ok, want = _naive_simulated_pairs(table, comp, quiet, g, q)
    assert bool(ok) == want_ok
    if ok:
        assert set(pairs.tolist()) == want



def _naive_nearest_body(table, quiet, shared, q, max_states):
    """The first state met breadth first from ``q`` over quiet states that lies in a shared
    region and moves to itself (see :func:`tokenfsm.masks.row_ways.twin_of`): the definition,
    a level at a time as sets."""
    seen, level = {q}, [q]
    while level and len(seen) < max_states:
        for s in level:
            if shared[s] and s in table[s].tolist():
                return s
        level = sorted({t for s in level for t in table[s].tolist() if quiet[t]} - seen)
        seen.update(level)
    return -1


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_nearest_body_follows_the_definition(data):
    table = _random_table(data, 12)
    n = table.shape[0]
    quiet = np.array([False] + [data.draw(st.booleans()) for _ in range(n - 1)])
    shared = np.array([False] + [data.draw(st.booleans()) for _ in range(n - 1)])
    q = data.draw(st.integers(1, n - 1))
    max_states = data.draw(st.integers(1, n + 1))
    assert kernels.nearest_body(table, quiet, shared, q, max_states) == \
        _naive_nearest_body(table, quiet, shared, q, max_states)

def _naive_inside_names(table, comp, names):
    """The states inside names (see :func:`kernels.inside_names`): a set walk per state."""
    n = table.shape[0]
    size = np.bincount(comp)
    succ = {s: {int(t) for t in table[s] if t and names[t]} for s in range(n) if names[s]}
    on_cycle = {s for s, ts in succ.items()
                if any(t == s or (size[comp[s]] > 1 and comp[s] == comp[t]) for t in ts)}
    return {s for s in succ if _reached(s, succ.__getitem__) & on_cycle}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_inside_names_follow_the_definition(data):
    from tokenfsm.masks.index import _regions

    table = _random_table(data, 14)
    n, c = table.shape
    dfa = SimpleByteDFA(np.zeros(256, dtype=np.uint8) + np.uint8(
        data.draw(st.integers(0, c - 1))), table, np.zeros(n, dtype=bool), 1)
    comp = _regions(dfa)
    names = np.array([False] + [data.draw(st.booleans()) for _ in range(n - 1)])
    got = kernels.inside_names(table, comp, names, np.bincount(comp))
    assert set(np.flatnonzero(got).tolist()) == _naive_inside_names(table, comp, names)


def _reached(s, successors) -> set:
    """The states ``s`` reaches (itself included), ``successors(u)`` those ``u`` moves to."""
    seen, todo = {s}, [s]
    while todo:
        for t in set(successors(todo.pop())) - seen:
            seen.add(t)
            todo.append(t)
    return seen


def _reach(table, cut, s):
    """The states ``s`` reaches (itself included) over the moves of classes not cut."""
    return _reached(s, lambda u: [t for k, t in enumerate(table[u].tolist())
                                  if t and not cut[k]])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_cut_components_are_the_components_numbered_after_what_they_reach(data):
    """Two live states share a component iff each reaches the other over the moves left; a
    state's component is numbered after those of the states it reaches; the dead state is
    component 0 alone; ``loops`` are the states that move to themselves on some class."""
    table = _random_table(data, 14)
    n, c = table.shape
    cut = np.array([data.draw(st.booleans()) for _ in range(c)])
    comp, loops = kernels.cut_components(table, cut)
    reach = [_reach(table, cut, s) for s in range(n)]
    assert comp[0] == 0 and (comp[1:] > 0).all()
    for u in range(1, n):
        for v in range(1, n):
            assert (comp[u] == comp[v]) == (v in reach[u] and u in reach[v])
            if v in reach[u] and comp[u] != comp[v]:
                assert comp[u] > comp[v]
    assert loops.tolist() == [bool((table[s] == s).any()) for s in range(n)]
    if not cut.any():
        assert kernels.scc_ids(table).tolist() == comp.tolist()


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_tick_targets_are_the_states_a_ticking_move_enters(data):
    from tokenfsm.masks.frame_kernels import tick_targets

    table = _random_table(data, 14)
    ticks = np.array([[data.draw(st.booleans()) for _ in row] for row in table])
    lazy = (table | np.where(ticks & (table != 0), 1 << 30, 0)).astype(np.int32)
    want = {int(t) for t, k in zip(table.ravel(), ticks.ravel()) if k and t}
    assert set(np.flatnonzero(tick_targets(lazy)).tolist()) == want
