"""Sets of Unicode scalar values as sorted, disjoint ranges.

Automata here read code points, not bytes, and label their transitions with sets of them. A
:class:`CharSet` is an immutable, canonical tuple of inclusive ``(lo, hi)`` ranges over the Unicode
scalar values ``0..0x10FFFF`` minus the surrogates ``0xD800..0xDFFF`` (which UTF-8 cannot encode
and no JSON text decodes to). Canonical means sorted, disjoint and never touching, so two equal sets
have equal tuples and hash alike.

:func:`refine` computes the coarsest partition of the alphabet that separates a collection of sets:
the alphabet classes a determinised automaton needs.

Example
-------
>>> digits = CharSet.range("0", "9")
>>> (digits | CharSet.of("-")).ranges
((45, 45), (48, 57))
>>> "5" in digits, len(~digits)
(True, 1112054)

The range algebra follows regex-syntax's ``IntervalSet`` (rust-lang/regex) and greenery's explicit
alphabet partition.
"""

from __future__ import annotations

import bisect
from typing import Iterable, Iterator

__all__ = ["CharSet", "MAX_CODEPOINT", "SURROGATES", "refine"]

MAX_CODEPOINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
_ALL = ((0, 0xD7FF), (0xE000, MAX_CODEPOINT))


def _cp(x) -> int:
    if isinstance(x, str):
        if len(x) != 1:
            raise ValueError(f"expected one character, got {x!r}")
        return ord(x)
    return int(x)


def _normalize(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Sort, merge and strip surrogates; ranges are inclusive."""
    items = sorted((lo, hi) for lo, hi in ranges if lo <= hi)
    out: list[list[int]] = []
    for lo, hi in items:
        if lo < 0 or hi > MAX_CODEPOINT:
            raise ValueError(f"code point range {lo:#x}..{hi:#x} outside 0..0x10FFFF")
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1][1] = hi
        else:
            out.append([lo, hi])
    result = []
    for lo, hi in out:
        # cut the surrogate block out
        if hi < SURROGATES[0] or lo > SURROGATES[1]:
            result.append((lo, hi))
            continue
        if lo < SURROGATES[0]:
            result.append((lo, SURROGATES[0] - 1))
        if hi > SURROGATES[1]:
            result.append((SURROGATES[1] + 1, hi))
    return tuple(result)


class CharSet:
    """An immutable set of Unicode scalar values, stored as canonical inclusive ranges."""

    __slots__ = ("ranges", "_hash", "_starts")

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()):
        object.__setattr__(self, "ranges", _normalize(ranges))
        object.__setattr__(self, "_hash", None)
        object.__setattr__(self, "_starts", None)

    @classmethod
    def _trusted(cls, ranges: tuple[tuple[int, int], ...]) -> "CharSet":
        obj = cls.__new__(cls)
        object.__setattr__(obj, "ranges", ranges)
        object.__setattr__(obj, "_hash", None)
        object.__setattr__(obj, "_starts", None)
        return obj

    @classmethod
    def union_of_disjoint(cls, sets) -> "CharSet":
        """The union of pairwise disjoint sets (cheaper than ``|``: only adjacent ranges merge)."""
        rs = sorted(r for cs in sets for r in cs.ranges)
        out = []
        for lo, hi in rs:
            if out and lo == out[-1][1] + 1:
                out[-1] = (out[-1][0], hi)
            else:
                out.append((lo, hi))
        return cls._trusted(tuple(out))

    def __setattr__(self, name, value):
        raise AttributeError("CharSet is immutable")

    def __reduce__(self):
        # pickling: the ranges are already canonical
        return (_from_ranges, (self.ranges,))

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def of(cls, *chars) -> "CharSet":
        """The set of the given characters (str of length 1 or int code points)."""
        return cls((c, c) for c in map(_cp, chars))

    @classmethod
    def from_chars(cls, text: str) -> "CharSet":
        """Every character that occurs in ``text``."""
        return cls((ord(c), ord(c)) for c in text)

    @classmethod
    def range(cls, lo, hi) -> "CharSet":
        """All code points from ``lo`` to ``hi`` inclusive."""
        return cls([(_cp(lo), _cp(hi))])

    @classmethod
    def any(cls) -> "CharSet":
        """Every Unicode scalar value."""
        return _ANY

    @classmethod
    def empty(cls) -> "CharSet":
        return _EMPTY

    # -- queries --------------------------------------------------------------------------------
    def __contains__(self, c) -> bool:
        x = _cp(c)
        starts = self._starts
        if starts is None:
            starts = [lo for lo, _ in self.ranges]
            object.__setattr__(self, "_starts", starts)
        i = bisect.bisect_right(starts, x) - 1
        return i >= 0 and x <= self.ranges[i][1]

    def __len__(self) -> int:
        return sum(hi - lo + 1 for lo, hi in self.ranges)

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self.ranges)

    def chars(self) -> Iterator[str]:
        """Every member, in order (beware of large sets)."""
        for lo, hi in self.ranges:
            for x in range(lo, hi + 1):
                yield chr(x)

    def min(self) -> int:
        if not self.ranges:
            raise ValueError("empty CharSet has no minimum")
        return self.ranges[0][0]

    def representative(self) -> str:
        """A readable member: a printable ASCII letter or digit if there is one, else the smallest."""
        for pref in ((0x61, 0x7A), (0x41, 0x5A), (0x30, 0x39), (0x21, 0x7E), (0x20, 0x20)):
            for lo, hi in self.ranges:
                a, b = max(lo, pref[0]), min(hi, pref[1])
                if a <= b:
                    return chr(a)
        for lo, hi in self.ranges:
            if lo >= 0xA1 or hi >= 0xA1:
                x = max(lo, 0xA1)
                if chr(x).isprintable():
                    return chr(x)
        return chr(self.min())

    def sample(self, rng) -> str:
        """A member chosen uniformly at random with ``rng`` (a ``random.Random``)."""
        total = len(self)
        if total == 0:
            raise ValueError("cannot sample from an empty CharSet")
        k = rng.randrange(total)
        for lo, hi in self.ranges:
            n = hi - lo + 1
            if k < n:
                return chr(lo + k)
            k -= n
        raise AssertionError("unreachable")

    def __eq__(self, other) -> bool:
        return isinstance(other, CharSet) and self.ranges == other.ranges

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(self.ranges)
            object.__setattr__(self, "_hash", h)
        return h

    def __lt__(self, other: "CharSet") -> bool:  # a total order, for deterministic sorting
        return self.ranges < other.ranges

    def __repr__(self) -> str:
        return f"CharSet({self.to_class()})"

    def to_class(self) -> str:
        """A regex character class for people, e.g. ``[0-9A-Fa-f]``."""
        if self == _ANY:
            return "[^]" if False else r"[\s\S]"
        if not self.ranges:
            return "[]"
        if len(self.ranges) == 1 and self.ranges[0][0] == self.ranges[0][1]:
            return _escape_char(self.ranges[0][0], in_class=False)
        comp = ~self
        if len(comp.ranges) < len(self.ranges):
            return "[^" + _class_body(comp) + "]"
        return "[" + _class_body(self) + "]"

    # -- algebra --------------------------------------------------------------------------------
    def __or__(self, other: "CharSet") -> "CharSet":
        return CharSet(self.ranges + other.ranges)

    def __and__(self, other: "CharSet") -> "CharSet":
        a, b = self.ranges, other.ranges
        i = j = 0
        out = []
        while i < len(a) and j < len(b):
            lo = max(a[i][0], b[j][0])
            hi = min(a[i][1], b[j][1])
            if lo <= hi:
                out.append((lo, hi))
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
        return CharSet._trusted(tuple(out))

    def __invert__(self) -> "CharSet":
        out = []
        prev = 0
        for lo, hi in self.ranges:
            if lo > prev:
                out.append((prev, lo - 1))
            prev = hi + 1
        if prev <= MAX_CODEPOINT:
            out.append((prev, MAX_CODEPOINT))
        return CharSet(out)

    def __sub__(self, other: "CharSet") -> "CharSet":
        return self & ~other

    def __xor__(self, other: "CharSet") -> "CharSet":
        return (self | other) - (self & other)

    def isdisjoint(self, other: "CharSet") -> bool:
        return not (self & other)

    def issubset(self, other: "CharSet") -> bool:
        return not (self - other)

    __le__ = issubset


def _from_ranges(ranges) -> CharSet:
    return CharSet._trusted(tuple(tuple(r) for r in ranges))


_ANY = CharSet._trusted(_ALL)
_EMPTY = CharSet._trusted(())

_SPECIAL = {"\n": r"\n", "\t": r"\t", "\r": r"\r", "\f": r"\f", "\v": r"\v"}


def _escape_char(x: int, in_class: bool) -> str:
    c = chr(x)
    if c in _SPECIAL:
        return _SPECIAL[c]
    if x < 0x20 or x == 0x7F or (x >= 0x80 and not c.isprintable()):
        return f"\\x{x:02x}" if x <= 0xFF else (f"\\u{x:04x}" if x <= 0xFFFF else f"\\U{x:08x}")
    specials = "\\]^-[" if in_class else "\\.^$*+?{}[]|()"
    if c in specials:
        return "\\" + c
    return c


def _class_body(cs: CharSet) -> str:
    parts = []
    for lo, hi in cs.ranges:
        if lo == hi:
            parts.append(_escape_char(lo, True))
        elif hi == lo + 1:
            parts.append(_escape_char(lo, True) + _escape_char(hi, True))
        else:
            parts.append(_escape_char(lo, True) + "-" + _escape_char(hi, True))
    return "".join(parts)


def refine(sets: Iterable[CharSet]) -> list[CharSet]:
    """The coarsest partition of all scalar values that every set in ``sets`` is a union of.

    Two code points land in the same class exactly when they belong to the same sets. The result
    always covers the whole alphabet (the complement of the union is one more class when non-empty)
    and is sorted by each class's smallest member, so it is deterministic.

    Parameters
    ----------
    sets : iterable of CharSet

    Returns
    -------
    list of CharSet
        Disjoint, non-empty classes whose union is every scalar value.
    """
    # Sweep over the boundaries of all ranges: between consecutive boundaries, membership is
    # constant. A set's ranges never touch, so at each boundary it toggles in or out: the
    # signature of a segment is an integer bit set updated by xor. The surrogate block is always
    # cut out (no set holds it), so segments of one signature never touch: their ranges are
    # canonical as they come.
    events: dict[int, int] = {}
    bit = 1
    for cs in dict.fromkeys(sets):
        for lo, hi in cs.ranges:
            events[lo] = events.get(lo, 0) ^ bit
            events[hi + 1] = events.get(hi + 1, 0) ^ bit
        bit <<= 1
    events.setdefault(0, 0)
    events.setdefault(SURROGATES[0], 0)
    events.setdefault(SURROGATES[1] + 1, 0)
    events[MAX_CODEPOINT + 1] = 0
    ordered = sorted(events)
    by_signature: dict[int, list[tuple[int, int]]] = {}
    active = 0
    for lo, nxt in zip(ordered, ordered[1:]):
        active ^= events[lo]
        if lo == 0xD800:        # the surrogates
            continue
        got = by_signature.get(active)
        if got is None:
            by_signature[active] = [(lo, nxt - 1)]
        else:
            got.append((lo, nxt - 1))
    # dicts keep insertion order: the classes come sorted by their first member
    trusted = CharSet._trusted
    return [trusted(tuple(rs)) for rs in by_signature.values()]
