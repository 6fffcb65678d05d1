"""Numba kernels: the only module in tokenfsm that imports numba.

Every kernel takes plain NumPy arrays and scalars and returns plain arrays, is compiled with
``@njit(cache=True)`` and stays ordinary Python, so the whole test-suite also runs with
``NUMBA_DISABLE_JIT=1``. Validation and object handling live in the calling modules
(:mod:`.trie`, :mod:`.index`, :mod:`.matcher`); kernels trust their inputs.

Compilation is paid on first use (tens of seconds with an empty cache, here and in
:mod:`.pd_kernels` and :mod:`.frame_kernels`: ``benchmarks/bench_masks.py --compile``), so each
kernel keeps to one signature. A count handed to another kernel starts as ``np.int64(...)``, not
as a literal: Numba types such a call first with the literal and compiles the callee once more
for it. Arrays are copied by :func:`_copy_into`, not by slice assignment, whose error path for
mismatched shapes is string formatting, about 1.3 s to compile per number of dimensions, and
sorted by :func:`_stable_order`, not by NumPy's sorts, each about a second per kind and type.

The kernels:

* :func:`build_trie` lays a sorted list of byte strings out as a DFS-flattened trie (per node: the
  byte on its incoming edge, its depth and the end of its subtree).
* :func:`build_class_trie` merges that trie over a DFA's byte classes: tokens that the DFA cannot
  tell apart share one path, and every DFA state walks the smaller trie.
* :func:`refine_states` groups the DFA's states that no string as long as the longest token tells
  apart (Moore's refinement, cut at that length): such states allow the same tokens.
* :func:`scc_ids` and :func:`relaxed_blocks` find the states whose walks agree until they leave
  their strongly connected component (the string bodies of a schema's string properties).
* :func:`simulated_pairs` decides whether a state of a shared region simulates another state,
  which may then take that one's walk (:func:`.row_ways.twin_of`), among the candidates near it
  :func:`nearest_body` finds; :func:`inside_names` finds the states inside a key set's names
  (:func:`.row_ways.key_name_regions`).
* :func:`block_units` picks the state each group of states is walked from (one on a cycle where
  there is one), :func:`walk_groups` lists those by relaxed group; :func:`component_signatures`
  decides which groups walk their region once and gives the region a canonical form (the key of
  a walk kept for later builds); :func:`component_walk` is that walk.
* :func:`two_byte_ways` counts the strings of two bytes each state moves on: the states of a
  bounded free text, whose walks are long, move on the most.
* :func:`shift_chains` finds the counted repetitions a flat DFA unrolls (one copy of a string
  body per count) as a shift from each copy to the next; :func:`chain_rows` makes the rows of
  every copy from one walk of the first; :func:`row_classes` finds equal rows.
* :func:`walk_masks` walks a trie through the byte DFA once per group of states, skipping a subtree
  as soon as the walk reaches the dead state, shares the walk within a relaxed block up to its
  exits, and produces deduplicated packed bitmask rows. It emits no per-token data: a row is all a
  mask needs (:func:`token_nodes` numbers the trie nodes it records). It is :func:`walk_sets`
  over every group, then :func:`number_rows`; two calls of the first over halves of the groups
  run at once in threads, and the second numbers their sets as one walk's.
* :func:`state_transitions`, :func:`csr_from_rows` recover the next states of allowed tokens from
  the rows by walking each token's bytes (one state, or the whole CSR table on demand).
* :func:`walk_bytes`, :func:`copy_rows`: small helpers for the matcher.

Example
-------
>>> import numpy as np
>>> from tokenfsm.masks import kernels
>>> flat = np.frombuffer(b"aab", dtype=np.uint8); offsets = np.array([0, 1, 3], dtype=np.int64)
>>> sym, depth, end, key = kernels.build_trie(flat, offsets)   # "a", "ab"
>>> sym[1:].tolist(), depth.tolist(), end.tolist(), key.tolist()
([97, 98], [0, 1, 2], [3, 3, 3], [-1, 0, 1])

The flattened trie with subtree skipping follows outlines-core's index construction and
llguidance's token trie; deduplicated mask rows follow xgrammar's adaptive token mask cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "build_trie",
    "build_class_trie",
    "refine_states",
    "coreachable",
    "forced_bytes",
    "scc_ids",
    "cut_components",
    "relaxed_blocks",
    "token_nodes",
    "walk_visits",
    "two_byte_ways",
    "shift_chains",
    "chain_rows",
    "row_classes",
    "class_partitions",
    "block_units",
    "walk_groups",
    "component_signatures",
    "component_walk",
    "simulated_pairs",
    "nearest_body",
    "inside_names",
    "walk_masks",
    "walk_sets",
    "number_rows",
    "state_transitions",
    "csr_from_rows",
    "walk_bytes",
    "copy_rows",
]

_HASH_MASK = (1 << 40) - 1
#: Runs sorted by insertion before :func:`_stable_order` merges them.
_RUN = 16
_M40 = _HASH_MASK
# de Bruijn table: index of the lowest set bit of a 32-bit word
_DEBRUIJN = np.array([0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8,
                      31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6, 11, 5, 10, 9], dtype=np.int64)


@njit(cache=True)
def build_trie(flat, offsets):
    """DFS-flatten the trie of sorted, distinct, non-empty byte strings.

    Parameters
    ----------
    flat : uint8[total]
        The strings concatenated, in ascending bytewise order.
    offsets : int64[n + 1]
        ``flat[offsets[k]:offsets[k + 1]]`` is string ``k``.

    Returns
    -------
    sym : uint8[nodes]
        Byte on the edge into each node (0 for the root, node 0).
    depth : int32[nodes]
        Depth of each node (root 0).
    end : int32[nodes]
        One past the last node of each node's subtree (preorder).
    key : int32[nodes]
        Index ``k`` of the string ending at the node, or -1.
    """
    n = offsets.shape[0] - 1
    total = 1
    prev_start = 0
    prev_len = 0
    for k in range(n):
        s = offsets[k]
        ln = offsets[k + 1] - s
        lcp = 0
        while lcp < ln and lcp < prev_len and flat[s + lcp] == flat[prev_start + lcp]:
            lcp += 1
        total += ln - lcp
        prev_start = s
        prev_len = ln
    sym = np.zeros(total, dtype=np.uint8)
    depth = np.zeros(total, dtype=np.int32)
    end = np.empty(total, dtype=np.int32)
    key = np.full(total, -1, dtype=np.int32)
    max_len = 1
    for k in range(n):
        if offsets[k + 1] - offsets[k] > max_len:
            max_len = offsets[k + 1] - offsets[k]
    path = np.zeros(max_len + 1, dtype=np.int32)  # path[d]: open node at depth d
    node = 1
    prev_start = 0
    prev_len = 0
    for k in range(n):
        s = offsets[k]
        ln = offsets[k + 1] - s
        lcp = 0
        while lcp < ln and lcp < prev_len and flat[s + lcp] == flat[prev_start + lcp]:
            lcp += 1
        for d in range(lcp + 1, prev_len + 1):  # close the previous string's unshared nodes
            end[path[d]] = node
        for d in range(lcp + 1, ln + 1):
            sym[node] = flat[s + d - 1]
            depth[node] = d
            path[d] = node
            node += 1
        key[path[ln]] = k
        prev_start = s
        prev_len = ln
    for d in range(1, prev_len + 1):
        end[path[d]] = node
    end[0] = node
    return sym, depth, end, key


@njit(cache=True)
def build_class_trie(sym, depth, end, tok_ptr, tok_ids, byte_classes, num_classes):
    """Merge a byte trie over byte classes; returns a class trie in the same flat layout.

    Parameters
    ----------
    sym, depth, end : arrays of the byte trie (see :func:`build_trie`).
    tok_ptr : int32[nodes + 1]
        CSR offsets of the token ids ending at each node.
    tok_ids : int32[tokens]
        Token ids, grouped by node.
    byte_classes : uint8[256]
        Byte -> class id.
    num_classes : int
        Number of classes.

    Returns
    -------
    c_sym, c_depth, c_end, c_tok_ptr, c_tok_ids
        The class trie: ``c_sym`` holds class ids (uint8) instead of bytes.
    """
    n = sym.shape[0]
    size = 1
    while size < 2 * n + 2:
        size *= 2
    hmask = size - 1
    ht_key = np.full(size, -1, dtype=np.int64)
    ht_val = np.zeros(size, dtype=np.int32)
    parent = np.empty(n, dtype=np.int32)
    cls = np.zeros(n, dtype=np.int32)
    cmap = np.zeros(n, dtype=np.int32)
    max_depth = 0
    for i in range(n):
        if depth[i] > max_depth:
            max_depth = depth[i]
    stack = np.zeros(max_depth + 1, dtype=np.int32)
    parent[0] = -1
    m = 1
    for i in range(1, n):
        d = depth[i]
        p = stack[d - 1]
        c = np.int64(byte_classes[sym[i]])
        kk = np.int64(p) * num_classes + c
        h = (kk * 2654435761) & hmask
        while True:
            if ht_key[h] == -1:
                ht_key[h] = kk
                ht_val[h] = m
                parent[m] = p
                cls[m] = c
                node = m
                m += 1
                break
            if ht_key[h] == kk:
                node = ht_val[h]
                break
            h = (h + 1) & hmask
        stack[d] = node
        cmap[i] = node
    # children lists (CSR by parent)
    ch_ptr = np.zeros(m + 1, dtype=np.int32)
    for j in range(1, m):
        ch_ptr[parent[j] + 1] += 1
    for j in range(m):
        ch_ptr[j + 1] += ch_ptr[j]
    fill = ch_ptr[:-1].copy()
    children = np.empty(max(m - 1, 1), dtype=np.int32)
    for j in range(1, m):
        children[fill[parent[j]]] = j
        fill[parent[j]] += 1
    # iterative preorder
    new_id = np.empty(m, dtype=np.int32)
    c_sym = np.zeros(m, dtype=np.uint8)
    c_depth = np.zeros(m, dtype=np.int32)
    c_end = np.empty(m, dtype=np.int32)
    st_node = np.empty(max_depth + 2, dtype=np.int32)
    st_next = np.empty(max_depth + 2, dtype=np.int32)
    top = 0
    st_node[0] = 0
    st_next[0] = ch_ptr[0]
    new_id[0] = 0
    counter = 1
    while top >= 0:
        old = st_node[top]
        if st_next[top] < ch_ptr[old + 1]:
            child = children[st_next[top]]
            st_next[top] += 1
            new_id[child] = counter
            c_sym[counter] = cls[child]
            c_depth[counter] = top + 1
            counter += 1
            top += 1
            st_node[top] = child
            st_next[top] = ch_ptr[child]
        else:
            c_end[new_id[old]] = counter
            top -= 1
    # tokens per class node
    c_tok_ptr = np.zeros(m + 1, dtype=np.int32)
    for i in range(n):
        c_tok_ptr[new_id[cmap[i]] + 1] += tok_ptr[i + 1] - tok_ptr[i]
    for j in range(m):
        c_tok_ptr[j + 1] += c_tok_ptr[j]
    pos = c_tok_ptr[:-1].copy()
    c_tok_ids = np.empty(tok_ids.shape[0], dtype=np.int32)
    for i in range(n):
        j = new_id[cmap[i]]
        for k in range(tok_ptr[i], tok_ptr[i + 1]):
            c_tok_ids[pos[j]] = tok_ids[k]
            pos[j] += 1
    return c_sym, c_depth, c_end, c_tok_ptr, c_tok_ids


@njit(cache=True)
def _edge_label(table, comp, block, s, k):
    """The label of transition ``(s, k)`` in a refinement round: -1 for the dead state, -2 for a
    target in another component than ``s``, else the target's block."""
    t = table[s, k]
    if t == 0:
        return np.int64(-1)
    if comp[t] != comp[s]:
        return np.int64(-2)
    return np.int64(block[t])


@njit(cache=True)
def _labels_hash(table, comp, block, s):
    h = np.int64(block[s]) + 1
    for k in range(table.shape[1]):
        x = _edge_label(table, comp, block, s, k)
        h = ((h * 1000003) ^ (x & _HASH_MASK)) & _HASH_MASK
    return h


@njit(cache=True)
def _same_labels(table, comp, block, s, t):
    for k in range(table.shape[1]):
        if _edge_label(table, comp, block, s, k) != _edge_label(table, comp, block, t, k):
            return False
    return True


@njit(cache=True)
def _moore_rounds(table, comp, rounds):
    """Moore's partition refinement from {dead state 0} / {every other state}, at most ``rounds``
    rounds, transitions labelled by :func:`_edge_label` (with ``comp`` all zero, by the
    target's block alone: plain Moore). Returns ``(block, n_blocks, stable)``, blocks numbered by
    first state; after ``r`` rounds the partition is exactly Moore's.

    Each round only looks at the states with a successor that changed block in the previous
    round (a block keeps its number for the part that did not move, so the labels of the other
    states are unchanged): their block splits off them, grouped by labels (hash, confirmed label
    by label); the labels are read before any block of the round is renumbered. A long counter
    chain, distinguished one state per round, costs its predecessors per round, not the whole
    automaton."""
    n, c = table.shape
    block = np.ones(n, dtype=np.int32)
    block[0] = 0
    if n <= 1:
        return block, 1, True
    n_blocks = 2
    # predecessors along the transitions whose label is the target's block, each once (a
    # string body moves to one state on most classes)
    cnt = np.zeros(n + 1, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int32)
    for s in range(1, n):
        for k in range(c):
            t = table[s, k]
            if t != 0 and last[t] != s and comp[t] == comp[s]:
                last[t] = s
                cnt[t + 1] += 1
    for t in range(n):
        cnt[t + 1] += cnt[t]
    fill = cnt[:-1].copy()
    pred = np.empty(max(cnt[n], 1), dtype=np.int32)
    last[:] = -1
    for s in range(1, n):
        for k in range(c):
            t = table[s, k]
            if t != 0 and last[t] != s and comp[t] == comp[s]:
                last[t] = s
                pred[fill[t]] = s
                fill[t] += 1
    # blocks as contiguous ranges of elems; the touched members of a block at its front
    elems = np.arange(n).astype(np.int32)
    pos = np.arange(n).astype(np.int32)
    bstart = np.zeros(n, dtype=np.int32)
    bsize = np.zeros(n, dtype=np.int32)
    bsize[0] = 1
    bstart[1] = 1
    bsize[1] = n - 1
    tcount = np.zeros(n, dtype=np.int32)
    mark = np.full(n, -1, dtype=np.int32)
    moved = np.empty(n, dtype=np.int32)
    n_moved = 0
    tb = np.empty(n, dtype=np.int32)
    hv = np.zeros(n, dtype=np.int64)
    grp = np.zeros(n, dtype=np.int32)
    gsize = np.zeros(n, dtype=np.int32)
    stable = False
    for r in range(rounds):
        n_tb = 0
        if r == 0:
            tb[0] = 1
            n_tb = 1
            tcount[1] = n - 1
        else:
            for x in range(n_moved):
                m = moved[x]
                for y in range(cnt[m], cnt[m + 1]):
                    p = pred[y]
                    if mark[p] == r:
                        continue
                    mark[p] = r
                    b = block[p]
                    if bsize[b] == 1:
                        continue          # (a block of one state cannot split)
                    if tcount[b] == 0:
                        tb[n_tb] = b
                        n_tb += 1
                    dst = bstart[b] + tcount[b]
                    q = elems[dst]
                    elems[pos[p]] = q
                    pos[q] = pos[p]
                    elems[dst] = p
                    pos[p] = dst
                    tcount[b] += 1
        # pass 1, on the blocks of the previous round: group the touched states by labels
        n_groups = 0
        for i in range(n_tb):
            b = tb[i]
            lo = bstart[b]
            m = tcount[b]
            seg = elems[lo:lo + m].copy()
            for x in range(m):
                hv[seg[x]] = _labels_hash(table, comp, block, seg[x])
            srt = seg[_stable_order(hv[seg])]
            x = 0
            while x < m:
                y = x
                while y < m and hv[srt[y]] == hv[srt[x]]:
                    y += 1
                first_group = n_groups
                for z in range(x, y):
                    s = srt[z]
                    g = -1
                    for gg in range(first_group, n_groups):
                        # a representative of group gg: the first state of the run given gg
                        for w in range(x, z):
                            if grp[srt[w]] == gg:
                                if _same_labels(table, comp, block, srt[w], s):
                                    g = gg
                                break
                        if g >= 0:
                            break
                    if g < 0:
                        g = n_groups
                        gsize[g] = 0
                        n_groups += 1
                    grp[s] = g
                    gsize[g] += 1
                x = y
            for x in range(m):
                elems[lo + x] = srt[x]
                pos[srt[x]] = lo + x
        # pass 2: renumber; the untouched part (or else the largest group) keeps the block's id
        n_moved = 0
        for i in range(n_tb):
            b = tb[i]
            lo = bstart[b]
            m = tcount[b]
            size = bsize[b]
            tcount[b] = 0
            keeper = -1
            if m == size:
                for x in range(m):
                    g = grp[elems[lo + x]]
                    if keeper < 0 or gsize[g] > gsize[keeper]:
                        keeper = g
            seg = elems[lo:lo + m].copy()
            key = np.empty(m, dtype=np.int64)
            for x in range(m):
                g = grp[seg[x]]
                key[x] = np.int64(n) if g == keeper else np.int64(g)
            srt = seg[_stable_order(key)]
            x = 0
            start = lo
            while x < m:
                g = grp[srt[x]]
                if g == keeper:
                    break
                nb = n_blocks
                n_blocks += 1
                bstart[nb] = start
                y = x
                while y < m and grp[srt[y]] == g:
                    s = srt[y]
                    elems[start + (y - x)] = s
                    pos[s] = start + (y - x)
                    block[s] = nb
                    moved[n_moved] = s
                    n_moved += 1
                    y += 1
                bsize[nb] = y - x
                start += y - x
                x = y
            for z in range(x, m):
                elems[start + (z - x)] = srt[z]
                pos[srt[z]] = start + (z - x)
            bsize[b] = size - (start - lo)
            bstart[b] = start
        if n_moved == 0:
            stable = True
            break
    # number the blocks by first state
    newid = np.full(n_blocks, -1, dtype=np.int32)
    count = 0
    for s in range(n):
        b = block[s]
        if newid[b] < 0:
            newid[b] = count
            count += 1
        block[s] = newid[b]
    return block, count, stable


@njit(cache=True)
def refine_states(table, rounds):
    """Group the states of a byte DFA that no string of at most ``rounds`` bytes tells apart.

    Moore's partition refinement, started from {dead state 0} and {every other state} and run for
    at most ``rounds`` rounds (or until stable). Two states in one block reach the dead state on
    exactly the same strings of length ``<= rounds``, so they allow the same tokens of that length:
    with ``rounds`` the longest token, one walk per block gives every state's token mask.

    Parameters
    ----------
    table : int32[num_states, num_classes]
        Dense transitions; state 0 is dead.
    rounds : int
        Refinement rounds (string length covered).

    Returns
    -------
    block : int32[num_states]
        Block of each state; state 0 alone in block 0, blocks numbered by first state.
    n_blocks : int
    """
    block, n_blocks, _ = _moore_rounds(table, np.zeros(table.shape[0], dtype=np.int32), rounds)
    return block, n_blocks


@njit(cache=True)
def forced_bytes(table, byte_classes, accepting):
    """Per state: the only byte leading to a live state, if exactly one and the state does not
    accept; else -1 (``int16[num_states]``)."""
    n, c = table.shape
    class_size = np.zeros(c, dtype=np.int64)
    first_byte = np.full(c, -1, dtype=np.int16)
    for b in range(255, -1, -1):
        k = byte_classes[b]
        class_size[k] += 1
        first_byte[k] = b
    forced = np.full(n, -1, dtype=np.int16)
    for s in range(n):
        if accepting[s]:
            continue
        live = 0
        last = -1
        for k in range(c):
            if table[s, k] != 0:
                live += class_size[k]
                last = k
                if live > 1:
                    break
        if live == 1:
            forced[s] = first_byte[last]
    return forced


@njit(cache=True)
def coreachable(table, accepting):
    """States from which an accepting state can be reached (never the dead state 0).

    A backward search over the transitions, predecessors gathered by counting sort (those of
    the dead state left out: most moves lead there)."""
    n, c = table.shape
    cnt = np.zeros(n + 1, dtype=np.int64)
    for s in range(1, n):
        for k in range(c):
            t = table[s, k]
            if t:
                cnt[t + 1] += 1
    for t in range(n):
        cnt[t + 1] += cnt[t]
    pos = cnt[:-1].copy()
    pred = np.empty(cnt[n], dtype=np.int32)
    for s in range(1, n):
        for k in range(c):
            t = table[s, k]
            if t:
                pred[pos[t]] = s
                pos[t] += 1
    live = np.zeros(n, dtype=np.bool_)
    for s in range(1, n):
        live[s] = accepting[s]
    _read_back(cnt, pred, live)
    return live


@njit(cache=True)
def _read_back(ptr, pred, marked):
    """Mark, in place, every state from which a marked state is reached, where
    ``pred[ptr[t]:ptr[t + 1]]`` are the predecessors of state ``t``."""
    todo = np.empty(marked.shape[0], dtype=np.int64)
    top = 0
    for s in range(marked.shape[0]):
        if marked[s]:
            todo[top] = s
            top += 1
    while top:
        top -= 1
        t = todo[top]
        for i in range(ptr[t], ptr[t + 1]):
            p = pred[i]
            if not marked[p]:
                marked[p] = True
                todo[top] = p
                top += 1


@njit(cache=True)
def scc_ids(table):
    """Strongly connected components of a byte DFA (Tarjan's algorithm, iterative).

    Transitions to the dead state 0 are ignored. Returns ``int32[num_states]``: the component of
    each state (the dead state 0 alone in component 0), a component numbered after every one it
    reaches. It is :func:`cut_components` cutting no class."""
    return cut_components(table, np.zeros(table.shape[1], dtype=np.bool_))[0]


@njit(cache=True)
def cut_components(table, cut):
    """:func:`scc_ids` of ``table`` without its moves on the classes where ``cut`` is set, and
    per state whether it moves to itself on some class (cut or not): ``(comp, loops)``.

    The moves are first listed per state, each target once in the order of its first class
    (a dense table repeats a few targets over many classes), then Tarjan's search reads the
    lists: the same components, numbered alike (a repeated move changes nothing in the search),
    in less than half the time of a search over the table's cells."""
    n, c = table.shape
    ptr = np.zeros(n + 1, dtype=np.int64)
    tgt = np.empty(4 * n + 16, dtype=np.int32)
    last = np.full(n, -1, dtype=np.int32)     # the last state that listed each target
    loops = np.zeros(n, dtype=np.bool_)
    k = 0
    for v in range(n):
        for e in range(c):
            w = table[v, e]
            if w == v:
                loops[v] = True
            if w == 0 or cut[e] or last[w] == v:
                continue
            last[w] = v
            if k == tgt.shape[0]:
                bigger = np.empty(2 * k, dtype=np.int32)
                bigger[:k] = tgt
                tgt = bigger
            tgt[k] = w
            k += 1
        ptr[v + 1] = k
    index = np.full(n, -1, dtype=np.int32)
    low = np.zeros(n, dtype=np.int32)
    on_stack = np.zeros(n, dtype=np.bool_)
    comp = np.full(n, -1, dtype=np.int32)
    stack = np.empty(n, dtype=np.int32)
    sp = 0
    call_state = np.empty(n, dtype=np.int32)
    call_edge = np.empty(n, dtype=np.int64)
    counter = 0
    comp[0] = 0
    n_comp = 1
    for root in range(1, n):
        if index[root] >= 0:
            continue
        top = 0
        call_state[0] = root
        call_edge[0] = ptr[root]
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        on_stack[root] = True
        while top >= 0:
            v = call_state[top]
            e = call_edge[top]
            if e < ptr[v + 1]:
                call_edge[top] = e + 1
                w = tgt[e]
                if index[w] < 0:
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[sp] = w
                    sp += 1
                    on_stack[w] = True
                    top += 1
                    call_state[top] = w
                    call_edge[top] = ptr[w]
                elif on_stack[w]:
                    if index[w] < low[v]:
                        low[v] = index[w]
            else:
                if low[v] == index[v]:
                    while True:
                        sp -= 1
                        w = stack[sp]
                        on_stack[w] = False
                        comp[w] = n_comp
                        if w == v:
                            break
                    n_comp += 1
                top -= 1
                if top >= 0:
                    u = call_state[top]
                    if low[v] < low[u]:
                        low[u] = low[v]
    return comp, loops


@njit(cache=True)
def class_partitions(table, comp):
    """Per state, the coarsest partition of the byte classes that every state it reaches (itself
    included) leaves whole: classes ``a`` and ``b`` share a label where every such state moves
    alike on both, so a walk from the state reads them as one symbol.

    ``comp`` are the strongly connected components of ``table`` numbered as :func:`scc_ids`
    numbers them (a component after every one it reaches). States of one component reach the
    same states: a component's partition joins its members' rows with the partitions of the
    components they move to, once each. Returns ``int32[num_states, num_classes]``: labels
    numbered by first class, the dead state's all 0."""
    n, k = table.shape
    n_comp = 0
    for s in range(n):
        if comp[s] + 1 > n_comp:
            n_comp = comp[s] + 1
    # the members of each component
    c_ptr = np.zeros(n_comp + 1, dtype=np.int64)
    for s in range(n):
        c_ptr[comp[s] + 1] += 1
    for c in range(n_comp):
        c_ptr[c + 1] += c_ptr[c]
    members = np.empty(n, dtype=np.int32)
    fill = c_ptr[:-1].copy()
    for s in range(n):
        members[fill[comp[s]]] = s
        fill[comp[s]] += 1
    part = np.zeros((n_comp, k), dtype=np.int32)
    cur = np.zeros(k, dtype=np.int32)
    nxt = np.zeros(k, dtype=np.int32)
    pair = np.full(k * k, -1, dtype=np.int32)        # (label, label) -> joint label
    keys = np.empty(k, dtype=np.int64)
    of_target = np.full(n, -1, dtype=np.int32)       # a row's target -> its label
    joined = np.full(n_comp, -1, dtype=np.int32)     # last component joined with each
    for c in range(1, n_comp):
        cur[:] = 0
        for i in range(c_ptr[c], c_ptr[c + 1]):
            s = members[i]
            # the state's own row: classes moving to one target share a label
            m = 0
            for a in range(k):
                t = table[s, a]
                if of_target[t] < 0:
                    of_target[t] = m
                    m += 1
                nxt[a] = of_target[t]
            for a in range(k):
                of_target[table[s, a]] = -1
            _join(cur, nxt, pair, keys, k)
            for a in range(k):
                t = table[s, a]
                d = comp[t]
                if t == 0 or d == c or joined[d] == c:
                    continue
                joined[d] = c
                _join(cur, part[d], pair, keys, k)
        _copy_into(part[c], cur)
    out = np.empty((n, k), dtype=np.int32)
    for s in range(n):
        _copy_into(out[s], part[comp[s]])
    return out


@njit(cache=True)
def _join(cur, other, pair, keys, k):
    """``cur`` refined by ``other`` (two labellings of ``k`` classes, numbered by first class),
    in place and numbered by first class again. ``pair`` (all -1, left so) and ``keys`` are
    scratch."""
    m = 0
    for a in range(k):
        key = cur[a] * k + other[a]
        keys[a] = key
        if pair[key] < 0:
            pair[key] = m
            m += 1
        cur[a] = pair[key]
    for a in range(k):
        pair[keys[a]] = -1


@njit(cache=True, nogil=True)
def relaxed_blocks(table, comp, max_rounds):
    """Group the states whose trie walks agree for as long as they stay in their component.

    Moore's partition refinement, run to its fixpoint, where each transition is labelled *dead*
    (target 0), *exit* (target in another strongly connected component than the source) or by
    its target's block; acceptance plays no part. Two states of one block then follow any string
    in step: at each byte both die, both exit or both stay inside their components in states of
    one block. Their walks through a token trie reach the same nodes, until exits, and exit at
    the same nodes -- what :func:`walk_masks` shares. The string bodies of a schema's string
    properties (and their UTF-8 continuation states) form such blocks: they differ only after
    the closing quote. The GIL is released: an index build makes them in its second thread.

    Parameters
    ----------
    table : int32[num_states, num_classes]
    comp : int32[num_states]
        Components (see :func:`scc_ids`).
    max_rounds : int
        Refinement rounds allowed; without a fixpoint by then the identity is returned (nothing
        shared, still correct).

    Returns
    -------
    block : int32[num_states]
        State 0 alone in block 0.
    n_blocks : int
    """
    block, n_blocks, stable = _moore_rounds(table, comp, max_rounds)
    if stable:
        return block, n_blocks
    return np.arange(table.shape[0]).astype(np.int32), table.shape[0]


@njit(cache=True)
def _mix(x):
    """A 40-bit mix of a node id; a node set's hash is the sum over its nodes (order-free)."""
    v = ((np.int64(x) + 1) * 2654435761) & _M40
    return ((v ^ (v >> 20)) * 1000003) & _M40


@njit(cache=True)
def _add_node(i, node_bit, cur_bits, cur_list, k):
    """Record trie node ``i`` in the current node set if it ends a token (``node_bit[i] >= 0``):
    returns the new count and the node's share of the set's order-free hash."""
    j = node_bit[i]
    if j < 0:
        return k, np.int64(0)
    cur_bits[j >> 5] |= np.uint32(1) << np.uint32(j & 31)
    cur_list[k] = i
    return k + 1, _mix(i)


@njit(cache=True)
def _walk_range(i, stop, sym, depth, end, sym_class, table, stack, node_bit, cur_list, k, cur_bits):
    """Walk trie nodes ``i..stop-1`` (whole subtrees) from the states on ``stack``, appending the
    token nodes reached to ``cur_list[k:]`` and ``cur_bits``.

    Returns ``(k, hash of the nodes added, nodes visited)``."""
    h = np.int64(0)
    visited = 0
    while i < stop:
        visited += 1
        ns = table[stack[depth[i] - 1], sym_class[sym[i]]]
        if ns == 0:
            i = end[i]
            continue
        stack[depth[i]] = ns
        k, hh = _add_node(i, node_bit, cur_bits, cur_list, k)
        h += hh
        i += 1
    return k, h, visited


@njit(cache=True)
def walk_visits(sym, depth, end, max_depth, sym_class, table, states, max_total):
    """Trie nodes the walk from each of ``states`` visits (a build's cost, sampled), the states
    taken in order until the counts add up to ``max_total`` (``max_depth``: the trie's deepest
    node).

    Returns ``(counts, done)``: ``counts[i]`` the nodes state ``states[i]``'s walk visited, the
    walks of ``states[:done]`` complete (the next one, if any, counted up to the total, the rest
    0)."""
    n_nodes = sym.shape[0]
    stack = np.zeros(max_depth + 1, dtype=np.int32)
    counts = np.zeros(states.shape[0], dtype=np.int64)
    visited = 0
    for x in range(states.shape[0]):
        stack[0] = states[x]
        i = 1
        start = visited
        while i < n_nodes:
            visited += 1
            if visited >= max_total:
                counts[x] = visited - start
                return counts, x
            ns = table[stack[depth[i] - 1], sym_class[sym[i]]]
            if ns == 0:
                i = end[i]
                continue
            stack[depth[i]] = ns
            i += 1
        counts[x] = visited - start
    return counts, states.shape[0]


#: An attempt of :func:`shift_chains` undone after making this many members burns them.
_BURN_MEMBERS = 16


@njit(cache=True)
def two_byte_ways(table, class_size, states):
    """Per state of ``states``, the strings of two bytes it moves on (to a live state after
    each: the dead state 0 moves on none).

    Parameters
    ----------
    table : int32[num_states, num_classes]
    class_size : int64[num_classes]
        Bytes per class.
    states : int64[k]

    Returns
    -------
    int64[k]
    """
    n, c = table.shape
    one = np.zeros(n, dtype=np.int64)
    for s in range(1, n):
        w = 0
        for k in range(c):
            if table[s, k] != 0:
                w += class_size[k]
        one[s] = w
    out = np.zeros(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        s = states[i]
        w = 0
        for k in range(c):
            w += class_size[k] * one[table[s, k]]
        out[i] = w
    return out


@njit(cache=True)
def shift_chains(table, accepting, class_size, min_copies, max_work):
    """Counted repetitions unrolled in a byte DFA (a ``maxLength`` string: one copy of the string
    body per count), found as a *shift* that moves each state of a copy to the same state of the
    next copy.

    A chain is a set of states and an injective map ``sigma`` over part of them such that, for
    every ``s`` with ``sigma[s] = s2`` and every class ``c``, with ``t = table[s, c]``:
    ``table[s2, c]`` is ``t`` itself where ``t`` lies outside the chain (an exit: the closing
    quote's successor, the dead state), else ``sigma[t]``, or the dead state where ``t`` has no
    ``sigma`` (the last copy); ``s2`` accepts as ``s`` does; and ``sigma`` has no cycle. A
    walk from ``sigma^j(h)`` is then the walk from ``h`` moved by ``sigma^j`` until it leaves
    the chain, and dies where a state on that part has no ``sigma^j``: one walk of the first
    copy gives the rows of every copy (:func:`chain_rows`).

    Chains grow from seeds: each state (in order) with each of its successors, on the most
    bytes first (the next count of a string body), the rules propagated over the pairs they
    imply. A seed that breaks a rule, or whose orbits of ``sigma`` are short (the longest has
    fewer than ``min_copies`` states, or their mean does), is undone, and where it had reached
    many states none of them seeds again. No seed is tried after ``max_work`` class
    comparisons.

    Returns
    -------
    chain : int32[num_states]
        Chain of each state, or -1.
    head_of : int32[num_states]
        Per chain state, the first state of its orbit under ``sigma`` (``sigma^pos`` of which
        it is).
    pos, last : int32[num_states]
        Per chain state, its place on its orbit (0: no state shifts to it) and the orbit's last
        place.
    n_chains : int
    """
    n, n_cls = table.shape
    sigma = np.full(n, -1, dtype=np.int32)
    inv = np.full(n, -1, dtype=np.int32)
    chain = np.full(n, -1, dtype=np.int32)
    pos = np.full(n, -1, dtype=np.int32)
    last = np.full(n, -1, dtype=np.int32)
    mark = np.zeros(n, dtype=np.int64)       # the attempt (plus one) that made a state a member
    final = np.zeros(n, dtype=np.bool_)      # a member whose sigma stays undefined
    qs = np.empty(n, dtype=np.int32)
    qt = np.empty(n, dtype=np.int32)
    members = np.empty(n, dtype=np.int32)
    weight = np.zeros(n, dtype=np.int64)
    burnt = np.zeros(n, dtype=np.bool_)
    cand = np.empty(n_cls, dtype=np.int32)
    cand_w = np.empty(n_cls, dtype=np.int64)
    # the classes each state moves on: a state's shift moves on no class it does not
    nz = np.zeros((n, (n_cls + 63) // 64), dtype=np.uint64)
    for x in range(1, n):
        for c in range(n_cls):
            if table[x, c] != 0:
                nz[x, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    n_chains = 0
    work = 0
    attempt = 0
    for a in range(1, n):
        if work > max_work:
            break
        if chain[a] >= 0 or burnt[a]:
            continue
        # the successors of a, on the most bytes first
        work += n_cls
        n_cand = 0
        for c in range(n_cls):
            t = table[a, c]
            if t != 0 and t != a:
                if weight[t] == 0:
                    cand[n_cand] = t
                    n_cand += 1
                weight[t] += class_size[c]
        for x in range(n_cand):       # (an insertion sort: a state has few successors)
            key = -weight[cand[x]] * (n + 1) + cand[x]
            weight[cand[x]] = 0
            t = cand[x]
            y = x
            while y > 0 and cand_w[y - 1] > key:
                cand_w[y] = cand_w[y - 1]
                cand[y] = cand[y - 1]
                y -= 1
            cand_w[y] = key
            cand[y] = t
        for x in range(n_cand):
            b = cand[x]
            if chain[b] >= 0 or accepting[a] != accepting[b]:
                continue
            fits = True
            for w in range(nz.shape[1]):
                if nz[b, w] & ~nz[a, w]:
                    fits = False
            if not fits:
                continue
            attempt += 1
            nm, work = _try_shift(table, accepting, a, b, attempt, sigma, inv, chain, pos, last,
                                  mark, final, qs, qt, members, min_copies, work)
            if nm > 0:
                for k in range(nm):
                    chain[members[k]] = n_chains
                n_chains += 1
                break
            if nm <= -_BURN_MEMBERS:
                # a long attempt undone: its states seed no other (their seeds would walk the
                # same states again, to fail again)
                for k in range(-nm):
                    burnt[members[k]] = True
    head_of = np.full(n, -1, dtype=np.int32)
    for x in range(1, n):
        if chain[x] >= 0 and pos[x] == 0:
            y = x
            while y >= 0:
                head_of[y] = x
                y = sigma[y]
    return chain, head_of, pos, last, n_chains


@njit(cache=True, inline="always")
def _member(x, st, mark, final, members, nm):
    """Make ``x`` a member of attempt ``st`` if it is not one yet; the new member count."""
    if mark[x] != st:
        mark[x] = st
        final[x] = False
        members[nm] = x
        nm += 1
    return nm


@njit(cache=True)
def _try_shift(table, accepting, a, b, st, sigma, inv, chain, pos, last, mark, final, qs, qt,
               members, min_copies, work):
    """One seed of :func:`shift_chains`: ``sigma[a] = b`` and the pairs it implies. Returns
    ``(number of members, work)``: the members are ``members[:number]``; undone, minus the
    number of states it had reached."""
    n_cls = table.shape[1]
    mark[a] = st
    mark[b] = st
    final[a] = False
    final[b] = False
    members[0] = a
    members[1] = b
    nm = 2
    sigma[a] = b
    inv[b] = a
    qs[0] = a
    qt[0] = b
    n_pairs = 1
    head = 0
    ok = True
    while ok and head < n_pairs:
        s = qs[head]
        s2 = qt[head]
        head += 1
        work += n_cls
        for c in range(n_cls):
            t = table[s, c]
            t2 = table[s2, c]
            if t == t2:
                continue
            if t == 0 or chain[t] >= 0 or (t2 != 0 and chain[t2] >= 0):
                ok = False
                break
            nm = _member(t, st, mark, final, members, nm)
            if t2 == 0:
                if sigma[t] >= 0:
                    ok = False
                    break
                final[t] = True
                continue
            nm = _member(t2, st, mark, final, members, nm)
            if sigma[t] >= 0:
                if sigma[t] != t2:
                    ok = False
                    break
                continue
            if final[t] or inv[t2] >= 0 or t2 == t or accepting[t] != accepting[t2]:
                ok = False
                break
            sigma[t] = t2
            inv[t2] = t
            qs[n_pairs] = t
            qt[n_pairs] = t2
            n_pairs += 1
    if ok:
        # an exit never leads into the chain
        for k in range(n_pairs):
            s = qs[k]
            s2 = qt[k]
            work += n_cls
            for c in range(n_cls):
                t = table[s, c]
                if t != 0 and t == table[s2, c] and mark[t] == st:
                    ok = False
                    break
            if not ok:
                break
    if ok:
        # orbits from the states nothing shifts to; a state on none lies on a cycle
        reached = 0
        longest = 0
        heads = 0
        for k in range(nm):
            x = members[k]
            if inv[x] < 0:
                heads += 1
                length = 0
                y = x
                while y >= 0:
                    pos[y] = length
                    length += 1
                    y = sigma[y]
                reached += length
                if length > longest:
                    longest = length
                y = x
                while y >= 0:
                    last[y] = length - 1
                    y = sigma[y]
        # worth one walk per orbit only where orbits are long on the whole
        ok = reached == nm and longest >= min_copies and nm >= min_copies * heads
    if ok:
        return nm, work
    for k in range(nm):
        x = members[k]
        sigma[x] = -1
        inv[x] = -1
        pos[x] = -1
        last[x] = -1
        final[x] = False
    return -nm, work


@njit(cache=True)
def chain_rows(sym, depth, end, tok_ptr, tok_ids, max_depth, sym_class, table, accepting,
               eos_ids, vocab_size, head, chain, pos, last):
    """The packed rows of ``sigma^j(head)`` for ``j = 0 .. last[head] - pos[head]`` (a chain of
    :func:`shift_chains`), from one walk of the trie from ``head``: a token is allowed from
    ``sigma^j(head)`` when it is from ``head`` and ``j`` is at most its *slack*, the fewest
    copies left after any state its walk passes before it leaves the chain (``last - pos``).
    EOS bits are set where ``head`` accepts (as every state of its orbit does).

    Returns ``(rows, row_of, visited)``: the distinct rows (a row changes only at a slack some
    token has), ``rows[row_of[j]]`` the row of ``sigma^j(head)``, and the trie nodes visited."""
    n_words = (vocab_size + 31) // 32
    k = last[head] - pos[head] + 1
    n_nodes = sym.shape[0]
    stack = np.zeros(max_depth + 1, dtype=np.int32)
    slack = np.zeros(max_depth + 1, dtype=np.int32)
    inside = np.zeros(max_depth + 1, dtype=np.bool_)
    toks = np.empty(max(tok_ids.shape[0], 1), dtype=np.int32)
    tok_slack = np.empty(max(tok_ids.shape[0], 1), dtype=np.int32)
    n_toks = 0
    cid = chain[head]
    stack[0] = head
    slack[0] = k - 1
    inside[0] = True
    visited = 0
    i = 1
    while i < n_nodes:
        visited += 1
        d = depth[i]
        ns = table[stack[d - 1], sym_class[sym[i]]]
        if ns == 0:
            i = end[i]
            continue
        stack[d] = ns
        sl = slack[d - 1]
        inside[d] = inside[d - 1] and chain[ns] == cid
        if inside[d]:
            x = last[ns] - pos[ns]
            if x < sl:
                sl = x
        slack[d] = sl
        for x in range(tok_ptr[i], tok_ptr[i + 1]):
            toks[n_toks] = tok_ids[x]
            tok_slack[n_toks] = sl
            n_toks += 1
        i += 1
    # the tokens by slack (a counting sort), then a row at each slack some token has
    start = np.zeros(k + 1, dtype=np.int64)
    for x in range(n_toks):
        start[tok_slack[x] + 1] += 1
    n_rows = 1
    for j in range(k - 1):
        if start[j + 1] > 0:
            n_rows += 1
    for j in range(k):
        start[j + 1] += start[j]
    by_slack = np.empty(max(n_toks, 1), dtype=np.int32)
    fill = start[:k].copy()
    for x in range(n_toks):
        by_slack[fill[tok_slack[x]]] = toks[x]
        fill[tok_slack[x]] += 1
    rows = np.zeros((n_rows, n_words), dtype=np.uint32)
    row_of = np.empty(k, dtype=np.int32)
    r = 0
    for j in range(k - 1, -1, -1):
        if j < k - 1 and start[j + 1] > start[j]:
            r += 1
            _copy_into(rows[r], rows[r - 1])
        for x in range(start[j], start[j + 1]):
            tok = by_slack[x]
            rows[r, tok >> 5] |= np.uint32(1) << np.uint32(tok & 31)
        row_of[j] = r
    if accepting[head]:
        for q in range(n_rows):
            for e in eos_ids:
                rows[q, e >> 5] |= np.uint32(1) << np.uint32(e & 31)
    return rows, row_of, visited


@njit(cache=True)
def row_classes(rows, counts):
    """For each row of ``rows``, the first row equal to it. Rows are told apart by ``counts``
    (their bits set) first; only those sharing a count with another are hashed and, on equal
    hashes, compared word by word."""
    n, n_words = rows.shape
    first = np.arange(n)
    size = 8
    while size < 2 * n + 2:
        size *= 2
    slot_count = np.full(size, -1, dtype=np.int64)
    slot_many = np.zeros(size, dtype=np.bool_)
    for r in range(n):
        x = (counts[r] * 0x9E3779B1) & (size - 1)
        while slot_count[x] >= 0 and slot_count[x] != counts[r]:
            x = (x + 1) & (size - 1)
        if slot_count[x] == counts[r]:
            slot_many[x] = True
        slot_count[x] = counts[r]
    slot_row = np.full(size, -1, dtype=np.int64)
    for r in range(n):
        x = (counts[r] * 0x9E3779B1) & (size - 1)
        while slot_count[x] != counts[r]:
            x = (x + 1) & (size - 1)
        if not slot_many[x]:
            continue
        h = np.uint64(0)
        for w in range(n_words):      # (independent products: no chain of dependent steps)
            h += (np.uint64(rows[r, w]) + np.uint64(w)) * np.uint64(0x9E3779B97F4A7C15) ^ (
                np.uint64(rows[r, w]) >> np.uint64(7))
        y = np.int64(h >> np.uint64(1)) & (size - 1)
        while True:
            q = slot_row[y]
            if q < 0:
                slot_row[y] = r
                break
            same = True
            for w in range(n_words):
                if rows[q, w] != rows[r, w]:
                    same = False
                    break
            if same:
                first[r] = q
                break
            y = (y + 1) & (size - 1)
    return first


@njit(cache=True)
def token_nodes(tok_ptr):
    """Number the trie nodes that end tokens, in preorder.

    Returns ``(node_bit, n_tok_nodes)``: ``node_bit[i]`` is node ``i``'s number among the
    token-ending nodes, or -1."""
    n = tok_ptr.shape[0] - 1
    node_bit = np.full(n, -1, dtype=np.int32)
    count = 0
    for i in range(n):
        if tok_ptr[i + 1] > tok_ptr[i]:
            node_bit[i] = count
            count += 1
    return node_bit, count


@njit(cache=True)
def _set_bit(bits, j):
    bits[j >> 5] |= np.uint32(1) << np.uint32(j & 31)


@njit(cache=True)
def _shared_walk(r, sym, depth, end, sym_class, table, comp, stack, node_bit, cur_list, cur_bits,
                 path_node, sk_node, sk_depth, sk_exit):
    """The shared part of a relaxed group's walks, from its unit ``r``: token nodes reached
    without leaving ``r``'s component go to ``cur_list``/``cur_bits``; each exit node and the
    nodes on the path to it (not already there) go to the skeleton, in preorder.

    Returns ``(k, hash, skeleton length, nodes visited)``."""
    n_nodes = sym.shape[0]
    cr = comp[r]
    stack[0] = r
    k = np.int64(0)     # (np.int64, not a literal: see the module docstring)
    h = np.int64(0)
    n_sk = 0
    visited = 0
    emitted = 0   # path_node[1..emitted] are already in the skeleton
    i = np.int64(1)
    while i < n_nodes:
        visited += 1
        d = depth[i]
        if emitted >= d:
            emitted = d - 1
        ns = table[stack[d - 1], sym_class[sym[i]]]
        if ns == 0:
            i = end[i]
            continue
        if comp[ns] != cr:
            for dd in range(emitted + 1, d):
                sk_node[n_sk] = path_node[dd]
                sk_depth[n_sk] = dd
                sk_exit[n_sk] = False
                n_sk += 1
            sk_node[n_sk] = i
            sk_depth[n_sk] = d
            sk_exit[n_sk] = True
            n_sk += 1
            emitted = d - 1
            i = end[i]
            continue
        stack[d] = ns
        path_node[d] = i
        k, hh = _add_node(i, node_bit, cur_bits, cur_list, k)
        h += hh
        i += 1
    return k, h, n_sk, visited


@njit(cache=True)
def _replay(n_sk, sk_node, sk_depth, sk_exit, k, sym, depth, end, sym_class, table, stack,
            node_bit, cur_list, cur_bits):
    """A group member's own part of the walk (``stack[0]`` is its state): follow the skeleton to
    its exits and walk the subtrees below them. Returns ``(k, hash added, nodes visited)``."""
    h = np.int64(0)
    visited = 0
    for x in range(n_sk):
        v = sk_node[x]
        d = sk_depth[x]
        st = table[stack[d - 1], sym_class[sym[v]]]
        if st == 0:
            raise ValueError("walk_masks: relaxed groups disagree with the table")
        stack[d] = st
        if sk_exit[x]:
            visited += 1
            k, hh = _add_node(v, node_bit, cur_bits, cur_list, k)
            h += hh
            k, hh, vv = _walk_range(np.int64(v + 1), np.int64(end[v]), sym, depth, end,
                                    sym_class, table, stack, node_bit, cur_list, k, cur_bits)
            h += hh
            visited += vv
    return k, h, visited


@njit(cache=True)
def _find_set(h, lo, hi, cur_bits, ht_hash, ht_set, set_words, set_off, set_lo, set_hi):
    """Look a node set up by hash, confirming on the bitsets: ``cur_bits`` is zero outside words
    ``lo..hi-1`` (its first and last non-zero words; ``lo >= hi`` for the empty set), as is each
    kept set outside its ``set_lo..set_hi-1``, whose words are kept from ``set_words[set_off]``
    on. Returns ``(set id or -1, slot)``."""
    hmask = ht_set.shape[0] - 1
    slot = (h ^ (h >> 17)) & hmask
    while ht_set[slot] != -1:
        if ht_hash[slot] == h:
            cand = ht_set[slot]
            if cand == 0:
                if lo >= hi:
                    return 0, slot
            elif set_lo[cand] == lo and set_hi[cand] == hi:
                same = True
                at = set_off[cand] - lo
                for w in range(lo, hi):
                    if set_words[at + w] != cur_bits[w]:
                        same = False
                        break
                if same:
                    return cand, slot
        slot = (slot + 1) & hmask
    return -1, slot


@njit(cache=True)
def _copy_into(dst, src):
    """``dst[:n] = src`` (``n`` the length of ``src``, 1-D arrays) as a loop, rather than a slice
    assignment (see the module docstring)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True)
def _stable_order(keys):
    """The positions of ``keys`` (int64[n]) in ascending order of key, equal keys in their order
    (``np.argsort(keys, kind="stable")``). Written out: NumPy's sorts compile for about a second
    per kind and type, this one once (runs of 16 by insertion, then merged bottom-up)."""
    n = keys.shape[0]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    for lo in range(0, n, _RUN):
        hi = min(lo + _RUN, n)
        for i in range(lo + 1, hi):
            x = order[i]
            k = keys[x]
            j = i - 1
            while j >= lo and keys[order[j]] > k:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = x
    if n <= _RUN:
        return order
    src, dst = order, np.empty(n, dtype=np.int64)
    width = _RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if keys[src[j]] < keys[src[i]]:
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        width *= 2
    return src


@njit(cache=True)
def _grown_1d(a, count):
    bigger = np.empty(2 * count, dtype=a.dtype)
    _copy_into(bigger, a[:count])
    return bigger


@njit(cache=True)
def _grown(a, count):
    """``a`` with room for twice ``count`` rows (the new rows uninitialised)."""
    bigger = np.empty((2 * count, a.shape[1]), dtype=a.dtype)
    for r in range(count):
        _copy_into(bigger[r], a[r])
    return bigger


@njit(cache=True)
def _expand(row, cur_list, k, cur_bits, prev_list, n_prev, prev_bits, node_bit, tok_ptr, tok_ids):
    """Turn ``row`` (the token row of ``prev_list[:n_prev]``) into that of ``cur_list[:k]``: toggle
    the tokens of the nodes in one set only, or rebuild it when that is shorter or when
    ``n_prev < 0`` (``row`` not made from ``prev_list``)."""
    common = 0
    if n_prev >= 0:
        for x in range(k):
            jb = node_bit[cur_list[x]]
            if (prev_bits[jb >> 5] >> np.uint32(jb & 31)) & np.uint32(1):
                common += 1
    if n_prev >= 0 and k + n_prev - 2 * common < k:
        for x in range(k):
            nd = cur_list[x]
            jb = node_bit[nd]
            if not (prev_bits[jb >> 5] >> np.uint32(jb & 31)) & np.uint32(1):
                for kk in range(tok_ptr[nd], tok_ptr[nd + 1]):
                    t = tok_ids[kk]
                    row[t >> 5] ^= np.uint32(1) << np.uint32(t & 31)
        for x in range(n_prev):
            nd = prev_list[x]
            jb = node_bit[nd]
            if not (cur_bits[jb >> 5] >> np.uint32(jb & 31)) & np.uint32(1):
                for kk in range(tok_ptr[nd], tok_ptr[nd + 1]):
                    t = tok_ids[kk]
                    row[t >> 5] ^= np.uint32(1) << np.uint32(t & 31)
    else:
        row[:] = 0
        for x in range(k):
            nd = cur_list[x]
            for kk in range(tok_ptr[nd], tok_ptr[nd + 1]):
                t = tok_ids[kk]
                row[t >> 5] |= np.uint32(1) << np.uint32(t & 31)


@njit(cache=True)
def _clear_bits(bits, lst, lo, hi, node_bit):
    for x in range(lo, hi):
        j = node_bit[lst[x]]
        bits[j >> 5] &= ~(np.uint32(1) << np.uint32(j & 31))


@njit(cache=True)
def block_units(block, n_blocks, on_cycle):
    """The state each group of ``block`` is walked from (its *unit*; the dead state's group 0
    aside), ascending: the group's first state on a cycle (``on_cycle``), else its first state.

    Every state of a group allows the same tokens, so any of them may walk for it; one on a
    cycle takes its component's shared walk (:func:`walk_masks`), kept across builds, where the
    group's first state, outside cycles, would walk alone. Over the tokens free of JSON's
    separators a key's name partway through the declared names moves as the string body does:
    the body's kept walk serves the group instead of a walk of the whole trie."""
    num_states = block.shape[0]
    unit = np.full(max(n_blocks, 1), -1, dtype=np.int32)
    for s in range(1, num_states):
        b = block[s]
        if b == block[0]:
            continue
        u = unit[b]
        if u < 0 or (on_cycle[s] and not on_cycle[u]):
            unit[b] = s
    return np.sort(unit[unit >= 0])


@njit(cache=True)
def walk_groups(block, n_blocks, relaxed, on_cycle):
    """The units of a walk (:func:`block_units`), grouped by ``relaxed``.

    Returns ``(order, g_ptr)``: ``order[g_ptr[g]:g_ptr[g + 1]]`` are the units of relaxed group
    ``g``, ascending (see :func:`walk_masks`)."""
    num_states = block.shape[0]
    unit = block_units(block, n_blocks, on_cycle)
    n_units = unit.shape[0]
    n_rel = 0
    for s in range(1, num_states):
        if relaxed[s] + 1 > n_rel:
            n_rel = relaxed[s] + 1
    g_ptr = np.zeros(n_rel + 1, dtype=np.int32)
    for q in range(n_units):
        g_ptr[relaxed[unit[q]] + 1] += 1
    for g in range(n_rel):
        g_ptr[g + 1] += g_ptr[g]
    order = np.empty(max(n_units, 1), dtype=np.int32)
    fill = g_ptr[:-1].copy()
    for q in range(n_units):
        g = relaxed[unit[q]]
        order[fill[g]] = unit[q]
        fill[g] += 1
    return order[:n_units].copy(), g_ptr


@njit(cache=True)
def component_signatures(table, byte_classes, comp, order, g_ptr, max_states):
    """Which relaxed groups walk their component once, and a canonical form of that component.

    A group shares one walk (see :func:`walk_masks`) when it has two units or more, or when its
    unit's strongly connected component has a cycle (a free-text body: one walk reaches most of
    the vocabulary, worth keeping) of at most ``max_states`` states: a lone unit's walk that
    cannot be kept is walked alone, where sharing would only add the replay (the residues of a
    number under ``multipleOf``, a group per state). The walk depends only on the component as
    seen from the group's first unit ``r``, and only up to merging its states that move alike
    (the walk reads which trie nodes stay inside and where it leaves, not through which states):
    its states reachable from ``r``, merged into the coarsest blocks whose states agree per byte
    on the move (dead, out of the component, or into one block, :func:`_region_blocks`), the blocks
    numbered breadth-first from ``r``'s over bytes 0..255, and, per block and byte, the target's
    number, -1 for the dead state or -2 for a state of another component. That table, each row
    written as runs of equal labels (the number of runs, then each run's first byte and label),
    is the signature; two automata with equal signatures from their units have equal shared walks
    over one trie (the replays follow each automaton's own table), whatever their byte classes,
    state numbers or spellings of one region (a key's name, declared or not, reads as a string
    body).

    Parameters
    ----------
    table, byte_classes, comp : the byte DFA and its components (see :func:`scc_ids`).
    order, g_ptr : units grouped by relaxed block (see :func:`walk_groups`).
    max_states : int
        Components with more states get no signature (their walk is not kept, and a lone
        unit's not shared).

    Returns
    -------
    share : bool[n_groups]
    sig_ptr : int64[n_groups + 1]
        Group ``g``'s signature is ``sig[sig_ptr[g]:sig_ptr[g + 1]]`` (empty when not shared or
        over ``max_states``).
    sig : int16[total]
    """
    n, c = table.shape
    n_groups = g_ptr.shape[0] - 1
    share = np.zeros(n_groups, dtype=np.bool_)
    sig_ptr = np.zeros(n_groups + 1, dtype=np.int64)
    canon = np.full(n, -1, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    lab = np.empty(c, dtype=np.int16)
    sig = np.empty(1024, dtype=np.int16)
    total = 0
    for g in range(n_groups):
        sig_ptr[g + 1] = total
        lo = g_ptr[g]
        hi = g_ptr[g + 1]
        if hi == lo:
            continue
        r = order[lo]
        cr = comp[r]
        cyclic = False
        for k in range(c):
            t = table[r, k]
            if t != 0 and comp[t] == cr:
                cyclic = True
                break
        if hi - lo < 2 and not cyclic:
            continue
        share[g] = True
        # component size first (breadth-first over classes), within max_states
        m = np.int64(1)     # (np.int64, not a literal: see the module docstring)
        queue[0] = r
        canon[r] = 0
        head = 0
        while head < m and m <= max_states:
            u = queue[head]
            head += 1
            for k in range(c):
                t = table[u, k]
                if t != 0 and comp[t] == cr and canon[t] < 0:
                    canon[t] = m
                    queue[m] = t
                    m += 1
        if m > max_states:
            for x in range(m):
                canon[queue[x]] = -1
            sig_ptr[g + 1] = total
            if hi - lo < 2:
                share[g] = False    # one unit, and a walk not kept: walked alone, cheaper
            continue
        # the component's states merged where their moves agree (out of the component and
        # dead as two labels): regions that differ only in how many states spell the same
        # moves (a key's name, a string body) get one form
        blk = _region_blocks(table, comp, cr, canon, queue, m, c)
        nb = 0
        for x in range(m):
            if blk[x] >= nb:
                nb = blk[x] + 1
        rep = np.full(nb, -1, dtype=np.int32)
        for x in range(m):
            if rep[blk[x]] < 0:
                rep[blk[x]] = x
        # then the blocks numbered breadth-first by bytes 0..255 from r's (independent of the
        # class numbering)
        if sig.shape[0] < total + nb * 513:
            bigger = np.empty(max(2 * sig.shape[0], total + nb * 513), dtype=np.int16)
            _copy_into(bigger, sig[:total])
            sig = bigger
        bnum = np.full(nb, -1, dtype=np.int32)
        bqueue = np.empty(nb, dtype=np.int32)
        bnum[blk[0]] = 0
        bqueue[0] = blk[0]
        m2 = 1
        head = 0
        while head < m2:
            u = queue[rep[bqueue[head]]]
            for k in range(c):
                t = table[u, k]
                if t == 0:
                    lab[k] = -1
                elif comp[t] != cr:
                    lab[k] = -2
                else:
                    lab[k] = -3   # a block of the component, numbered on first meeting below
            # the row over bytes 0..255 as runs: its number of runs, then (first byte, label) each
            count_at = total
            total += 1
            n_runs = 0
            prev = np.int16(-4)
            for b in range(256):
                kb = byte_classes[b]
                x = lab[kb]
                if x == -3:
                    tb = blk[canon[table[u, kb]]]
                    if bnum[tb] < 0:
                        bnum[tb] = m2
                        bqueue[m2] = tb
                        m2 += 1
                    x = np.int16(bnum[tb])
                if b == 0 or x != prev:
                    sig[total] = b
                    sig[total + 1] = x
                    total += 2
                    n_runs += 1
                    prev = x
            sig[count_at] = n_runs
            head += 1
        for x in range(m):
            canon[queue[x]] = -1
        sig_ptr[g + 1] = total
    return share, sig_ptr, sig[:total].copy()


@njit(cache=True)
def _region_blocks(table, comp, cr, canon, queue, m, c):
    """The coarsest partition of a component's states ``queue[:m]`` (``canon[s]`` their
    positions) such that states of one block agree, per class, on the move: dead, out of the
    component, or into one block (Moore's rounds).

    Each round hashes a state's block and its moves read as blocks, sorts the states by hash
    and splits each run of equal hashes by comparing with its first state (a collision costs a
    comparison, never a wrong block): O(m c + m log m) a round, where comparing every pair
    took seconds for the names of a large object's keys (2,000 states)."""
    lab = np.empty((m, c), dtype=np.int32)
    for x in range(m):
        u = queue[x]
        for k in range(c):
            t = table[u, k]
            if t == 0:
                lab[x, k] = -1
            elif comp[t] != cr:
                lab[x, k] = -2
            else:
                lab[x, k] = canon[t]
    blk = np.zeros(m, dtype=np.int32)
    nb = 1
    new = np.empty(m, dtype=np.int32)
    h = np.empty(m, dtype=np.int64)
    prime = np.uint64(1099511628211)
    while True:
        for x in range(m):
            v = (np.uint64(blk[x]) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
            for k in range(c):
                a = lab[x, k]
                v = (v ^ np.uint64((a if a < 0 else blk[a]) + 3)) * prime
            h[x] = np.int64(v >> np.uint64(1))     # (sorted as int64, as the other keys are)
        order = _stable_order(h)
        new[:] = -1
        nn = 0
        i = 0
        while i < m:
            j = i + 1
            while j < m and h[order[j]] == h[order[i]]:
                j += 1
            for s in range(i, j):
                x = order[s]
                if new[x] >= 0:
                    continue
                new[x] = nn
                for t in range(s + 1, j):
                    y = order[t]
                    if new[y] >= 0 or blk[y] != blk[x]:
                        continue
                    same = True
                    for k in range(c):
                        a = lab[x, k]
                        b = lab[y, k]
                        if a < 0 or b < 0:
                            if a != b:
                                same = False
                                break
                        elif blk[a] != blk[b]:
                            same = False
                            break
                    if same:
                        new[y] = nn
                nn += 1
            i = j
        if nn == nb:
            return blk
        _copy_into(blk, new)
        nb = nn


@njit(cache=True)
def simulated_pairs(table, comp, quiet, g, q):
    """Whether state ``g`` simulates state ``q`` inside ``g``'s component (see
    :func:`.row_ways.twin_of`), and the pairs met, breadth first from ``(q, g)``: per class, a
    move ``g`` takes inside its component takes ``q`` to a ``quiet`` state, and a move dead for
    ``g`` is dead for ``q`` (where ``g`` leaves, ``q`` may do anything). Each pair met is then
    simulated too.

    Returns ``(ok, pairs)``: ``pairs`` as ``q' * n + g'`` (empty where not ``ok``)."""
    n, c = table.shape
    cr = comp[g]
    # the pairs met: the first ``g'`` met with each ``q'`` in an array (nearly every ``q'`` meets
    # one), the others in a set
    mate = np.full(n, -1, dtype=np.int64)
    more = set()
    mate[q] = g
    queue = [np.int64(q) * n + g]
    head = 0
    ok = True
    while head < len(queue) and ok:
        x = queue[head]
        head += 1
        a = x // n
        b = x % n
        for k in range(c):
            tb = table[b, k]
            ta = table[a, k]
            if tb == 0:
                if ta != 0:
                    ok = False
                    break
            elif comp[tb] == cr:
                if not quiet[ta]:
                    ok = False
                    break
                y = np.int64(ta) * n + tb
                if mate[ta] < 0:
                    mate[ta] = tb
                    queue.append(y)
                elif mate[ta] != tb and y not in more:
                    more.add(y)
                    queue.append(y)
    m = len(queue) if ok else 0
    out = np.empty(m, dtype=np.int64)
    for i in range(m):
        out[i] = queue[i]
    return ok, out


@njit(cache=True)
def nearest_body(table, quiet, shared, q, max_states):
    """The first state met breadth first from ``q`` over ``quiet`` states (a level at a time,
    the smallest of a level first) that lies in a ``shared`` region and moves to itself (see
    :func:`.row_ways.twin_of`); -1 if none before ``max_states`` states are met."""
    n, c = table.shape
    seen = np.zeros(n, dtype=np.bool_)
    seen[q] = True
    level = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    level[0] = q
    size = 1
    n_seen = 1
    found = -1
    while found < 0 and size > 0 and n_seen < max_states:
        for i in range(size):
            s = level[i]
            if shared[s] and (found < 0 or s < found):
                for k in range(c):
                    if table[s, k] == s:
                        found = s
                        break
        if found < 0:
            m = 0
            for i in range(size):
                s = level[i]
                for k in range(c):
                    t = table[s, k]
                    if quiet[t] and not seen[t]:
                        seen[t] = True
                        nxt[m] = t
                        m += 1
            level, nxt = nxt, level
            size = m
            n_seen += m
    return found


@njit(cache=True)
def inside_names(table, comp, names, size):
    """The states of ``names`` (bool per state) from which, through ``names`` states, a state
    is reached that lies on a cycle of ``names`` states: a move to itself, or into its own
    strongly connected component ``comp`` of more than one state (``size``: states per
    component). Moves are ``table`` targets (0 none); each pair of states read once."""
    n = table.shape[0]
    mark = np.full(n, -1, dtype=np.int64)
    targets = np.empty(table.shape[1], dtype=np.int64)
    into = np.zeros(n + 1, dtype=np.int64)
    out = np.zeros(n, dtype=np.bool_)
    for s in range(n):
        for j in range(_names_after(table, names, s, mark, targets)):
            t = targets[j]
            into[t + 1] += 1
            if t == s or (size[comp[s]] > 1 and comp[s] == comp[t]):
                out[s] = True
    for t in range(n):
        into[t + 1] += into[t]
    pre = np.empty(into[n], dtype=np.int64)
    fill = into[:n].copy()
    mark[:] = -1
    for s in range(n):
        for j in range(_names_after(table, names, s, mark, targets)):
            t = targets[j]
            pre[fill[t]] = s
            fill[t] += 1
    _read_back(into, pre, out)
    return out


@njit(cache=True, inline="always")
def _names_after(table, names, s, mark, targets):
    """The ``names`` states that ``names`` state ``s`` moves to, each once, into ``targets``
    (``mark``: the last state that listed each); how many (0 where ``s`` is not one)."""
    m = 0
    if names[s]:
        for k in range(table.shape[1]):
            t = table[s, k]
            if t != 0 and names[t] and mark[t] != s:
                mark[t] = s
                targets[m] = t
                m += 1
    return m


@njit(cache=True)
def component_walk(r, sym, depth, end, tok_ptr, tok_ids, node_bit, n_tok_nodes, max_depth,
                   sym_class, table, comp, vocab_size):
    """The shared walk of a relaxed group from its unit ``r`` (see :func:`walk_masks`), as kept
    for reuse: the token nodes reached without leaving ``r``'s component (their order-free hash,
    their bitset over ``node_bit`` numbers, their packed token row and their list, ascending) and
    the skeleton of paths to the exits.

    Returns ``(hash, bits, row, sk_node, sk_depth, sk_exit, visited, nodes)``."""
    n_nodes = sym.shape[0]
    stack = np.zeros(max_depth + 1, dtype=np.int32)
    path_node = np.zeros(max_depth + 1, dtype=np.int32)
    nw = max((n_tok_nodes + 31) // 32, 1)
    bits = np.zeros(nw, dtype=np.uint32)
    cur_list = np.empty(max(n_tok_nodes, 1), dtype=np.int32)
    sk_node = np.empty(max(n_nodes, 1), dtype=np.int32)
    sk_depth = np.empty(max(n_nodes, 1), dtype=np.int32)
    sk_exit = np.empty(max(n_nodes, 1), dtype=np.bool_)
    k, h, n_sk, visited = _shared_walk(r, sym, depth, end, sym_class, table, comp, stack, node_bit,
                                       cur_list, bits, path_node, sk_node, sk_depth, sk_exit)
    row = np.zeros((vocab_size + 31) // 32, dtype=np.uint32)
    for x in range(k):
        nd = cur_list[x]
        for kk in range(tok_ptr[nd], tok_ptr[nd + 1]):
            t = tok_ids[kk]
            row[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
    return (h & _M40, bits, row, sk_node[:n_sk].copy(), sk_depth[:n_sk].copy(),
            sk_exit[:n_sk].copy(), visited, cur_list[:k].copy())


@njit(cache=True)
def walk_masks(sym, depth, end, tok_ptr, tok_ids, node_bit, n_tok_nodes, max_depth, sym_class,
               table, accepting, eos_ids, vocab_size, block, n_blocks, order, g_ptr, g_entry,
               e_hash, e_node_ptr, e_nodes, e_dense, e_bits, e_rows, e_sk_ptr, e_sk_node, e_sk_depth,
               e_sk_exit, max_visited):
    """Packed token masks of every state of a byte DFA, walking the trie as little as possible.

    Every state of a block of ``block`` allows the same tokens (see :func:`refine_states`), so
    one state per block (a *unit*) is walked. Units in one relaxed group (see
    :func:`relaxed_blocks` and :func:`walk_groups`) walk alike as long as they stay in their
    strongly connected component; a group given a *shared walk* (``g_entry[g] >= 0``, made by
    :func:`component_walk` from the group's first unit, possibly for another automaton with the
    same :func:`component_signatures`) takes the token nodes reached inside the component as
    they are (a few: their list; most of the vocabulary: their bitset and token row, which each
    new set then starts from), replays only the skeleton (the paths to
    the exits, the nodes whose byte leaves the component) from its own state to find its exit
    states, and walks the subtrees below its exits. A JSON string body and its UTF-8
    continuation states, repeated for every string property of a schema, are walked in full
    once instead of once per property -- or not at all when the caller kept that walk.

    A walk yields the set of token-ending trie nodes it reaches (a list, a bitset over
    ``node_bit`` numbers and an order-free hash). Equal sets are found through the hash and
    confirmed on the bitsets; a new set is expanded into token bits by toggling the nodes it does
    not share with the previously expanded set, or from scratch when that is shorter (token sets
    of distinct nodes are disjoint, so distinct node sets give distinct rows); a set with a shared
    walk starts from the shared token row.

    Parameters
    ----------
    sym, depth, end, tok_ptr, tok_ids : arrays of a trie (byte or class trie).
    node_bit, n_tok_nodes : the trie's token-node numbering (see :func:`token_nodes`).
    max_depth : int
        Depth of the deepest trie node.
    sym_class : uint8[256] or uint8[num_classes]
        Maps a node symbol to the DFA's class (byte classes, or the identity for a class trie).
    table : int32[num_states, num_classes]
        Dense transitions; state 0 is dead.
    accepting : bool[num_states]
    eos_ids : int32[k]
        End-of-sequence ids, set in the rows of accepting states.
    vocab_size : int
    block, n_blocks :
        States of one block allow the same tokens; block 0 holds only the dead state. The
        identity (``arange(num_states)``) walks every state.
    order, g_ptr : the units grouped (see :func:`walk_groups`).
    g_entry : int32[n_groups]
        Shared walk of each group (an index into the ``e_*`` arrays), or -1: each unit walks alone.
    e_hash, e_node_ptr, e_nodes : int64[E], int64[E + 1], int32[...]
        Per shared walk ``e``: the hash of its token nodes; unless dense, the nodes themselves
        (``e_nodes[e_node_ptr[e]:e_node_ptr[e + 1]]``, ascending).
    e_dense, e_bits, e_rows : int32[E], uint32[D, nw], uint32[D, n_words]
        Per shared walk: -1, or ``d`` when dense: ``e_bits[d]`` and ``e_rows[d]`` are the node
        bitset and token row of its token nodes.
    e_sk_ptr, e_sk_node, e_sk_depth, e_sk_exit :
        Per shared walk ``e``: its skeleton is ``e_sk_*[e_sk_ptr[e]:e_sk_ptr[e + 1]]``.
    max_visited : int
        Give up once this many trie nodes have been visited (-1: never), or once an eighth of
        that has been visited by 8 states or more at a pace that would pass twice as many
        over all states, returning empty rows and ``visited = -1``; the caller may then walk a
        smaller trie.

    Returns
    -------
    rows : uint32[num_rows, n_words]
        Distinct packed bitmask rows (bit ``i % 32`` of word ``i // 32``); row 0 is empty. Rows are
        numbered by first use in state order, then the finished row.
    state_row : int32[num_states]
        Row of each state.
    finished_row : int
        Row allowing only the EOS ids (for finished sequences).
    visited : int
        Trie nodes visited in total here (a cost measure), or -1 if ``max_visited`` was reached.

    It is :func:`walk_sets` over every group, then :func:`number_rows`.
    """
    n_groups = g_ptr.shape[0] - 1
    spans = np.empty((n_groups, 3), dtype=np.int64)
    for g in range(n_groups):
        spans[g, 0] = g
        spans[g, 1] = g_ptr[g]
        spans[g, 2] = g_ptr[g + 1]
    block_set, trows, set_hash, n_sets, visited = walk_sets(
        sym, depth, end, tok_ptr, tok_ids, node_bit, n_tok_nodes, max_depth, sym_class, table,
        vocab_size, block, n_blocks, order, spans, g_entry, e_hash, e_node_ptr, e_nodes,
        e_dense, e_bits, e_rows, e_sk_ptr, e_sk_node, e_sk_depth, e_sk_exit, max_visited)
    if visited < 0:
        return (np.zeros((0, (vocab_size + 31) // 32), dtype=np.uint32),
                np.zeros(table.shape[0], dtype=np.int32), 0, visited)
    # (no second part: its arrays are the first's, not read)
    rows, state_row, finished_row = number_rows(block, accepting, eos_ids, vocab_size, block_set,
                                                trows, set_hash, n_sets, block_set, trows,
                                                set_hash, np.int64(0))
    return rows, state_row, finished_row, visited


@njit(cache=True, nogil=True)
def walk_sets(sym, depth, end, tok_ptr, tok_ids, node_bit, n_tok_nodes, max_depth, sym_class,
              table, vocab_size, block, n_blocks, order, spans, g_entry, e_hash,
              e_node_ptr, e_nodes, e_dense, e_bits, e_rows, e_sk_ptr, e_sk_node, e_sk_depth,
              e_sk_exit, max_visited):
    """The walks of :func:`walk_masks` of some units only, their rows not yet numbered:
    ``(block_set, trows, set_hash, n_sets, visited)``. ``spans`` (int64[k, 3]) lists them as
    ``(group, lo, hi)``: the units ``order[lo:hi]`` of that group (all of them or a part, each
    unit in one span).

    ``block_set[b]`` is the token set of the states of block ``b``: 0 (the empty set) for the
    dead state's block, -1 for a block no span holds. ``trows[i]`` is set ``i``'s token row
    (EOS not set) and ``set_hash[i]`` the hash of its trie nodes, for the ``n_sets`` sets
    found. ``visited`` is -1 where ``max_visited`` was reached (over these units).

    The GIL is released: calls over disjoint units run at once in threads, and
    :func:`number_rows` numbers their sets as one walk's.
    """
    n_words = (vocab_size + 31) // 32
    n_nodes = sym.shape[0]
    stack = np.zeros(max_depth + 1, dtype=np.int32)
    nw = max((n_tok_nodes + 31) // 32, 1)
    cur_list = np.empty(max(n_tok_nodes, 1), dtype=np.int32)   # trie nodes reached
    prev_list = np.empty(max(n_tok_nodes, 1), dtype=np.int32)  # those of the last expanded set
    # (counts handed to other kernels as np.int64, not literals: see the module docstring)
    n_prev = np.int64(-1)                                       # -1: row not from prev_list
    prev_set = 0
    cur_bits = np.zeros(nw, dtype=np.uint32)
    row = np.zeros(n_words, dtype=np.uint32)                    # token row of prev_list
    # distinct node sets: hash table -> set id; each set's bitset kept to confirm hash hits
    ht_size = 8
    while ht_size < 2 * (n_blocks + 2):
        ht_size *= 2
    ht_hash = np.zeros(ht_size, dtype=np.int64)
    ht_set = np.full(ht_size, -1, dtype=np.int32)
    cap = min(n_blocks + 1, 1024)   # grown when needed (np.empty: untouched rows cost nothing)
    # each set's non-zero words, set_lo..set_hi - 1, kept end to end from set_off on (a dense
    # bitset per set would be zeroed in full up front: 16 MB for 1,024 sets of 128k tokens)
    set_words = np.empty(4 * nw, dtype=np.uint32)
    set_off = np.zeros(cap, dtype=np.int64)
    n_words_kept = 0
    prev_bits = np.zeros(nw, dtype=np.uint32)                   # the bitset of prev_list
    set_lo = np.zeros(cap, dtype=np.int32)
    set_hi = np.zeros(cap, dtype=np.int32)
    set_hash = np.zeros(cap, dtype=np.int64)
    trows = np.empty((cap, n_words), dtype=np.uint32)
    trows[0, :] = 0
    n_sets = np.int64(1)                                        # set 0: the empty set
    ht_set[0] = 0
    block_set = np.full(n_blocks, -1, dtype=np.int32)
    block_set[block[0]] = 0
    n_units = 0
    for sp in range(spans.shape[0]):
        n_units += spans[sp, 2] - spans[sp, 1]
    done = 0
    visited = 0
    for sp in range(spans.shape[0]):
        g = spans[sp, 0]
        lo = spans[sp, 1]
        hi = spans[sp, 2]
        if hi == lo:
            continue
        e = g_entry[g]
        h_in = np.int64(0)
        k_in = np.int64(0)    # sparse shared walk: its nodes are cur_list[:k_in]
        g_lo = nw     # dense shared walk: its first and last non-zero words
        g_hi = 0
        d = -1
        if e >= 0:
            h_in = e_hash[e]
            d = e_dense[e]
            if d >= 0:
                for w in range(nw):
                    x = e_bits[d, w]
                    if x:
                        cur_bits[w] |= x
                        if w < g_lo:
                            g_lo = w
                        g_hi = w + 1
            else:
                for x in range(e_node_ptr[e], e_node_ptr[e + 1]):
                    k_in, _ = _add_node(e_nodes[x], node_bit, cur_bits, cur_list, k_in)
            sk0 = e_sk_ptr[e]
            n_sk = e_sk_ptr[e + 1] - sk0
        for q in range(lo, hi):
            s = order[q]
            stack[0] = s
            if e >= 0:
                k, h, vv = _replay(n_sk, e_sk_node[sk0:], e_sk_depth[sk0:], e_sk_exit[sk0:], k_in,
                                   sym, depth, end, sym_class, table, stack, node_bit, cur_list,
                                   cur_bits)
                h += h_in
            else:
                k, h, vv = _walk_range(np.int64(1), n_nodes, sym, depth, end, sym_class, table,
                                       stack, node_bit, cur_list, np.int64(0), cur_bits)
            visited += vv
            h &= _M40
            # first and last non-zero words: cur_list[:k_in] (a sparse shared walk) and
            # cur_list[k_in:k] (this unit's nodes) are each ascending, as node_bit is
            lo = g_lo
            hi = g_hi
            if k_in > 0:
                lo = min(lo, node_bit[cur_list[0]] >> 5)
                hi = max(hi, (node_bit[cur_list[k_in - 1]] >> 5) + 1)
            if k > k_in:
                lo = min(lo, node_bit[cur_list[k_in]] >> 5)
                hi = max(hi, (node_bit[cur_list[k - 1]] >> 5) + 1)
            found, slot = _find_set(h, lo, hi, cur_bits, ht_hash, ht_set, set_words, set_off,
                                    set_lo, set_hi)
            if found < 0:
                found = n_sets
                n_sets += 1
                ht_hash[slot] = h
                ht_set[slot] = found
                if found == set_lo.shape[0]:
                    set_off = _grown_1d(set_off, found)
                    set_lo = _grown_1d(set_lo, found)
                    set_hi = _grown_1d(set_hi, found)
                    set_hash = _grown_1d(set_hash, found)
                    trows = _grown(trows, found)
                n_new = max(hi - lo, 0)
                if n_words_kept + n_new > set_words.shape[0]:
                    bigger = np.empty(max(2 * set_words.shape[0], n_words_kept + n_new),
                                      dtype=np.uint32)
                    _copy_into(bigger, set_words[:n_words_kept])
                    set_words = bigger
                if lo < hi:
                    _copy_into(set_words[n_words_kept:], cur_bits[lo:hi])
                set_off[found] = n_words_kept
                n_words_kept += n_new
                set_lo[found] = lo
                set_hi[found] = hi
                set_hash[found] = h
                if d >= 0:
                    # the shared token row plus this unit's own nodes
                    _copy_into(row, e_rows[d])
                    for x in range(k):
                        nd = cur_list[x]
                        for kk in range(tok_ptr[nd], tok_ptr[nd + 1]):
                            t = tok_ids[kk]
                            row[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
                    n_prev = np.int64(-1)
                else:
                    _expand(row, cur_list, k, cur_bits, prev_list, n_prev, prev_bits,
                            node_bit, tok_ptr, tok_ids)
                    _copy_into(prev_list, cur_list[:k])
                    n_prev = k
                _copy_into(trows[found], row)
                prev_bits[set_lo[prev_set]:set_hi[prev_set]] = 0
                if lo < hi:
                    _copy_into(prev_bits[lo:], cur_bits[lo:hi])
                prev_set = found
            block_set[block[s]] = found
            # clear this unit's own bits; the group's shared ones stay until the group is done
            _clear_bits(cur_bits, cur_list, k_in, k, node_bit)
            done += 1
            # over the limit, or bound to be: at least an eighth of it walked by 8 states or
            # more, at a pace that would pass twice the limit over all the states
            if max_visited >= 0 and (max_visited < visited or (
                    done >= 8 and 8 * visited >= max_visited
                    and visited * n_units > 2 * max_visited * done)):
                return block_set, trows, set_hash, n_sets, np.int64(-1)
        if d >= 0:
            for w in range(nw):
                cur_bits[w] &= ~e_bits[d, w]
        else:
            _clear_bits(cur_bits, cur_list, np.int64(0), k_in, node_bit)
    return block_set, trows, set_hash, n_sets, np.int64(visited)


@njit(cache=True)
def number_rows(block, accepting, eos_ids, vocab_size, block_set, trows, set_hash, n_sets,
                block_set_b, trows_b, set_hash_b, n_sets_b):
    """The rows of :func:`walk_masks` from the token sets of :func:`walk_sets`: of one call, or
    of two over disjoint groups (``n_sets_b > 0``; else the ``_b`` arrays are not read), a set of
    the second that is one of the first's (same hash, same token row: distinct sets of trie
    nodes have distinct rows) taken as that one. Returns ``(rows, state_row, finished_row)``,
    each row its set's token row plus the EOS ids where the state accepts, numbered by first use
    in state order, then the finished row."""
    num_states = block.shape[0]
    n_words = (vocab_size + 31) // 32
    # each set of the second part: the first's it equals, or one numbered on from n_sets
    of_b = np.zeros(max(n_sets_b, 1), dtype=np.int64)
    from_b = np.zeros(max(n_sets_b, 1), dtype=np.int64)   # (the second's set of each new one)
    n_all = n_sets
    if n_sets_b > 0:
        ht_size = 8
        while ht_size < 2 * n_sets:
            ht_size *= 2
        hmask = ht_size - 1
        ht_set = np.full(ht_size, -1, dtype=np.int64)
        for i in range(n_sets):
            slot = (set_hash[i] ^ (set_hash[i] >> 17)) & hmask
            while ht_set[slot] != -1:
                slot = (slot + 1) & hmask
            ht_set[slot] = i
        for j in range(n_sets_b):
            h = set_hash_b[j]
            slot = (h ^ (h >> 17)) & hmask
            found = -1
            while ht_set[slot] != -1:
                i = ht_set[slot]
                if set_hash[i] == h and _same_words(trows[i], trows_b[j]):
                    found = i
                    break
                slot = (slot + 1) & hmask
            if found < 0:
                found = n_all
                from_b[n_all - n_sets] = j
                n_all += 1
            of_b[j] = found
    has_eos = eos_ids.shape[0] > 0
    final_of = np.full((n_all, 2), -1, dtype=np.int32)
    n_rows = 1
    final_of[0, 0] = 0   # row 0: empty
    state_row = np.zeros(num_states, dtype=np.int32)
    for s in range(1, num_states):
        st = np.int64(block_set[block[s]])
        if st < 0 and n_sets_b > 0 and block_set_b[block[s]] >= 0:
            st = of_b[block_set_b[block[s]]]
        if st < 0:
            raise ValueError("number_rows: a state's group was not walked")
        acc = 1 if (accepting[s] and has_eos) else 0
        r = final_of[st, acc]
        if r < 0:
            r = n_rows
            n_rows += 1
            final_of[st, acc] = r
        state_row[s] = r
    finished_row = 0
    if has_eos:
        finished_row = final_of[0, 1]
        if finished_row < 0:
            finished_row = n_rows
            final_of[0, 1] = n_rows
            n_rows += 1
    rows = np.empty((n_rows, n_words), dtype=np.uint32)
    for st in range(n_all):
        for acc in range(2):
            r = final_of[st, acc]
            if r >= 0:
                if st < n_sets:
                    _copy_into(rows[r], trows[st])
                else:
                    _copy_into(rows[r], trows_b[from_b[st - n_sets]])
                if acc:
                    for e in eos_ids:
                        _set_bit(rows[r], e)
    return rows, state_row, finished_row


@njit(cache=True)
def _same_words(a, b):
    """Whether the 1-D arrays ``a`` and ``b`` of one length hold the same words."""
    for i in range(a.shape[0]):
        if a[i] != b[i]:
            return False
    return True


@njit(cache=True)
def _walk_token(table, byte_classes, state, tok_flat, lo, hi):
    s = state
    for j in range(lo, hi):
        s = table[s, byte_classes[tok_flat[j]]]
        if s == 0:
            return 0
    return s


@njit(cache=True)
def state_transitions(row, table, byte_classes, tok_flat, tok_off, state):
    """Allowed text tokens of one state with their next states, from its mask row.

    Parameters
    ----------
    row : uint32[n_words]
        The state's packed mask row.
    table : int32[num_states, num_classes]
    byte_classes : uint8[256]
    tok_flat : uint8[total]
        Every token's bytes, concatenated in id order.
    tok_off : int64[vocab_size + 1]
        ``tok_flat[tok_off[t]:tok_off[t + 1]]`` are token ``t``'s bytes (empty for EOS and
        special ids, which are skipped).
    state : int

    Returns
    -------
    ids : int32[k]
        Allowed token ids, ascending (EOS excluded).
    nexts : int32[k]
        The state each leads to.
    """
    n = 0
    for w in range(row.shape[0]):
        x = np.int64(row[w])
        while x != 0:
            x &= x - 1
            n += 1
    ids = np.empty(n, dtype=np.int32)
    nexts = np.empty(n, dtype=np.int32)
    k = _emit_pairs(row, state, table, byte_classes, tok_flat, tok_off, ids, nexts, 0)
    return ids[:k].copy(), nexts[:k].copy()


@njit(cache=True)
def _emit_pairs(row, state, table, byte_classes, tok_flat, tok_off, ids, nexts, k):
    """Write the text tokens set in ``row`` and the states they lead to from ``state`` into
    ``ids``/``nexts`` from position ``k`` on; returns the position after the last one."""
    for w in range(row.shape[0]):
        x = np.int64(row[w])
        while x != 0:
            low = x & (-x)
            t = w * 32 + _DEBRUIJN[((low * 0x077CB531) & 0xFFFFFFFF) >> 27]
            x ^= low
            lo = tok_off[t]
            hi = tok_off[t + 1]
            if hi == lo:
                continue
            ids[k] = t
            nexts[k] = _walk_token(table, byte_classes, state, tok_flat, lo, hi)
            k += 1
    return k


@njit(cache=True)
def csr_from_rows(rows, state_row, table, byte_classes, tok_flat, tok_off):
    """The CSR of allowed tokens and next states of every state, from the mask rows.

    Walks each allowed token's bytes from each state (see :func:`state_transitions`); used to
    materialise :attr:`TokenIndex.csr_tok` and friends on demand.

    Returns
    -------
    csr_ptr : int64[num_states + 1]
    csr_tok : int32[nnz]
        Allowed token ids of each state, ascending (EOS excluded).
    csr_next : int32[nnz]
        The state each of those tokens leads to.
    """
    num_states = table.shape[0]
    n_words = rows.shape[1]
    # text tokens per row (EOS and special ids have no bytes)
    row_count = np.zeros(rows.shape[0], dtype=np.int64)
    for r in range(rows.shape[0]):
        c = 0
        for w in range(n_words):
            x = np.int64(rows[r, w])
            while x != 0:
                low = x & (-x)
                t = w * 32 + _DEBRUIJN[((low * 0x077CB531) & 0xFFFFFFFF) >> 27]
                x ^= low
                if tok_off[t + 1] > tok_off[t]:
                    c += 1
        row_count[r] = c
    csr_ptr = np.zeros(num_states + 1, dtype=np.int64)
    for s in range(1, num_states):
        csr_ptr[s + 1] = csr_ptr[s] + row_count[state_row[s]]
    nnz = csr_ptr[num_states]
    csr_tok = np.empty(nnz, dtype=np.int32)
    csr_next = np.empty(nnz, dtype=np.int32)
    for s in range(1, num_states):
        _emit_pairs(rows[state_row[s]], s, table, byte_classes, tok_flat, tok_off, csr_tok, csr_next,
                    csr_ptr[s])
    return csr_ptr, csr_tok, csr_next


@njit(cache=True)
def walk_bytes(table, byte_classes, state, data):
    """Follow ``data`` (uint8 array) from ``state``; returns the state reached, 0 if it dies."""
    s = state
    for i in range(data.shape[0]):
        s = table[s, byte_classes[data[i]]]
        if s == 0:
            return 0
    return s


@njit(cache=True)
def copy_rows(rows, row_ids, out_idx, out):
    """``out[out_idx[i]] = rows[row_ids[i]]`` for every ``i``; ``row_ids[i] < 0``: all bits set."""
    n_words = out.shape[1]
    for i in range(row_ids.shape[0]):
        r = row_ids[i]
        o = out_idx[i]
        if r < 0:
            for w in range(n_words):
                out[o, w] = -1
        else:
            for w in range(n_words):
                out[o, w] = rows[r, w]
