"""How a lazy index makes a mask row: the ways, declared beside the reference, and what they share.

A :class:`~.pushdown.PushdownIndex` makes the row of a configuration met for the first time in
one of the ways of :data:`ROW_WAYS`, all giving the same row (the tests run each on every
configuration they meet, against the reference and a naive walk):

* ``walk``, the reference: one walk of the vocabulary's token trie from the configuration
  (:func:`.pd_kernels.fill_row`, :func:`.frame_kernels.fill_row`);
* ``shared-region``: where the state lies in a region whose walk cannot read the stack (a JSON
  string body: no state of it accepts or calls) nor the count (far from the bounds, or below
  the lower one, :meth:`.frames.FrameAutomaton.below_lo_free`), the region's walk, shared with
  every state and automaton whose region looks the same from there, and what the subtrees past
  its exits add, walked with the stack (:func:`.pd_kernels.replay_row`); a state that such a
  region's body simulates (a key's name partway through declared names, :func:`twin_of`) takes
  the body's walk, its exits replayed from the state;
* ``region-band``: where the top frame is a counted piece's, its count near the upper bound
  (each count there has rows of its own), in a region with a shared walk: the region's tokens
  whose *need* (the ticks they write and the fewest their last state still needs) fits in what
  the bound leaves, walked once per vocabulary and region (:class:`RegionNeeds`), with the
  exits replayed as ``shared-region`` does;
* ``count-band``: where the top frame is a counted string's, its count near the upper bound
  (every count there has rows of its own), the band's walk: one walk for every count, the bound
  left out and each token's need (the characters it writes, and the fewest its state still
  needs) kept, so that a count's row is the tokens whose need fits in what the bound leaves,
  made from the row of the count before by the difference (:class:`CountBand`);
* ``up-front``: a state that does not accept, walked over an empty stack: where no byte reads
  below the stack, the row holds for every stack. :func:`rows_up_front` makes these rows for
  many states in one kernel call when an index is built.

A region (:func:`region_flags`) is a strongly connected component of the byte table cut at
JSON's separators, as the flat index's (:func:`.index._regions`), or the names of the keys of
a key-set piece that takes undeclared keys (:func:`key_name_regions`); its walk is found by its
canonical form (:func:`shared_walk`) and kept per vocabulary in the trie's
:class:`~.trie.WalkCache`, and what the replay reads of it (the walk's row, its skeleton as
:func:`.pd_kernels.skeleton_records`) in :data:`REPLAYS`, so that every index meeting the walk
reads one copy.

Example
-------
A counted run of letters: inside it, the reference walk and the region's shared walk (with the
EOS token added past it) give the same row; no row is made up front for a state that accepts.

>>> import numpy as np
>>> from tokenfsm.automata import DFA
>>> from tokenfsm.automata.network import Network, Text, Tick, concat, star
>>> from tokenfsm.masks import Vocabulary, unpack_bitmask
>>> from tokenfsm.masks.pushdown import PushdownIndex
>>> from tokenfsm.masks.row_ways import ROW_REFERENCE, ROW_WAYS
>>> net = Network()
>>> run = net.counted(star(concat(Text(DFA.from_regex("[a-z]")), Tick())), lo=0, hi=10**6)
>>> vocab = Vocabulary([b"a", b"ab", b"a1", b"z", None], eos_token_ids=[4])
>>> index = PushdownIndex(net.build(run), vocab)
>>> x, stack = index.walk_bytes(index.start, b"abc")
>>> out, touched = pd_kernels.row_scratch(index.n_words)
>>> def tokens(made):
...     base, _, _, _, idx, val, _ = made
...     words = np.zeros(1, np.uint32) if base is None else base[0].copy()
...     words[idx] |= val
...     return np.flatnonzero(unpack_bitmask(words.view(np.int32), vocab.size)).tolist()
>>> made = {name: way(index, x, stack, True, out, touched) for name, way in ROW_WAYS.items()}
>>> ROW_REFERENCE, tokens(made["walk"]), tokens(made["shared-region"]), made["up-front"]
('walk', [0, 1, 3, 4], [0, 1, 3, 4], None)

The ways are declared as the automata's minimizers and products are
(:data:`tokenfsm.automata.minimize.MINIMIZERS`, :data:`tokenfsm.automata.dfa.PRODUCTS`); a region
walked once is the flat index's shared walk (:func:`.kernels.component_walk`); the row of a state
that no token can leave by a pop is the context-independent part of xgrammar's adaptive token
mask cache.
"""

from __future__ import annotations

import time

import numpy as np

from tokenfsm.automata.cache import ByteLRU

from . import frame_kernels, kernels, pd_kernels
from .index import MAX_SIGNATURE_STATES, _region_cut, _shared_walks

__all__ = ["ROW_WAYS", "ROW_REFERENCE", "REPLAY_CACHE_BYTES", "EAGER_MAX_VISITS",
           "EAGER_MAX_TOTAL_VISITS", "region_flags", "shared_walk", "rows_up_front",
           "make_rows_up_front", "up_front_entry"]

_LOW64 = (1 << 64) - 1
_NO_STACK = np.zeros(0, dtype=np.int32)
#: Rows made up front stop at this many trie nodes (bigger ones are made when asked).
EAGER_MAX_VISITS = 4096
#: Rows made up front stop, in all, at this many trie nodes (about a quarter of a second): the
#: states after are made when asked. Handwritten allany19's flat automaton (37,697 byte states,
#: walks of most digit tokens each) spent 1.8 s here for rows few documents reach.
EAGER_MAX_TOTAL_VISITS = 1 << 23
#: A key set's names (:func:`key_name_regions`) have their walk kept up to this many states
#: (other regions up to ``MAX_SIGNATURE_STATES``): the names of some 200 declared keys. A larger
#: object's names are walked again for every set of keys written (9 ms on Llama-3, each); the
#: names of a Kubernetes ObjectMeta (983 states) get their canonical form in ~6 ms, once.
KEY_NAMES_MAX_STATES = 4096


def key_name_regions(lb, comp: np.ndarray,
                     table: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``(comp, reads, first)``: the regions ``comp`` with, per key-set piece, the states of its
    key names made one region (numbered from ``first``), and per state whether it reads the
    keys (``table``: ``lb``'s moves, their ticks stripped).

    In a key-set piece a move is live by a formula over the frame's count and keys
    (:func:`.frame_kernels._keys_live`). A move into a state that neither closes the object nor
    ends a declared key's name (an undeclared key may still pass it), nor ticks, nor calls, nor
    accepts, is live whenever the frame may take one more undeclared member
    (:meth:`.frames.FrameAutomaton.extra_member_ok`), whatever keys were written: such states
    (the names of keys being written, declared or not) form one region per piece, whose walk is
    shared by every key set for which that holds. The other states of a key-set piece read the
    keys (``bad``); the walk's exits into them are replayed with the frame."""
    keyed = lb.piece_kind[lb.state_piece] == 2
    top = int(comp.max()) + 1 if comp.size else 0
    if not keyed.any():
        return comp, np.zeros(comp.shape[0], dtype=bool), top
    calls = np.diff(lb.call_ptr) > 0
    reads = keyed & (lb.key_close | ~lb.key_extra | frame_kernels.tick_targets(lb.table))
    names = _inside_names(table, comp,
                          keyed & ~reads & ~calls & ~lb.accepting)
    comp = comp.copy()
    comp[names] = top + lb.state_piece[names]
    return comp, keyed & ~names, top


def _inside_names(table: np.ndarray, comp: np.ndarray, names: np.ndarray) -> np.ndarray:
    """The states of ``names`` from which a cycle of ``names`` states (an undeclared key's name
    going on) can be reached through ``names`` states: the states inside a name. The state
    after an undeclared name's closing quote is left out, so that a walk leaves the region at
    every closing quote, as a string body's does (their walks are then one, see
    :func:`.kernels.component_signatures`)."""
    if not names.any():
        return names
    return kernels.inside_names(np.ascontiguousarray(table), comp, names, np.bincount(comp))


def region_flags(index):
    """Per state, whether its region may have a shared walk (``(stack_free, any_stack)``
    lists of bools): a region (a strongly connected component of :func:`.index._regions`, or a
    key-set piece's key names, :func:`key_name_regions`) whose states neither call nor read key
    sets, with a cycle and at most
    ``MAX_SIGNATURE_STATES`` states; ``stack_free`` also asks that no state of it accept
    (then a byte it cannot move on is dead whatever the stack), ``any_stack`` does not (for
    an empty stack, where a pop is dead too)."""
    flags = index._flags
    if flags is None:
        with index._lock:
            flags = index._flags
            if flags is None:
                t0 = time.perf_counter()
                tab = index._region_table
                comp, loops = kernels.cut_components(
                    tab, _region_cut(index._k_byte_classes, tab.shape[1]))   # (see _regions)
                reads = names_from = None
                index._scc = comp        # (the cycles, before key names are made regions)
                if index._frames is not None:
                    comp, reads, names_from = key_name_regions(index._frames.lb, comp, tab)
                n_comp = int(comp.max()) + 1 if comp.size else 0
                bad = np.zeros(n_comp, dtype=bool)
                bad[comp[np.diff(index.call_ptr) > 0]] = True
                if reads is not None:
                    bad[comp[reads]] = True
                size = np.bincount(comp, minlength=n_comp)
                cyclic = (size > 1) | (np.bincount(comp, weights=loops, minlength=n_comp) > 0)
                limit = np.full(n_comp, MAX_SIGNATURE_STATES)
                if reads is not None:
                    limit[names_from:] = KEY_NAMES_MAX_STATES
                any_stack = ~bad & cyclic & (size <= limit)
                any_stack[comp[0]] = False          # the dead state
                accepts = np.zeros(n_comp, dtype=bool)
                accepts[comp[index.accepting]] = True
                index._comp = comp
                index._comp_size = size
                index._names_from = names_from
                index._shared_states = any_stack[comp]
                flags = index._flags = ((any_stack & ~accepts)[comp].tolist(),
                                       index._shared_states.tolist())
                index.stats["regions_s"] += time.perf_counter() - t0
    return flags


def shared_walk(index, q: int, accepting_ok: bool = False):
    """``(row, byte view, rec, toks)``: the row of the walk of ``q``'s region shared with
    every state and automaton whose region looks the same from there (a JSON string body;
    the walk is kept in the trie's :class:`~.trie.WalkCache`), and its skeleton as
    :func:`.pd_kernels.skeleton_records` (kept in ``REPLAYS``); None when ``q``'s
    region is not shared (see :func:`region_flags`)."""
    if q == 0:
        return None
    flags = region_flags(index)[1 if accepting_ok else 0]
    hit = index._shared.get((q, accepting_ok), False)
    if hit is not False:
        return hit
    twin = twin_of(index, q) if index.share_walks else None
    if twin is not None and twin != q:
        entry = index._shared[(q, accepting_ok)] = shared_walk(index, twin, accepting_ok)
        return entry
    if not flags[q]:
        return None
    entry = None
    trie = index._trie
    order = np.array([q], dtype=np.int32)
    g_ptr = np.array([0, 1], dtype=np.int32)
    share, sig_ptr, sig = kernels.component_signatures(
        index._region_table, index._k_byte_classes, index._comp, order, g_ptr,
        max(MAX_SIGNATURE_STATES, int(index._comp_size[index._comp[q]])))
    if share[0] and sig_ptr[1] > sig_ptr[0]:
        key = (index.vocab_fingerprint, sig.tobytes())
        entry = REPLAYS.get(key)
        if entry is None:
            node_bit, n_tok_nodes, max_depth = trie.token_numbering()
            _, entries, visited, _ = _shared_walks(
                trie, [0], sig_ptr, sig, order, g_ptr, node_bit, n_tok_nodes, max_depth,
                index._k_byte_classes, index._region_table, index._comp, index.vocab_size)
            entry = REPLAYS.put(key, entries[0], trie, index._n_words)
            with index._lock:
                index.stats["visited"] += int(visited)
        with index._lock:
            index.stats["shared_walks"] += 1
    index._shared[(q, accepting_ok)] = entry
    return entry


def twin_of(index, q: int):
    """A state of a shared region whose walk serves ``q`` (``q`` itself where it is one), or
    None (none found; ``q`` then has a walk of its own).

    Inside a key's name, a state partway through declared names (``"api`` of ``apiVersion``,
    or the names of a small object kept as a flat automaton) moves like the body of an
    undeclared name on every byte but where a declared name ends; its region's canonical form
    from there differs with every declared name ahead, or it lies on no cycle at all, so each
    such state would get a walk of its own (3-6 ms on Llama-3, at nearly every key of an
    object in any order). Its rows are the body's wherever the body ``g`` *simulates* it:
    byte by byte from the pair, a move ``g`` takes inside its region the state takes into a
    *quiet* state (one that neither accepts, calls, reads a key set's keys nor counts), a move
    dead for ``g`` is dead for the state, and where ``g`` leaves its region the state may do
    anything. Then the tokens that stay inside from ``g`` are those that stay quiet from the
    state, and the state reads the stack, the keys or the count only past ``g``'s exits: the
    body's walk, its exits replayed from ``q`` (a dead exit taking no token), gives ``q``'s
    row. The states tried are those on the cycle through the nearest quiet state that moves to
    itself in a shared region (:func:`_bodies_near`), for a quiet ``q`` inside a key set's
    names, or outside every shared region and moving on at least :data:`TWIN_MIN_BYTES` bytes
    (a string's; a number's or a bracket's walk is short); the pairs met on the way are
    simulated too, and keep their twin."""
    twins = index._twins
    got = twins.get(q, False)
    if got is not False:
        return got
    got = None
    names = index._names_from is not None and index._comp[q] >= index._names_from
    if not names and region_flags(index)[1][q]:
        twins[q] = q      # a region whose walk is shared by its canonical form (a string body)
        return q
    quiet = _quiet(index)
    tab = index._region_table
    if quiet[q] and (names or int((tab[q][index._k_byte_classes] != 0).sum())
                     >= TWIN_MIN_BYTES):
        n = tab.shape[0]
        for g in _bodies_near(index, q):
            if g == q:
                got = q
                break
            ok, pairs = kernels.simulated_pairs(tab, index._comp, quiet, g, q)
            if ok:
                for x in pairs.tolist():
                    twins.setdefault(x // n, x % n)
                got = g
                break
    twins[q] = got
    return got


def _replayed(index, q: int, x: int, stack: tuple, end: bool, rec, toks, out, touched) -> tuple:
    """What the exits of the shared walk whose skeleton is ``rec`` add to the row of ``(x,
    stack)`` (``q`` the state of ``x``): ``(used, exact, visited, idx, val)`` of
    :func:`.pd_kernels.replay_row`, or of :meth:`.frames.FrameAutomaton.replay` where frames hold
    data. The exits ``q`` reaches along ``rec``, and the states and ticks there
    (:func:`.pd_kernels.skeleton_exits`), are the same for every configuration of ``q`` (the
    moves inside a region read neither the stack nor a frame's data): the first replay follows
    them, and they are kept per state and skeleton in ``index._exits`` (bounded in bytes) for
    the next."""
    got = index._exits.get((q, id(rec)))
    # (an entry holds its rec, so no other array has that id while it is kept)
    exits = got[1] if got is not None and got[0] is rec else None
    fa = index._frames
    if fa is None:
        trie = index._trie
        used, exact, visited, idx, val, found = pd_kernels.replay_row(
            rec, pd_kernels.NO_EXITS if exits is None else exits, exits is not None, toks,
            trie.nodes, trie.tok_ids, trie.max_depth, *index._k_automaton, x,
            np.asarray(stack, dtype=np.int32) if stack else _NO_STACK, index._cap, out, touched)
        used, exact, visited = int(used), bool(exact), int(visited)
    else:
        used, exact, visited, idx, val, found = fa.replay(index._trie, rec, exits, toks, x, stack,
                                                          end, index.eos_ids, out, touched)
    if exits is None:
        index._exits.put((q, id(rec)), (rec, found), nbytes=found.nbytes + 200)
    return used, exact, visited, idx, val


#: :func:`twin_of` looks for a twin of states that move on at least this many of the 256 bytes.
TWIN_MIN_BYTES = 128
#: :func:`_bodies_near` looks this many states ahead of a state for a body.
TWIN_SEARCH_STATES = 4096


def _quiet(index) -> np.ndarray:
    """Per state, whether a walk passes it without reading the stack, a key set's keys or a
    count: not dead, not accepting, no calls, and a plain piece's or inside a key set's names
    (whose frame the caller checked, see :func:`shared_region_way`)."""
    got = index._quiet
    if got is None:
        got = ~np.asarray(index._k_accepting, dtype=bool) & (np.diff(index.call_ptr) == 0)
        got[0] = False
        fa = index._frames
        if fa is not None:
            lb = fa.lb
            kind = np.asarray(lb.piece_kind)[np.asarray(lb.state_piece)]
            names = np.zeros_like(got)
            if index._names_from is not None:
                names = index._comp >= index._names_from
            got &= (kind == 0) | ((kind == 2) & names)
        index._quiet = got
    return got


def _bodies_near(index, q: int) -> list:
    """Candidate twins of ``q`` (see :func:`twin_of`): the states on the cycle through the
    first state met, breadth first from ``q`` over quiet states, that moves to itself in a
    shared region; that state first. [] if none within :data:`TWIN_SEARCH_STATES`."""
    region_flags(index)
    g = kernels.nearest_body(index._region_table, _quiet(index), index._shared_states, q,
                             TWIN_SEARCH_STATES)
    return _name_body(index, int(g)) if g >= 0 else []


def _name_body(index, g: int) -> list:
    """The states on the cycles through ``g`` (a state that moves to itself: an undeclared
    name's body, the characters and an escape's bytes), ``g`` first: its strongly connected
    component, cut at JSON's separators as regions are (:func:`.index._regions`)."""
    bodies = index._name_bodies
    got = bodies.get(g)
    if got is None:
        scc = index._scc
        got = bodies[g] = [g] + [s for s in np.flatnonzero(scc == scc[g]).tolist() if s != g]
    return got


def rows_up_front(index):
    """The rows :func:`up_front_way` gives, for every state of a plain stack automaton that does
    not accept, outside the shared regions, made in one kernel call
    (:func:`.pd_kernels.rows_over_empty_stack`) and kept as words (at most ``cache_bytes / 8``
    of them); a row that reads below the stack, or walks more than ``EAGER_MAX_VISITS`` nodes,
    and the states after ``EAGER_MAX_TOTAL_VISITS`` nodes in all, are left to be made when
    asked. Returns ``(entries, positions, ptr, idx, val)`` (entries made
    on first use, see :func:`up_front_entry`) and the count of rows made."""
    shared = region_flags(index)[0] if index.share_walks else None
    states = np.array([q for q in range(1, index.num_states)
                       if not index._acc[q] and not (shared and shared[q])], dtype=np.int32)
    trie = index._trie
    out, touched = pd_kernels.row_scratch(index.n_words)
    ok, ptr, idx, val, _ = pd_kernels.rows_over_empty_stack(
        states, trie.nodes, trie.tok_ids, trie.max_depth, index._roots, *index._k_automaton,
        index._cap, EAGER_MAX_VISITS, index._cache_bytes // 8, EAGER_MAX_TOTAL_VISITS, out,
        touched)
    pos = np.full(index.num_states, -1, dtype=np.int64)
    pos[states[ok]] = np.flatnonzero(ok)
    return ([None] * index.num_states, pos.tolist(), ptr.tolist(), idx, val), int(ok.sum())


def make_rows_up_front(index) -> None:
    """Make rows of configurations over an empty stack when ``index`` is built, counted in
    ``stats["eager"]`` (not as misses). A plain stack automaton: :func:`rows_up_front`, kept in
    ``index._eager``. With data: every state's configuration with the frame's count far from its
    piece's bounds (where there is such a count) and no keys written, made one by one."""
    fa = index._frames
    t0 = time.perf_counter()
    stats = index.stats
    if fa is None:
        index._eager, made = rows_up_front(index)
        with index._lock:
            stats["eager"] += made
            stats["eager_s"] += time.perf_counter() - t0
        return
    before = (stats["misses"], stats["visited"], stats["walk_s"])
    for q in range(1, index.num_states):
        x = fa.far_frame(q)
        if x is not None:
            index.config_row((x, ()))
    with index._lock:
        stats["eager"] += stats["misses"] - before[0]
        stats["misses"], stats["visited"], stats["walk_s"] = before
        stats["eager_s"] += time.perf_counter() - t0


def up_front_entry(index, q: int):
    """The cache entry (see :meth:`.pushdown.PushdownIndex._entry`) of ``q``'s row made up
    front by :func:`rows_up_front`: its words, views of the kernel's arrays (kept as words,
    however many: the memory is the arrays', charged when they were made)."""
    _, pos, ptr, idx, val = index._eager
    i = pos[q]
    lo, hi = ptr[i], ptr[i + 1]
    if lo == hi:
        return [(None, index._zero_view, None, None), 0, None, 0]
    return [(None, index._zero_view, idx[lo:hi], val[lo:hi]), 0, None, 0]


class ReplayCache:
    """What a region replay reads of a shared walk, per vocabulary and walk (the walk's row as
    an array, its skeleton as :func:`.pd_kernels.skeleton_records`), kept for every index that
    meets the walk: made once per process, not once per index. A
    :class:`~tokenfsm.automata.cache.ByteLRU` holds them (least recently used first out once
    their arrays pass ``max_bytes``; thread-safe)."""

    def __init__(self, max_bytes: int, name: str | None = None):
        self._lru = ByteLRU(name, int(max_bytes))

    @property
    def max_bytes(self) -> int:
        return self._lru.max_bytes

    @property
    def nbytes(self) -> int:
        return self._lru.nbytes

    def get(self, key):
        return self._lru.get(key)

    def put(self, key, walked, trie, n_words: int):
        """The entry of a shared walk (:func:`.kernels.component_walk`'s tuple), made and kept
        (unless larger than ``max_bytes``)."""
        row = walked[2] if walked[2] is not None else pd_kernels.row_of_nodes(
            walked[7], trie.tok_ptr, trie.tok_ids, n_words)
        rec, toks = pd_kernels.skeleton_records(walked[3], walked[4], walked[5], trie.nodes,
                                                trie.tok_ids)
        entry = (row, memoryview(row).cast("B"), rec, toks)
        self._lru.put(key, entry, nbytes=row.nbytes + rec.nbytes + toks.nbytes + len(key[1]))
        return entry

    def clear(self) -> None:
        self._lru.clear()


#: Bytes of shared walks' rows and skeletons kept for region replays (:class:`ReplayCache`).
REPLAY_CACHE_BYTES = 16 << 20
REPLAYS = ReplayCache(REPLAY_CACHE_BYTES, "masks.row_ways.replays")


def walk_way(index, x: int, stack: tuple, end: bool, out, touched):
    """The reference way: one walk of the trie from the configuration
    (:func:`.pd_kernels.fill_row`, :func:`.frame_kernels.fill_row`)."""
    trie = index._trie
    if index._frames is not None:
        return (None,) + index._frames.fill(trie, index._roots, x, stack, end, index.eos_ids, out,
                                            touched)
    used, exact, visited, idx, val = pd_kernels.fill_row(
        trie.nodes, trie.tok_ids, trie.max_depth, index._roots, *index._k_automaton, x,
        np.asarray(stack, dtype=np.int32) if stack else _NO_STACK, index._cap, end, index.eos_ids,
        out, touched)
    return None, int(used), bool(exact), int(visited), idx, val, None


def shared_region_way(index, x: int, stack: tuple, end: bool, out, touched):
    """Where the walk from ``x`` inside its region cannot read the stack (no state of the region
    accepts or calls; with data, also the count far from its bounds, or the stack empty): the
    region's shared walk, with what the subtrees past its exits add, walked with the stack
    (:func:`.pd_kernels.replay_row`); None where it does not apply."""
    fa = index._frames
    q = x & 0xFFFFFFFF
    if fa is None:
        shared = shared_walk(index, q)
    elif ((fa.key_frame(x) >> 32) & _LOW64 == _LOW64 and (      # count class -1 (key names:
            fa.piece_kind(q) != 2 or fa.extra_member_ok(x))     # see key_name_regions)
          or fa.below_lo_free(x)):
        shared = shared_walk(index, q, accepting_ok=not stack)
    else:
        return None
    if shared is None:
        return None
    row, view, rec, toks = shared
    used, exact, visited, idx, val = _replayed(index, q, x, stack, end, rec, toks, out, touched)
    if fa is not None and not stack:
        exact = True          # an accepting state's zero move was dead here: empty stack only
    return (row, view), used, exact, visited, idx, val, None


class CountBand:
    """The band of a counted string's frame over a stack (:meth:`.frames.FrameAutomaton.
    fill_band`): the tokens allowed at some count of it in ascending order of need, their
    needs, the walk's ``used`` and ``exact``, and the last row made (``(room, words)``), from
    which the next is made by the difference: the tokens whose need lies between the two rooms.
    Counts met in order (a string written) thus cost a copy of the row and the tokens of a few
    more characters each."""

    __slots__ = ("tokens", "needs", "used", "exact", "top", "last")

    def __init__(self, tokens, needs, used: int, exact: bool, full):
        self.tokens, self.needs, self.used, self.exact = tokens, needs, used, exact
        self.top = int(needs[-1]) if needs.shape[0] else 0    # (every token's room)
        self.last = (self.top, full)

    @property
    def nbytes(self) -> int:
        return self.tokens.nbytes + self.needs.nbytes + 2 * self.last[1].nbytes + 200

    def row(self, room: int):
        """The words of the tokens whose need is at most ``room`` (a new array)."""
        r0, base = self.last          # (one read: another thread may replace it meanwhile)
        needs, top = self.needs, self.top
        k = int(np.searchsorted(needs, needs.dtype.type(min(room, top)), side="right"))
        k0 = int(np.searchsorted(needs, needs.dtype.type(min(r0, top)), side="right"))
        row = base.copy()
        frame_kernels.set_tokens(row, self.tokens, min(k, k0), max(k, k0), k > k0)
        self.last = (room, row)
        return row


def band_of(index, x: int, stack: tuple, out, touched):
    """``(band, visited)``: the :class:`CountBand` of top frame ``x`` over ``stack``, kept per
    index in ``index._bands`` (by the frame's state and the stack as the rows see it;
    ``visited`` 0 when kept before). None where ``x`` has no band
    (:meth:`.frames.FrameAutomaton.band_piece`)."""
    fa = index._frames
    if fa is None or fa.band_piece(x) < 0:
        return None
    kf = fa.key_frame
    key = (x & 0xFFFFFFFF, tuple([kf(f) for f in stack]))
    band = index._bands.get(key)
    if band is not None:
        return band, 0
    need = np.empty(index.vocab_size, dtype=np.int32)
    used, exact, visited, idx, val = fa.fill_band(index._trie, index._roots, x, stack, need, out,
                                                  touched)
    full = np.zeros(index.n_words, dtype=np.uint32)
    full[idx] = val
    bits = np.unpackbits(val.view(np.uint8), bitorder="little").reshape(-1, 32)
    words, offs = np.nonzero(bits)
    tokens = (idx[words].astype(np.int32) << 5) | offs.astype(np.int32)
    needs = need[tokens]
    if needs.shape[0] and needs.max() < 1 << 15:
        needs = needs.astype(np.int16)        # (sorted by radix)
    order = np.argsort(needs, kind="stable")
    band = CountBand(tokens[order], needs[order], used, exact, full)
    index._bands.put(key, band, nbytes=band.nbytes)
    with index._lock:
        index.stats["band_walks"] += 1
    return band, visited


class RegionNeeds:
    """The tokens that stay inside a counted piece's region from one of its states, sorted by
    need (:func:`.frame_kernels.region_needs`), and the row of them all, kept per vocabulary and
    region (by :func:`_region_key`) for every index that meets the region: a string body's,
    made once per process. A row near the upper bound is then the tokens whose need fits in
    what the bound leaves: a prefix of the list, written into a zeroed row, or its tail cleared
    from the whole row, whichever is shorter."""

    __slots__ = ("tokens", "needs", "full")

    def __init__(self, tokens, needs, n_words: int):
        order = np.argsort(needs, kind="stable")
        self.tokens = tokens[order]
        self.needs = needs[order]
        self.full = np.zeros(n_words, dtype=np.uint32)
        frame_kernels.set_tokens(self.full, self.tokens, 0, self.tokens.shape[0], True)

    @property
    def nbytes(self) -> int:
        return self.tokens.nbytes + self.needs.nbytes + self.full.nbytes + 200

    def row(self, room: int):
        """The words of the tokens whose need is at most ``room`` (a new array)."""
        n = self.needs.shape[0]
        k = int(np.searchsorted(self.needs, room, side="right"))
        if k <= n - k:
            row = np.zeros_like(self.full)
            frame_kernels.set_tokens(row, self.tokens, 0, k, True)
        else:
            row = self.full.copy()
            frame_kernels.set_tokens(row, self.tokens, k, n, False)
        return row


#: Bytes of :class:`RegionNeeds` kept per process (a string body's on Llama-3: about 0.6 MB).
REGION_NEEDS_BYTES = 16 << 20
REGION_NEEDS = ByteLRU("masks.row_ways.region_needs", REGION_NEEDS_BYTES)


def _region_ticks(index, q: int) -> tuple:
    """``(least, closed)`` for ``q``'s region: per state, the fewest ticks on its way to the end
    of its counted piece (the first bit of its lasso; -1 where it cannot end or is not counted),
    filled in for the states of that region (kept per index, a region at a time); and whether
    every state of the region can end with any count of ticks from its fewest on (its lasso
    true from there: a string's characters)."""
    least = index._least
    if least is None:
        least = index._least = np.full(index.num_states, -1, dtype=np.int64)
    g = int(index._comp[q])
    closed = index._closed.get(g)
    if closed is None:
        lb = index._frames.lb
        closed = True
        for s in np.flatnonzero(index._comp == g).tolist():
            p = int(lb.state_piece[s])
            if lb.piece_kind[p] != 1:
                closed = False
                continue
            off = int(lb.count_off[s])
            lasso = lb.count_bits[off:off + int(lb.piece_tail[p]) + int(lb.piece_period[p])]
            hit = np.flatnonzero(lasso)
            if hit.shape[0]:
                least[s] = hit[0]
                closed = closed and bool(lasso[hit[0]:].all())
            else:
                closed = False
        index._closed[g] = closed
    return least, closed


def _region_key(index, q: int, least) -> bytes:
    """``q``'s region as the walk of :func:`.frame_kernels.region_needs` reads it: its states
    numbered breadth first from ``q`` (byte order), and per state its fewest ticks and, per
    byte, the move's target number (-1 dead, -2 out of the region) and tick. Equal keys give
    equal walks over one trie, whatever the automaton."""
    comp, g = index._comp, index._comp[q]
    tab, cls = index._k_table, index._k_byte_classes
    num = {q: 0}
    order = [q]
    parts = []
    for s in order:
        row = tab[s][cls].astype(np.int64)
        target = row & ((1 << 30) - 1)
        inside = (target != 0) & (comp[target] == g)
        for t in target[inside].tolist():
            if t not in num:
                num[t] = len(order)
                order.append(t)
        lab = np.where(target == 0, -1, -2)
        lab[inside] = [num[t] for t in target[inside].tolist()]
        parts += [np.array([least[s]], dtype=np.int64), lab * 2 + (row >> 30)]
    return np.concatenate(parts).astype(np.int32).tobytes()


def region_needs(index, q: int):
    """The :class:`RegionNeeds` of ``q``'s region for ``index``'s vocabulary, from the kept ones
    or walked now (counted in ``stats["visited"]``)."""
    got = index._region_needs.get(q)
    if got is not None:
        return got
    least = _region_ticks(index, q)[0]
    key = (index.vocab_fingerprint, _region_key(index, q, least))
    got = REGION_NEEDS.get(key)
    if got is None:
        trie = index._trie
        tokens, needs, visited = frame_kernels.region_needs(
            trie.nodes, trie.tok_ids, trie.max_depth, index._k_table, index._k_byte_classes,
            index._comp, least, q)
        got = RegionNeeds(tokens, needs, index.n_words)
        REGION_NEEDS.put(key, got, nbytes=got.nbytes + len(key[1]))
        with index._lock:
            index.stats["visited"] += int(visited)
    index._region_needs[q] = got
    return got


def region_band_way(index, x: int, stack: tuple, end: bool, out, touched):
    """Where the top frame is a counted piece's with its count near its upper bound
    (:meth:`.frames.FrameAutomaton.near_bound`) and its state lies in a region with a shared
    walk: the region's tokens whose need fits in what the bound leaves (:class:`RegionNeeds`),
    with what the subtrees past the region's exits add, replayed with the frame (as
    :func:`shared_region_way`, whose replay tests each exit at its count: a count past the
    bound stays past it); None where it does not apply.

    A move inside the region is live iff its count plus the fewest ticks its state needs is
    within the bound, when the count is at least the lower bound, or below it where every
    state of the region ends with any count from its fewest on (a string's characters:
    :func:`_region_ticks`); else the count matters otherwise, and the way does not apply."""
    fa = index._frames
    if fa is None or not fa.near_bound(x):
        return None
    q = x & 0xFFFFFFFF
    shared = shared_walk(index, q, accepting_ok=not stack)
    if shared is None or (fa.below_lo(x) and not _region_ticks(index, q)[1]):
        return None
    row = region_needs(index, q).row(fa.room(x))
    used, exact, visited, idx, val = _replayed(index, q, x, stack, end, shared[2], shared[3], out,
                                               touched)
    row[idx] |= val
    return None, used, exact or not stack, visited, index._all_words, row, None


def count_band_way(index, x: int, stack: tuple, end: bool, out, touched):
    """Where the top frame is a counted piece that calls nothing (a string's characters) with
    its count near its upper bound: the tokens of its band (:class:`CountBand`, one walk for
    every count there) whose need fits in what the bound leaves; None where it does not
    apply."""
    got = band_of(index, x, stack, out, touched)
    if got is None:
        return None
    band, visited = got
    row = band.row(index._frames.room(x))
    if end:
        row = row.copy()
        frame_kernels.set_tokens(row, index.eos_ids, 0, index.eos_ids.shape[0], True)
    return None, band.used, band.exact, visited, index._all_words, row, None


def up_front_way(index, x: int, stack: tuple, end: bool, out, touched):
    """A row made up front (:func:`make_rows_up_front`): the walk over an
    empty stack of a state that does not accept, which holds for every stack when no byte of it
    reads below the stack (:func:`.pd_kernels.rows_over_empty_stack`); None where it does not
    apply (data in the frames, an accepting state, a row that reads the stack or is too big)."""
    if index._frames is not None or index._acc[x]:
        return None
    trie = index._trie
    ok, ptr, idx, val, visited = pd_kernels.rows_over_empty_stack(
        np.array([x], dtype=np.int32), trie.nodes, trie.tok_ids, trie.max_depth, index._roots,
        *index._k_automaton, index._cap, EAGER_MAX_VISITS, index.n_words, -1, out, touched)
    if not ok[0]:
        return None
    return None, 0, False, int(visited), idx, val, None


#: The ways a mask row is made, each ``(index, top, stack, end, out, touched) -> (base, used,
#: exact, visited, idx, val, counts)`` or None where it does not apply (``out``, ``touched``:
#: the scratch of :func:`.pd_kernels.row_scratch`, left as given): the row is ``base`` (a
#: shared ``(row, byte view)``, or None) with the words ``val`` or-ed in at ``idx``; ``counts``
#: None, or the runs of counts of the top frame and of the stack's top over which the same row
#: holds (the walk's, near a counted piece's bound: :meth:`.frames.FrameAutomaton.fill`). All
#: give the reference's row, and a ``used``/``exact`` claim at least as cautious as its (the
#: tests run every way on every configuration they meet, and the row at each count a way
#: claims).
#: Where ``share_walks`` is set, the index takes the first of ``shared-region``,
#: ``region-band`` and ``count-band`` that applies; else ``walk``. ``up-front`` rows are the ones
#: :func:`rows_up_front` makes for many states at once when an index is built.
ROW_WAYS = {
    "walk": walk_way,
    "shared-region": shared_region_way,
    "region-band": region_band_way,
    "count-band": count_band_way,
    "up-front": up_front_way,
}
#: The way that defines the rows.
ROW_REFERENCE = "walk"
