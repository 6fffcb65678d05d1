"""DFA.from_regex against re.fullmatch: the whole pipeline (parse, NFA, determinise) on the dialect."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given

from test_regex_parse import FLAG_COMBOS, compiles, patterns, re2_cases, subjects
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import RegexError


@given(patterns, subjects)
def test_generated_patterns_agree_with_re_for_every_flag_combination(pattern, strings):
    assume(compiles(pattern))
    for flags in FLAG_COMBOS:
        if not compiles(pattern, flags):
            continue
        dfa = DFA.from_regex(pattern, flags)
        for s in strings:
            assert dfa.accepts(s) == (re.fullmatch(pattern, s, flags) is not None), (pattern, flags, s)


def test_re2_corpus_agrees_with_re():
    checked = raised = 0
    automata: dict = {}
    for case in re2_cases():
        if "py_re_fullmatch" not in case:
            continue
        pattern = case["regex"]
        if pattern not in automata:
            try:
                automata[pattern] = DFA.from_regex(pattern)
            except RegexError as exc:
                assert exc.msg.endswith("is not regular"), (pattern, exc)
                automata[pattern] = None
        if automata[pattern] is None:
            raised += 1
            continue
        assert automata[pattern].accepts(case["string"]) == case["py_re_fullmatch"], case
        checked += 1
    assert checked > 1000


@pytest.mark.parametrize("pattern, flags, strings", [
    (r"\（\。\<\/", 0, ["（。</", "(。</"]),
    (r"(?i)straße|ǅ", 0, ["STRAßE", "ǆ", "Ǆ", "STRASSE"]),
    (r"^a$\n^b$", re.M, ["a\nb", "a\nb\n", "a\nb\n\n"]),
    (r"a$\n?", 0, ["a", "a\n", "a\n\n"]),
    (r"\bx\B.", 0, ["xy", "x-"]),
    (r"x*\B", 0, ["", "x", "xx"]),
])
def test_selected_patterns(pattern, flags, strings):
    dfa = DFA.from_regex(pattern, flags)
    for s in strings:
        assert dfa.accepts(s) == (re.fullmatch(pattern, s, flags) is not None), s


@pytest.mark.parametrize("pattern, yes, no", [
    (r"[^\p{L}]+\p{Han}", ["12中"], ["a中"]),
    (r"\p{Script=Latin}+", ["Ǆé"], ["α"]),
])
def test_property_patterns(pattern, yes, no):
    dfa = DFA.from_regex(pattern)
    assert all(dfa.accepts(s) for s in yes)
    assert not any(dfa.accepts(s) for s in no)
