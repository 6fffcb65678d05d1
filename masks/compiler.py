"""Compile grammars into token indexes for one vocabulary, with an in-memory and on-disk cache.

Serving stacks see the same schema many times; building its index again costs milliseconds to
seconds. :class:`IndexCompiler` keys every index by *everything* that shapes it: the grammar (regex
text, or the JSON Schema with its key order kept), every compile option with defaults filled in
(whitespace, exclusions, property order, strictness, depth, budget...), the vocabulary fingerprint,
the index format version and the package version. Two requests differing in any of them never share
an index. The in-memory cache is a bounded LRU; the optional disk cache survives restarts, and an
entry that fails to load (truncated, altered, another format) is discarded and rebuilt.

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

import hashlib
import inspect
import json
import os
import threading
import warnings
from collections import OrderedDict

import numpy as np

from .errors import CorruptIndexError, VocabularyMismatch
from .index import FORMAT_VERSION, TokenIndex, as_byte_dfa
from .vocab import Vocabulary

__all__ = ["IndexCompiler"]


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("tokenfsm")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return "0"


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
    """Deterministic JSON for cache keys: dict order kept (key order can matter), sets sorted."""

    def default(o):
        if isinstance(o, (set, frozenset)):
            return sorted(o, key=repr)
        if isinstance(o, np.ndarray):
            return o.tolist()
        return repr(o)

    return json.dumps(obj, default=default, ensure_ascii=False, separators=(",", ":"))


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

    Notes
    -----
    Thread-safe; concurrent requests for the same key wait for a single build.
    ``stats`` counts ``hits``, ``disk_hits``, ``builds`` and ``disk_errors``.
    """

    def __init__(self, vocab: Vocabulary, cache_dir=None, max_entries: int = 64, strategy: str = "auto"):
        if not isinstance(vocab, Vocabulary):
            raise TypeError(f"IndexCompiler needs a Vocabulary, not {type(vocab).__name__}")
        self.vocab = vocab
        self.cache_dir = os.path.expanduser(os.fspath(cache_dir)) if cache_dir is not None else None
        if self.cache_dir is not None:
            os.makedirs(self.cache_dir, exist_ok=True)
        self.max_entries = int(max_entries)
        self.strategy = strategy
        self.stats = dict(hits=0, disk_hits=0, builds=0, disk_errors=0)
        self._memory: "OrderedDict[str, TokenIndex]" = OrderedDict()
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
        schema) gives a :class:`~.pushdown.PushdownIndex` (same :class:`~.matcher.Matcher` API,
        rows computed per stack configuration); it is cached in memory only, not on disk.
        """
        from tokenfsm.schema import compile_json_schema

        if isinstance(schema, (str, bytes)):
            schema = json.loads(schema, object_pairs_hook=dict)
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
                grammar = make()
                if getattr(grammar, "recursive", None) is not None:
                    # a recursive schema kept as a stack automaton: rows per configuration, on
                    # demand (its flat ``dfa`` is not built); kept in memory only
                    from .pushdown import PushdownIndex

                    index = PushdownIndex(grammar.recursive.to_bytes(), self.vocab)
                elif hasattr(grammar, "call_ptr"):
                    # a lazy network (large counts held in the configuration): likewise
                    from .pushdown import PushdownIndex

                    index = PushdownIndex(grammar, self.vocab)
                else:
                    index = TokenIndex.build(grammar, self.vocab, strategy=self.strategy)
                with self._lock:
                    self.stats["builds"] += 1
                if isinstance(index, TokenIndex):
                    self._save_disk(key, index)
            with self._lock:
                if self.max_entries > 0:
                    self._memory[key] = index
                    while len(self._memory) > self.max_entries:
                        self._memory.popitem(last=False)
                self._building.pop(key, None)
        return index

    def _path(self, key: str) -> str:
        return os.path.join(self.cache_dir, f"{key}.tfidx.npz")

    def _load_disk(self, key: str) -> TokenIndex | None:
        if self.cache_dir is None:
            return None
        path = self._path(key)
        if not os.path.exists(path):
            return None
        try:
            index = TokenIndex.load(path, self.vocab)
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
            index.save(self._path(key))
        except OSError as e:
            warnings.warn(f"cannot write index cache {self._path(key)}: {e}", RuntimeWarning, stacklevel=3)
