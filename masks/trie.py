"""The token trie: a vocabulary's byte strings as a DFS-flattened prefix tree of plain arrays.

Walking a trie instead of a token list lets an index build share the work of common prefixes and
drop a whole subtree (every token starting with a given prefix) as soon as the DFA dies. The trie
depends only on the vocabulary, so it is built once per vocabulary fingerprint and kept in memory.

Layout (node 0 is the root; nodes in preorder, children in byte order):

* ``sym[i]``: byte on the edge into node ``i``;
* ``depth[i]``: its depth; ``end[i]``: one past the last node of its subtree;
* ``tok_ids[tok_ptr[i]:tok_ptr[i + 1]]``: the token ids whose bytes end exactly at node ``i``
  (several ids when a vocabulary has duplicate byte strings).

For a given byte DFA, :meth:`TokenTrie.class_trie` merges the trie over the DFA's byte classes:
tokens with the same class sequence walk once. That trie is cached per byte-class map; since every
schema brings a new map, index builds walk the byte trie itself and build the class trie only when
the walks prove long (see :meth:`.TokenIndex.build`). :meth:`TokenTrie.token_numbering` numbers
the token-ending nodes once per trie for the walk kernel.

Example
-------
>>> from tokenfsm.masks import Vocabulary
>>> from tokenfsm.masks.trie import token_trie
>>> t = token_trie(Vocabulary([b"a", b"ab", b"b"]))
>>> t.num_nodes, t.tok_ids.tolist()
(4, [0, 1, 2])

The flattened, subtree-skipping trie is llguidance's token trie (``toktrie``) in array form; the
class merge is the byte-class dedupe outlines-core and xgrammar apply in their own ways.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tokenfsm.automata.cache import CacheInfo, register_cache

from . import kernels
from .vocab import Vocabulary

__all__ = ["TokenTrie", "ClassTrie", "WalkCache", "token_trie", "clear_trie_cache"]

#: Bytes of shared component walks kept per byte trie, and per class trie (see :class:`WalkCache`).
WALK_CACHE_BYTES = 32 << 20
CLASS_WALK_CACHE_BYTES = 2 << 20


class WalkCache:
    """Walks of strongly connected components through one trie, kept for later index builds.

    The key is a component's canonical form (:func:`.kernels.component_signatures`), the value
    what :func:`.kernels.component_walk` returns. Almost every JSON schema has the same string
    body (and UTF-8 continuation states), whose walk reaches nearly the whole vocabulary: kept
    here, it is walked once per vocabulary and process, like the trie itself. Least recently used
    entries go first once the arrays held pass ``max_bytes``. Thread-safe.
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self.nbytes = 0
        self.hits = 0
        self.misses = 0
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._d)

    def get(self, key: bytes):
        with self._lock:
            hit = self._d.get(key)
            if hit is None:
                self.misses += 1
                return None
            self._d.move_to_end(key)
            self.hits += 1
            return hit[0]

    def put(self, key: bytes, entry: tuple) -> None:
        size = len(key) + sum(a.nbytes for a in entry if isinstance(a, np.ndarray))
        if size > self.max_bytes:
            return
        # the arrays stay writeable (read-only ones would make Numba compile the walk kernel a
        # second time, for another signature); they are only ever read
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            self._d[key] = (entry, size)
            self.nbytes += size
            while self.nbytes > self.max_bytes:
                _, (_, sz) = self._d.popitem(last=False)
                self.nbytes -= sz

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.nbytes = 0


@dataclass(frozen=True, eq=False)
class ClassTrie:
    """A trie over byte-class ids (see :meth:`TokenTrie.class_trie`)."""

    sym: np.ndarray
    depth: np.ndarray
    end: np.ndarray
    tok_ptr: np.ndarray
    tok_ids: np.ndarray
    num_classes: int
    _numbering: list = field(default_factory=list, repr=False)
    walk_cache: WalkCache = field(default_factory=lambda: WalkCache(CLASS_WALK_CACHE_BYTES),
                                  repr=False)

    @property
    def num_nodes(self) -> int:
        return int(self.sym.shape[0])

    def token_numbering(self):
        """``(node_bit, n_tok_nodes, max_depth)`` for :func:`.kernels.walk_masks` (cached)."""
        return _numbering(self)


@dataclass(frozen=True, eq=False)
class TokenTrie:
    """DFS-flattened byte trie of a vocabulary's text tokens.

    Attributes
    ----------
    sym : uint8[nodes]
    depth, end : int32[nodes]
    tok_ptr : int32[nodes + 1]
    tok_ids : int32[text tokens]
    vocab_size : int
    vocab_fingerprint : str
    """

    sym: np.ndarray
    depth: np.ndarray
    end: np.ndarray
    tok_ptr: np.ndarray
    tok_ids: np.ndarray
    vocab_size: int
    vocab_fingerprint: str
    _class_tries: OrderedDict = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _numbering: list = field(default_factory=list, repr=False)
    walk_cache: WalkCache = field(default_factory=lambda: WalkCache(WALK_CACHE_BYTES), repr=False)
    _bands: dict = field(default_factory=dict, repr=False)

    def token_numbering(self):
        """``(node_bit, n_tok_nodes, max_depth)`` for :func:`.kernels.walk_masks` (cached):
        ``node_bit[i]`` numbers node ``i`` among the token-ending nodes (preorder), or is -1."""
        return _numbering(self)

    def band(self, shortest: int, longest: int | None = None) -> "TokenTrie":
        """The trie of this one's tokens of ``shortest`` to ``longest`` bytes (None: no upper
        bound): the nodes on their paths only (cached; a band has a walk cache of its own).

        >>> from tokenfsm.masks import Vocabulary
        >>> t = token_trie(Vocabulary([b"a", b"ab", b"abc", b"b"]))
        >>> [t.band(0, 2).tok_ids.tolist(), t.band(3).tok_ids.tolist()]
        [[0, 1, 3], [2]]
        >>> t.band(2, 2).tok_ids.tolist()
        [1]
        >>> t.band(3).num_nodes, t.band(3).max_depth   # root, a, ab, abc
        (4, 3)
        """
        key = (int(shortest), None if longest is None else int(longest))

        def ends_here():
            ends = self.depth >= shortest
            return ends if longest is None else ends & (self.depth <= longest)

        return self._kept(key, ends_here, f"{key[0]}-{'' if longest is None else key[1]}")

    def holding(self, some: bytes, holds: bool = True) -> "TokenTrie":
        """The trie of this one's tokens holding one of the bytes ``some`` or more (``holds``),
        or none of them (cached, with a walk cache of its own; see :meth:`band`).

        >>> from tokenfsm.masks import Vocabulary
        >>> t = token_trie(Vocabulary([b"a", b'a"', b'"', b"ab", b"b,"]))
        >>> t.holding(b'",').tok_ids.tolist(), t.holding(b'",', False).tok_ids.tolist()
        ([2, 1, 4], [0, 3])
        """
        key = (bytes(sorted(set(some))), bool(holds))

        def ends_here():
            hit = np.zeros(256, dtype=bool)
            hit[np.frombuffer(key[0], dtype=np.uint8)] = True
            marks = np.flatnonzero(hit[self.sym])
            marks = marks[marks > 0]                   # (the root's symbol is no byte)
            below = np.zeros(self.sym.shape[0] + 1, dtype=np.int64)   # marked nodes' subtrees
            np.add.at(below, marks, 1)
            np.add.at(below, self.end[marks], -1)
            held = np.cumsum(below[:-1]) > 0
            return held if holds else ~held

        return self._kept(key, ends_here, f"{'+' if holds else '-'}{key[0].hex()}")

    def _kept(self, key, ends_here, label: str) -> "TokenTrie":
        """The trie of the tokens ending at the nodes ``ends_here()`` marks, kept under ``key``."""
        with self._lock:
            hit = self._bands.get(key)
        if hit is not None:
            return hit
        n = self.sym.shape[0]
        counts = np.diff(self.tok_ptr)
        ends_here = ends_here() & (counts > 0)
        ends_here[0] = False
        below = np.zeros(n + 1, dtype=np.int64)      # token nodes kept before each node
        np.cumsum(ends_here, out=below[1:])
        keep = below[self.end] > below[:n]         # a kept token ends in the node's subtree
        keep[0] = True
        new_before = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(keep, out=new_before[1:])
        kept_counts = np.where(ends_here, counts, 0)[keep].astype(np.int32)
        tok_ptr = np.zeros(int(keep.sum()) + 1, dtype=np.int32)
        np.cumsum(kept_counts, out=tok_ptr[1:])
        arrays = (self.sym[keep], self.depth[keep], new_before[self.end[keep]].astype(np.int32),
                  tok_ptr, self.tok_ids[np.repeat(ends_here, counts)])
        band = TokenTrie(*(np.ascontiguousarray(a) for a in arrays), self.vocab_size,
                         f"{self.vocab_fingerprint}:{label}")
        for a in (band.sym, band.depth, band.end, band.tok_ptr, band.tok_ids):
            a.flags.writeable = False
        with self._lock:
            return self._bands.setdefault(key, band)

    @classmethod
    def build(cls, vocab: Vocabulary) -> "TokenTrie":
        """Build the trie of ``vocab``'s text tokens (EOS and special ids excluded)."""
        groups: dict[bytes, list[int]] = {}
        for i, t in enumerate(vocab.tokens):
            if t is not None:
                groups.setdefault(t, []).append(i)
        keys = sorted(groups)
        lens = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.frombuffer(b"".join(keys), dtype=np.uint8)
        if flat.size == 0:
            flat = np.zeros(0, dtype=np.uint8)
        sym, depth, end, key = kernels.build_trie(flat, offsets)
        counts = np.fromiter((len(groups[k]) for k in keys), dtype=np.int32, count=len(keys))
        node_count = np.zeros(sym.shape[0], dtype=np.int32)
        has = key >= 0
        node_count[has] = counts[key[has]]
        tok_ptr = np.zeros(sym.shape[0] + 1, dtype=np.int32)
        np.cumsum(node_count, out=tok_ptr[1:])
        ids = [i for k in keys for i in groups[k]]  # preorder == sorted order of the keys
        tok_ids = np.asarray(ids, dtype=np.int32)
        for a in (sym, depth, end, tok_ptr, tok_ids):
            a.flags.writeable = False
        return cls(sym, depth, end, tok_ptr, tok_ids, vocab.size, vocab.fingerprint)

    @property
    def num_nodes(self) -> int:
        """Number of trie nodes, root included."""
        return int(self.sym.shape[0])

    @cached_property
    def max_depth(self) -> int:
        """Length in bytes of the longest token (0 for an empty trie; computed once: lazy
        indexes read it per mask row)."""
        return int(self.depth.max()) if self.depth.size else 0

    @cached_property
    def first_byte_nodes(self) -> np.ndarray:
        """``int64[256]``: the nodes of the tokens starting with each byte, the most a walk
        whose first byte that is can visit."""
        first = np.flatnonzero(self.depth == 1)
        out = np.zeros(256, dtype=np.int64)
        out[self.sym[first]] = self.end[first] - first
        out.flags.writeable = False
        return out

    @cached_property
    def nodes(self) -> np.ndarray:
        """The nodes as records ``(byte, depth, end, first token index)``: ``int32[num_nodes + 1,
        4]``, the last record holding only ``tok_ptr[-1]`` (so node ``i``'s tokens are
        ``tok_ids[nodes[i, 3]:nodes[i + 1, 3]]``). A walk that jumps across the trie (a lazy
        index's mask rows) reads one memory line per node instead of one per array."""
        n = self.sym.shape[0]
        out = np.zeros((n + 1, 4), dtype=np.int32)
        out[:n, 0] = self.sym
        out[:n, 1] = self.depth
        out[:n, 2] = self.end
        out[:, 3] = self.tok_ptr
        out.flags.writeable = False
        return out

    @property
    def num_tokens(self) -> int:
        """Number of text tokens in the trie."""
        return int(self.tok_ids.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes held by the trie's arrays (:attr:`nodes` included once made)."""
        extra = self.__dict__["nodes"].nbytes if "nodes" in self.__dict__ else 0
        return extra + sum(a.nbytes for a in (self.sym, self.depth, self.end, self.tok_ptr,
                                              self.tok_ids))

    def cached_class_trie(self, byte_classes: np.ndarray, num_classes: int) -> ClassTrie | None:
        """The trie merged over ``byte_classes`` if :meth:`class_trie` has made it (and still
        keeps it), else None: nothing is built."""
        with self._lock:
            return self._class_tries.get(_class_key(byte_classes, num_classes))

    def class_trie(self, byte_classes: np.ndarray, num_classes: int, max_cached: int = 16) -> ClassTrie:
        """The trie merged over ``byte_classes`` (cached per class map).

        Parameters
        ----------
        byte_classes : uint8[256]
            Byte -> class id of a byte DFA.
        num_classes : int
            Number of classes.
        max_cached : int
            Class tries kept for this vocabulary (least recently used dropped first).
        """
        k = _class_key(byte_classes, num_classes)
        with self._lock:
            hit = self._class_tries.get(k)
            if hit is not None:
                self._class_tries.move_to_end(k)
                return hit
        arrays = kernels.build_class_trie(
            self.sym, self.depth, self.end, self.tok_ptr, self.tok_ids,
            np.ascontiguousarray(byte_classes, dtype=np.uint8), int(num_classes),
        )
        for a in arrays:
            a.flags.writeable = False
        ct = ClassTrie(*arrays, num_classes=int(num_classes))
        with self._lock:
            self._class_tries[k] = ct
            while len(self._class_tries) > max_cached:
                self._class_tries.popitem(last=False)
        return ct


def _class_key(byte_classes, num_classes: int) -> tuple:
    """The key a trie merged over ``byte_classes`` is kept under."""
    return bytes(np.ascontiguousarray(byte_classes, dtype=np.uint8)), int(num_classes)


def _numbering(trie):
    if not trie._numbering:  # computing it twice in a race is harmless: same arrays
        node_bit, count = kernels.token_nodes(trie.tok_ptr)
        node_bit.flags.writeable = False
        max_depth = int(trie.depth.max()) if trie.depth.size else 0
        trie._numbering[:] = [(node_bit, int(count), max_depth)]
    return trie._numbering[0]


_CACHE: "OrderedDict[str, TokenTrie]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
_BUILD_LOCKS: dict[str, threading.Lock] = {}
MAX_CACHED_TRIES = 8
#: Most bytes the cached tries may hold, each charged for its arrays and for what it may keep:
#: its walk cache, its class tries (at most 16, each about as large as it) with theirs, and its
#: bands (:meth:`TokenTrie.band`) likewise.
MAX_TRIE_CACHE_BYTES = 768 << 20


def _charged_bytes(trie: "TokenTrie") -> int:
    return (trie.nbytes * 17 + WALK_CACHE_BYTES + 16 * CLASS_WALK_CACHE_BYTES
            + sum(map(_charged_bytes, list(trie._bands.values()))))


class _TrieCacheEntry:
    """The trie cache as :func:`tokenfsm.automata.cache.cache_info` and ``clear_caches`` see it."""

    def clear(self) -> None:
        clear_trie_cache()

    def info(self) -> CacheInfo:
        with _CACHE_LOCK:
            tries = list(_CACHE.values())
        return CacheInfo(len(tries), sum(map(_charged_bytes, tries)), MAX_TRIE_CACHE_BYTES, 0, 0)


def token_trie(vocab: Vocabulary) -> TokenTrie:
    """The :class:`TokenTrie` of ``vocab``, built once per vocabulary fingerprint and cached.

    Thread-safe: concurrent callers for the same vocabulary wait for one build.
    """
    fp = vocab.fingerprint
    with _CACHE_LOCK:
        hit = _CACHE.get(fp)
        if hit is not None:
            _CACHE.move_to_end(fp)
            return hit
        lock = _BUILD_LOCKS.setdefault(fp, threading.Lock())
    with lock:
        with _CACHE_LOCK:
            hit = _CACHE.get(fp)
        if hit is not None:
            return hit
        trie = TokenTrie.build(vocab)
        with _CACHE_LOCK:
            _CACHE[fp] = trie
            while len(_CACHE) > 1 and (len(_CACHE) > MAX_CACHED_TRIES or sum(
                    map(_charged_bytes, _CACHE.values())) > MAX_TRIE_CACHE_BYTES):
                _CACHE.popitem(last=False)
            _BUILD_LOCKS.pop(fp, None)
    return trie


def clear_trie_cache() -> None:
    """Drop every cached trie, with the component walks kept on it (mainly for benchmarks
    measuring cold builds)."""
    with _CACHE_LOCK:
        for trie in _CACHE.values():
            trie.walk_cache.clear()
        _CACHE.clear()


register_cache("masks.trie", _TrieCacheEntry())
