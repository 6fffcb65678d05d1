"""Module-level caches bounded by an estimate of the bytes they hold, and one switch to clear them.

Automata recur from schema to schema (a ``format``, a ``pattern``, the any-value universe), so
tokenfsm keeps them across compilations. In a server that compiles schemas sent by its users every
such cache must stay bounded in *memory*, not in entries: 256 entries may be 256 small automata or
256 automata of 20,000 states each. :class:`ByteLRU` is a thread-safe least-recently-used map that
charges each entry an estimate of its size (:func:`estimate_bytes`) and drops the oldest entries
past its byte limit; :func:`byte_lru_cache` memoises a function with one (a drop-in for
``functools.lru_cache``); :class:`BoundedMemo` is a plain dict for hot paths that is emptied at
once when the bytes charged to it pass its limit. All of them register by name:
:func:`clear_caches` empties every one, :func:`cache_info` reports their sizes.

Example
-------
>>> from tokenfsm.automata.cache import byte_lru_cache, cache_info, clear_caches
>>> @byte_lru_cache("doc.squares", max_bytes=1 << 20)
... def squares(n):
...     return [i * i for i in range(n)]
>>> squares(4), squares(4) is squares(4)
([0, 1, 4, 9], True)
>>> info = cache_info()["doc.squares"]
>>> info.entries, 0 < info.nbytes <= info.max_bytes
(1, True)
>>> clear_caches(); cache_info()["doc.squares"].entries
0

The bounded-by-weight LRU follows Caffeine's and cachetools' ``maxsize`` with a ``getsizeof``
weigher; the registry of clearable caches is ``functools``' ``cache_clear`` gathered in one place.
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from collections import OrderedDict
from typing import Any, Callable, NamedTuple

import numpy as np

from .charset import CharSet

__all__ = ["ByteLRU", "BoundedMemo", "byte_lru_cache", "clear_caches", "cache_info", "CacheInfo",
           "estimate_bytes", "register_cache"]

#: Objects :func:`estimate_bytes` walks before it gives up and answers "too large to keep".
MAX_WALK = 200_000
_TOO_LARGE = 1 << 62
#: Shared program objects, never counted as a cache's own memory.
_NOT_WALKED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
               types.MethodType, functools.partial, threading.Lock().__class__)


class CacheInfo(NamedTuple):
    """What a registered cache holds: ``entries``, their estimated ``nbytes``, its ``max_bytes``,
    and the ``hits`` and ``misses`` counted since it was made."""

    entries: int
    nbytes: int
    max_bytes: int
    hits: int
    misses: int


_REGISTRY: "dict[str, Any]" = {}
_REGISTRY_LOCK = threading.Lock()


def register_cache(name: str, cache) -> None:
    """Register ``cache`` (with ``clear()`` and ``info() -> CacheInfo``) under ``name`` for
    :func:`clear_caches` and :func:`cache_info`. A name registered again is replaced (a module
    reloaded)."""
    with _REGISTRY_LOCK:
        _REGISTRY[name] = cache


def clear_caches() -> None:
    """Empty every registered tokenfsm cache (automata, schema pieces, token tries, walks).

    Nothing is lost but time: each entry is rebuilt when next needed."""
    with _REGISTRY_LOCK:
        caches = list(_REGISTRY.values())
    for c in caches:
        c.clear()


def cache_info() -> dict[str, CacheInfo]:
    """Every registered cache by name, with its entries and estimated bytes."""
    with _REGISTRY_LOCK:
        items = list(_REGISTRY.items())
    return {name: c.info() for name, c in items}


def _charset_bytes(cs: CharSet) -> int:
    """A code-point set: its tuple of ``(lo, hi)`` pairs (ints past 256 are objects of their own)."""
    return 120 + 128 * len(cs.ranges)


def _dfa_bytes(d) -> int:
    """A DFA: its table (a tuple of row tuples), its classes, and room for what is computed from
    it on demand and kept on it (edge lists, minimisation groups, the byte automaton)."""
    n, c = len(d.delta), len(d.classes)
    table = 56 + 8 * n + n * (56 + 8 * c)
    classes = sum(map(_charset_bytes, d.classes))
    return 3 * table + classes + 8 * len(d.accepting) + 400


def estimate_bytes(obj) -> int:
    """An estimate of the memory ``obj`` holds, shared parts counted once.

    Containers and objects are walked (``sys.getsizeof`` each); NumPy arrays count their buffer;
    automata (objects with ``delta`` and ``classes``) count their table and what may be kept on
    them later. Past :data:`MAX_WALK` objects the answer is "too large to keep" (``2**62``).
    """
    seen: set[int] = set()
    stack = [obj]
    total = 0
    walked = 0
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        walked += 1
        if walked > MAX_WALK:
            return _TOO_LARGE
        if o is None or isinstance(o, (bool, int, float, complex, str, bytes)):
            total += sys.getsizeof(o)
            continue
        if isinstance(o, CharSet):
            total += _charset_bytes(o)
            continue
        if isinstance(o, np.ndarray):
            base = o
            while isinstance(base.base, np.ndarray):
                base = base.base
            if id(base) not in seen or base is o:
                seen.add(id(base))
                total += 112 + base.nbytes
            continue
        if isinstance(o, _NOT_WALKED):
            continue
        if hasattr(o, "delta") and hasattr(o, "classes") and hasattr(o, "accepting"):
            total += _dfa_bytes(o)
            continue
        total += sys.getsizeof(o)
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        else:
            d = getattr(o, "__dict__", None)
            if d is not None:
                stack.append(d)
            for klass in type(o).__mro__:
                for slot in klass.__dict__.get("__slots__", ()):
                    v = getattr(o, slot, None)
                    if v is not None:
                        stack.append(v)
    return total


class ByteLRU:
    """A thread-safe least-recently-used map bounded by the estimated bytes of its values.

    Parameters
    ----------
    name : str
        Registered under this name (see :func:`cache_info`); ``None``: not registered.
    max_bytes : int
        Entries are dropped, least recently used first, while the total passes this; a value
        estimated larger than it is not kept at all.
    size_of : callable, optional
        ``value -> bytes`` (default :func:`estimate_bytes`, plus the key's own estimate).
    """

    def __init__(self, name: str | None, max_bytes: int, size_of: Callable[[Any], int] | None = None):
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise TypeError(f"max_bytes must be a non-negative int, not {max_bytes!r}")
        self.name = name
        self.max_bytes = max_bytes
        self._size_of = size_of or estimate_bytes
        self._data: "OrderedDict[Any, tuple[Any, int]]" = OrderedDict()
        self._lock = threading.Lock()
        self.nbytes = 0
        self.hits = 0
        self.misses = 0
        if name is not None:
            register_cache(name, self)

    def get(self, key, default=None):
        with self._lock:
            got = self._data.get(key)
            if got is None:
                self.misses += 1
                return default
            self._data.move_to_end(key)
            self.hits += 1
            return got[0]

    def put(self, key, value, nbytes: int | None = None) -> bool:
        """Keep ``value`` under ``key`` (charged ``nbytes``, estimated when None); returns whether
        it was kept (not when larger than the whole cache)."""
        if nbytes is None:
            nbytes = self._size_of(value) + estimate_bytes(key)
        nbytes = int(nbytes)
        if nbytes > self.max_bytes:
            return False
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            self._data[key] = (value, nbytes)
            self.nbytes += nbytes
            while self.nbytes > self.max_bytes:
                _, (_, n) = self._data.popitem(last=False)
                self.nbytes -= n
        return True

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.nbytes = 0

    def info(self) -> CacheInfo:
        return CacheInfo(len(self._data), self.nbytes, self.max_bytes, self.hits, self.misses)

    def __repr__(self) -> str:
        return f"ByteLRU({self.name!r}, {len(self)} entries, {self.nbytes:,} of {self.max_bytes:,} bytes)"


def byte_lru_cache(name: str, max_bytes: int, size_of: Callable[[Any], int] | None = None):
    """Memoise a function in a :class:`ByteLRU` (like ``functools.lru_cache``, bounded in bytes).

    Arguments must be hashable; exceptions are not cached. The wrapper has ``cache_clear()``,
    ``cache_info()`` and ``cache`` (the :class:`ByteLRU`).
    """

    def decorate(func):
        cache = ByteLRU(name, max_bytes, size_of)
        missing = object()

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            key = args if not kwargs else (args, tuple(sorted(kwargs.items())))
            got = cache.get(key, missing)
            if got is missing:
                got = func(*args, **kwargs)
                cache.put(key, got)
            return got

        wrapper.cache_clear = cache.clear
        wrapper.cache_info = cache.info
        wrapper.cache = cache
        return wrapper

    return decorate


class BoundedMemo(dict):
    """A dict for hot paths (``get`` and ``[]`` at dict speed) that empties itself once the bytes
    charged by :meth:`put` would pass ``max_bytes``; registered under ``name``.

    Writers call :meth:`put` with the entry's size (they know it cheaply); reads are plain dict
    reads. Emptying all at once is coarser than least-recently-used, and right for memos whose
    entries are cheap to rebuild and recur in bursts (one schema's automata).
    """

    def __init__(self, name: str | None, max_bytes: int):
        super().__init__()
        self.name = name
        self.max_bytes = int(max_bytes)
        self.nbytes = 0
        self._lock = threading.Lock()
        if name is not None:
            register_cache(name, self)

    def put(self, key, value, nbytes: int) -> None:
        """Keep ``value`` under ``key``, charged ``nbytes`` (the memo is emptied first if it would
        pass its limit; a value larger than the limit is not kept)."""
        nbytes = int(nbytes)
        if nbytes > self.max_bytes:
            return
        with self._lock:
            if self.nbytes + nbytes > self.max_bytes:
                super().clear()
                self.nbytes = 0
            self[key] = value
            self.nbytes += nbytes

    def clear(self) -> None:
        with self._lock:
            super().clear()
            self.nbytes = 0

    def info(self) -> CacheInfo:
        return CacheInfo(len(self), self.nbytes, self.max_bytes, 0, 0)

    def __repr__(self) -> str:
        return f"BoundedMemo({self.name!r}, {len(self)} entries, {self.nbytes:,} of {self.max_bytes:,} bytes)"
