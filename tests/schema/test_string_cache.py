"""String texts kept across compilations: same automata as a fresh build, budgets still hold."""

import json

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.schema import compile_json_schema, lower_scalars

SCHEMAS = [
    {"type": "string", "format": "date-time"},
    {"type": "string", "pattern": "^[a-f]{2,4}$"},
    {"type": "string", "minLength": 2, "maxLength": 5},
    {"type": "object", "properties": {"a": {"type": "string", "format": "email"},
                                      "b": {"type": "string", "maxLength": 3}}},
]


def _fresh(schema, **kw):
    lower_scalars._STRING_CACHE.clear()
    return compile_json_schema(schema, whitespace=0, **kw)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_kept_strings_give_the_fresh_automaton(schema):
    fresh = _fresh(schema)
    assert lower_scalars._STRING_CACHE  # the build kept its string texts
    kept = compile_json_schema(schema, whitespace=0)
    assert kept.dfa.num_states == fresh.dfa.num_states
    assert kept.dfa == fresh.dfa
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    for text in ['"2024-02-29T12:00:00Z"', '"abc"', '"ab"', '{"a":"x@y.z","b":"abc"}', '"abcdef"']:
        try:
            value = json.loads(text)
        except ValueError:
            continue
        assert kept.accepts(text) == validator.is_valid(value)


def test_exclusions_are_part_of_the_key():
    schema = {"type": "string"}
    plain = _fresh(schema)
    filtered = compile_json_schema(schema, whitespace=0, excludes=["<|x|>"])
    assert plain.accepts('"a<|x|>b"') and not filtered.accepts('"a<|x|>b"')
    again = compile_json_schema(schema, whitespace=0)
    assert again.accepts('"a<|x|>b"')


def test_a_kept_automaton_over_the_budget_is_not_handed_out():
    schema = {"type": "string", "format": "date-time"}
    big = _fresh(schema)
    assert big.dfa.num_states > 20
    with pytest.raises(BudgetExceeded):
        compile_json_schema(schema, whitespace=0, budget=Budget(max_states=20))


# ---------------------------------------------------------------- number texts, likewise

NUMBERS = [
    {"type": "integer"},
    {"type": "number", "minimum": -2.5, "exclusiveMaximum": 10},
    {"type": "integer", "multipleOf": 7, "maximum": 100},
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": 1},
                                      "b": {"type": "number", "maximum": 1.5}}},
]


@pytest.mark.parametrize("schema", NUMBERS)
def test_kept_numbers_give_the_fresh_automaton(schema):
    lower_scalars._NUMBER_CACHE.clear()
    fresh = compile_json_schema(schema, whitespace=0, strict=False)
    assert lower_scalars._NUMBER_CACHE  # the build kept its number texts
    kept = compile_json_schema(schema, whitespace=0, strict=False)
    assert kept.dfa == fresh.dfa
    validator = Draft202012Validator(schema)
    for text in ["0", "-0", "1", "7", "-2.5", "-2.6", "9.99", "10", "98", "100", "105", "1.0", "1.5", "1.6",
                 '{"a":1,"b":2}', '{"a":0}', '{"a":3,"b":-1.5}']:
        assert kept.accepts(text) <= validator.is_valid(json.loads(text)), text
        if "." not in text:
            assert kept.accepts(text) == validator.is_valid(json.loads(text)), text


def test_draft4_exclusive_bounds_and_integer_spellings_are_part_of_the_key():
    # True (a draft 4 exclusive flag) is not 1; "3.0" is an integer only where the draft says so
    lower_scalars._NUMBER_CACHE.clear()
    d4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer",
          "maximum": 3, "exclusiveMaximum": True}
    d7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer",
          "maximum": 3, "exclusiveMaximum": 1}
    a = compile_json_schema(d4, whitespace=0)
    b = compile_json_schema(d7, whitespace=0)
    assert a.accepts("2") and not a.accepts("3")
    assert b.accepts("0") and not b.accepts("1")
    for schema in (d4, d7):
        again = compile_json_schema(schema, whitespace=0)
        assert again.dfa == compile_json_schema(schema, whitespace=0).dfa


def test_a_kept_number_over_the_budget_is_not_handed_out():
    schema = {"type": "integer", "minimum": 12345, "maximum": 987654321}
    lower_scalars._NUMBER_CACHE.clear()
    big = compile_json_schema(schema, whitespace=0)
    assert big.dfa.num_states > 12
    with pytest.raises(BudgetExceeded):
        compile_json_schema(schema, whitespace=0, budget=Budget(max_states=12))


ENUMS = [
    {"enum": ["StorageClass"]},
    {"enum": ["a\"b", "\u00e9t\u00e9", "\U0001f600", 3, 2.5, True, None]},
    {"type": "object", "properties": {"kind": {"const": "Pod"}, "v": {"enum": [1, "1"]}}},
]


@pytest.mark.parametrize("schema", ENUMS)
def test_kept_values_give_the_fresh_automaton(schema):
    lower_scalars._VALUES_CACHE.clear()
    fresh = compile_json_schema(schema, whitespace=0)
    assert lower_scalars._VALUES_CACHE  # the build kept its values' texts
    kept = compile_json_schema(schema, whitespace=0)
    assert kept.dfa == fresh.dfa
    lower_scalars._VALUES_CACHE.clear()
    assert compile_json_schema(schema, whitespace=0).dfa == fresh.dfa


def test_kept_values_are_kept_apart_by_their_exclusions_and_lists_are_not_kept():
    # an excluded substring drops a value: the values kept without exclusions are not handed to
    # a build with them; a list holding an array is read with the whitespace, and not kept
    lower_scalars._VALUES_CACHE.clear()
    schema = {"enum": ["ab", "cd"]}
    plain = compile_json_schema(schema, whitespace=0)
    assert plain.accepts('"ab"') and plain.accepts('"cd"')
    cut = compile_json_schema(schema, whitespace=0, excludes=["b"])
    assert not cut.accepts('"ab"') and cut.accepts('"cd"')
    lower_scalars._VALUES_CACHE.clear()
    listed = {"enum": [[1, 2]]}
    tight = compile_json_schema(listed, whitespace=0)
    assert not lower_scalars._VALUES_CACHE
    loose = compile_json_schema(listed, whitespace=1)
    assert loose.accepts("[1, 2]") and not tight.accepts("[1, 2]")


def test_kept_values_over_the_budget_are_not_handed_out():
    schema = {"enum": ["authorization.k8s.io/v1beta1"]}
    lower_scalars._VALUES_CACHE.clear()
    big = compile_json_schema(schema, whitespace=0)
    assert big.dfa.num_states > 40
    with pytest.raises(BudgetExceeded):
        compile_json_schema(schema, whitespace=0, budget=Budget(max_states=40))
