r"""The token index: for every state of a byte DFA, which tokens may come next and where they lead.

``TokenIndex.build(dfa, vocab)`` walks the vocabulary's token trie through the byte DFA (a Numba
kernel, :func:`.kernels.walk_masks`) and keeps only what a sampling loop reads on every step:

* packed ``int32`` bitmask rows in the xgrammar / vLLM layout (bit ``i % 32`` of word ``i // 32``),
  stored once per distinct row: ``mask_rows[state_row[s]]`` is the mask of state ``s``, EOS bits
  included where ``s`` accepts, so filling a mask is one row copy; ``finished_row`` allows only EOS;
* the byte DFA itself (classes, table, accepting) and the byte forced in each state.

Lean layout, and why. A free-text state (a JSON string body, ``[\s\S]{0,256}``) allows nearly the
whole vocabulary; storing an entry (token, next state) per allowed pair costs ``states x vocab``
entries (hundreds of millions, gigabytes, tens of seconds to build) for a table nobody reads in the
hot loop. The next state of a token is instead computed when needed, by walking the token's few
bytes through the DFA: a handful of table lookups, cheaper than a binary search in a CSR row. The
build itself walks the trie once per group of states that no string as long as the longest token
tells apart (:func:`.kernels.refine_states`): the states of a length-bounded string that are more
than a token's length from their bound all share one walk. (Where the walks it would spare are
short, as a few of them predict, each state walks on its own: :data:`GROUP_MIN_VISITS`.) Where the
counts of such strings make many groups, the tokens are walked in bands of length
(:data:`SPLIT_LENGTHS`), each with the groups no string of its longest token tells apart: the
counts more than 6 characters from their bound walk the tokens of up to 6 bytes once for all of
them, and only the longer tokens count by count (``format: email``, ``maxLength: 64``: 2.5-4 times
faster to index). Likewise the tokens free of JSON's quote, separators, brackets and backslash
(:data:`SPLIT_BYTES`) are walked apart from the few holding one where that spares long walks: the
counts of a ``minLength`` string differ only on tokens that close it, and walk the rest of the
vocabulary once for all of them. Over those tokens a string body tells apart a dozen byte classes
of its schema's fifty: states whose walks tell apart few classes walk the trie merged over theirs
(:func:`_class_views`), which is the same in every schema and so built once per vocabulary. A
count's copy of a string body is found as a shift from one copy to the next
(:func:`.kernels.shift_chains`): where the copies are many, one walk of the first gives the rows of
all (:func:`.kernels.chain_rows`), a token allowed from the copy ``j`` counts on when its walk
leaves room for ``j`` more, so that a ``maxLength: 64`` string is walked once rather than 64 times
(:data:`CHAIN_MIN_COPIES`). States whose walks agree until they leave their strongly connected
component (:func:`.kernels.relaxed_blocks`: the string bodies of a schema's string properties,
which differ only after the closing quote) share the walk up to their exits, so a free-text body is
walked in full once per schema, not once per property. Walks are shared by *region*
(:func:`_regions`: strongly connected components, with JSON's separators and brackets ignored, so
that a string body is a region of its own even inside an array of objects), and a region's walk is
kept per vocabulary in the trie's :class:`~.trie.WalkCache`, keyed by the region's canonical form
(:func:`.kernels.component_signatures`): the JSON string body, common to almost every schema, is
walked once per vocabulary and process, like the trie is built once. The first build in a process
pays for that walk (about one pass over the vocabulary's trie); ``build_info["kept_walks"]`` counts
the walks a build took from the cache, and ``build_info["visited"]`` the trie nodes it walked
itself. Where the process may run on two CPUs, the groups of states of a band of many are walked
in two halves at once, one in a second thread (:data:`GROUP_WALKS`, ``threads``), and the sets of
both numbered as one walk's.

The per-pair table is still there for those who want it: ``csr_ptr``, ``csr_tok`` and ``csr_next``
(``csr_tok[csr_ptr[s]:csr_ptr[s + 1]]`` are the text tokens allowed in ``s``, ascending, and
``csr_next`` the states they lead to) are built from the rows on first access
(:func:`.kernels.csr_from_rows`); :meth:`TokenIndex.transitions` gives one state's pairs alone.

Only tokens that leave the DFA in a live state are allowed; EOS is allowed exactly in accepting
states. An index is immutable (its arrays are read-only) and may be shared across threads. Saved
files hold the rows, not the CSR, and are read within limits and checked in full before use
(:mod:`.index_file`, format version 3; files of earlier versions are refused with a clear error:
rebuild them).

Example
-------
>>> from tokenfsm.masks import Vocabulary, TokenIndex, Matcher
>>> vocab = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
>>> index = TokenIndex.build(byte_dfa_of_ab_star, vocab)           # doctest: +SKIP
>>> index.allowed_token_ids(index.start).tolist()                   # doctest: +SKIP
[0, 2]

The per-state walk of a token trie is outlines-core's ``Index``; storing each distinct mask once
follows xgrammar's adaptive token mask cache; grouping states by behaviour up to a length is
Moore's partition refinement, stopped after as many rounds as the longest token has bytes.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from tokenfsm.automata.arrays import unique_rows
from tokenfsm.automata.errors import OptionError

from . import kernels
from .errors import CorruptIndexError
from .index_file import FORMAT_VERSION, MAX_INDEX_BYTES, read_index_file, write_index_file
from .trie import token_trie
from .vocab import Vocabulary

__all__ = ["TokenIndex", "FORMAT_VERSION", "as_byte_dfa", "ByteTables"]

#: Refinement rounds allowed to :func:`.kernels.relaxed_blocks` before walks go unshared.
RELAXED_MAX_ROUNDS = 1024
#: Regions (see :func:`_regions`) of more states than this are walked for each build, not kept
#: in the trie's :class:`~.trie.WalkCache` (their canonical form would cost more than it saves).
MAX_SIGNATURE_STATES = 64
#: States are grouped (:func:`.kernels.refine_states`, and the bands below, which need the groups),
#: and counted repetitions looked for (:data:`CHAIN_MIN_COPIES`), only where walking each state
#: outside cycles on its own would visit this many trie nodes or more in all, as
#: :func:`_walks_long` predicts from the walks of a few states:
#: below, the refinement and the search cost more than the walks they spare (a schema's keys, whose
#: states the refinement tells apart anyway). Tables of fewer than :data:`GROUP_MIN_STATES` states
#: are grouped without asking (their refinement costs less than the question). Over the dev
#: corpora's 333 flat automata of at most 5,000 states (Llama-3, warm, the default strategy)
#: indexing went from 2,256 to 2,190 ms in all; 71 were asked: the 47 then walked state by state
#: took 0.2-5.0 ms less each (Kubernetes kb_1030: 11.5 -> 8.7 ms), the 24 still grouped about
#: 0.7 ms more (the question).
GROUP_MIN_VISITS = 1 << 20
GROUP_SAMPLES = 16
GROUP_MIN_STATES = 512
#: Tokens are walked in bands of length split at these many bytes (see :meth:`TokenIndex.build`)
#: where the automaton has :data:`SPLIT_MIN_GROUPS` groups of states outside cycles or more and
#: the walks of :data:`SPLIT_SAMPLES` of them, spread over them, predict :data:`SPLIT_MIN_VISITS`
#: trie nodes visited or more in all: below, the other bands' preparation costs more than the
#: walks save. Over the dev corpora's 342 flat automata (Llama-3) indexing went from 5.7 s to
#: 3.9 s in all, the 319 indexed in under 30 ms unchanged; Github_easy o12176 (``format: email``
#: and ``uri``) 776 -> 219 ms, Github_trivial o13272 (``maxLength: 64``) 141 -> 55 ms.
SPLIT_LENGTHS = (6, 12)
SPLIT_SAMPLES = 16
SPLIT_MIN_VISITS = 1 << 21
SPLIT_MIN_GROUPS = 256
#: Tokens holding one of these bytes (JSON's quote, separators, brackets, and the backslash that
#: starts an escape) are walked apart from the others where the others tell apart fewer groups of
#: states or few byte classes, and the walks that spares or makes cheap, as
#: :data:`SPLIT_BYTES_SAMPLES` of them predict, visit :data:`SPLIT_BYTES_MIN_VISITS` trie nodes
#: or more (see :func:`_bands`): below, walking the 4,134 Llama-3 tokens that hold one apart
#: costs more than it saves (Kubernetes kb_0: 7.4 -> 9.8 ms when forced).
SPLIT_BYTES = b'",:[]{}\\'
SPLIT_BYTES_MIN_VISITS = 1 << 20
SPLIT_BYTES_SAMPLES = 64
#: Groups of states whose walks tell apart at most :data:`LOCAL_MAX_CLASSES` byte classes (and
#: at most half of all) are walked apart over a trie merged over those (see :func:`_class_views`),
#: in sets of at least :data:`LOCAL_MIN_UNITS` groups: a trie over more classes is about as large
#: as the whole one (Llama-3, the tokens free of :data:`SPLIT_BYTES`: 12 classes 6,752 nodes, 21
#: classes 74,096, 53 classes 173,988), and a set of fewer groups spares less than its walk costs.
LOCAL_MIN_UNITS = 16
LOCAL_MAX_CLASSES = 16
#: ``strategy="auto"`` walks the byte trie, and moves to the class-merged trie once the walks
#: have visited this many times the byte trie's size.
AUTO_BYTE_WALK_PASSES = 8
#: Counted repetitions unrolled into the automaton (a ``maxLength`` string: a copy of its body
#: per count) whose orbits are at least this many copies long, the longest and on the whole, get
#: their rows from one walk of their first copy (:func:`.kernels.shift_chains`,
#: :func:`.kernels.chain_rows`) rather than a walk per count, which near the bound no grouping
#: of states spares: every count there allows other tokens. Over the dev corpora's 342 flat
#: automata (Llama-3, warm) indexing went from 3.19 s to 3.09 s in all; Github_trivial o10020
#: (``maxLength: 12`` under a pattern) 23.9 -> 5.5 ms, o13272 (``maxLength: 64``) 31.2 ->
#: 13.9 ms. Of 4, 8, 12 and 16 copies, 12 spared most: shorter orbits lose where the walks of
#: their counts are short anyway (the labels of an e-mail address, walked over few classes).
CHAIN_MIN_COPIES = 12
#: An orbit of at least this many copies has its walk over the tokens free of
#: :data:`SPLIT_BYTES` made over a trie merged over the classes it tells apart, made for it if
#: need be (once per vocabulary and class map); a shorter one takes such a trie only where it is
#: already made, else walks the bytes.
CHAIN_TRIE_COPIES = 32
#: The search for those repetitions stops after this many times the table's cells in class
#: comparisons (a table without any costs about one pass).
CHAIN_WORK_PER_CELL = 8

#: A band's groups of states are walked in two halves at once (see :data:`GROUP_WALKS`) where it
#: has this many units or more and the build may use two threads: below, handing half of them
#: to the second thread costs about what it saves.
HALVES_MIN_UNITS = 256


def _cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


#: Threads a build uses unless told (``threads``): two where the process may run on two CPUs.
WALK_THREADS = min(2, _cpus())
#: The relaxed blocks of an automaton of this many states or more are made in the second thread
#: (see :func:`_relaxed_later`): handing them over costs about 0.1 ms, what they cost at a few
#: hundred states (Kubernetes kb_1041, 2,195 states: 1.0 ms).
RELAXED_APART_MIN_STATES = 1024

_ARRAY_FIELDS = (
    "byte_classes", "table", "accepting", "mask_rows", "state_row", "forced_byte", "eos_ids",
)


def _flat_view(a: np.ndarray) -> memoryview:
    """A 1-D ``int32`` memoryview over a C-contiguous int32 array (Python ints on indexing)."""
    return memoryview(np.ascontiguousarray(a, dtype=np.int32).reshape(-1)).cast("B").cast("i")


def _automaton_error(msg: str) -> Exception:
    try:
        from tokenfsm.automata.errors import AutomatonError
    except Exception:  # noqa: BLE001 - the automata package may be mid-rewrite
        AutomatonError = ValueError  # noqa: N806
    return AutomatonError(msg)


@dataclass(frozen=True)
class ByteTables:
    """A validated byte DFA as plain arrays (see :func:`as_byte_dfa`)."""

    byte_classes: np.ndarray  # uint8[256]
    table: np.ndarray  # int32[num_states, num_classes], state 0 dead
    accepting: np.ndarray  # bool[num_states]
    start: int


def as_byte_dfa(obj) -> ByteTables:
    """Validate a byte DFA (or a DFA with ``to_bytes()``, or an object with ``.dfa``).

    States that cannot reach acceptance are redirected to the dead state 0, so a token is allowed
    only if it can still be completed, even for an automaton that was not pruned.

    Parameters
    ----------
    obj : ByteDFA, DFA or compiled schema
        Anything with ``byte_classes``, ``table``, ``accepting`` and ``start``; or with
        ``to_bytes()`` returning one (a compiled schema lowers a large composition as it is,
        without minimising it first); or with a ``dfa`` attribute that is one of those.

    Returns
    -------
    ByteTables
    """
    if isinstance(obj, ByteTables):
        return obj
    if getattr(obj, "recursive", None) is not None and getattr(obj, "_dfa", True) is None:
        raise TypeError("this schema took the stack route (its unrolled automaton is large): index "
                        "it with PushdownIndex(compiled.recursive.to_bytes(), vocab) or "
                        "IndexCompiler(vocab).json_schema(schema); TokenIndex.build(compiled.dfa, "
                        "vocab) expands it into one DFA first (under the budget)")
    if not hasattr(obj, "table") and hasattr(obj, "to_bytes"):
        obj = obj.to_bytes()     # (a compiled schema's: its composition lowered as it is)
    if not hasattr(obj, "table") and hasattr(obj, "dfa"):
        obj = obj.dfa
    if not hasattr(obj, "table") and hasattr(obj, "to_bytes"):
        obj = obj.to_bytes()
    for attr in ("byte_classes", "table", "accepting", "start"):
        if not hasattr(obj, attr):
            raise TypeError(f"{type(obj).__name__} is not a byte DFA (no {attr!r})")
    classes, table, accepting, start = _checked_byte_tables(obj)
    live = _coreachable(table, accepting)
    if not live[1:].all():
        table = np.where(live[table], table, 0)
        accepting = accepting & live
        if not live[start]:
            start = 0
    # (the table copied once, writeable, as the kernels are typed for, and apart from the
    # caller's array; accepting is a copy already)
    return ByteTables(classes.astype(np.uint8), np.array(table, dtype=np.int32, order="C"),
                      accepting, start)


def _checked_byte_tables(obj) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``obj``'s byte classes, table, accepting flags and start, checked: 256 classes within the
    table, targets within the states, state 0 dead, ``accepting`` one bool per state."""
    classes = np.asarray(obj.byte_classes)
    table = np.asarray(obj.table)
    accepting = np.asarray(obj.accepting)
    if classes.shape != (256,) or not np.issubdtype(classes.dtype, np.integer):
        raise _automaton_error(f"byte_classes must be an integer array of shape (256,), not {classes.shape}")
    if table.ndim != 2 or table.shape[0] < 1 or not np.issubdtype(table.dtype, np.integer):
        raise _automaton_error(f"table must be a 2-D integer array with the dead state 0, not {table.shape}")
    n, c = table.shape
    if classes.min() < 0 or classes.max() >= c or c > 256:
        raise _automaton_error(f"byte_classes refer to classes outside 0..{c - 1}")
    if table.size and (table.min() < 0 or table.max() >= n):
        raise _automaton_error(f"table refers to states outside 0..{n - 1}")
    if np.any(table[0] != 0):
        raise _automaton_error("state 0 must be dead (its row all zeros)")
    if accepting.shape != (n,):
        raise _automaton_error(f"accepting must have shape ({n},), not {accepting.shape}")
    accepting = accepting.astype(bool)
    if accepting[0]:
        raise _automaton_error("the dead state 0 cannot be accepting")
    start = int(obj.start)
    if not 0 <= start < n:
        raise _automaton_error(f"start state {start} is outside 0..{n - 1}")
    return classes, table, accepting, start


def _coreachable(table: np.ndarray, accepting: np.ndarray) -> np.ndarray:
    """States from which an accepting state can be reached (state 0 never)."""
    return kernels.coreachable(np.ascontiguousarray(table, dtype=np.int32),
                               np.ascontiguousarray(accepting, dtype=np.bool_))


def _forced_bytes(bt: ByteTables) -> np.ndarray:
    """Per state: the only byte leading to a live state, if exactly one and not accepting; else -1."""
    return kernels.forced_bytes(bt.table, bt.byte_classes, bt.accepting)


#: Bytes whose transitions :func:`_regions` ignores when they are a byte class of their own.
REGION_CUT_BYTES = b",:[]{}"


def _regions(bt: ByteTables) -> np.ndarray:
    """The *regions* walks are shared and kept by: the strongly connected components of the byte
    DFA without its transitions on JSON's separators and brackets (:data:`REGION_CUT_BYTES`,
    where one is a byte class of its own).

    Every cycle through a JSON document's structure passes through a comma (the next item or
    property) or a bracket, so a free-text body (a JSON string body with its escapes and UTF-8
    continuation states) is a region of its own, left on the closing quote, also where it lies on
    a cycle through the rest of the document (the strings of an array of objects). Its walk is
    then the same in every schema: kept in the trie's :class:`~.trie.WalkCache`, it is walked
    once per vocabulary. Any partition would be correct (walks are shared within a region and
    replayed past its exits); this one isolates what repeats across schemas.
    """
    return kernels.cut_components(bt.table, _region_cut(bt.byte_classes, bt.table.shape[1]))[0]


def _region_cut(byte_classes: np.ndarray, n_classes: int) -> np.ndarray:
    """The classes :func:`_regions` cuts: those of :data:`REGION_CUT_BYTES` that hold that byte
    alone (``bool[n_classes]``)."""
    csize = np.bincount(byte_classes, minlength=n_classes)
    cut = np.zeros(n_classes, dtype=bool)
    for b in REGION_CUT_BYTES:
        if csize[byte_classes[b]] == 1:
            cut[byte_classes[b]] = True
    return cut


def _shared_walks(walk, groups, sig_ptr, sig, order, g_ptr, node_bit, n_tok_nodes, max_depth,
                  sym_class, table, comp, vocab_size):
    """The shared walk of each group in ``groups`` (see :func:`.kernels.walk_masks`), from the
    trie's :class:`~.trie.WalkCache` when an automaton with the same component signature was
    indexed before, else walked now (and kept).

    Returns ``(g_entry, entries, nodes visited now, entries taken from the cache)``."""
    g_entry = np.full(g_ptr.shape[0] - 1, -1, dtype=np.int32)
    entries: list = []
    by_key: dict = {}
    visited = 0
    kept = 0
    cache = walk.walk_cache
    for g in groups:
        lo, hi = int(sig_ptr[g]), int(sig_ptr[g + 1])
        key = sig[lo:hi].tobytes() if hi > lo else None
        e = by_key.get(key) if key is not None else None
        if e is None:
            entry = cache.get(key) if key is not None else None
            if entry is None:
                entry = kernels.component_walk(
                    int(order[g_ptr[g]]), walk.sym, walk.depth, walk.end, walk.tok_ptr,
                    walk.tok_ids, node_bit, n_tok_nodes, max_depth, sym_class, table, comp,
                    vocab_size)
                h, bits, row, sk_node, sk_depth, sk_exit, vv, nodes = entry
                visited += int(vv)
                # dense (most of the vocabulary): kept as bitset and token row; else as a list
                if nodes.shape[0] >= bits.shape[0]:
                    entry = (h, bits, row, sk_node, sk_depth, sk_exit, vv, None)
                else:
                    entry = (h, None, None, sk_node, sk_depth, sk_exit, vv, nodes)
                if key is not None:
                    cache.put(key, entry)
            else:
                kept += 1
            e = len(entries)
            entries.append(entry)
            if key is not None:
                by_key[key] = e
        g_entry[g] = e
    return g_entry, entries, visited, kept


def _entry_arrays(entries: list, n_tok_nodes: int, vocab_size: int) -> tuple:
    """The shared walks as the flat ``e_*`` arrays of :func:`.kernels.walk_masks`."""
    nw = max((n_tok_nodes + 31) // 32, 1)
    n_words = (vocab_size + 31) // 32
    n = len(entries)
    e_hash = np.array([e[0] for e in entries], dtype=np.int64)
    dense = [e for e in entries if e[1] is not None]
    e_dense = np.full(n, -1, dtype=np.int32)
    j = 0
    for i, e in enumerate(entries):
        if e[1] is not None:
            e_dense[i] = j
            j += 1
    if len(dense) == 1:   # the usual case (the string body): views, no copy
        e_bits, e_rows = dense[0][1][None, :], dense[0][2][None, :]
    else:
        e_bits = np.stack([e[1] for e in dense]) if dense else np.zeros((0, nw), dtype=np.uint32)
        e_rows = (np.stack([e[2] for e in dense]) if dense
                  else np.zeros((0, n_words), dtype=np.uint32))
    node_ptr = np.zeros(n + 1, dtype=np.int64)
    sk_ptr = np.zeros(n + 1, dtype=np.int64)
    if n:
        np.cumsum([0 if e[1] is not None else e[7].shape[0] for e in entries], out=node_ptr[1:])
        np.cumsum([e[3].shape[0] for e in entries], out=sk_ptr[1:])
    sparse = [e[7] for e in entries if e[1] is None]
    cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dtype=dt))
    return (e_hash, node_ptr, cat(sparse, np.int32), e_dense, e_bits, e_rows, sk_ptr,
            cat([e[3] for e in entries], np.int32), cat([e[4] for e in entries], np.int32),
            cat([e[5] for e in entries], np.bool_))


def _walk_one(trie_arrays: tuple, bt: ByteTables, eos, vocab_size: int, block, n_blocks: int,
              order, g_ptr, g_entry, e_arrays: tuple, limit: int) -> tuple:
    """Every group of states walked here (:func:`.kernels.walk_masks`): ``(rows, state_row,
    finished_row, visited)``, ``visited`` -1 where the walks passed ``limit`` trie nodes."""
    return kernels.walk_masks(*trie_arrays, bt.table, bt.accepting, eos, vocab_size, block,
                              n_blocks, order, g_ptr, g_entry, *e_arrays, limit)


def _halves(g_ptr) -> tuple:
    """The units of the groups ``g_ptr`` (see :func:`.kernels.walk_groups`) in two halves of
    spans ``(group, lo, hi)`` (see :func:`.kernels.walk_sets`), group by group: the first half
    of each group of several units to one, the second to the other, and the groups of one unit
    to either in turn. Neighbouring units cost alike (a group of many shares one walk; its
    units replay it), so the halves take about as long."""
    lo, hi = g_ptr[:-1].astype(np.int64), g_ptr[1:].astype(np.int64)
    size = hi - lo
    groups = np.arange(size.shape[0], dtype=np.int64)
    several, one = np.flatnonzero(size >= 2), np.flatnonzero(size == 1)
    mid = lo[several] + size[several] // 2
    first = np.concatenate([np.stack([several, lo[several], mid], axis=1),
                            np.stack([groups[one[0::2]], lo[one[0::2]], hi[one[0::2]]], axis=1)])
    second = np.concatenate([np.stack([several, mid, hi[several]], axis=1),
                             np.stack([groups[one[1::2]], lo[one[1::2]], hi[one[1::2]]], axis=1)])
    # (in group order, as the reference walks them)
    return tuple(np.ascontiguousarray(x[np.argsort(x[:, 0], kind="stable")])
                 for x in (first, second))


def _walk_halves(trie_arrays: tuple, bt: ByteTables, eos, vocab_size: int, block, n_blocks: int,
                 order, g_ptr, g_entry, e_arrays: tuple, limit: int) -> tuple:
    """:func:`_walk_one` with the units in two halves (:func:`_halves`) walked at once, one in
    a second thread (:func:`.kernels.walk_sets`, which releases the GIL), each within half of
    ``limit``, and the sets of both numbered as one walk's (:func:`.kernels.number_rows`)."""
    half = limit // 2 if limit >= 0 else -1

    def walk(spans) -> tuple:
        return kernels.walk_sets(*trie_arrays, bt.table, vocab_size, block, n_blocks, order,
                                 spans, g_entry, *e_arrays, half)

    first, second = _halves(g_ptr)
    other = _second_thread().submit(walk, second)
    try:
        a = walk(first)
    finally:
        b = other.result()
    if a[4] < 0 or b[4] < 0:
        return None, None, 0, -1
    rows, state_row, finished_row = kernels.number_rows(block, bt.accepting, eos, vocab_size,
                                                        *a[:4], *b[:4])
    return rows, state_row, finished_row, int(a[4] + b[4])


def _relaxed_later(bt: ByteTables, comp, share_walks: bool, threads: int):
    """A function giving the relaxed blocks of ``bt`` (:func:`.kernels.relaxed_blocks` over the
    regions ``comp``; every state alone without ``share_walks``), made meanwhile in the second
    thread where the build may use two and ``bt`` has :data:`RELAXED_APART_MIN_STATES` states
    or more: they depend on the regions only, and the groups of states and the bands are made
    in this one until the walks need them."""
    if not share_walks:
        alone = np.arange(bt.table.shape[0], dtype=np.int32)
        return lambda: alone
    if threads < 2 or bt.table.shape[0] < RELAXED_APART_MIN_STATES:
        relaxed = kernels.relaxed_blocks(bt.table, comp, RELAXED_MAX_ROUNDS)[0]
        return lambda: relaxed
    job = _second_thread().submit(kernels.relaxed_blocks, bt.table, comp, RELAXED_MAX_ROUNDS)
    return lambda: job.result()[0]


#: Ways of walking one band's groups of states, each giving the same rows (the tests build with
#: each): in the calling thread, the reference; or in two halves at once, where the build may
#: use two threads and the band has :data:`HALVES_MIN_UNITS` units or more. Alternated
#: builds, Llama-3: Kubernetes kb_1026's walks, 1,901 units, 10.4 -> 7.7 ms; Handwritten
#: allany16's, 4,307 units in one group, 435 -> 345 ms.
GROUP_WALKS = {"one": _walk_one, "halves": _walk_halves}

_pool_lock = threading.Lock()
_pool: tuple | None = None     # (process id, executor): a forked child makes its own


def _second_thread():
    """The executor of a build's second thread (:func:`_walk_halves`, :func:`_relaxed_later`):
    one worker, made on first use, and again in a forked child, which has not the parent's
    thread."""
    global _pool
    from concurrent.futures import ThreadPoolExecutor

    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="tokenfsm-walk"))
        return _pool[1]


def _walk_rows(bt: ByteTables, trie, block, n_blocks: int, eos, vocab_size: int, comp, relaxed,
               on_cycle, strategy: str, share_walks: bool, byte_walk_passes,
               max_signature_states, threads: int, halves_min_units: int):
    """The rows of every state of ``bt`` over the tokens of ``trie`` (see :meth:`TokenIndex.build`
    for the options; ``block``, ``n_blocks``: the groups of states walked once, each from its
    unit (:func:`.kernels.block_units`, ``on_cycle``: the states on cycles of the regions
    ``comp``), ``relaxed`` the relaxed blocks): ``(rows, state_row, finished_row, info)``."""
    t0 = time.perf_counter()
    n_classes = bt.table.shape[1]
    order, g_ptr = kernels.walk_groups(block, n_blocks, relaxed, on_cycle)
    way = "halves" if threads >= 2 and order.shape[0] >= halves_min_units else "one"
    if share_walks:
        share, sig_ptr, sig = kernels.component_signatures(
            bt.table, bt.byte_classes, comp, order, g_ptr,
            MAX_SIGNATURE_STATES if max_signature_states is None else max_signature_states)
        shared_groups = np.flatnonzero(share).tolist()
    else:
        shared_groups = []
    t1 = time.perf_counter()
    tries = {"auto": ("bytes", "classes"), "bytes": ("bytes",), "classes": ("classes",)}[strategy]
    for attempt, used in enumerate(tries):
        if used == "classes":
            walk = trie.class_trie(bt.byte_classes, n_classes)
            sym_class = np.arange(n_classes, dtype=np.uint8)
        else:
            walk = trie
            sym_class = bt.byte_classes
        node_bit, n_tok_nodes, max_depth = walk.token_numbering()
        # auto: the byte trie needs no per-automaton preparation, but when the walks turn out
        # long (many states each reaching much of the vocabulary) the trie merged over the
        # automaton's byte classes, built once, makes each of them cheaper
        passes = AUTO_BYTE_WALK_PASSES if byte_walk_passes is None else byte_walk_passes
        limit = passes * walk.num_nodes if attempt + 1 < len(tries) else -1
        g_entry, entries, visited_shared, kept = _shared_walks(
            walk, shared_groups, sig_ptr if shared_groups else None,
            sig if shared_groups else None, order, g_ptr, node_bit, n_tok_nodes, max_depth,
            sym_class, bt.table, comp, vocab_size)
        if 0 <= limit < visited_shared:
            continue
        e_arrays = _entry_arrays(entries, n_tok_nodes, vocab_size)
        rows, state_row, finished_row, visited = GROUP_WALKS[way](
            (walk.sym, walk.depth, walk.end, walk.tok_ptr, walk.tok_ids, node_bit, n_tok_nodes,
             max_depth, sym_class), bt, eos, vocab_size, block, n_blocks, order, g_ptr, g_entry,
            e_arrays, int(limit - visited_shared) if limit >= 0 else -1)
        if visited >= 0:
            visited += visited_shared
            break
    info = dict(strategy=used, trie_nodes=walk.num_nodes, walks=int(order.shape[0]),
                shared_walks=len(shared_groups), kept_walks=kept, visited=int(visited),
                walked_in_halves=int(way == "halves"), prepare_s=t1 - t0)
    return rows, state_row, int(finished_row), info


def _bands(bt: ByteTables, trie, block, n_blocks: int, comp, lengths, min_visits: int | None,
           split_bytes: bytes | None, local_classes: bool = False,
           partitions: dict | None = None) -> list:
    """The bands of ``trie`` walked apart (see :meth:`TokenIndex.build`), each with its groups of
    states and the table its tokens see: ``[(band, block, n_blocks, table), ...]``.

    First by content: where the tokens free of ``split_bytes`` (JSON's quote, separators,
    brackets and backslash, :data:`SPLIT_BYTES`) tell apart fewer groups of states than all
    tokens do, and the walks spared visit enough nodes (:func:`_visit`, ``min_visits`` or by
    default :data:`SPLIT_BYTES_MIN_VISITS`), they are walked apart from the tokens holding one,
    each band with its own groups. The counts of a ``minLength`` string differ only on tokens
    holding the closing quote; the rest of the vocabulary is walked once for all of them. With
    ``local_classes``, also where the walks of the groups that tell apart few byte classes over
    the tokens free of those bytes (:func:`_class_views`: walked over a small trie then) visit
    enough nodes: those of a ``maxLength`` string, the host name of an e-mail address. Then by
    length (:func:`_length_bands`, ``min_visits`` or by default :data:`SPLIT_MIN_VISITS`), the
    tokens free of those bytes alone when the content split was taken."""
    parts = []
    table = bt.table
    if split_bytes:
        least = SPLIT_BYTES_MIN_VISITS if min_visits is None else min_visits
        free = trie.holding(split_bytes, False)
        units = _acyclic_units(block, comp)
        seen: dict = {}     # (the walks of the three questions below are of the same table)
        # (the spared walks are some of these: no need to look further when they are short)
        if _visit(bt, free, units, least, seen):
            free_table = _free_table(bt, split_bytes, partitions)
            free_block, n_free = kernels.refine_states(free_table, free.max_depth)
            _, kept = np.unique(free_block[units], return_index=True)
            if _visit(bt, free, np.delete(units, kept), least, seen) or (
                    local_classes and _visit(bt, free, _few_classes(
                        free_table, free_block, _on_cycle(comp), partitions)[0], least, seen)):
                parts.append((trie.holding(split_bytes), block, n_blocks, table))
                trie, table, block, n_blocks = free, free_table, free_block, int(n_free)
    least = SPLIT_MIN_VISITS if min_visits is None else min_visits
    return parts + _length_bands(bt, table, trie, block, n_blocks, comp, lengths, least)


def _acyclic_units(block, comp) -> np.ndarray:
    """The first state of each group of ``block`` (the dead state's aside) that lies on no cycle
    of ``comp``, the regions: walks on cycles are shared (see :func:`_regions`), these not."""
    _, first = np.unique(block, return_index=True)
    first = first[1:]
    return first[~_on_cycle(comp)[first]]


def _on_cycle(comp) -> np.ndarray:
    """Which states lie on a cycle of the regions ``comp`` (a region of two states or more)."""
    return np.bincount(comp)[comp] > 1


def _visit(bt: ByteTables, trie, states, least: int, seen: dict) -> bool:
    """Whether the walks of ``trie`` from ``states`` visit ``least`` nodes or more in all, as
    :data:`SPLIT_BYTES_SAMPLES` of them predict (``least`` 0: whether there are any). A walk
    visits at most the subtrees of the first bytes it takes: when these add up to less, no
    walk is needed; the samples are spread over the states ordered by that bound, so that the
    few walking most of the trie (a free-text body) are sampled in their share. ``seen`` holds
    the counts of the walks of ``trie`` over ``bt`` made so far (see :func:`_visits`)."""
    n = states.shape[0]
    if least <= 0 or n == 0:
        return n > 0
    class_nodes = np.bincount(bt.byte_classes, weights=trie.first_byte_nodes,
                              minlength=bt.table.shape[1])
    bound = (bt.table[states] != 0) @ class_nodes
    if bound.sum() < least:
        return False
    states = states[np.argsort(bound, kind="stable")]
    picks = states[np.linspace(0, n - 1, min(n, SPLIT_BYTES_SAMPLES)).astype(np.int64)]
    need = -(-least * picks.shape[0] // n)     # the samples' share, rounded up
    return _visits(bt, bt.table, trie, picks, need, seen) >= need


def _walks_long(bt: ByteTables, trie, states, least: int) -> bool:
    """Whether the walks of ``trie`` from ``states``, one each, visit ``least`` nodes or more in
    all, as these predict. Most visits lie in a few long walks, those of the states that move
    on the most strings of two bytes (a bounded free text): where the walks of the
    :data:`GROUP_SAMPLES` first of those visit an eighth of ``least``, yes; else the others
    are asked what is left (:func:`_visit`)."""
    if states.shape[0] == 0:
        return False
    states = states.astype(np.int64)
    class_size = np.bincount(bt.byte_classes, minlength=bt.table.shape[1]).astype(np.int64)
    ways = kernels.two_byte_ways(bt.table, class_size, states)
    order = states[np.argsort(-ways, kind="stable")]
    top, rest = order[:GROUP_SAMPLES], order[GROUP_SAMPLES:]
    got = _visits(bt, bt.table, trie, top, -(-least // 8), {})
    return got * 8 >= least or _visit(bt, trie, rest, least - got, {})


def _visits(bt: ByteTables, table, trie, states, need: int, seen: dict) -> int:
    """The trie nodes the walks of ``trie`` over ``table`` (``bt``'s classes) from ``states``
    visit in all, counted up to ``need`` or past it. ``seen`` maps a state to the count of its
    complete walk, for questions asked again of the same table: those are not walked again,
    and the walks completed here are added."""
    states = states.tolist()
    todo = [s for s in states if s not in seen]
    got = sum(seen[s] for s in states if s in seen)
    if got >= need or not todo:
        return got
    todo = np.array(todo, dtype=np.int32)
    counts, done = kernels.walk_visits(trie.sym, trie.depth, trie.end, trie.max_depth,
                                       bt.byte_classes, table, todo, need - got)
    seen.update(zip(todo[:done].tolist(), counts[:done].tolist()))
    return got + int(counts.sum())


def _free_table(bt: ByteTables, some: bytes, partitions: dict | None) -> np.ndarray:
    """:func:`_without_bytes`, kept in ``partitions`` for the build (one table, so that its
    class partitions are computed once)."""
    if partitions is None:
        return _without_bytes(bt, some)
    key = ("without", bytes(some))
    got = partitions.get(key)
    if got is None:
        got = partitions[key] = _without_bytes(bt, some)
    return got


def _without_bytes(bt: ByteTables, some: bytes) -> np.ndarray:
    """``bt``'s table with the byte classes made only of bytes of ``some`` leading nowhere:
    states of one block of its :func:`.kernels.refine_states` allow the same tokens free of
    those bytes."""
    only = np.ones(bt.table.shape[1], dtype=bool)
    others = np.ones(256, dtype=bool)
    others[np.frombuffer(some, dtype=np.uint8)] = False
    only[bt.byte_classes[others]] = False
    return np.where(only[None, :], 0, bt.table).astype(np.int32)


def _length_bands(bt: ByteTables, table, trie, block, n_blocks: int, comp, lengths,
                  min_visits: int) -> list:
    """The bands of length of ``trie``, each with the groups of states of ``table`` (``bt``'s,
    or the one its tokens see, :func:`_without_bytes`) no token of the band tells apart.

    The split pays for the groups outside cycles (``comp``: the regions), where counts are
    (cycles are string bodies and the like, whose walks are shared): a length of ``lengths``
    splits where there are :data:`SPLIT_MIN_GROUPS` such groups or more, the walks of
    :data:`SPLIT_SAMPLES` of them predict ``min_visits`` trie nodes visited or more over all of
    them, and that length at most halves the groups."""
    if min_visits > 0:
        if n_blocks - 1 < SPLIT_MIN_GROUPS:       # (fewer groups in all: no need to look)
            return [(trie, block, n_blocks, table)]
        acyclic = _acyclic_units(block, comp)
        n = acyclic.shape[0]
        if n < max(SPLIT_MIN_GROUPS, SPLIT_SAMPLES):
            return [(trie, block, n_blocks, table)]
        picks = acyclic[np.linspace(0, n - 1, SPLIT_SAMPLES).astype(np.int64)]
        need = -(-min_visits * SPLIT_SAMPLES // n)     # the samples' share, rounded up
        if _visits(bt, table, trie, picks, need, {}) < need:
            return [(trie, block, n_blocks, table)]
    parts, lo = [], 0
    for k in sorted(set(lengths)):
        if not 0 < k < trie.max_depth:
            continue
        kb, nk = kernels.refine_states(table, k)
        if 2 * int(nk) <= n_blocks:
            parts.append((trie.band(lo, k), kb, int(nk), table))
            lo = k + 1
    if not parts:
        return [(trie, block, n_blocks, table)]
    return parts + [(trie.band(lo), block, n_blocks, table)]


def _class_labels(seen: np.ndarray, partitions: dict | None = None) -> np.ndarray:
    """The partition of the byte classes each state's walks over ``seen`` tell apart
    (:func:`.kernels.class_partitions`), kept in ``partitions`` by table."""
    memo = partitions if partitions is not None else {}
    got = memo.get(id(seen))
    if got is None:     # (the table is kept with its labels: its id is not reused meanwhile)
        got = memo[id(seen)] = (seen, kernels.class_partitions(seen, kernels.scc_ids(seen)))
    return got[1]


def _few_classes(seen: np.ndarray, block, on_cycle, partitions: dict | None = None) -> tuple:
    """``(units, labels)``: the unit (:func:`.kernels.block_units`, ``on_cycle`` the states on
    cycles) of each group of ``block`` whose walks over the tokens that see ``seen`` tell apart
    few byte classes (at most :data:`LOCAL_MAX_CLASSES`, and at most half of all), and the
    partition of the classes of every state (:func:`.kernels.class_partitions`, kept in
    ``partitions`` by table: the content split asks, then each of its bands of length, all of
    one table). The unit that walks a group decides its classes."""
    n_classes = seen.shape[1]
    labels = _class_labels(seen, partitions)
    units = kernels.block_units(block, int(block.max()) + 1, on_cycle)
    few = labels[units].max(axis=1) + 1 <= min(LOCAL_MAX_CLASSES, n_classes // 2)
    return units[few], labels


def _coarse(bt: ByteTables, fine) -> tuple:
    """``(byte classes, reps)`` of the partition ``fine`` of ``bt``'s classes: the coarse
    classes numbered by first byte, each read through one of its fine classes (``reps``)."""
    _, first_byte, coarse = np.unique(fine[bt.byte_classes], return_index=True,
                                      return_inverse=True)
    rank = np.argsort(np.argsort(first_byte))
    coarse_classes = rank[coarse.reshape(-1)].astype(np.uint8)
    reps = np.empty(rank.shape[0], dtype=np.int64)
    reps[coarse_classes] = bt.byte_classes
    return coarse_classes, reps


def _class_views(bt: ByteTables, seen: np.ndarray, block, on_cycle,
                 min_units: int = LOCAL_MIN_UNITS, partitions: dict | None = None) -> list:
    """The states of ``bt`` in sets walked apart, each with the byte classes its walks tell apart:
    ``[(tables, block), ...]``, ``block`` the groups of states with every other state in the dead
    state's group 0.

    A walk reads a token's bytes through the states it reaches; where these move alike on two
    classes (:func:`.kernels.class_partitions`, over ``seen``, the table the band's tokens see),
    the walk may read them as one symbol, over a trie merged over fewer classes. A string body
    walked over the tokens free of :data:`SPLIT_BYTES` tells apart a dozen classes of the forty
    or more of its schema (Llama-3: a trie of 6,752 nodes rather than
    173,988), and the same dozen in every schema, so that its trie is built once per
    vocabulary. States whose classes are at most half as many as all (and at most
    :data:`LOCAL_MAX_CLASSES`), in sets of ``min_units`` groups or more, are walked so; the
    others with every class."""
    n_classes = seen.shape[1]
    small, labels = _few_classes(seen, block, on_cycle, partitions)
    if small.shape[0] < min_units:
        return [(bt, block)]
    # the distinct partitions of the groups with few classes, by a hash of each checked against
    # its first holder (compared as rows only where two hashes collide: never, in practice)
    weights = np.random.default_rng(0x5EED).integers(1, 2 ** 62, size=n_classes) | 1
    _, first, of_small, count = np.unique(labels[small].astype(np.int64) @ weights,
                                          return_index=True, return_inverse=True,
                                          return_counts=True)
    kinds = labels[small[first]]
    of_small = of_small.reshape(-1)
    if not np.array_equal(labels[small], kinds[of_small]):
        kinds, of_small, count = np.unique(labels[small], axis=0, return_inverse=True,
                                           return_counts=True)
        of_small = of_small.reshape(-1)
    apart = np.flatnonzero(count >= min_units)
    if not apart.shape[0]:
        return [(bt, block)]
    # every state of a group walked apart takes that group's set (its unit's), the rest all
    owner = np.full(kinds.shape[0], -1, dtype=np.int64)
    owner[apart] = np.arange(apart.shape[0])
    set_of_block = np.full(int(block.max()) + 1, -1, dtype=np.int64)
    set_of_block[block[small]] = owner[of_small]
    state_set = set_of_block[block]
    state_set[0] = -1
    views = []
    for j, i in enumerate(apart.tolist()):
        coarse_classes, reps = _coarse(bt, kinds[i])
        view = ByteTables(coarse_classes, np.ascontiguousarray(seen[:, reps], dtype=np.int32),
                          bt.accepting, bt.start)
        views.append((view, np.where(state_set == j, block, 0).astype(block.dtype)))
    rest = state_set < 0
    if rest[1:].any():
        views.append((bt, np.where(rest, block, 0).astype(block.dtype)))
    return views


def _state_joined(walked: list, blocks: list) -> tuple:
    """The rows of walks over disjoint sets of states (each ``(rows, state_row, finished_row)``,
    the states of the others in group 0 of its ``blocks``): each state's row from the walk of
    its set, ``(rows, state_row, finished_row)`` numbered as :func:`.kernels.walk_masks` numbers
    them (by first use in state order, then the finished row)."""
    offsets = np.cumsum([0] + [w[0].shape[0] for w in walked])
    every = np.concatenate([w[0] for w in walked])
    state_row = np.asarray(walked[0][1], dtype=np.int64).copy()
    for i in range(1, len(walked)):
        mine = blocks[i] != 0
        state_row[mine] = walked[i][1][mine] + offsets[i]
    first = _equal_rows(every)
    used = np.empty(state_row.shape[0] + 1, dtype=np.int64)
    used[:-1] = first[state_row]
    used[-1] = first[walked[0][2]]
    order, number = _first_use(used)
    return np.ascontiguousarray(every[order]), number[:-1].astype(np.int32), int(number[-1])


def _equal_rows(rows) -> np.ndarray:
    """For each row of ``rows``, the first row equal to it (:func:`.kernels.row_classes`)."""
    return kernels.row_classes(rows, np.bitwise_count(rows).sum(axis=1, dtype=np.int64))


def _first_use(keys) -> tuple:
    """``(order, number)`` of ``keys`` (the rows of each state, then the finished row's):
    the distinct keys in the order they are first met, and each key's place in it, as
    :func:`.kernels.walk_masks` numbers rows."""
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(uniq.shape[0], dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(uniq.shape[0])
    return uniq[np.argsort(rank)], rank[inverse.reshape(-1)]


def _chains(bt: ByteTables, min_copies: int):
    """The counted repetitions of ``bt`` whose rows one walk per orbit makes (see
    :func:`.kernels.shift_chains`, orbits ``min_copies`` long): ``(members, heads, chain, pos,
    last, head_of)``, or None."""
    table = bt.table
    class_size = np.bincount(bt.byte_classes, minlength=table.shape[1]).astype(np.int64)
    chain, head_of, pos, last, n_chains = kernels.shift_chains(
        table, bt.accepting, class_size, min_copies, CHAIN_WORK_PER_CELL * table.size)
    if not n_chains:
        return None
    members = np.flatnonzero(chain >= 0)
    heads = members[pos[members] == 0]
    return members, heads, chain, pos, last, head_of


def _unwalked(block, states):
    """``block`` with ``states`` in the dead state's group: not walked (their rows come from
    elsewhere), an empty row until then."""
    block = block.copy()
    block[states] = block[0]
    return block


def _orbit_rows(bt: ByteTables, trie, free_table, fine, eos, vocab_size: int, chains,
                h: int) -> tuple:
    """``(rows, row_of, visited)`` of the orbit of ``h`` (see :func:`.kernels.chain_rows`), its
    tokens walked in two bands as the reference walks them (see :func:`_bands`): those free of
    :data:`SPLIT_BYTES` over the trie merged over the classes ``fine`` (the partition the walks
    of its chain's orbits tell apart there, :func:`_chain_classes`; a string body's dozen),
    where they are few, and the few holding one over bytes; a row is a row of each."""
    _, _, chain, pos, last, _ = chains
    n_classes = bt.table.shape[1]
    free = trie.holding(SPLIT_BYTES, False)
    walk = None
    if fine.max() + 1 <= min(LOCAL_MAX_CLASSES, n_classes // 2):
        coarse_classes, reps = _coarse(bt, fine)
        # (a merged trie is made for long orbits, whose walks it shortens most; shorter ones
        # take it where it is already made)
        walk = (free.class_trie(coarse_classes, reps.shape[0])
                if last[h] + 1 >= CHAIN_TRIE_COPIES
                else free.cached_class_trie(coarse_classes, reps.shape[0]))
    if walk is not None:
        table = np.ascontiguousarray(free_table[:, reps], dtype=np.int32)
        sym_class = np.arange(reps.shape[0], dtype=np.uint8)
    else:
        walk, table, sym_class = free, free_table, bt.byte_classes
    max_depth = walk.token_numbering()[2]
    rows_f, of_f, seen_f = kernels.chain_rows(
        walk.sym, walk.depth, walk.end, walk.tok_ptr, walk.tok_ids, max_depth, sym_class, table,
        bt.accepting, eos, vocab_size, h, chain, pos, last)
    held = trie.holding(SPLIT_BYTES)
    rows_s, of_s, seen_s = kernels.chain_rows(
        held.sym, held.depth, held.end, held.tok_ptr, held.tok_ids, held.token_numbering()[2],
        bt.byte_classes, bt.table, bt.accepting, eos, vocab_size, h, chain, pos, last)
    pairs = of_f.astype(np.int64) * rows_s.shape[0] + of_s
    uniq, row_of = np.unique(pairs, return_inverse=True)
    rows = rows_f[uniq // rows_s.shape[0]] | rows_s[uniq % rows_s.shape[0]]
    return rows, row_of.reshape(-1), int(seen_f) + int(seen_s)


def _chain_classes(labels, chain, heads) -> dict:
    """Per chain, the partition of the byte classes that the walks of its orbits' first states
    tell apart (``labels``, see :func:`_class_labels`), all at once: one trie merged over them
    serves every orbit of the chain, and the same chain in every schema (a string body's)."""
    out = {}
    for c in np.unique(chain[heads]).tolist():
        rows = labels[heads[chain[heads] == c]]
        out[c] = unique_rows(rows.T)[1]
    return out


def _with_chain_rows(bt: ByteTables, trie, eos, vocab_size: int, rows, state_row,
                     finished_row: int, chains, partitions: dict) -> tuple:
    """The rows of a walk that left the chains' states out, with theirs added (one walk of the
    trie from each orbit's first state, :func:`_orbit_rows`) and every row numbered again as
    :func:`.kernels.walk_masks` numbers them (the empty row first, then by first use in state
    order, then the finished row): ``(rows, state_row, finished_row, walks, visited)``."""
    members, heads, chain, pos, last, head_of = chains
    free_table = _free_table(bt, SPLIT_BYTES, partitions)
    labels = _class_labels(free_table, partitions)
    fine = _chain_classes(labels, chain, heads)
    made = [rows]
    base = np.zeros(bt.table.shape[0], dtype=np.int64)    # per head: its rows' first number
    row_of = np.zeros(bt.table.shape[0], dtype=np.int64)  # per chain state: its row there
    at = rows.shape[0]
    visited = 0
    for h in heads.tolist():
        got, got_of, seen = _orbit_rows(bt, trie, free_table, fine[chain[h]], eos, vocab_size,
                                        chains, h)
        visited += seen
        base[h] = at
        at += got.shape[0]
        made.append(got)
        on = members[head_of[members] == h]
        row_of[on] = got_of[pos[on]]
    rows = np.concatenate(made)
    first = _equal_rows(rows)
    content = np.empty(state_row.shape[0] + 1, dtype=np.int64)
    content[:-1] = first[state_row]
    content[members] = first[base[head_of[members]] + row_of[members]]
    content[0] = first[0]                  # (the dead state's: the empty row)
    content[-1] = first[finished_row]
    order, number = _first_use(content)
    return rows[order], number[:-1].astype(np.int32), int(number[-1]), 2 * len(heads), visited


def _joined_rows(rows_a, sr_a, fin_a, rows_b, sr_b, fin_b) -> tuple:
    """The rows of two walks over disjoint tokens (bands of a trie), or-ed state by state:
    ``(rows, state_row, finished_row)``, rows numbered by first use in state order, then the
    finished row, as :func:`.kernels.walk_masks` numbers them. Within each walk distinct rows
    differ, and the bands share no token, so distinct pairs of rows give distinct rows."""
    n_b = rows_b.shape[0]
    pairs = np.empty(sr_a.shape[0] + 1, dtype=np.int64)
    pairs[:-1] = sr_a.astype(np.int64) * n_b + sr_b
    pairs[-1] = fin_a * n_b + fin_b
    order, number = _first_use(pairs)
    rows = rows_a[order // n_b]
    rows |= rows_b[order % n_b]
    return rows, number[:-1].astype(np.int32), int(number[-1])


def eos_row(eos_ids, n_words: int) -> np.ndarray:
    """The packed mask row (read-only ``int32[n_words]``) that allows the ``eos_ids`` alone:
    the row of a finished sequence."""
    row = np.zeros(n_words, dtype=np.uint32)
    for t in eos_ids:
        row[t >> 5] |= np.uint32(1 << (t & 31))
    row = row.view(np.int32)
    row.flags.writeable = False
    return row


def row_token_ids(index, row: np.ndarray, include_eos: bool = True) -> np.ndarray:
    """The token ids set in a packed mask ``row`` of ``index`` (ascending ``int32``), without
    the end-of-sequence ids unless ``include_eos``."""
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")[: index.vocab_size]
    ids = np.flatnonzero(bits).astype(np.int32)
    if not include_eos and index._eos_set:
        ids = ids[~np.isin(ids, index.eos_ids)]
    return ids


class TokenIndex:
    """Allowed tokens per state of a byte DFA, for one vocabulary. Build with :meth:`build`.

    Attributes
    ----------
    vocab : Vocabulary
    start : int
        Start state (0 if the language is empty).
    num_states : int
        States of the byte DFA, the dead state 0 included.
    mask_rows : int32[num_rows, ceil(vocab.size / 32)]
        Distinct bitmask rows; ``mask_rows[state_row[s]]`` is state ``s``'s mask.
    state_row : int32[num_states]
    finished_row : int
        Row allowing only EOS, used once a sequence has ended.
    byte_classes, table, accepting : arrays
        The byte DFA.
    forced_byte : int16[num_states]
        The single byte forced in each state, or -1.
    csr_ptr, csr_tok, csr_next : arrays
        Allowed text tokens per state with their next states (CSR), built from the rows on first
        access and kept (see :meth:`transitions` for one state).
    build_info : dict
        How the index was built (walk strategy, state groups walked, trie nodes visited, seconds).
    """

    def __init__(self, vocab: Vocabulary, arrays: dict, start: int, finished_row: int,
                 build_info: dict | None = None):
        self.vocab = vocab
        self.start = int(start)
        self.finished_row = int(finished_row)
        self.build_info = dict(build_info or {})
        for name in _ARRAY_FIELDS:
            # read-only views: the caller's arrays (the automaton's table) stay writeable, or
            # the next index built from them would hand the kernels another Numba type
            a = np.ascontiguousarray(arrays[name]).view()
            a.flags.writeable = False
            setattr(self, name, a)
        self.num_states = int(self.table.shape[0])
        self.vocab_size = vocab.size
        self.vocab_fingerprint = vocab.fingerprint
        self._eos_set = frozenset(self.eos_ids.tolist())
        self._n_words = int(self.mask_rows.shape[1])
        self._csr = None
        self._csr_lock = threading.Lock()
        # plain-Python views for the matcher's per-token path (no kernel call, no numpy scalars)
        self._state_rows = self.state_row.tolist()
        # (slices of one view of all the rows: a view per row array costs three times as much)
        rows = memoryview(self.mask_rows).cast("B")
        step = 4 * self._n_words
        self._row_views = [rows[i:i + step] for i in range(0, len(rows), step)]
        self._fast = (
            _flat_view(self.mask_rows), self._state_rows, self._n_words, vocab.tokens,
            self.byte_classes.tobytes(), _flat_view(self.table), int(self.table.shape[1]),
            self.vocab_size,
        )

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def build(cls, dfa, vocab: Vocabulary, strategy: str = "auto", group_states: bool = True,
              share_walks: bool = True, *, byte_walk_passes: int | None = None,
              max_signature_states: int | None = None,
              split_lengths: tuple | None = SPLIT_LENGTHS,
              split_min_visits: int | None = None,
              split_bytes: bytes | None = SPLIT_BYTES,
              local_classes: bool = True,
              local_min_units: int = LOCAL_MIN_UNITS,
              shift_chains: bool = True,
              chain_min_copies: int = CHAIN_MIN_COPIES,
              group_min_visits: int | None = None,
              threads: int | None = None,
              halves_min_units: int = HALVES_MIN_UNITS) -> "TokenIndex":
        """Index ``dfa`` against ``vocab``.

        Parameters
        ----------
        dfa : DFA, ByteDFA or compiled schema
            See :func:`as_byte_dfa`.
        vocab : Vocabulary
        strategy : {"auto", "bytes", "classes"}
            Walk the vocabulary's byte trie, or the trie merged over the DFA's byte classes
            (smaller, but built for each new class map, about as long as a few walks), or the
            byte trie unless the walks prove long (:data:`AUTO_BYTE_WALK_PASSES`).
        group_states : bool
            Walk once per group of states that no string as long as the longest token tells
            apart (:func:`.kernels.refine_states`) instead of once per state, where the walks
            it spares are long (``group_min_visits``). Same result.
        share_walks : bool
            Walk the trie once for states whose walks agree until they leave their region
            (:func:`_regions`, :func:`.kernels.relaxed_blocks`), each state then walking only
            the subtrees past its exits; and keep such walks for later builds with the same
            vocabulary (:class:`~.trie.WalkCache`, keyed by the region's canonical form). Same
            result.
        byte_walk_passes : int, optional
            For ``strategy="auto"``: how many times the byte trie's size the walks may visit
            before the class-merged trie takes over (default :data:`AUTO_BYTE_WALK_PASSES`).
            Same result.
        max_signature_states : int, optional
            Regions of more states than this are walked for each build rather than kept
            (default :data:`MAX_SIGNATURE_STATES`). Same result.
        split_lengths : tuple of int, or None
            Walk the tokens of at most each of these many bytes apart from the longer ones, each
            band with its own groups of states (``group_states``): no token of ``k`` bytes tells
            apart the counts of a length-bounded string more than ``k`` from their bound, so its
            tokens of at most ``k`` bytes are walked once for all of them (default
            :data:`SPLIT_LENGTHS`; None: one walk). A length splits where the automaton has
            :data:`SPLIT_MIN_GROUPS` groups outside cycles or more, the walks of a few of them
            predict ``split_min_visits`` trie nodes visited or more in all (default
            :data:`SPLIT_MIN_VISITS`; 0: split wherever a length halves the groups) and that
            length at most halves the groups. Same result.
        split_bytes : bytes or None
            Walk the tokens holding one of these bytes apart from those free of them, where the
            latter tell apart fewer groups of states and the walks spared are long (default
            :data:`SPLIT_BYTES`; None: no such split; ``split_min_visits=0`` takes it wherever
            it spares a walk). The counts of a ``minLength`` string differ only on tokens
            holding its closing quote. Same result.
        local_classes : bool
            Walk the states whose walks over the tokens free of ``split_bytes`` tell apart at
            most half the byte classes over a trie merged over those (:func:`_class_views`;
            where the content split is taken and the strategy is not ``"bytes"``), in sets of
            ``local_min_units`` groups of states or more (default :data:`LOCAL_MIN_UNITS`).
            Same result.
        shift_chains : bool
            Make the rows of a counted repetition's copies (the counts of a ``maxLength`` string)
            from one walk of the first copy, each count's row the tokens whose walk leaves room
            for it, rather than walking each count, where its orbits are ``chain_min_copies``
            copies long (default :data:`CHAIN_MIN_COPIES`). Same result.
        group_min_visits : int, optional
            Group states (``group_states``) and look for counted repetitions (``shift_chains``)
            only where walking each state outside cycles on its own would visit this many trie
            nodes or more, as a few of those walks predict (default :data:`GROUP_MIN_VISITS`;
            0: wherever). Same result.
        threads : int, optional
            Threads the build may use (default :data:`WALK_THREADS`): with two or more, the
            groups of states of a band of ``halves_min_units`` units or more (default
            :data:`HALVES_MIN_UNITS`) are walked in two halves at once (:data:`GROUP_WALKS`),
            and the relaxed blocks of a large automaton are made in the second thread while
            the groups and bands are made in this one; more than two are not used. Same
            result.

        Returns
        -------
        TokenIndex
        """
        t0 = time.perf_counter()
        bt = as_byte_dfa(dfa)
        if strategy not in ("auto", "bytes", "classes"):
            raise OptionError(f"strategy must be 'auto', 'bytes' or 'classes', not {strategy!r}")
        threads = WALK_THREADS if threads is None else threads
        for name, value, least in (("threads", threads, 1),
                                   ("halves_min_units", halves_min_units, 0)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
                raise OptionError(f"{name} must be an int of at least {least}, not {value!r}")
        trie = token_trie(vocab)
        t1 = time.perf_counter()
        n_states = bt.table.shape[0]
        eos = np.asarray(vocab.eos_token_ids, dtype=np.int32)
        comp = _regions(bt)
        relaxed_of = _relaxed_later(bt, comp, share_walks, threads)
        on_cycle = _on_cycle(comp)
        least = GROUP_MIN_VISITS if group_min_visits is None else int(group_min_visits)
        asked = least > 0 and n_states >= GROUP_MIN_STATES and (group_states or shift_chains)
        # (the states that walk alone: outside cycles, whose walks are shared. Where their walks
        # are short, neither groups of states nor the orbits of a chain spare much of them.)
        alone = _acyclic_units(np.arange(n_states, dtype=np.int32), comp) if asked else None
        long_walks = not asked or _walks_long(bt, trie, alone, least)
        chains = _chains(bt, int(chain_min_copies)) if shift_chains and long_walks else None
        grouped = bool(group_states) and long_walks
        if grouped and asked and chains is not None:
            # (the chains' rows come from their orbits: asked again of the other states)
            grouped = _walks_long(bt, trie, np.setdiff1d(alone, chains[0], assume_unique=True),
                                  least)
        if grouped:
            block, n_blocks = kernels.refine_states(bt.table, trie.max_depth)
        else:
            block, n_blocks = np.arange(n_states, dtype=np.int32), n_states
        if chains is not None:
            block = _unwalked(block, chains[0])
        partitions: dict = {}       # (class partitions per table seen, for this build)
        parts = [(trie, block, int(n_blocks), bt.table)]
        if (split_lengths or split_bytes) and grouped:
            parts = _bands(bt, trie, block, int(n_blocks), comp, split_lengths or (),
                           split_min_visits, split_bytes, local_classes and strategy != "bytes",
                           partitions)
        t2 = time.perf_counter()
        relaxed = relaxed_of()
        if chains is not None:   # (a band's groups come from its own refinement)
            parts = [(part, _unwalked(part_block, chains[0]), part_n, seen)
                     for part, part_block, part_n, seen in parts]
        walked, joined = [], []
        for part, part_block, part_n, seen in parts:
            views = [(bt, part_block)]
            if local_classes and strategy != "bytes" and seen is not bt.table:
                # (the tokens free of the split bytes: over all tokens, nearly every state
                # reaches one that tells apart every class, the closing quote's successors)
                views = _class_views(bt, seen, part_block, on_cycle, local_min_units,
                                     partitions)
            here = [_walk_rows(view, part, view_block, part_n, eos, vocab.size, comp, relaxed,
                               on_cycle, "classes" if view is not bt else strategy, share_walks,
                               byte_walk_passes, max_signature_states, threads, halves_min_units)
                    for view, view_block in views]
            walked += here
            joined.append(here[0][:3] if len(here) == 1 else
                          _state_joined([w[:3] for w in here], [b for _, b in views]))
        rows, state_row, finished_row = joined[0]
        for w in joined[1:]:
            rows, state_row, finished_row = _joined_rows(rows, state_row, finished_row, *w)
        info = walked[0][3]
        if len(walked) > 1:
            strategies = list(dict.fromkeys(w[3]["strategy"] for w in walked))
            info = {key: sum(w[3][key] for w in walked) for key in info if key != "strategy"}
            info["strategy"] = "+".join(strategies)
        info["grouped"] = grouped
        info["bands"] = len(parts)
        info["class_views"] = len(walked)
        info["chain_states"] = 0
        if chains is not None:
            rows, state_row, finished_row, walks, visited = _with_chain_rows(
                bt, trie, eos, vocab.size, rows, state_row, finished_row, chains, partitions)
            info["walks"] += walks
            info["visited"] += visited
            info["chain_states"] = int(chains[0].shape[0])
        t3 = time.perf_counter()
        arrays = dict(
            byte_classes=bt.byte_classes, table=bt.table, accepting=bt.accepting,
            mask_rows=rows.view(np.int32), state_row=state_row,
            forced_byte=_forced_bytes(bt), eos_ids=eos,
        )
        info.update(prepare_s=t2 - t1 + info["prepare_s"], walk_s=t3 - t2 - info["prepare_s"],
                    total_s=time.perf_counter() - t0)
        return cls(vocab, arrays, bt.start, finished_row, info)

    # -- queries --------------------------------------------------------------------------------
    @property
    def num_byte_classes(self) -> int:
        return int(self.table.shape[1])

    @property
    def n_words(self) -> int:
        """Words per bitmask row: ``ceil(vocab.size / 32)``."""
        return self._n_words

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's arrays (the vocabulary and its trie not counted).

        The CSR view counts once it has been materialised.
        """
        n = sum(getattr(self, name).nbytes for name in _ARRAY_FIELDS)
        if self._csr is not None:
            n += sum(a.nbytes for a in self._csr)
        return int(n)

    @property
    def num_allowed_pairs(self) -> int:
        """Allowed (state, text token) pairs: the CSR's length, counted without building it."""
        per_row = np.bitwise_count(self.mask_rows.view(np.uint32)).sum(axis=1, dtype=np.int64)
        total = int(per_row[self.state_row[1:]].sum())
        return total - int(np.count_nonzero(self.accepting[1:])) * len(self._eos_set)

    def _check_state(self, state: int) -> int:
        s = int(state)
        if not 0 <= s < self.num_states:
            raise ValueError(f"state {state} is outside 0..{self.num_states - 1}")
        return s

    def _materialise_csr(self):
        with self._csr_lock:
            if self._csr is None:
                flat, offsets = self.vocab.flat_bytes
                arrays = kernels.csr_from_rows(self.mask_rows.view(np.uint32), self.state_row,
                                               self.table, self.byte_classes, flat, offsets)
                for a in arrays:
                    a.flags.writeable = False
                self._csr = arrays
        return self._csr

    @property
    def csr_ptr(self) -> np.ndarray:
        """``int64[num_states + 1]``: state ``s``'s tokens are ``csr_tok[csr_ptr[s]:csr_ptr[s + 1]]``."""
        return (self._csr or self._materialise_csr())[0]

    @property
    def csr_tok(self) -> np.ndarray:
        """``int32[nnz]``: allowed text token ids of each state, ascending (EOS excluded)."""
        return (self._csr or self._materialise_csr())[1]

    @property
    def csr_next(self) -> np.ndarray:
        """``int32[nnz]``: the state each ``csr_tok`` entry leads to."""
        return (self._csr or self._materialise_csr())[2]

    def transitions(self, state: int) -> tuple[np.ndarray, np.ndarray]:
        """Allowed text tokens of ``state`` and the states they lead to, without the whole CSR.

        Returns
        -------
        ids : int32[k]
            Ascending; EOS excluded.
        nexts : int32[k]
        """
        s = self._check_state(state)
        if self._csr is not None:
            lo, hi = int(self._csr[0][s]), int(self._csr[0][s + 1])
            return self._csr[1][lo:hi].copy(), self._csr[2][lo:hi].copy()
        if s == 0:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        flat, offsets = self.vocab.flat_bytes
        return kernels.state_transitions(self.mask_rows[self.state_row[s]].view(np.uint32),
                                         self.table, self.byte_classes, flat, offsets, s)

    def allowed_token_ids(self, state: int, include_eos: bool = True) -> np.ndarray:
        """Token ids allowed in ``state`` (ascending), EOS included where the state accepts."""
        s = self._check_state(state)
        return row_token_ids(self, self.mask_rows[self.state_row[s]], include_eos)

    def forced_bytes(self, state: int) -> bytes:
        """The bytes forced from ``state``: while exactly one byte keeps it live and it does
        not accept, that byte (:attr:`forced_byte`)."""
        s, out = self._check_state(state), bytearray()
        for _ in range(self.num_states):
            b = int(self.forced_byte[s])
            if b < 0:
                break
            out.append(b)
            s = int(self.table[s, self.byte_classes[b]])
        return bytes(out)

    def next_state(self, state: int, token_id: int) -> int:
        """The state ``token_id`` leads to from ``state``: 0 if it is not allowed there.

        EOS ids and tokens with no bytes always give 0 here (EOS ends the sequence instead).
        """
        s = self._check_state(state)
        t = self.vocab.check_token_id(token_id)
        rows, state_rows, n_words, tokens, trans, table, n_classes, _ = self._fast
        tok = tokens[t]
        if tok is None or not (rows[state_rows[s] * n_words + (t >> 5)] >> (t & 31)) & 1:
            return 0
        for c in tok.translate(trans):
            s = table[s * n_classes + c]
        return s

    def mask_row(self, state: int) -> np.ndarray:
        """The packed bitmask of ``state`` (read-only view)."""
        return self.mask_rows[self.state_row[self._check_state(state)]]

    def is_accepting(self, state: int) -> bool:
        return bool(self.accepting[self._check_state(state)])

    def walk_bytes(self, state: int, data: bytes) -> int:
        """Follow ``data`` through the byte DFA from ``state``; 0 if it dies."""
        arr = np.frombuffer(bytes(data), dtype=np.uint8)
        return int(kernels.walk_bytes(self.table, self.byte_classes, self._check_state(state), arr))

    def __repr__(self) -> str:
        return (f"TokenIndex(num_states={self.num_states}, vocab_size={self.vocab_size}, "
                f"mask_rows={self.mask_rows.shape[0]}, nbytes={self.nbytes})")

    # -- persistence ----------------------------------------------------------------------------
    def save(self, path, *, cache_key: str | None = None, secret: bytes | str | None = None) -> None:
        """Write the index to ``path`` (an ``.npz`` archive, written atomically; see
        :mod:`.index_file`).

        The file carries the format version, the vocabulary fingerprint, ``cache_key`` if given,
        and one checksum of all of it (an HMAC with ``secret``, if given), all checked by
        :meth:`load`.
        """
        arrays = {n: getattr(self, n) for n in _ARRAY_FIELDS}
        meta = dict(vocab_fingerprint=self.vocab_fingerprint, vocab_name=self.vocab.name,
                    vocab_size=self.vocab_size,
                    start=self.start, finished_row=self.finished_row, cache_key=cache_key,
                    build_info={k: v for k, v in self.build_info.items() if k != "loaded_from"})
        write_index_file(path, arrays, meta, secret)

    @classmethod
    def load(cls, path, vocab: Vocabulary, *, cache_key: str | None = None,
             secret: bytes | str | None = None, max_bytes: int = MAX_INDEX_BYTES,
             verify: bool = False) -> "TokenIndex":
        """Read an index written by :meth:`save`, checked in full first (:mod:`.index_file`).

        Parameters
        ----------
        path : str or os.PathLike
        vocab : Vocabulary
        cache_key : str, optional
            The key it must have been saved under.
        secret : bytes or str, optional
            The secret it was saved with (required if, and only if, it was saved with one).
        max_bytes : int
            Most bytes the file may hold, checked before anything is allocated.
        verify : bool
            Also build the index again from the saved automaton and compare every state's mask
            (costs a build): damage that kept the file's structure and had its checksum
            recomputed is then found too.

        Raises
        ------
        VocabularyMismatch
            The index was built for another vocabulary.
        CorruptIndexError
            The file is unreadable, oversized, truncated, altered, inconsistent, of another format
            version, or saved under another cache key or secret.
        """
        arrays, meta = read_index_file(path, vocab, cache_key=cache_key, secret=secret,
                                       max_bytes=max_bytes)
        if verify:
            fresh = cls.build(ByteTables(arrays["byte_classes"], arrays["table"], arrays["accepting"],
                                         meta["start"]), vocab)
            pairs = np.unique(np.stack([fresh.state_row, arrays["state_row"]]), axis=1)
            if not all(np.array_equal(fresh.mask_rows[a], arrays["mask_rows"][b]) for a, b in pairs.T):
                raise CorruptIndexError(f"{os.fspath(path)}: masks differ from the saved automaton's")
        info = dict(meta.get("build_info") or {}, loaded_from=os.fspath(path))
        return cls(vocab, arrays, meta["start"], meta["finished_row"], info)

