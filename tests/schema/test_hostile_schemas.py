"""Bad schema content and bad options: a typed error that says where, raised before any work.

Each case must raise a :class:`SchemaError` (or subclass) naming the JSON pointer, a
:class:`BudgetExceeded` naming it, or a ``TypeError``/``ValueError`` for a wrong option; never a
``RecursionError``, an out-of-memory or a hang. The cases that would build something huge run in a
subprocess under a 2 GB address-space limit.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.schema import SchemaError, compile_json_schema
from tokenfsm.schema.compiler import MAX_NESTING


def _nested(keyword: str, depth: int) -> dict:
    schema: dict = {}
    for _ in range(depth):
        schema = {"properties": {"a": schema}} if keyword == "properties" else {keyword: schema}
    return schema


@pytest.mark.parametrize("keyword", ["items", "not", "properties", "additionalProperties"])
@pytest.mark.parametrize("depth", [200, 1000])
def test_deep_nesting_is_a_schema_error(keyword, depth):
    with pytest.raises(SchemaError) as e:
        compile_json_schema(_nested(keyword, depth))
    assert "deeper than" in e.value.msg and e.value.pointer.count("/") >= MAX_NESTING


def test_nesting_up_to_the_limit_compiles():
    cs = compile_json_schema(_nested("items", MAX_NESTING - 1), whitespace=0)
    text = "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)
    assert cs.accepts(text)


def test_deep_data_in_const_is_a_schema_error():
    data: list = []
    for _ in range(3000):
        data = [data]
    with pytest.raises(SchemaError) as e:
        compile_json_schema({"const": data})
    assert e.value.pointer.startswith("/const/0/0")


def test_deep_json_text_is_a_schema_error():
    with pytest.raises(SchemaError):
        compile_json_schema('{"items":' * 100_000 + "{}" + "}" * 100_000)


@pytest.mark.parametrize("schema, pointer", [
    ({"enum": [1, float("nan")]}, "/enum/1"),
    ({"const": float("inf")}, "/const"),
    ({"properties": {"a": {"const": [1, float("-inf")]}}}, "/properties/a/const/1"),
    ({"properties": {b"a": {}}}, "/properties"),
    ({"$defs": {"x": {1: {}}}}, "/$defs/x"),
    ({"const": {b"k": 1}}, "/const"),
    ({"type": None}, "/type"),
    ({"type": []}, "/type"),
    ({"type": ["string", 3]}, "/type"),
    ({"contains": {}, "minContains": -1}, "/minContains"),
    ({"contains": {}, "maxContains": 1.5}, "/maxContains"),
    ({"minItems": True}, "/minItems"),
    ({"$schema": 5}, "/$schema"),
    ({"required": "a"}, "/required"),
    ({"properties": []}, "/properties"),
    ({"items": 3}, "/items"),
    ({"allOf": {}}, "/allOf"),
    ({"anyOf": []}, "/anyOf"),
    ({"not": "x"}, "/not"),
    ({"pattern": 7}, "/pattern"),
    ({"multipleOf": 0}, "/multipleOf"),
    ({"minimum": "1"}, "/minimum"),
    ({"$ref": 5}, "/$ref"),
    ({"dependentRequired": {"a": "b"}}, "/dependentRequired/a"),
])
def test_bad_values_name_their_pointer(schema, pointer):
    with pytest.raises(SchemaError) as e:
        compile_json_schema(schema)
    assert e.value.pointer == pointer, e.value


@pytest.mark.parametrize("option, value, error", [
    ("whitespace", "2", TypeError), ("whitespace", -1, ValueError), ("whitespace", True, TypeError),
    ("budget", "x", TypeError), ("excludes", "abc", TypeError), ("excludes", [1], TypeError),
    ("excludes", [""], ValueError), ("max_depth", "3", TypeError), ("max_depth", -1, ValueError),
    ("max_depth", 2.0, TypeError), ("documents", [{}], TypeError), ("strict", "yes", TypeError),
    ("allow_extra_keys", 1, TypeError), ("property_order", "random", ValueError),
    ("property_order", 1, TypeError), ("recursion", "deep", ValueError), ("recursion", None, TypeError),
    ("documents", {"relative.json": {}}, ValueError), ("documents", {"http://x.test/a": 5}, SchemaError),
])
def test_bad_options(option, value, error):
    with pytest.raises(error):
        compile_json_schema({"type": "string"}, **{option: value})


def test_not_of_the_root_is_a_typed_error():
    # a paradox: no value within max_depth is known to satisfy it, and none is written
    with pytest.raises(SchemaError, match="unsatisfiable"):
        compile_json_schema({"not": {"$ref": "#"}})


@pytest.mark.parametrize("schema", [
    {"type": "string", "minLength": 10**9},
    {"type": "string", "maxLength": 10**9, "minLength": 10**8},
    {"type": "array", "minItems": 10**8},
    {"type": "string", "minLength": 10**9, "pattern": "^a"},
])
def test_huge_counts_are_held_as_counts(schema):
    # a counted piece (schema.lower_lazy): nothing built per character or item; the flat
    # automaton is asked for only by .dfa, which goes over the budget before building
    cs = compile_json_schema(schema, budget=Budget(max_states=200_000))
    assert cs.lazy is not None and cs.lazy.num_states < 2000  # (any item: 877)
    with pytest.raises(BudgetExceeded):
        cs.dfa


@pytest.mark.parametrize("schema, pointer", [
    ({"const": "x" * 3_000_000}, "/const"),
    ({"enum": [f"value-{i}" for i in range(100_000)]}, "/enum"),
    ({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(10_000)},
      "required": [f"p{i}" for i in range(10_000)]}, "/"),
])
def test_huge_languages_exceed_the_budget_before_building(schema, pointer):
    with pytest.raises(BudgetExceeded) as e:
        compile_json_schema(schema, budget=Budget(max_states=200_000))
    assert e.value.pointer == pointer


def test_optional_members_charge_the_subsets_they_gather():
    # every state after a member gathers the members that may follow: quadratic work, charged
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(200)}}
    assert compile_json_schema(schema).accepts('{"p3": 1, "p199": 2}')
    with pytest.raises(BudgetExceeded) as e:
        compile_json_schema(schema, budget=Budget(max_visits=50_000))
    assert e.value.kind == "visits" and e.value.pointer == "/"


_SUBPROCESS = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from tokenfsm.automata.errors import TokenfsmError
    from tokenfsm.schema import compile_json_schema
    schema = json.loads(sys.stdin.read())
    try:
        compile_json_schema(schema)
    except TokenfsmError as e:
        print(type(e).__name__)
    else:
        print("compiled")
""")


@pytest.mark.parametrize("schema", [
    {"type": "string", "maxLength": 10**9},
    {"type": "object", "maxProperties": 10**9, "additionalProperties": {"type": "integer"}},
    {"type": "array", "maxItems": 10**9, "items": {"type": "integer"}},
    {"type": "string", "pattern": "^a{100000}$"},
])
def test_default_limits_keep_memory_and_time_bounded(schema):
    out = subprocess.run([sys.executable, "-c", _SUBPROCESS], input=json.dumps(schema),
                         capture_output=True, text=True, timeout=20)
    assert out.stdout.strip() in ("BudgetExceeded", "compiled"), out.stderr[-500:]


def test_a_deep_stack_is_charged_before_its_variants_are_made():
    # one variant of a self-calling definition per depth: 10**6 of them, refused up front
    nest = {"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}
    with pytest.raises(BudgetExceeded) as e:
        compile_json_schema(nest, max_depth=10**6, recursion="stack")
    assert e.value.operation == "recursive variants" and e.value.reached >= 10**6
    assert compile_json_schema(nest, max_depth=50, recursion="stack").accepts("[" * 50 + "]" * 50)


def test_a_composition_charges_its_copies_before_numbering_them():
    # one part embedded at many places: the numbering of every copy is charged first
    from tokenfsm.automata import DFA
    from tokenfsm.schema.compose import Composer

    c = Composer()
    part = DFA.from_regex("[a-z]{40}")
    end = c.node()
    entry = end
    for _ in range(100):
        entry = c.chain((part,), entry)
    with pytest.raises(BudgetExceeded) as e:
        c.build(entry, end, Budget(max_cells=1000))
    assert e.value.kind == "cells" and e.value.reached >= 100 * 40   # (40 states a copy)
    assert c.build(entry, end).accepts("ab" * 2000)
