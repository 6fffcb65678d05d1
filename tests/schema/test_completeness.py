"""Completeness: valid instances, serialised in the key order the compiler documents
(:mod:`tokenfsm.schema.serialize`), are accepted; the oracle for validity is jsonschema.

Each order rule of the rewriting (allOf merges, anyOf/oneOf branches, negations, if/then/else,
dependencies, ``$ref`` with siblings) has a schema here whose instances are checked, plus the
corpus sample in ``tests/data/schema/maskbench_order_sample.json``.
"""

import json
import random
import warnings
from pathlib import Path

import jsonschema
import pytest

from tokenfsm.automata import Budget
from tokenfsm.schema.compiler import compile_json_schema
from tokenfsm.schema.errors import SchemaWarning
from tokenfsm.schema.serialize import dumps_in_schema_order, has_undeclared_keys

DATA = Path(__file__).parents[1] / "data" / "schema"
BUDGET = Budget(max_states=50_000)  # no wall-clock limit: the machine may be busy


def _compile(schema, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        return compile_json_schema(schema, budget=BUDGET, **kw)


def _check(schema, instances, ws=1, samples=20):
    """Every instance jsonschema accepts is accepted in schema order, every other one is
    rejected in every order tried; sampled texts validate."""
    v = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
    extra = any(v.is_valid(x) and has_undeclared_keys(x, schema) for x in instances)
    cs = _compile(schema, whitespace=ws, allow_extra_keys=extra)
    for x in instances:
        text = dumps_in_schema_order(x, schema, ws)
        assert json.loads(text) == x
        if v.is_valid(x):
            assert cs.accepts(text), (schema, text)
        else:
            sep = (",", ":") if ws == 0 else (", ", ": ")
            assert not cs.accepts(text), (schema, text)
            assert not cs.accepts(json.dumps(x, separators=sep)), (schema, x)
    rng = random.Random(0)
    for _ in range(samples):
        assert v.is_valid(json.loads(cs.dfa.sample(rng, max_length=80)))
    return cs


# ---------------------------------------------------------------- order rules
def test_allof_order_is_merge_order():
    schema = {"properties": {"z": {"type": "integer"}},
              "allOf": [{"properties": {"b": {"type": "string"}}, "required": ["b"]},
                        {"properties": {"a": {"type": "boolean"}, "z": {"minimum": 0}}}]}
    cs = _check(schema, [{"a": True, "b": "x", "z": 1}, {"b": "x"}, {"a": True, "z": -1, "b": ""}])
    assert dumps_in_schema_order({"a": True, "b": "x", "z": 1}, schema, 0) == '{"z":1,"b":"x","a":true}'
    assert not cs.accepts('{"a": true, "b": "x", "z": 1}')


def test_anyof_branch_decides_order():
    schema = {"type": "object", "anyOf": [
        {"properties": {"kind": {"const": "p"}, "y": {"type": "integer"}, "x": {"type": "integer"}},
         "required": ["kind"]},
        {"properties": {"kind": {"const": "q"}, "x": {"type": "string"}, "y": {"type": "string"}},
         "required": ["kind"]}]}
    _check(schema, [{"x": 1, "y": 2, "kind": "p"}, {"x": "1", "y": "2", "kind": "q"},
                    {"x": "1", "y": 2, "kind": "q"}])
    assert dumps_in_schema_order({"x": "1", "y": "2", "kind": "q"}, schema, 0) == \
        '{"kind":"q","x":"1","y":"2"}'


def test_oneof_branch_then_negated_branches():
    # the other branch's negation names the key whose value violates it ("n" after "m")
    schema = {"oneOf": [{"properties": {"m": {"type": "integer"}}, "required": ["m"]},
                        {"properties": {"n": {"type": "integer"}}, "required": ["n"]}],
              "type": "object"}
    _check(schema, [{"n": "s", "m": 1}, {"m": 1}, {"n": 2}, {"n": 2, "m": 1}, {"m": "x", "n": 2}])
    assert dumps_in_schema_order({"n": "s", "m": 1}, schema, 0) == '{"m":1,"n":"s"}'


def test_if_then_else_order():
    schema = {"type": "object", "properties": {"t": {"enum": ["a", "b"]}}, "required": ["t"],
              "if": {"properties": {"t": {"const": "a"}}},
              "then": {"properties": {"q": {"type": "integer"}, "p": {"type": "integer"}}},
              "else": {"properties": {"p": {"type": "string"}, "q": {"type": "string"}}}}
    _check(schema, [{"p": 1, "q": 2, "t": "a"}, {"p": "1", "q": "2", "t": "b"},
                    {"p": "1", "t": "a"}])
    assert dumps_in_schema_order({"p": 1, "q": 2, "t": "a"}, schema, 0) == '{"t":"a","q":2,"p":1}'
    assert dumps_in_schema_order({"p": "1", "q": "2", "t": "b"}, schema, 0) == \
        '{"t":"b","p":"1","q":"2"}'


def test_dependencies_write_what_a_key_depends_on_first():
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "allOf": [{"dependencies": {"a": ["b", "c"], "b": ["d"]}},
                                          {"required": ["a"]}]}
    _check(schema, [{"a": 1, "b": 2, "c": 3, "d": 4}, {"a": 1, "b": 2, "c": 3}, {"a": 1, "c": 3},
                    {"d": 4, "c": 3, "b": 2, "a": 1, "e": 5}])
    assert dumps_in_schema_order({"a": 1, "b": 2, "c": 3, "d": 4}, schema, 0) == \
        '{"b":2,"c":3,"a":1,"d":4}'


def test_ref_with_siblings_and_nested_merge():
    schema = {"$defs": {"point": {"properties": {"y": {"type": "number"}, "x": {"type": "number"}},
                                  "required": ["x", "y"]}},
              "properties": {"p": {"$ref": "#/$defs/point",
                                   "properties": {"label": {"type": "string"}}}},
              "allOf": [{"properties": {"p": {"properties": {"z": {"type": "number"}}}}}]}
    value = {"p": {"x": 1, "y": 2, "z": 3, "label": "o"}}
    _check(schema, [value, {"p": {"x": 1}}])
    assert dumps_in_schema_order(value, schema, 0) == '{"p":{"label":"o","y":2,"x":1,"z":3}}'


def test_branch_told_apart_by_items():
    # the first branch fails only through its items (validation of items must run)
    schema = {"type": "object", "anyOf": [
        {"properties": {"d": {"type": "array", "items": {"type": "integer"}}, "z": {}}},
        {"properties": {"a": {}, "d": {"type": "array", "items": {"type": "string"}}}}]}
    value = {"d": ["x"], "a": 1}
    assert dumps_in_schema_order(value, schema, 0) == '{"a":1,"d":["x"]}'
    _check(schema, [value, {"d": [1], "z": 2}])


def test_undeclared_keys_found_through_applicators():
    schema = {"anyOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"properties": {"a": {}}}}}
    assert has_undeclared_keys({"a": 1, "b": 2}, schema)
    assert not has_undeclared_keys({"a": 1}, schema)
    assert not has_undeclared_keys({"b": 1}, {"additionalProperties": {"type": "integer"}})
    assert has_undeclared_keys([{"b": 1}], {"items": {"properties": {"a": {}}}})
    _check(schema, [{"a": 1, "b": 2}, {"b": [1]}])


# ---------------------------------------------------------------- compiler regressions
def test_oneof_negation_of_a_key_declared_by_the_taken_branch():
    # 'status' is declared by the branch taken; the negation of the other branch names it too:
    # it is not a key "only a negation asks for" (this schema compiled to the empty language)
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {},
              "oneOf": [{"properties": {"status": {"enum": ["ok"]}}, "required": ["status"]},
                        {"properties": {"status": {"enum": ["notFound"]}}, "required": ["status"]}]}
    _check(schema, [{"status": "ok"}, {"status": "notFound"}, {"status": "other"}, {}])


def test_key_only_a_negation_names_stays_undeclared():
    schema = {"properties": {}, "not": {"properties": {"a": {"const": 1}}, "required": ["a"]}}
    cs = _compile(schema, whitespace=0)
    assert not cs.accepts('{"a":2}') and cs.accepts("{}")
    cs = _compile(schema, whitespace=0, allow_extra_keys=True)
    assert cs.accepts('{"a":2}') and not cs.accepts('{"a":1}')


def test_ref_used_again_inside_its_own_value_is_merged():
    # 'named' is entered for the outer object and again (not recursively) for each item: the
    # item's allOf must merge it with its other keywords, not intersect the two object texts
    # (which declare different keys: only the empty language is common)
    named = {"properties": {"name": {"type": "string"}}, "required": ["name"], "type": "object"}
    schema = {"$schema": "http://json-schema.org/draft-04/schema#",
              "definitions": {"named": named},
              "allOf": [{"$ref": "#/definitions/named"},
                        {"properties": {"items": {"type": "array", "items": {"allOf": [
                            {"$ref": "#/definitions/named"},
                            {"properties": {"level": {"type": "string"}}, "required": ["level"]}]}}},
                         "required": ["items"]}]}
    _check(schema, [{"name": "x", "items": [{"name": "a", "level": "l"}]},
                    {"name": "x", "items": []}, {"name": "x", "items": [{"name": "a"}]},
                    {"items": [{"name": "a", "level": "l"}]}])


def test_recursive_ref_in_branches_counts_one_level():
    # a recursive target is kept as text inside itself (compile_ref counts it): every level of
    # nesting costs one of max_depth, however many branches name it
    schema = {"$ref": "#/definitions/el", "definitions": {"el": {
        "type": "object", "required": ["type"], "additionalProperties": False,
        "properties": {"type": {"type": "string"}, "children": {"oneOf": [
            {"type": "string"}, {"$ref": "#/definitions/el"},
            {"type": "array", "items": {"$ref": "#/definitions/el"}}]}}}}}
    _check(schema, [{"type": "a", "children": [{"type": "b", "children": [
        {"type": "c", "children": "x"}]}]}, {"type": "a", "children": {"type": "b"}},
        {"type": "a", "children": 1}, {"type": "a", "children": [{"children": "x"}]}])


def test_allof_patternproperties_merged():
    # two patternProperties in allOf: each constrains the keys it matches (as text, the first
    # side's object automaton had no "b" keys)
    schema = {"allOf": [{"patternProperties": {"a": {"minimum": 10, "type": "number"}},
                         "type": "object"},
                        {"patternProperties": {"b": {"minimum": 3, "type": "number"},
                                               "a": {"maximum": 20}},
                         "properties": {"ab": {"type": "integer"}}}],
              "minProperties": 1, "type": "object"}
    _check(schema, [{"a": 15, "b": 5}, {"a": 15, "b": 2}, {"a": 9, "b": 5}, {"a": 21},
                    {"ab": 12}, {"ab": 12.5}, {"ab": 9}, {"xa": 15, "b": 3}])
    # next to additionalProperties the other side's patterns would exempt keys from it: kept
    # as text (sound; objects with keys of one side only are lost)
    schema = {"allOf": [{"patternProperties": {"^a": {"type": "integer"}},
                         "additionalProperties": False},
                        {"patternProperties": {"^b": {"type": "integer"}}}]}
    cs = _compile(schema, whitespace=0, allow_extra_keys=True)
    assert cs.accepts("{}") and not cs.accepts('{"b":1}') and not cs.accepts('{"c":1}')


# ---------------------------------------------------------------- corpus sample
def _corpus():
    rows = json.loads((DATA / "maskbench_order_sample.json").read_text())
    return [pytest.param(r, id=r["name"]) for r in rows]


@pytest.mark.parametrize("row", _corpus())
def test_corpus_valid_instances_accepted(row):
    schema = row["schema"]
    valid = [t["data"] for t in row["tests"] if t["valid"]]
    extra = any(has_undeclared_keys(x, schema) for x in valid)
    cs = _compile(schema, whitespace=1, allow_extra_keys=extra)
    v = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
    for t in row["tests"]:
        text = dumps_in_schema_order(t["data"], schema, 1)
        assert v.is_valid(t["data"]) == t["valid"]
        assert cs.accepts(text) == t["valid"], text
