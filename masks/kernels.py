"""Numba kernels: the only module in tokenfsm that imports numba.

Every kernel takes plain NumPy arrays and scalars and returns plain arrays, is compiled with
``@njit(cache=True)`` and stays ordinary Python, so the whole test-suite also runs with
``NUMBA_DISABLE_JIT=1``. Validation and object handling live in the calling modules
(:mod:`.trie`, :mod:`.index`, :mod:`.matcher`); kernels trust their inputs.

The kernels:

* :func:`build_trie` lays a sorted list of byte strings out as a DFS-flattened trie (per node: the
  byte on its incoming edge, its depth and the end of its subtree).
* :func:`build_class_trie` merges that trie over a DFA's byte classes: tokens that the DFA cannot
  tell apart share one path, and every DFA state walks the smaller trie.
* :func:`refine_states` groups the DFA's states that no string as long as the longest token tells
  apart (Moore's refinement, cut at that length): such states allow the same tokens.
* :func:`walk_masks` walks a trie through the byte DFA once per group of states, skipping a subtree
  as soon as the walk reaches the dead state, and produces deduplicated packed bitmask rows. It
  emits no per-token data: a row is all a mask needs.
* :func:`state_transitions`, :func:`csr_from_rows` recover the next states of allowed tokens from
  the rows by walking each token's bytes (one state, or the whole CSR table on demand).
* :func:`walk_bytes`, :func:`copy_rows`: small helpers for the matcher.

Example
-------
>>> import numpy as np
>>> from tokenfsm.masks import kernels
>>> flat = np.frombuffer(b"aab", dtype=np.uint8); offsets = np.array([0, 1, 3], dtype=np.int64)
>>> sym, depth, end, key = kernels.build_trie(flat, offsets)   # "a", "ab"
>>> list(sym[1:]), list(depth), list(end), list(key)
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
    "walk_masks",
    "state_transitions",
    "csr_from_rows",
    "walk_bytes",
    "copy_rows",
]

_HASH_MASK = (1 << 40) - 1
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
def _row_insert(row, rows, count, ht_hash, ht_row, n_words):
    """Find ``row`` among ``rows[:count]`` through the hash table, or append it.

    Returns ``(row id, rows, count)``; ``rows`` may be reallocated. The table (``ht_hash``,
    ``ht_row``, a power of two in size) must have room for every row that will be inserted.
    """
    h = np.int64(17)
    for w in range(n_words):
        h = ((h * 1000003) ^ np.int64(row[w])) & _HASH_MASK
    hmask = ht_hash.shape[0] - 1
    slot = (h ^ (h >> 20)) & hmask
    while ht_row[slot] != -1:
        if ht_hash[slot] == h:
            r = ht_row[slot]
            same = True
            for w in range(n_words):
                if rows[r, w] != row[w]:
                    same = False
                    break
            if same:
                return r, rows, count
        slot = (slot + 1) & hmask
    if count == rows.shape[0]:
        bigger = np.zeros((rows.shape[0] * 2, n_words), dtype=np.uint32)
        bigger[:count] = rows[:count]
        rows = bigger
    rows[count, :] = row
    ht_hash[slot] = h
    ht_row[slot] = count
    return count, rows, count + 1


@njit(cache=True)
def _popcount(x):
    """Set bits of a 32-bit word."""
    v = np.int64(x) & 0xFFFFFFFF
    v = v - ((v >> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
    return (((v + (v >> 4)) & 0x0F0F0F0F) * 0x01010101 & 0xFFFFFFFF) >> 24


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
    n, c = table.shape
    block = np.ones(n, dtype=np.int32)
    block[0] = 0
    n_blocks = 2 if n > 1 else 1
    size = 8
    while size < 2 * n + 2:
        size *= 2
    hmask = size - 1
    ht_key = np.zeros(size, dtype=np.int64)
    ht_rep = np.full(size, -1, dtype=np.int32)
    new_block = np.empty(n, dtype=np.int32)
    rep_of = np.empty(n, dtype=np.int32)
    for _ in range(rounds):
        ht_rep[:] = -1
        count = 0
        for s in range(n):
            h = np.int64(block[s]) + 1
            for k in range(c):
                h = ((h * 1000003) ^ np.int64(block[table[s, k]])) & _HASH_MASK
            slot = (h ^ (h >> 20)) & hmask
            while True:
                r = ht_rep[slot]
                if r == -1:
                    ht_rep[slot] = s
                    ht_key[slot] = h
                    new_block[s] = count
                    rep_of[count] = s
                    count += 1
                    break
                if ht_key[slot] == h and block[r] == block[s]:
                    same = True
                    for k in range(c):
                        if block[table[r, k]] != block[table[s, k]]:
                            same = False
                            break
                    if same:
                        new_block[s] = new_block[r]
                        break
                slot = (slot + 1) & hmask
        stable = count == n_blocks
        block[:] = new_block
        n_blocks = count
        if stable:
            break
    return block, n_blocks


@njit(cache=True)
def walk_masks(sym, depth, end, tok_ptr, tok_ids, sym_class, table, accepting, eos_ids,
               vocab_size, block, n_blocks):
    """Packed token masks of every state of a byte DFA: one trie walk per block of states.

    A walk records which token-ending trie nodes it reaches (one bit per node, not per token); only
    a set of nodes not seen before is expanded into token bits, so states whose walks end alike
    (many of them, in free text) pay for the walk but not for the row.

    Parameters
    ----------
    sym, depth, end, tok_ptr, tok_ids : arrays of a trie (byte or class trie).
    sym_class : uint8[256] or uint8[num_classes]
        Maps a node symbol to the DFA's class (byte classes, or the identity for a class trie).
    table : int32[num_states, num_classes]
        Dense transitions; state 0 is dead.
    accepting : bool[num_states]
    eos_ids : int32[k]
        End-of-sequence ids, set in the rows of accepting states.
    vocab_size : int
    block, n_blocks :
        States grouped so that states of one block allow the same tokens (see
        :func:`refine_states`); block 0 holds only the dead state. The identity grouping
        (``arange(num_states)``) walks every state.

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
        Trie nodes visited in total (a cost measure).
    """
    num_states = table.shape[0]
    n_words = (vocab_size + 31) // 32
    n_nodes = sym.shape[0]
    max_depth = 0
    for i in range(n_nodes):
        if depth[i] > max_depth:
            max_depth = depth[i]
    stack = np.zeros(max_depth + 1, dtype=np.int32)
    row = np.zeros(n_words, dtype=np.uint32)
    # nodes that end tokens, numbered: a walk first records the set of such nodes it reaches
    node_bit = np.full(n_nodes, -1, dtype=np.int32)
    n_tok_nodes = 0
    for i in range(n_nodes):
        if tok_ptr[i + 1] > tok_ptr[i]:
            node_bit[i] = n_tok_nodes
            n_tok_nodes += 1
    bit_node = np.empty(max(n_tok_nodes, 1), dtype=np.int32)
    for i in range(n_nodes):
        if node_bit[i] >= 0:
            bit_node[node_bit[i]] = i
    n_node_words = max((n_tok_nodes + 31) // 32, 1)
    node_row = np.zeros(n_node_words, dtype=np.uint32)
    prev_node_row = np.zeros(n_node_words, dtype=np.uint32)  # node set of ``row``
    ht_size = 8
    while ht_size < 2 * (num_states + n_blocks + 2):
        ht_size *= 2
    # distinct node sets; each one's token row (no EOS) is expanded once
    n_hash = np.zeros(ht_size, dtype=np.int64)
    n_row = np.full(ht_size, -1, dtype=np.int32)
    nrows = np.zeros((8, n_node_words), dtype=np.uint32)
    n_nrows = 0
    nrow_trow = np.full(n_blocks + 1, -1, dtype=np.int32)
    t_hash = np.zeros(ht_size, dtype=np.int64)
    t_row = np.full(ht_size, -1, dtype=np.int32)
    trows = np.zeros((8, n_words), dtype=np.uint32)
    n_trows = 0
    block_trow = np.full(n_blocks, -1, dtype=np.int32)
    tr, trows, n_trows = _row_insert(row, trows, n_trows, t_hash, t_row, n_words)
    block_trow[block[0]] = tr  # the dead state allows nothing
    visited = 0
    for s in range(1, num_states):
        b = block[s]
        if block_trow[b] >= 0:
            continue
        stack[0] = s
        i = 1
        while i < n_nodes:
            visited += 1
            ns = table[stack[depth[i] - 1], sym_class[sym[i]]]
            if ns == 0:
                i = end[i]
                continue
            stack[depth[i]] = ns
            j = node_bit[i]
            if j >= 0:
                node_row[j >> 5] |= np.uint32(1) << np.uint32(j & 31)
            i += 1
        before = n_nrows
        nr, nrows, n_nrows = _row_insert(node_row, nrows, n_nrows, n_hash, n_row, n_node_words)
        if n_nrows > before:
            # a new set of nodes: expand it to token bits, from scratch or, when fewer nodes
            # differ, by toggling the differing nodes' tokens in the previous row (the token sets
            # of distinct nodes are disjoint)
            n_set = 0
            n_diff = 0
            for w in range(n_node_words):
                n_set += _popcount(node_row[w])
                n_diff += _popcount(node_row[w] ^ prev_node_row[w])
            if n_diff < n_set:
                for w in range(n_node_words):
                    prev_node_row[w] ^= node_row[w]  # the differing nodes
            else:
                row[:] = 0
                prev_node_row[:] = node_row
            for w in range(n_node_words):
                x = np.int64(prev_node_row[w])
                while x != 0:
                    low = x & (-x)
                    node = bit_node[w * 32 + _DEBRUIJN[((low * 0x077CB531) & 0xFFFFFFFF) >> 27]]
                    x ^= low
                    for k in range(tok_ptr[node], tok_ptr[node + 1]):
                        t = tok_ids[k]
                        row[t >> 5] ^= np.uint32(1) << np.uint32(t & 31)
            prev_node_row[:] = node_row
            tr, trows, n_trows = _row_insert(row, trows, n_trows, t_hash, t_row, n_words)
            nrow_trow[nr] = tr
        block_trow[b] = nrow_trow[nr]
        node_row[:] = 0
    row[:] = 0
    # final rows: token row plus EOS bits where the state accepts, in state order
    ht_hash = np.zeros(ht_size, dtype=np.int64)
    ht_row = np.full(ht_size, -1, dtype=np.int32)
    rows = np.zeros((8, n_words), dtype=np.uint32)
    n_rows = 0
    final_of = np.full((n_trows, 2), -1, dtype=np.int32)
    state_row = np.zeros(num_states, dtype=np.int32)
    r, rows, n_rows = _row_insert(row, rows, n_rows, ht_hash, ht_row, n_words)  # empty row: 0
    for s in range(1, num_states):
        tr = block_trow[block[s]]
        acc = 1 if accepting[s] else 0
        if final_of[tr, acc] < 0:
            row[:] = trows[tr]
            if acc:
                for e in eos_ids:
                    row[e >> 5] |= np.uint32(1) << np.uint32(e & 31)
            r, rows, n_rows = _row_insert(row, rows, n_rows, ht_hash, ht_row, n_words)
            final_of[tr, acc] = r
        state_row[s] = final_of[tr, acc]
    row[:] = 0
    for e in eos_ids:
        row[e >> 5] |= np.uint32(1) << np.uint32(e & 31)
    finished_row, rows, n_rows = _row_insert(row, rows, n_rows, ht_hash, ht_row, n_words)
    return rows[:n_rows].copy(), state_row, finished_row, visited


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
