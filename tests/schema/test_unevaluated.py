"""unevaluatedProperties next to in-place applicators, and structural negation of applicators,
checked against jsonschema on every small object over a few keys."""

import itertools
import json

import jsonschema
import pytest

from tokenfsm.schema.compiler import compile_json_schema
from tokenfsm.schema.errors import UnsupportedSchema
from tokenfsm.schema.serialize import dumps_in_schema_order

KEYS = ["a", "b", "c", "xx", "foo"]
VALUES = [1, "s", None]


def objects(max_keys=3):
    yield {}
    for n in range(1, max_keys + 1):
        for keys in itertools.combinations(KEYS, n):
            for vals in itertools.product(VALUES[:2] if n == 3 else VALUES, repeat=n):
                yield dict(zip(keys, vals))


def verdicts(schema, exact=True):
    # keys in any order: merged alternatives declare keys in their own order
    cs = compile_json_schema(schema, whitespace=0, allow_extra_keys=True, property_order="any")
    v = jsonschema.Draft202012Validator(schema)
    seen = set()
    for x in list(objects()) + [1, "s", None, [1]]:
        want = v.is_valid(x)
        texts = {dumps_in_schema_order(x, schema, 0), json.dumps(x, separators=(",", ":"))}
        got = any(cs.accepts(t) for t in texts)
        assert not got or want, f"invalid instance accepted: {x}"
        if exact:
            assert got == want, x
        seen.add(want)
    assert seen == {True, False}


UNEVALUATED = [
    {"properties": {"a": True}, "allOf": [{"properties": {"b": True}}], "unevaluatedProperties": False},
    {"allOf": [{"properties": {"a": {"type": "integer"}}}],
     "unevaluatedProperties": {"type": "string"}},
    {"anyOf": [{"properties": {"a": True}, "required": ["a"]},
               {"properties": {"b": True}, "required": ["b"]}],
     "unevaluatedProperties": False},
    {"oneOf": [{"properties": {"a": True}, "required": ["a"]},
               {"patternProperties": {"x": True}, "required": ["xx"]}],
     "unevaluatedProperties": False},
    {"if": {"properties": {"a": {"const": 1}}, "required": ["a"]},
     "then": {"properties": {"b": True}}, "else": {"properties": {"c": True}},
     "unevaluatedProperties": False},
    {"dependentSchemas": {"a": {"properties": {"b": True}}}, "properties": {"a": True},
     "unevaluatedProperties": False},
    # annotations of a failing subschema (under not) do not count
    {"not": {"not": {"properties": {"a": True}}}, "unevaluatedProperties": False},
    {"properties": {"a": True}, "not": {"required": ["b"], "properties": {"b": {"type": "string"}}},
     "unevaluatedProperties": False},
    # nested unevaluatedProperties: the inner one evaluates everything
    {"allOf": [{"properties": {"a": True}, "unevaluatedProperties": {"type": "integer"}}],
     "unevaluatedProperties": False},
    {"$defs": {"ab": {"properties": {"a": True, "b": True}}}, "$ref": "#/$defs/ab",
     "unevaluatedProperties": {"type": "null"}},
]


@pytest.mark.parametrize("schema", UNEVALUATED)
def test_unevaluated_properties(schema):
    verdicts(schema)


NEGATED = [
    {"not": {"oneOf": [{"required": ["a"]}, {"required": ["b"]}, {"properties": {"c": {"type": "string"}}}]}},
    {"not": {"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}}},
    {"not": {"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["foo"]}}}},
    {"$defs": {"s": {"required": ["a"]}}, "not": {"$ref": "#/$defs/s", "maxProperties": 2}},
    {"oneOf": [{"$ref": "#/$defs/one"}, {"required": ["a"]}],
     "$defs": {"one": {"oneOf": [{"required": ["b"]}, {"required": ["c"]}]}}},
]


@pytest.mark.parametrize("schema", NEGATED)
def test_negated_applicators(schema):
    verdicts(schema)


def test_unevaluated_beside_recursive_ref():
    # a recursive $ref kept as text: what it evaluates is known when it has no conditional
    # applicators (here: allOf and $ref only), else the keyword is unsupported
    plain = {"$defs": {"n": {"properties": {"x": {"allOf": [{"$ref": "#/$defs/n"}],
                                                  "unevaluatedProperties": False},
                                            "a": True}}},
             "allOf": [{"$ref": "#/$defs/n"}], "unevaluatedProperties": False}
    cs = compile_json_schema(plain, whitespace=0, property_order="any")
    v = jsonschema.Draft202012Validator(plain)
    for x in [{"x": {"a": 1}}, {"x": {"b": 1}}, {"a": 1, "x": {}}, {"c": 1}, {"x": {"x": {"a": 2}}}]:
        assert cs.accepts(json.dumps(x, separators=(",", ":"))) == v.is_valid(x), x
    conditional = {"$defs": {"n": {"properties": {"x": {"allOf": [{"$ref": "#/$defs/n"}],
                                                        "unevaluatedProperties": False}},
                                   "anyOf": [{"properties": {"a": True}}, {"required": ["b"]}]}},
                   "allOf": [{"$ref": "#/$defs/n"}], "unevaluatedProperties": False}
    with pytest.raises(UnsupportedSchema) as e:
        compile_json_schema(conditional)
    assert e.value.keyword == "unevaluatedProperties"


def arrays(max_len=3):
    for n in range(max_len + 1):
        yield from (list(t) for t in itertools.product(VALUES, repeat=n))


UNEVALUATED_ITEMS = [
    {"prefixItems": [{"type": "integer"}], "unevaluatedItems": {"type": "null"}},
    {"prefixItems": [{"type": "integer"}], "allOf": [{"prefixItems": [True, {"type": "string"}]}],
     "unevaluatedItems": False},
    {"anyOf": [{"prefixItems": [{"const": 1}]}, {"prefixItems": [True, {"const": "s"}]}],
     "unevaluatedItems": False},
    {"allOf": [{"contains": {"type": "string"}}], "unevaluatedItems": {"type": "integer"}},
    {"contains": {"const": 1}, "minContains": 0, "unevaluatedItems": {"type": "string"}},
    {"if": {"prefixItems": [{"const": 1}]}, "then": {"prefixItems": [True, True]},
     "else": {"items": {"type": "string"}}, "unevaluatedItems": False},
    # annotations under not do not count; a passing items evaluates everything
    {"not": {"not": {"items": True}}, "unevaluatedItems": False},
    {"allOf": [{"items": {"type": ["integer", "null"]}}], "unevaluatedItems": False},
    {"oneOf": [{"prefixItems": [{"type": "null"}]}, {"contains": {"type": "integer"}}],
     "unevaluatedItems": {"type": "string"}},
]


@pytest.mark.parametrize("schema", UNEVALUATED_ITEMS)
def test_unevaluated_items(schema):
    cs = compile_json_schema(schema, whitespace=0)
    v = jsonschema.Draft202012Validator(schema)
    seen = set()
    for x in list(arrays()) + [1, {}, None]:
        want = v.is_valid(x)
        assert cs.accepts(json.dumps(x, separators=(",", ":"))) == want, x
        seen.add(want)
    assert seen == {True, False}


def test_unevaluated_items_under_not_is_unsupported():
    with pytest.raises(UnsupportedSchema) as e:
        compile_json_schema({"not": {"allOf": [{"prefixItems": [True]}], "unevaluatedItems": False}})
    assert e.value.keyword == "unevaluatedItems"
