"""Alternatives of patterned strings unioned as decoded values and spelled once
(``Tuning.string_unions``): the same automaton as spelling each alternative and unioning the
spellings, and the strings jsonschema accepts."""

import json

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tokenfsm.automata import DFA
from tokenfsm.automata.errors import DEFAULT_BUDGET
from tokenfsm.schema import lower_scalars
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.tuning import DEFAULT_TUNING

SCHEMAS = [
    {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"},
               {"type": "string", "pattern": "^now$"}]},
    {"type": "string", "maxLength": 12,
     "anyOf": [{"pattern": "^a"}, {"pattern": "b$"}, {"pattern": "é"}, {"type": "integer"}]},
    # a string alternative without a pattern is spelled every way, on its own
    {"anyOf": [{"type": "string", "pattern": "^[0-9]+$"}, {"type": "string", "maxLength": 2},
               {"type": "string", "format": "uuid"}]},
    {"oneOf": [{"type": "string", "pattern": "^x"}, {"type": "string", "pattern": "y$"}]},
]

TEXTS = ['"2024-02-29"', '"2024-02-29T12:00:00Z"', '"now"', '"later"', '"a"', '"ab"', '"cb"',
         '"xé"', '"abcdefghijklmb"', '"12"', '"1234"', '"x"', '"xy"', '"zy"', '"é"', '7',
         '"123e4567-e89b-12d3-a456-426614174000"', '"\\u00e9"', '"a\\n"']


@pytest.mark.parametrize("schema", SCHEMAS)
def test_unioned_strings_are_the_spelled_ones(schema):
    fast = compile_tuned(schema, DEFAULT_TUNING, whitespace=0)
    plain = compile_tuned(schema, DEFAULT_TUNING.with_reference("string_unions"), whitespace=0)
    assert fast.dfa == plain.dfa
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    for text in TEXTS:
        if fast.accepts(text):
            assert validator.is_valid(json.loads(text)), text
    assert any(fast.accepts(t) for t in TEXTS)


def _count_mod(c: str, k: int) -> str:
    """Pattern: the number of ``c`` in the string is a multiple of ``k``."""
    return "^[^%s]*(%s)*$" % (c, "".join(c + "[^%s]*" % c for _ in range(k)))


def test_a_union_past_the_cap_is_spelled_in_groups():
    # counts of three letters modulo 5 over 60 characters: each alternative 285 decoded states,
    # two 1,367, all three 6,523 (past PATTERNED_UNION_STATES)
    keys = tuple((0, 60, (_count_mod(c, 5),), ()) for c in "abc")
    texts = lower_scalars.patterned_strings_texts(keys, DEFAULT_BUDGET)
    assert len(texts) == 2
    each = DFA.union_all([lower_scalars.string_text(*k, (), DEFAULT_BUDGET) for k in keys])
    assert DFA.union_all(texts) == each
    schema = {"type": "string", "maxLength": 60, "anyOf": [{"pattern": k[2][0]} for k in keys]}
    fast = compile_tuned(schema, DEFAULT_TUNING, whitespace=0)
    assert fast.dfa == each
    validator = Draft202012Validator(schema)
    for text in ("", "aaaaa", "aaaa", "abcabc" * 5, "a" * 5 + "b", "bbbbbccccc"):
        assert fast.accepts(json.dumps(text)) == validator.is_valid(text), text


FACTORED = [
    # shared bounds and a shared pattern, taken out once (Handwritten allany22's shape)
    ((3, 20, ("[aA][12]", "ab1"), ()), (3, 20, ("[aA][12]", "\\d\\d"), ()),
     (3, 20, ("^....$", "[aA][12]"), ())),
    # shared bounds only; and a format left in one alternative
    ((0, 8, ("^x",), ()), (0, 8, ("y$",), ()), (0, 8, (), ("ipv4",))),
    # one alternative is the shared part alone: it holds the others
    ((1, 6, ("a",), ()), (1, 6, ("a", "b"), ()), (1, 6, ("a", "^c"), ())),
]


@pytest.mark.parametrize("keys", FACTORED)
def test_shared_bounds_and_patterns_are_taken_out_once(keys):
    value = lower_scalars.factored_union(keys, DEFAULT_BUDGET)
    assert value is not None
    each = DFA.union_all([lower_scalars.string_text(*k, (), DEFAULT_BUDGET) for k in keys])
    texts = lower_scalars.patterned_strings_texts(keys, DEFAULT_BUDGET)
    assert len(texts) == 1 and texts[0] == each
    lo, hi = keys[0][:2]
    patterns = [p for p in keys[0][2] if all(p in k[2] for k in keys)]
    schema = {"type": "string", "minLength": lo, "maxLength": hi,
              "anyOf": [{"allOf": [{"pattern": p} for p in k[2] if p not in patterns]
                         + [{"format": f} for f in k[3]]} for k in keys]}
    if patterns:
        schema["pattern"] = patterns[0]
    fast = compile_tuned(schema, DEFAULT_TUNING, whitespace=0)
    plain = compile_tuned(schema, DEFAULT_TUNING.with_reference("string_unions"), whitespace=0)
    assert fast.dfa == plain.dfa
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    for text in ("a1b", "xa1ab1", "A2x", "a199", "aaaa", "A1", "x", "xy", "y", "1.2.3.4",
                 "ac", "ab", "cab", "a" * 7, "zz12zz", "x" * 9):
        assert fast.accepts(json.dumps(text)) == validator.is_valid(text), text


def test_nothing_is_taken_out_of_strings_with_other_bounds():
    keys = ((0, 8, ("^x",), ()), (0, 9, ("^x",), ()))
    assert lower_scalars.factored_union(keys, DEFAULT_BUDGET) is None
    assert lower_scalars.factored_union(((0, None, ("^x",), ()), (0, None, ("y",), ())),
                                         DEFAULT_BUDGET) is None
