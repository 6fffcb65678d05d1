"""Shared walks (:func:`kernels.relaxed_blocks`, the skeleton replay in :func:`kernels.walk_masks`)
against the naive reference walk, on DFAs built to repeat one strongly connected component with
different exits -- the shape of a schema's string properties -- and on random DFAs."""

from __future__ import annotations

from collections import deque

import numpy as np
from hypothesis import given
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


@given(repeated_components() | random_byte_dfas(), small_vocabs())
def test_auto_moves_to_the_class_trie_when_walks_run_long(dfa, vocab):
    from tokenfsm.masks import index as index_module

    a = TokenIndex.build(dfa, vocab, strategy="bytes")
    saved = index_module.AUTO_BYTE_WALK_PASSES
    index_module.AUTO_BYTE_WALK_PASSES = 0
    try:
        b = TokenIndex.build(dfa, vocab, strategy="auto")
    finally:
        index_module.AUTO_BYTE_WALK_PASSES = saved
    if a.build_info["visited"] > 0:
        assert b.build_info["strategy"] == "classes"
    assert np.array_equal(a.mask_rows, b.mask_rows) and np.array_equal(a.state_row, b.state_row)
    assert a.finished_row == b.finished_row
