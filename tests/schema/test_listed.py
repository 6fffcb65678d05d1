"""Listed values checked one by one (:mod:`tokenfsm.schema.listed`): every verdict given agrees
with ``jsonschema``; where the values alone decide, a schema compiles to the automaton of the
values ``jsonschema`` passes (every spelling of each), on generated schemas and on the
JSON-Schema-Test-Suite's schemas that list values."""

from __future__ import annotations

import itertools
import json
import os
import re

import jsonschema
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tokenfsm.schema import compile_json_schema
from tokenfsm.schema.errors import SchemaError
from tokenfsm.schema.ir import Spelled
from tokenfsm.schema.listed import SPELLED_MAX, holds, passing
from tokenfsm.schema.resolve import resolve

DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: The options under which objects are written in any order, undeclared keys allowed.
FREE = {"property_order": "any", "allow_extra_keys": True}
SUITE = os.path.join(os.path.dirname(__file__), "..", "data", "json-schema-test-suite")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-6, 6),
                    st.sampled_from([0.5, 1.0, 2.5, -1.5, 4.5]), st.text(alphabet="ab1é", max_size=3))
values = st.recursive(scalars, lambda c: st.lists(c, max_size=3)
                      | st.dictionaries(st.sampled_from("xyz"), c, max_size=3), max_leaves=6)
TYPES = ["null", "boolean", "integer", "number", "string", "array", "object"]


def _flat(sub):
    """One schema object's assertions (``sub``: the schemas nested in it)."""
    return st.one_of(
        st.builds(lambda ts: {"type": ts}, st.lists(st.sampled_from(TYPES), min_size=1,
                                                    max_size=3, unique=True)),
        st.builds(lambda n: {"minLength": n}, st.integers(0, 3)),
        st.builds(lambda n: {"maxLength": n}, st.integers(0, 3)),
        st.builds(lambda k, b: {k: b}, st.sampled_from(["minimum", "maximum", "exclusiveMinimum",
                                                         "exclusiveMaximum"]),
                  st.sampled_from([-1, 0, 0.5, 2, 3])),
        st.builds(lambda m: {"multipleOf": m}, st.sampled_from([0.5, 2, 3, 1.5])),
        st.builds(lambda n: {"minItems": n}, st.integers(0, 3)),
        st.builds(lambda n: {"maxItems": n}, st.integers(0, 3)),
        st.builds(lambda u: {"uniqueItems": u}, st.booleans()),
        st.builds(lambda s: {"items": s}, sub),
        st.builds(lambda s, t: {"prefixItems": [s, t]}, sub, sub),
        st.builds(lambda s, lo: {"contains": s, "minContains": lo}, sub, st.integers(0, 2)),
        st.builds(lambda n: {"minProperties": n}, st.integers(0, 2)),
        st.builds(lambda r: {"required": r}, st.lists(st.sampled_from("xyz"), max_size=2,
                                                      unique=True)),
        st.builds(lambda s, a: {"properties": {"x": s}, "additionalProperties": a}, sub, sub),
        st.builds(lambda s: {"propertyNames": s}, sub),
        st.builds(lambda s: {"dependentSchemas": {"y": s}}, sub),
        st.builds(lambda s: {"not": s}, sub),
        st.builds(lambda k, ss: {k: ss}, st.sampled_from(["allOf", "anyOf", "oneOf"]),
                  st.lists(sub, min_size=1, max_size=3)),
        st.builds(lambda c, t, e: {"if": c, "then": t, "else": e}, sub, sub, sub),
        st.builds(lambda vs: {"enum": vs}, st.lists(values, min_size=1, max_size=3)),
        st.just({"pattern": "1"}),
    )


def _merged(parts):
    out = {}
    for p in parts:
        for k, v in p.items():
            out.setdefault(k, v)
    return out


schemas = st.recursive(st.booleans() | st.just({}),
                       lambda sub: st.lists(_flat(sub), min_size=1, max_size=3).map(_merged),
                       max_leaves=5)


@settings(max_examples=300, deadline=None)
@given(schemas, st.lists(values, min_size=1, max_size=4))
def test_every_verdict_is_jsonschemas(schema, vals):
    schema = {"$schema": DRAFT, "allOf": [schema]} if isinstance(schema, bool) else \
        {"$schema": DRAFT, **schema}
    sir = resolve(schema)
    oracle = jsonschema.Draft202012Validator(schema)
    for v in vals:
        ok = holds(sir.root, v, sir)
        event(f"verdict {ok}")
        if ok is not None:
            assert ok == oracle.is_valid(v), (schema, v)


def test_what_the_values_alone_cannot_tell():
    old = resolve({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"})
    new = resolve({"$schema": DRAFT, "type": "integer"})
    # in draft 4, "1.0" is no integer but "1" is: the spelling decides
    assert holds(old.root, 1, old) is None and holds(old.root, 1.5, old) is False
    assert holds(new.root, 1.0, new) is True
    # what the automata decide, not the values
    for schema, value in (({"pattern": "a"}, "a"), ({"format": "email"}, "a"),
                          ({"unevaluatedItems": False}, ["a"]),
                          ({"patternProperties": {"a": {}}}, {"a": 1})):
        sir = resolve({"$schema": DRAFT, **schema})
        assert holds(sir.root, value, sir) is None, schema
    loop = resolve({"$schema": DRAFT, "$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})
    assert holds(loop.root, 1, loop) is None


def _listed_alone(schema, values) -> None:
    """Where the values alone decide, ``schema`` compiles to the automaton of the values that
    ``jsonschema`` says pass, or is unsatisfiable when none does."""
    sir = resolve(schema)
    decided = False
    for options in ({}, {"strict": False}, FREE):
        free = options is FREE
        if any(holds(sir.root, v, sir, free) is None for v in values):
            continue
        decided = True
        oracle = jsonschema.validators.validator_for(schema)(schema)
        kept = [v for v in values if oracle.is_valid(v)]
        if not kept:
            with pytest.raises(SchemaError):
                compile_json_schema(schema, whitespace=0, **options)
            continue
        got = compile_json_schema(schema, whitespace=0, **options).dfa
        assert got == compile_json_schema({"enum": kept}, whitespace=0, **options).dfa, schema
    return decided


@settings(max_examples=150, deadline=None)
@given(schemas, st.lists(values, min_size=1, max_size=4))
def test_values_that_pass_are_the_language(schema, vals):
    schema = {"$schema": DRAFT, "enum": vals, "allOf": [schema]}
    event("decided by the values" if _listed_alone(schema, vals) else "left to the automata")


def _suite_schemas():
    out = []
    for name in ("enum.json", "const.json", "anyOf.json", "oneOf.json", "not.json",
                 "if-then-else.json", "uniqueItems.json", "items.json"):
        with open(os.path.join(SUITE, name), encoding="utf-8") as f:
            for case in json.load(f):
                schema = case["schema"]
                if isinstance(schema, dict) and ("enum" in schema or "const" in schema):
                    out.append(pytest.param(schema, id=f"{name}:{case['description']}"))
    return out


@pytest.mark.parametrize("schema", _suite_schemas())
def test_the_suites_listed_values_are_the_language(schema):
    values = schema["enum"] if "enum" in schema else [schema["const"]]
    _listed_alone({"$schema": DRAFT, **schema}, values)


def test_listed_values_that_fail_their_schema_leave_nothing():
    schema = {"enum": [[1], "a"], "minItems": 2, "type": "array"}
    sir = resolve(schema)
    assert passing(sir.root.assertions, sir) == ()
    with pytest.raises(SchemaError):
        compile_json_schema(schema, whitespace=0)
    # an anyOf of enums under if/then/else: the passing value alone, no product
    schema = {"anyOf": [{"enum": [[1], [3, 4]]}, {"enum": [[1], [1, 2]]}], "type": "array",
              "if": {"minItems": 1}, "then": {"items": {"exclusiveMaximum": 4}, "minItems": 2}}
    got = compile_json_schema(schema, whitespace=0).dfa
    assert got == compile_json_schema({"const": [1, 2]}, whitespace=0).dfa


def test_objects_are_decided_where_the_automata_write_them_freely():
    schema = {"$schema": DRAFT, "enum": [{"x": None, "y": None}, {"x": 1}],
              "properties": {"x": {"type": "null"}}}
    sir = resolve(schema)
    # in schema order, which keys and in which order is the automaton's say
    assert passing(sir.root.assertions, sir) is None
    assert passing(sir.root.assertions, sir, free_objects=True) == ({"x": None, "y": None},)
    got = compile_json_schema(schema, whitespace=0, **FREE)
    assert got.accepts('{"y":null,"x":null}') and not got.accepts('{"x":1}')
    # uniqueItems over any array, where only listed values can be: no product needed
    assert compile_json_schema({"enum": [None, [1, 1]], "uniqueItems": True},
                               whitespace=0).dfa == compile_json_schema({"const": None}).dfa


# ---------------------------------------------------------------- where the spelling decides
DRAFT4 = "http://json-schema.org/draft-04/schema#"      # "2.0" is no integer


def _spellings(v) -> list[str]:
    """The texts of ``v`` with each integral number written as an integer (``2``) or not
    (``2.0``), every combination."""
    def count(x):
        if isinstance(x, list):
            return sum(map(count, x))
        if isinstance(x, dict):
            return sum(map(count, x.values()))
        return int(isinstance(x, (int, float)) and not isinstance(x, bool) and x == int(x))

    def text(x, ways):
        if isinstance(x, list):
            return "[" + ",".join(text(y, ways) for y in x) + "]"
        if isinstance(x, dict):
            return "{" + ",".join(json.dumps(k) + ":" + text(y, ways) for k, y in x.items()) + "}"
        if isinstance(x, (int, float)) and not isinstance(x, bool) and x == int(x):
            return str(int(x)) + ("" if next(ways) else ".0")
        return json.dumps(x)

    return [text(v, iter(ways)) for ways in itertools.product((True, False), repeat=count(v))]


integral = st.one_of(st.integers(-3, 3), st.sampled_from([1.0, 2.5, None, "a"]))
values4 = st.recursive(integral, lambda c: st.lists(c, max_size=2)
                       | st.dictionaries(st.sampled_from("xy"), c, max_size=2), max_leaves=3)


def _draft4(sub):
    return st.one_of(
        st.builds(lambda ts: {"type": ts}, st.lists(st.sampled_from(
            ["integer", "number", "array", "object", "null"]), min_size=1, max_size=2,
            unique=True)),
        st.builds(lambda k, b: {k: b}, st.sampled_from(["minimum", "maximum"]),
                  st.sampled_from([-1, 0, 2])),
        st.builds(lambda m: {"multipleOf": m}, st.sampled_from([0.5, 2])),
        st.builds(lambda s: {"items": s}, sub),
        st.builds(lambda s, r: {"properties": {"x": s}, "required": r}, sub,
                  st.lists(st.just("x"), max_size=1)),
        st.builds(lambda s: {"not": s}, sub),
        st.builds(lambda k, ss: {k: ss}, st.sampled_from(["allOf", "anyOf", "oneOf"]),
                  st.lists(sub, min_size=1, max_size=2)),
    )


schemas4 = st.recursive(st.sampled_from([{}, {"type": "integer"}, {"items": {"type": "integer"}},
                                         {"properties": {"x": {"type": "integer"}}}]),
                        lambda sub: st.lists(_draft4(sub), min_size=1, max_size=2).map(_merged),
                        max_leaves=4)


@settings(max_examples=150, deadline=None)
@given(schemas4, st.lists(values4, min_size=1, max_size=3))
def test_values_split_by_spelling_are_the_language(schema, vals):
    schema = {"$schema": DRAFT4, "enum": vals, "allOf": [schema]}
    oracle = jsonschema.Draft4Validator(schema)
    sir = resolve(schema)
    # (keys in any order, undeclared ones too: which objects are written is then the values')
    split = passing(sir.root.assertions, sir, True, (("schema", sir.root),))
    event("left to the automata" if split is None else "split by spelling"
          if any("Spelled" in repr(v) for v in split) else "decided by the values")
    try:
        got = compile_json_schema(schema, whitespace=0, **FREE)
    except SchemaError:
        got = None          # (no value passes)
    # complements hold numbers in canonical spellings only (see .lower): where the rewriting
    # takes one (not, oneOf), the values need not decide alone, and no more than valid is kept
    exact = split is not None and not re.search(r'"(not|oneOf)"', json.dumps(schema))
    for v in vals:
        for text in _spellings(v):
            ok = got is not None and got.accepts(text)
            if exact:
                assert ok == oracle.is_valid(json.loads(text)), (schema, text)
            else:
                assert not ok or oracle.is_valid(json.loads(text)), (schema, text)


def test_a_value_is_kept_in_the_spellings_that_pass():
    # {"bar": 2} meets "integer" as {"bar":2}, not as {"bar":2.0}: one value, two verdicts
    schema = {"enum": [{"bar": 2, "foo": "baz"}], "required": ["bar"],
              "properties": {"bar": {"type": "integer"}}}
    sir = resolve(schema)
    assert passing(sir.root.assertions, sir, free_objects=True) == (
        {"bar": Spelled(2, True), "foo": "baz"},)
    got = compile_json_schema(schema, whitespace=0, **FREE)
    assert got.accepts('{"foo":"baz","bar":2}') and not got.accepts('{"bar":2.0,"foo":"baz"}')
    # every spelling passes: the value as listed; none does: nothing
    anything = resolve({"enum": [[2]], "anyOf": [{"items": {"type": "integer"}},
                                                 {"items": {"type": "number"}}]})
    assert passing(anything.root.assertions, anything,
                   residual=(("schema", anything.root.applicators[0]),)) == ([2],)
    no = resolve({"enum": [[2]], "items": {"not": {"type": "number"}}})
    assert passing(no.root.assertions, no) == ()
    # past SPELLED_MAX integral numbers, the product decides
    many = resolve({"enum": [list(range(SPELLED_MAX + 1))], "items": {"type": "integer"}})
    assert passing(many.root.assertions, many) is None
