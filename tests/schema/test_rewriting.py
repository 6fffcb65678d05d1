"""The rewriting algebra: conjunctions of object keywords from several schemas, negations, and
the intermediate form it reads, checked against jsonschema on every small instance tried.

Each case is compiled with ``allow_extra_keys=True`` and ``property_order="any"`` (so that an
object of any alternative can be written) and must agree with the validator on every instance:
accepted exactly when valid.
"""

import gc
import itertools
import json
import warnings

import jsonschema
import pytest

from tokenfsm.schema import SchemaWarning, compile_json_schema
from tokenfsm.schema.algebra import Rewriter
from tokenfsm.schema.resolve import resolve

KEYS = ["a", "ab", "xa", "b"]
VALUES = [1, "s", [], [1, 2]]


def objects(max_keys=2):
    yield {}
    for n in range(1, max_keys + 1):
        for keys in itertools.combinations(KEYS, n):
            for vals in itertools.product(VALUES, repeat=n):
                yield dict(zip(keys, vals))


def agree(schema, instances=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        cs = compile_json_schema(schema, whitespace=0, allow_extra_keys=True,
                                 property_order="any")
    v = jsonschema.Draft202012Validator(schema)
    seen = set()
    for x in instances if instances is not None else list(objects()) + [1, "s", None]:
        want = v.is_valid(x)
        got = cs.accepts(json.dumps(x, separators=(",", ":")))
        assert got == want, x
        seen.add(want)
    assert seen == {True, False}


MERGES = [
    # a key one conjunct matches by pattern also meets the other's additionalProperties
    {"allOf": [{"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False},
               {"additionalProperties": {"type": "string"}}]},
    {"allOf": [{"additionalProperties": {"type": "array", "minItems": 2}},
               {"patternProperties": {"a": {"type": "array", "items": {"type": "integer"}}},
                "additionalProperties": False}]},
    # a declared key of one conjunct meets the other's patterns and additionalProperties
    {"allOf": [{"properties": {"a": {"type": "integer"}}},
               {"patternProperties": {"b$": {"type": "string"}}, "additionalProperties": False}]},
    {"allOf": [{"properties": {"ab": {"type": ["string", "integer"]}}},
               {"patternProperties": {"a": {"type": "integer"}, "b": {"minimum": 0}}}]},
    # the same pattern in two conjuncts: both schemas
    {"allOf": [{"patternProperties": {"a": {"type": "array"}}},
               {"patternProperties": {"a": {"maxItems": 1}}}]},
    # propertyNames of two conjuncts: both
    {"allOf": [{"propertyNames": {"maxLength": 1}}, {"propertyNames": {"pattern": "^[ab]"}}]},
    # items of two conjuncts, merged per position rather than as texts
    {"type": "array", "allOf": [{"prefixItems": [{"type": "object", "properties": {"a": {}}}]},
                                {"items": {"type": "object", "required": ["b"]}}]},
]


@pytest.mark.parametrize("schema", MERGES)
def test_conjunctions_merge_every_group(schema):
    instances = None
    if schema.get("type") == "array":
        instances = [[], [{}], [{"b": 1}], [{"a": 1, "b": 2}], [{"b": 1}, {}], [{"b": 1}, {"b": 1}],
                     [1], {}]
    agree(schema, instances)


NEGATIONS = [
    {"not": {"required": ["a"], "properties": {"a": {"type": "integer"}}}},
    {"not": {"patternProperties": {"a": {"type": "integer"}}}},
    {"not": {"additionalProperties": {"type": "string"}, "properties": {"a": {}}}},
    {"not": {"propertyNames": {"maxLength": 1}}},
    {"not": {"minProperties": 2}},
    {"type": "object", "not": {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}},
    {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"if": {"required": ["a"]}, "then": {"properties": {"b": {"type": "string"}}},
     "else": {"maxProperties": 1}},
    {"dependentSchemas": {"a": {"required": ["b"]}}},
    {"not": {"dependentRequired": {"a": ["b"]}}},
]


@pytest.mark.parametrize("schema", NEGATIONS)
def test_negations_are_structural_and_exact(schema):
    agree(schema)


def test_numbers_inside_a_complement_are_compared_as_values():
    # "[1.00]" is [1]: all integers, so not valid; the complement is taken on canonical spellings
    schema = {"type": "array", "items": {"type": "number"}, "not": {"items": {"type": "integer"}}}
    cs = compile_json_schema(schema, whitespace=0)
    v = jsonschema.Draft202012Validator(schema)
    for text in ("[1.00]", "[1.0]", "[1e0]", "[1]", "[1.5]", "[2,1.5]", "[1.50]", "[1,2]"):
        if cs.accepts(text):
            assert v.is_valid(json.loads(text)), text
    assert cs.accepts("[1.5]") and cs.accepts("[2,1.5]")


def test_disjoint_branches_need_no_negation():
    # a discriminated oneOf: every branch is one alternative, no negated branch merged in
    schema = {"oneOf": [{"type": "object", "required": ["kind"],
                         "properties": {"kind": {"const": k}, "v": {"type": "integer"}}}
                        for k in ("a", "b", "c", "d", "e", "f", "g")]}
    schema_ir = resolve(schema)
    alts = Rewriter(schema_ir).alternatives(schema_ir.root)
    assert len(alts) == 7
    assert all(not a.residual and a.assertions.types == {"object"} for a in alts)


def test_a_compilation_leaves_no_cyclic_garbage():
    # every structure of a compilation is freed when it ends, without waiting for the collector
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"},
                                                               {"not": {"const": 1}}]}},
              "allOf": [{"required": ["a"]}]}
    compile_json_schema(schema)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        compile_json_schema(schema)
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()
