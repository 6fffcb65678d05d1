"""JSON number and integer texts as automata, with exact bounds and ``multipleOf``.

A JSON Schema such as ``{"type": "integer", "minimum": 3, "maximum": 1000}`` becomes the automaton of
the number texts a model may emit for it. Bounds are compiled into the digits themselves, exactly,
for integers of any size and for decimal bounds, so a sampler can never start a number it cannot
finish within range.

Grammar (RFC 8259): ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?``. Digits are ASCII only;
``-``, ``.``, ``e`` are single-character steps.

Choices (sound restrictions, never unsound ones):

* ``type: integer`` emits canonical integer spellings only, ``-?(0|[1-9][0-9]*)``, as xgrammar and
  llguidance do, optionally (``zero_fraction``) followed by one ``.0``. Draft 6+ also calls
  ``1.00`` and ``1e2`` integers; those spellings are valid but never needed, and admitting all of
  them exactly is not regular (``5e-1`` vs ``50e-1``).
* Under a bound other than zero, exponent forms are dropped: the set of texts ``m e k`` with value
  ``<= 100`` compares the exponent's digits with the number of leading zeros of the fraction, which
  no finite automaton can do. Bounds of exactly zero (``minimum: 0``, ``exclusiveMinimum: 0``) only
  look at the sign and the mantissa, so exponent forms stay there.
* ``multipleOf`` is exact on the decimal value of non-exponent texts (``0.3`` *is* a multiple of
  ``0.1``, unlike float division): with ``k = c * 10**e`` (``c`` without trailing zeros), the text's
  digits times ``10**-e`` must be divisible by ``c``, read by a residue automaton of about
  ``c * (max(0, -e) + 2)`` states; exponent forms are dropped.

Example
-------
>>> d = integer_range(-5, 120)
>>> d.accepts("-5"), d.accepts("120"), d.accepts("121"), d.accepts("007")
(True, True, False, False)
>>> number_range(0, 1.5).accepts("1.50"), number_range(0, 1.5).accepts("1.51")
(True, False)
>>> (multiple_of(0.25) & number_range(0, 1)).accepts("0.75")
True

The range splitting is the classic digit-by-digit construction (as in regex range generators and
regex-syntax's ``Utf8Sequences``), built here as regex trees rather than pasted strings.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Iterable, Union

from tokenfsm.automata.charset import CharSet, refine
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import Budget, BudgetExceeded, DEFAULT_BUDGET
from tokenfsm.automata.regex_ast import EMPTY, Alt, Chars, Node, Repeat, Seq

__all__ = [
    "json_number", "json_integer", "integer_range", "integer_bounds", "number_range",
    "multiple_of", "number_schema", "digit_class", "fixed_width_range",
]

Number = Union[int, float, Decimal, Fraction, str]

NOTHING: Node = Alt(())
DIGIT = CharSet.range("0", "9")
NONZERO = CharSet.range("1", "9")


def _c(s: str) -> Node:
    return Chars(CharSet.from_chars(s))


def _lit(s: str) -> Node:
    return Seq(tuple(Chars(CharSet.of(ch)) for ch in s))


def _star(cs: CharSet) -> Node:
    return Repeat(Chars(cs), 0, None)


def _opt(node: Node) -> Node:
    return Repeat(node, 0, 1)


def digit_class(lo: int, hi: int, base: int = 10) -> CharSet:
    """The characters of the digits with values ``lo..hi`` in ``base`` (hex letters in both cases).

    >>> digit_class(9, 11, 16).to_class()
    '[9ABab]'
    """
    ranges = []
    for v0, v1, first in ((0, 9, "0"), (10, 35, "a"), (10, 35, "A")):
        a, b = max(lo, v0), min(hi, v1, base - 1)
        if a <= b:
            ranges.append((ord(first) + a - v0, ord(first) + b - v0))
    return CharSet(ranges)


def fixed_width_range(lo: int, hi: int, width: int, base: int = 10) -> Node:
    """Strings of exactly ``width`` digits (leading zeros allowed) whose value is in ``lo..hi``.

    The digit-by-digit split: the first digit is either on the boundary (recurse) or strictly
    inside (anything may follow), so the tree has ``O(width)`` nodes.

    Parameters
    ----------
    lo, hi : int
        Inclusive value bounds, ``0 <= lo``, ``hi < base ** width``.
    width : int
    base : int
        10 for decimal digits, 16 for hexadecimal (either letter case).

    Returns
    -------
    Node
        A regex tree (``Alt(())`` when the range is empty).
    """
    if lo > hi:
        return NOTHING
    if width == 0:
        return EMPTY
    p = base ** (width - 1)
    a, ra = divmod(lo, p)
    b, rb = divmod(hi, p)
    if a == b:
        return Seq((Chars(digit_class(a, a, base)), fixed_width_range(ra, rb, width - 1, base)))
    parts = []
    first_full, last_full = a, b
    if ra != 0:
        parts.append(Seq((Chars(digit_class(a, a, base)), fixed_width_range(ra, p - 1, width - 1, base))))
        first_full = a + 1
    if rb != p - 1:
        last_full = b - 1
    if first_full <= last_full:
        any_digit = Chars(digit_class(0, base - 1, base))
        parts.append(Seq((Chars(digit_class(first_full, last_full, base)),
                          Repeat(any_digit, width - 1, width - 1))))
    if rb != p - 1:
        parts.append(Seq((Chars(digit_class(b, b, base)), fixed_width_range(0, rb, width - 1, base))))
    return Alt(tuple(parts))


def _canonical(lo: int, hi: int | None) -> Node:
    """Canonical decimal spellings (no leading zeros) of the integers in ``lo..hi``, ``lo >= 0``."""
    if hi is not None and lo > hi:
        return NOTHING
    la = len(str(lo))
    if hi is None:
        return Alt((fixed_width_range(lo, 10 ** la - 1, la),
                    Seq((Chars(NONZERO), Repeat(Chars(DIGIT), la, None)))))
    lb = len(str(hi))
    if la == lb:
        return fixed_width_range(lo, hi, la)
    parts = [fixed_width_range(lo, 10 ** la - 1, la)]
    if lb - la >= 2:
        parts.append(Seq((Chars(NONZERO), Repeat(Chars(DIGIT), la, lb - 2))))
    parts.append(fixed_width_range(10 ** (lb - 1), hi, lb))
    return Alt(tuple(parts))


INT = Alt((_lit("0"), Seq((Chars(NONZERO), _star(DIGIT)))))
FRAC = Seq((_lit("."), Repeat(Chars(DIGIT), 1, None)))
EXP = Seq((_c("eE"), _opt(_c("+-")), Repeat(Chars(DIGIT), 1, None)))
MANTISSA = Seq((INT, _opt(FRAC)))


@lru_cache(maxsize=None)
def json_number() -> DFA:
    """Every JSON number text: ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?``."""
    return DFA.from_ast(Seq((_opt(_lit("-")), MANTISSA, _opt(EXP))))


@lru_cache(maxsize=None)
def json_integer() -> DFA:
    """Canonical integer texts ``-?(0|[1-9][0-9]*)`` (the spelling emitted for ``type: integer``)."""
    return integer_range()


def integer_range(lo: int | None = None, hi: int | None = None, budget: Budget | None = None) -> DFA:
    """Canonical integer texts whose value lies in ``lo..hi`` (inclusive; None leaves a side open).

    ``-0`` is accepted whenever 0 is in range (JSON allows it and it decodes to 0), so
    ``integer_range()`` is exactly ``-?(0|[1-9][0-9]*)``. Exact for integers of any size.

    Parameters
    ----------
    lo, hi : int or None
    budget : Budget, optional

    Returns
    -------
    DFA
    """
    for v in (lo, hi):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError(f"integer bounds must be int or None, got {v!r}")
    parts = []
    nonneg_lo = 0 if lo is None else max(lo, 0)
    if hi is None or hi >= nonneg_lo:
        parts.append(_canonical(nonneg_lo, hi))
    # "-m" has value -m; lo <= -m <= hi  <=>  max(0, -hi) <= m <= -lo
    neg_lo = 0 if hi is None else max(0, -hi)
    neg_hi = None if lo is None else -lo
    if neg_hi is None or neg_hi >= neg_lo:
        parts.append(Seq((_lit("-"), _canonical(neg_lo, neg_hi))))
    return DFA.from_ast(Alt(tuple(parts)), budget=budget)


def _to_fraction(x: Number) -> Fraction:
    """Exact value of a bound; floats are read as their shortest repr (what the schema said)."""
    if isinstance(x, bool):
        raise TypeError(f"expected a number, got {x!r}")
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"bound must be finite, got {x!r}")
        return Fraction(Decimal(repr(x)))
    if isinstance(x, (str, Decimal)):
        d = Decimal(x)
        if not d.is_finite():
            raise ValueError(f"bound must be finite, got {x!r}")
        return Fraction(d)
    return Fraction(x)


def integer_bounds(minimum: Number | None = None, maximum: Number | None = None,
                   exclusive_minimum: bool = False, exclusive_maximum: bool = False
                   ) -> tuple[int | None, int | None]:
    """The integer range ``lo..hi`` equivalent to decimal bounds on an integer.

    >>> integer_bounds(1.5, 10, exclusive_maximum=True)
    (2, 9)
    """
    lo = hi = None
    if minimum is not None:
        m = _to_fraction(minimum)
        lo = math.floor(m) + 1 if exclusive_minimum else math.ceil(m)
    if maximum is not None:
        m = _to_fraction(maximum)
        hi = math.ceil(m) - 1 if exclusive_maximum else math.floor(m)
    return lo, hi


# ---------------------------------------------------------------- decimal comparisons
# A non-exponent text is  sign? I ("." D)?  with magnitude I.D. Comparing the magnitude with a bound
# M = bi.bf (bf: fraction digits without trailing zeros) splits on the integer part: I > bi decides
# at once, I == bi defers to comparing 0.D with 0.bf digit by digit (D padded with zeros).

def _split(m: Fraction) -> tuple[int, str]:
    """Integer part and fraction digits (no trailing zeros) of a non-negative finite decimal."""
    bi = math.floor(m)
    rest = m - bi
    if rest == 0:
        return bi, ""
    den = rest.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        raise ValueError(f"bound {m} is not a finite decimal")
    k = max(twos, fives)
    digits = str(rest.numerator * 10 ** k // rest.denominator).rjust(k, "0")
    return bi, digits.rstrip("0")


def _fraction_cmp(bf: str, op: str) -> Node:
    """Optional fraction suffixes ``("." D)?`` with ``0.D op 0.bf`` (op in ge, gt, le, lt)."""
    any_digits = _star(DIGIT)
    if not bf:
        if op == "ge":
            return _opt(FRAC)
        if op == "gt":
            return Seq((_lit("."), any_digits, Chars(NONZERO), any_digits))
        if op == "le":
            return _opt(Seq((_lit("."), Repeat(_c("0"), 1, None))))
        return NOTHING
    node: Node
    n = len(bf)
    if op in ("ge", "gt"):
        # equal through all of bf: anything (ge) or something non-zero (gt) may follow
        node = any_digits if op == "ge" else Seq((any_digits, Chars(NONZERO), any_digits))
        for i in reversed(range(n)):
            d = int(bf[i])
            eq = Seq((_c(bf[i]), node))
            node = Alt((Seq((Chars(digit_class(d + 1, 9)), any_digits)), eq)) if d < 9 else eq
        return Seq((_lit("."), node))
    # le / lt: stopping early with an equal prefix is smaller (bf ends in a non-zero digit)
    node = _star(CharSet.of("0")) if op == "le" else NOTHING
    for i in reversed(range(n)):
        d = int(bf[i])
        rest = node if i == n - 1 else Alt((EMPTY, node))
        less = Seq((Chars(digit_class(0, d - 1)), any_digits)) if d > 0 else NOTHING
        node = Alt((less, Seq((_c(bf[i]), rest))))
    return Alt((EMPTY, Seq((_lit("."), node))))


def _magnitude_cmp(m: Fraction, op: str) -> Node:
    """Unsigned non-exponent texts whose value compares to ``m`` by ``op``."""
    if m < 0:
        return MANTISSA if op in ("ge", "gt") else NOTHING
    bi, bf = _split(m)
    if op in ("ge", "gt"):
        other = Seq((_canonical(bi + 1, None), _opt(FRAC)))
    else:
        other = Seq((_canonical(0, bi - 1), _opt(FRAC))) if bi > 0 else NOTHING
    return Alt((other, Seq((_lit(str(bi)), _fraction_cmp(bf, op)))))


_ZERO_MANT = Seq((_lit("0"), _opt(Seq((_lit("."), Repeat(_c("0"), 1, None))))))
_NONZERO_MANT = Alt((Seq((Chars(NONZERO), _star(DIGIT), _opt(FRAC))),
                     Seq((_lit("0."), _star(DIGIT), Chars(NONZERO), _star(DIGIT)))))
_FLIP = {"ge": "le", "gt": "lt", "le": "ge", "lt": "gt"}


def _compare(bound: Fraction, op: str) -> Node:
    """Number texts ``x`` with ``x op bound``. Exact; exponent forms only when ``bound == 0``."""
    if bound == 0:
        e = _opt(EXP)
        any_m = Seq((MANTISSA, e))
        zero, nonzero = Seq((_ZERO_MANT, e)), Seq((_NONZERO_MANT, e))
        minus = _lit("-")
        table = {"ge": Alt((any_m, Seq((minus, zero)))), "gt": nonzero,
                 "le": Alt((zero, Seq((minus, any_m)))), "lt": Seq((minus, nonzero))}
        return table[op]
    # x = +mag: compare mag with bound; x = -mag: -mag op B  <=>  mag flip(op) -B
    return Alt((_magnitude_cmp(bound, op), Seq((_lit("-"), _magnitude_cmp(-bound, _FLIP[op])))))


def number_range(minimum: Number | None = None, maximum: Number | None = None,
                 exclusive_minimum: bool = False, exclusive_maximum: bool = False,
                 budget: Budget | None = None) -> DFA:
    """JSON number texts whose exact decimal value is within the bounds.

    With no bound this is :func:`json_number`. A non-zero bound restricts the texts to
    non-exponent forms (a sound restriction, see the module docstring); zero bounds keep them.

    Parameters
    ----------
    minimum, maximum : int, float, Decimal, Fraction, str or None
        Floats are taken as their shortest ``repr`` (``0.1`` is one tenth).
    exclusive_minimum, exclusive_maximum : bool
        Whether the bounds themselves are excluded.
    budget : Budget, optional

    Returns
    -------
    DFA
    """
    parts = []
    if minimum is not None:
        parts.append(_compare(_to_fraction(minimum), "gt" if exclusive_minimum else "ge"))
    if maximum is not None:
        parts.append(_compare(_to_fraction(maximum), "lt" if exclusive_maximum else "le"))
    if not parts:
        return json_number()
    dfas = [DFA.from_ast(p, budget=budget) for p in parts]
    return DFA.intersect_all(dfas, budget=budget)


# ---------------------------------------------------------------- multipleOf

def _table_dfa(edges: list[list[tuple[CharSet, int]]], accepting: Iterable[int], start: int) -> DFA:
    """A DFA from per-state ``(label, target)`` lists (states numbered from 0, no dead state)."""
    classes = refine([cs for row in edges for cs, _ in row])
    # every label is a union of classes: the classes of a label are those whose first code
    # point it holds (found once per distinct label)
    firsts = [cls_.ranges[0][0] for cls_ in classes]
    covers: dict[CharSet, list[int]] = {}
    delta = [[0] * len(classes)]
    for row in edges:
        out = [0] * len(classes)
        for cs, t in reversed(row):          # (the first edge of a row wins, as it is read)
            ks = covers.get(cs)
            if ks is None:
                ks = covers[cs] = [k for k, c in enumerate(firsts) if c in cs]
            for k in ks:
                out[k] = t + 1
        delta.append(out)
    return DFA.from_parts(classes, delta, [a + 1 for a in accepting], start + 1).minimize()


def _residue_dfa(c: int, scale: int, fraction: bool, budget: Budget) -> DFA:
    """Digit strings ``I`` or ``I.D`` (no sign, no grammar check) with ``I.D * 10**scale`` an
    integer divisible by ``c``: the fraction has at most ``scale`` significant digits."""
    size = c * (scale + 2)
    if size > budget.max_states:
        raise BudgetExceeded(budget.max_states, size, "multiple_of")
    # state (r, j): residue r of the digits read so far; j = -1 in the integer part, else the
    # number of fraction digits read (capped at scale: only zeros may follow)
    index = {}
    for j in range(-1, scale + 1):
        for r in range(c):
            index[r, j] = len(index)
    edges: list[list[tuple[CharSet, int]]] = [[] for _ in index]
    accepting = []
    for (r, j), s in index.items():
        if j < scale:
            for d in range(10):
                edges[s].append((CharSet.of(str(d)), index[(10 * r + d) % c, j + 1 if j >= 0 else -1]))
        else:
            edges[s].append((CharSet.of("0"), s))
        if j == -1 and fraction:
            edges[s].append((CharSet.of("."), index[r, 0]))
        digits_missing = scale - max(j, 0)
        if (r * 10 ** digits_missing) % c == 0:
            accepting.append(s)
    return _table_dfa(edges, accepting, index[0, -1])


def multiple_of(k: Number, budget: Budget | None = None) -> DFA:
    """Non-exponent JSON number texts whose exact decimal value is an integer multiple of ``k``.

    Intersect with :func:`json_integer` or :func:`integer_range` for integers. ``k = c * 10**e``
    with ``c`` free of trailing zeros: for ``e >= 0`` the integer part is ``0`` or a multiple of
    ``c`` followed by ``e`` zeros (so ``multipleOf: 1000000`` is small); for ``e < 0`` a residue
    automaton of about ``c * (2 - e)`` states reads the digits. Over the budget it raises
    :class:`BudgetExceeded`.

    Parameters
    ----------
    k : int, float, Decimal, Fraction or str
        Positive finite decimal.
    budget : Budget, optional

    Returns
    -------
    DFA
    """
    budget = budget or DEFAULT_BUDGET
    f = _to_fraction(k)
    if f <= 0:
        raise ValueError(f"multipleOf must be positive, got {k!r}")
    bi, bf = _split(f)  # also checks that k is a finite decimal
    e = -len(bf)
    c = int(f * 10 ** len(bf))
    while c % 10 == 0:
        c //= 10
        e += 1
    grammar = DFA.from_ast(Seq((_opt(_lit("-")), MANTISSA)))
    zero_fraction = _opt(Seq((_lit("."), Repeat(_c("0"), 1, None))))
    if e >= 0:
        lead = DFA.from_ast(Seq((Chars(NONZERO), _star(DIGIT))))
        if c > 1:
            lead = lead & _residue_dfa(c, 0, False, budget)
        body = DFA.union_all([DFA.literal("0"), lead + DFA.literal("0" * e)])
        return DFA.concat_all([DFA.literal("-").optional(), body, DFA.from_ast(zero_fraction)],
                              budget=budget)
    res = _residue_dfa(c, -e, True, budget)
    return DFA.intersect_all([grammar, DFA.literal("-").optional() + res], budget=budget)


_multiple_of = multiple_of  # number_schema's keyword argument shadows the name


def number_schema(*, integer: bool = False, minimum: Number | None = None,
                  maximum: Number | None = None, exclusive_minimum: Number | bool | None = None,
                  exclusive_maximum: Number | bool | None = None,
                  multiple_of: Number | None = None, budget: Budget | None = None,
                  multiple_of_: Number | None = None, zero_fraction: bool = False) -> DFA:
    """The texts for ``type: number`` / ``type: integer`` with the numeric keywords of a schema.

    ``exclusive_minimum``/``exclusive_maximum`` are numbers (draft 6 and later) or booleans that
    modify ``minimum``/``maximum`` (draft 4). Both a numeric exclusive bound and an inclusive one may
    be given; both apply.

    Parameters
    ----------
    integer : bool
        Canonical integer spellings only (``type: integer``).
    minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of : number or None
    budget : Budget, optional
    multiple_of_ : number or None
        The same as ``multiple_of`` (an earlier spelling, kept for callers that use it).
    zero_fraction : bool
        With ``integer``, also accept one ``.0`` after the integer (``3.0``: JSON Schema counts a
        number with a zero fractional part as an integer; its value, and so the bounds and
        ``multipleOf``, are unchanged). One zero only: no runaway ``3.000…``.

    Returns
    -------
    DFA
    """
    lows: list[tuple[Fraction, bool]] = []
    highs: list[tuple[Fraction, bool]] = []
    for value, excl, out in ((minimum, exclusive_minimum, lows), (maximum, exclusive_maximum, highs)):
        if value is not None:
            out.append((_to_fraction(value), excl is True))
        if excl is not None and not isinstance(excl, bool):
            out.append((_to_fraction(excl), True))
    # the tightest bound of each side
    lo = max(lows, key=lambda b: (b[0], b[1])) if lows else None
    hi = min(highs, key=lambda b: (b[0], not b[1])) if highs else None
    parts: list[DFA] = []
    if integer:
        ilo, ihi = integer_bounds(lo and lo[0], hi and hi[0], bool(lo and lo[1]), bool(hi and hi[1]))
        ints = integer_range(ilo, ihi, budget=budget)
        if zero_fraction:
            ints = ints + DFA.literal(".0").optional()
        parts.append(ints)
    elif lo is not None or hi is not None:
        parts.append(number_range(lo and lo[0], hi and hi[0], bool(lo and lo[1]),
                                  bool(hi and hi[1]), budget=budget))
    else:
        parts.append(json_number())
    if multiple_of is None:
        multiple_of = multiple_of_
    if multiple_of is not None:
        parts.append(_multiple_of(multiple_of, budget=budget))
    return DFA.intersect_all(parts, budget=budget)
