"""Token masks for stack automata: recursive grammars walked with a stack instead of unrolled.

A recursive JSON Schema unrolled to a depth is a flat DFA with as many copies of each recursive
definition as there are paths into it: hundreds of thousands of states. Its ``PushdownBytes`` form
(``tokenfsm.automata.recursive``) keeps one small byte automaton per definition and *call* edges
into the others; a configuration is a state and a stack of return states. A flat
:class:`~.index.TokenIndex` cannot hold a row per configuration (there are too many), so
:class:`PushdownIndex` computes the row of a configuration when it is first needed, by one walk of
the vocabulary's token trie (:func:`.pd_kernels.fill_row`), and keeps it in a bounded LRU.

A row depends on the stack only through the entries some token pops: the walk reports how deep
that is (``used``), and the row is stored under the state and the top ``used`` entries, so the
string body of a property allows the same tokens whatever lies deeper on the stack, and is walked
once per distinct top of stack, not once per document position. A walk that pops the whole stack
and finds it empty depends on the stack's length too and is stored under the whole stack. The key
also says whether the text may end there (the EOS bits).

Most of a row is the same from state to state: a JSON string body allows nearly the whole
vocabulary, in every string property of every definition. A state whose region (its strongly
connected component, cut at JSON's separators and brackets like the flat index's regions) neither
accepts nor calls cannot meet the stack before leaving the region, so its walk inside the region
is the flat index's shared region walk (:func:`.kernels.component_walk`), kept per vocabulary in
the trie's :class:`~.trie.WalkCache` under the region's canonical form and shared with flat
indexes; a row then is that walk's row plus what the subtrees past its exits add, walked with
the stack (:func:`.pd_kernels.replay_row`). Near the upper bound of a counted string, where
each count has rows of its own, the region's tokens are kept with the ticks each needs, once per
vocabulary, and a count's row takes those that fit (:func:`.row_ways.region_band_way`); where
no shared walk applies, one walk serves every count (:func:`.row_ways.count_band_way`).
The ways of making a row are declared in
:data:`.row_ways.ROW_WAYS`, next to the reference walk, and the tests run each on every
configuration they meet; a small automaton's rows are made up front (``eager_states``).

A row is kept as what it adds to a row already held: its few nonzero words over the empty row (a
key's name allows a handful of tokens) or over its region's shared row (a string body), written
into a bitmask as a copy and a few word stores; only a row of many words, or one used
``PROMOTE_AFTER`` times, gets an array of the vocabulary's size. Making a row thus allocates no
vocabulary-sized memory (fresh memory is paged in on first write: a few microseconds a row),
and the cache holds many more rows in its ``cache_bytes``. Rows are kept in memory only (the
index is cheap to make again from the automaton: no disk format).

:class:`~.matcher.Matcher` drives a :class:`PushdownIndex` as it drives a flat index, through the
index's ``config_*`` methods; its ``state`` is the configuration ``(q, stack)`` (``stack`` a
tuple of return states, bottom first). The end of the text ends every open module in turn, so
EOS is allowed exactly where ``q`` and every return state on the stack accept
(``PushdownBytes.can_end``). (``PushdownMatcher`` is a deprecated name of ``Matcher``.)

The same index walks a :class:`~tokenfsm.automata.lazy_bytes.LazyBytes` whose frames hold counts
and key sets (a lazy network: counted repetitions, objects as key sets): every frame is then one
int (state, count and keys packed, :mod:`.frames`), liveness is decided per move, and rows are
kept under keys in which each count is classified by where it lies relative to its bounds, so a
count of a billion needs no more rows than a count of ten. Near an upper bound (or below a lower
one, with no upper one) each count is a key of its own; there a walk also says over which counts
of the frame on top, and of the one below it, its row holds (a token ticks a few times at most),
and those counts take that row.

Example
-------
>>> from tokenfsm.masks import Matcher
>>> from tokenfsm.masks.pushdown import PushdownIndex
>>> index = PushdownIndex(rdfa.to_bytes(), vocab)          # doctest: +SKIP
>>> m = Matcher(index); m.accept_string("[[1,")            # doctest: +SKIP
True
>>> m.state                                                # doctest: +SKIP
(4, (7,))

The per-configuration mask over a persistent stack follows llguidance's lexer/parser split (token
masks computed on demand from the parser state); keying a mask by the stack entries it reads is the
context-dependent half of xgrammar's adaptive token mask cache.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections import OrderedDict

import numpy as np

from tokenfsm.automata.cache import ByteLRU

from . import pd_kernels
from .frames import FrameAutomaton
from .index import _automaton_error, _checked_byte_tables, eos_row, row_token_ids
from .matcher import Matcher
from .row_ways import (
    count_band_way,
    make_rows_up_front,
    region_band_way,
    region_flags,
    shared_region_way,
    up_front_entry,
    walk_way,
)
from .trie import token_trie
from .vocab import Vocabulary

__all__ = ["PushdownIndex", "as_pushdown_bytes", "ROW_CACHE_BYTES"]

_LOW64 = (1 << 64) - 1
_COUNT_FIELD = _LOW64 << 32
#: A spanned frame's count in a key of :attr:`PushdownIndex._spans`: neither a count (below
#: ``2**63``) nor a count class (-1, or -2 less a residue: above it).
_SPANNED = (1 << 63) << 32

#: Bytes of mask rows a :class:`PushdownIndex` keeps by default (Qwen's 151k vocabulary: ~1,700 rows
#: of the vocabulary's size; many more of those kept as their few nonzero words).
ROW_CACHE_BYTES = 32 << 20
#: Bytes a kept row is charged beyond its arrays (its key, entry and the arrays' headers).
ROW_OVERHEAD = 400
#: Uses after which a row kept as its words gets a row of its own (see PushdownIndex._entry).
PROMOTE_AFTER = 16
#: Automata whose frames hold counts or keys, of at most this many states, get their rows at
#: construction (one configuration at a time; see PushdownIndex's ``eager_states``).
EAGER_STATES = 64
#: Plain stack automata of at most this many states get their rows over an empty stack at
#: construction (one kernel call: 26,000 states of a flat Kubernetes schema in 80 ms on
#: Llama-3, against 170-260 ms for an eager flat index; see PushdownIndex's ``eager_states``).
EAGER_PLAIN_STATES = 1 << 17

_FIELDS = ("byte_classes", "table", "accepting", "start", "call_ptr", "call_entry", "call_return",
           "call_first", "max_stack")


def as_pushdown_bytes(obj):
    """The byte form of ``obj``: a ``PushdownBytes`` or ``LazyBytes`` itself, a ``RecursiveDFA``
    (``to_bytes()``), or a compiled schema whose ``recursive`` is set."""
    if all(hasattr(obj, f) for f in _FIELDS):
        return obj
    rec = getattr(obj, "recursive", None)
    if rec is not None:
        return rec.to_bytes()
    if hasattr(obj, "modules") and hasattr(obj, "to_bytes"):
        return obj.to_bytes()
    missing = [f for f in _FIELDS if not hasattr(obj, f)]
    raise TypeError(f"{type(obj).__name__} is not a stack automaton over bytes (no {missing[0]!r})")


def _validated(pb) -> dict:
    """The automaton's arrays, checked against the ``PushdownBytes`` contract."""
    err = _automaton_error
    classes, table, accepting, start = _checked_byte_tables(pb)
    n = table.shape[0]
    call_ptr = np.asarray(pb.call_ptr)
    call_entry = np.asarray(pb.call_entry)
    call_return = np.asarray(pb.call_return)
    call_first = np.asarray(pb.call_first)
    if call_ptr.shape != (n + 1,) or not np.issubdtype(call_ptr.dtype, np.integer):
        raise err(f"call_ptr must be an integer array of shape ({n + 1},), not {call_ptr.shape}")
    e = int(call_ptr[-1])
    if call_ptr[0] != 0 or np.any(np.diff(call_ptr) < 0) or call_ptr[1] != 0:
        raise err("call_ptr must rise from 0, with no calls from the dead state 0")
    for name, a in (("call_entry", call_entry), ("call_return", call_return)):
        if a.shape != (e,) or not np.issubdtype(a.dtype, np.integer):
            raise err(f"{name} must be an integer array of shape ({e},), not {a.shape}")
        if e and (a.min() < 1 or a.max() >= n):
            raise err(f"{name} refers to states outside 1..{n - 1}")
    if call_first.shape != (e, 256):
        raise err(f"call_first must have shape ({e}, 256), not {call_first.shape}")
    max_stack = int(pb.max_stack)
    if max_stack < 0 or (e and max_stack < 1):
        raise err(f"max_stack {max_stack} is too small for an automaton with calls")
    return dict(
        byte_classes=np.ascontiguousarray(classes, dtype=np.uint8),
        table=np.ascontiguousarray(table, dtype=np.int32),
        accepting=np.ascontiguousarray(accepting, dtype=np.bool_),
        start=start,
        call_ptr=np.ascontiguousarray(call_ptr, dtype=np.int32),
        call_entry=np.ascontiguousarray(call_entry, dtype=np.int32),
        call_return=np.ascontiguousarray(call_return, dtype=np.int32),
        call_first=np.ascontiguousarray(call_first, dtype=np.bool_),
        max_stack=max_stack,
    )


class PushdownIndex:
    """Allowed tokens per configuration of a stack automaton over bytes, for one vocabulary.

    Parameters
    ----------
    automaton : PushdownBytes, RecursiveDFA or compiled schema
        See :func:`as_pushdown_bytes`; checked against the contract (``AutomatonError``).
    vocab : Vocabulary
    cache_bytes : int
        Bytes of mask rows kept (least recently used dropped first; at least 16 rows). Rows of
        the configurations met lately are also kept by configuration, which may hold as many
        rows again.
    share_walks : bool
        Walk a stack-free region (a JSON string body: no state in it accepts or calls) once, and
        per configuration only the subtrees past its exits; the region's walk is kept per
        vocabulary with the flat indexes' (:class:`~.trie.WalkCache`), so a string body is
        walked once per vocabulary and process; and make the rows of a counted string's counts
        near its bound from one walk for them all (:func:`.row_ways.count_band_way`, kept per
        index). Same rows.
    eager_states : int, optional
        An automaton of at most this many states gets the rows of its states' configurations
        over an empty stack, counts far from their bounds, made here
        (:func:`.row_ways.make_rows_up_front`). A plain stack automaton (a recursive schema, a
        flat one indexed lazily) has them made in one kernel call, for states whose row holds
        for every stack and is small (a recursive schema of 7,400 states gets most of its rows
        in about 10 ms on Qwen's vocabulary), so that a configuration met for the first time
        mostly finds its row made; a lazy network's (a counted string, a huge count in a
        regex) are made one at a time, a fraction of a millisecond per dozen states. Default
        :data:`EAGER_PLAIN_STATES` for plain automata, :data:`EAGER_STATES` for lazy networks.

    Attributes
    ----------
    vocab : Vocabulary
    vocab_size : int
    n_words : int
        Words per bitmask row, ``ceil(vocab_size / 32)``.
    eos_ids : int32[k]
    start : tuple
        The start configuration ``(q, ())``; ``q`` is 0 if the language is empty.
    num_states : int
    byte_classes, table, accepting, call_ptr, call_entry, call_return, call_first : arrays
        The automaton (read-only).
    max_stack : int
    finished_mask : int32[n_words]
        The row allowing only EOS, used once a sequence has ended.
    stats : dict
        ``hits``, ``misses`` (rows made while matching), ``visited`` (trie nodes walked for
        them), ``walk_s`` (time making them), ``shared_walks`` (region walks taken, from the
        vocabulary's cache or walked), ``band_walks`` (walks of a counted string's band, see
        :func:`.row_ways.band_of`), ``eager`` and ``eager_s`` (rows made at construction, see
        ``eager_states``), ``regions_s`` (time finding the regions, once, before the first row
        made by a region walk).

    Notes
    -----
    Thread-safe: matchers in several threads may share one index (rows are computed outside the
    lock; two threads may compute the same row once each).
    """

    def __init__(self, automaton, vocab: Vocabulary, cache_bytes: int = ROW_CACHE_BYTES,
                 share_walks: bool = True, eager_states: int | None = None):
        if not isinstance(vocab, Vocabulary):
            raise TypeError(f"PushdownIndex needs a Vocabulary, not {type(vocab).__name__}")
        pb = as_pushdown_bytes(automaton)
        self._frames = None
        if getattr(pb, "has_data", False):
            from tokenfsm.automata.lazy_bytes import LazyBytes

            if not isinstance(pb, LazyBytes):
                raise _automaton_error("an automaton whose frames hold counts or keys must be a "
                                       "LazyBytes")
            self._frames = FrameAutomaton(pb, token_trie(vocab).max_depth)
            a = {n: getattr(pb, n) for n in _FIELDS}
        else:
            a = _validated(pb)
        # the kernels get private writeable copies: read-only arrays are another Numba type, and
        # the region kernels shared with the flat index would be compiled a second time for them
        for name in ("byte_classes", "table", "accepting", "call_ptr", "call_entry", "call_return",
                     "call_first"):
            arr = np.array(a[name], copy=True)
            setattr(self, "_k_" + name, arr)
            view = arr.view()
            view.flags.writeable = False
            setattr(self, name, view)
        self.max_stack = a["max_stack"]
        # the automaton's arrays as the row kernels take them (bound once: a row is one call)
        self._k_automaton = (self._k_byte_classes, self._k_table, self._k_accepting,
                             self._k_call_ptr, self._k_call_entry, self._k_call_return,
                             self._k_call_first)
        # the table regions and their shared walks are read from: ticks stripped (a walk inside a
        # region is the same for every count at which the rows share a key, see _frame_row)
        self._region_table = (self._k_table if self._frames is None else
                              (self._k_table & np.int32((1 << 30) - 1)).astype(np.int32))
        self.num_states = int(self.table.shape[0])
        self.vocab = vocab
        self.vocab_size = vocab.size
        self.vocab_fingerprint = vocab.fingerprint
        self.eos_ids = np.asarray(vocab.eos_token_ids, dtype=np.int32)
        self.eos_ids.flags.writeable = False
        self._eos_set = frozenset(self.eos_ids.tolist())
        self._n_words = (vocab.size + 31) // 32
        self._trie = token_trie(vocab)
        nodes = self._trie.nodes
        self._roots = pd_kernels.root_children(nodes)
        self._cap = max(self.max_stack, 1)
        q0 = a["start"]  # the contract: every nonzero state can complete
        self.start = (q0, ())
        self.finished_mask = eos_row(self._eos_set, self._n_words)
        self._finished_view = memoryview(self.finished_mask).cast("B")
        self._empty_row = np.zeros(self._n_words, dtype=np.int32)
        self._empty_row.flags.writeable = False
        self._empty_entry = [(self._empty_row, memoryview(self._empty_row).cast("B"), None, None),
                             0, None, 0]
        self._max_rows = max(16, int(cache_bytes) // max(4 * self._n_words, 1))
        self._cache_bytes = int(cache_bytes)
        self._held = 0   # bytes charged for the rows in self._rows (see _entry)
        #: rows with at most this many nonzero words are kept as those words (see _entry)
        self._sparse_words = max(self._n_words // 8, 1)
        self._zero_view = memoryview(np.zeros(self._n_words, dtype=np.uint32)).cast("B")
        # zeroed rows and word lists the kernels write into, reused (taken and given back by
        # single list operations, so threads never share one)
        self._scratch: list = []
        self._rows: OrderedDict = OrderedDict()
        self._used: dict[int, list[int]] = {}  # per state: the top-of-stack lengths keyed
        self._exact_q: set[int] = set()  # states with rows keyed by their whole stack
        # rows a walk found to hold over runs of counts of the top frame or the stack's top, near
        # their bounds: per key with those counts left out, (run of the top's counts or None,
        # run of the stack top's or None, entry), a run as (first, last) (see _frame_row)
        self._spans: dict = {}
        # in front of the keyed rows: configurations met lately, straight to their row (a plain
        # dict emptied when full: at most as many rows again as the cache holds)
        self._by_config: dict = {}
        self._lock = threading.Lock()
        self._own: dict[int, int] = {}
        self.stats = dict(hits=0, misses=0, visited=0, walk_s=0.0, shared_walks=0, band_walks=0,
                          eager=0, eager_s=0.0, regions_s=0.0)
        self.share_walks = bool(share_walks)
        self._comp = None
        self._flags = None
        self._by_class: dict = {}  # frames with data: configurations with counts classified
        self._stack_keys: dict = {}  # frames with data: stacks with counts classified
        self._shared: dict = {}
        self._names_from = None      # (row_ways.region_flags: the first key names' region)
        self._scc = None             # (row_ways.region_flags: the regions before key names)
        self._twins: dict = {}       # (row_ways.twin_of, per state)
        self._name_bodies: dict = {}  # (row_ways._name_body, per body state)
        self._quiet = None           # (row_ways._quiet)
        self._least = None           # (row_ways._region_ticks)
        self._closed: dict = {}      # (row_ways._region_ticks, per region)
        self._region_needs: dict = {}  # (row_ways.region_needs, per state)
        self._shared_states = None   # (row_ways.region_flags: its second flags, an array)
        # counted strings' bands (row_ways.band_of): a walk's tokens sorted by need
        self._bands = ByteLRU(None, self._cache_bytes // 4)
        # the exits a state reaches along a shared walk's skeleton (row_ways._replayed)
        self._exits = ByteLRU(None, self._cache_bytes // 16)
        self._all_words = np.arange(self._n_words, dtype=np.int32)   # (a whole row's indices)
        # plain-Python views for the per-token walk (no kernel call, no numpy scalars)
        self._tab = memoryview(self.table.reshape(-1)).cast("B").cast("i")
        self._nc = int(self.table.shape[1])
        self._cls = self.byte_classes.tolist()
        self._acc = self.accepting.tolist()
        # the calls of each calling state: (first bytes as a 256-bit int, entry, return)
        ptr = self.call_ptr.tolist()
        packed = np.packbits(self.call_first, axis=1, bitorder="little")
        firsts = [int.from_bytes(r.tobytes(), "little") for r in packed]
        entry, ret = self.call_entry.tolist(), self.call_return.tolist()
        self._calls = {q: tuple((firsts[e], entry[e], ret[e]) for e in range(ptr[q], ptr[q + 1]))
                       for q in np.flatnonzero(np.diff(self.call_ptr)).tolist()}
        self._eager = None
        if eager_states is None:
            eager_states = EAGER_STATES if self._frames is not None else EAGER_PLAIN_STATES
        if self.num_states <= int(eager_states):
            make_rows_up_front(self)

    # -- attributes a matcher reads -------------------------------------------------------------
    @property
    def n_words(self) -> int:
        """Words per bitmask row: ``ceil(vocab.size / 32)``."""
        return self._n_words

    @property
    def num_cached_rows(self) -> int:
        return len(self._rows)

    @property
    def cached_row_bytes(self) -> int:
        """Bytes of the kept rows (a row kept as its nonzero words counts those, plus
        ``ROW_OVERHEAD``; rows of shared region walks are the vocabulary's, not counted)."""
        return self._held

    def clear_rows(self) -> None:
        """Drop every kept row (mainly for benchmarks measuring cold fills)."""
        with self._lock:
            self._held = 0
            self._rows.clear()
            self._used.clear()
            self._exact_q.clear()
            self._spans.clear()
            self._by_config.clear()
            self._by_class.clear()
            self._stack_keys.clear()
            self._bands.clear()

    def __repr__(self) -> str:
        return (f"PushdownIndex(num_states={self.num_states}, calls={self.call_entry.shape[0]}, "
                f"max_stack={self.max_stack}, vocab_size={self.vocab_size}, "
                f"cached_rows={len(self._rows)})")

    # -- configurations -------------------------------------------------------------------------
    def _check_state(self, state) -> tuple[int, tuple]:
        try:
            q, stack = state
            q = int(q)
            stack = tuple(int(s) for s in stack)
        except (TypeError, ValueError):
            raise ValueError(f"a configuration is (state, stack), not {state!r}") from None
        if self._frames is not None:
            q = self._frames.check_frame(q, True)
            stack = tuple(self._frames.check_frame(s, False) for s in stack)
        elif not 0 <= q < self.num_states or any(not 0 < s < self.num_states for s in stack):
            raise ValueError(f"configuration {state!r} has states outside 1..{self.num_states - 1}")
        if len(stack) > self.max_stack:
            raise ValueError(f"configuration {state!r} is deeper than max_stack={self.max_stack}")
        return q, stack

    def step(self, q: int, stack: list, byte: int) -> int:
        """One byte from ``(q, stack)`` (the contract's rules 1-4); ``stack`` is changed in place.
        Returns the new state, 0 if dead."""
        return self._walk(int(q), stack, (int(byte),))

    def _walk(self, q: int, stack: list, data) -> int:
        """Walk ``data`` (bytes, or ints) from ``(q, stack)``; ``stack`` changes in place."""
        if self._frames is not None:
            return self._frames.walk(q, stack, data)
        tab, nc, cls, acc, calls = self._tab, self._nc, self._cls, self._acc, self._calls
        limit = 2 * (len(stack) + self._cap) + 4
        for b in data:
            t = tab[q * nc + cls[b]]
            if t:
                q = t
                continue
            if q == 0:
                return 0
            ops = 0
            while True:
                for first, entry, ret in calls.get(q, ()):
                    if first >> b & 1:
                        stack.append(ret)
                        q = entry
                        break
                else:
                    if acc[q] and stack:
                        q = stack.pop()
                    else:
                        return 0
                t = tab[q * nc + cls[b]]
                if t:
                    q = t
                    break
                ops += 1
                if ops > limit:
                    return 0
            if len(stack) > self.max_stack:
                return 0
        return q

    def walk_bytes(self, state, data: bytes) -> tuple[int, tuple]:
        """Follow ``data`` from configuration ``state``; ``(0, ())`` if it dies."""
        q, stack = self._check_state(state)
        st = list(stack)
        q = self._walk(q, st, bytes(data)) if q else 0
        return (q, tuple(st)) if q else (0, ())

    def next_state(self, state, token_id: int) -> tuple[int, tuple]:
        """The configuration ``token_id`` leads to from ``state``: ``(0, ())`` if it is not
        allowed there (EOS ids and tokens with no bytes always give that)."""
        q, stack = self._check_state(state)
        tok = self.vocab[self.vocab.check_token_id(token_id)]
        if tok is None or q == 0:
            return (0, ())
        st = list(stack)
        q = self._walk(q, st, tok)
        return (q, tuple(st)) if q else (0, ())

    def is_accepting(self, state) -> bool:
        """Whether the text may end at ``state``: ``q`` and every return state on the stack
        accept (the end of the text ends each open module in turn)."""
        return self._can_end(*self._check_state(state))

    def _can_end(self, q: int, stack) -> bool:
        if self._frames is not None:
            return q != 0 and self._frames.can_end(q, stack)
        acc = self._acc
        if not acc[q]:
            return False
        for r in stack:
            if not acc[r]:
                return False
        return True

    # -- rows -----------------------------------------------------------------------------------
    def _row(self, q: int, stack: tuple):
        """The cache entry of a (checked) configuration's row (see :meth:`_entry`)."""
        return self.config_row((q, stack))

    def _row_keyed(self, q: int, stack: tuple):
        """The row of a configuration of a plain stack automaton under the keys of the module
        docstring (state, top of stack, end), from the cache or made now."""
        if q == 0:
            return self._empty_entry
        acc = self._acc
        end = acc[q]
        if end:
            for r in stack:
                if not acc[r]:
                    end = False
                    break
        # lookups take no lock: get and move_to_end are single operations on the dict (an entry
        # dropped by another thread in between is simply not moved)
        rows = self._rows
        hit = key = None
        if q in self._exact_q:
            key = (q, stack, True, end)
            hit = rows.get(key)
        if hit is None:
            n = len(stack)
            for u in self._used.get(q, ()):
                if u <= n:
                    key = (q, stack[n - u:] if u else (), False, end)
                    hit = rows.get(key)
                    if hit is not None:
                        break
        if hit is not None:
            return self._kept(key, hit)
        if self._flags is None and self.share_walks:
            region_flags(self)              # (timed on its own: once per index)
        t0 = time.perf_counter()
        made = self._make_row(q, stack, end)
        _, used, exact, _, _ = made
        key = (q, stack, True, end) if exact else (q, stack[len(stack) - used:] if used else (),
                                                     False, end)
        return self._keep(q, key, made, t0)

    def _frame_row(self, x: int, stack: tuple, top: int, below: tuple):
        """:meth:`_row_keyed` for an automaton whose frames hold data: frames in the keys have
        their counts classified (:meth:`.frames.FrameAutomaton.key_frame`): ``top`` is ``x``'s
        key frame, ``below`` those of the stack's frames. Where each count of a frame is a key
        of its own (near a counted piece's bound, :meth:`.frames.FrameAutomaton.spanned`), a row
        that a walk found to hold over a run of counts (:meth:`.frames.FrameAutomaton.fill`)
        serves every count of the run."""
        fa = self._frames
        rows = self._rows
        q = x & 0xFFFFFFFF
        n = len(stack)
        end = fa.can_end(x, stack)
        hit = key = None
        for b, exact in self._belows(q, below):
            key = (top, b, exact, end)
            hit = rows.get(key)
            if hit is not None:
                break
        if hit is None and self._spans:
            hit = self._spanned(q, top, below, end)
            key = None if hit is None else hit[2]
        if hit is not None:
            return self._kept(key, hit)
        if self._flags is None and self.share_walks:
            region_flags(self)              # (timed on its own: once per index)
        t0 = time.perf_counter()
        made = self._make_row(x, stack, end)
        _, used, exact, _, counts = made
        key = (top, below if exact else below[n - used:] if used else (), exact, end)
        entry = self._keep(q, key, made, t0)
        if counts is not None:
            run_top, run_below = counts
            if not key[1]:
                run_below = None             # (the row does not read the stack's top)
            if any(r is not None and r[0] < r[1] for r in (run_top, run_below)):
                with self._lock:
                    if len(self._spans) >= self._max_rows:
                        self._spans.clear()
                    self._spans.setdefault(self._span_key(top, key[1], exact, end), []).append(
                        (run_top, run_below, entry))
        return entry

    def _span_key(self, top: int, below: tuple, exact: bool, end: bool) -> tuple:
        """A row's key with the counts of its spanned frames left out (see :meth:`_frame_row`):
        the top frame, and the stack's top where the key holds it."""
        spanned = self._frames.spanned
        if spanned(top):
            top = top & ~_COUNT_FIELD | _SPANNED
        if below and spanned(below[-1]):
            below = below[:-1] + (below[-1] & ~_COUNT_FIELD | _SPANNED,)
        return top, below, exact, end

    def _belows(self, q: int, below: tuple):
        """The stacks (as key frames) that rows of state ``q`` may be kept under, each with
        whether the whole stack is read: the whole of ``below`` where some row of ``q`` read it
        to its bottom, then its tops of the lengths that rows of ``q`` read."""
        n = len(below)
        if q in self._exact_q:
            yield below, True
        for u in self._used.get(q, ()):
            if u <= n:
                yield (below[n - u:] if u else ()), False

    def _spanned(self, q: int, top: int, below: tuple, end: bool):
        """The entry of a row of state ``q`` made at other counts of the spanned frames of
        ``(top, below)`` (key frames) that holds at theirs (see :meth:`_frame_row`), or None."""
        c_top = (top >> 32) & _LOW64
        for b, exact in self._belows(q, below):
            runs = self._spans.get(self._span_key(top, b, exact, end))
            if runs is None:
                continue
            c_below = (b[-1] >> 32) & _LOW64 if b else 0
            for run_top, run_below, entry in runs:
                if (run_top is None or run_top[0] <= c_top <= run_top[1]) and (
                        run_below is None or run_below[0] <= c_below <= run_below[1]):
                    return entry
        return None

    def _kept(self, key, entry):
        try:
            self._rows.move_to_end(key)
        except KeyError:
            pass
        self.stats["hits"] += 1
        if entry[0][2] is not None:
            self._met_again(entry)
        return entry

    def _met_again(self, entry) -> None:
        """Count a use of a row kept as words; at the ``PROMOTE_AFTER``-th it gets a row of its
        own, written with one copy (allocating and paging in a row costs as much as a few dozen
        fills from words)."""
        entry[3] += 1
        if entry[3] < PROMOTE_AFTER:
            return
        row = self.row_array(entry)
        parts = (row, memoryview(row).cast("B"), None, None)
        cost = row.nbytes + ROW_OVERHEAD
        with self._lock:
            if entry[0][2] is None:
                return
            if self._rows.get(entry[2]) is entry:
                self._held += cost - entry[1]
            entry[1] = cost
            entry[0] = parts       # one store: a reader sees the old parts or the new

    def _make_row(self, x: int, stack: tuple, end: bool):
        """``(entry, used, exact, visited, counts)`` of a configuration, by the way of
        :data:`.row_ways.ROW_WAYS` that applies: the shared walk of ``x``'s region where there is
        one, else the walk (``counts``: see :data:`.row_ways.ROW_WAYS`)."""
        pool = self._scratch
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = pd_kernels.row_scratch(self._n_words)
        made = (self.share_walks and (shared_region_way(self, x, stack, end, *scratch)
                                      or region_band_way(self, x, stack, end, *scratch)
                                      or count_band_way(self, x, stack, end, *scratch))
                or walk_way(self, x, stack, end, *scratch))
        pool.append(scratch)          # (zeroed again by the kernel)
        base, used, exact, visited, idx, val, counts = made
        return self._entry(base, idx, val), used, exact, visited, counts

    def _entry(self, base, idx, val):
        """The cache entry of the row ``base`` with words ``val`` or-ed in at ``idx`` (``base`` a
        shared ``(row, byte view)`` or None).

        An entry is a list ``[parts, bytes charged, key, uses]`` whose ``parts`` is ``(row or
        None, byte view, word indices or None, word values or None)``: the row is the view's
        words with the values or-ed in at the indices (:meth:`write_row`). A row of few nonzero
        words over no base, or a few words more than a shared region walk's, is kept as those
        words: no row of the vocabulary's size to allocate (and page in) for a configuration
        met once or a few times; one met often gets a row of its own (:meth:`_met_again`)."""
        k = idx.shape[0]
        if k <= self._sparse_words:
            view = self._zero_view if base is None else base[1]
            if not k:
                return [(None, view, None, None), ROW_OVERHEAD, None, 0]
            return [(None, view, idx, val), idx.nbytes + val.nbytes + ROW_OVERHEAD, None, 0]
        row = np.zeros(self._n_words, dtype=np.uint32) if base is None else base[0].copy()
        pd_kernels.or_words(row, idx, val)
        row = row.view(np.int32)
        row.flags.writeable = False
        return [(row, memoryview(row).cast("B"), None, None), row.nbytes + ROW_OVERHEAD, None, 0]

    def _keep(self, q: int, key, made, t0):
        """Keep a row made under ``key`` (least recently used rows dropped past
        ``cache_bytes``, at least 16 kept; ``t0`` None: a row made up front, a hit); its cache
        entry."""
        entry, used, exact, visited, _ = made
        entry[2] = key
        rows = self._rows
        with self._lock:
            stats = self.stats
            if t0 is None:
                stats["hits"] += 1
            else:
                stats["misses"] += 1
                stats["visited"] += visited
                stats["walk_s"] += time.perf_counter() - t0
            old = rows.get(key)
            if old is not None:
                self._held -= old[1]
            rows[key] = entry
            self._held += entry[1]
            if exact:
                self._exact_q.add(q)
            else:
                us = self._used.setdefault(q, [])
                if used not in us:
                    us.append(used)
            while self._held > self._cache_bytes and len(rows) > 16:
                self._held -= rows.popitem(last=False)[1][1]
                self._spans.clear()       # (no dropped row kept alive there)
        return entry

    def row_array(self, entry) -> np.ndarray:
        """The row of a cache entry as a read-only ``int32[n_words]`` array."""
        row, view, idx, val = entry[0][:4]
        if row is not None:
            return row
        row = np.frombuffer(view, dtype=np.uint32).copy()
        if idx is not None:
            pd_kernels.or_words(row, idx, val)
        row = row.view(np.int32)
        row.flags.writeable = False
        return row

    @staticmethod
    def write_row(parts, view, words) -> None:
        """Write the row of an entry's ``parts`` into a bitmask row, given as a writeable byte
        ``view`` and as a ``uint32`` array ``words`` of the same memory: a copy of the parts'
        view, then their words or-ed in (an array argument: the kernel call costs half what
        one on a memoryview costs)."""
        view[:] = parts[1]
        if parts[2] is not None:
            pd_kernels.or_words(words, parts[2], parts[3])

    # -- the matcher's protocol (configurations it holds are trusted) --------------------------
    def config_row(self, config):
        """The cache entry of the row of a configuration a matcher holds (see :meth:`_entry`;
        :meth:`write_row` writes it into a bitmask, :meth:`row_array` makes it an array)."""
        # (most fills meet a configuration met before: one lookup first; a configuration a row
        # made up front serves is never kept here)
        hit = self._by_config.get(config)
        if hit is not None:
            self.stats["hits"] += 1
            if hit[0][2] is not None:
                self._met_again(hit)
            return hit
        eager = self._eager
        if eager is not None:
            # a row made up front (see row_ways.make_rows_up_front) holds for every stack
            q = config[0]
            entry = eager[0][q]
            if entry is None and eager[1][q] >= 0:
                entry = eager[0][q] = up_front_entry(self, q)
            if entry is not None:
                self.stats["hits"] += 1
                return entry
        if self._frames is not None and not config[1]:
            return self._frame_config_row(config)
        by_config = self._by_config
        entry = (self._row_keyed(config[0], config[1]) if self._frames is None
                 else self._frame_config_row(config))
        if len(by_config) >= self._max_rows:
            by_config.clear()
        by_config[config] = entry
        return entry

    def _frame_config_row(self, config):
        """:meth:`config_row` where frames hold data: by the configuration as the rows see it
        (every count classified: counts that the rows cannot tell apart meet there)."""
        x, stack = config
        if x == 0:
            return self._empty_entry
        fa = self._frames
        q = x & 0xFFFFFFFF
        if fa._cls_lo[q] <= (x >> 32) & _LOW64 <= fa._cls_hi[q]:    # fa.key_frame, inlined
            top = x | _COUNT_FIELD
        else:
            top = fa.key_frame(x)
        if stack:
            # the stack as the rows see it, by the stack (a stack stays while a piece is matched)
            stack_keys = self._stack_keys
            below = stack_keys.get(stack)
            if below is None:
                kf = fa.key_frame
                below = tuple([kf(f) for f in stack])
                if len(stack_keys) >= self._max_rows:
                    stack_keys.clear()
                stack_keys[stack] = below
            seen = (top, below)
        else:
            below = ()
            seen = top
        by_class = self._by_class
        hit = by_class.get(seen)
        if hit is not None:
            self.stats["hits"] += 1
            if hit[0][2] is not None:
                self._met_again(hit)
            return hit
        entry = self._frame_row(x, stack, top, below)
        if len(by_class) >= self._max_rows:
            by_class.clear()
        by_class[seen] = entry
        return entry

    def config_after(self, config, token_id: int):
        """The configuration after text token ``token_id`` (checked), or None if not allowed."""
        tok = self.vocab.tokens[token_id]
        q = config[0]
        if tok is None or q == 0:
            return None
        if self._frames is not None:
            st = list(config[1])
            x = self._frames.walk_token(q, st, token_id, tok)
            return (x, tuple(st)) if x else None
        st = list(config[1])
        q = self._walk(q, st, tok)
        return (q, tuple(st)) if q else None

    def config_after_bytes(self, config, data: bytes):
        """The configuration after ``data``, or None if it leaves the language."""
        q = config[0]
        if q == 0:
            return None
        st = list(config[1])
        q = self._walk(q, st, data)
        return (q, tuple(st)) if q else None

    def config_can_end(self, config) -> bool:
        return self._can_end(config[0], config[1])

    def mask_row(self, state) -> np.ndarray:
        """The packed bitmask of configuration ``state`` (read-only ``int32[n_words]``)."""
        q, stack = self._check_state(state)
        return self.row_array(self._row(q, stack))

    def allowed_token_ids(self, state, include_eos: bool = True) -> np.ndarray:
        """Token ids allowed in ``state`` (ascending), EOS included where it may end."""
        return row_token_ids(self, self.mask_row(state), include_eos)

    # -- forced text ----------------------------------------------------------------------------
    def _own_bytes(self, q: int) -> int:
        """Bytes that move ``q`` without popping (rules 1 and 2), as a 256-bit integer."""
        bits = self._own.get(q)
        if bits is None:
            live = (self.table[q] != 0)[self.byte_classes]
            bits = int.from_bytes(np.packbits(live, bitorder="little").tobytes(), "little")
            for first, _, _ in self._calls.get(q, ()):
                bits |= first
            self._own[q] = bits
        return bits

    def forced_bytes(self, state) -> bytes:
        """The bytes forced from ``state``: while the text may not end there and exactly one byte
        keeps the configuration live, that byte."""
        q, stack = self._check_state(state)
        if self._frames is not None:
            return self._frames.forced_bytes(q, stack)
        st = list(stack)
        out = bytearray()
        limit = self.num_states * (self.max_stack + 1) + 1
        while q and len(out) < limit:
            if self._can_end(q, st):
                break
            bits, k, r = self._own_bytes(q), len(st), q
            while self._acc[r] and k > 0:  # bytes that pop first, then move
                k -= 1
                r = st[k]
                bits |= self._own_bytes(r)
            if bits == 0 or bits & (bits - 1):
                break
            b = bits.bit_length() - 1
            q = self._walk(q, st, (b,))
            out.append(b)
        return bytes(out)


def __getattr__(name: str):
    if name == "PushdownMatcher":
        warnings.warn("PushdownMatcher is deprecated: Matcher drives every index",
                      DeprecationWarning, stacklevel=2)
        return Matcher
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
