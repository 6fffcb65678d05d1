"""Counted strings and arrays of schemas (:mod:`tokenfsm.schema.lower_lazy`) against independent
oracles: the flat route (the expanded network equals the flat automaton; masks agree with the
flat index at every step on a real vocabulary), the flat route's exact languages for length
bounds under exclusions, and ``jsonschema`` on documents sampled under a memory limit."""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import random
import subprocess
import sys
import textwrap

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.automata.lazy_bytes import COUNTED as COUNTED_PIECE
from tokenfsm.masks import IndexCompiler, Matcher, TokenIndex, allocate_token_bitmask, unpack_bitmask
from tokenfsm.masks.pushdown import PushdownIndex
from tokenfsm.schema import SchemaError, compile_json_schema
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.automata.errors import DEFAULT_BUDGET
from tokenfsm.automata.network import Call, Network, Text, expand
from tokenfsm.automata.recursive import HOLES
from tokenfsm.schema.jsontext import COMPOSE_MIN_ROWS
from tokenfsm.schema.lower_lazy import MAP_COUNT_MIN
from tokenfsm.schema.lower_scalars import any_value, open_value_texts
from tokenfsm.schema.tuning import DEFAULT_TUNING, Tuning

COUNTED = Tuning(lazy_states=0)   # every node of a counted shape is counted
FLAT = Tuning(lazy_states=None)


def _string(lo, span):
    s = {"type": "string", "minLength": lo}
    if span is not None:
        s["maxLength"] = lo + span
    return s


def _array(items, prefix, lo, span, closed):
    s = {"type": "array", "minItems": lo}
    if span is not None:
        s["maxItems"] = lo + span
    if prefix:
        s["prefixItems"] = prefix
    if closed:
        s["items"] = False
    elif items is not None:
        s["items"] = items
    return s


LEAVES = st.one_of(
    st.builds(_string, st.integers(0, 2), st.none() | st.integers(0, 3)),
    st.sampled_from([{"type": "integer"}, {"type": "boolean"}, {"enum": ["a", 1, None]},
                     {"type": "object", "properties": {"k": {"type": "integer"}}},
                     {"type": "string", "pattern": "^[ab]+$"}]),
    st.builds(lambda s, p: {**s, "pattern": p}, st.builds(_string, st.integers(0, 2),
                                                          st.none() | st.integers(0, 3)),
              st.sampled_from(["^[ab]*b", "é|\\\\|\"", "a"])),
    st.builds(lambda s: {**s, "format": "date"}, st.builds(_string, st.integers(9, 10),
                                                           st.none() | st.integers(0, 1))),
)
def _object(props, required):
    names = [f"k{i}" for i in range(len(props))]
    return {"type": "object", "properties": dict(zip(names, props)),
            "required": [n for n, r in zip(names, required) if r]}


SCHEMAS = st.recursive(LEAVES, lambda inner: st.one_of(
    st.builds(_array, st.none() | inner, st.lists(inner, max_size=2), st.integers(0, 2),
              st.none() | st.integers(0, 3), st.booleans()),
    st.builds(_object, st.lists(inner, min_size=1, max_size=3), st.lists(st.booleans(),
                                                                         min_size=3, max_size=3)),
    st.builds(lambda a, b: {"anyOf": [a, b]}, inner, inner),
    st.builds(lambda a: {"allOf": [a, {"not": {"const": "ab"}}]}, inner),
    st.builds(lambda a: {"allOf": [a, {"enum": [[], [1, "a"], {"k0": "a"}, {}, "ab"]}]}, inner),
), max_leaves=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMAS, ws=st.sampled_from([0, 1]), excludes=st.sampled_from([[], ["ab", "1,"]]))
def test_counted_schemas_equal_the_flat_route(schema, ws, excludes):
    options = dict(whitespace=ws, max_depth=2, excludes=excludes)
    try:
        flat = compile_tuned(schema, FLAT, **options)
    except SchemaError as e:   # unsatisfiable: the same error, the same pointer
        with pytest.raises(SchemaError) as c:
            compile_tuned(schema, COUNTED, **options)
        assert c.value.pointer == e.pointer
        return
    counted = compile_tuned(schema, COUNTED, **options)
    assert flat.lazy is None
    assert _language(counted) == flat.dfa


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(LEAVES, min_size=5, max_size=6), required=st.lists(st.booleans(),
       min_size=6, max_size=6), extra=st.sampled_from([None, False, {"type": "integer"}]),
       bounds=st.sampled_from([(0, None), (2, 4), (1, 5)]))
def test_key_sets_equal_the_flat_any_order_objects(values, required, extra, bounds):
    schema = _object(values, required)
    if extra is not None:
        schema["additionalProperties"] = extra
    schema["minProperties"], schema["maxProperties"] = bounds
    if bounds[1] is None:
        del schema["maxProperties"]
    counted = _same_as_flat(schema, whitespace=0, property_order="any", max_depth=2)
    assert counted is None or counted.lazy is not None


def _language(cs):
    """The language ``cs`` is walked in: its network expanded where it has one. (Its ``dfa``
    is then the flat route's automaton, built because it is the same language: comparing that
    with the flat route would prove nothing.)"""
    return expand(cs.lazy) if cs.lazy is not None else cs.dfa


def _same_as_flat(schema, **options):
    """The counted compilation of ``schema``, its network's language checked against the flat
    route's automaton (None where the schema has no valid value)."""
    try:
        flat = compile_tuned(schema, FLAT, **options)
    except SchemaError:
        return None
    counted = compile_tuned(schema, COUNTED, **options)
    assert _language(counted) == flat.dfa
    return counted


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=LEAVES, required=st.booleans(), extra=st.one_of(LEAVES, st.just(True)),
       ws=st.sampled_from([0, 1]))
def test_one_declared_key_beside_undeclared_ones_is_a_key_set(value, required, extra, ws):
    # in any order, one declared key among undeclared ones: a key set whose undeclared members
    # call their value (rather than the flat object copying it at each member), same language
    schema = {**_object([value], [required]), "additionalProperties": extra}
    options = dict(whitespace=ws, property_order="any", max_depth=2)
    try:
        flat = compile_tuned(schema, FLAT, **options)
    except SchemaError:
        return
    counted = compile_tuned(schema, COUNTED, **options)
    assert _language(counted) == flat.dfa
    closed = compile_tuned({**schema, "additionalProperties": False}, FLAT, **options)
    if value == {"type": "integer"} and closed.dfa != flat.dfa:
        # (where some undeclared member has a value: a 9-character date has none)
        assert counted.lazy is not None


def _dependent(props, required, deps, absent, extra):
    """An object whose keys depend on others (``dependentRequired``) and that must not hold some
    keys together (``not: {required}``): the rewriting's alternatives differ only in the keys
    they require and forbid. Names ``k0..`` declared, ``u`` not."""
    s = _object(props, required)
    names = [f"k{i}" for i in range(len(props))] + ["u"]
    s["dependentRequired"] = {names[k]: [names[v] for v in vs] for k, vs in deps.items()}
    if absent:
        s["not"] = {"required": [names[i] for i in absent]}
    if extra is not None:
        s["additionalProperties"] = extra
    return s


NAME_SETS = st.sets(st.integers(0, 5), max_size=2)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(LEAVES, min_size=5, max_size=5), required=st.lists(st.booleans(),
       min_size=5, max_size=5), deps=st.dictionaries(st.integers(0, 5), NAME_SETS, max_size=2),
       absent=NAME_SETS, extra=st.sampled_from([None, False, {"type": "integer"}]),
       extra_keys=st.booleans())
def test_objects_differing_in_required_keys_are_one_key_set(values, required, deps, absent,
                                                           extra, extra_keys):
    counted = _same_as_flat(_dependent(values, required, deps, absent, extra), whitespace=0,
                            property_order="any", max_depth=2, allow_extra_keys=extra_keys)
    assert counted is None or counted.lazy is not None


#: JSONSchemaBench Handwritten dep10 (MIT, see tests/data/schema/README.md): dependencies among
#: pattern-named keys, seven alternatives that differ in the keys they require and forbid.
DEP10 = {"additionalProperties": False, "allOf": [{"dependencies": {
    "a": {"anyOf": [{"required": ["c"]}, {"required": ["b"]}]},
    "b": {"not": {"required": ["c"]}}, "c": {"allOf": [{"required": ["e"]}, {"required": ["a"]}]},
    "d": {"not": {"required": ["e"]}}, "e": {"anyOf": [{"required": ["c"]}, {"required": ["d"]}]}}}],
    "minProperties": 4, "patternProperties": {"^[a-f]$": {"minItems": 2, "type": "array"}},
    "type": "object"}


def test_dependencies_among_pattern_keys_in_any_order_against_jsonschema():
    # flat in any order: a budget error (250,761 states); one key set with a term for each
    # alternative: every subset of the keys, in two orders, as jsonschema decides
    cs = compile_json_schema(DEP10, whitespace=0, property_order="any", allow_extra_keys=True)
    assert cs.lazy is not None and np.diff(cs.lazy.piece_terms).max() > 1
    validator = __import__("jsonschema").Draft7Validator(DEP10)
    rng = random.Random(0)
    got = []
    for k in range(8):
        for keys in __import__("itertools").combinations("abcdefg", k):
            for _ in range(2):
                keys = rng.sample(keys, len(keys))
                doc = {x: [1, 2] for x in keys}
                want = validator.is_valid(doc)
                assert cs.accepts(json.dumps(doc, separators=(",", ":"))) == want, doc
                got.append(want)
    assert sum(got) == 4       # abdf and acef, two orders each
    assert not cs.accepts('{"a":[1,2],"b":[1,2],"d":[1,2],"f":[1]}')


MASKBENCH = pathlib.Path(os.environ.get("TOKENFSM_CORPORA", "/work/shared/corpora")) / "maskbench"


@pytest.mark.slow
@pytest.mark.skipif(not MASKBENCH.exists(), reason="maskbench corpus not available")
def test_corpus_objects_with_key_terms_equal_the_flat_route():
    # every Handwritten and Glaiveai2K schema whose objects in any order become key sets of
    # several terms: the language the flat route's wherever that builds under its budget
    seen = dict(terms=0, equal=0, flat_over=0)
    for name in ("Handwritten", "Glaiveai2K"):
        with gzip.open(MASKBENCH / f"{name}.jsonl.gz", "rt") as fh:
            rows = [json.loads(line) for line in fh if '"required"' in line]
        for row in rows:
            for extra_keys in (False, True):
                options = dict(whitespace=0, property_order="any", allow_extra_keys=extra_keys,
                               strict=False, max_depth=2)
                try:
                    got = compile_tuned(row["schema"], DEFAULT_TUNING, budget=Budget(
                        max_states=200_000, max_seconds=10), **options)
                except (BudgetExceeded, SchemaError):
                    continue
                if got.lazy is None or np.diff(got.lazy.piece_terms).max() < 2:
                    continue
                seen["terms"] += 1
                try:
                    flat = compile_tuned(row["schema"], FLAT, budget=Budget(
                        max_states=60_000, max_seconds=10), **options)
                except BudgetExceeded:
                    seen["flat_over"] += 1
                    continue
                assert flat.dfa == _language(got), (row["name"], extra_keys)
                seen["equal"] += 1
    assert seen["equal"] >= 40, seen


def test_names_that_terms_read_are_members_where_undeclared_keys_are_allowed():
    # "u", required with "k4", is a member of the object in every alternative, also where
    # undeclared keys are allowed: written at most once, in its shortest spelling, as declared
    # names are (not as an undeclared key, which could repeat); one key set, and the flat
    # route's language
    schema = {"type": "object", "properties": {f"k{i}": {"type": "integer"} for i in range(5)},
              "dependentRequired": {"k4": ["u"]}}
    options = dict(whitespace=0, property_order="any", allow_extra_keys=True)
    counted = compile_tuned(schema, COUNTED, **options)
    assert counted.lazy is not None and np.diff(counted.lazy.piece_terms).max() == 2
    assert _language(counted) == compile_tuned(schema, FLAT, **options).dfa
    validator = __import__("jsonschema").Draft202012Validator(schema)
    for text, written in [('{"u":2,"k0":1}', True), ('{"k4":1,"u":2}', True),
                          ('{"zz":1,"k4":1,"zz":2,"u":[]}', True), ('{"k4":1}', False),
                          ('{"u":1,"u":2,"k0":1}', False), ('{"\\u0075":1,"k0":1}', False),
                          ('{"k4":1,"\\u0075":2}', False)]:
        assert counted.accepts(text) is written, text
        assert not written or validator.is_valid(json.loads(text))
    # without undeclared keys, "u" is written only where it is required
    closed = compile_tuned(schema, COUNTED, whitespace=0, property_order="any")
    assert np.diff(closed.lazy.piece_terms).max() == 2
    assert not closed.accepts('{"u":2,"k0":1}') and closed.accepts('{"k4":1,"u":2}')


def test_dependent_keys_in_any_order_are_terms_of_one_key_set(qwen):
    # 5 required keys, "shape" requiring 3 undeclared ones (Glaiveai2K calculate_area, closed);
    # flat in any order the two alternatives' subsets of keys passed the budget
    dims = {"type": "object", "properties": {k: {"type": "number"} for k in
                                             ("radius", "length", "width", "base", "height")},
            "required": ["radius", "length", "width", "base", "height"],
            "dependencies": {"shape": ["circle", "rectangle", "triangle"]}}
    options = dict(whitespace=0, property_order="any", strict=False)
    cs = compile_json_schema(dims, **options)
    lb = cs.lazy
    assert lb is not None and np.diff(lb.piece_terms).max() == 2
    validator = __import__("jsonschema").Draft7Validator(dims)
    rng = random.Random(0)
    names = ["radius", "length", "width", "base", "height", "shape", "circle", "rectangle",
             "triangle"]     # (no other key: without allow_extra_keys none is written)
    seen = set()
    for _ in range(400):
        keys = [n for n in names if rng.random() < 0.9]
        rng.shuffle(keys)
        doc = {k: rng.choice([1, 2.5, "x"]) for k in keys}
        text = json.dumps(doc, separators=(",", ":"))
        # (undeclared keys are written only where required: with "shape")
        want = validator.is_valid(doc) and ("shape" in doc or not {"circle", "rectangle",
                                                                  "triangle"} & set(doc))
        seen.add(want)
        assert cs.accepts(text) == want, text
    assert seen == {True, False}
    # and small enough for the flat route: the same masks at every step
    small = {"properties": {"radius": {"enum": [1]}, "width": {"enum": [1]}},
             "required": ["radius"], "dependencies": {"shape": ["circle"]}}
    counted = compile_tuned(small, COUNTED, **options)
    flat = compile_tuned(small, FLAT, **options)
    assert np.diff(counted.lazy.piece_terms).max() == 2
    index = PushdownIndex(counted.lazy, qwen)
    flat_index = TokenIndex.build(flat.dfa, qwen)
    for seed in range(4):
        _walk(index, flat_index, qwen, random.Random(seed), steps=25)


TAGS = st.sampled_from([["x"], ["y"], ["x", "y"], ["z"]])
UNION_VALUES = ["x", "y", "z", 1, 2.5, True, None, {}, {"k": 1}, [1], "ab"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alts=st.lists(st.tuples(TAGS, st.dictionaries(st.sampled_from("abc"), LEAVES, max_size=2),
                               st.lists(st.sampled_from("abct"), max_size=2)),
                     min_size=2, max_size=3),
       kind=st.sampled_from(["anyOf", "oneOf"]), extra_keys=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_unions_of_objects_in_any_order_equal_the_flat_route(alts, kind, extra_keys, seed):
    # alternatives tagged by "t" (enums that may overlap) with members of their own: one key set
    # where it can be (a member per class of values the same alternatives allow), the flat
    # route's language, and with undeclared keys allowed what jsonschema decides
    schema = {"type": "object", kind: [
        {"properties": {"t": {"enum": tags}, **props}, "required": req} for tags, props, req in
        alts]}
    counted = _same_as_flat(schema, whitespace=0, property_order="any", max_depth=2,
                            allow_extra_keys=extra_keys)
    if counted is None or not extra_keys:
        return
    validator = __import__("jsonschema").Draft202012Validator(schema)
    rng = random.Random(seed)
    for _ in range(60):
        doc = {k: rng.choice(UNION_VALUES) for k in rng.sample("tabcu", rng.randint(0, 4))}
        want = validator.is_valid(doc)
        assert counted.accepts(json.dumps(doc, separators=(",", ":"))) == want, doc


#: Github_trivial o14485 (MIT, see tests/data/schema/README.md): alternatives tagged by an enum.
TAGGED = {"type": "object", "oneOf": [
    {"type": "object", "required": ["type"], "properties": {
        "email": {"type": "string"}, "type": {"type": "string", "enum": ["addUser"]},
        "userId": {"type": "integer"}}},
    {"type": "object", "required": ["type"], "properties": {
        "email": {"type": "string"}, "type": {"type": "string", "enum": ["removeUser"]},
        "userId": {"type": "integer"}}}]}


def test_a_tagged_union_in_any_order_is_one_key_set(qwen):
    # each alternative flat in any order copied any value per subset of keys (391 ms); one key
    # set whose tag is a member per alternative, its value written in place
    options = dict(whitespace=0, property_order="any", allow_extra_keys=True)
    cs = compile_json_schema(TAGGED, **options)
    assert cs.lazy is not None and np.diff(cs.lazy.piece_terms).max() == 2
    for text, ok in [('{"userId":1,"type":"addUser"}', True),
                     ('{"x":[],"type":"removeUser","email":"a"}', True),
                     ('{"type":"addUser","type":"removeUser"}', False),
                     ('{"type":"addUser","type":"addUser"}', False),
                     ('{"email":"a","userId":2}', False), ('{"type":"add"}', False),
                     ('{"type":"addUser","userId":"1"}', False)]:
        assert cs.accepts(text) is ok, text
    # masks against the flat index at every step (small objects: no undeclared keys)
    closed = dict(whitespace=0, property_order="any")
    counted = compile_tuned(TAGGED, COUNTED, **closed)
    flat = compile_tuned(TAGGED, FLAT, **closed)
    assert counted.lazy is not None and _language(counted) == flat.dfa
    index, flat_index = PushdownIndex(counted.lazy, qwen), TokenIndex.build(flat.dfa, qwen)
    for seed in range(4):
        _walk(index, flat_index, qwen, random.Random(seed), steps=20)


#: Glaiveai2K calculate_area_2048ff20 (MIT, see tests/data/schema/README.md), descriptions out.
SHAPES = {"type": "object", "required": ["shape", "dimensions"], "properties": {
    "shape": {"enum": ["circle", "rectangle", "triangle"], "type": "string"},
    "dimensions": {"type": "object", "oneOf": [
        {"properties": {"radius": {"type": "number"}}, "required": ["radius"]},
        {"properties": {"length": {"type": "number"}, "width": {"type": "number"}},
         "required": ["length", "width"]},
        {"properties": {"base": {"type": "number"}, "height": {"type": "number"}},
         "required": ["base", "height"]}]}}}


def test_a_one_of_three_objects_with_undeclared_keys_is_one_key_set():
    # with undeclared keys each object takes the others' names as any value: the oneOf is 32
    # alternatives (an object, the other two negated), 96 terms; their flat union in any order
    # took 16 s. Checked against jsonschema on documents mixing the names and their values.
    cs = compile_json_schema(SHAPES, whitespace=0, property_order="any", allow_extra_keys=True)
    assert cs.lazy is not None and np.diff(cs.lazy.piece_terms).max() > 32
    validator = __import__("jsonschema").Draft7Validator(SHAPES)
    rng = random.Random(0)
    names = ["radius", "length", "width", "base", "height", "side"]
    seen = set()
    for _ in range(300):
        keys = rng.sample(names, rng.randint(0, 4))
        dims = {k: rng.choice([1, 2.5, "x", None, {}, [1]]) for k in keys}
        doc = dict(rng.sample([("shape", "circle"), ("dimensions", dims)], 2))
        want = validator.is_valid(doc)
        seen.add(want)
        assert cs.accepts(json.dumps(doc, separators=(",", ":"))) is want, doc
    assert seen == {True, False}


#: Github_trivial o47165 (MIT, see tests/data/schema/README.md), four of its thirteen branches.
EXPRESSIONS = {"$ref": "#/definitions/expr", "definitions": {"expr": {"anyOf": [
    {"type": "number"},
    {"additionalProperties": False, "properties": {"exp": {"$ref": "#/definitions/expr"}},
     "required": ["exp"], "type": "object"},
    *({"additionalProperties": False, "required": [op], "type": "object", "properties": {
        op: {"items": {"$ref": "#/definitions/expr"}, "minItems": 2, "maxItems": 2,
             "type": "array"}}} for op in ("-", "pow"))]}}}


@pytest.mark.parametrize("max_depth", [2, 3, 4])
def test_pieces_inside_a_recursion_are_made_at_each_depth(max_depth):
    # the union's key set and the arrays were kept by place: the one made first, innermost,
    # where the recursion is cut, stood for every depth ({"exp":{"exp":1}} refused at 3)
    options = dict(whitespace=0, property_order="any", max_depth=max_depth)
    flat = compile_tuned(EXPRESSIONS, FLAT, **options)
    for tuning in (COUNTED, DEFAULT_TUNING):
        got = compile_tuned(EXPRESSIONS, tuning, **options)
        assert got.lazy is not None and _language(got) == flat.dfa
    nested = lambda n: '{"exp":' * n + "1" + "}" * n     # noqa: E731
    assert got.accepts(nested(max_depth - 1)) and not got.accepts(nested(max_depth))
    assert got.accepts('{"pow":[{"exp":1},2]}') is (max_depth >= 3)


#: A tree and a list of trees that call each other (two entries into one cycle), its objects
#: key sets in any order.
TREES = {"$defs": {
    "tree": {"type": "object", "properties": {
        "a": {"type": "boolean"}, "b": {"type": "null"}, "c": {"type": "integer"},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}, "maxItems": 2},
        "more": {"$ref": "#/$defs/trees"}}},
    "trees": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#/$defs/tree"}}]}},
    "type": "object", "properties": {"tree": {"$ref": "#/$defs/tree"},
                                     "trees": {"$ref": "#/$defs/trees"}}}


@pytest.mark.parametrize("max_depth", [1, 2])
def test_recursive_definitions_in_any_order_are_called_pieces(max_depth, qwen):
    options = dict(whitespace=0, property_order="any")
    unrolled = DEFAULT_TUNING.with_reference("call_recursion")    # the stack route's automata
    got = compile_tuned(TREES, DEFAULT_TUNING, **options, max_depth=max_depth)
    assert got.lazy is not None
    flat = compile_tuned(TREES, unrolled, **options, max_depth=max_depth).dfa
    assert _language(got) == flat
    if max_depth == 1:      # (the flat index of depth 2 is too large to build here)
        index, flat_index = PushdownIndex(got.lazy, qwen), TokenIndex.build(flat, qwen)
        for seed in range(3):
            _walk(index, flat_index, qwen, random.Random(seed), steps=40)
    # the walk counts the frames of each definition's piece
    deeper = compile_tuned(TREES, DEFAULT_TUNING, **options, max_depth=max_depth + 2)
    nested = lambda n: '{"kids":[' * n + '{"a":true}' + "]}" * n      # noqa: E731
    assert deeper.accepts('{"tree":' + nested(max_depth + 1) + "}")
    assert not deeper.accepts('{"tree":' + nested(max_depth + 2) + "}")


def _node(values, required, kids):
    """A recursive definition: an object of ``values`` (keys ``k0``...) and ``kids``, a value
    holding references to itself or to a definition that refers back to it."""
    names = [f"k{i}" for i in range(len(values))]
    return {"type": "object", "properties": {**dict(zip(names, values)), "kids": kids},
            "required": [n for n, r in zip(names + ["kids"], required) if r]}


_SELF, _OTHER = {"$ref": "#/$defs/node"}, {"$ref": "#/$defs/list"}
KIDS = st.sampled_from([
    {"type": "array", "items": _SELF, "maxItems": 2}, {"anyOf": [{"type": "null"}, _SELF]},
    _OTHER, {"type": "array", "items": _OTHER, "maxItems": 1},
    {"allOf": [_SELF, {"not": {"required": ["k0"]}}]},       # a product: the cycle unrolled
    {"anyOf": [_SELF, {"type": "object", "properties": {"z": {"type": "integer"}}}]}])
SMALL = st.sampled_from([{"type": "boolean"}, {"enum": ["a", 1, None]}, _string(0, 2),
                         {"type": "string", "pattern": "^[ab]+$"}, {"type": "integer"}])
RECURSIVE = st.builds(
    lambda node, root: {"$defs": {"node": node, "list": {"anyOf": [
        {"type": "null"}, {"type": "array", "items": _SELF, "maxItems": 2}]}}, **root},
    st.builds(_node, st.lists(SMALL, min_size=2, max_size=3),
              st.lists(st.booleans(), min_size=4, max_size=4), KIDS),
    st.sampled_from([{"type": "object", "properties": {"n": _SELF, "l": _OTHER}},
                     {"type": "array", "items": _SELF}, _SELF]))


#: The flat route builds at most this much for a generated recursive schema (two levels of
#: objects in any order, each a state per subset of keys, grow fast).
ORACLE_BUDGET = Budget(max_states=20_000)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=RECURSIVE, max_depth=st.integers(1, 2), extra=st.booleans())
def test_called_recursion_equals_the_flat_route(schema, max_depth, extra):
    # recursive definitions called as pieces (or, past a product or a conflict at "{", their
    # cycle unrolled): the language of the flat route, which unrolls every one of them
    extra = extra and max_depth == 1    # (undeclared keys two levels deep: too large flat)
    options = dict(whitespace=0, property_order="any", allow_extra_keys=extra,
                   max_depth=max_depth)
    try:
        flat = compile_tuned(schema, FLAT, recursion="unroll", budget=ORACLE_BUDGET, **options)
    except SchemaError:
        with pytest.raises(SchemaError):
            compile_tuned(schema, COUNTED, **options)
        return
    except BudgetExceeded:
        assume(False)     # (too large for the oracle)
    assert _language(compile_tuned(schema, COUNTED, **options)) == flat.dfa


def test_a_recursive_definition_merged_in_place_unrolls_its_cycle():
    # the allOf takes "trees" in place, its depth counted there: calls of the cycle's pieces
    # would count their frames apart from it (one level too many inside "one")
    options = dict(whitespace=0, property_order="any", max_depth=1)
    both = dict(TREES, properties={**TREES["properties"], "one": {"allOf": [
        {"$ref": "#/$defs/trees"}, {"maxItems": 1}]}})
    got = compile_tuned(both, DEFAULT_TUNING, **options)
    unrolled = compile_tuned(both, DEFAULT_TUNING.with_reference("call_recursion"), **options)
    assert _language(got) == unrolled.dfa
    assert got.accepts('{"one":[{"a":true}]}') and not got.accepts('{"one":[{"more":null}]}')


ELEMENT = {"type": "object", "additionalProperties": False, "required": ["type"], "properties": {
    "type": {"type": "string"}, "props": {"type": "object", "additionalProperties": True},
    "children": {"oneOf": [{"type": "string"}, {"$ref": "#/$defs/element"},
                           {"type": "array", "items": {"$ref": "#/$defs/element"}}]}}}


@pytest.mark.parametrize("root", [{"type": "object", "properties": {"top": {
    "$ref": "#/$defs/element"}}}, {"$ref": "#/$defs/element", "type": "object"}])
def test_a_oneof_of_other_types_beside_a_recursion_needs_no_complement(root):
    # a string, the element itself or a list of elements (Github_easy o83258): no branch holds
    # a value of another's types, so the oneOf takes nothing away from any of them and nothing
    # sees through a call; under the first root the recursion is a piece, the second (merged
    # in place) unrolls it, its list a counted piece that a branch's filter by type drops whole
    schema = {"$defs": {"element": ELEMENT}, **root}
    for max_depth in (1, 2):
        options = dict(whitespace=0, property_order="any", allow_extra_keys=True,
                       max_depth=max_depth)
        got = compile_tuned(schema, DEFAULT_TUNING, **options)
        assert got.lazy is not None
        unrolled = compile_tuned(schema, FLAT, **options, recursion="unroll")
        assert _language(got) == unrolled.dfa
    doc = '{"children":[{"type":"b","children":"c"}],"type":"a","props":{"x":[]}}'
    assert got.accepts('{"top":' + doc + "}" if "properties" in root else doc)


def test_union_members_told_apart_by_their_first_byte_are_calls():
    # "lose" is an object in one alternative and any value in the other (an undeclared key
    # there): a member for objects, one for the rest, each a call (Github_trivial o19070)
    schema = {"type": "object", "oneOf": [
        {"properties": {"id": {"type": "string"}, "win": {}}, "required": ["id", "win"]},
        {"properties": {"id": {"type": "string"}, "lose": {"type": "object"}},
         "required": ["id", "lose"]}]}
    options = dict(whitespace=0, property_order="any", allow_extra_keys=True, max_depth=2)
    counted = compile_tuned(schema, COUNTED, **options)
    assert counted.lazy is not None
    assert _language(counted) == compile_tuned(schema, FLAT, **options).dfa
    assert counted.accepts('{"lose":1,"id":"a","win":2}')
    assert not counted.accepts('{"lose":{},"id":"a","win":2}')      # both: not oneOf
    assert counted.accepts('{"lose":{},"id":"a"}')
    # values of other types need no product: a counted string (a call) beside an integer
    schema = {"type": "object", "anyOf": [
        {"properties": {"v": {"type": "string", "maxLength": 600}, "a": {"type": "integer"}},
         "required": ["a"], "additionalProperties": False},
        {"properties": {"v": {"type": "integer"}, "b": {"type": "boolean"}}, "required": ["b"],
         "additionalProperties": False}]}
    options = dict(whitespace=0, property_order="any")
    counted = compile_tuned(schema, COUNTED, **options)
    assert counted.lazy is not None and np.diff(counted.lazy.piece_terms).max() > 1
    assert _language(counted) == compile_tuned(schema, FLAT, **options).dfa
    assert counted.accepts('{"v":"' + "x" * 600 + '","a":1}') and counted.accepts('{"b":true,"v":3}')
    assert not counted.accepts('{"b":true,"v":"x"}') and not counted.accepts('{"v":3,"a":1}')


def test_an_object_of_one_key_and_open_members_calls_their_value():
    # any value under undeclared keys is far past the threshold: the default tuning makes the
    # object a key set (its index lazy, not the flat copies of every value indexed up front)
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}
    cs = compile_json_schema(schema, property_order="any", allow_extra_keys=True, whitespace=0)
    assert cs.lazy is not None
    assert cs.accepts('{"x":[{"a":null}],"n":3,"y":"z"}') and not cs.accepts('{"n":-1}')
    assert not cs.accepts('{"n":1,"n":2}')
    assert compile_json_schema(schema, whitespace=0).lazy is None     # (schema order: flat)


@pytest.mark.parametrize("whitespace", [0, 1])
@pytest.mark.parametrize("excludes", [(), ("ab", "1,")])
def test_every_value_calling_its_containers_is_the_unrolled_value(whitespace, excludes):
    # the scalars, or a call of the objects or the arrays whose member values and items are the
    # scalars or a call of either, at most d frames of both deep: every value nested d levels
    # deep. Counted apart, objects and arrays would nest d of each (more than the flat value).
    holes = (HOLES[0], HOLES[1])
    value, objects, arrays = open_value_texts(whitespace, excludes, DEFAULT_BUDGET,
                                              COMPOSE_MIN_ROWS, holes)
    for depth in range(4):
        nets = []
        for grouped in (True, False):
            net = Network()
            o, a = net.declare(), net.declare()
            calls = ((holes[0], Call(o)), (holes[1], Call(a)))
            net.piece(Text(objects, calls=calls), into=o)
            net.piece(Text(arrays, calls=calls), into=a)
            if grouped:
                net.same_depth(o, a)
            nets.append(net.to_dfa(net.piece(Text(value, calls=calls)), max_depth=depth))
        want = any_value(whitespace, excludes, depth, DEFAULT_BUDGET, COMPOSE_MIN_ROWS).to_dfa()
        assert nets[0] == want
        assert (nets[1] == want) == (depth == 0)


def test_open_values_of_a_key_set_call_their_containers(qwen):
    # undeclared members' values on the lazy route: a piece per nesting level, not the unrolled
    # value (whose states double with each level); masks equal to the flat index's on a text
    # that nests them
    schema = {**_object([{"type": "integer"}, _string(0, 3)], [True, False]),
              "additionalProperties": True}
    options = dict(whitespace=0, property_order="any", max_depth=3)
    counted = compile_tuned(schema, COUNTED, **options)
    flat = compile_tuned(schema, FLAT, **options)
    index, flat_index = PushdownIndex(counted.lazy, qwen), TokenIndex.build(flat.dfa, qwen)
    text = '{"x":[{"a":[1,"b"]},[]],"k1":"ab","y":{"z":null,"":{}},"k0":7}'
    m, f = Matcher(index), Matcher(flat_index)
    bm = allocate_token_bitmask(2, qwen.size)
    for ch in text:
        m.fill_next_token_bitmask(bm, 0)
        f.fill_next_token_bitmask(bm, 1)
        assert bm[0].tolist() == bm[1].tolist(), ch
        assert m.accept_string(ch) and f.accept_string(ch)
    assert m.is_accepting() and f.is_accepting()
    deep = compile_json_schema(schema, **{**options, "max_depth": 6}, allow_extra_keys=True)
    assert deep.lazy.num_states < 1500                   # (unrolled, the value alone: 6,000)
    assert deep.accepts('{"x":' + "[" * 6 + "1" + "]" * 6 + ',"k0":1}')
    assert not deep.accepts('{"x":' + "[" * 7 + "1" + "]" * 7 + ',"k0":1}')


#: Open values in the places a schema holds them: the root, members, a negation's other types,
#: array items beside declared ones, the alternatives of a union of objects.
OPEN_SCHEMAS = [
    {"type": "object"},
    {"type": "object", "properties": {"a": {}, "b": {"type": "array"}}, "required": ["a"]},
    {"properties": {"foo": {"not": {"type": "number"}}}, "required": ["foo"]},
    {"type": "array", "minItems": 2, "items": {"anyOf": [{"type": "string"}, {"type": "object"}]}},
    {"type": "object", "oneOf": [
        {"properties": {"w": {"type": "object"}, "id": {"type": "string"}},
         "required": ["id", "w"]},
        {"properties": {"id": {"type": "string"}, "l": {"type": "object"}},
         "required": ["id", "l"]}]},
]


@pytest.mark.filterwarnings("ignore:values nested deeper")
@pytest.mark.parametrize("order", ["schema", "any"])
@pytest.mark.parametrize("schema", OPEN_SCHEMAS)
def test_deep_open_values_are_calls_equal_to_the_flat_route(schema, order, qwen):
    # past OPEN_VALUE_STATES (from max_depth=4) every open value calls the pieces of every
    # object and every array, nested max_depth deep in all: the flat route's language, and its
    # masks at every step of random walks on Qwen
    options = dict(whitespace=0, max_depth=4, property_order=order,
                   allow_extra_keys=order == "any")
    lazy = compile_tuned(schema, DEFAULT_TUNING, **options)
    flat = compile_tuned(schema, FLAT, **options)
    assert lazy.lazy is not None and flat.lazy is None
    assert expand(lazy.lazy) == flat.dfa
    index, flat_index = PushdownIndex(lazy.lazy, qwen), TokenIndex.build(flat.dfa, qwen)
    for seed in range(3):
        _walk(index, flat_index, qwen, random.Random(seed), steps=30)
    shallow = compile_tuned(schema, DEFAULT_TUNING, **{**options, "max_depth": 3})
    assert shallow.lazy is None or order == "any"        # (at 3 the value stays in place)


@pytest.mark.filterwarnings("ignore:values nested deeper")
def test_open_values_cost_the_same_at_any_depth():
    # the unrolled value doubles with each level (past 7, more than 5,000 states: a budget
    # error); calls of the pieces of every object and every array take a variant per level
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {}}}}
    budget = Budget(max_states=5000)
    sizes = []
    for depth in (4, 8, 16):
        cs = compile_json_schema(schema, whitespace=0, max_depth=depth, budget=budget)
        sizes.append(cs.lazy.num_states)
        deepest = "[" * (depth - 1) + "{}" + "]" * (depth - 1)     # (an item: depth deep)
        assert cs.accepts('{"a":[' + deepest + "]}")
        assert not cs.accepts('{"a":[[' + deepest + "]]}")
    assert sizes[2] < 5 * sizes[0]
    with pytest.raises(BudgetExceeded):
        compile_tuned(schema, FLAT, whitespace=0, max_depth=16, budget=budget)


@pytest.mark.filterwarnings("ignore:values nested deeper")
def test_definitions_holding_deep_open_values_are_kept_across_compilations():
    # the open values' placeholders are the same in every lowering: a definition whose language
    # calls them is compiled once for every schema that names it alike
    from tokenfsm.schema.lower import SHARED_TWINS

    meta = {"type": "object",
            "properties": {"labels": {"type": "object"}, "name": {"type": "string"}}}
    schemas = [{"definitions": {"Meta": meta}, "type": "object",
                "properties": {"metadata": {"$ref": "#/definitions/Meta"},
                               key: {"type": "integer"}}}
               for key in ("x", "y")]
    SHARED_TWINS.clear()
    first = compile_json_schema(schemas[0], whitespace=0, max_depth=5)
    kept, hits = SHARED_TWINS.info().entries, SHARED_TWINS.info().hits
    second = compile_json_schema(schemas[1], whitespace=0, max_depth=5)
    assert kept and SHARED_TWINS.info().hits > hits
    text = '{"metadata":{"labels":{"a":[[{"b":[1]}]]},"name":"n"},"%s":1}'
    assert first.accepts(text % "x") and second.accepts(text % "y")
    assert not second.accepts(text % "x")
    flat = compile_tuned(schemas[1], FLAT, whitespace=0, max_depth=5)
    assert expand(second.lazy) == flat.dfa


def _map(value, lo, span, keys):
    """An object declaring no key: members of ``value`` (under ``keys``: pattern properties, or
    any name), ``lo..lo + span`` of them."""
    s = {"type": "object", "minProperties": lo}
    if span is not None:
        s["maxProperties"] = lo + span
    if keys is None:
        s["additionalProperties"] = value
    else:
        s["patternProperties"] = {keys: value, "^b$": {"type": "boolean"}}
        s["additionalProperties"] = False
    return s


#: Bounds on a map's members: past MAP_COUNT_MIN it is counted, below it flat.
MAP_BOUNDS = [(0, MAP_COUNT_MIN), (MAP_COUNT_MIN, None), (MAP_COUNT_MIN + 1, 2),
              (1, MAP_COUNT_MIN + 3), (0, None), (2, 3)]
MAPS = st.builds(lambda v, b, k: _map(v, *b, k), LEAVES, st.sampled_from(MAP_BOUNDS),
                 st.sampled_from([None, "^a", "^[ab]$"]))


def _bounded_object(props, required, extra, bounds):
    """An object declaring keys and taking undeclared ones, its members bounded."""
    return {**_object(props, required), **_map(extra, *bounds, None)}


BOUNDED_OBJECTS = st.one_of(
    MAPS,
    st.builds(lambda m, v: {"type": "object", "properties": {"m": m, "v": v}}, MAPS, LEAVES),
    st.builds(_bounded_object, st.lists(LEAVES, min_size=1, max_size=3),
              st.lists(st.booleans(), min_size=3, max_size=3), LEAVES,
              st.sampled_from(MAP_BOUNDS)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=BOUNDED_OBJECTS, ws=st.sampled_from([0, 1]),
       excludes=st.sampled_from([[], ["ab", "1,"]]), order=st.sampled_from(["schema", "any"]))
def test_counted_members_equal_the_flat_route(schema, ws, excludes, order):
    # an object that bounds its undeclared members: a map is a key set of no key, one that
    # declares keys the flat object without the bound and a tick after each key; counted
    options = dict(whitespace=ws, max_depth=2, excludes=excludes, property_order=order)
    try:
        flat = compile_tuned(schema, FLAT, **options)
    except SchemaError as e:
        with pytest.raises(SchemaError) as c:
            compile_tuned(schema, COUNTED, **options)
        assert c.value.pointer == e.pointer
        return
    counted = compile_tuned(schema, COUNTED, **options)
    assert _language(counted) == flat.dfa
    if schema.get("minProperties", 0) >= MAP_COUNT_MIN:
        assert counted.lazy is not None    # (members to count: counted)


@pytest.mark.parametrize("schema, ws", [
    (_map({"type": "integer"}, 1, MAP_COUNT_MIN, None), 0),
    (_bounded_object([_string(0, 2), {"type": "integer"}], [False, True, False],
                     {"enum": ["a", 1]}, (2, MAP_COUNT_MIN)), 1),
    (_map(_string(0, 2), MAP_COUNT_MIN, 2, "^[ab]$"), 1),
    ({"type": "object", "properties": {"m": _map({"enum": ["a", 1]}, MAP_COUNT_MIN, None,
                                                   "^a")}}, 0),
])
def test_counted_map_masks_equal_the_flat_index(schema, ws, qwen):
    counted = compile_tuned(schema, COUNTED, whitespace=ws)
    flat = compile_tuned(schema, FLAT, whitespace=ws)
    assert counted.lazy is not None and flat.lazy is None
    index = PushdownIndex(counted.lazy, qwen)
    flat_index = TokenIndex.build(flat.dfa, qwen)
    for seed in range(4):
        _walk(index, flat_index, qwen, random.Random(seed), steps=30)


def test_key_set_masks_equal_the_flat_index(qwen):
    schema = _object([{"type": "integer"}, _string(0, 3), {"type": "boolean"}, {"enum": ["a", 1]},
                      _array({"type": "integer"}, [], 0, 2, False)], [True, False, True, False,
                                                                       False])
    schema["additionalProperties"] = {"type": "integer"}
    counted = compile_tuned(schema, COUNTED, whitespace=0, property_order="any")
    flat = compile_tuned(schema, FLAT, whitespace=0, property_order="any")
    index = PushdownIndex(counted.lazy, qwen)
    flat_index = TokenIndex.build(flat.dfa, qwen)
    for seed in range(4):
        _walk(index, flat_index, qwen, random.Random(seed), steps=25)


@pytest.mark.filterwarnings("ignore:values nested deeper")
@pytest.mark.parametrize("value", [_string(0, 40), _string(12, 0), _string(3, None),
                                   {"type": "array", "items": _string(2, 5)}])
def test_strings_in_any_order_members_are_counted(value, qwen):
    # in any order (key sets, indexed lazily) a bounded string in a member's value is counted,
    # not copied per character as the flat route would below LAZY_STATES: its masks still equal
    # the flat index's at every step, and only counted pieces hold its characters
    props = {f"k{i}": {"type": "integer"} for i in range(5)}
    schema = {"type": "object", "properties": {**props, "s": value}, "required": ["s"]}
    options = dict(whitespace=0, property_order="any", allow_extra_keys=True)
    counted = compile_json_schema(schema, **options)
    flat = compile_tuned(schema, FLAT, **options)
    kinds = counted.lazy.piece_kind.tolist()
    assert COUNTED_PIECE in kinds
    assert _language(counted) == flat.dfa
    index = PushdownIndex(counted.lazy, qwen)
    flat_index = TokenIndex.build(flat.dfa, qwen)
    for seed in range(3):
        _walk(index, flat_index, qwen, random.Random(seed), steps=30)
    # (in schema order the same string stays flat, and so does a string outside every object)
    assert compile_json_schema(schema, whitespace=0).lazy is None
    assert compile_json_schema(value, whitespace=0, property_order="any").lazy is None


def test_any_order_objects_of_many_keys_are_key_sets():
    props = {f"k{i}": {"type": "integer"} for i in range(30)}
    cs = compile_json_schema({"type": "object", "properties": props, "required": ["k7", "k29"]},
                             property_order="any", allow_extra_keys=True, whitespace=0)
    assert cs.lazy is not None
    assert cs.accepts('{"k29":1,"x":[true],"k3":2,"k7":3}')
    assert not cs.accepts('{"k29":1,"k29":2,"k7":3}') and not cs.accepts('{"k29":1}')


def test_only_large_strings_and_arrays_are_counted():
    def counted(schema):
        return compile_json_schema(schema).lazy is not None

    assert not counted({"type": "array", "items": {"type": "string", "maxLength": 8},
                        "maxItems": 4})
    assert counted({"type": "array", "items": {"type": "string", "maxLength": 8},
                    "maxItems": 4000})
    assert counted({"type": "object", "properties": {"a": {"type": "string",
                                                           "maxLength": 65535}}})
    assert counted({"type": ["string", "null"], "maxLength": 4000})
    assert not counted({"type": "object", "additionalProperties": {"type": "integer"},
                        "maxProperties": 8})
    assert not counted({"type": "object", "additionalProperties": {"type": "array"},
                        "minProperties": 4})
    assert counted({"type": "object", "additionalProperties": {"type": "integer"},
                    "maxProperties": 5000})
    # declared keys beside undeclared ones: counted past the bound alone
    assert not counted({"type": "object", "properties": {"a": {"type": "integer"}},
                        "additionalProperties": {"type": "integer"}, "maxProperties": 8})
    assert counted({"type": "object", "properties": {"a": {"type": "integer"}},
                    "additionalProperties": {"type": "integer"}, "maxProperties": 5000})
    assert counted({"anyOf": [{"type": "string", "maxLength": 4000}, {"type": "integer"}]})
    # a pattern or format is the piece's body, the count still the bounds' (past ten times
    # the threshold: rows near a bound are walks of their own)
    assert counted({"type": "string", "pattern": "^a+$", "maxLength": 6000})
    assert counted({"type": "string", "format": "ipv4", "minLength": 9, "maxLength": 6000})
    assert not counted({"type": "string", "pattern": "^a+$", "maxLength": 600})
    assert not counted({"type": "string", "pattern": "^a+$"})
    # a product that would look inside the count: the flat automaton
    assert not counted({"type": "array", "contains": {"const": 1}, "items": {"type": "integer"},
                        "maxItems": 600})
    assert not counted({"type": "string", "maxLength": 600, "not": {"const": "a"}})


UNION = {"anyOf": [{"pattern": "^[a-c]*1"}, {"pattern": "2$"},
                   {"pattern": "^2", "format": "date"}],
         "type": "string", "minLength": 2, "maxLength": 11}


def test_patterned_unions_sharing_bounds_are_one_counted_piece():
    # the union of the patterns is the body, the shared bounds its count
    import jsonschema

    counted = compile_tuned(UNION, COUNTED, whitespace=0)
    flat = compile_tuned(UNION, FLAT, whitespace=0)
    assert counted.lazy is not None and counted.lazy.piece_kind.tolist().count(COUNTED_PIECE) == 1
    assert _language(counted) == flat.dfa
    valid = jsonschema.Draft202012Validator(
        UNION, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for text in ["ab1", "a1", "1", "x2x", "y2", "2" * 11, "2" * 12, "abcabc1", "a1bc", "é2",
                 "2024-01-31", "2024-02-31", "1999-01-01"]:
        assert counted.accepts(json.dumps(text, ensure_ascii=False)) == valid.is_valid(text), text
    big = {**UNION, "maxLength": 5000}
    assert compile_json_schema(big, whitespace=0).lazy is not None


def test_a_product_inlines_only_what_it_meets():
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 600, "not": {"const": "x"}},
        "b": {"type": "string", "maxLength": 10**9}}}
    cs = compile_json_schema(schema, whitespace=0)
    assert cs.lazy is not None
    assert cs.accepts('{"a":"' + "y" * 600 + '","b":"' + "z" * 3000 + '"}')
    assert not cs.accepts('{"a":"x"}') and not cs.accepts('{"a":"' + "y" * 601 + '"}')


@pytest.mark.parametrize("excludes", [["ab"], ["a", "</s>"], ["\\u"]])
@pytest.mark.parametrize("lo, hi", [(0, 3), (2, 4), (1, None)])
def test_length_bounds_under_exclusions_are_exact(excludes, lo, hi):
    # both routes: the flat bounded strings' language without the excluded substrings
    schema = _string(lo, None if hi is None else hi - lo)
    bounded = compile_tuned(schema, FLAT).dfa
    excluding = compile_tuned({"type": "string"}, FLAT, excludes=excludes).dfa
    for tuning in (COUNTED, FLAT):
        got = compile_tuned(schema, tuning, excludes=excludes)
        assert (got.lazy is not None) == (tuning is COUNTED) and not got.warnings
        assert _language(got) == bounded & excluding


def test_large_bounds_under_exclusions_are_counted_not_dropped():
    schema = {"type": "string", "minLength": 2, "maxLength": 1000}
    excludes = ["<|im_end|>", "```", "</s>"]
    flat = compile_tuned(schema, FLAT, excludes=excludes)
    assert any("dropped under string exclusions" in w for w in flat.warnings)
    counted = compile_json_schema(schema, excludes=excludes)
    assert counted.lazy is not None and not counted.warnings
    for text, ok in [("x" * 1000, True), ("x" * 1001, False), ("x", False), ("a</s>b", False),
                     ("é" * 999 + "<", True), ("`" * 2 + "x" + "`" * 2, True), ("```", False)]:
        assert counted.accepts(json.dumps(text, ensure_ascii=False)) == ok, text
        assert flat.accepts(json.dumps(text, ensure_ascii=False)) == (ok or len(text) > 1000
                                                                      or len(text) < 2), text


def _walk(index, flat, vocab, rng, steps, prefix="", rollback_every=0):
    """The same random tokens, after ``prefix``, through a lazy and a flat matcher: masks,
    acceptance and the forced text agree at every step (and where ``rollback_every`` is set,
    after the last two steps are rolled back every so many steps)."""
    m, f = Matcher(index), Matcher(flat)
    assert m.accept_string(prefix) and f.accept_string(prefix)
    bm = allocate_token_bitmask(2, vocab.size)
    for step in range(steps):
        m.fill_next_token_bitmask(bm, 0)
        f.fill_next_token_bitmask(bm, 1)
        assert bm[0].tolist() == bm[1].tolist()
        assert m.is_accepting() == f.is_accepting()
        assert m.find_jump_forward_string() == f.find_jump_forward_string()
        allowed = np.flatnonzero(unpack_bitmask(bm[1], vocab.size)).tolist()
        text = [t for t in allowed if t not in vocab.eos_token_ids]
        if not text:
            break
        t = rng.choice(text)
        m.advance(t)
        f.advance(t)
        if rollback_every and step % rollback_every == rollback_every - 1:
            m.rollback(2)
            f.rollback(2)


@pytest.fixture(scope="module")
def qwen():
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    return load_vocabulary("qwen")


@pytest.mark.parametrize("schema, excludes", [
    (_string(1, 12), []),
    (_array({"type": "string", "maxLength": 3}, [{"type": "integer"}], 1, 3, False), []),
    (_array(_array({"type": "boolean"}, [], 0, 2, False), [], 2, None, False), []),
    (_array(None, [_string(0, 2), {"enum": ["a", 1]}], 0, None, True), []),
    (_array({"type": "string"}, [], 0, 3, False), ["ab", "</s>"]),   # (unbounded strings)
    (UNION, []),
    # (no exclusion under a pattern)
    ({**_string(2, 9), "pattern": "^[a-z]+(-[a-z0-9]+)*$"}, ["ab"]),
    ({**_string(0, 12), "pattern": "é.|\\d"}, []),
    (_object([_string(0, 6), _array({"type": "integer"}, [], 0, 4, False)], [True, False, False]),
     ["ab"]),
])
def test_counted_masks_equal_the_flat_index(schema, excludes, qwen):
    counted = compile_tuned(schema, COUNTED, whitespace=1, excludes=excludes)
    flat = compile_tuned(schema, FLAT, whitespace=1, excludes=excludes)
    index = PushdownIndex(counted.lazy, qwen)
    flat_index = TokenIndex.build(flat.dfa, qwen)
    for seed in range(4):
        _walk(index, flat_index, qwen, random.Random(seed), steps=20)


def test_samples_of_key_sets_spelled_plainly(qwen):
    # a key-set frame packs its keys above 64 bits: the plain-spelling guide reads its state
    from tokenfsm.masks.sampling import sample_documents

    wide = {"type": "object", "additionalProperties": False, "required": ["a", "b", "c"],
            "properties": {k: {"enum": [1, 2]} for k in "abcdef"}}
    index = IndexCompiler(qwen).json_schema(wide, whitespace=0, property_order="any")
    assert isinstance(index, PushdownIndex)
    runs = sample_documents(index, 8, seed=3, plain_json=True, pull=0.2)
    assert all(r.finished for r in runs)
    for r in runs:
        jsonschema.validate(json.loads(r.text), wide)


def test_the_compiler_indexes_counted_schemas_lazily(qwen):
    comp = IndexCompiler(qwen)
    index = comp.json_schema({"type": "string", "maxLength": 10**9})
    assert isinstance(index, PushdownIndex)
    m = Matcher(index)
    assert m.accept_string('"' + "x" * 3000 + '"') and m.is_accepting()


_SUBPROCESS = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from tokenfsm.masks import IndexCompiler
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    from tokenfsm.masks.sampling import sample_documents
    from tokenfsm.masks import Matcher
    schema, excludes, n, probes = json.loads(sys.stdin.read())
    comp = IndexCompiler(load_vocabulary("qwen"))
    index = comp.json_schema(schema, excludes=excludes)
    runs = sample_documents(index, n, seed=0, max_tokens=48) if n else []
    accepted = []
    for text in probes:
        m = Matcher(index)
        accepted.append(m.accept_string(text) and m.is_accepting())
    print(json.dumps([type(index).__name__, [r.text for r in runs if r.finished], accepted]))
""")

#: Documents a patterned string's masks are asked about (the sampler's pull toward the end,
#: over the 64 tokens the noise favours, rarely meets the few that close such a string).
PROBES = ['"a"', '"a-0"', '"a-"', '"-a"', '"abc123"', '"' + "x" * 3000 + '7"', '"A"', '"a b"',
          '"' + "0" * 39 + '"', '"' + "0" * 40 + '"', '"' + "a" * 4997 + '123"',
          '"' + "a" * 4998 + '123"', '""']

#: Documents a map of patterned keys is asked about.
MAP_PROBES = ['{}', '{"a":"x"}', '{"b":"x"}', '{"a":"123456"}', '{"a":"12345","ab":""}',
              '{"a":1}', '{' + ",".join(f'"a{i}":"{i}"' for i in range(3000))
              + '}']

EXCLUDES = ["<|im_end|>", "```", "</s>"]


@pytest.mark.parametrize("schema, excludes", [
    ({"type": "string", "maxLength": 10**9}, []),
    ({"type": "string", "maxLength": 5000}, EXCLUDES),
    ({"type": "string", "minLength": 3, "maxLength": 40}, EXCLUDES),
    ({"type": "array", "items": {"type": "string", "maxLength": 10**6}, "maxItems": 10**9}, []),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 10**6}, []),
    ({"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 10**9}, []),
    ({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
      "additionalProperties": {"type": "boolean"}, "maxProperties": 10**9}, []),
    ({"type": "object", "patternProperties": {"^a": {"type": "string", "maxLength": 5}},
      "additionalProperties": False, "maxProperties": 10**6}, EXCLUDES),
    ({"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 10**9}, []),
    ({"type": "string", "pattern": "[0-9]{3}", "minLength": 40, "maxLength": 5000}, []),
    ({"type": "string", "pattern": "^.{1,65535}$"}, []),
    ({"type": "string", "pattern": "^[^<>]{3,}$", "maxLength": 10**9}, EXCLUDES),
])
def test_huge_counts_under_a_memory_limit(schema, excludes):
    import jsonschema

    probes = (PROBES if schema.get("pattern") else
              MAP_PROBES if schema.get("patternProperties") else [])
    n = 0 if schema.get("minItems") or probes else 4
    out = subprocess.run([sys.executable, "-c", _SUBPROCESS],
                         input=json.dumps([schema, excludes, n, probes]), capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    kind, texts, accepted = json.loads(out.stdout.strip().splitlines()[-1])
    assert kind == "PushdownIndex"
    assert len(texts) == n
    valid = jsonschema.Draft202012Validator(schema, format_checker=None)
    assert accepted == [valid.is_valid(json.loads(p)) for p in probes]
    assert not probes or set(accepted) == {True, False}
    for text in texts:
        value = json.loads(text)
        jsonschema.validate(value, schema)
        for s in value if isinstance(value, list) else [value]:
            assert not any(e in json.dumps(s, ensure_ascii=False)[1:-1] for e in excludes)


def test_a_million_items_at_least():
    cs = compile_json_schema({"type": "array", "items": {"type": "integer"}, "minItems": 10**6})
    assert cs.lazy is not None
    assert cs.accepts("[" + ",".join(["7"] * 10**6) + "]")
    assert not cs.accepts("[" + ",".join(["7"] * (10**6 - 1)) + "]")


@pytest.mark.parametrize("pattern", ["(ab|c)*d", "(aaa)+", "(aaaaa|aaa)*", "x{3,7}",
                                     "(ab){2}|c{5}", "", "a*", "(aa|aaaaaaa)+b?"])
def test_has_length_against_the_strings_spelled(pattern):
    # every string of up to 7 letters spelled out: the lengths accepted, then each range asked
    import itertools

    from tokenfsm.automata import DFA
    from tokenfsm.schema.lower_lazy import has_length

    dfa = DFA.from_regex(pattern).minimize()
    lengths = {n for n in range(8) for w in itertools.product("abcdx", repeat=n)
               if dfa.accepts("".join(w))}
    for lo in range(8):
        for hi in range(lo, 8):
            assert has_length(dfa, lo, hi) == any(lo <= n <= hi for n in lengths), (lo, hi)
    # far lengths, through the period of the sets of states reached
    assert has_length(DFA.from_regex("(aaaaa|aaa)*").minimize(), 10**9, 10**9)
    assert not has_length(DFA.from_regex("(aa)*").minimize(), 10**9 + 1, 10**9 + 1)
    assert not has_length(DFA.from_regex("a{2,5}").minimize(), 10**9, None)


def _real_schemas():
    rows = json.loads((pathlib.Path(__file__).parent.parent / "data" / "schema"
                       / "maskbench_sample.json").read_text())
    return [pytest.param(r["schema"], order, id=f"{r['name']}-{order}")
            for r in rows for order in ("schema", "any")]


@pytest.mark.parametrize("schema, order", _real_schemas())
def test_real_schemas_counted_equal_the_flat_route(schema, order, qwen):
    # every string and array of a counted shape counted, every object of five keys or more a
    # key set: the network's language is the flat automaton's, and (where the flat index is
    # small enough to build here) the masks agree at every step of random walks on Qwen
    options = dict(whitespace=0, property_order=order, allow_extra_keys=order == "any")
    counted = compile_tuned(schema, COUNTED, **options)
    flat = compile_tuned(schema, FLAT, **options)
    if counted.lazy is None:
        assert _language(counted) == flat.dfa
        return
    assert _language(counted) == flat.dfa
    if flat.dfa.num_states <= 3000:
        index = PushdownIndex(counted.lazy, qwen)
        flat_index = TokenIndex.build(flat.dfa, qwen)
        for seed in range(2):
            _walk(index, flat_index, qwen, random.Random(seed), steps=20)


def test_pieces_past_the_single_placeholders_take_pairs(qwen):
    # 30 counted strings and 30 key-set objects, more than the 22 single placeholders: every
    # one a piece, the language the flat route's
    from tokenfsm.automata.lazy_bytes import KEY_SET

    strings = {"type": "object", "properties": {f"s{i}": _string(0, i + 1) for i in range(30)},
               "required": ["s0"]}
    objects = {"type": "array", "minItems": 30, "items": False,
               "prefixItems": [_object([{"enum": [i, j]} for j in range(5)], [True] * 5)
                               for i in range(30)]}
    for schema, options, kind in [(strings, {}, COUNTED_PIECE),
                                  (objects, dict(property_order="any"), KEY_SET)]:
        counted = compile_tuned(schema, COUNTED, whitespace=0, **options)
        flat = compile_tuned(schema, FLAT, whitespace=0, **options)
        assert counted.lazy.piece_kind.tolist().count(kind) == 30
        assert _language(counted) == flat.dfa
        index, flat_index = PushdownIndex(counted.lazy, qwen), TokenIndex.build(flat.dfa, qwen)
        for seed in range(2):
            _walk(index, flat_index, qwen, random.Random(seed), steps=40)


def test_more_pieces_than_the_placeholders_lower_again_with_more_pairs():
    # past the 103 placeholders of PAIR_PREFIXES, every hole but the open values' begins pairs
    # (kb_1161, the whole Kubernetes API: over 500 key sets); before, the rest were flat
    from tokenfsm.automata.lazy_bytes import KEY_SET
    from tokenfsm.schema.lower_lazy import PAIR_PREFIXES, placeholders

    n = len(placeholders(PAIR_PREFIXES)) + 7
    objects = {"type": "array", "minItems": n, "items": False,
               "prefixItems": [_object([{"enum": [i, j]} for j in range(5)], [True] * 5)
                               for i in range(n)]}
    options = dict(whitespace=0, property_order="any")
    counted = compile_tuned(objects, COUNTED, **options)
    assert counted.lazy.piece_kind.tolist().count(KEY_SET) == n
    assert _language(counted) == compile_tuned(objects, FLAT, **options).dfa


@pytest.mark.parametrize("schema, tuning, order", [
    ({"type": "object", "properties": {"s": {"type": "string", "maxLength": 10**9}}},
     DEFAULT_TUNING, "schema"),
    ({"type": "array", "minItems": 10**6, "items": {"type": "integer"}}, DEFAULT_TUNING, "schema"),
    # a key-set piece, a map counted, members counted beside declared keys
    ({"type": "object", "maxProperties": 5000, "additionalProperties": {"type": "integer"}},
     DEFAULT_TUNING, "schema"),
    ({"type": "object", "properties": {"id": {"type": "integer"}}, "maxProperties": 5000,
      "additionalProperties": {"type": "boolean"}}, DEFAULT_TUNING, "schema"),
    ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
      "required": ["a"]}, COUNTED, "any"),
])
def test_a_counted_compilation_leaves_no_cyclic_garbage(schema, tuning, order):
    # as on the flat and stack routes (test_rewriting, test_stack_route): everything a counted
    # compilation makes is freed when it ends, without waiting for the collector
    import gc

    def compile_():
        return compile_tuned(schema, tuning, whitespace=0, property_order=order)

    assert compile_().lazy is not None
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        compile_()
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_a_conflict_between_counted_pieces_inlines_only_them():
    # two objects in any order under anyOf both begin with "{": the walk cannot tell which
    # key set to call, so those two are inlined, and the long string beside them stays counted
    one = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
           "required": ["a"], "additionalProperties": False}
    two = {"type": "object", "properties": {"c": {"type": "boolean"}, "d": {"type": "null"}},
           "required": ["d"], "additionalProperties": False}
    schema = {"type": "object", "properties": {"u": {"anyOf": [one, two]},
                                               "s": {"type": "string", "maxLength": 600}},
              "required": ["u"], "additionalProperties": False}
    options = dict(whitespace=0, property_order="any")
    counted = compile_tuned(schema, COUNTED, **options)
    assert counted.lazy is not None
    assert _language(counted) == compile_tuned(schema, FLAT, **options).dfa
    for doc, ok in [({"u": {"b": "x", "a": 1}}, True), ({"s": "z" * 600, "u": {"d": None}}, True),
                    ({"u": {"c": True, "d": None, "a": 1}}, False),
                    ({"u": {"d": None}, "s": "z" * 601}, False)]:
        assert counted.accepts(json.dumps(doc, separators=(",", ":"))) == ok


@pytest.mark.parametrize("pattern, bounds", [
    ("^[a-z]{2,5}$", {}), ("^.{0,4}$", {"minLength": 2}), ("^\\S{3,}$", {"maxLength": 6}),
    ('^[^"\\\\]{1,3}$', {}), ("^(?:[é\\d]){2}$", {"maxLength": 3}), ("^\\w{3}$", {}),
    ("^[a-c]{1,6}$", {"minLength": 2, "maxLength": 4}),
])
def test_a_class_repeated_over_the_string_is_a_length(pattern, bounds):
    # ^C{m,n}$ is read as ^(?:C)*$ with lengths m..n (counted when large): the same language
    # as the pattern's own count, which a group around it keeps (the rewrite reads no group)
    from tokenfsm.schema.ecma import counted_class

    assert counted_class(pattern) is not None
    schema = {"type": "string", "pattern": pattern, **bounds}
    grouped = {**schema, "pattern": "^(?:" + pattern[1:-1] + ")$"}
    assert counted_class(grouped["pattern"]) is None
    for ws in (0, 1):
        assert compile_json_schema(schema, whitespace=ws).dfa == \
            compile_json_schema(grouped, whitespace=ws).dfa


def test_a_long_class_pattern_is_counted():
    # ^.{1,65535}$ was 65,535 copies of a character (a budget error); now a counted string
    cs = compile_json_schema({"type": "string", "pattern": "^.{1,65535}$"}, whitespace=0)
    assert cs.lazy is not None
    assert cs.accepts('"' + "é" * 65535 + '"') and not cs.accepts('"' + "é" * 65536 + '"')
    assert not cs.accepts('""') and not cs.accepts('"a\\nb"') and cs.accepts('"a\\tb"')


def test_a_conflict_between_counted_members_inlines_them_together():
    # as between key sets: two objects whose members are counted (declared keys beside
    # undeclared ones, maxProperties past MAP_COUNT_MIN) both begin with "{" under anyOf
    # under dependentRequired, whose branches the lowering makes again each time
    bounded = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "null"}},
               "dependentRequired": {"a": ["b"]}, "additionalProperties": {"type": "integer"},
               "maxProperties": MAP_COUNT_MIN + 4}
    schema = {"type": "object", "properties": {"u": bounded,
                                               "s": {"type": "string", "maxLength": 600}},
              "required": ["u"], "additionalProperties": False}
    counted = compile_tuned(schema, COUNTED, whitespace=0)
    assert counted.lazy is not None
    assert _language(counted) == compile_tuned(schema, FLAT, whitespace=0).dfa


@given(names=st.lists(st.text(st.sampled_from('ab"\\\u00e9'), max_size=3), max_size=4),
       other=st.text(st.sampled_from('ab"\\\u00e9'), max_size=3))
def test_the_names_left_to_undeclared_keys_are_kept_once(names, other):
    # every name but the declared ones, made once per set of names and found again as the
    # same automaton (the key of its key region, kept across compilations)
    from tokenfsm.schema.lower_containers import names_left

    taken = tuple(sorted(set(names)))
    left = names_left(taken)
    assert names_left(taken) is left
    assert left.accepts(other) == (other not in taken)


def test_objects_written_alike_share_their_key_region():
    # two schemas whose objects declare the same keys, in any order with undeclared keys: the
    # second finds the first's key region, and both accept and refuse alike
    from tokenfsm.schema import lower_containers
    from tokenfsm.schema.lower import KEY_REGIONS

    obj = {"type": "object", "properties": {"name": {"type": "string"}, "uid": {"type": "string"}}}
    first = compile_json_schema({"type": "object", "properties": {"metadata": obj}}, whitespace=0,
                                property_order="any", allow_extra_keys=True)
    region = KEY_REGIONS.get((lower_containers.names_left(("name", "uid")), ()))
    assert region is not None
    second = compile_json_schema({"type": "object", "properties": {"meta": obj, "kind": {}}},
                                 whitespace=0, property_order="any", allow_extra_keys=True)
    assert KEY_REGIONS.get((lower_containers.names_left(("name", "uid")), ())) is region
    for doc, ok in [('{"metadata":{"uid":"u","x":1,"name":"n"}}', True),
                    ('{"metadata":{"name":"n","name":"m"}}', False)]:
        assert first.accepts(doc) == ok
        assert second.accepts(doc.replace("metadata", "meta")) == ok
