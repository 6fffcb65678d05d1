"""Conversion to and from interegular FSMs."""

from __future__ import annotations

import interegular
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracles import automata, fewer, fields, test_strings
from tokenfsm.automata import DFA, CharSet
from tokenfsm.automata.interop import to_interegular

PATTERNS = [
    "a", "abc", "[ab]c*", "zy*x", "a|b|", "(ab|a)(bc|c)", "x{2,4}", "x{3}", "x{2,}", "[^a-c]+",
    "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])",
    r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"',
    r"(-)?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-][0-9]+)?",
    r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}",
    "(true|false|null)", "é+😀?", "[α-ω]{1,3}", "[\u3000-\u303f]。", "(a|b)*a(a|b){3}",
    r"[\s\S]{0,20}", "[^\n]*\n", "a?b?c?", "(abc)*|(ab)*",
]


@pytest.mark.parametrize("p", PATTERNS)
def test_from_interegular_equals_from_regex(p):
    fsm = interegular.parse_pattern(p).to_fsm()
    ours = DFA.from_regex(p)
    theirs = DFA.from_interegular(fsm)
    assert theirs == ours
    assert fields(theirs) == fields(ours)
    assert fields(DFA.from_interegular(fsm.reduce())) == fields(ours)


@pytest.mark.parametrize("p", PATTERNS)
def test_from_interegular_agrees_with_fsm_accepts(p):
    fsm = interegular.parse_pattern(p).to_fsm()
    d = DFA.from_interegular(fsm)

    @fewer(6)
    @given(st.lists(test_strings | st.text(alphabet="abcxyz0129-.@\"\\é😀\n", max_size=8), min_size=1, max_size=10))
    def check(ss):
        for s in ss + d.examples(5, max_length=10):
            assert d.accepts(s) == fsm.accepts(s), s

    check()


@fewer(2)
@given(automata(), st.lists(test_strings, min_size=1, max_size=8))
def test_to_interegular_round_trip(a, ss):
    d, f = a
    m = d.minimize()
    listed = sum(len(c) for c in m.classes) - max(len(c) for c in m.classes)
    if listed > 20_000:
        # too slow to list one by one here; the limit is exact
        with pytest.raises(ValueError, match="max_listed"):
            to_interegular(m, max_listed=listed - 1)
        return
    fsm = d.to_interegular()
    back = DFA.from_interegular(fsm)
    assert fields(back) == fields(m)
    for s in ss + m.examples(5, max_length=8):
        assert fsm.accepts(s) == f(s), s


def test_to_interegular_small_and_empty():
    d = DFA.from_regex("[ab]c*")
    fsm = d.to_interegular()
    assert fsm.accepts("acc") and fsm.accepts("b") and not fsm.accepts("ca") and not fsm.accepts("")
    e = DFA.empty().to_interegular()
    assert not e.accepts("") and not e.accepts("a")
    assert DFA.from_interegular(e).is_empty()
    u = DFA.universal().to_interegular()
    assert u.accepts("") and u.accepts("😀x")
    assert DFA.from_interegular(u).is_universal()


def test_to_interegular_refuses_huge_listed_classes():
    d = DFA.from_charset(CharSet.range(0, 0x7FFFF)) + DFA.from_charset(CharSet.of("a"))
    with pytest.raises(ValueError, match="max_listed"):
        d.to_interegular()
