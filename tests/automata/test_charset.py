"""CharSet against Python sets of code points, and refine() against its definition."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracles import POINTS
from tokenfsm.automata import CharSet, refine

MAX = 0x10FFFF
SURR = range(0xD800, 0xE000)
# interesting values: the pool's boundaries, their neighbours, the surrogate edges
PROBES = sorted({x + d for x in POINTS + [0xD800, 0xDFFF, 0x10FFFF] for d in (-1, 0, 1) if 0 <= x + d <= MAX})

bounds = st.one_of(st.sampled_from(PROBES), st.integers(0, MAX))
ranges = st.lists(st.tuples(bounds, bounds).map(sorted), max_size=5)


def members(rs) -> set[int]:
    """The oracle set restricted to the probes: which probes a list of ranges covers."""
    return {x for x in PROBES if x not in SURR and any(lo <= x <= hi for lo, hi in rs)}


def probe(cs: CharSet) -> set[int]:
    return {x for x in PROBES if x not in SURR and chr(x) in cs}


def exact_len(rs) -> int:
    pts = set()
    for lo, hi in rs:
        for a, b in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)):
            if a <= b:
                pts.add((a, b))
    # union length by sweeping
    total, cur_lo, cur_hi = 0, None, None
    for a, b in sorted(pts):
        if cur_hi is None or a > cur_hi + 1:
            if cur_hi is not None:
                total += cur_hi - cur_lo + 1
            cur_lo, cur_hi = a, b
        else:
            cur_hi = max(cur_hi, b)
    if cur_hi is not None:
        total += cur_hi - cur_lo + 1
    return total


@given(ranges)
def test_canonical_ranges(rs):
    cs = CharSet(rs)
    r = cs.ranges
    assert all(lo <= hi for lo, hi in r)
    assert all(r[i][1] + 1 < r[i + 1][0] for i in range(len(r) - 1)), "sorted, disjoint, not touching"
    assert not any(lo <= 0xDFFF and hi >= 0xD800 for lo, hi in r), "no surrogates"
    assert probe(cs) == members(rs)
    assert len(cs) == exact_len(rs)
    assert CharSet(reversed(rs)) == cs and hash(CharSet(list(rs) + list(rs))) == hash(cs)


@given(ranges, ranges)
def test_algebra_against_sets(ra, rb):
    a, b = CharSet(ra), CharSet(rb)
    A, B = members(ra), members(rb)
    universe = {x for x in PROBES if x not in SURR}
    assert probe(a | b) == A | B
    assert probe(a & b) == A & B
    assert probe(a - b) == A - B
    assert probe(a ^ b) == A ^ B
    assert probe(~a) == universe - A
    assert ~~a == a and (a | ~a) == CharSet.any() and not (a & ~a)
    assert len(a | b) + len(a & b) == len(a) + len(b)
    assert len(~a) == len(CharSet.any()) - len(a)
    assert a.isdisjoint(b) == (not (a & b)) and (a <= b) == (a - b == CharSet.empty())
    assert (a & b).ranges == CharSet((a & b).ranges).ranges, "intersection stays canonical"


@given(ranges, st.integers(0, 2**32))
def test_members_and_samples(rs, seed):
    cs = CharSet(rs)
    if not cs:
        with pytest.raises(ValueError):
            cs.min()
        return
    rng = random.Random(seed)
    assert cs.min() == cs.ranges[0][0]
    assert cs.representative() in cs
    for _ in range(5):
        assert cs.sample(rng) in cs


@given(ranges)
def test_to_class_is_a_python_regex_of_the_set(rs):
    cs = CharSet(rs)
    if not cs:
        assert cs.to_class() == "[]"
        return
    pat = re.compile(cs.to_class())
    for x in PROBES:
        if x not in SURR:
            assert (pat.fullmatch(chr(x)) is not None) == (x in members(rs)), (cs.to_class(), hex(x))


def test_constructors():
    assert CharSet.of("a", "c", 98).ranges == ((97, 99),)
    assert CharSet.from_chars("hello").ranges == ((101, 101), (104, 104), (108, 108), (111, 111))
    assert CharSet.range("a", "z") == CharSet([(97, 122)])
    assert len(CharSet.any()) == 0x110000 - 0x800
    assert CharSet.range(0xD000, 0xE000).ranges == ((0xD000, 0xD7FF), (0xE000, 0xE000))
    assert not CharSet.range(0xD800, 0xDFFF)
    assert CharSet([(5, 3)]) == CharSet.empty()
    assert list(CharSet.of("a", "c").chars()) == ["a", "c"]
    with pytest.raises(AttributeError):
        CharSet.of("a").ranges = ()


@pytest.mark.parametrize("bad", [[(-1, 5)], [(0, 0x110000)], [(0x10FFFF, 0x110000)], [(-5, -1)]])
def test_rejects_out_of_range(bad):
    with pytest.raises(ValueError):
        CharSet(bad)


def test_rejects_bad_characters():
    with pytest.raises(ValueError):
        CharSet.of("ab")
    with pytest.raises(ValueError):
        CharSet.range(0, 0x110000)
    with pytest.raises(ValueError):
        CharSet.of(-1)


@given(st.lists(ranges.map(CharSet), max_size=5))
def test_refine_is_the_coarsest_separating_partition(sets):
    classes = refine(sets)
    assert all(classes)
    assert sum(len(c) for c in classes) == len(CharSet.any())
    u = CharSet.empty()
    for c in classes:
        assert not (u & c)
        u = u | c
    assert u == CharSet.any()
    assert [c.min() for c in classes] == sorted(c.min() for c in classes)
    # each set is a union of classes, and no two classes have the same membership signature
    sigs = []
    for c in classes:
        sig = tuple(bool(c & s) for s in sets)
        assert all((c <= s) == bit for s, bit in zip(sets, sig)), "a class lies in or out of every set"
        sigs.append(sig)
    assert len(set(sigs)) == len(sigs)
