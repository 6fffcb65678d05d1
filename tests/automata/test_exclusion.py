"""DFA.excluding: strings with none of a set of substrings, against ``any(x in s for x in xs)``."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracles import brzozowski, fewer, fields
from tokenfsm.automata import DFA, Budget, BudgetExceeded, CharSet

CASES = [
    ["aba", "bab"],                 # overlapping
    ["aa"],                         # self-overlapping
    ["ab", "abc"],                  # one a prefix of another
    ["abc", "bc"],                  # one a suffix of another
    ["b", "abba"],                  # one inside another
    ["abab", "baba", "aab"],
    ["。", "<|open|>", "😀x"],        # Unicode, a tool-call marker, astral
    ["</parameter>", "<|", "|>"],
    ["\n\n", "\x00"],
    ["aé😀", "é😀a", "😀aé"],
]


def strings_for(xs):
    letters = sorted({c for x in xs for c in x} | {"a", "z", "\U0010ffff", "\x00"})
    pieces = st.one_of(st.sampled_from(letters), st.sampled_from(xs),
                       st.sampled_from(xs).map(lambda x: x[:-1]), st.sampled_from(xs).map(lambda x: x[1:]))
    return st.lists(pieces, max_size=8).map("".join)


@pytest.mark.parametrize("xs", CASES, ids=lambda xs: "|".join(map(repr, xs)))
def test_excluding_against_substring_search(xs):
    d = DFA.excluding(xs)

    @fewer(3)
    @given(st.lists(strings_for(xs), min_size=1, max_size=10))
    def check(ss):
        for s in ss:
            assert d.accepts(s) == (not any(x in s for x in xs)), s

    check()


@pytest.mark.parametrize("xs", CASES[:6], ids=lambda xs: "|".join(xs))
def test_excluding_exhaustive_short_strings(xs):
    d = DFA.excluding(xs)
    letters = sorted({c for x in xs for c in x} | {"z"})
    for n in range(7):
        for t in itertools.product(letters, repeat=n):
            s = "".join(t)
            assert d.accepts(s) == (not any(x in s for x in xs)), s


@given(st.lists(st.text(alphabet="ab😀é", min_size=1, max_size=4), min_size=1, max_size=4),
       st.lists(st.text(alphabet="ab😀éz", max_size=10), min_size=1, max_size=10))
def test_excluding_random_sets(xs, ss):
    d = DFA.excluding(xs)
    for s in ss + xs + ["".join(xs)]:
        assert d.accepts(s) == (not any(x in s for x in xs)), (xs, s)


@given(st.lists(st.text(alphabet="ab😀é", min_size=1, max_size=4), min_size=1, max_size=4))
def test_excluding_is_minimal_and_order_free(xs):
    d = DFA.excluding(xs)
    bd, _, _ = brzozowski(d.classes, d.delta, d.accepting, d.start)
    assert d.num_states == len(bd) - 1
    assert fields(DFA.excluding(list(reversed(xs)))) == fields(d)
    assert fields(DFA.excluding(xs + xs)) == fields(d)
    # at most one state per proper prefix of an excluded string
    assert d.num_states <= 1 + sum(len(x) - 1 for x in xs)


@given(st.lists(st.text(alphabet="ab😀", min_size=1, max_size=3), min_size=1, max_size=3))
def test_excluding_equals_complement_of_containing(xs):
    anything = DFA.universal()
    containing = DFA.union_all([anything + DFA.literal(x) + anything for x in xs])
    assert DFA.excluding(xs) == ~containing


def test_excluding_edge_cases():
    assert DFA.excluding([]).is_universal()
    assert DFA.excluding([""]).is_empty()
    assert DFA.excluding(["a", ""]).is_empty()
    only_a = DFA.excluding(["a"])
    assert only_a == DFA.from_charset(~CharSet.of("a")).star()
    with pytest.raises(TypeError):
        DFA.excluding([b"ab"])
    with pytest.raises(ValueError):
        DFA.excluding(["a\ud800"])
    # a generator works as well as a list
    assert DFA.excluding(x for x in ["ab"]) == DFA.excluding(["ab"])


def test_excluding_budget():
    xs = ["abcdefghij" + str(i) for i in range(10)]
    with pytest.raises(BudgetExceeded) as e:
        DFA.excluding(xs, budget=Budget(max_states=15))
    assert e.value.operation == "excluding" and e.value.limit == 15 and e.value.reached == 16
    assert DFA.excluding(xs, budget=Budget(max_states=200)).accepts("abcdefghij")
