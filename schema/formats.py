"""JSON Schema ``format`` values as automata over decoded characters.

Most formats people put in schemas are regular languages: dates and times (RFC 3339, including
month lengths and leap years, since a date has a four-digit year), IP addresses, UUIDs, host names,
URIs (RFC 3986's grammar is regular), e-mail addresses (RFC 5321's ``Mailbox``, without length
limits). Each format here is built from its grammar in code and is *sound* against the
``jsonschema`` format checker: every string the automaton accepts passes it. Where the RFC is wider
than the checker (leap second ``60``, year ``0000``, ``V`` in ``IPvFuture``), the narrower reading
is taken.

============================  ==========================================================
format                        grammar
============================  ==========================================================
``date``                      RFC 3339 ``full-date``, years 0001-9999, real month lengths
``time``                      RFC 3339 ``full-time`` (offset required), seconds 00-59
``date-time``                 ``full-date`` ``T``/``t`` ``full-time``
``duration``                  RFC 3339 Appendix A ``duration``
``email``                     RFC 5321 ``Mailbox``: dot-string or quoted local part,
                              host name or address literal
``hostname``                  RFC 1123 labels (letters, digits, inner hyphens; no
                              ``??--`` A-labels): up to 3 labels of 63, 4 of 62, 8 of
                              30, 16 of 14 or 32 of 6 characters, a sound part of
                              "labels <= 63, names <= 253" (exactly that needs ~24,000
                              states: :func:`hostname_exact`)
``ipv4``                      dotted quad 0-255 without leading zeros
``ipv6``                      RFC 3986 ``IPv6address`` (no zone id)
``uuid``                      8-4-4-4-12 hex digits, either case
``uri``, ``uri-reference``    RFC 3986 ``URI`` / ``URI-reference``
``json-pointer``              RFC 6901
``relative-json-pointer``     ``0`` or ``[1-9]+0?`` (the checker refuses a digit after a
                              ``0``), then ``#`` or a JSON pointer
``iri``, ``iri-reference``    RFC 3987 as ``rfc3987-syntax`` reads it: ``ucschar`` and
                              ``iprivate`` in the BMP only, ``IPv6address`` in its nine
                              shapes with exactly one group elided by ``::``
``uri-template``              RFC 6570 level 4 (apostrophe allowed); names start with a
                              letter, digit or ``_``; prefixes 1-999; no reserved operator
``idn-hostname``              ASCII ``hostname`` labels, or U-labels of ``[a-z0-9-]`` and
                              the ~125,000 IDNA2008 characters with no rule of context
                              (:func:`idn_safe_chars`, :func:`idn_safe_marks` after
                              the first character; also ``l\u00b7l``, ``\u0375``
                              before Greek, ``\u30fb`` with kana or Han, Extended
                              Arabic-Indic digits): in names of up to 3 labels (ASCII
                              labels up to 63), 10 characters with up to 9 non-ASCII,
                              or ``IDN_ONE_WIDE`` (20) with one; up to 8 labels (ASCII
                              up to 30), 4 characters (``IDN_GRIDS``), so that each
                              A-label fits (:func:`punycode_length_bound`) and the name
                              253;
                              separators ``.`` ``\u3002`` ``\uff0e`` ``\uff61``
``idn-email``                 RFC 6531 ``Mailbox``: any non-ASCII character in the local
                              part, ``idn-hostname`` or address literal after the ``@``
``regex``                     ECMA-262 and Python ``re`` at once: a subset (no
                              backreferences, look-around, named groups), groups nested
                              up to ``REGEX_DEPTH`` (5) deep
============================  ==========================================================

Accepted subsets. Where the checker is narrower than the RFC, or where the language is not
regular, the automaton accepts less than the format: the suite's valid leap seconds (the checker
refuses ``:60``), ``relative-json-pointer`` ``100``, IRIs with ``[2001:db8::1]``, ``[V1.fe]`` or
characters outside the BMP, URI templates with ``{%41}`` or ``{v:1000}``, and, for
``idn-hostname``, joiners (ZWJ/ZWNJ) after a virama, Hebrew punctuation, right-to-left labels,
A-labels (``xn--``), and U-labels past the length bound above.
``idn-hostname`` (and the domain of ``idn-email``) need the ``idna`` package, which the checker
uses too; without it ``idn-hostname`` is unsupported and ``idn-email`` takes ASCII host names.
Formats not listed (and unknown ones) have no automaton: :func:`format_dfa` returns None and the
compiler raises ``UnsupportedSchema`` in strict mode, warns and does not enforce them otherwise.

Example
-------
>>> format_dfa("ipv4").accepts("192.168.0.1"), format_dfa("ipv4").accepts("192.168.0.01")
(True, False)
>>> format_dfa("date").accepts("2024-02-29"), format_dfa("date").accepts("2023-02-29")
(True, False)
>>> format_dfa("no-such-format") is None
True

The grammars are the RFCs' ABNF, transcribed rule by rule into regex trees.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from tokenfsm.automata.cache import byte_lru_cache
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.regex_ast import Alt, Chars, Node, Repeat, Seq

from .numbers import fixed_width_range

__all__ = ["format_dfa", "FORMATS", "hostname_exact", "idn_safe_chars", "idn_safe_marks",
           "punycode_length_bound", "IDN_ONE_WIDE", "IDN_GRIDS",
           "REGEX_DEPTH"]


def _cs(chars: str = "", *ranges: tuple[str, str]) -> CharSet:
    return CharSet.from_chars(chars) | CharSet((ord(a), ord(b)) for a, b in ranges)


def lit(s: str) -> Node:
    return Seq(tuple(Chars(CharSet.of(ch)) for ch in s))


def seq(*items: Node) -> Node:
    return Seq(tuple(items))


def alt(*items: Node) -> Node:
    return Alt(tuple(items))


def rep(node: Node, lo: int = 0, hi: int | None = None) -> Node:
    return Repeat(node, lo, hi)


def opt(node: Node) -> Node:
    return Repeat(node, 0, 1)


def one_of(*words: str) -> Node:
    return Alt(tuple(lit(w) for w in words))


ALPHA = Chars(_cs("", ("a", "z"), ("A", "Z")))
DIGIT = Chars(_cs("", ("0", "9")))
HEXDIG = Chars(_cs("", ("0", "9"), ("a", "f"), ("A", "F")))


def _two_digits(lo: int, hi: int) -> Node:
    return fixed_width_range(lo, hi, 2)


# ---------------------------------------------------------------- RFC 3339 dates and times

def _months(*ms: int) -> Node:
    return one_of(*(f"{m:02d}" for m in ms))


def full_date() -> Node:
    """``YYYY-MM-DD`` with years 0001-9999, each month's length and the Gregorian leap years."""
    year = fixed_width_range(1, 9999, 4)
    month_day = alt(
        seq(_months(*range(1, 13)), lit("-"), _two_digits(1, 28)),
        seq(_months(1, *range(3, 13)), lit("-"), one_of("29", "30")),
        seq(_months(1, 3, 5, 7, 8, 10, 12), lit("-31")),
    )
    fours = one_of(*(f"{n:02d}" for n in range(4, 100, 4)))
    # a leap year: last two digits a non-zero multiple of 4, or "00" after a multiple of 4
    # (which may not be "00": there is no year 0000)
    leap = alt(seq(DIGIT, DIGIT, fours), seq(fours, lit("00")))
    return alt(seq(year, lit("-"), month_day), seq(leap, lit("-02-29")))


def full_time() -> Node:
    """``hh:mm:ss[.frac](Z|+hh:mm|-hh:mm)``, ``Z`` in either case."""
    hour, minute = _two_digits(0, 23), _two_digits(0, 59)
    partial = seq(hour, lit(":"), minute, lit(":"), _two_digits(0, 59),
                  opt(seq(lit("."), rep(DIGIT, 1))))
    offset = alt(Chars(_cs("Zz")), seq(Chars(_cs("+-")), hour, lit(":"), minute))
    return seq(partial, offset)


def date_time() -> Node:
    return seq(full_date(), Chars(_cs("Tt")), full_time())


def duration() -> Node:
    """RFC 3339 Appendix A: ``P`` then years/months/days with an optional time, or weeks."""
    n = rep(DIGIT, 1)

    def unit(letter: str) -> Node:
        return seq(n, lit(letter))

    second = unit("S")
    minute = seq(unit("M"), opt(second))
    hour = seq(unit("H"), opt(minute))
    time = seq(lit("T"), alt(hour, minute, second))
    day = unit("D")
    month = seq(unit("M"), opt(day))
    year = seq(unit("Y"), opt(month))
    date = seq(alt(day, month, year), opt(time))
    return seq(lit("P"), alt(date, time, unit("W")))


# ---------------------------------------------------------------- addresses

def dec_octet() -> Node:
    """0-255 without leading zeros."""
    return alt(fixed_width_range(0, 9, 1), fixed_width_range(10, 99, 2),
               fixed_width_range(100, 255, 3))


def ipv4() -> Node:
    return seq(dec_octet(), rep(seq(lit("."), dec_octet()), 3, 3))


def ipv6() -> Node:
    """RFC 3986 ``IPv6address``: eight 16-bit groups, one ``::`` for a run of zero groups, the last
    two groups optionally written as an IPv4 address."""
    h16 = rep(HEXDIG, 1, 4)
    h16c = seq(h16, lit(":"))
    ls32 = alt(seq(h16, lit(":"), h16), ipv4())
    dc = lit("::")

    def head(k: int) -> Node:  # [ *k( h16 ":" ) h16 ]
        return opt(seq(rep(h16c, 0, k), h16))

    return alt(
        seq(rep(h16c, 6, 6), ls32),
        seq(dc, rep(h16c, 5, 5), ls32),
        seq(opt(h16), dc, rep(h16c, 4, 4), ls32),
        seq(head(1), dc, rep(h16c, 3, 3), ls32),
        seq(head(2), dc, rep(h16c, 2, 2), ls32),
        seq(head(3), dc, h16c, ls32),
        seq(head(4), dc, ls32),
        seq(head(5), dc, h16),
        seq(head(6), dc),
    )


def uuid() -> Node:
    return seq(*(item for k, width in enumerate((8, 4, 4, 4, 12))
                 for item in ((lit("-"),) if k else ()) + (rep(HEXDIG, width, width),)))


def hostname_labels(max_labels: int | None = None, max_label: int = 63) -> Node:
    """Dot-separated labels of letters, digits and inner hyphens (RFC 1123), each of 1 to
    ``max_label`` characters (``max_label >= 3``), at most ``max_labels`` of them (None: any
    number), and none with hyphens in both its third and fourth place (RFC 5891 §4.2.3.1)."""
    let_dig = Chars(_cs("", ("a", "z"), ("A", "Z"), ("0", "9")))
    inner = Chars(_cs("-", ("a", "z"), ("A", "Z"), ("0", "9")))
    # "??--" labels are reserved for IDNA A-labels ("xn--..."), valid only when their punycode
    # decodes to a valid U-label; JSON Schema's test suite rejects the bad ones, so none are emitted
    not_two_hyphens = alt(seq(let_dig, inner), seq(lit("-"), let_dig))
    label = alt(seq(let_dig, opt(seq(opt(inner), let_dig))),
                seq(let_dig, inner, inner, let_dig) if max_label >= 4 else Alt(()),
                seq(let_dig, inner, not_two_hyphens, rep(inner, 0, max_label - 5), let_dig)
                if max_label >= 5 else Alt(()))
    return seq(label, rep(seq(lit("."), label), 0, None if max_labels is None else max_labels - 1))


# (labels, longest label) grids whose names all fit in 253 characters: k * (m + 1) - 1 <= 253
HOSTNAME_GRIDS = ((3, 63), (4, 62), (8, 30), (16, 14), (32, 6))


@lru_cache(maxsize=None)
def hostname_exact() -> DFA:
    """The RFC 1123 host names above of at most 253 characters (about 24,000 states: the automaton
    must count the label and the whole name at once)."""
    return DFA.from_ast(hostname_labels()) & DFA.from_charset(CharSet.any()).repeat(1, 253)


@lru_cache(maxsize=None)
def _hostname() -> DFA:
    # The 253-character limit crosses labels, which makes the exact automaton large
    # (hostname_exact). The default is the union of a few grids that each fit the limit: up to 4
    # labels of 63, 4 of 62, 8 of 30, 16 of 14 or 32 of 6 characters: a sound subset.
    return DFA.union_all([DFA.from_ast(hostname_labels(k, m)) for k, m in HOSTNAME_GRIDS])


# ---------------------------------------------------------------- internationalised host names

def idn_safe_chars() -> CharSet:
    """Non-ASCII code points that can stand anywhere in an IDNA2008 U-label, next to each other
    and to ``[a-z0-9-]``, with no rule of context: PVALID (``idna``'s tables), bidirectional class
    ``L`` (so the Bidi rule never applies), not a mark nor a non-starter (no leading-combiner
    rule), unchanged by NFC, and never the second half of a canonical composition (nor a Hangul
    vowel or trailing jamo), so that any string of them is in NFC.

    Computed from the running interpreter's ``unicodedata`` and the installed ``idna``, the same
    tables the ``idn-hostname`` checker uses."""
    return _idn_safe_sets()[0]


def idn_safe_marks() -> CharSet:
    """Marks (category ``M``) that can follow any character of a U-label but not start it: as
    :func:`idn_safe_chars`, with bidirectional class ``L`` or ``NSM`` (neither right-to-left) and
    canonical combining class 0 (nothing to reorder)."""
    return _idn_safe_sets()[1]


@lru_cache(maxsize=None)
def _idn_safe_sets() -> tuple[CharSet, CharSet]:
    import unicodedata

    from idna import idnadata

    second = set()
    for cp in range(0x80, 0x110000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                second.add(int(parts[1], 16))
    sets: tuple[list, list] = ([], [])
    for r in idnadata.codepoint_classes["PVALID"]:
        for cp in range(max(r >> 32, 0x80), r & 0xFFFFFFFF):
            c = chr(cp)
            if (unicodedata.combining(c) or unicodedata.normalize("NFC", c) != c
                    or cp in second or 0x1160 <= cp <= 0x11FF):
                continue
            mark = unicodedata.category(c).startswith("M")
            if unicodedata.bidirectional(c) not in (("L", "NSM") if mark else ("L",)):
                continue
            ok = sets[mark]
            if ok and ok[-1][1] == cp - 1:
                ok[-1] = (ok[-1][0], cp)
            else:
                ok.append((cp, cp))
    return CharSet(sets[0]), CharSet(sets[1])


@byte_lru_cache("schema.formats.punycode_length_bound", 1 << 20)
def punycode_length_bound(length: int, max_code_point: int = 0x10FFFF,
                          non_ascii: int | None = None) -> int:
    """An upper bound on the A-label length (``xn--`` included) of any U-label of ``length``
    characters, at least one (and at most ``non_ascii``, if given) of them non-ASCII, all at most
    ``max_code_point``.

    Punycode writes one generalised variable-length integer per non-ASCII character; their sum is
    at most ``(max_code_point - 128 + k) * (length + 1)`` for ``k`` non-ASCII characters (RFC 3492
    §6.3), and a value ``v`` takes at most as many digits as the worst bias gives it. The bound
    takes the worst split of that sum between the ``k`` integers, over every ``k``."""
    cheapest = _cheapest_digit_sums(length)
    worst = 0
    for k in range(1, min(length, length if non_ascii is None else non_ascii) + 1):
        basic = length - k
        budget = (max_code_point - 128 + k + 1) * (length + 1)
        most = max(d for d, c in enumerate(cheapest[k]) if c is not None and c <= budget)
        worst = max(worst, 4 + basic + (1 if basic else 0) + most)
    return worst


@lru_cache(maxsize=None)
def _punycode_digit_costs() -> tuple[tuple[int, int], ...]:
    """(d, smallest value that some bias writes with d digits), d = 1..12: RFC 3492 base 36,
    thresholds ``t_j = clamp(36 (j + 1) - bias, 1, 26)``. For one bias the smallest value with d
    digits is ``t_0 + (36 - t_0) (t_1 + (36 - t_1) (... t_(d-2)))`` (each digit but the last at
    its threshold), and the digit count grows with the value; ``adapt()`` keeps the bias under
    200 for the sums met here, and biases up to 288 are taken."""
    out = []
    for d in range(1, 13):
        best = None
        for bias in range(0, 36 * 8):
            v = 0
            for j in reversed(range(d - 1)):
                t = min(max(36 * (j + 1) - bias, 1), 26)
                v = t + (36 - t) * v
            best = v if best is None else min(best, v)
        out.append((d, best))
    return tuple(out)


_CHEAPEST: list[list[int | None]] = [[0]]


def _cheapest_digit_sums(k: int) -> list[list[int | None]]:
    """``table[i][d]``: the least sum of ``i`` integers that some biases write with ``d`` digits
    in all, for ``i <= k`` (grown on demand)."""
    costs = _punycode_digit_costs()
    while len(_CHEAPEST) <= k:
        prev = _CHEAPEST[-1]
        row: list[int | None] = [None] * (len(prev) + costs[-1][0])
        for total, c in enumerate(prev):
            if c is None:
                continue
            for d, cost in costs:
                if row[total + d] is None or c + cost < row[total + d]:
                    row[total + d] = c + cost
        _CHEAPEST.append(row)
    return _CHEAPEST


# CONTEXTO characters (RFC 5892 Appendix A) whose rule is regular and left-to-right
_MIDDLE_DOT, _KERAIA, _KATAKANA_DOT = "\u00b7", "\u0375", "\u30fb"
# Extended Arabic-Indic digits (bidi EN): their rule only forbids Arabic-Indic digits, which are
# right-to-left (AN) and so never in these labels
_EXTENDED_ARABIC_INDIC = CharSet.range(0x06F0, 0x06F9)


def _idn_label(max_encoded: int, other: CharSet, greek: CharSet, kana_han: CharSet,
               marks: CharSet) -> DFA:
    """Host name labels ``idna.encode`` takes whose A-label has at most ``max_encoded``
    characters: the ASCII labels of ``hostname`` (either case), or U-labels with a non-ASCII
    character, short enough that :func:`punycode_length_bound` fits, of ``[a-z0-9-]``, the safe
    characters (``other``, ``greek``, ``kana_han``: Greek, and Hiragana/Katakana/Han ones),
    ``marks`` anywhere but first, and three CONTEXTO ones where their rule holds:
    ``l\u00b7l``, ``\u0375`` before a Greek letter, ``\u30fb`` in a label with kana or Han."""
    ascii_label = DFA.from_ast(hostname_labels(1, max_encoded))
    # (at most j non-ASCII characters, at most n characters in all) whose A-labels fit
    sizes = []
    for j in range(1, 64):
        n = 0
        while n < 63 and punycode_length_bound(n + 1, non_ascii=j) <= max_encoded:
            n += 1
        if n < j:
            break
        sizes.append((j, n))
    if not sizes:
        return ascii_label
    # every mix up to the shortest bound; one non-ASCII character in a longer label only where
    # labels may be long, and up to IDN_ONE_WIDE (each count kept costs states)
    sizes = sizes[-1:] + ([(1, min(sizes[0][1], IDN_ONE_WIDE))] if max_encoded >= 62 else [])
    dot, keraia, kdot = (CharSet.of(c) for c in (_MIDDLE_DOT, _KERAIA, _KATAKANA_DOT))
    safe = other | greek | kana_han | marks
    ldh = _cs("-", ("a", "z"), ("0", "9"))
    x = safe | dot | keraia | kdot | ldh
    first, last = Chars(x - _cs("-") - marks), Chars(x - _cs("-"))
    any_ = rep(Chars(x))
    longest = max(n for _, n in sizes)
    shape = DFA.from_ast(alt(first, seq(first, rep(Chars(x), 0, longest - 2), last))
                         if longest >= 2 else first)
    wide = Chars(x - ldh)
    shape = shape & DFA.union_all([
        DFA.from_ast(seq(rep(Chars(ldh)), rep(seq(wide, rep(Chars(ldh))), 0, j)))
        & DFA.from_ast(rep(Chars(x), 1, n)) for j, n in sizes])
    some_unicode = DFA.from_ast(seq(any_, wide, any_))
    not_l = Chars(x - CharSet.of("l"))
    broken = DFA.from_ast(alt(
        seq(Chars(x), Chars(x), lit("--"), any_),  # hyphens in the 3rd and 4th places
        seq(opt(seq(any_, not_l)), Chars(dot), any_), seq(any_, Chars(dot), opt(seq(not_l, any_))),
        seq(any_, Chars(keraia), opt(seq(Chars(x - greek), any_))),
    ))
    kana_dot_alone = DFA.from_ast(seq(rep(Chars(x - kana_han)), Chars(kdot), rep(Chars(x - kana_han))))
    return ascii_label | (((shape & some_unicode) - broken) - kana_dot_alone)


IDN_ONE_WIDE = 20
"""Longest ``idn-hostname`` U-label with a single non-ASCII character (names of up to 3 labels)."""
IDN_GRIDS = ((3, 63), (8, 30))
"""(labels, longest A-label) grids of ``idn-hostname``: fewer than ``hostname``'s, since every
state counts twice here (the automaton is larger, and ``idn-email`` builds on it)."""

# label separators idna.encode splits on: full stop, ideographic, fullwidth and halfwidth ones
_IDN_DOTS = _cs(".\u3002\uff0e\uff61")


@lru_cache(maxsize=None)
def _idn_hostname() -> DFA | None:
    """As ``hostname``, grids of (labels, longest A-label) that fit 253 characters once encoded.

    Built with a stand-in character for each of the four sets of safe characters (a thousand
    ranges make every product slow), which the last step replaces by the whole sets."""
    try:
        from idna import idnadata

        safe, marks = idn_safe_chars(), idn_safe_marks()
    except ImportError:  # no idna: the checker does not check idn-hostname either
        return None

    def script(*names: str) -> CharSet:
        return CharSet([(r >> 32, (r & 0xFFFFFFFF) - 1) for n in names for r in idnadata.scripts[n]])

    greek = safe & script("Greek")
    kana_han = safe & script("Hiragana", "Katakana", "Han")
    sets = [safe - greek - kana_han | _EXTENDED_ARABIC_INDIC, greek, kana_han, marks]
    stand_ins = [CharSet.of(chr(s.min())) for s in sets]
    parts = []
    for k, m in IDN_GRIDS:
        label = _idn_label(m, *stand_ins)
        more = DFA.concat_all([DFA.from_charset(_IDN_DOTS), label]).repeat(0, k - 1)
        parts.append(DFA.concat_all([label, more]))

    def image(cs: CharSet) -> DFA:
        out = cs
        for stand_in, full in zip(stand_ins, sets):
            out = out - stand_in
            if stand_in.issubset(cs):
                out = out | full
        return DFA.from_charset(out)

    return DFA.union_all(parts).substitute(image)


# ---------------------------------------------------------------- e-mail (RFC 5321 Mailbox)

def _mailbox_parts() -> tuple[Node, Node]:
    atext = Chars(_cs("!#$%&'*+-/=?^_`{|}~", ("a", "z"), ("A", "Z"), ("0", "9")))
    dot_string = seq(rep(atext, 1), rep(seq(lit("."), rep(atext, 1))))
    qtext = Chars(CharSet([(32, 33), (35, 91), (93, 126)]))
    quoted_pair = seq(lit("\\"), Chars(CharSet([(32, 126)])))
    quoted = seq(lit('"'), rep(alt(qtext, quoted_pair)), lit('"'))
    local = alt(dot_string, quoted)
    literal = alt(seq(lit("["), ipv4(), lit("]")), seq(lit("[IPv6:"), ipv6(), lit("]")))
    return local, literal


def _email() -> DFA:
    local, literal = _mailbox_parts()
    return DFA.concat_all([DFA.from_ast(seq(local, lit("@"))),
                           _hostname() | DFA.from_ast(literal)])


def _idn_email() -> DFA:
    """RFC 6531: the local part's ``atext`` and ``qtextSMTP`` take every non-ASCII character,
    the domain is an ``idn-hostname`` or an address literal."""
    _, literal = _mailbox_parts()
    non_ascii = CharSet([(0x80, 0x10FFFF)])
    atext = Chars(_cs("!#$%&'*+-/=?^_`{|}~", ("a", "z"), ("A", "Z"), ("0", "9")) | non_ascii)
    dot_string = seq(rep(atext, 1), rep(seq(lit("."), rep(atext, 1))))
    qtext = Chars(CharSet([(32, 33), (35, 91), (93, 126)]) | non_ascii)
    quoted = seq(lit('"'), rep(alt(qtext, seq(lit("\\"), Chars(CharSet([(32, 126)]))))), lit('"'))
    host = _idn_hostname()
    return DFA.concat_all([DFA.from_ast(seq(alt(dot_string, quoted), lit("@"))),
                           (_hostname() if host is None else host) | DFA.from_ast(literal)])


# ---------------------------------------------------------------- RFC 3986 URIs

def _uri_rules() -> dict[str, Node]:
    unreserved = _cs("-._~", ("a", "z"), ("A", "Z"), ("0", "9"))
    sub_delims = _cs("!$&'()*+,;=")
    pct = seq(lit("%"), HEXDIG, HEXDIG)

    def chars(extra: str = "") -> Node:  # unreserved / pct-encoded / sub-delims / extra
        return alt(Chars(unreserved | sub_delims | _cs(extra)), pct)

    pchar = chars(":@")
    segment = rep(pchar)
    segment_nz = rep(pchar, 1)
    segment_nz_nc = rep(chars("@"), 1)
    path_abempty = rep(seq(lit("/"), segment))
    path_absolute = seq(lit("/"), opt(seq(segment_nz, rep(seq(lit("/"), segment)))))
    path_rootless = seq(segment_nz, rep(seq(lit("/"), segment)))
    path_noscheme = seq(segment_nz_nc, rep(seq(lit("/"), segment)))
    ip_future = seq(lit("v"), rep(HEXDIG, 1), lit("."), rep(Chars(unreserved | sub_delims | _cs(":")), 1))
    host = alt(seq(lit("["), alt(ipv6(), ip_future), lit("]")), ipv4(), rep(chars()))
    authority = seq(opt(seq(rep(chars(":")), lit("@"))), host, opt(seq(lit(":"), rep(DIGIT))))
    tail = seq(opt(seq(lit("?"), rep(chars(":@/?")))), opt(seq(lit("#"), rep(chars(":@/?")))))
    scheme = seq(ALPHA, rep(Chars(_cs("+-.", ("a", "z"), ("A", "Z"), ("0", "9")))))
    net = seq(lit("//"), authority, path_abempty)
    uri = seq(scheme, lit(":"), alt(net, path_absolute, path_rootless, Seq(())), tail)
    relative = seq(alt(net, path_absolute, path_noscheme, Seq(())), tail)
    return {"uri": uri, "uri-reference": alt(uri, relative)}


def _json_pointer() -> Node:
    unescaped = Chars(CharSet.any() - _cs("/~"))
    return rep(seq(lit("/"), rep(alt(unescaped, lit("~0"), lit("~1")))))


def _relative_json_pointer() -> Node:
    """A non-negative integer, then ``#`` or a JSON pointer. The checker rejects any digit after
    a ``0`` (it reads "no leading zero" as "no zero before a digit", so ``100`` fails), hence
    ``0`` or ``[1-9]+0?``: a sound part of the draft's ``0 / [1-9][0-9]*``."""
    nonzero = Chars(_cs("", ("1", "9")))
    integer = alt(lit("0"), seq(rep(nonzero, 1), opt(lit("0"))))
    return seq(integer, alt(lit("#"), _json_pointer()))


# ---------------------------------------------------------------- RFC 3987 IRIs

def _iri_rules() -> dict[str, Node]:
    """RFC 3987 ``IRI`` / ``IRI-reference`` as the checker's grammar (``rfc3987-syntax``) has it:
    ``ucschar`` and ``iprivate`` only in the Basic Multilingual Plane, ``IPvFuture`` with a
    lower-case ``v``, and ``IPv6address`` in its nine fixed shapes, each with exactly one group
    elided by ``::`` (so ``[::1]`` and ``[2001:db8::1]`` are not IRIs there, nor here)."""
    alpha_digit = _cs("", ("a", "z"), ("A", "Z"), ("0", "9"))
    unreserved = alpha_digit | _cs("-._~")
    ucschar = CharSet([(0xA0, 0xD7FF), (0xF900, 0xFDCF), (0xFDF0, 0xFFEF)])
    iprivate = CharSet([(0xE000, 0xF8FF)])
    sub_delims = _cs("!$&'()*+,;=")
    pct = seq(lit("%"), HEXDIG, HEXDIG)

    def chars(extra: CharSet = CharSet.empty()) -> Node:
        return alt(Chars(unreserved | ucschar | sub_delims | extra), pct)

    ipchar = chars(_cs(":@"))
    isegment = rep(ipchar)
    rest = rep(seq(lit("/"), isegment))
    ipath_abempty = rest
    ipath_absolute = seq(lit("/"), opt(seq(rep(ipchar, 1), rest)))
    ipath_rootless = seq(rep(ipchar, 1), rest)
    ipath_noscheme = seq(rep(chars(_cs("@")), 1), rest)
    h16 = rep(HEXDIG, 1, 4)
    c = lit(":")
    ls32 = alt(seq(h16, c, h16), ipv4())

    def groups(k: int) -> Node:  # k times (h16 ":")
        return rep(seq(h16, c), k, k)

    def lead(k: int) -> Node:  # h16 *(k - 1)(":" h16), k >= 1
        return seq(h16, rep(seq(c, h16), k - 1, k - 1))

    dc = lit("::")
    ipv6 = alt(seq(groups(6), ls32), seq(dc, groups(5), ls32),
               *(seq(lead(k), dc, groups(5 - k), ls32) for k in range(1, 5)),
               seq(lead(5), dc, ls32), seq(lead(6), dc, h16), seq(lead(7), dc))
    ipvfuture = seq(lit("v"), rep(HEXDIG, 1), lit("."), rep(Chars(unreserved | sub_delims | _cs(":")), 1))
    ihost = alt(seq(lit("["), alt(ipv6, ipvfuture), lit("]")), ipv4(), rep(chars()))
    iauthority = seq(opt(seq(rep(chars(_cs(":"))), lit("@"))), ihost, opt(seq(lit(":"), rep(DIGIT))))
    iquery = rep(alt(ipchar, Chars(iprivate | _cs("/?"))))
    ifragment = rep(alt(ipchar, Chars(_cs("/?"))))
    tail = seq(opt(seq(lit("?"), iquery)), opt(seq(lit("#"), ifragment)))
    scheme = seq(ALPHA, rep(Chars(alpha_digit | _cs("+-."))))
    net = seq(lit("//"), iauthority, ipath_abempty)
    iri = seq(scheme, lit(":"), alt(net, ipath_absolute, ipath_rootless, Seq(())), tail)
    relative = seq(alt(net, ipath_absolute, ipath_noscheme, Seq(())), tail)
    return {"iri": iri, "iri-reference": alt(iri, relative)}


# ---------------------------------------------------------------- RFC 6570 URI templates

# RFC 3987 ucschar and iprivate, all planes
_UCSCHAR = CharSet([(0xA0, 0xD7FF), (0xF900, 0xFDCF), (0xFDF0, 0xFFEF)]
                   + [(p << 16, (p << 16) + 0xFFFD) for p in range(1, 14)]
                   + [(0xE1000, 0xEFFFD)])
_IPRIVATE = CharSet([(0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD)])


def _uri_template() -> Node:
    """RFC 6570 (level 4) templates, with the apostrophe allowed in literals (erratum 6937).

    Narrower than the RFC where the checker (``uri-template``) is: a variable name starts with a
    letter, digit or ``_`` (not a ``%XX`` triplet), a prefix length has at most three digits
    (1-999), and the reserved operators ``= , ! @ |`` are not used."""
    literal_chars = (CharSet([(0x21, 0x21), (0x23, 0x24), (0x26, 0x3B), (0x3D, 0x3D), (0x3F, 0x5B),
                              (0x5D, 0x5D), (0x5F, 0x5F), (0x61, 0x7A), (0x7E, 0x7E)])
                     | _UCSCHAR | _IPRIVATE)
    pct = seq(lit("%"), HEXDIG, HEXDIG)
    literal = alt(Chars(literal_chars), pct)
    first = Chars(_cs("_", ("a", "z"), ("A", "Z"), ("0", "9")))
    varchar = alt(first, pct)
    varname = seq(first, rep(seq(opt(lit(".")), varchar)))
    prefix = seq(lit(":"), Chars(_cs("", ("1", "9"))), rep(DIGIT, 0, 2))
    varspec = seq(varname, opt(alt(prefix, lit("*"))))
    expression = seq(lit("{"), opt(Chars(_cs("+#./;?&"))), varspec,
                     rep(seq(lit(","), varspec)), lit("}"))
    return rep(alt(literal, expression))


# ---------------------------------------------------------------- regular expressions

REGEX_DEPTH = 5
"""Deepest group nesting of the ``regex`` format's automaton (balanced parentheses are not
regular; each level of nesting is one copy of the grammar)."""
REGEX_CLASS_RANGES = ("0-9", "1-9", "a-z", "A-Z", "a-f", "A-F")
"""The ranges a character class of the ``regex`` format may hold."""


def _regex(depth: int = REGEX_DEPTH) -> DFA:
    """Regular expressions valid both for ECMA-262 (with or without the ``u`` flag) and for
    Python's ``re`` (the checker compiles the string with ``re.compile``), with groups nested at
    most ``depth`` deep.

    The subset: literal characters (not ``^$\\.*+?()[]{}|``); ``.``; the escapes ``\\d \\D \\w
    \\W \\s \\S \\t \\n \\r \\f \\v``, ``\\xHH``, ``\\uHHHH`` and a backslash before a syntax
    character or ``/``; classes ``[...]`` / ``[^...]`` of one or more literal characters (not
    ``\\]-[^&~|``), those escapes (``\\-`` too) and the ranges of ``REGEX_CLASS_RANGES``;
    capturing ``(...)`` and non-capturing ``(?:...)`` groups; the assertions ``^ $ \\b \\B``
    (never quantified); quantifiers ``* + ? {n} {n,} {n,m}`` (``n <= m``, at most three digits,
    no leading zero), each optionally lazy. Not in it: backreferences, look-around, named
    groups, ``\\c``, ``\\p{...}``, flags and Python-only syntax."""
    syntax = "^$\\.*+?()[]{}|"
    literal = Chars(CharSet.any() - _cs(syntax))
    hex_escapes = alt(seq(lit("\\x"), HEXDIG, HEXDIG), seq(lit("\\u"), rep(HEXDIG, 4, 4)))
    char_escape = alt(seq(lit("\\"), Chars(_cs("dDwWsStnrfv" + syntax + "/"))), hex_escapes)
    ranges = one_of(*REGEX_CLASS_RANGES)
    class_atom = alt(Chars(CharSet.any() - _cs("\\]-[^&~|")), char_escape, lit("\\-"), ranges)
    char_class = seq(lit("["), opt(lit("^")), rep(class_atom, 1), lit("]"))
    count = alt(lit("0"), seq(Chars(_cs("", ("1", "9"))), rep(DIGIT, 0, 2)))
    n_to_m = alt(*(seq(lit(str(n)), lit(","), alt(Chars(_cs("", (str(n), "9"))),
                                                      seq(Chars(_cs("", ("1", "9"))), rep(DIGIT, 1, 2))))
                   for n in range(10)))
    braces = seq(lit("{"), alt(count, seq(count, lit(",")), n_to_m), lit("}"))
    quantifier = seq(alt(Chars(_cs("*+?")), braces), opt(lit("?")))
    assertion = alt(Chars(_cs("^$")), lit("\\b"), lit("\\B"))
    simple = alt(literal, lit("."), char_escape, char_class)

    opening = DFA.from_ast(alt(lit("("), lit("(?:")))
    closing, bar = DFA.from_ast(lit(")")), DFA.from_ast(lit("|"))
    simple_term = DFA.from_ast(alt(assertion, seq(simple, opt(quantifier))))
    quantified = DFA.from_ast(opt(quantifier))
    term = simple_term  # the terms of the innermost level: no group
    for level in range(depth + 1):
        alternative = term.star()
        disjunction = DFA.concat_all([alternative, DFA.concat_all([bar, alternative]).star()])
        # one level up, a term may also be a group around this level's disjunction
        term = simple_term | DFA.concat_all([opening, disjunction, closing, quantified])
    return disjunction


FORMATS: dict[str, Callable[[], DFA | None]] = {
    "date": lambda: DFA.from_ast(full_date()),
    "time": lambda: DFA.from_ast(full_time()),
    "date-time": lambda: DFA.from_ast(date_time()),
    "duration": lambda: DFA.from_ast(duration()),
    "email": _email,
    "hostname": _hostname,
    "ipv4": lambda: DFA.from_ast(ipv4()),
    "ipv6": lambda: DFA.from_ast(ipv6()),
    "uuid": lambda: DFA.from_ast(uuid()),
    "uri": lambda: DFA.from_ast(_uri_rules()["uri"]),
    "uri-reference": lambda: DFA.from_ast(_uri_rules()["uri-reference"]),
    "json-pointer": lambda: DFA.from_ast(_json_pointer()),
    "relative-json-pointer": lambda: DFA.from_ast(_relative_json_pointer()),
    "iri": lambda: DFA.from_ast(_iri_rules()["iri"]),
    "iri-reference": lambda: DFA.from_ast(_iri_rules()["iri-reference"]),
    "uri-template": lambda: DFA.from_ast(_uri_template()),
    "idn-hostname": _idn_hostname,
    "idn-email": _idn_email,
    "regex": _regex,
}
"""Builders of the supported formats, by JSON Schema name."""


@byte_lru_cache("schema.formats.format_dfa", 16 << 20)
def format_dfa(name: str) -> DFA | None:
    """The automaton of the decoded strings valid for ``format: name``, or None if unsupported.

    Parameters
    ----------
    name : str
        A JSON Schema format name (see the module docstring for the list).

    Returns
    -------
    DFA or None
        None for formats without an automaton here (the caller decides whether that is an error
        or an annotation to ignore).
    """
    build = FORMATS.get(name)
    return None if build is None else build()
