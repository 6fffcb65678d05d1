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
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.resolve import resolve
from tokenfsm.schema.tuning import Tuning

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


_ITEM = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}
ARRAY_NEGATIONS = [
    {"not": {"type": "array", "items": _ITEM}},
    {"not": {"items": _ITEM, "minItems": 1, "maxItems": 2}},
    {"not": {"prefixItems": [_ITEM]}},
    {"type": "array", "not": {"prefixItems": [{}, {"required": ["b"]}]}},
    # a union tagged by a member, its branches' arrays of objects told apart by an item
    {"oneOf": [{"properties": {"t": {"const": k}, "v": {"type": "array", "items": {
        "type": "object", "required": ["a"], "properties": {"a": {"type": t}}}}}}
        for k, t in (("x", "integer"), ("y", "string"))]},
    {"oneOf": [{"type": "array", "items": _ITEM}, {"type": "array", "maxItems": 1}]},
]
_ARRAYS = [[], [{}], [{"a": 1}], [{"a": "s"}], [{"a": 1}, {}], [{"a": 1}, {"a": 2}], [{"b": 1}],
           [1], [{"a": 1}, {"a": 1}, {"a": 1}], [{}, {"b": 1}]]
_TAGGED = [{"t": t, "v": v} for t in ("x", "y", "z") for v in
           ([], [{"a": 1}], [{"a": "s"}], [{"a": 1}, {"a": "s"}], [{"b": 1}], 1)] + [{"v": [{}]}]


@pytest.mark.parametrize("schema", ARRAY_NEGATIONS)
def test_array_negations_are_structural_and_exact(schema):
    # an item outside its schema is a contains of its negation: exact where the items are objects,
    # whose texts miss spellings of their values (a complement of them was refused in strict mode)
    tagged = "oneOf" in schema and "type" not in schema["oneOf"][0]
    instances = _TAGGED + [1, "s", None] if tagged else _ARRAYS + [{}, {"a": 1}, 1, "s", None]
    agree(schema, instances)
    cs = compile_json_schema(schema, whitespace=0)          # strict, schema order
    v = jsonschema.Draft202012Validator(schema)
    for x in instances:
        assert cs.accepts(json.dumps(x, separators=(",", ":"))) == v.is_valid(x), x


def test_lenient_arrays_keep_the_text_complement():
    # lenient mode negates arrays as texts (quicker, warned where inexact), strict structurally
    ir = resolve({"not": {"type": "array", "items": _ITEM}})
    strict = Rewriter(ir).alternatives(ir.root)
    lenient = Rewriter(ir, item_negations=False).alternatives(ir.root)
    assert any(a.assertions.array is not None and a.assertions.array.contains for a in strict)
    assert not any(a.assertions.array is not None for a in lenient)


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


def test_branches_disjoint_within_their_schema_need_no_negation():
    # the branches say no type, their schema says "object": there a branch whose tag differs is
    # disjoint from the others (a string would meet every branch, but the schema allows none)
    schema = {"type": "object", "oneOf": [
        {"required": ["kind"], "properties": {"kind": {"enum": [k]}, "v": {"type": "integer"}}}
        for k in ("a", "b", "c", "d")]}
    schema_ir = resolve(schema)
    alts = Rewriter(schema_ir).alternatives(schema_ir.root)
    assert len(alts) == 4
    assert all(not a.residual and a.assertions.types == {"object"} for a in alts)
    agree(schema, [{"kind": "a"}, {"kind": "b", "v": 1}, {"kind": "e"}, {"v": 1}, {},
                   {"kind": "c", "v": "x"}, {"kind": "d", "w": []}, "a", 1])
    # without the schema's type, the branches meet on other types: negated, and exact
    loose = {"oneOf": schema["oneOf"]}
    loose_ir = resolve(loose)
    assert len(Rewriter(loose_ir).alternatives(loose_ir.root)) > 4
    agree(loose, [{"kind": "a"}, {"kind": "e"}, "a", 1, None])


def test_branches_no_object_can_meet_are_dropped():
    # the second branch requires "ab", which its additionalProperties: false allows no value:
    # it meets nothing, so the first needs no negation of it (nor a product with its objects)
    schema = {"type": "object", "oneOf": [
        {"additionalProperties": False, "required": ["a", "b"],
         "properties": {"a": {"type": "integer"}, "b": {}}},
        {"additionalProperties": False, "required": ["ab"],
         "properties": {"a": {"type": "integer"}, "xa": {"type": "array"}}}]}
    schema_ir = resolve(schema)
    alts = Rewriter(schema_ir).alternatives(schema_ir.root)
    assert len(alts) == 1 and not alts[0].residual
    assert alts[0].assertions.object.required == ("a", "b")
    agree(schema)
    # a name both required and forbidden: nothing
    both = resolve({"type": "object", "required": ["a"], "not": {"required": ["a"]}})
    assert Rewriter(both).alternatives(both.root) == []
    # a pattern may allow the name: kept
    patterned = {"type": "object", "additionalProperties": False, "required": ["ab"],
                 "patternProperties": {"^a": {"type": "integer"}}}
    patterned_ir = resolve(patterned)
    assert len(Rewriter(patterned_ir).alternatives(patterned_ir.root)) == 1
    agree(patterned)


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


# ---------------------------------------------------------------- scopes pushed into the fallback

#: Number unions whose products, unbounded, pass the budget (lcm of the residues): within the
#: bounds and the types beside them, each branch is a handful of values.
SCOPED = [
    {"allOf": [{"$ref": "#/$defs/any1"}, {"$ref": "#/$defs/any2"}, {"$ref": "#/$defs/any3"},
               {"exclusiveMinimum": -300}, {"exclusiveMaximum": 0}],
     "type": "number",
     "$defs": {
         "any1": {"anyOf": [{"multipleOf": m} for m in (33, 12, 4, 16, 77)]},
         "any2": {"anyOf": [{"allOf": [{"not": {"multipleOf": 6}}, {"not": {"multipleOf": 7}}]},
                            {"multipleOf": 25}, {"multipleOf": 42}, {"multipleOf": 51}]},
         "any3": {"anyOf": [{"allOf": [{"not": {"multipleOf": 3}}, {"not": {"multipleOf": 2}}]},
                            {"multipleOf": 101}, {"multipleOf": 102}, {"multipleOf": 103}]}}},
    {"type": "integer", "minimum": -250, "maximum": 250,
     "allOf": [{"oneOf": [{"multipleOf": m} for m in (101, 103, 107, 109)]},
               {"not": {"anyOf": [{"multipleOf": m} for m in (2, 97, 89)]}}]},
    {"type": ["number", "string"],
     "allOf": [{"anyOf": [{"multipleOf": m} for m in (31, 37, 41, 43, 47)] + [{"maxLength": 1}]},
               {"anyOf": [{"not": {"multipleOf": m}} for m in (53, 59, 61)]},
               {"minimum": -200, "exclusiveMaximum": 200}]},
]

NUMBER_TEXTS = [t for x in range(-310, 310) for t in (str(x), f"{x}.0", f"{x}.5")]


@pytest.mark.parametrize("schema", SCOPED)
def test_bounds_and_types_are_pushed_into_the_parts_of_a_fallback(schema):
    # the default route (more alternatives than SCALAR_ALTERNATIVES: set operations on texts)
    # and the fallback everywhere agree with the validator on every number tried; unscoped,
    # these are products of residues past the budget
    v = jsonschema.Draft202012Validator(schema)
    exact = [str(x) for x in range(-310, 310)] + ['""', '"a"', '"ab"', "null", "[]"]
    for tuning in (Tuning(), Tuning(scalar_alternatives=0)):
        cs = compile_tuned(schema, tuning, whitespace=0, strict=False)
        # canonical spellings exactly; others (``3.0`` of an integer) never when invalid
        got = [t for t in exact if cs.accepts(t)]
        assert got == [t for t in exact if v.is_valid(json.loads(t))]
        assert got
        assert all(v.is_valid(json.loads(t)) for t in NUMBER_TEXTS if cs.accepts(t))


SMALL_SCOPED = [
    {"type": "integer", "maximum": 20, "anyOf": [{"multipleOf": 3}, {"not": {"multipleOf": 2}}]},
    {"allOf": [{"minimum": 0}, {"oneOf": [{"multipleOf": 2}, {"multipleOf": 3}]},
               {"type": ["integer", "string"]}]},
    {"type": "string", "allOf": [{"not": {"anyOf": [{"pattern": "a"}, {"maxLength": 2}]}},
                                 {"anyOf": [{"pattern": "^b"}, {"minLength": 4}]}]},
    {"allOf": [{"type": "array"}, {"anyOf": [{"items": {"type": "integer"}}, {"maxItems": 1}]},
               {"not": {"minItems": 3}}]},
]


@pytest.mark.parametrize("schema", SMALL_SCOPED)
def test_a_scoped_fallback_is_the_rewriting_language(schema):
    # every node as set operations on texts, scopes pushed, against the rewriting everywhere
    texts = {}
    for n in (0, None):
        cs = compile_tuned(schema, Tuning(scalar_alternatives=n), whitespace=0, strict=False)
        texts[n] = cs.dfa
    assert texts[0].equivalent(texts[None])
