"""Regexes with large counts as lazy networks (automata.lazy_regex): the same language as
``DFA.from_regex`` (itself checked against ``re.fullmatch``) and ``re.fullmatch`` directly on the
byte walk; huge counts build at once, and what needs the flat expansion charges its budget first."""

from __future__ import annotations

import random
import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenfsm.automata import DFA, Budget, BudgetExceeded
from tokenfsm.automata.lazy_bytes import LazyBytes
from tokenfsm.automata.lazy_regex import nfa_states, regex_automaton
from tokenfsm.automata.network import expand
from tokenfsm.automata.nfa import from_ast
from tokenfsm.automata.regex_parse import parse_regex

ATOMS = ["a", "b", "[ab]", "[0-9]", "é", "😀", r"[\s\S]", "(?:ab)", "(?:a|bc)", r"\d", "x?"]


@st.composite
def counted_patterns(draw, depth=2):
    """Small patterns with counted repetitions, nested and in sequences and alternations."""
    kind = draw(st.sampled_from(["atom", "repeat", "seq", "alt"] if depth else ["atom"]))
    if kind == "atom":
        return draw(st.sampled_from(ATOMS))
    if kind == "repeat":
        inner = draw(counted_patterns(depth - 1))
        lo = draw(st.integers(0, 3))
        hi = draw(st.one_of(st.none(), st.integers(lo, lo + 3)))
        return f"(?:{inner}){{{lo},{'' if hi is None else hi}}}"
    parts = draw(st.lists(counted_patterns(depth - 1), min_size=2, max_size=3))
    return "".join(parts) if kind == "seq" else "(?:" + "|".join(parts) + ")"


@given(pattern=counted_patterns(), lazy_above=st.sampled_from([0, 6, 30]))
def test_lazy_regex_is_the_flat_regex(pattern, lazy_above):
    got = regex_automaton(pattern, lazy_above=lazy_above)
    want = DFA.from_regex(pattern)
    if isinstance(got, LazyBytes):
        assert expand(got) == want, pattern
        rng = random.Random(len(pattern))
        samples = want.examples(15, max_length=30) + [
            "".join(rng.choice("ab0é😀x\n") for _ in range(rng.randint(0, 8))) for _ in range(30)]
        for s in samples:
            assert got.accepts(s.encode()) == bool(re.fullmatch(pattern, s)), (pattern, s)
    else:
        assert got == want


def test_estimate_is_the_thompson_nfa_size():
    for p in [r"a{3,7}", r"(?:ab|c){2,}", r"[\s\S]{0,300}x", r"(?:a{2}b){3}", r"x|y|z", r"(?:)"]:
        node = parse_regex(p)
        assert nfa_states(node) == from_ast(node).num_states, p


def test_small_patterns_stay_flat_and_anchors_are_dropped():
    assert isinstance(regex_automaton(r"[a-z]{1,8}@x\.com"), DFA)
    lb = regex_automaton(r"^(?:ab){2,100000}\Z")
    assert isinstance(lb, LazyBytes)
    assert lb.accepts(b"abab") and not lb.accepts(b"ab") and not lb.accepts(b"ababa")


@pytest.mark.parametrize("pattern,text,ok", [
    (r"[\s\S]{0,100000000}", "é" * 3000, True),
    (r"(?:ab|c){0,1000000}x", "ab" * 500 + "cx", True),
    (r"a{1000000}", "a" * 999999, False),
    (r"[0-9]{3,1000000000}-[a-z]{2,5000000}", "1234-ab", True),
    (r"(?:[a-c]{2}:){1000,2000000}", "ab:" * 1000, True),
    (r"(?:[a-c]{2}:){1000,2000000}", "ab:" * 999, False),
])
def test_huge_counts_build_at_once(pattern, text, ok):
    t = time.perf_counter()
    lb = regex_automaton(pattern)
    assert time.perf_counter() - t < 1.0
    assert isinstance(lb, LazyBytes) and lb.num_states < 64
    assert lb.accepts(text.encode()) == ok == bool(re.fullmatch(pattern, text))


def test_what_needs_the_flat_expansion_charges_its_budget_first():
    # the copies of [\s\S] cannot be told apart from the x after them: flat, and far too large
    t = time.perf_counter()
    with pytest.raises(BudgetExceeded, match="regex expansion"):
        regex_automaton(r"[\s\S]{0,100000000}x")
    with pytest.raises(BudgetExceeded):
        regex_automaton(r"a{2,5000}a", budget=Budget(max_states=1000))
    assert time.perf_counter() - t < 1.0
    # an ambiguous count that fits the budget is simply built flat
    d = regex_automaton(r"a{2,3000}a")
    assert isinstance(d, DFA) and d.accepts("a" * 3001) and not d.accepts("a" * 3002)
    # assertions inside need the flat construction too
    assert isinstance(regex_automaton(r"(?:\bab ){1,400}"), DFA)
