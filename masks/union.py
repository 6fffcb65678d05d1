"""Token masks for a union of grammars walked side by side: one configuration per live branch.

A schema whose root union passed the budget as one automaton is compiled branch by branch
(:mod:`tokenfsm.schema.branches`); :class:`UnionIndex` indexes each branch as the compiler would
on its own (a flat :class:`~.index.TokenIndex` or a lazy :class:`~.pushdown.PushdownIndex`) and
walks them together. A configuration is the tuple of the live branches' configurations; a token
is allowed where some branch allows it, and it leaves alive the branches that allowed it. That is
the union's language exactly: a text is a prefix of the union's texts where it is a prefix of
some branch's, and no branch that died can come back. EOS is allowed where some branch may end.

A row is the bitwise or of the live branches' rows, made when a configuration is first met and
kept in a bounded map shared by the matchers of the index. The index speaks the lazy protocol
of :class:`~.matcher.Matcher` (``config_row``, ``config_after``, ...); a configuration is
``(live, branches)``: ``live`` the bit set of the live branches, ``branches`` their
``(branch number, configuration)`` pairs.

Example
-------
>>> from tokenfsm.masks import IndexCompiler, Matcher
>>> from tokenfsm.masks.vocab import Vocabulary
>>> from tokenfsm.schema import compile_json_schema
>>> vocab = Vocabulary([b"{", b"}", b'"a"', b'"b"', b":", b"1", b"2", None], eos_token_ids=[7])
>>> a = compile_json_schema({"enum": [{"a": 1}]}, whitespace=0)
>>> b = compile_json_schema({"enum": [{"b": 2}]}, whitespace=0)
>>> index = UnionIndex([IndexCompiler(vocab).index_of(g) for g in (a, b)])
>>> m = Matcher(index)
>>> m.allowed_token_ids().tolist()
[0]
>>> m.accept_string('{"b"'), m.state[0]          # branch 0 has died: live bits 0b10
(True, 2)
>>> m.accept_string(":1"), m.accept_string(":2}"), m.is_accepting()
(False, True, True)
"""

from __future__ import annotations

import os
import threading

import numpy as np

from .index import TokenIndex, eos_row, row_token_ids

__all__ = ["UnionIndex", "UNION_ROW_BYTES"]

#: Bytes of rows a union index keeps (its map is emptied when full).
UNION_ROW_BYTES = 32 << 20


class _Flat:
    """A flat :class:`~.index.TokenIndex` behind the lazy protocol (a configuration is its
    state)."""

    __slots__ = ("ix",)

    def __init__(self, ix: TokenIndex):
        self.ix = ix

    @property
    def start(self) -> int:
        return self.ix.start if self.ix.start else None

    def row(self, s: int) -> np.ndarray:
        return self.ix.mask_rows[self.ix.state_row[s]]

    def after(self, s: int, token_id: int):
        return self.ix.next_state(s, token_id) or None

    def after_bytes(self, s: int, data: bytes):
        return self.ix.walk_bytes(s, data) or None

    def can_end(self, s: int) -> bool:
        return bool(self.ix.accepting[s])

    def forced(self, s: int) -> bytes:
        return self.ix.forced_bytes(s)


class _Lazy:
    """A lazy index (:class:`~.pushdown.PushdownIndex`, or another speaking the protocol)."""

    __slots__ = ("ix",)

    def __init__(self, ix):
        self.ix = ix

    @property
    def start(self):
        return self.ix.start if self.ix.start[0] else None

    def row(self, c) -> np.ndarray:
        return self.ix.row_array(self.ix.config_row(c))

    def after(self, c, token_id: int):
        return self.ix.config_after(c, token_id)

    def after_bytes(self, c, data: bytes):
        return self.ix.config_after_bytes(c, data)

    def can_end(self, c) -> bool:
        return self.ix.config_can_end(c)

    def forced(self, c) -> bytes:
        return self.ix.forced_bytes(c)


class UnionIndex:
    """The index of the union of ``branches``' languages, walked side by side (see the module
    docstring).

    Parameters
    ----------
    branches : sequence of TokenIndex or lazy indexes
        One index per branch, all over one vocabulary (two or more).
    cache_bytes : int
        Bytes of rows kept (:data:`UNION_ROW_BYTES`).

    Raises
    ------
    TypeError
        A branch that is no index.
    ValueError
        Fewer than two branches, or branches over different vocabularies.

    Thread-safe: matchers in several threads may share one index.
    """

    def __init__(self, branches, cache_bytes: int = UNION_ROW_BYTES):
        branches = list(branches)
        if len(branches) < 2:
            raise ValueError(f"a union index needs two branches or more, got {len(branches)}")
        ways = []
        for i, ix in enumerate(branches):
            if isinstance(ix, TokenIndex):
                ways.append(_Flat(ix))
            elif callable(getattr(ix, "config_row", None)):
                ways.append(_Lazy(ix))
            else:
                raise TypeError(f"branch {i} is not an index: {type(ix).__name__}")
        first = branches[0]
        if any(ix.vocab.fingerprint != first.vocab.fingerprint for ix in branches):
            raise ValueError("the branches of a union index must share one vocabulary")
        self.branches = tuple(branches)
        self._ways = tuple(ways)
        self.vocab = first.vocab
        self.vocab_size = first.vocab_size
        self.eos_ids = first.eos_ids
        self._eos_set = first._eos_set
        self._n_words = (self.vocab_size + 31) // 32
        self.finished_mask = eos_row(self._eos_set, self._n_words)
        self._finished_view = memoryview(self.finished_mask).cast("B")
        self.start = self._config(tuple((i, w.start) for i, w in enumerate(ways)
                                        if w.start is not None))
        self._rows: dict = {}
        self.cache_bytes = int(cache_bytes)
        self._max_rows = max(16, self.cache_bytes // (4 * self._n_words))
        self._lock = threading.Lock()
        self.stats = {"hits": 0, "misses": 0}

    @property
    def n_words(self) -> int:
        return self._n_words

    @staticmethod
    def _config(live: tuple) -> tuple:
        bits = 0
        for i, _ in live:
            bits |= 1 << i
        return (bits, live)

    # -- the matcher's protocol (configurations it holds are trusted) --------------------------
    def config_row(self, config):
        """The row entry of a configuration (see :meth:`.pushdown.PushdownIndex.config_row`):
        the or of its live branches' rows."""
        hit = self._rows.get(config)
        if hit is not None:
            self.stats["hits"] += 1
            return hit
        row = np.zeros(self._n_words, dtype=np.int32)
        for i, c in config[1]:
            np.bitwise_or(row, self._ways[i].row(c), out=row)
        row.flags.writeable = False
        entry = [(row, memoryview(row).cast("B"), None, None), row.nbytes, config, 0]
        with self._lock:
            self.stats["misses"] += 1
            if len(self._rows) >= self._max_rows:
                self._rows.clear()
            self._rows[config] = entry
        return entry

    @staticmethod
    def row_array(entry) -> np.ndarray:
        return entry[0][0]

    @staticmethod
    def write_row(parts, view, words) -> None:
        view[:] = parts[1]

    def config_after(self, config, token_id: int):
        """The configuration after text token ``token_id``, or None where no branch allows it."""
        ways = self._ways
        live = tuple((i, n) for i, c in config[1]
                     if (n := ways[i].after(c, token_id)) is not None)
        return self._config(live) if live else None

    def config_after_bytes(self, config, data: bytes):
        ways = self._ways
        live = tuple((i, n) for i, c in config[1]
                     if (n := ways[i].after_bytes(c, data)) is not None)
        return self._config(live) if live else None

    def config_can_end(self, config) -> bool:
        return any(self._ways[i].can_end(c) for i, c in config[1])

    def forced_bytes(self, config) -> bytes:
        """The bytes every live branch forces: the longest prefix their forced texts share (a
        branch that may end, or that allows two bytes, forces none)."""
        return os.path.commonprefix([self._ways[i].forced(c) for i, c in config[1]]) or b""

    def mask_row(self, config) -> np.ndarray:
        """The packed bitmask of ``config`` (read-only ``int32[n_words]``)."""
        return self.row_array(self.config_row(config))

    def allowed_token_ids(self, config, include_eos: bool = True) -> np.ndarray:
        """Token ids allowed in ``config`` (ascending), EOS included where a branch may end."""
        return row_token_ids(self, self.mask_row(config), include_eos)

    def __repr__(self) -> str:
        return (f"UnionIndex({len(self.branches)} branches, vocab_size={self.vocab_size}, "
                f"rows={len(self._rows)})")
