"""Configurations of lazy networks for token masks: packed frames, the walk, row keys.

A :class:`~.pushdown.PushdownIndex` over a :class:`~tokenfsm.automata.lazy_bytes.LazyBytes`
whose pieces hold counts or key sets keeps its configurations as ``(top, stack)``, every frame
one int: ``state | count << 32 | keys << 96`` (:func:`pack`). A frame of a plain piece is then
just its state, so a plain stack automaton's configurations look as they always did.

:class:`FrameAutomaton` walks a token's bytes from a configuration in Python (a few lookups per
byte, cheaper than a kernel call), decides liveness and the end of the text, and keys mask rows
by what they depend on. A row depends on a frame's count only through where the count lies
relative to the piece's bounds: a token of at most ``L`` bytes ticks a frame at most ``L``
times, and beyond a margin ``K = L + tail + period`` (``L + keys + 2`` for key sets) from a
bound, liveness no longer changes with the count (:meth:`FrameAutomaton.count_class`). So a
string of ``maxLength: 10**9`` has one row per state of its body for all counts but the last
``K``, and memory is O(states x L), not O(states x N).

Example
-------
>>> pack(5, 3, 0b10) == 5 | 3 << 32 | 0b10 << 96
True
>>> unpack(pack(5, 3, 0b10))
(5, 3, 2)

Keying rows by an abstraction of the counter follows the argument of counting automata
(Turonova et al., OOPSLA 2020): a counter is only ever compared with its bounds.
"""

from __future__ import annotations

import numpy as np

from tokenfsm.automata.lazy_bytes import _keys_live, _term_met, rows_to_ints

from . import frame_kernels
from .pd_kernels import NO_EXITS

__all__ = ["pack", "unpack", "FrameAutomaton"]

_LOW32 = (1 << 32) - 1
_LOW64 = (1 << 64) - 1
_COUNT_FIELD = _LOW64 << 32
_TICK = 1 << 30
_STATE = _TICK - 1
#: Entries of :meth:`FrameAutomaton.walk_token`'s table of hops (emptied when full).
HOPS_KEPT = 1 << 18
#: Stacks, and key sets, whose arrays :meth:`FrameAutomaton._stack_arrays` keeps (each kept
#: apart, emptied when full).
STACKS_KEPT = 1 << 14


def pack(q: int, count: int, keys: int) -> int:
    """One frame as an int: ``q | count << 32 | keys << 96``."""
    return q | (count << 32) | (keys << 96)


def unpack(x: int) -> tuple[int, int, int]:
    """``(state, count, keys)`` of a packed frame."""
    return x & _LOW32, (x >> 32) & _LOW64, x >> 96


class FrameAutomaton:
    """The walk, liveness and row keys of a ``LazyBytes`` with data, for one vocabulary.

    Parameters
    ----------
    lb : LazyBytes
    max_token_bytes : int
        The vocabulary's longest token (``L``).
    """

    def __init__(self, lb, max_token_bytes: int):
        self.lb = lb
        self.kernel = frame_kernels.automaton_tuple(lb)
        self.W = lb.key_words
        self.num_states = lb.num_states
        self.max_stack = lb.max_stack
        # (a view, read an int at a time by the walk: a list of a large table took 50 ms)
        self._tab = memoryview(np.ascontiguousarray(lb.table, dtype=np.int32).reshape(-1)) \
            .cast("B").cast("i")
        self._nc = int(lb.table.shape[1])
        self._cls = lb.byte_classes.tolist()
        self._acc = lb.accepting.tolist()
        self._piece = lb.state_piece.tolist()
        self._kind = lb.piece_kind.tolist()
        self._lo = lb.piece_lo.tolist()
        self._hi = lb.piece_hi.tolist()
        self._keys = rows_to_ints(lb.piece_keys)
        self._terms = lb.terms()
        self._ext = lb.piece_extras.tolist()
        self._tail = lb.piece_tail.tolist()
        self._period = lb.piece_period.tolist()
        self._off = lb.count_off.tolist()
        self._bits = lb.count_bits.tolist()
        self._close = lb.key_close.tolist()
        self._kmask = rows_to_ints(lb.key_mask)
        self._kextra = lb.key_extra.tolist()
        ptr = lb.call_ptr.tolist()
        packed = np.packbits(lb.call_first, axis=1, bitorder="little")
        firsts = [int.from_bytes(r.tobytes(), "little") for r in packed]
        ent, ret = lb.call_entry.tolist(), lb.call_return.tolist()
        tick, commit = lb.call_tick.tolist(), lb.call_commit.tolist()
        self._calls = {q: tuple((firsts[e], ent[e], ret[e], int(tick[e]), commit[e])
                                for e in range(ptr[q], ptr[q + 1]))
                       for q in np.flatnonzero(np.diff(lb.call_ptr)).tolist()}
        L = int(max_token_bytes)
        n_keys = [bin(k).count("1") for k in self._keys]
        self._margin = [L + (self._tail[p] + self._period[p] if self._kind[p] == 1
                             else n_keys[p] + 2) for p in range(len(self._kind))]
        # per piece, whether its rows near the upper bound come from one band walk: counted,
        # bounded, and calling nothing (its frame is on top from its call to its pop)
        calling = set(np.asarray(lb.state_piece)[np.diff(lb.call_ptr) > 0].tolist())
        self._band = [self._kind[p] == 1 and self._hi[p] >= 0 and p not in calling
                      for p in range(len(self._kind))]
        # per state, counts for which the quick answers hold: a frame of a counted piece with
        # lo <= c <= hi - (tail + period) is live (its state can end: T(q) is not empty), and
        # a frame with lo <= c <= hi - margin - 1 has the count class -1 (the rows cannot tell
        # its count from any other there); plain pieces hold count 0 and always pass
        # (made per piece, read per state through its piece)
        big = 1 << 64
        live_lo, live_hi, cls_lo, cls_hi = [], [], [], []
        for p, (kind, lo, hi) in enumerate(zip(self._kind, self._lo, self._hi)):
            if kind == 0:
                live_lo.append(0)
                live_hi.append(big)
            elif kind == 1:
                live_lo.append(lo)
                live_hi.append(big if hi < 0 else hi - self._tail[p] - self._period[p])
            else:
                live_lo.append(big)
                live_hi.append(-1)
            cls_lo.append(lo if kind else 0)
            cls_hi.append(big if hi < 0 or kind == 0 else hi - self._margin[p] - 1)
        piece = self._piece
        self._live_lo, self._live_hi = [live_lo[p] for p in piece], [live_hi[p] for p in piece]
        self._cls_lo, self._cls_hi = [cls_lo[p] for p in piece], [cls_hi[p] for p in piece]
        # per piece, whether a count below its lower bound may take a region's shared walk
        # (see below_lo_free): counted, its bounds at least a period apart
        self._below_ok = [kind == 1 and (hi < 0 or hi - lo >= P - 1) for kind, lo, hi, P in
                          zip(self._kind, self._lo, self._hi, self._period)]
        # (state, token) -> (state after the token's bytes, ticks) when they move by the table
        # alone, False when they call, pop or die: a token is then one lookup
        self._hops: dict = {}
        # stack -> its arrays for the kernels (a stack stays while a member is written, and
        # every row made there reads it)
        self._stacks: dict = {}
        # keys -> their words for the kernels (making the array costs more than a row's lookup)
        self._key_words: dict = {}

    # -- frames -------------------------------------------------------------------------------
    def check_frame(self, x, top: bool) -> int:
        """``x`` as a frame int, or ValueError."""
        x = int(x)
        if x < 0:
            raise ValueError(f"frame {x} is negative")
        q, c, k = unpack(x)
        if not (0 <= q < self.num_states if top else 0 < q < self.num_states):
            raise ValueError(f"frame state {q} outside 1..{self.num_states - 1}")
        if q:
            p = self._piece[q]
            if self._kind[p] == 0 and (c or k):
                raise ValueError(f"frame {x}: state {q} holds no count or keys")
            if 0 <= self._hi[p] < c or (k & ~self._keys[p]):
                raise ValueError(f"frame {x}: count {c} or keys outside the piece's")
        return x

    def live(self, q: int, c: int, k: int) -> bool:
        p = self._piece[q]
        kind = self._kind[p]
        if kind == 0:
            return True
        lo, hi = self._lo[p], self._hi[p]
        if 0 <= hi < c:
            return False
        if kind == 1:
            A, P, off, bits = self._tail[p], self._period[p], self._off[q], self._bits
            x = lo - c if lo > c else 0
            for _ in range(A + P):
                if hi >= 0 and x > hi - c:
                    return False
                if bits[off + (x if x < A + P else A + (x - A) % P)]:
                    return True
                x += 1
            return False
        return _keys_live(self._close[q], self._kmask[q], self._kextra[q], self._keys[p],
                          self._terms[p], self._ext[p], lo, hi, c, k)

    def guard(self, q: int, c: int, k: int) -> bool:
        p = self._piece[q]
        kind = self._kind[p]
        if kind == 0:
            return True
        if c < self._lo[p]:
            return False
        return kind == 1 or _term_met(self._terms[p], k)

    def can_end(self, x: int, stack) -> bool:
        """Every frame accepting, its guard holding."""
        acc = self._acc
        if not acc[x & _LOW32]:
            return False
        for f in (x, *stack):
            q, c, k = unpack(f)
            if not acc[q] or not self.guard(q, c, k):
                return False
        return True

    # -- the walk -----------------------------------------------------------------------------
    def walk(self, x: int, stack: list, data) -> int:
        """The top frame after ``data`` (bytes or ints) from ``x``; ``stack`` (packed frames)
        changes in place. 0 if dead."""
        tab, nc, cls, acc = self._tab, self._nc, self._cls, self._acc
        piece, kind, calls, live = self._piece, self._kind, self._calls, self.live
        live_lo, live_hi = self._live_lo, self._live_hi
        q, c, k = x & _LOW32, (x >> 32) & _LOW64, x >> 96
        if q == 0:
            return 0
        limit = 2 * (len(stack) + self.max_stack) + 4
        for b in data:
            cb = cls[b]
            ops = 0
            while True:
                t = tab[q * nc + cb]
                if t:
                    if t & _TICK:
                        c += 1
                        t &= _STATE
                    if not live_lo[t] <= c <= live_hi[t] and not live(t, c, k):
                        return 0
                    q = t
                    break
                ops += 1
                if ops > limit:
                    return 0
                for first, entry, ret, tick, key in calls.get(q, ()):
                    if first >> b & 1:
                        c2, k2 = c + tick, k
                        if key >= 0:
                            if k >> key & 1:
                                return 0
                            k2 = k | (1 << key)
                        if kind[piece[ret]] and not live(ret, c2, k2):
                            return 0
                        stack.append(ret | (c2 << 32) | (k2 << 96))
                        q, c, k = entry, 0, 0
                        break
                else:
                    if acc[q] and stack and self.guard(q, c, k):
                        f = stack.pop()
                        q, c, k = f & _LOW32, (f >> 32) & _LOW64, f >> 96
                        continue
                    return 0
            if len(stack) > self.max_stack:
                return 0
        return q | (c << 32) | (k << 96)

    def walk_token(self, x: int, stack: list, token_id: int, data: bytes) -> int:
        """:meth:`walk` of one token's bytes, by its hop when the token only moves the top frame
        within its piece and the count stays where every state of the piece is live."""
        q = x & _LOW32
        hops = self._hops
        hop = hops.get((q, token_id))
        if hop is None:
            hop = self._hop(q, data)
            if len(hops) >= HOPS_KEPT:
                hops.clear()
            hops[(q, token_id)] = hop
        if hop:
            t, dt = hop
            c = (x >> 32) & _LOW64
            if self._live_lo[q] <= c and c + dt <= self._live_hi[q]:
                return t | ((c + dt) << 32) | ((x >> 96) << 96)
        return self.walk(x, stack, data)

    def _hop(self, q: int, data: bytes):
        tab, nc, cls = self._tab, self._nc, self._cls
        dt = 0
        for b in data:
            t = tab[q * nc + cls[b]]
            if not t:
                return False
            if t & _TICK:
                dt += 1
                t &= _STATE
            q = t
        return (q, dt)

    def forced_bytes(self, x: int, stack) -> bytes:
        """The bytes forced from configuration ``(x, stack)``: while the text may not end there
        and exactly one byte keeps it live, that byte. Each byte that could move the
        configuration is tried (liveness depends on the counts and keys)."""
        st = list(stack)
        out = bytearray()
        limit = 4 * self.num_states * (self.max_stack + 1) + 64
        acc = self._acc
        while x and len(out) < limit and not self.can_end(x, st):
            cand, k, q = self.own_bytes(x & _LOW32), len(st), x & _LOW32
            while acc[q] and k > 0:
                k -= 1
                q = st[k] & _LOW32
                cand |= self.own_bytes(q)
            found = None
            while cand:
                b = cand.bit_length() - 1
                cand ^= 1 << b
                trial = list(st)
                y = self.walk(x, trial, (b,))
                if y:
                    if found is not None:
                        return bytes(out)
                    found = (b, y, trial)
            if found is None:
                break
            out.append(found[0])
            x, st = found[1], found[2]
        return bytes(out)

    def own_bytes(self, q: int) -> int:
        """Bytes that move ``q`` without popping (own moves and calls), as a 256-bit int: a
        superset of what is live there."""
        row = self._tab[q * self._nc:(q + 1) * self._nc]
        bits = 0
        for b in range(256):
            if row[self._cls[b]]:
                bits |= 1 << b
        for first, *_ in self._calls.get(q, ()):
            bits |= first
        return bits

    # -- rows ---------------------------------------------------------------------------------
    def count_class(self, p: int, c: int) -> int:
        """The count, or a code standing for every count the rows cannot tell apart from it:
        -1 at least ``lo`` and more than the margin below ``hi``; ``-2 - c % period`` more than
        the margin below ``lo``."""
        lo, hi, m = self._lo[p], self._hi[p], self._margin[p]
        if hi >= 0 and hi - c <= m:
            return c
        if c >= lo:
            return -1
        if lo - c <= m:
            return c
        return -2 - c % self._period[p]

    def key_frame(self, x: int) -> int:
        """A frame as the rows see it: the frame with its count replaced by the count's class
        (:meth:`count_class`), a negative class written in 64-bit two's complement. Counts stay
        below ``2**63`` (a count field of 64 bits, bounds of 63), so a class never reads as a
        count."""
        q = x & _LOW32
        c = (x >> 32) & _LOW64
        if self._cls_lo[q] <= c <= self._cls_hi[q]:
            return x | _COUNT_FIELD
        return (x & ~_COUNT_FIELD) | ((self.count_class(self._piece[q], c) & _LOW64) << 32)

    def piece_kind(self, q: int) -> int:
        """0 plain, 1 counted, 2 key set: the kind of state ``q``'s piece."""
        return self._kind[self._piece[q]]

    def extra_member_ok(self, x: int) -> bool:
        """Whether the key-set frame ``x`` may take one more member under an undeclared key (its
        piece takes them, and the count and the required keys still missing leave room): then
        every move inside a key name that no required key or close reads is live (see
        :func:`.row_ways.key_name_regions`)."""
        q, c, k = unpack(x)
        p = self._piece[q]
        if self._kind[p] != 2 or not self._ext[p]:
            return False
        lo, hi = self._lo[p], self._hi[p]
        c1 = c + 1
        if hi >= 0 and c1 > hi:
            return False
        for req, forb in self._terms[p]:
            need = max(bin(req & ~k).count("1"), lo - c1, 0)
            if not forb & k and not (hi >= 0 and need > hi - c1):
                return True
        return False

    def below_lo_free(self, x: int) -> bool:
        """Whether frame ``x`` of a counted piece, its count below the lower bound, keeps every
        move inside its state's region live for any token (so the region's shared walk serves
        it, its exits replayed with the frame, as at counts far from both bounds).

        A region is strongly connected. If a move in it ticks, every state of it can tick on
        forever, so its lasso ticks somewhere in its period: from count ``c2 < lo`` it needs
        at most ``lo - c2 + period - 1`` more ticks (``tail + period - 1`` where ``lo - c2``
        is within the tail), and the bound leaves ``hi - c2``: enough when ``hi - lo`` is at
        least ``period - 1`` and the count stays ``tail + period`` below ``hi`` over a token
        (more than the margin below it, as at count class -1). If no move in it ticks, its
        states reach the same counts and the count does not change inside it: a live frame
        stays live."""
        q = x & _LOW32
        c = (x >> 32) & _LOW64
        return self._below_ok[self._piece[q]] and c < self._cls_lo[q] and c <= self._cls_hi[q]

    def far_frame(self, q: int):
        """A frame of state ``q`` whose count is far from its piece's bounds (count class -1),
        no keys written; None where the piece's bounds leave no such count."""
        lo, hi = self._cls_lo[q], self._cls_hi[q]
        return pack(q, lo, 0) if lo <= hi else None

    def _stack_arrays(self, x: int, stack: tuple):
        """``(q, c, keys, st_ret, st_cnt, st_keys)`` of frame ``x`` over ``stack`` as the
        kernels take them; a stack's arrays, and the words of keys, are kept for the rows made
        over them (the kernels only read them; writeable still: a read-only array is another
        Numba type, compiled again)."""
        W = self.W
        q, c, k = unpack(x)
        keys = self._key_words.get(k)
        if keys is None:
            keys = np.array([(k >> (64 * w)) & _LOW64 for w in range(W)], dtype=np.uint64)
            if len(self._key_words) >= STACKS_KEPT:
                self._key_words.clear()
            self._key_words[k] = keys
        got = self._stacks.get(stack)
        if got is None:
            n = len(stack)
            st_ret = np.zeros(n, dtype=np.int32)
            st_cnt = np.zeros(n, dtype=np.int64)
            st_keys = np.zeros((n, W), dtype=np.uint64)
            for i, f in enumerate(stack):
                fq, fc, fk = unpack(f)
                st_ret[i], st_cnt[i] = fq, fc
                st_keys[i] = [(fk >> (64 * w)) & _LOW64 for w in range(W)]
            got = (st_ret, st_cnt, st_keys)
            if len(self._stacks) >= STACKS_KEPT:
                self._stacks.clear()
            self._stacks[stack] = got
        return (q, c, keys) + got

    def spanned(self, x: int) -> bool:
        """Whether frame ``x`` (or key frame: an exact count) is a counted piece's where the
        rows tell its counts apart (:meth:`count_class`): near its upper bound and at least its
        lower one, or, with no upper bound, near and below its lower one. A walk then finds the
        run of its counts over which its row holds (:meth:`fill`)."""
        q = x & _LOW32
        c = (x >> 32) & _LOW64
        p = self._piece[q]
        if self._kind[p] != 1:
            return False
        lo, hi = self._lo[p], self._hi[p]
        if hi < 0:
            return c < lo and lo - c <= self._margin[p]
        return lo <= c <= hi and hi - c <= self._margin[p]

    def _run(self, x: int, a: int, b: int) -> tuple:
        """The first and last count of frame ``x`` whose row the walk's ``span`` entries ``a``
        and ``b`` for it leave the same (see :func:`.frame_kernels._walk_ranges`)."""
        p = self._piece[x & _LOW32]
        c = (x >> 32) & _LOW64
        lo, hi = self._lo[p], self._hi[p]
        if c >= lo:
            return max(lo, hi - b + 1), hi - a
        first, last = max(0, lo - b), min(lo - 1, lo - a - 1)
        return (first, last) if first <= c <= last else (c, c)

    def _span_start(self, x: int) -> list:
        """The ``span`` entries of frame ``x`` before a walk (see :meth:`fill`)."""
        if not self.spanned(x):
            return [0, -1]
        p = self._piece[x & _LOW32]
        return [0, 1 << 62] if (x >> 32) & _LOW64 >= self._lo[p] else [-1, 1 << 62]

    def fill(self, trie, roots, x: int, stack: tuple, can_end: bool, eos_ids, out,
             touched) -> tuple:
        """The row of ``(x, stack)`` by a walk of the trie: ``(used, exact, visited, idx, val,
        counts)`` (see :func:`.frame_kernels.fill_row`; ``roots``: :func:`.pd_kernels.
        root_children` of the trie, ``out``/``touched`` zeroed scratch). ``counts`` is None, or
        ``(top, below)`` where ``x`` or the stack's top frame is :meth:`spanned`: for each such
        frame, the first and last of its counts at which the row is the same (see
        :func:`.frame_kernels._count_spanned`; None for the other). A token of a few bytes ticks
        a few times, so most counts near a bound share the row of their neighbours."""
        q, c, keys, st_ret, st_cnt, st_keys = self._stack_arrays(x, stack)
        start = self._span_start(x) + (self._span_start(stack[-1]) if stack else [0, -1])
        top, below = start[1] >= 0, start[3] >= 0
        span = np.array(start, dtype=np.int64) if top or below else frame_kernels.NO_SPAN
        used, exact, visited, idx, val = frame_kernels.fill_row(
            trie.nodes, trie.tok_ids, trie.max_depth, roots, self.kernel, q, c, keys, st_ret,
            st_cnt, st_keys, max(self.max_stack, 1), can_end, eos_ids, out, touched, -1,
            frame_kernels.NO_NEED, span)
        counts = None
        if top or below:
            counts = (self._run(x, int(span[0]), int(span[1])) if top else None,
                      self._run(stack[-1], int(span[2]), int(span[3])) if below else None)
        return int(used), bool(exact), int(visited), idx, val, counts

    def band_piece(self, x: int) -> int:
        """The piece whose band (:meth:`fill_band`) holds the row of top frame ``x``, or -1: a
        counted piece that calls nothing (a string's characters), the count at least its lower
        bound and within the margin below its upper one (where the rows tell counts apart)."""
        q = x & _LOW32
        c = (x >> 32) & _LOW64
        p = self._piece[q]
        if not self._band[p] or c < self._lo[p] or self._hi[p] - c > self._margin[p]:
            return -1
        return p

    def near_bound(self, x: int) -> bool:
        """Whether frame ``x`` is a counted piece's with its count within the margin below the
        upper bound (where the rows tell counts apart), at or below it."""
        q = x & _LOW32
        p = self._piece[q]
        room = self._hi[p] - ((x >> 32) & _LOW64)
        return self._kind[p] == 1 and self._hi[p] >= 0 and 0 <= room <= self._margin[p]

    def below_lo(self, x: int) -> bool:
        """Whether frame ``x``'s count is below its piece's lower bound."""
        return (x >> 32) & _LOW64 < self._lo[self._piece[x & _LOW32]]

    def room(self, x: int) -> int:
        """How many more ticks the upper bound of frame ``x``'s piece allows (a bounded piece)."""
        return self._hi[self._piece[x & _LOW32]] - ((x >> 32) & _LOW64)

    def fill_band(self, trie, roots, x: int, stack: tuple, tok_need, out, touched) -> tuple:
        """The walk of :meth:`fill` for every count of the band of ``x``'s piece at once (see
        :meth:`band_piece`): its frame's upper bound left out, each token's need written to
        ``tok_need`` (the token is allowed at count ``c`` iff its need is at most ``hi - c``);
        no EOS. ``(used, exact, visited, idx, val)``."""
        q, c, keys, st_ret, st_cnt, st_keys = self._stack_arrays(x, stack)
        used, exact, visited, idx, val = frame_kernels.fill_row(
            trie.nodes, trie.tok_ids, trie.max_depth, roots, self.kernel, q, c, keys, st_ret,
            st_cnt, st_keys, max(self.max_stack, 1), False, frame_kernels.NO_EOS, out,
            touched, self._piece[q], tok_need, frame_kernels.NO_SPAN)
        return int(used), bool(exact), int(visited), idx, val

    def replay(self, trie, rec, exits, toks, x: int, stack: tuple, can_end: bool, eos_ids, out,
               touched) -> tuple:
        """What a row adds to its region's shared walk, whose skeleton ``rec`` reaches
        ``exits`` from ``x``'s state (None: not known yet; see
        :func:`.frame_kernels.replay_row`): ``(used, exact, visited, idx, val, exits)``."""
        q, c, keys, st_ret, st_cnt, st_keys = self._stack_arrays(x, stack)
        used, exact, visited, idx, val, exits = frame_kernels.replay_row(
            rec, NO_EXITS if exits is None else exits, exits is not None, toks, trie.nodes,
            trie.tok_ids, trie.max_depth, self.kernel, q, c, keys, st_ret, st_cnt, st_keys,
            max(self.max_stack, 1), can_end, eos_ids, out, touched)
        return int(used), bool(exact), int(visited), idx, val, exits
