"""Every language cut at ``max_depth`` says so, with the pointer of the value it cut.

Oracle: the nesting depth of the instances the automaton rejects (a valid instance is rejected
only when it nests deeper than ``max_depth`` below a pointer that was warned about), and
jsonschema for validity.
"""

import json
import warnings

import jsonschema
import pytest

from tokenfsm.schema import SchemaError, SchemaWarning, compile_json_schema


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


_CUT_SCHEMAS = [
    {}, {"type": "object"}, {"type": "array"}, {"type": ["object", "null"]},
    {"required": ["a"]}, {"properties": {"a": {"type": "integer"}}},
    {"type": "object", "properties": {"a": {}}}, {"items": {"required": ["a"]}},
    {"type": "array", "items": {"type": "object"}, "minItems": 1},
    {"not": {"type": "string"}}, {"anyOf": [{"type": "array"}, {"type": "string"}]},
    {"type": "object", "additionalProperties": {"type": "array"}},
]
_INSTANCES = [None, 1, "x", [], [1], [[1]], {}, {"a": 1}, {"a": []}, {"a": {"b": 1}}, [{"a": 1}],
              {"a": [1]}, [{}], {"b": "x"}]


def _depth(x) -> int:
    """Levels of arrays and objects: 0 for a scalar."""
    if isinstance(x, list):
        return 1 + max(map(_depth, x), default=0)
    if isinstance(x, dict):
        return 1 + max(map(_depth, x.values()), default=0)
    return 0


@pytest.mark.parametrize("schema", _CUT_SCHEMAS)
def test_max_depth_zero_cuts_every_open_container_and_says_so(schema):
    # at max_depth=0 the unconstrained values are scalars: their arrays and objects are gone
    # (said with a pointer, or the schema is unsatisfiable for that reason), nothing else is,
    # and nothing invalid gets in
    v = jsonschema.Draft202012Validator(schema)
    try:
        cs = _compile(schema, max_depth=0)
    except SchemaError as e:
        assert "max_depth=0" in str(e), e
        assert not any(v.is_valid(x) and _depth(x) == 0 for x in _INSTANCES)
        return
    deeper = [x for x in _INSTANCES if v.is_valid(x) and _depth(x) > 0]
    for x in _INSTANCES:
        got = cs.accepts(json.dumps(x, separators=(",", ":")))
        if got:
            assert v.is_valid(x), x
        elif v.is_valid(x):
            assert _depth(x) > 0 and cs.warnings, (x, cs.warnings)
    if deeper and not all(cs.accepts(json.dumps(x, separators=(",", ":"))) for x in deeper):
        assert any("max_depth=0" in w for w in cs.warnings), cs.warnings


@pytest.mark.parametrize("schema, pointer", [
    ({"type": "object"}, "/"), ({"required": ["a"]}, "/"), ({"items": {"required": ["a"]}}, "/items"),
    ({"type": "object", "properties": {"a": {}}}, "/properties/a"),
])
def test_max_depth_zero_warns_with_the_pointer_or_explains_the_empty_language(schema, pointer):
    try:
        cs = _compile(schema, max_depth=0)
    except SchemaError as e:
        assert "nested at most max_depth=0 deep" in str(e), e
        return
    assert any(f"(at {pointer})" in w and "max_depth=0" in w for w in cs.warnings), cs.warnings
