"""Number texts against exact arithmetic: Python ints, Decimal and Fraction."""

import json
import random
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import Budget, BudgetExceeded
from tokenfsm.schema.numbers import (
    integer_bounds, integer_range, json_integer, json_number, multiple_of, number_range,
    number_schema,
)

CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")
NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")

HUGE = 10 ** 30
bounds = st.one_of(st.none(), st.integers(-1000, 1000), st.integers(-HUGE, HUGE),
                   st.sampled_from([0, -1, 1, 9, 10, 99, 100, HUGE, -HUGE, 10 ** 31 - 1]))


def near(*values):
    """Integers around the given ones (the boundary cases of the digit splitting)."""
    out = set()
    for v in values:
        if v is not None:
            out.update(v + d for d in (-11, -10, -2, -1, 0, 1, 2, 9, 10, 11))
            out.update({-v, v * 10, v // 10})
    return out


def test_grammars_are_the_json_grammar():
    assert json_number() == DFA.from_regex(NUMBER.pattern)
    assert json_integer() == DFA.from_regex(CANONICAL_INT.pattern)
    assert integer_range() == json_integer()


@given(lo=bounds, hi=bounds, extra=st.lists(st.integers(-HUGE * 10, HUGE * 10), max_size=20),
       seed=st.integers(0, 2 ** 32))
def test_integer_range_matches_int_comparison(lo, hi, extra, seed):
    d = integer_range(lo, hi)
    for n in near(lo, hi, 0) | set(extra):
        inside = (lo is None or n >= lo) and (hi is None or n <= hi)
        assert d.accepts(str(n)) == inside, (lo, hi, n)
        assert d.accepts(json.dumps(n)) == inside
    assert d.accepts("-0") == ((lo is None or lo <= 0) and (hi is None or hi >= 0))
    for bad in ("007", "+1", "1.0", "1e3", ""):
        assert not d.accepts(bad)
    if d.is_empty():
        assert lo is not None and hi is not None and lo > hi
        return
    rng = random.Random(seed)
    for _ in range(5):
        text = d.sample(rng, max_length=40)
        assert CANONICAL_INT.fullmatch(text)
        n = int(text)
        assert (lo is None or n >= lo) and (hi is None or n <= hi)


def test_integer_range_exact_equivalence_small():
    for lo, hi in [(0, 0), (-5, 120), (7, 7), (-99, -10), (95, 1003)]:
        expected = DFA.union_all([DFA.literal(str(n)) for n in range(lo, hi + 1)])
        if lo <= 0 <= hi:
            expected = expected | DFA.literal("-0")
        assert integer_range(lo, hi) == expected


def test_integer_bounds():
    assert integer_bounds(1.5, 10, exclusive_maximum=True) == (2, 9)
    assert integer_bounds(2, 2.0, exclusive_minimum=True) == (3, 2)
    assert integer_bounds(-0.5, None) == (0, None)
    assert integer_bounds("1e30", None) == (HUGE, None)


# ------------------------------------------------------------------ decimal bounds

decimals = st.decimals(min_value=-10 ** 6, max_value=10 ** 6, places=3, allow_nan=False,
                       allow_infinity=False)


plain_numbers = st.builds(
    lambda sign, i, f: sign + i + ("." + f if f else ""),
    st.sampled_from(["", "-"]),
    st.one_of(st.just("0"), st.from_regex(r"[1-9][0-9]{0,7}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[0-9]{1,6}", fullmatch=True)),
)
exp_numbers = st.builds(
    lambda mant, e: mant + e, plain_numbers,
    st.one_of(st.just(""), st.from_regex(r"[eE][+-]?[0-9]{1,3}", fullmatch=True)))


def spellings_near(b: Decimal):
    """Texts for values at and around a bound, with extra trailing zeros."""
    out = set()
    for delta in (Decimal(0), Decimal("0.001"), Decimal("-0.001"), Decimal("0.0001"),
                  Decimal("-0.0001"), Decimal(1), Decimal(-1)):
        v = b + delta
        t = format(v, "f")
        if t.startswith("-0") and v == 0:
            t = t[1:]
        out.add(t)
        if "." in t:
            out.add(t + "00")
        else:
            out.add(t + ".0")
    return out


def value_of(text: str) -> Decimal:
    """The value of a JSON number; one whose exponent is past Decimal's range (a sample may
    write ``0.0E085009070000705058``) as a value that far from every bound, zero kept zero."""
    try:
        return Decimal(text)
    except InvalidOperation:
        mantissa, exponent = re.split("[eE]", text)
        if Decimal(mantissa) == 0:
            return Decimal(0)
        far = Decimal("1e-999999" if exponent.startswith("-") else "1e999999")
        return -far if mantissa.startswith("-") else far


def in_bounds(x, lo, hi, xlo, xhi):
    return ((lo is None or (x > lo if xlo else x >= lo))
            and (hi is None or (x < hi if xhi else x <= hi)))


@given(lo=st.one_of(st.none(), decimals), hi=st.one_of(st.none(), decimals), xlo=st.booleans(),
       xhi=st.booleans(), texts=st.lists(plain_numbers, max_size=15),
       etexts=st.lists(exp_numbers, max_size=8), seed=st.integers(0, 2 ** 32))
def test_number_range_matches_decimal_comparison(lo, hi, xlo, xhi, texts, etexts, seed):
    d = number_range(lo, hi, xlo, xhi)
    candidates = set(texts)
    for b in (lo, hi):
        if b is not None:
            candidates |= spellings_near(b)
    for t in candidates:
        assert d.accepts(t) == in_bounds(Decimal(t), lo, hi, xlo, xhi), (lo, hi, xlo, xhi, t)
    zero_only = all(b is None or b == 0 for b in (lo, hi))
    for t in etexts:
        if zero_only or not re.search("[eE]", t):
            assert d.accepts(t) == in_bounds(Decimal(t), lo, hi, xlo, xhi), (lo, hi, t)
        else:
            assert not d.accepts(t)  # exponent forms dropped under non-zero bounds (sound)
    if d.is_empty():
        return
    rng = random.Random(seed)
    for _ in range(5):
        t = d.sample(rng, max_length=30)
        assert NUMBER.fullmatch(t)
        assert in_bounds(value_of(t), lo, hi, xlo, xhi)


def test_number_range_examples():
    d = number_range(0, 1.5)
    assert d.accepts("1.50") and d.accepts("0") and d.accepts("-0.0") and d.accepts("1.4999")
    assert not d.accepts("1.51") and not d.accepts("-0.1") and not d.accepts("1e0")
    g = number_range(minimum=0, exclusive_minimum=True)
    assert g.accepts("1e-300") and g.accepts("0.001") and not g.accepts("0e5") and not g.accepts("-0")
    assert number_range(0.1, 0.1).accepts("0.1000") and not number_range(0.1, 0.1).accepts("0.10001")
    tiny = number_range(Decimal("1E-40"), exclusive_minimum=True)
    assert tiny.accepts("0." + "0" * 39 + "11") and not tiny.accepts("0." + "0" * 39 + "1")


# ------------------------------------------------------------------ multipleOf

STEPS = [7, 3, 10, 12, 1000000, "0.01", "0.5", "2.5", "0.3", "1e-8", "0.075", 1]


@given(k=st.sampled_from(STEPS), texts=st.lists(plain_numbers, max_size=20),
       ints=st.lists(st.integers(-10 ** 9, 10 ** 9), max_size=10), seed=st.integers(0, 2 ** 32))
def test_multiple_of_matches_fraction_arithmetic(k, texts, ints, seed):
    d = multiple_of(k)
    f = Fraction(Decimal(str(k)))
    candidates = set(texts) | {str(n) for n in ints}
    candidates |= {format(Decimal(str(k)) * m, "f") for m in (0, 1, 3, -7, 40)}
    for t in candidates:
        assert d.accepts(t) == (Fraction(Decimal(t)) % f == 0), (k, t)
    rng = random.Random(seed)
    for _ in range(5):
        t = d.sample(rng, max_length=25)
        assert NUMBER.fullmatch(t) and Fraction(Decimal(t)) % f == 0
    assert not d.accepts("1e3")


@given(k=st.integers(1, 40), lo=st.integers(-500, 500), span=st.integers(0, 500))
def test_integer_multiple_of_with_bounds(k, lo, span):
    d = multiple_of(k) & integer_range(lo, lo + span)
    for n in range(lo - 3, lo + span + 4, max(1, span // 50)):
        assert d.accepts(str(n)) == (n % k == 0 and lo <= n <= lo + span)


def test_multiple_of_budget_and_errors():
    with pytest.raises(BudgetExceeded):
        multiple_of(10 ** 9 + 7, budget=Budget(max_states=10_000))
    with pytest.raises(ValueError):
        multiple_of(0)
    with pytest.raises(ValueError):
        multiple_of(Fraction(1, 3))
    assert multiple_of(10 ** 6).num_states < 20


def test_number_schema_keywords():
    d = number_schema(integer=True, minimum=1, exclusive_maximum=10, multiple_of=3)
    assert {n for n in range(-5, 20) if d.accepts(str(n))} == {3, 6, 9}
    assert not d.accepts("3.0")
    d4 = number_schema(minimum=0, exclusive_minimum=True, maximum=1)  # draft 4 booleans
    assert not d4.accepts("0") and d4.accepts("1") and d4.accepts("0.5")
    d6 = number_schema(exclusive_minimum=0, maximum=1, exclusive_maximum=1)
    assert not d6.accepts("0") and not d6.accepts("1") and d6.accepts("0.999")
    assert number_schema() == json_number()
    money = number_schema(minimum=0, multiple_of=0.01)
    assert money.accepts("12.30") and money.accepts("0") and not money.accepts("12.301")
    assert money.accepts("-0") and not money.accepts("-1")


@pytest.mark.parametrize("kw", [{}, {"minimum": -3, "exclusive_maximum": 7.5}, {"multiple_of": 3},
                                {"multiple_of": 0.5, "maximum": 4}, {"exclusive_minimum": 0}])
def test_integer_zero_fraction(kw):
    """With zero_fraction, integers may carry one '.0' (same value); nothing else changes."""
    plain = number_schema(integer=True, **kw)
    d = number_schema(integer=True, zero_fraction=True, **kw)
    lo, hi = kw.get("minimum"), kw.get("exclusive_maximum")
    for n in range(-12, 13):
        ok = ((lo is None or n >= lo) and (hi is None or n < hi) and n > kw.get("exclusive_minimum", -99)
              and ("maximum" not in kw or n <= kw["maximum"])
              and ("multiple_of" not in kw or Fraction(n) % Fraction(str(kw["multiple_of"])) == 0))
        assert plain.accepts(str(n)) == ok and d.accepts(str(n)) == ok, n
        assert not plain.accepts(f"{n}.0")
        assert d.accepts(f"{n}.0") == ok, n
        assert not d.accepts(f"{n}.00") and not d.accepts(f"{n}.5") and not d.accepts(f"{n}e0")


def test_single_character_steps():
    """'-', '.', 'e' are one-character transitions: every prefix of a number is live."""
    d = json_number()
    text = "-12.50e+3"
    m = d.minimize()
    s = m.start
    for ch in text:
        s = m.delta[s][m.class_of(ch)]
        assert s != 0
    assert s in m.accepting
