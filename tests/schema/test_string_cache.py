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
