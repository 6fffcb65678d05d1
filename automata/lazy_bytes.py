"""The byte form of a lazy network: a stack automaton whose frames hold a count and a key set.

:class:`~.recursive.PushdownBytes` walks small byte automata that call each other, with a stack of
return states. :class:`LazyBytes` adds what a frame may hold besides its state, so that a counted
repetition or an object whose keys may come in any order need not be unrolled:

* a **count** (the frame of a *counted* piece): some moves *tick* (``TICK_BIT`` set in the table
  entry, or ``call_tick`` on a call edge, applied to the caller when the call is made); the
  piece may end only with a count in ``lo..hi`` and a tick beyond ``hi`` is dead;
* a **key set** (the frame of a *key-set* piece, an object): each member is a call of its value
  piece whose edge names the declared key it writes (``call_commit``, -1 for an undeclared key)
  and ticks the member count; a key is never written twice, and the object may end only when
  its member count lies in ``lo..hi`` and, for one of its *terms*, the term's required keys are
  in the set and none of its forbidden keys (most pieces have one term, forbidding nothing).

A *configuration* is a top frame ``(state, count, keys)`` and a stack of frames
``(return state, count, keys)``, bottom first (``keys`` is an int, bit ``i`` for key ``i``).
Masks must never offer a prefix that cannot be completed, so after every move the frame that
moved must be **live**: some continuation reaches the end of its piece with its count and keys
allowed (:meth:`LazyBytes.live`). For a counted piece that is a question about the numbers of
ticks on the paths to an accepting state, ``T(q)``, an ultimately periodic set kept as a *lasso*
(``tail + period`` bits per state, :mod:`.network_link`); for a key-set piece it is a formula over
the keys still reachable in the member being written (``key_mask``, ``key_extra``), whether the
object can close from here without another member (``key_close``), and, per term not yet
broken by a forbidden key, the required keys missing and the count. Every other frame on the
stack was live when it was pushed and has not moved since, so a configuration is live exactly
when its top frame is.

One byte ``b`` at ``(q, c, k)``: (1) ``t = table[q, byte_classes[b]]``; if nonzero, the frame moves
to ``t & STATE_MASK`` (ticking if ``t & TICK_BIT``), dead if that frame is not live; (2) else the
call edge ``e`` of ``q`` with ``call_first[e, b]`` (at most one): the caller becomes
``(call_return[e], c + call_tick[e], k | key)``, dead if that is not live or writes a key twice;
it is pushed and a fresh frame ``(call_entry[e], 0, 0)`` reads ``b`` from (1); (3) else if ``q``
accepts, its frame's guard holds (count at least ``lo``, a term met) and the stack is
not empty: pop and retry; (4) else dead. The text may end where every frame accepts with its
guard (:meth:`LazyBytes.can_end`).

Example
-------
>>> from tokenfsm.automata import DFA
>>> from tokenfsm.automata.network import Network, Text, Tick, concat, star
>>> net = Network()
>>> body = net.counted(star(concat(Text(DFA.from_regex("[ab]")), Tick())), lo=2, hi=3)
>>> lb = net.build(body)
>>> [lb.accepts(s) for s in (b"a", b"ab", b"abb", b"abab")]
[False, True, True, False]
>>> lb.walk(b"ab")[0]                       # (state, count, keys) of the top frame
(1, 2, 0)

Counters held in the configuration are the counting automata of Turonova et al. (OOPSLA 2020);
key sets in the configuration are llguidance's and xgrammar's way of writing objects whose
members come in any order without an automaton per subset of keys.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import AutomatonError

__all__ = ["LazyBytes", "TICK_BIT", "STATE_MASK", "PLAIN", "COUNTED", "KEY_SET"]

#: Set in a table entry whose move ticks the frame's count.
TICK_BIT = 1 << 30
#: The state of a table entry: ``entry & STATE_MASK``.
STATE_MASK = TICK_BIT - 1
#: Piece kinds: no frame data, a count, a key set (with a member count).
PLAIN, COUNTED, KEY_SET = 0, 1, 2

def rows_to_ints(words) -> list[int]:
    """Each row of an ``(n, W)`` array of 64-bit words as one int (word ``i`` holds bits
    ``64 i ..``): a key set per state or piece, a column at a time."""
    words = np.asarray(words, dtype=np.uint64)
    cols = [words[:, i].tolist() for i in range(words.shape[1])]
    if len(cols) <= 1:
        return cols[0] if cols else [0] * words.shape[0]
    return [sum(w << (64 * i) for i, w in enumerate(ws)) for ws in zip(*cols)]


class LazyBytes:
    """A stack automaton over bytes whose frames hold a count and a key set (immutable arrays).

    Attributes
    ----------
    byte_classes : uint8[256]
    table : int32[S, C]
        ``table[q, byte_classes[b]]``: state (``& STATE_MASK``) and ``TICK_BIT``; state 0 dead.
    accepting : bool[S]
        The state's piece may end here (its frame's guard permitting).
    start : int
    call_ptr, call_entry, call_return, call_first : arrays
        As in :class:`~.recursive.PushdownBytes`: the calls of state ``q`` are edges
        ``call_ptr[q] .. call_ptr[q + 1] - 1``; ``call_first[e]`` holds exactly the bytes that
        begin a live text of the callee.
    call_tick : bool[E]
        The call ticks the caller's count (when the call is made).
    call_commit : int32[E]
        The declared key the call writes into the caller's key set, or -1.
    max_stack : int
        The deepest stack any walk reaches.
    state_piece : int32[S]
        The piece of each state (the dead state's entry is 0 and means nothing).
    piece_kind : int8[P]
        ``PLAIN``, ``COUNTED`` or ``KEY_SET``.
    piece_lo, piece_hi : int64[P]
        Bounds of the count (ticks of a counted piece, members of a key-set piece); ``hi`` -1:
        unbounded.
    piece_keys : uint64[P, W]
        Key-set pieces: the keys some member can write (bit ``i`` of word ``i // 64`` for key
        ``i``).
    piece_terms : int32[P + 1]
        Key-set pieces: the terms of piece ``p`` are rows ``piece_terms[p]:piece_terms[p + 1]``
        of ``term_required`` and ``term_forbidden`` (at least one; other pieces none).
    term_required, term_forbidden : uint64[T, W]
        Per term: the keys that must be written and those that must not (key words as
        ``piece_keys``).
    piece_extras : bool[P]
        Key-set pieces: undeclared keys may be written (any number of them).
    piece_tail, piece_period : int32[P]
        Counted pieces: the lasso of every ``T(q)``; ``x`` is in ``T(q)`` iff
        ``count_bits[count_off[q] + i]`` with ``i = x`` below ``tail + period``, else
        ``tail + (x - tail) % period``.
    count_off : int32[S]
        Offset of a counted piece's state into ``count_bits`` (-1 elsewhere).
    count_bits : bool[...]
    key_close : bool[S]
        Key-set pieces: the object can end from here without another member.
    key_mask : uint64[S, W]
        Key-set pieces: the declared keys the next member can still write.
    key_extra : bool[S]
        Key-set pieces: the next member can still be an undeclared key.
    """

    _ARRAYS = (
        ("byte_classes", np.uint8), ("table", np.int32), ("accepting", np.bool_),
        ("call_ptr", np.int32), ("call_entry", np.int32), ("call_return", np.int32),
        ("call_first", np.bool_), ("call_tick", np.bool_), ("call_commit", np.int32),
        ("state_piece", np.int32), ("piece_kind", np.int8), ("piece_lo", np.int64),
        ("piece_hi", np.int64), ("piece_keys", np.uint64), ("piece_terms", np.int32),
        ("term_required", np.uint64), ("term_forbidden", np.uint64),
        ("piece_extras", np.bool_), ("piece_tail", np.int32), ("piece_period", np.int32),
        ("count_off", np.int32), ("count_bits", np.bool_), ("key_close", np.bool_),
        ("key_mask", np.uint64), ("key_extra", np.bool_),
    )
    __slots__ = tuple(name for name, _ in _ARRAYS) + ("start", "max_stack", "_py", "_fr")

    def __init__(self, *, start: int, max_stack: int, **arrays):
        missing = [n for n, _ in self._ARRAYS if n not in arrays]
        extra = sorted(set(arrays) - {n for n, _ in self._ARRAYS})
        if missing or extra:
            raise AutomatonError(f"LazyBytes arrays: missing {missing}, unknown {extra}")
        a = {n: np.ascontiguousarray(arrays[n], dtype=t) for n, t in self._ARRAYS}
        _validate(a, int(start), int(max_stack))
        self._set(a, start, max_stack)

    @classmethod
    def _draft(cls, *, start: int, max_stack: int, **arrays) -> "LazyBytes":
        """An automaton of arrays not checked: a construction's draft, read while it completes
        the arrays of the automaton it returns (which is checked)."""
        self = cls.__new__(cls)
        self._set({n: np.ascontiguousarray(arrays[n], dtype=t) for n, t in cls._ARRAYS},
                  start, max_stack)
        return self

    def _set(self, a: dict, start: int, max_stack: int) -> None:
        for name, arr in a.items():
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "start", int(start))
        object.__setattr__(self, "max_stack", int(max_stack))
        object.__setattr__(self, "_py", None)
        object.__setattr__(self, "_fr", None)

    def __setattr__(self, name, value):
        raise AttributeError("LazyBytes is immutable")

    def __reduce__(self):
        arrays = {n: getattr(self, n) for n, _ in self._ARRAYS}
        return (_rebuild, (self.start, self.max_stack, arrays))

    # ------------------------------------------------------------------ sizes
    @property
    def num_states(self) -> int:
        """States including the dead state 0."""
        return int(self.table.shape[0])

    @property
    def num_byte_classes(self) -> int:
        return int(self.table.shape[1])

    @property
    def num_calls(self) -> int:
        return int(self.call_entry.shape[0])

    @property
    def num_pieces(self) -> int:
        return int(self.piece_kind.shape[0])

    @property
    def key_words(self) -> int:
        """Words of a key set (``W``)."""
        return int(self.piece_keys.shape[1])

    @property
    def has_data(self) -> bool:
        """Whether some piece holds a count or a key set (else this is a plain stack automaton)."""
        return bool((self.piece_kind != PLAIN).any())

    def __repr__(self) -> str:
        kinds = np.bincount(self.piece_kind, minlength=3)
        return (f"<LazyBytes: {self.num_states} states (incl. dead), {self.num_byte_classes} byte "
                f"classes, {self.num_calls} call edges, pieces {kinds[0]} plain / {kinds[1]} "
                f"counted / {kinds[2]} key sets, max_stack {self.max_stack}>")

    # ------------------------------------------------------------------ the reference walk
    def _frame_lists(self):
        """The pieces' and states' frame data as lists (what :meth:`live` and :meth:`guard`
        read: no table, which a linked network's check reads per start state only)."""
        fr = self._fr
        if fr is None:
            W = self.key_words
            fr = dict(
                piece=self.state_piece.tolist(), kind=self.piece_kind.tolist(),
                lo=self.piece_lo.tolist(), hi=self.piece_hi.tolist(),
                keys=rows_to_ints(self.piece_keys), terms=self.terms(),
                ext=self.piece_extras.tolist(), tail=self.piece_tail.tolist(),
                period=self.piece_period.tolist(), off=self.count_off.tolist(),
                bits=self.count_bits.tolist(), close=self.key_close.tolist(),
                kmask=rows_to_ints(self.key_mask) if W else [], kextra=self.key_extra.tolist())
            object.__setattr__(self, "_fr", fr)
        return fr

    def terms(self) -> list:
        """Per piece, its terms as ``(required, forbidden)`` int bit sets."""
        req, forb = rows_to_ints(self.term_required), rows_to_ints(self.term_forbidden)
        at = self.piece_terms.tolist()
        return [list(zip(req[a:b], forb[a:b])) for a, b in zip(at, at[1:])]

    def _lists(self):
        py = self._py
        if py is None:
            py = dict(
                self._frame_lists(),
                tab=self.table.tolist(), bc=self.byte_classes.tolist(),
                acc=self.accepting.tolist(), ptr=self.call_ptr.tolist(),
                ent=self.call_entry.tolist(), ret=self.call_return.tolist(),
                first=[set(np.flatnonzero(r).tolist()) for r in self.call_first],
                tick=self.call_tick.tolist(), commit=self.call_commit.tolist())
            object.__setattr__(self, "_py", py)
        return py

    def live(self, q: int, count: int, keys: int) -> bool:
        """Whether a frame at state ``q`` with ``count`` and ``keys`` can still end its piece."""
        if q == 0:
            return False
        L = self._frame_lists()
        p = L["piece"][q]
        kind = L["kind"][p]
        if kind == PLAIN:
            return True
        lo, hi = L["lo"][p], L["hi"][p]
        if 0 <= hi < count:
            return False
        if kind == COUNTED:
            A, P, off, bits = L["tail"][p], L["period"][p], L["off"][q], L["bits"]
            x = max(0, lo - count)
            for _ in range(A + P):
                if hi >= 0 and x > hi - count:
                    return False
                if bits[off + (x if x < A + P else A + (x - A) % P)]:
                    return True
                x += 1
            return False
        return _keys_live(L["close"][q], L["kmask"][q], L["kextra"][q], L["keys"][p],
                          L["terms"][p], L["ext"][p], lo, hi, count, keys)

    def guard(self, q: int, count: int, keys: int) -> bool:
        """Whether a frame at state ``q`` may end its piece now (``q`` accepting is not checked)."""
        L = self._frame_lists()
        p = L["piece"][q]
        kind = L["kind"][p]
        if kind == PLAIN:
            return True
        if count < L["lo"][p]:
            return False
        return kind == COUNTED or _term_met(L["terms"][p], keys)

    def step(self, frame: tuple, stack: list, byte: int):
        """The top frame after ``byte`` from ``frame`` = ``(state, count, keys)`` and ``stack``
        (a list of frames, bottom first, changed in place); None if dead."""
        L = self._lists()
        tab, bc, acc, ptr = L["tab"], L["bc"], L["acc"], L["ptr"]
        q, c, k = frame
        if q == 0:
            return None
        cls = bc[byte]
        for _ in range(2 * (len(stack) + self.max_stack) + 4):
            t = tab[q][cls]
            if t:
                if t & TICK_BIT:
                    c += 1
                t &= STATE_MASK
                return (t, c, k) if self.live(t, c, k) else None
            for e in range(ptr[q], ptr[q + 1]):
                if byte in L["first"][e]:
                    c2, k2 = c + L["tick"][e], k
                    key = L["commit"][e]
                    if key >= 0:
                        if k >> key & 1:
                            return None
                        k2 = k | (1 << key)
                    r = L["ret"][e]
                    if not self.live(r, c2, k2):
                        return None
                    stack.append((r, c2, k2))
                    q, c, k = L["ent"][e], 0, 0
                    break
            else:
                if acc[q] and stack and self.guard(q, c, k):
                    q, c, k = stack.pop()
                    continue
                return None
        return None

    def walk(self, data: bytes, frame: tuple | None = None, stack: Sequence | None = None):
        """``(frame, stack)`` after ``data`` from ``frame`` (default: the start) and ``stack``
        (default empty; a new list is returned); ``(None, stack)`` if it died."""
        f = (self.start, 0, 0) if frame is None else tuple(frame)
        st = [] if stack is None else [tuple(s) for s in stack]
        if f[0] == 0:
            return None, st
        for b in bytes(data):
            f = self.step(f, st, b)
            if f is None:
                return None, st
        return f, st

    def can_end(self, frame: tuple, stack: Sequence) -> bool:
        """Whether the text may end here: every frame's state accepting and its guard holding."""
        L = self._lists()
        for q, c, k in [tuple(frame)] + [tuple(s) for s in stack]:
            if q == 0 or not L["acc"][q] or not self.guard(q, c, k):
                return False
        return True

    def accepts(self, data: bytes) -> bool:
        """Whether ``data`` as a whole is in the language."""
        if self.start == 0:
            return False
        f, st = self.walk(data)
        return f is not None and self.can_end(f, st)


def _term_met(terms: list, k: int) -> bool:
    """Whether the keys ``k`` meet one of ``terms`` (``(required, forbidden)`` bit sets)."""
    return any(not r & ~k and not f & k for r, f in terms)


def _keys_live(close: bool, kmask: int, kextra: bool, keys_p: int, terms: list, ext: bool,
               lo: int, hi: int, c: int, k: int) -> bool:
    """Liveness of a key-set frame (see the module docstring); ints as bit sets. Under one
    term, the object is one whose forbidden keys no member writes."""
    if 0 <= hi < c:
        return False

    def ok(c1: int, r1: int, free1: int) -> bool:
        if 0 <= hi < c1:
            return False
        need = max(r1, lo - c1, 0)
        if hi >= 0 and need > hi - c1:
            return False
        return ext or need <= free1

    for req, forb in terms:
        if forb & k:
            continue
        R = req & ~k
        r = bin(R).count("1")
        if close and r == 0 and c >= lo:
            return True
        free = bin(keys_p & ~k & ~forb).count("1")
        kq = kmask & ~k & ~forb
        if kq and ok(c + 1, r - 1 if kq & R else r, free - 1):
            return True
        if kextra and ok(c + 1, r, free):
            return True
    return False


def _rebuild(start, max_stack, arrays):
    return LazyBytes(start=start, max_stack=max_stack, **arrays)


def _validate(a: dict, start: int, max_stack: int) -> None:
    err = AutomatonError
    bc, tab, acc = a["byte_classes"], a["table"], a["accepting"]
    if bc.shape != (256,):
        raise err(f"byte_classes must have shape (256,), got {bc.shape}")
    if tab.ndim != 2 or tab.shape[0] < 1 or tab.shape[1] < 1:
        raise err(f"table must be 2-D with at least the dead state, got {tab.shape}")
    S = tab.shape[0]
    if int(bc.max()) >= tab.shape[1]:
        raise err("byte_classes refers to a class the table does not have")
    if acc.shape != (S,):
        raise err("accepting must have one entry per state")
    states = tab & STATE_MASK
    if tab.min() < 0 or states.max() >= S or (tab & ~(STATE_MASK | TICK_BIT)).any():
        raise err("table refers to nonexistent states")
    if tab[0].any() or acc[0]:
        raise err("state 0 must be dead: all transitions to 0, not accepting")
    if ((tab & TICK_BIT) != 0).any() and (states[(tab & TICK_BIT) != 0] == 0).any():
        raise err("a tick into the dead state")
    if not 0 <= start < S:
        raise err("start state out of range")
    ptr, ent, ret, first = a["call_ptr"], a["call_entry"], a["call_return"], a["call_first"]
    E = ent.shape[0]
    if ptr.shape != (S + 1,) or ptr[0] != 0 or ptr[-1] != E or (np.diff(ptr) < 0).any() or ptr[1]:
        raise err("call_ptr must rise from 0 to the number of call edges, one entry per state "
                  "and one more, with no calls from the dead state")
    for name in ("call_return", "call_tick", "call_commit"):
        if a[name].shape != (E,):
            raise err(f"{name} needs one entry per call edge")
    if first.shape != (E, 256):
        raise err("call_first must have shape (E, 256)")
    if E and (min(ent.min(), ret.min()) < 1 or max(ent.max(), ret.max()) >= S):
        raise err("call edges refer to the dead state or to nonexistent states")
    sp, kind = a["state_piece"], a["piece_kind"]
    P = kind.shape[0]
    if sp.shape != (S,) or P < 1 or sp.min() < 0 or sp.max() >= P:
        raise err("state_piece must give each state a piece in range")
    if not ((kind == PLAIN) | (kind == COUNTED) | (kind == KEY_SET)).all():
        raise err("piece_kind must be PLAIN, COUNTED or KEY_SET")
    for name in ("piece_lo", "piece_hi", "piece_extras", "piece_tail", "piece_period"):
        if a[name].shape != (P,):
            raise err(f"{name} needs one entry per piece")
    lo, hi = a["piece_lo"], a["piece_hi"]
    if (lo < 0).any() or ((hi >= 0) & (hi < lo)).any() or (hi < -1).any():
        raise err("piece bounds must satisfy 0 <= lo <= hi (hi -1: unbounded)")
    W = a["piece_keys"].shape[1] if a["piece_keys"].ndim == 2 else -1
    if a["piece_keys"].shape != (P, W) or W < 1:
        raise err("piece_keys must have shape (P, W), W >= 1")
    at = a["piece_terms"]
    T = a["term_required"].shape[0] if a["term_required"].ndim == 2 else -1
    if at.shape != (P + 1,) or at[0] != 0 or at[-1] != T or (np.diff(at) < 0).any() or \
            a["term_required"].shape != (T, W) or a["term_forbidden"].shape != (T, W):
        raise err("piece_terms must rise from 0 to the number of terms T, one entry per piece "
                  "and one more; term_required and term_forbidden must have shape (T, W)")
    n_terms = np.diff(at)
    if ((n_terms > 0) != (kind == KEY_SET)).any():
        raise err("key-set pieces need at least one term, other pieces none")
    owner = np.repeat(np.arange(P), n_terms)
    if (a["term_required"] & ~a["piece_keys"][owner]).any():
        raise err("a term requires a key no member can write")
    if (a["term_required"] & a["term_forbidden"]).any():
        raise err("a term requires a key it forbids")
    if a["key_mask"].shape != (S, W) or a["key_close"].shape != (S,) or a["key_extra"].shape != (S,):
        raise err("key_mask, key_close and key_extra need one entry per state")
    off, bits = a["count_off"], a["count_bits"]
    if off.shape != (S,) or bits.ndim != 1:
        raise err("count_off needs one entry per state")
    tail, period = a["piece_tail"], a["piece_period"]
    counted = kind == COUNTED
    if (period[counted] < 1).any() or (tail[counted] < 0).any():
        raise err("counted pieces need a period >= 1 and a tail >= 0")
    live = np.flatnonzero(np.arange(S) > 0)
    for q in live[counted[sp[live]]].tolist():
        p = sp[q]
        if not 0 <= off[q] <= bits.shape[0] - tail[p] - period[p]:
            raise err(f"count_off of state {q} is out of range")
    # effects only where a piece can hold them
    moved_from = np.repeat(np.arange(S), tab.shape[1])[(tab.reshape(-1) & TICK_BIT) != 0]
    if moved_from.size and (kind[sp[moved_from]] != COUNTED).any():
        raise err("a tick in a piece without a count")
    if E:
        caller = np.repeat(np.arange(S), np.diff(ptr))
        ckind = kind[sp[caller]]
        if (a["call_tick"] & (ckind == PLAIN)).any():
            raise err("a call ticks a piece without a count")
        com = a["call_commit"]
        if ((com >= 0) & (ckind != KEY_SET)).any() or (com < -1).any() or (com >= 64 * W).any():
            raise err("call_commit names a key outside a key-set piece's keys")
        if ((ckind == KEY_SET) & ~a["call_tick"]).any():
            raise err("every call of a key-set piece is a member and ticks its count")
    if isinstance(max_stack, bool) or max_stack < 0 or (E and max_stack < 1):
        raise err("max_stack must be a non-negative int, at least 1 with calls")
