"""JSON string values as automata: constraints on the decoded value, mapped to every JSON spelling.

A string keyword (``minLength``, ``pattern``, ``format``, ``enum`` members, property names) talks
about the *decoded* value, but a model emits JSON *text*, where one character may be written in
several ways: ``é`` literally, as ``\\u00e9`` or ``\\u00E9``; ``"`` only as ``\\"`` or ``\\u0022``;
``😀`` literally or as the surrogate pair ``\\ud83d\\ude00``. So the constraints are built as an
automaton over decoded characters and then mapped through the encoding with
:meth:`~tokenfsm.automata.dfa.DFA.substitute`, a homomorphism that replaces each character class by
the language of its spellings:

* literally, unless it is ``"``, ``\\`` or a control character U+0000..U+001F;
* a short escape ``\\" \\\\ \\/ \\b \\f \\n \\r \\t`` for the characters they stand for;
* ``\\uXXXX`` (hex digits in either case) for code points up to U+FFFF, built per class by splitting
  the value range into hex-digit-aligned blocks (the way UTF-8 encoders split ranges);
* a surrogate pair ``\\uD8xx\\uDCxx`` for code points above U+FFFF.

Lengths count decoded code points, as Python's ``len`` and ``jsonschema`` do (a non-BMP character
is one character, an escape is one character).

Example
-------
>>> d = json_string(string_value(max_length=2))
>>> d.accepts('"ab"'), d.accepts('"a\\\\u0062"'), d.accepts('"abc"')
(True, True, False)
>>> literal_json_string("\\n").accepts('"\\\\u000A"')
True

The range-to-escape splitting follows regex-syntax's ``Utf8Sequences`` (rust-lang/regex); the
homomorphic image is the textbook closure of regular languages under substitution.
"""

from __future__ import annotations

from typing import Iterable

from tokenfsm.automata.cache import byte_lru_cache
from tokenfsm.automata.charset import MAX_CODEPOINT, CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import Budget
from tokenfsm.automata.regex_ast import Alt, Chars, Node, Seq

from .numbers import fixed_width_range

__all__ = ["json_encode", "json_string", "string_value", "literal_json_string", "escape_image"]

# decoded character -> the letter of its short escape
SHORT_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r",
                 "\t": "t"}
# characters JSON lets a string hold literally
LITERAL_OK = ~(CharSet.of('"', "\\") | CharSet.range(0, 0x1F))
BMP = CharSet.range(0, 0xFFFF)
_QUOTE = DFA.literal('"')
ASTRAL = CharSet.range(0x10000, MAX_CODEPOINT)


def _lit(s: str) -> Node:
    return Seq(tuple(Chars(CharSet.of(ch)) for ch in s))


def _hex4(lo: int, hi: int) -> Node:
    """``\\u`` and four hex digits (either case) with a value in ``lo..hi``."""
    return Seq((_lit("\\u"), fixed_width_range(lo, hi, 4, 16)))


def _surrogate_pairs(lo: int, hi: int) -> list[Node]:
    """The ``\\uD8xx\\uDCxx`` spellings of the astral code points ``lo..hi``, split into blocks of
    one high surrogate with a range of low ones, plus one block of whole high surrogates."""
    hlo, llo = divmod(lo - 0x10000, 0x400)
    hhi, lhi = divmod(hi - 0x10000, 0x400)

    def pair(h1, h2, l1, l2):
        return Seq((_hex4(0xD800 + h1, 0xD800 + h2), _hex4(0xDC00 + l1, 0xDC00 + l2)))

    if hlo == hhi:
        return [pair(hlo, hlo, llo, lhi)]
    out = []
    first, last = hlo, hhi
    if llo:
        out.append(pair(hlo, hlo, llo, 0x3FF))
        first += 1
    if lhi != 0x3FF:
        out.append(pair(hhi, hhi, 0, lhi))
        last -= 1
    if first <= last:
        out.append(pair(first, last, 0, 0x3FF))
    return out


def escape_image_node(cs: CharSet, minimal: bool = False) -> Node:
    """The regex tree of the JSON spellings of any one character of ``cs``: all of them, or with
    ``minimal`` only the plainest (literal where allowed, else the short escape, else ``\\uXXXX``)."""
    parts: list[Node] = []
    literal = cs & LITERAL_OK
    if literal:
        parts.append(Chars(literal))
    for ch, letter in SHORT_ESCAPES.items():
        if ch in cs and not (minimal and ch in LITERAL_OK):
            parts.append(_lit("\\" + letter))
    coded = cs - LITERAL_OK - CharSet.from_chars("".join(SHORT_ESCAPES)) if minimal else cs
    parts.extend(_hex4(lo, hi) for lo, hi in (coded & BMP).ranges)
    for lo, hi in (coded & ASTRAL).ranges:
        parts.extend(_surrogate_pairs(lo, hi))
    return Alt(tuple(parts))


@byte_lru_cache("schema.strings.escape_image", 8 << 20)
def escape_image(cs: CharSet, minimal: bool = False) -> DFA:
    """The automaton of the JSON spellings (inside quotes) of any one character of ``cs``.

    Parameters
    ----------
    cs : CharSet
        Decoded characters.
    minimal : bool
        False: every spelling JSON allows (literal, short escape, ``\\uXXXX`` in either case,
        surrogate pairs). True: one plain spelling per character where possible -- literal
        when JSON allows it, else the short escape, else ``\\u00XX`` (either case).

    Returns
    -------
    DFA
    """
    return DFA.from_ast(escape_image_node(cs, minimal))


def json_encode(value: DFA, budget: Budget | None = None, *, escapes: str = "all") -> DFA:
    """Map an automaton over decoded characters to the JSON text of its strings, without quotes.

    Parameters
    ----------
    value : DFA
        The allowed decoded values.
    budget : Budget, optional
    escapes : {"all", "minimal"}
        ``"all"``: every spelling JSON allows. ``"minimal"``: each character written the plain way
        only (see :func:`escape_image`), a subset that is far smaller for automata with many
        classes (every ``\\uXXXX`` alternative costs states).

    Returns
    -------
    DFA
        Texts between the quotes that ``json.loads`` decodes to a member of ``value``: all of
        them, or (``"minimal"``) one plain spelling of each value.
    """
    if escapes not in ("all", "minimal"):
        raise ValueError(f"escapes must be 'all' or 'minimal', got {escapes!r}")
    minimal = escapes == "minimal"
    return value.substitute(lambda cs: escape_image(cs, minimal), budget=budget)


def json_string(value: DFA, *, excludes: Iterable[str] = (), escapes: str = "all",
                budget: Budget | None = None) -> DFA:
    """The quoted JSON string texts ``"..."`` whose decoded value is in ``value``.

    Parameters
    ----------
    value : DFA
        Automaton over decoded characters (e.g. from :func:`string_value`).
    excludes : iterable of str
        Substrings the emitted text between the quotes must not contain. They are matched on the
        text as written, before unescaping: excluding ``"\\\\n"`` forbids the escape, not a newline
        written as ``\\u000a``. An empty collection gives exactly the automaton without it.
    escapes : {"all", "minimal"}
        Which spellings to allow, see :func:`json_encode`. The schema compiler uses
        ``"minimal"`` for strings under ``format`` or ``pattern`` (the schema's contract is the
        decoded text; no model writes ``\\u0040`` in an e-mail address, and every spelling of
        every character multiplies the automaton) and ``"all"`` for unconstrained and
        length-only strings, property names and ``const``/``enum`` members. A ``"minimal"``
        language does not hold every spelling of its values, so its complement is not the
        complement of its values: the compiler marks it incomplete.
    budget : Budget, optional

    Returns
    -------
    DFA
    """
    excludes = list(excludes)
    quote = _QUOTE
    if not excludes:
        # quotes added in the same construction as the encoding: one determinisation
        if escapes not in ("all", "minimal"):
            raise ValueError(f"escapes must be 'all' or 'minimal', got {escapes!r}")
        minimal = escapes == "minimal"
        return value.substitute(lambda cs: escape_image(cs, minimal), budget=budget,
                                prefix=quote, suffix=quote)
    body = json_encode(value, budget=budget, escapes=escapes)
    body = body.intersect(DFA.excluding(excludes, budget=budget), budget=budget)
    return DFA.concat_all([quote, body, quote], budget=budget)


def string_value(min_length: int = 0, max_length: int | None = None, pattern: str | None = None,
                 format: str | None = None, budget: Budget | None = None) -> DFA:
    """Decoded string values meeting ``minLength``, ``maxLength``, ``pattern`` and ``format``.

    Parameters
    ----------
    min_length, max_length : int
        Bounds on the number of code points (``max_length=None``: no upper bound).
    pattern : str, optional
        An ECMA-262 pattern, searched (not anchored), see :func:`.ecma.ecma_pattern_dfa`.
    format : str, optional
        A format name known to :func:`.formats.format_dfa`.
    budget : Budget, optional

    Returns
    -------
    DFA
        Over decoded characters; pass it to :func:`json_string` for the JSON text.

    Raises
    ------
    ValueError
        For an unknown format (check :func:`.formats.format_dfa` first to choose a policy), or
        negative / inverted lengths.
    """
    if min_length < 0 or (max_length is not None and max_length < min_length):
        raise ValueError(f"bad length bounds {min_length}..{max_length}")
    parts: list[DFA] = []
    if min_length > 0 or max_length is not None:
        parts.append(DFA.from_charset(CharSet.any()).repeat(min_length, max_length, budget=budget))
    if pattern is not None:
        from .ecma import ecma_pattern_dfa
        parts.append(ecma_pattern_dfa(pattern, budget=budget))
    if format is not None:
        from .formats import format_dfa
        f = format_dfa(format)
        if f is None:
            raise ValueError(f"unknown string format {format!r}")
        parts.append(f)
    if not parts:
        return DFA.universal()
    return DFA.intersect_all(parts, budget=budget)


@byte_lru_cache("schema.strings.literal_json_string", 8 << 20)
def literal_json_string(s: str) -> DFA:
    """Every valid JSON spelling of the one string ``s`` (for ``const``, ``enum``, property names).

    >>> d = literal_json_string("/")
    >>> d.accepts('"/"'), d.accepts('"\\\\/"'), d.accepts('"\\\\u002F"'), d.accepts('"\\\\u002f"')
    (True, True, True, True)
    """
    return json_string(DFA.literal(s))
