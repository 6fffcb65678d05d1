"""Lazy networks: small pieces that call each other, with counts and key sets in the configuration.

Unrolling a grammar into one flat DFA multiplies sizes: ``[\\s\\S]{0,100000000}`` is a hundred
million states, a JSON string of ``maxLength: 5000`` is 5,000 copies of the string body, an object
whose keys may come in any order has a state per subset of its keys. A :class:`Network` keeps the
parts small and lets the walk hold what the flat automaton would have copied:

* a **piece** is an expression over code-point automata (:class:`Text`), calls of pieces
  (:class:`Call`; of pieces added before it, or declared with :meth:`Network.declare` and defined
  later, which is how pieces call themselves, to a ``max_depth``), concatenation, choice and star;
  a call reads one text of its callee with the caller's state kept on a stack;
* a **counted** piece also holds a count in its frame: :class:`Tick` (or a ``Text`` whose marker
  character stands for a tick, or ``Call(..., tick=True)``) adds one, and the piece ends only
  with a count in ``lo..hi``; ``hi`` may be ``None`` (unbounded) or a billion, it costs nothing;
* a **key-set** piece (an object) holds the set of declared keys written: each member is a call of
  its value piece naming its key (``Call(value, key=i)``, or ``key=None`` for an undeclared key);
  a key is never written twice, the object ends only when its required keys are in the set, and
  its members are counted (``lo..hi`` members: ``minProperties``/``maxProperties``). Where
  alternatives of an object differ only in the keys they require and forbid (``dependentRequired``,
  ``not: {required}``), the piece holds their *terms*: it ends when some term's required keys are
  written and none of its forbidden ones.

:meth:`Network.build` links the pieces into a :class:`~.lazy_bytes.LazyBytes`, the form token
masks walk (rows per configuration, on demand). The language is exactly the flat expansion's:
:meth:`Network.to_dfa` builds that (every configuration a state, under a budget), for tests and
for grammars small enough to index eagerly. Where the deterministic walk would be ambiguous (a
piece whose next copy and its caller's text share a first byte, as in ``a{2,9}a``; a count that a
text does not fix), the construction raises :class:`~.errors.NondeterministicCall` and the caller
builds the flat expansion instead.

Example
-------
>>> from tokenfsm.automata import DFA
>>> net = Network()
>>> char = Text(DFA.from_regex("[\\\\s\\\\S]"))
>>> body = net.counted(star(concat(char, Tick())), lo=0, hi=10**8)   # [\\s\\S]{0,10**8}
>>> lb = net.build(body)
>>> lb.num_states, lb.accepts(("é" * 1000).encode())
(9, True)
>>> net2 = Network()
>>> small = net2.counted(star(concat(char, Tick())), lo=1, hi=2)
>>> net2.to_dfa(small) == DFA.from_regex("[\\\\s\\\\S]{1,2}")
True

The pieces-and-calls form is the stack route of :mod:`.recursive` (xgrammar's persistent stack,
llguidance's lazy lexer); counts in the configuration follow counting automata (Turonova et al.,
OOPSLA 2020).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from .dfa import DFA
from .errors import DEFAULT_BUDGET, AutomatonError, Budget, BudgetExceeded
from .gcpause import gc_paused
from .lazy_bytes import COUNTED, KEY_SET, PLAIN, LazyBytes
from .network_link import link
from .network_piece import BytePiece, build_piece

__all__ = ["Network", "Text", "Call", "Tick", "Concat", "Choice", "Star", "SepBy", "EMPTY",
           "concat", "choice", "star", "optional", "sep_by", "expand"]


@dataclass(frozen=True, eq=False)
class Text:
    """One text of a code-point automaton. ``tick``: a character (below U+0080) that the
    automaton's texts contain as a marker, standing for a tick of the piece's count (it must be
    forced: after it is read nothing else could have been). ``calls``: ``(placeholder, Call)``
    pairs, each placeholder a character (below U+0080, given as its code point) or a pair of
    them (a 2-character str) in the automaton's texts that stands for one text of the call's
    piece (how a flat automaton calls pieces from inside it). The first character of a pair is
    no single placeholder, so a text is read one way only."""

    dfa: DFA
    tick: int | None = None
    calls: tuple = ()

    def __post_init__(self):
        if not isinstance(self.dfa, DFA):
            raise AutomatonError(f"Text needs a DFA, not {type(self.dfa).__name__}")
        if self.tick is not None and not _marker(self.tick):
            raise AutomatonError(f"a tick marker is a code point in 1..0x7F, not {self.tick!r}")
        if not isinstance(self.calls, tuple):
            raise AutomatonError("Text.calls must be a tuple of (character, Call) pairs")
        seen = {self.tick}
        for pair in self.calls:
            if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Call)
                    and (_marker(pair[0]) or _marker_pair(pair[0], self.tick))) \
                    or pair[0] in seen:
                raise AutomatonError(f"a call placeholder is a distinct code point in 1..0x7F "
                                     f"or a pair of them, with a Call, not {pair!r}")
            seen.add(pair[0])
        firsts = {ord(h[0]) for h, _ in self.calls if isinstance(h, str)}
        if firsts & seen:
            raise AutomatonError("a pair of placeholders begins with a single placeholder: "
                                 "its texts would be read two ways")


def _marker(c) -> bool:
    return not isinstance(c, bool) and isinstance(c, int) and 0 < c < 0x80


def _marker_pair(h, tick) -> bool:
    return (isinstance(h, str) and len(h) == 2 and all(_marker(ord(c)) for c in h)
            and tick not in (ord(h[0]), ord(h[1])))


def placeholder_chars(h) -> list[int]:
    """The code points of a placeholder (a code point, or a pair of them as a str)."""
    return [ord(c) for c in h] if isinstance(h, str) else [h]


@dataclass(frozen=True)
class Call:
    """One text of piece ``piece`` (added to the network before the caller). ``tick``: the call
    ticks the caller's count; ``key``: in a key-set piece, the declared key this member writes
    (None: an undeclared key)."""

    piece: int
    tick: bool = False
    key: int | None = None


@dataclass(frozen=True)
class Tick:
    """A tick of the piece's count (reads nothing; must be forced, see :class:`Text`)."""


@dataclass(frozen=True)
class Concat:
    items: tuple


@dataclass(frozen=True)
class Choice:
    items: tuple


@dataclass(frozen=True)
class Star:
    item: object


@dataclass(frozen=True)
class SepBy:
    """One or more ``item`` separated by ``sep``: ``item (sep item)*``, with one copy of ``item``
    (the members of an object, the items of an array)."""

    item: object
    sep: object


EMPTY = Concat(())


def concat(*items) -> Concat:
    return Concat(tuple(items))


def choice(*items) -> Choice:
    return Choice(tuple(items))


def star(item) -> Star:
    return Star(item)


def optional(item) -> Choice:
    return Choice((item, EMPTY))


def sep_by(item, sep) -> SepBy:
    return SepBy(item, sep)


@dataclass
class _Spec:
    piece: BytePiece
    kind: int
    lo: int = 0
    hi: int | None = None
    n_keys: int = 0
    terms: tuple = (((), ()),)     # key sets: (required, forbidden) pairs, any one suffices
    body: object = field(default=None, repr=False)


def _count(x, name: str, allow_none: bool = False):
    if x is None and allow_none:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
        raise AutomatonError(f"{name} must be a non-negative int, not {x!r}")
    if x >= 1 << 62:
        raise AutomatonError(f"{name} = {x} is too large (at most 2**62 - 1)")
    return int(x)


class Network:
    """Pieces of a lazy network (see the module docstring).

    Parameters
    ----------
    budget : Budget, optional
        Bounds each piece's subset construction and the linked table (``DEFAULT_BUDGET``).
    """

    def __init__(self, budget: Budget | None = None):
        self.budget = budget or DEFAULT_BUDGET
        self._specs: list[_Spec] = []
        self._built: dict[int, LazyBytes] = {}
        self._depth_of: dict[int, int] = {}     # piece -> the least piece whose frames it shares

    def __len__(self) -> int:
        return len(self._specs)

    def body(self, index: int):
        """The expression piece ``index`` was made from (None while only declared)."""
        spec = self._specs[index]
        return None if spec is None else spec.body

    def __repr__(self) -> str:
        kinds = [s.kind for s in self._specs if s is not None]
        return (f"<Network: {kinds.count(PLAIN)} plain, {kinds.count(COUNTED)} counted, "
                f"{kinds.count(KEY_SET)} key-set pieces>")

    def _check(self, body, kind: int, n_keys: int, n: int) -> None:
        todo = [body]
        while todo:
            e = todo.pop()
            if isinstance(e, Call):
                if isinstance(e.piece, bool) or not isinstance(e.piece, (int, np.integer)) \
                        or not 0 <= e.piece < n:
                    raise AutomatonError(f"Call({e.piece!r}): a piece calls pieces added or "
                                         f"declared before it (0..{n - 1})")
                if e.tick and kind != COUNTED:
                    raise AutomatonError("Call(tick=True) in a piece without a count")
                if e.key is not None:
                    if kind != KEY_SET:
                        raise AutomatonError("Call(key=...) outside a key-set piece")
                    if isinstance(e.key, bool) or not isinstance(e.key, (int, np.integer)) \
                            or not 0 <= e.key < n_keys:
                        raise AutomatonError(f"Call(key={e.key!r}) outside 0..{n_keys - 1}")
            elif isinstance(e, Tick) or (isinstance(e, Text) and e.tick is not None):
                if kind != COUNTED:
                    raise AutomatonError("a tick in a piece without a count")
                if isinstance(e, Text):
                    todo.extend(c for _, c in e.calls)
            elif isinstance(e, Text):
                todo.extend(c for _, c in e.calls)
            elif isinstance(e, (Concat, Choice)):
                if not isinstance(e.items, tuple):
                    raise AutomatonError(f"{type(e).__name__}.items must be a tuple")
                todo.extend(e.items)
            elif isinstance(e, Star):
                todo.append(e.item)
            elif isinstance(e, SepBy):
                todo.extend((e.item, e.sep))
            elif not isinstance(e, Text):
                raise AutomatonError(f"{type(e).__name__} is not a network expression")

    def _add(self, body, kind: int, into: int | None, **kw) -> int:
        callable_ = len(self._specs)        # pieces a body may call: those added or declared
        if into is None:
            self._specs.append(None)
            index = len(self._specs) - 1
        else:
            index = into
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
                    or not 0 <= index < len(self._specs) or self._specs[index] is not None:
                raise AutomatonError(f"into={into!r} is not a declared, undefined piece")
        try:
            self._check(body, kind, kw.get("n_keys", 0), callable_)
            with gc_paused():
                bp = build_piece(body, index, self.budget)
        except Exception:
            if into is None:
                self._specs.pop()
            raise
        self._specs[index] = _Spec(bp, kind, body=body, **kw)
        self._built.clear()
        return index

    def declare(self) -> int:
        """Reserve a piece number, to be called before it is defined (``into=`` of the adding
        methods): how pieces call each other recursively (see :meth:`build`'s ``max_depth``)."""
        self._specs.append(None)
        return len(self._specs) - 1

    def same_depth(self, *pieces: int) -> None:
        """Count the frames of ``pieces`` together toward :meth:`build`'s ``max_depth``: a call of
        one of them is allowed only while fewer than ``max_depth`` frames of all of them are on
        the stack, the new one included. The arrays and objects of every JSON value are two
        pieces that call each other, and a value nests ``max_depth`` containers deep in all, not
        that many of each. Pieces may be declared and not yet defined; groups that share a piece
        merge.

        >>> from tokenfsm.automata import DFA
        >>> net = Network()
        >>> a, b = net.declare(), net.declare()
        >>> inside = optional(choice(Call(a), Call(b)))
        >>> _ = net.piece(concat(Text(DFA.literal("(")), inside, Text(DFA.literal(")"))), into=a)
        >>> _ = net.piece(concat(Text(DFA.literal("[")), inside, Text(DFA.literal("]"))), into=b)
        >>> top = net.piece(choice(Call(a), Call(b)))
        >>> [net.to_dfa(top, max_depth=2).accepts(t) for t in ("([])", "(([]))")]
        [True, True]
        >>> net.same_depth(a, b)
        >>> [net.to_dfa(top, max_depth=2).accepts(t) for t in ("([])", "(([]))", "(())")]
        [True, False, True]
        """
        for p in pieces:
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) \
                    or not 0 <= p < len(self._specs):
                raise AutomatonError(f"same_depth({p!r}): not a piece added or declared")
        groups = {self._depth_of.setdefault(int(p), int(p)) for p in pieces}
        rep = min(groups)
        for p, g in self._depth_of.items():
            if g in groups:
                self._depth_of[p] = rep
        self._built.clear()

    def piece(self, body, into: int | None = None) -> int:
        """Add a plain piece (or define the declared piece ``into``); returns its number."""
        return self._add(body, PLAIN, into)

    def counted(self, body, lo: int = 0, hi: int | None = None, into: int | None = None) -> int:
        """Add a counted piece: its text ends only with ``lo <= ticks <= hi``."""
        lo, hi = _count(lo, "lo"), _count(hi, "hi", allow_none=True)
        if hi is not None and hi < lo:
            raise AutomatonError(f"bounds {lo}..{hi} are inverted")
        return self._add(body, COUNTED, into, lo=lo, hi=hi)

    def key_set(self, body, n_keys: int, required: Iterable[int] = (), lo: int = 0,
                hi: int | None = None, into: int | None = None,
                terms: Iterable[tuple] | None = None) -> int:
        """Add a key-set piece with declared keys ``0 .. n_keys - 1`` (see the module docstring):
        ``required`` keys must be written, between ``lo`` and ``hi`` members in all.

        ``terms``, instead of ``required``: ``(required, forbidden)`` pairs of keys; the object
        may end when, for one of them, every required key is written and no forbidden one
        (the union of objects that differ only in those). A term that requires a key it
        forbids is dropped; at least one must be left."""
        n_keys = _count(n_keys, "n_keys")
        lo, hi = _count(lo, "lo"), _count(hi, "hi", allow_none=True)
        if hi is not None and hi < lo:
            raise AutomatonError(f"bounds {lo}..{hi} are inverted")
        if terms is None:
            terms = [(required, ())]
        elif tuple(required):
            raise AutomatonError("give required keys or terms, not both")

        def keys(xs, what: str) -> tuple:
            xs = tuple(sorted(set(xs)))
            for r in xs:
                if isinstance(r, bool) or not isinstance(r, (int, np.integer)) \
                        or not 0 <= r < n_keys:
                    raise AutomatonError(f"{what} key {r!r} outside 0..{n_keys - 1}")
            return tuple(map(int, xs))

        kept = []
        for req, forb in terms:
            term = (keys(req, "required"), keys(forb, "forbidden"))
            if not set(term[0]) & set(term[1]) and term not in kept:
                kept.append(term)
        if not kept:
            raise AutomatonError("every term of the key set requires a key it forbids")
        return self._add(body, KEY_SET, into, lo=lo, hi=hi, n_keys=n_keys, terms=tuple(kept))

    def build(self, top: int, max_depth: int | None = None) -> LazyBytes:
        """The linked byte form of piece ``top`` and what it calls (built once per arguments).

        Parameters
        ----------
        top : int
        max_depth : int, optional
            Needed when pieces call themselves: a call of piece ``k`` is allowed only while fewer
            than ``max_depth`` frames of ``k`` (and of the pieces :meth:`same_depth` groups with
            it) are on the stack, the new one included (the language is then the unrolled,
            depth-cut one, as :class:`~.recursive.RecursiveDFA`'s).

        Raises
        ------
        NondeterministicCall
            The walk would be ambiguous somewhere.
        AutomatonError
            A called piece that accepts the empty text, a declared piece left undefined, a
            recursion without ``max_depth``.
        BudgetExceeded
        """
        top = int(top)
        if not 0 <= top < len(self._specs) or self._specs[top] is None:
            raise AutomatonError(f"piece {top} is not a defined piece")
        if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(
                max_depth, (int, np.integer)) or max_depth < 0):
            raise AutomatonError(f"max_depth must be a non-negative int, got {max_depth!r}")
        got = self._built.get((top, max_depth))
        if got is None:
            with gc_paused():
                got = self._built[(top, max_depth)] = link(self._specs, top, self.budget,
                                                           max_depth, self._depth_of)
        return got

    def to_dfa(self, top: int, budget: Budget | None = None, max_depth: int | None = None) -> DFA:
        """The minimal code-point DFA of the same language (every configuration a state).

        Raises
        ------
        BudgetExceeded
            More configurations than ``budget`` allows (a large ``hi``).
        """
        return expand(self.build(top, max_depth), budget)


def _capped(lb: LazyBytes, frame: tuple) -> tuple:
    """``frame`` with a count past ``lo`` of an unbounded piece set to ``lo``: from there on the
    count changes nothing (every guard holds, liveness no longer depends on it)."""
    q, c, k = frame
    L = lb._lists()
    p = L["piece"][q]
    if L["hi"][p] < 0 and c > L["lo"][p]:
        return (q, L["lo"][p], k)
    return frame


def expand(lb: LazyBytes, budget: Budget | None = None) -> DFA:
    """The flat DFA of a :class:`LazyBytes`: its reachable configurations as states.

    Parameters
    ----------
    lb : LazyBytes
    budget : Budget, optional
        Bounds the configurations (``DEFAULT_BUDGET``).

    Returns
    -------
    DFA
        Minimal, over code points (the byte automaton read back through UTF-8).
    """
    from .bytedfa import ByteDFA

    if lb.start == 0:
        return DFA.empty()
    budget = budget or DEFAULT_BUDGET
    # every count of a counted piece up to its largest bound is a configuration of its own:
    # charged before any is made (a string of minLength 10**9 stops here, not at the budget)
    kinds, los, his = lb.piece_kind.tolist(), lb.piece_lo.tolist(), lb.piece_hi.tolist()
    counts = max([max(lo, hi) + 1 for k, lo, hi in zip(kinds, los, his) if k == COUNTED],
                 default=0)
    if counts > budget.max_states:
        raise BudgetExceeded(budget.max_states, counts, "network expansion")
    meter = budget.meter("network expansion")
    C = lb.num_byte_classes
    rep = [-1] * C
    for b in range(256):
        c = int(lb.byte_classes[b])
        if rep[c] < 0:
            rep[c] = b
    start = ((lb.start, 0, 0), ())
    ids = {start: 1}
    order = [start]
    rows = [[0] * C]
    acc = [False]
    i = 0
    while i < len(order):
        frame, stack = order[i]
        i += 1
        meter.add()
        row = [0] * C
        for c in range(C):
            st = list(stack)
            f = lb.step(frame, st, rep[c])
            if f is None:
                continue
            cfg = (_capped(lb, f), tuple(_capped(lb, s) for s in st))
            k = ids.get(cfg)
            if k is None:
                k = ids[cfg] = len(order) + 1
                order.append(cfg)
            row[c] = k
        rows.append(row)
        acc.append(lb.can_end(frame, stack))
    bd = ByteDFA(lb.byte_classes, np.array(rows, dtype=np.int32), np.array(acc, dtype=bool), 1)
    return bd.to_codepoints().minimize()

