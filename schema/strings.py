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

from operator import itemgetter
from typing import Iterable

from tokenfsm.automata.cache import byte_lru_cache
from tokenfsm.automata.charset import MAX_CODEPOINT, CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import DEFAULT_BUDGET, Budget
from tokenfsm.automata.regex_ast import Alt, Chars, Node, Seq

from .numbers import fixed_width_range

__all__ = ["json_encode", "json_string", "string_value", "literal_json_string", "escape_image",
           "json_string_outside"]

# decoded character -> the letter of its short escape
SHORT_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r",
                 "\t": "t"}
# characters JSON lets a string hold literally
LITERAL_OK = ~(CharSet.of('"', "\\") | CharSet.range(0, 0x1F))
BMP = CharSet.range(0, 0xFFFF)
_QUOTE = DFA.literal('"')
ASTRAL = CharSet.range(0x10000, MAX_CODEPOINT)
PRINTABLE_ASCII = CharSet.range(0x20, 0x7E)

#: The spelling policies of string texts, by name: ``(short, coded)``, whether a character that
#: JSON lets a string hold literally may also take its short escape (``\/`` for ``/``), and the
#: characters that may be written ``\uXXXX`` (a surrogate pair past the BMP). Every character may
#: be written literally where JSON allows it, and takes its short escape where it has one and
#: may not be literal.
#:
#: * ``"all"``: every spelling JSON allows.
#: * ``"minimal"``: one plain spelling per character (literal, else the short escape, else
#:   ``\u00XX``).
#: * ``"plain-ascii"``: a printable ASCII character as itself or its short escape (``\"``,
#:   ``\\``, ``\/``), never ``\u0061``; every other character every way (``\u00e9`` as
#:   ``json.dumps`` writes it by default). What serializers write, and the spelling of
#:   undeclared keys (:func:`json_string_outside`).
ESCAPES = {
    "all": (True, CharSet.any()),
    "minimal": (False, ~(LITERAL_OK | CharSet.from_chars("".join(SHORT_ESCAPES)))),
    "plain-ascii": (True, ~PRINTABLE_ASCII),
}


def escape_policy(escapes: str) -> tuple:
    """The entry of :data:`ESCAPES` named ``escapes`` (a ``ValueError`` for any other)."""
    got = ESCAPES.get(escapes) if isinstance(escapes, str) else None
    if got is None:
        raise ValueError(f"escapes must be one of {', '.join(map(repr, ESCAPES))}, "
                         f"got {escapes!r}")
    return got


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


def escape_image_node(cs: CharSet, escapes: str = "all") -> Node:
    """The regex tree of the JSON spellings of any one character of ``cs`` that the policy
    ``escapes`` allows (see :data:`ESCAPES`)."""
    short, coded = escape_policy(escapes)
    parts: list[Node] = []
    literal = cs & LITERAL_OK
    if literal:
        parts.append(Chars(literal))
    for ch, letter in SHORT_ESCAPES.items():
        if ch in cs and (short or ch not in LITERAL_OK):
            parts.append(_lit("\\" + letter))
    coded = cs & coded
    parts.extend(_hex4(lo, hi) for lo, hi in (coded & BMP).ranges)
    for lo, hi in (coded & ASTRAL).ranges:
        parts.extend(_surrogate_pairs(lo, hi))
    return Alt(tuple(parts))


@byte_lru_cache("schema.strings.escape_image", 8 << 20)
def escape_image(cs: CharSet, escapes: str = "all") -> DFA:
    """The automaton of the JSON spellings (inside quotes) of any one character of ``cs``.

    Parameters
    ----------
    cs : CharSet
        Decoded characters.
    escapes : str
        A spelling policy of :data:`ESCAPES`: ``"all"``, every spelling JSON allows (literal,
        short escape, ``\\uXXXX`` in either case, surrogate pairs); ``"minimal"``, one plain
        spelling per character (literal when JSON allows it, else the short escape, else
        ``\\u00XX`` in either case); ``"plain-ascii"``, printable ASCII never ``\\uXXXX``.

    Returns
    -------
    DFA
    """
    return DFA.from_ast(escape_image_node(cs, escapes))


def json_encode(value: DFA, budget: Budget | None = None, *, escapes: str = "all") -> DFA:
    """Map an automaton over decoded characters to the JSON text of its strings, without quotes.

    Parameters
    ----------
    value : DFA
        The allowed decoded values.
    budget : Budget, optional
    escapes : {"all", "minimal", "plain-ascii"}
        ``"all"``: every spelling JSON allows. ``"minimal"``: each character written the plain way
        only (see :func:`escape_image`), a subset that is far smaller for automata with many
        classes (every ``\\uXXXX`` alternative costs states). ``"plain-ascii"``: printable ASCII
        never as ``\\uXXXX`` (see :data:`ESCAPES`).

    Returns
    -------
    DFA
        Texts between the quotes that ``json.loads`` decodes to a member of ``value``: all of
        them, or those the policy allows (with ``"minimal"`` one plain spelling of each value).
    """
    escape_policy(escapes)
    return value.substitute(lambda cs: escape_image(cs, escapes), budget=budget)


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
    escapes : {"all", "minimal", "plain-ascii"}
        Which spellings to allow, see :func:`json_encode`. The schema compiler uses
        ``"minimal"`` for strings under ``format`` or ``pattern`` (the schema's contract is the
        decoded text; no model writes ``\\u0040`` in an e-mail address, and every spelling of
        every character multiplies the automaton), ``"plain-ascii"`` for undeclared keys
        (:func:`json_string_outside`) and ``"all"`` for unconstrained and length-only strings,
        property names and ``const``/``enum`` members. A language that does not hold every
        spelling of its values has a complement that is not the complement of its values: the
        compiler marks it incomplete.
    budget : Budget, optional

    Returns
    -------
    DFA
    """
    excludes = list(excludes)
    if not excludes:
        escape_policy(escapes)
        for make in _STRING_FAST_WAYS:
            got = make(value, budget, escapes)
            if got is not None:
                return got
        return _string_by_substitution(value, budget, escapes)
    body = json_encode(value, budget=budget, escapes=escapes)
    body = body.intersect(DFA.excluding(excludes, budget=budget), budget=budget)
    return DFA.concat_all([_QUOTE, body, _QUOTE], budget=budget)


def _string_by_substitution(value: DFA, budget: Budget | None, escapes: str = "all") -> DFA:
    """:func:`json_string` without exclusions as the module says: every character replaced by
    its spellings, the quotes added in the same construction (one determinisation; the
    reference way of :data:`STRING_WAYS`)."""
    return value.substitute(lambda cs: escape_image(cs, escapes), budget=budget,
                            prefix=_QUOTE, suffix=_QUOTE)


def _string_of_literal(value: DFA, budget: Budget | None, escapes: str = "all") -> DFA | None:
    """:func:`json_string` without exclusions of one string (``value`` made by
    :meth:`~tokenfsm.automata.dfa.DFA.literal`: a ``const``, an ``enum`` of one member) under
    ``"all"``, built at once: a state before each character, one after the backslash of its
    escapes and one after each hex digit read (a surrogate pair's second half included), then
    the closing quote. The substitution embeds every character's spellings and determinises
    them: 0.6-1.2 ms for a Kubernetes ``kind`` or API version, 0.25-0.35 ms here. None for any
    other value or policy.

    Minimal as built: the states before two characters differ by what is left to decode; a
    state inside an escape reads a letter or a hex digit where one before a character reads
    a backslash (every character has a ``\\uXXXX`` spelling), and two of them differ by what
    they read or what is left to decode. Numbered canonically: breadth first from the start,
    each state's moves in the order of their classes, the classes in the order of their
    first characters."""
    text = value._text if escapes == "all" else None
    if text is None:
        return None
    spelled = [_escaped(ord(ch)) for ch in text]
    n = len(text)
    meter = (budget or DEFAULT_BUDGET).meter("json_string")
    meter.width = len(set(text)) + 24      # (at most: the quote, backslash, letters, hex digits)
    meter.add(n + 4 + sum(1 + sum(len(r) - 1 for r in rs) for rs in spelled))
    # the states (1 the start, then before each character, the closing quote's, the
    # escapes'), each a list of (character, target); 0 is dead
    end = n + 3                             # before character i: i + 2; the end: n + 3
    moves: list[list] = [[], [('"', 2)]]
    moves += [[] for _ in range(n)]
    moves += [[('"', end)], []]
    for i, ch in enumerate(text):
        row = moves[i + 2]
        if ch in LITERAL_OK:
            row.append((ch, i + 3))
        escape = len(moves)
        row.append(("\\", escape))
        moves.append([])
        for rest in spelled[i]:
            at, last = escape, len(rest) - 1
            for j, x in enumerate(rest):
                to = i + 3 if j == last else len(moves)
                if x in _HEX_UPPER:
                    moves[at] += ((x, to), (x.lower(), to))
                else:
                    moves[at].append((x, to))
                if to != i + 3:
                    moves.append([])
                at = to
    # the classes: the characters that move alike everywhere (in the order of their first
    # characters), and the rest of the alphabet
    sig: dict[str, list] = {}
    for q, row in enumerate(moves):
        for x, t in row:
            got = sig.get(x)
            if got is None:
                sig[x] = [q, t]
            else:
                got += (q, t)
    alike: dict[tuple, list[str]] = {}
    for x, pairs in sig.items():
        alike.setdefault(tuple(pairs), []).append(x)
    parts = [(_ranges(sorted(map(ord, g))), g) for g in alike.values()]
    rest = (~CharSet._trusted(_ranges(sorted(map(ord, sig))))).ranges
    if rest:
        parts.append((rest, ()))
    parts.sort()
    classes = [CharSet._trusted(r) for r, _ in parts]
    col = {x: j for j, (_, g) in enumerate(parts) for x in g}
    # numbered breadth first, each state's moves by class
    number = [0] * len(moves)
    number[1] = 1
    queue = [1]
    rows = []
    for q in queue:
        row = {col[x]: t for x, t in moves[q]}
        if len(row) > 1:
            row = dict(sorted(row.items()))
        for t in row.values():
            if not number[t]:
                number[t] = len(queue) + 1
                queue.append(t)
        rows.append(row)
    width = len(classes)
    delta = [[0] * width]
    for row in rows:
        r = [0] * width
        for j, t in row.items():
            r[j] = number[t]
        delta.append(r)
    return DFA(classes, delta, {number[end]}, 1, _minimal=True)


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


# ------------------------------------------------------------------ strings outside a set of names

def _outside_by_product(names: DFA, budget: Budget | None, escapes: str = "all") -> DFA:
    """:func:`json_string_outside` as the definition says: every string's texts less the
    names' (the reference way)."""
    return _AnyText.get(escapes).text.difference(
        json_string(names, escapes=escapes, budget=budget), budget)


#: A class of characters leading on in the names with more characters than this is not
#: followed one character at a time (:func:`_outside_tracked` gives up, the product is made).
TRACKED_CLASS_MAX = 64

_HEX_UPPER = "ABCDEF"


class _AnyText:
    """Every string's texts (``S``, the spellings of a policy of :data:`ESCAPES`), made once
    per policy, with what :func:`_outside_tracked` reads of them: the classes with the
    characters that an escape reads its own way split off, and the state of the body and after
    a backslash."""

    _made: dict = {}

    def __init__(self, escapes: str):
        text = self.text = json_string(DFA.universal(), escapes=escapes)
        self.body = text.delta[text.start][text.class_of('"')]
        self.after_backslash = text.delta[self.body][text.class_of("\\")]
        fixed = set(map(ord, '"\\/bfnrtu0123456789abcdefABCDEF'))
        self.fixed = frozenset(fixed)
        self.parts = self.split(fixed, [(cs, k) for k, cs in enumerate(text.classes)])

    @classmethod
    def get(cls, escapes: str = "all") -> "_AnyText":
        got = cls._made.get(escapes)
        if got is None:
            got = cls._made[escapes] = cls(escapes)
        return got

    def split(self, chars, parts) -> list:
        """``parts`` (class, class of S) with ``chars`` split off one by one, sorted by their
        first character."""
        mine: dict[int, list[int]] = {}
        for c in chars:
            mine.setdefault(self.text.class_of(chr(c)), []).append(c)
        out = []
        for cs, k in parts:
            if len(cs) > 1 and k in mine:
                out += [(CharSet.of(c), k) for c in mine[k]]
                cs = cs - CharSet.from_chars("".join(map(chr, mine[k])))
                if not cs:
                    continue
            out.append((cs, k))
        out.sort(key=lambda p: p[0].ranges[0][0])
        return out


@byte_lru_cache("schema.strings.escaped", 1 << 20)
def _escaped(c: int, escapes: str = "all") -> tuple[str, ...]:
    """The escaped spellings of code point ``c`` after the backslash that the policy
    ``escapes`` allows, hex digits in upper case (each read in either case)."""
    short, coded = escape_policy(escapes)
    out = []
    letter = SHORT_ESCAPES.get(chr(c))
    if letter is not None and (short or chr(c) not in LITERAL_OK):
        out.append(letter)
    if chr(c) in coded:
        if c <= 0xFFFF:
            out.append("u%04X" % c)
        else:
            v = c - 0x10000
            out.append("u%04X\\u%04X" % (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)))
    return tuple(out)


def _ranges(cps: list[int]) -> tuple:
    """The ranges of the sorted code points ``cps`` (none repeated)."""
    out = []
    for c in cps:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return tuple(map(tuple, out))


#: The ways to build :func:`json_string` without exclusions, all with the same (canonical)
#: result: name -> function of ``(value, budget, escapes)`` giving the DFA, or None where it
#: does not apply. The tests run every entry on the same values, under every policy of
#: :data:`ESCAPES`; :func:`json_string` takes the first that applies.
STRING_WAYS = {
    "literal": _string_of_literal,
    "substitution": _string_by_substitution,
}
#: The way that defines the result.
STRING_REFERENCE = "substitution"
_STRING_FAST_WAYS = tuple(w for k, w in STRING_WAYS.items() if k != STRING_REFERENCE)


#: States :func:`_outside_tracked` makes between two charges of its budget.
_CHARGE_EVERY = 256


def _outside_tracked(names: DFA, budget: Budget | None, escapes: str = "all") -> DFA | None:
    """:func:`json_string_outside` built at once, its states numbered as the canonical form
    numbers them: the texts of every string (``S``, minimal, in the spellings of ``escapes``)
    read while the decoded prefix
    is followed through ``names`` (``N``, minimal, finite). A state is a state of ``S`` once
    the prefix has left ``N``'s live states; before, a live state ``n`` of ``N`` in the body
    of the string, or, inside an escape, ``S``'s state with what the escape may still become
    (the rest of each spelling of a character leading on from ``n``, with the state it leads
    to). Minimal as built: two body states differ by their names (``N`` is minimal), two
    escape states by what they may still read, and automata of distinct states of ``S`` by
    infinitely many texts, which no finite set of names removes. None where a class of
    ``names`` leading on holds more than :data:`TRACKED_CLASS_MAX` characters, or ``names`` is
    infinite."""
    n_dfa = names.minimize()
    any_text = _AnyText.get(escapes)
    text = any_text.text
    if n_dfa.start == 0:
        return text
    if not n_dfa.is_finite():
        return None
    # the characters leading on from each live state of N, with where they lead
    onward: dict[int, list[tuple[int, int]]] = {}
    for n in range(1, len(n_dfa.delta)):
        out = onward[n] = []
        for cs, t in zip(n_dfa.classes, n_dfa.delta[n]):
            if t == 0:
                continue
            if len(cs) > TRACKED_CLASS_MAX:
                return None
            for lo, hi in cs.ranges:
                out += [(c, t) for c in range(lo, hi + 1)]
    # the alphabet: S's classes, with every character that a state below reads its own way
    # split off (escape letters and hex digits, the names' literal characters)
    literal = {c for out in onward.values() for c, _ in out
               if c not in any_text.fixed and chr(c) in LITERAL_OK}
    parts = any_text.split(literal, any_text.parts) if literal else any_text.parts
    classes = [cs for cs, _ in parts]
    column = {cs.ranges[0][0]: j for j, (cs, _) in enumerate(parts) if len(cs) == 1}
    s_rows = [[row[k] for _, k in parts] for row in text.delta]
    body, after_backslash = any_text.body, any_text.after_backslash
    backslash, quote = column[ord("\\")], column[ord('"')]

    # what an escape may still become, as a trie of the rest of the spellings whose equal
    # subtries are one (their states are one): a leaf is a body state
    tries: dict = {}

    def trie(entries) -> object:
        if not entries[0][0]:
            return ("b", entries[0][1])     # (spellings are prefix-free: all end here)
        ahead: dict[str, list] = {}
        for r, t in entries:
            ahead.setdefault(r[0], []).append((r[1:], t))
        node = frozenset((x, trie(sub)) for x, sub in ahead.items())
        return tries.setdefault(node, node)

    # a body state's moves, by N's state: its literal characters, the escape, the closing quote
    body_moves = {}
    for n, out in onward.items():
        got = {column[c]: ("b", t) for c, t in out if chr(c) in LITERAL_OK}
        spelled = [(sp, t) for c, t in out for sp in _escaped(c, escapes)]
        if spelled:
            got[backslash] = ("e", after_backslash, trie(spelled))
        if n in n_dfa.accepting:
            got[quote] = 0
        body_moves[n] = sorted(got.items())

    def escape_moves(phase: int, node: frozenset) -> list:
        """The moves of the escape state ``(phase, node)``, by column."""
        got = {}
        for x, sub in node:
            for ch in (x, x.lower()) if x in _HEX_UPPER else (x,):
                j = column[ord(ch)]
                p = s_rows[phase][j]
                leaf = isinstance(sub, tuple)
                if p == 0 or (leaf and p != body):
                    raise AssertionError("a spelling that the texts of strings do not hold")
                got[j] = sub if leaf else ("e", p, sub)
        return sorted(got.items())

    meter = (budget or DEFAULT_BUDGET).meter("json_string_outside")
    meter.width = len(classes)
    start = ("s",)
    ids: dict = {start: 1}
    order: list = [start]
    delta: list = [[0] * len(classes)]
    known: dict[int, list] = {}       # S's state -> its row, once every target is numbered
    moved: dict[int, list] = {}       # column -> (state, target) where it is not S's move
    i = charged = 0
    while i < len(order):
        key = order[i]
        i += 1
        if isinstance(key, int):
            phase, changes = key, ()
        elif key[0] == "b":
            phase, changes = body, body_moves[key[1]]
        elif key[0] == "e":
            phase, changes = key[1], escape_moves(key[1], key[2])
        else:
            phase, changes = text.start, ((quote, ("b", n_dfa.start)),)
        row = known.get(phase)
        if row is not None:
            row = row.copy()
            targets = changes
        else:
            targets = s_rows[phase].copy()
            for j, k in changes:
                targets[j] = k
            targets = enumerate(targets)
            row = [0] * len(classes)
        for j, k in targets:
            if k != 0:
                got = ids.get(k)
                if got is None:
                    got = ids[k] = len(order) + 1
                    order.append(k)
                row[j] = got
            else:
                row[j] = 0
        for j, _ in changes:
            moved.setdefault(j, []).append((i, row[j]))
        if phase not in known and all(t == 0 or t in ids for t in s_rows[phase]):
            known[phase] = [ids[t] if t else 0 for t in s_rows[phase]]
        delta.append(row)
        if len(order) - charged >= _CHARGE_EVERY:
            meter.add(len(order) - charged)
            charged = len(order)
    meter.add(len(order) - charged)
    accepting = {ids[s] for s in text.accepting if s in ids}
    # Columns of one class of S that no state tells apart (a hex digit in both cases, where no
    # name has either literally) are one class: the breadth-first numbering over the first of
    # each is the same. Every state of S is reached, so columns of two classes of S differ.
    first: dict = {}
    keep, merged = [], []
    for j, (cs, k) in enumerate(parts):
        sig = (k, tuple(moved.get(j, ())))
        f = first.get(sig)
        if f is None:
            first[sig] = len(keep)
            keep.append(j)
            merged.append([cs])
        else:
            merged[f].append(cs)
    merged = [m[0] if len(m) == 1 else CharSet.union_of_disjoint(m) for m in merged]
    if len(keep) < len(classes):
        pick = itemgetter(*keep) if len(keep) > 1 else (lambda row: (row[keep[0]],))
        delta = list(map(pick, delta))
    return DFA(merged, delta, accepting, 1, _minimal=True)


#: The ways to build :func:`json_string_outside`, all with the same (canonical) result: name ->
#: function of ``(names, budget, escapes)`` giving the DFA, or None where it does not apply. The
#: tests run every entry on the same names, under every policy of :data:`ESCAPES`.
OUTSIDE_WAYS = {
    "product": _outside_by_product,
    "tracked": _outside_tracked,
}
#: The way that defines the result.
OUTSIDE_REFERENCE = "product"


def json_string_outside(names: DFA, budget: Budget | None = None, *,
                        escapes: str = "all") -> DFA:
    """The quoted JSON string texts, in the spellings of ``escapes`` (see :data:`ESCAPES`),
    whose decoded value is not in ``names`` (a finite language): the keys of undeclared members
    beside declared ones.

    Every spelling of a name is left out, so that an undeclared key is never a declared one
    written otherwise. That takes states: after each character of a name, a backslash may begin
    the next one (``\\u0061`` for ``a``: five more states per character). Undeclared keys are
    spelled ``"plain-ascii"``, as serializers write them, and need none for ASCII names.

    >>> d = json_string_outside(DFA.literal("age"))
    >>> d.accepts('"name"'), d.accepts('"age"'), d.accepts('"\\u0061ge"'), d.accepts('"ag"')
    (True, False, False, True)
    >>> p = json_string_outside(DFA.literal("age"), escapes="plain-ascii")
    >>> p.accepts('"name"'), p.accepts('"\\u0061ge"'), p.accepts('"caf\\u00e9"')
    (True, False, True)
    >>> d.num_states, p.num_states
    (34, 22)
    """
    got = _outside_tracked(names, budget, escapes)
    return got if got is not None else _outside_by_product(names, budget, escapes)
