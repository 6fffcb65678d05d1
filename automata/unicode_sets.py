"""Character sets read off the running interpreter's regex engines, exactly.

The regex front end needs the sets behind ``\\d``, ``\\w``, ``\\s`` (Unicode and ASCII), the word
characters for ``\\b``, Unicode properties such as ``\\p{L}`` and the code points where case-insensitive
matching can differ from case-sensitive matching. Rather than re-deriving any of them from the
Unicode tables (and disagreeing with ``re`` wherever its definitions are idiosyncratic, such as
``\\s`` containing U+001C..U+001F), every set here is *measured*: one string holding every Unicode
scalar value is swept with the engine's own pattern, and the sets are the runs of the matches. Each
table is built lazily, once per process, and cached.

Example
-------
>>> from tokenfsm.automata.unicode_sets import category_set
>>> category_set("digit", ascii=True).ranges
((48, 57),)
>>> "\\u0663" in category_set("digit", ascii=False)   # ARABIC-INDIC DIGIT THREE
True

The sweep over all scalar values is the same trick regex-syntax (rust-lang/regex) uses to test its
Unicode tables against other engines; the "cased universe" is derived from CPython's
``_sre.unicode_iscased``/``unicode_tolower`` and ``re._casefix``.
"""

from __future__ import annotations

import _sre
import re
from array import array

from .cache import byte_lru_cache
from .charset import CharSet, SURROGATES

try:  # CPython 3.11+
    from re import _compiler as _sre_compiler
except ImportError:  # pragma: no cover - CPython 3.10
    import sre_compile as _sre_compiler

__all__ = [
    "all_scalars",
    "sweep",
    "category_set",
    "word_set",
    "property_set",
    "check_property",
    "cased_universe",
    "universe_sweep",
]

_GAP = SURROGATES[1] - SURROGATES[0] + 1


@byte_lru_cache("automata.unicode_sets.all_scalars", 8 << 20)
def all_scalars() -> str:
    """One string holding every Unicode scalar value in order (surrogates left out)."""
    codes = array("I", range(SURROGATES[0]))
    codes.extend(range(SURROGATES[1] + 1, 0x110000))
    return codes.tobytes().decode("utf-32-le" if array("I", [1]).tobytes()[0] == 1 else "utf-32-be")


def _cp(index: int) -> int:
    """The code point at ``index`` of :func:`all_scalars`."""
    return index if index < SURROGATES[0] else index + _GAP


def sweep(matches) -> CharSet:
    """The set of characters covered by ``matches`` (an iterator of matches over :func:`all_scalars`).

    A run that straddles the surrogate gap becomes one range; :class:`CharSet` cuts the
    surrogates out again.
    """
    return CharSet((_cp(m.start()), _cp(m.end() - 1)) for m in matches)


_CATEGORY_PATTERNS = {
    "digit": r"\d+", "not_digit": r"\D+",
    "space": r"\s+", "not_space": r"\S+",
    "word": r"\w+", "not_word": r"\W+",
}


@byte_lru_cache("automata.unicode_sets.category_set", 8 << 20)
def category_set(name: str, ascii: bool) -> CharSet:
    """The set ``re`` matches with ``\\d``, ``\\D``, ``\\s``, ``\\S``, ``\\w`` or ``\\W``.

    Parameters
    ----------
    name : {"digit", "not_digit", "space", "not_space", "word", "not_word"}
    ascii : bool
        True for the meaning under ``re.ASCII``, False for the Unicode meaning.

    Returns
    -------
    CharSet
    """
    flags = re.ASCII if ascii else 0
    return sweep(re.finditer(_CATEGORY_PATTERNS[name], all_scalars(), flags))


def word_set(ascii: bool) -> CharSet:
    """The word characters that ``\\b`` and ``\\B`` look at."""
    return category_set("word", ascii)


@byte_lru_cache("automata.unicode_sets.check_property", 1 << 20)
def check_property(token: str) -> None:
    """Raise ValueError (with ``regex``'s message) unless ``regex`` knows the property escape."""
    import regex

    try:
        regex.compile(token)
    except regex.error as exc:
        raise ValueError(getattr(exc, "msg", str(exc))) from None


@byte_lru_cache("automata.unicode_sets.property_set", 16 << 20)
def property_set(token: str, ignorecase: bool = False, ascii: bool = False) -> CharSet:
    """The set the third-party ``regex`` module matches with one property escape.

    Parameters
    ----------
    token : str
        The escape exactly as written, e.g. ``r"\\p{L}"``, ``r"\\P{Script=Latin}"`` or ``r"\\pN"``.
    ignorecase, ascii : bool
        Whether ``regex.IGNORECASE`` / ``regex.ASCII`` are in force where the escape occurs (both
        change what ``regex`` matches, e.g. ``(?i)\\p{Lu}`` also matches lower-case letters).

    Returns
    -------
    CharSet

    Raises
    ------
    ValueError
        When ``regex`` does not know the property (the message is ``regex``'s).
    """
    import regex

    flags = (regex.IGNORECASE if ignorecase else 0) | (regex.ASCII if ascii else 0)
    check_property(token)
    compiled = regex.compile(f"(?:{token})+", flags)
    return sweep(compiled.finditer(all_scalars()))


def _case_fixes() -> dict:
    fixes = getattr(_sre_compiler, "_EXTRA_CASES", None)
    if fixes is None:  # pragma: no cover - CPython 3.10
        fixes = getattr(_sre_compiler, "_ignorecase_fixes", {})
    return fixes


@byte_lru_cache("automata.unicode_sets.cased_universe", 8 << 20)
def cased_universe() -> tuple[str, tuple[int, ...], CharSet]:
    """The code points where ``re.IGNORECASE`` can make a difference.

    That is every code point that ``_sre`` considers cased (its simple lower or upper case mapping
    differs), every simple lower-case image of one, and every entry of the extra case
    equivalences ``re`` adds (``re._casefix``). For a character outside this set, case-insensitive
    matching of any literal, class or category is the same as case-sensitive matching; inside it,
    the only exact answer is to ask the compiled pattern.

    Returns
    -------
    (str, tuple of int, CharSet)
        The members as one string in code point order, as code points, and as a set.
    """
    cased = [x for x in filter(_sre.unicode_iscased, range(0x110000))
             if not SURROGATES[0] <= x <= SURROGATES[1]]
    members = set(cased)
    members.update(_sre.unicode_tolower(x) for x in cased)
    for ch in map(chr, cased):
        for image in (ch.lower(), ch.upper()):
            if len(image) == 1:
                members.add(ord(image))
    for key, values in _case_fixes().items():
        members.add(key)
        members.update(values)
    for x in range(0x80):
        if _sre.ascii_iscased(x):
            members.add(x)
            members.add(_sre.ascii_tolower(x))
    points = tuple(sorted(members))
    return "".join(map(chr, points)), points, CharSet((x, x) for x in points)


def universe_sweep(compiled) -> CharSet:
    """Which members of :func:`cased_universe` the compiled one-or-more-repeat ``compiled`` matches."""
    text, points, _ = cased_universe()
    ranges = []
    for m in compiled.finditer(text):
        start, end = m.span()
        lo = prev = points[start]
        for x in points[start + 1:end]:
            if x != prev + 1:
                ranges.append((lo, prev))
                lo = x
            prev = x
        ranges.append((lo, prev))
    return CharSet(ranges)
