"""The small regular-expression tree that front ends produce and the NFA builder consumes.

Every regular language the project handles passes through these five node types: a set of code
points, a sequence, an alternation, a bounded or unbounded repetition, and a zero-width assertion
about the neighbouring characters (``^``, ``$``, ``\\b`` ...). Front ends (the Python ``re``
dialect parser in :mod:`.regex_parse`, the ECMA-262 reading of JSON Schema patterns) lower their
syntax to this tree; :mod:`.nfa` turns it into an automaton.

Example
-------
>>> from tokenfsm.automata.charset import CharSet
>>> Seq((Chars(CharSet.range("a", "z")), Repeat(Chars(CharSet.range("0", "9")), 1, None)))
Seq(items=(Chars(cs=CharSet([a-z])), Repeat(item=Chars(cs=CharSet([0-9])), min=1, max=None)))

The shape follows regex-syntax's ``Hir`` (rust-lang/regex), reduced to what is regular.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from .charset import CharSet

__all__ = ["Node", "Chars", "Seq", "Alt", "Repeat", "Assert", "EMPTY", "ASSERT_KINDS"]


@dataclass(frozen=True)
class Chars:
    """Exactly one code point from ``cs`` (an empty set matches nothing)."""

    cs: CharSet


@dataclass(frozen=True)
class Seq:
    """The items one after another; ``Seq(())`` matches the empty string."""

    items: tuple


@dataclass(frozen=True)
class Alt:
    """Any one of the items; ``Alt(())`` matches nothing."""

    items: tuple


@dataclass(frozen=True)
class Repeat:
    """``item`` repeated ``min`` to ``max`` times (``max=None``: unbounded). Greediness is irrelevant
    to which strings match, so lazy and greedy quantifiers lower alike."""

    item: "Node"
    min: int
    max: Optional[int]


# Zero-width assertions, as Python's ``re`` defines them:
#   "start"            ^ without MULTILINE, \A: at the beginning of the string
#   "start_line"       ^ with MULTILINE: at the beginning or just after "\n"
#   "end"              $ without MULTILINE: at the end, or just before a "\n" that ends the string
#   "end_string"       \Z: at the very end
#   "end_line"         $ with MULTILINE: at the end or just before any "\n"
#   "word_boundary"    \b: exactly one of the neighbouring characters is a word character
#   "not_word_boundary"\B: both or neither neighbour is a word character (never on an empty string
#                      where Python's ``re`` says so; the builder checks the running interpreter)
ASSERT_KINDS = frozenset({"start", "start_line", "end", "end_string", "end_line",
                          "word_boundary", "not_word_boundary"})


@dataclass(frozen=True)
class Assert:
    """A zero-width assertion. ``word`` is the set of word characters for ``\\b``/``\\B`` (Unicode
    ``\\w`` or ASCII ``[0-9A-Za-z_]`` by the pattern's flags); None for the other kinds."""

    kind: str
    word: Optional[CharSet] = None

    def __post_init__(self):
        if self.kind not in ASSERT_KINDS:
            raise ValueError(f"unknown assertion kind {self.kind!r}")
        if self.kind in ("word_boundary", "not_word_boundary") and self.word is None:
            raise ValueError(f"{self.kind} needs the set of word characters")


Node = Union[Chars, Seq, Alt, Repeat, Assert]
EMPTY = Seq(())
