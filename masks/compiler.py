"""Compile grammars into token indexes for one vocabulary, with an in-memory and on-disk cache.

Serving stacks see the same schema many times; building its index again costs milliseconds to
seconds. :class:`IndexCompiler` keys every index by *everything* that shapes it: the grammar (regex
text, or the JSON Schema with its key order kept), every compile option with defaults filled in
(whitespace, exclusions, property order, strictness, depth, budget...), the vocabulary fingerprint,
the index format version and the package version. Two requests differing in any of them never share
an index; a pydantic model is keyed by the JSON Schema it generates, so a model redefined with other
fields is another key. The in-memory cache is an LRU bounded in entries and in bytes; the optional
disk cache survives restarts. Each file on disk holds the key it was saved under and a checksum of
everything in it (an HMAC with ``secret``); an entry that fails to load (truncated, altered, copied
under another key, another format) is discarded with a warning and rebuilt. Temporary files that
writers killed mid-write left behind are removed when a compiler opens the directory.

The directory must not be writable by anyone the server does not trust: a file there can be
replaced by another valid index (with a recomputed checksum) unless a ``secret`` is used, and
Numba's own kernel cache (``NUMBA_CACHE_DIR``, or ``__pycache__`` next to the package) holds
compiled code that is loaded and run as it is.

Example
-------
>>> from tokenfsm.masks import IndexCompiler, Matcher
>>> compiler = IndexCompiler(vocab, cache_dir="~/.cache/tokenfsm")          # doctest: +SKIP
>>> index = compiler.json_schema({"type": "object", "properties": {"a": {"type": "integer"}}})  # doctest: +SKIP
>>> index is compiler.json_schema({"type": "object", "properties": {"a": {"type": "integer"}}})  # doctest: +SKIP
True

The cache-by-everything key follows xgrammar's ``GrammarCompiler`` cache; the persisted index is in
the spirit of outlines-core's serialisable ``Index``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np

from .errors import CorruptIndexError, VocabularyMismatch
from .index import FORMAT_VERSION, TokenIndex, as_byte_dfa
from .index_file import remove_stale_temporaries
from .vocab import Vocabulary

__all__ = ["IndexCompiler"]


@functools.cache
def _package_version() -> str:
    """The installed distribution's version (read once: reading it parses its metadata file)."""
    try:
        from importlib.metadata import version

        return version("tokenfsm")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return "0"


#: Default bound on the bytes of the indexes an :class:`IndexCompiler` keeps in memory.
MEMORY_CACHE_BYTES = 1 << 30
#: Flat automata of more than this many states get a :class:`~.pushdown.PushdownIndex` over the
#: automaton without calls rather than an eager index: its small rows made up front in one
#: kernel call, string bodies' from shared region walks, the rest when first needed. A
#: Kubernetes schema of 26,000 states: 165-260 ms to index eagerly on Llama-3, 80 ms lazily;
#: Handwritten allany20 (33,000 states): 9.4 s eagerly.
LAZY_STATES = 5000


def _charged_bytes(index) -> int:
    """What an index held in memory is charged: its arrays (``nbytes``), or for a stack index,
    which fills its rows as it goes, the default limit of its row cache; for a union index,
    its branches' charges and its own row cache's limit."""
    from .pushdown import ROW_CACHE_BYTES
    from .union import UnionIndex

    if isinstance(index, UnionIndex):
        return sum(map(_charged_bytes, index.branches)) + index.cache_bytes
    nbytes = getattr(index, "nbytes", None)
    return int(nbytes) if nbytes is not None else ROW_CACHE_BYTES


def _bound_options(func, first, options: dict) -> dict:
    """``options`` with the defaults of ``func`` filled in (so explicit defaults share a key)."""
    try:
        sig = inspect.signature(func)
        bound = sig.bind(first, **options)
        bound.apply_defaults()
        args = dict(bound.arguments)
        args.pop(next(iter(sig.parameters)))
        kw = [n for n, p in sig.parameters.items() if p.kind is inspect.Parameter.VAR_KEYWORD]
        for n in kw:  # flatten **kwargs
            args.update(args.pop(n, {}) or {})
        return args
    except (TypeError, ValueError):
        return dict(options)


def _canonical(obj) -> str:
    """Deterministic JSON for cache keys: dict order kept (key order can matter), sets sorted,
    dataclasses (a ``Budget``) by their compared fields; ``TypeError`` for anything whose content
    cannot be written down (its ``repr`` might not change when its content does)."""

    def default(o):
        if isinstance(o, (set, frozenset)):
            return sorted(o, key=repr)
        if isinstance(o, np.ndarray):
            return o.tolist()
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return {"__class__": type(o).__qualname__,
                    **{f.name: getattr(o, f.name) for f in dataclasses.fields(o) if f.compare}}
        if isinstance(o, Mapping):
            return dict(o)
        if isinstance(o, (tuple, list)) or (isinstance(o, Sequence) and not isinstance(o, (str, bytes))):
            return list(o)
        raise TypeError(f"cannot use a {type(o).__name__} in a cache key")

    return json.dumps(obj, default=default, ensure_ascii=False, separators=(",", ":"))


def _schema_value(schema):
    """A JSON Schema as plain data for the key: JSON text decoded, a pydantic model class as the
    schema it generates (its ``repr`` stays the same when it is redefined with other fields)."""
    if isinstance(schema, (str, bytes)):
        return json.loads(schema, object_pairs_hook=dict)
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    return schema


class IndexCompiler:
    """Build and cache :class:`TokenIndex` objects for one vocabulary.

    Parameters
    ----------
    vocab : Vocabulary
    cache_dir : str or os.PathLike, optional
        Directory for persisted indexes (created if missing). ``None``: memory only.
    max_entries : int
        Indexes kept in memory (least recently used dropped first); 0 disables the memory cache.
    strategy : str
        Passed to :meth:`TokenIndex.build`.
    max_bytes : int
        Most bytes the indexes kept in memory may hold (``nbytes``; a stack index is charged its
        row cache's limit too).
    secret : bytes or str, optional
        Saved files are signed with it (HMAC-SHA256) and only files signed with it are loaded.
    lazy_states : int or None
        A flat automaton of more states than this gets a :class:`~.pushdown.PushdownIndex`
        (rows made when first needed, kept in memory only) instead of an eager
        :class:`TokenIndex`; ``None``: always eager (and saved to ``cache_dir``). Same masks.
    threads : int, optional
        Threads each build may use, passed to :meth:`TokenIndex.build` (default: two where the
        process may run on two CPUs). Same masks.

    Notes
    -----
    Thread-safe; concurrent requests for the same key wait for a single build.
    ``stats`` counts ``hits``, ``disk_hits``, ``builds`` and ``disk_errors``.
    """

    def __init__(self, vocab: Vocabulary, cache_dir=None, max_entries: int = 64, strategy: str = "auto",
                 max_bytes: int = MEMORY_CACHE_BYTES, secret: bytes | str | None = None,
                 lazy_states: int | None = LAZY_STATES, threads: int | None = None):
        if not isinstance(vocab, Vocabulary):
            raise TypeError(f"IndexCompiler needs a Vocabulary, not {type(vocab).__name__}")
        for name, v in (("max_entries", max_entries), ("max_bytes", max_bytes)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise TypeError(f"{name} must be a non-negative int, not {v!r}")
        if secret is not None and not (isinstance(secret, (str, bytes)) and secret):
            raise TypeError("secret must be non-empty bytes or str, or None")
        if lazy_states is not None and (isinstance(lazy_states, bool) or not isinstance(
                lazy_states, int) or lazy_states < 0):
            raise TypeError(f"lazy_states must be a non-negative int or None, not {lazy_states!r}")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                    or threads < 1):
            raise TypeError(f"threads must be a positive int or None, not {threads!r}")
        self.lazy_states = lazy_states
        self.threads = threads
        self.vocab = vocab
        self.cache_dir = os.path.expanduser(os.fspath(cache_dir)) if cache_dir is not None else None
        if self.cache_dir is not None:
            os.makedirs(self.cache_dir, exist_ok=True)
            remove_stale_temporaries(self.cache_dir)
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.strategy = strategy
        self._secret = secret
        self.stats = dict(hits=0, disk_hits=0, builds=0, disk_errors=0)
        self._memory: "OrderedDict[str, TokenIndex]" = OrderedDict()
        self._memory_bytes: dict[str, int] = {}
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}

    # -- public entry points --------------------------------------------------------------------
    def regex(self, pattern: str, **options) -> TokenIndex:
        """Index of a regular expression (Python ``re`` dialect, full match).

        ``options`` go to :func:`tokenfsm.automata.lazy_regex.regex_automaton` (``flags``,
        ``budget``, ``lazy_above``) and are part of the cache key. A pattern whose flat automaton
        would be large (``[\\s\\S]{0,100000000}``) gives a :class:`~.pushdown.PushdownIndex` over
        a lazy network (counts held in the configuration, rows on demand), cached in memory only.
        """
        from tokenfsm.automata.lazy_regex import regex_automaton

        opts = _bound_options(regex_automaton, pattern, options)
        key = self.cache_key("regex", pattern, opts)
        return self._get(key, lambda: regex_automaton(pattern, **options))

    def json_schema(self, schema, **options) -> TokenIndex:
        """Index of the JSON text valid under ``schema`` (a dict or JSON string).

        ``options`` (``whitespace``, ``excludes``, ``strict``, ``allow_extra_keys``,
        ``property_order``, ``max_depth``, ``budget``, ...) go to
        ``tokenfsm.schema.compile_json_schema`` and are part of the cache key.

        A recursive schema that compiles to a stack automaton (``recursive`` set on the compiled
        schema), or one whose value is counted (``lazy`` set: a string of ``maxLength: 10**9``,
        an array of ``minItems: 10**6``, see :mod:`tokenfsm.schema.lower_lazy`), gives a
        :class:`~.pushdown.PushdownIndex` (same :class:`~.matcher.Matcher` API, rows computed
        per configuration); it is cached in memory only, not on disk. So does a flat automaton
        of more than ``lazy_states`` states. A schema whose root union was compiled branch by
        branch (``branches`` set) gives a :class:`~.union.UnionIndex` of its branches' indexes,
        also in memory only.
        """
        from tokenfsm.schema import compile_json_schema

        schema = _schema_value(schema)
        opts = _bound_options(compile_json_schema, schema, options)
        key = self.cache_key("json_schema", schema, opts)
        return self._get(key, lambda: compile_json_schema(schema, **options))

    def dfa(self, dfa) -> TokenIndex:
        """Index of an automaton given directly (keyed by its byte tables' contents)."""
        bt = as_byte_dfa(dfa)
        h = hashlib.sha256()
        for a in (bt.byte_classes, bt.table, bt.accepting):
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(np.ascontiguousarray(a).tobytes())
        key = self.cache_key("dfa", {"sha256": h.hexdigest(), "start": bt.start}, {})
        return self._get(key, lambda: bt)

    def cache_key(self, kind: str, grammar, options: dict) -> str:
        """The hex key an index is cached under (see the module docstring for what it covers)."""
        payload = _canonical(dict(
            kind=kind, grammar=grammar, options=options, vocab=self.vocab.fingerprint,
            format=FORMAT_VERSION, package=_package_version(), strategy=self.strategy,
        ))
        return hashlib.sha256(payload.encode()).hexdigest()

    def clear(self) -> None:
        """Empty the memory cache (the disk cache is left alone)."""
        with self._lock:
            self._memory.clear()
            self._memory_bytes.clear()

    def __len__(self) -> int:
        return len(self._memory)

    # -- caching --------------------------------------------------------------------------------
    def _get(self, key: str, make) -> TokenIndex:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                self.stats["hits"] += 1
                return hit
            lock = self._building.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                hit = self._memory.get(key)
                if hit is not None:
                    self.stats["hits"] += 1
                    return hit
            index = self._load_disk(key)
            if index is None:
                index = self.index_of(make())
                with self._lock:
                    self.stats["builds"] += 1
                if isinstance(index, TokenIndex):
                    self._save_disk(key, index)
            with self._lock:
                size = _charged_bytes(index)
                if self.max_entries > 0 and size <= self.max_bytes:
                    self._memory[key] = index
                    self._memory_bytes[key] = size
                    while (len(self._memory) > self.max_entries
                           or sum(self._memory_bytes.values()) > self.max_bytes):
                        old, _ = self._memory.popitem(last=False)
                        del self._memory_bytes[old]
                self._building.pop(key, None)
        return index

    def index_of(self, grammar):
        """The index of a compiled grammar as this compiler builds it (not cached): a
        :class:`~.union.UnionIndex` of its branches' indexes for a schema compiled branch by
        branch (``branches``); a :class:`~.pushdown.PushdownIndex` for a schema on the stack
        route (``recursive``: rows per configuration, on demand; its flat ``dfa`` is not built),
        a counted one (``lazy``) or a lazy network itself (``call_ptr``); else
        :meth:`_flat_index`."""
        from .pushdown import PushdownIndex

        if getattr(grammar, "branches", ()):
            from .union import UnionIndex

            return UnionIndex([self.index_of(b) for b in grammar.branches])
        if getattr(grammar, "recursive", None) is not None:
            return PushdownIndex(grammar.recursive.to_bytes(), self.vocab)
        if getattr(grammar, "lazy", None) is not None:
            return PushdownIndex(grammar.lazy, self.vocab)
        if hasattr(grammar, "call_ptr"):
            return PushdownIndex(grammar, self.vocab)
        return self._flat_index(grammar)

    def warm_up(self) -> dict:
        """Load (or compile) every kernel this compiler's indexes and matchers call, by taking
        each route of :data:`.warmup.WARM_UPS` (nothing is kept in the caches): the first
        request of each kind then loads none, nor reads what a request reads once (the
        package's version, for the cache keys). Returns ``{"seconds", "kernels", "routes"}``: what
        it took, the kernel signatures it loaded or compiled, the routes taken."""
        from .warmup import warm_up

        return warm_up(self)

    def _flat_index(self, grammar):
        """The index of a flat automaton: eager, or rows on demand past ``lazy_states``."""
        bt = as_byte_dfa(grammar)
        if self.lazy_states is not None and bt.table.shape[0] > self.lazy_states:
            from tokenfsm.automata.recursive import PushdownBytes

            from .pushdown import PushdownIndex

            return PushdownIndex(PushdownBytes.without_calls(bt), self.vocab)
        return TokenIndex.build(bt, self.vocab, strategy=self.strategy, threads=self.threads)

    def _path(self, key: str) -> str:
        return os.path.join(self.cache_dir, f"{key}.tfidx.npz")

    def _load_disk(self, key: str) -> TokenIndex | None:
        if self.cache_dir is None:
            return None
        path = self._path(key)
        if not os.path.exists(path):
            return None
        try:
            index = TokenIndex.load(path, self.vocab, cache_key=key, secret=self._secret)
        except (CorruptIndexError, VocabularyMismatch, OSError) as e:
            warnings.warn(f"discarding cached index {path}: {e}", RuntimeWarning, stacklevel=3)
            with self._lock:
                self.stats["disk_errors"] += 1
            try:
                os.unlink(path)
            except OSError:
                pass
            return None
        with self._lock:
            self.stats["disk_hits"] += 1
        return index

    def _save_disk(self, key: str, index: TokenIndex) -> None:
        if self.cache_dir is None:
            return
        try:
            index.save(self._path(key), cache_key=key, secret=self._secret)
        except OSError as e:
            warnings.warn(f"cannot write index cache {self._path(key)}: {e}", RuntimeWarning, stacklevel=3)
