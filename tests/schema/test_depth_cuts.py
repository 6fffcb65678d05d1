"""Every language cut at ``max_depth`` says so, with the pointer of the value it cut.

Oracle: the nesting depth of the instances the automaton rejects (a valid instance is rejected
only when it nests deeper than ``max_depth`` below a pointer that was warned about), and
jsonschema for validity.
"""

import json
import warnings

import jsonschema
import pytest

from tokenfsm.schema import SchemaWarning, compile_json_schema


def _compile(schema, **kw):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", SchemaWarning)
        cs = compile_json_schema(schema, whitespace=0, **kw)
    assert [str(w.message) for w in rec] == cs.warnings
    return cs


def _nest(depth: int):
    v = 1
    for _ in range(depth):
        v = [v]
    return v


@pytest.mark.parametrize("schema, pointer", [
    ({}, "/"),
    (True, "/"),
    ({"type": "object"}, "/"),
    ({"type": "array"}, "/"),
    ({"type": ["object", "null"]}, "/"),
    ({"type": "object", "properties": {"a": {}}}, "/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "object"}}}, "/properties/a"),
    ({"type": "array", "items": {"type": "object"}}, "/items"),
    ({"type": "array", "prefixItems": [{"type": "integer"}, {}], "items": False}, "/prefixItems/1"),
    ({"type": "object", "additionalProperties": {"type": "array"}}, "/additionalProperties"),
    ({"not": {"type": "string"}}, "/"),
])
def test_unconstrained_values_warn_with_their_pointer(schema, pointer):
    cs = _compile(schema)
    assert any(f"(at {pointer})" in w and "max_depth" in w for w in cs.warnings), cs.warnings


def test_extra_keys_warn_at_the_object():
    cs = _compile({"type": "object", "properties": {"a": {"type": "integer"}}},
                  allow_extra_keys=True)
    assert any("max_depth" in w and "(at /)" in w for w in cs.warnings), cs.warnings


@pytest.mark.parametrize("schema", [
    # a discriminated oneOf of untyped objects: every non-object passes every branch, so none
    # is written, and the universes its negations were taken in are not part of the language
    {"oneOf": [{"required": ["kind"], "properties": {"kind": {"const": k},
                                                     "v": {"type": "array", "items": {"type": "number"}}}}
               for k in ("a", "b", "c")]},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
     "additionalProperties": False},
    {"type": "array", "items": {"type": "string"}},
    {"enum": [[1, [2]], {"a": {"b": None}}]},
    {"type": "string", "not": {"const": "x"}},
])
def test_bounded_schemas_do_not_warn(schema):
    assert _compile(schema).warnings == []


@pytest.mark.parametrize("max_depth", [1, 2, 3])
def test_only_values_deeper_than_the_limit_are_lost(max_depth):
    schema = {"type": "array", "items": {}}
    cs = _compile(schema, max_depth=max_depth)
    assert cs.warnings
    v = jsonschema.Draft202012Validator(schema)
    for depth in range(0, 6):
        x = [_nest(depth)]
        assert v.is_valid(x)
        text = json.dumps(x, separators=(",", ":"))
        assert cs.accepts(text) == (depth <= max_depth), (depth, text)


def test_a_cut_first_met_under_a_negation_is_said_where_it_is_used():
    # the first branch subtracts arrays of v (not said: nothing of it is written), the second
    # writes them (said, with v's pointer), though v's language was built once
    schema = {"$defs": {"v": {"type": "object"}},
              "anyOf": [{"type": "array", "not": {"items": {"$ref": "#/$defs/v"}}},
                        {"type": "array", "items": {"$ref": "#/$defs/v"}}]}
    cs = _compile(schema)
    assert any("(at /$defs/v)" in w for w in cs.warnings), cs.warnings
