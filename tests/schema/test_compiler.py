"""Tests of the JSON Schema compiler: semantics, whitespace, exclusions, reachability, errors."""

import json
import random
import warnings

import jsonschema

import pytest

from tokenfsm.automata import Budget, BudgetExceeded, DFA
from tokenfsm.schema.compiler import compile_json_schema
from tokenfsm.schema.errors import SchemaError, SchemaWarning, UnsupportedSchema


def compile_quiet(schema, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        return compile_json_schema(schema, **kw)


def reachable_after(dfa: DFA, prefix: str, ch: str) -> bool:
    """Whether some accepted text starts with ``prefix + ch`` (a path exists in the automaton)."""
    m = dfa.minimize()
    s = m.start
    for c in prefix + ch:
        s = m.delta[s][m.class_of(c)]
        if s == 0:
            return False
    return True


OBJ = {"type": "object",
       "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                      "tags": {"type": "array", "items": {"type": "string"}}},
       "required": ["name"]}


# ---------------------------------------------------------------- basics

def test_object_basics():
    cs = compile_json_schema(OBJ, whitespace=0)
    assert cs.accepts('{"name":"x"}')
    assert cs.accepts('{"name":"x","age":3,"tags":["a","b"]}')
    assert not cs.accepts('{"age":3}')
    assert not cs.accepts('{"name":"x","age":-1}')
    assert not cs.accepts('{"name":"x","other":1}')


def test_json_text_and_accepts():
    cs = compile_json_schema(json.dumps({"type": "boolean"}))
    assert cs.accepts("true") and cs.accepts("false") and not cs.accepts("1")


def test_allow_extra_keys():
    strict = compile_json_schema(OBJ, whitespace=0)
    loose = compile_json_schema(OBJ, whitespace=0, allow_extra_keys=True)
    assert not strict.accepts('{"name":"x","zz":[1,{"a":null}]}')
    assert loose.accepts('{"name":"x","zz":[1,{"a":null}]}')
    assert not loose.accepts('{"name":"x","name":"y"}')  # declared names are not "other" keys


def test_additional_properties_schema_and_patterns():
    s = {"type": "object", "properties": {"a": {"type": "integer"}},
         "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": {"type": "boolean"}}
    cs = compile_json_schema(s, whitespace=0)
    assert cs.accepts('{"a":1,"x-k":"v","b":true}')
    assert not cs.accepts('{"a":1,"x-k":true}')
    assert not cs.accepts('{"a":1,"b":"s"}')


def test_property_order_any():
    s = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"},
                                          "c": {"type": "integer"}}, "required": ["a", "c"]}
    cs = compile_json_schema(s, whitespace=0, property_order="any")
    assert cs.accepts('{"c":1,"a":2}') and cs.accepts('{"b":1,"c":1,"a":2}')
    assert not cs.accepts('{"a":1,"a":2,"c":1}') and not cs.accepts('{"b":1,"a":2}')
    assert not compile_json_schema(s, whitespace=0).accepts('{"c":1,"a":2}')


def test_property_order_any_budget():
    # flat, every subset of keys is a state: over the budget; by default the keys are a set
    from tokenfsm.schema.compiler import compile_tuned
    from tokenfsm.schema.tuning import Tuning

    s = {"type": "object", "properties": {f"k{i}": {"type": "integer"} for i in range(14)}}
    with pytest.raises(BudgetExceeded) as e:
        compile_tuned(s, Tuning(lazy_states=None), property_order="any",
                      budget=Budget(max_states=2000))
    assert e.value.pointer is not None
    cs = compile_json_schema(s, property_order="any", budget=Budget(max_states=2000))
    assert cs.lazy is not None and cs.accepts('{"k13": 1, "k0": 2}')


def test_numbers_exact_and_big():
    cs = compile_json_schema({"type": "integer", "minimum": 10 ** 30, "exclusiveMaximum": 10 ** 30 + 5})
    assert cs.accepts(str(10 ** 30 + 4)) and not cs.accepts(str(10 ** 30 + 5))
    cs = compile_json_schema({"type": "number", "minimum": 0.1, "maximum": 0.3, "multipleOf": 0.1})
    assert cs.accepts("0.2") and cs.accepts("0.30") and not cs.accepts("0.25")
    old = compile_json_schema({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer",
                               "minimum": 5, "exclusiveMinimum": True})
    assert not old.accepts("5") and old.accepts("6")


def test_strings_lengths_pattern_format():
    cs = compile_json_schema({"type": "string", "minLength": 2, "maxLength": 3})
    assert cs.accepts('"ab"') and cs.accepts('"\\u00e9\\n"') and not cs.accepts('"abcd"')
    cs = compile_json_schema({"type": "string", "pattern": "\\d{3}"})
    assert cs.accepts('"x123y"') and not cs.accepts('"12"') and not cs.accepts('"١٢٣"')
    cs = compile_json_schema({"type": "string", "format": "date"})
    assert cs.accepts('"2024-02-29"') and not cs.accepts('"2024-13-01"')


def test_enum_const_any_value():
    cs = compile_json_schema({"enum": [1, "a", None, [1, {"k": True}], {"x": 2}]}, whitespace=0)
    for t in ['1', '1.0', '"a"', 'null', '[1,{"k":true}]', '{"x":2}']:
        assert cs.accepts(t), t
    assert not cs.accepts("2") and not cs.accepts('"b"') and not cs.accepts("true")


def test_combinators():
    cs = compile_json_schema({"allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                                        {"properties": {"b": {"type": "string"}}, "required": ["b"]}]},
                             whitespace=0)
    assert cs.accepts('{"a":1,"b":"x"}') and not cs.accepts('{"a":1}')
    cs = compile_json_schema({"not": {"type": "integer"}}, whitespace=0)
    assert cs.accepts("1.5") and cs.accepts('"s"') and not cs.accepts("1") and not cs.accepts("1.0")
    cs = compile_json_schema({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, whitespace=0)
    assert cs.accepts("1") and cs.accepts("2.5") and not cs.accepts("3")
    cs = compile_json_schema({"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"type": "string"}})
    assert cs.accepts("7") and not cs.accepts("3") and cs.accepts('"s"') and not cs.accepts("null")


def test_oneof_discriminated_objects():
    s = {"oneOf": [{"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
                    "required": ["kind"]},
                   {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "string"}},
                    "required": ["kind", "y"]}]}
    cs = compile_json_schema(s, whitespace=0)
    assert cs.accepts('{"kind":"a","x":1}') and cs.accepts('{"kind":"b","y":"q"}')
    assert not cs.accepts('{"kind":"b"}')


def test_refs_and_recursion():
    s = {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                             "next": {"$ref": "#/$defs/node"}}}},
         "$ref": "#/$defs/node"}
    with pytest.warns(SchemaWarning, match="recursive"):
        cs = compile_json_schema(s, whitespace=0, max_depth=2)
    assert cs.accepts('{"v":1,"next":{"v":2}}')
    assert any("recursive" in w for w in cs.warnings)
    old = {"definitions": {"a": {"type": "string"}}, "properties": {"x": {"$ref": "#/definitions/a"}}}
    assert compile_json_schema(old, whitespace=0).accepts('{"x":"s"}')
    anchor = {"$defs": {"a": {"$anchor": "A", "type": "null"}}, "items": {"$ref": "#A"}, "type": "array"}
    assert compile_json_schema(anchor, whitespace=0).accepts("[null,null]")


def test_contains_and_counts():
    s = {"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 10},
         "minContains": 1, "maxContains": 2, "maxItems": 4}
    cs = compile_json_schema(s, whitespace=0)
    assert cs.accepts("[1,10]") and cs.accepts("[10,11,3]")
    assert not cs.accepts("[1,2]") and not cs.accepts("[10,11,12]")


def test_object_keyword_family():
    s = {"type": "object", "propertyNames": {"maxLength": 2}, "minProperties": 1, "maxProperties": 2,
         "additionalProperties": {"type": "integer"}}
    cs = compile_json_schema(s, whitespace=0)
    assert cs.accepts('{"ab":1}') and cs.accepts('{"a":1,"b":2}')
    assert not cs.accepts("{}") and not cs.accepts('{"abc":1}') and not cs.accepts('{"a":1,"b":2,"c":3}')
    dep = {"type": "object", "properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"]}}
    cs = compile_json_schema(dep, whitespace=0)
    assert cs.accepts('{"a":1,"b":2}') and cs.accepts('{"b":2}') and not cs.accepts('{"a":1}')


# ---------------------------------------------------------------- whitespace

@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_whitespace_bound(n):
    cs = compile_json_schema(OBJ, whitespace=n)
    ok = "{" + " " * n + '"name"' + " " * n + ":" + " " * n + '"a  b"' + " " * n + "}"
    bad = "{" + " " * (n + 1) + '"name":"x"}'
    assert cs.accepts(ok)
    assert not cs.accepts(bad)
    assert cs.accepts('{"name":"a     b"}')  # strings keep their spaces
    assert not cs.accepts(' {"name":"x"}') and not cs.accepts('{"name":"x"} ')


def test_whitespace_none_warns():
    with pytest.warns(SchemaWarning, match="whitespace"):
        cs = compile_json_schema({"type": "array"}, whitespace=None, max_depth=1)
    assert cs.accepts("[" + " \n\t" * 10 + "]")


# ---------------------------------------------------------------- exclusions

def test_exclusions_basic():
    cs = compile_quiet(OBJ, excludes=["bad"], whitespace=0)
    assert cs.accepts('{"name":"good"}') and not cs.accepts('{"name":"a bad one"}')
    assert not cs.accepts('{"name":"x","tags":["ok","badge"]}')


def test_exclusion_escaped_quote_counts_as_written():
    cs = compile_quiet({"type": "string"}, excludes=['\\"'])
    assert not cs.accepts('"say \\"hi\\""')
    assert cs.accepts('"say \\u0022hi"')


def test_exclusion_drops_enum_alternatives_and_required_names():
    cs = compile_json_schema({"enum": ["ok", "not ok"]}, excludes=["not"])
    assert cs.accepts('"ok"') and not cs.accepts('"not ok"')
    s = {"type": "object", "properties": {"notes": {"type": "string"}, "a": {"type": "integer"}}}
    cs = compile_json_schema(s, excludes=["not"], whitespace=0)
    assert cs.accepts('{"a":1}') and not cs.accepts('{"notes":"x","a":1}')
    with pytest.raises(SchemaError, match="notes"):
        compile_json_schema({**s, "required": ["notes"]}, excludes=["not"])


def test_exclusion_keeps_small_lengths_and_drops_large_ones_with_warning():
    small = compile_json_schema({"type": "object", "properties": {"name": {"type": "string",
                                                                           "maxLength": 3}}},
                                excludes=["x"], whitespace=0)
    assert not small.warnings
    assert small.accepts('{"name":"abc"}')
    assert not small.accepts('{"name":"abcd"}') and not small.accepts('{"name":"ax"}')
    # past EXCLUDED_BOUNDS_STATES: counted (exact), or where a product refuses the count, dropped
    large = compile_json_schema({"type": "object", "properties": {"name": {
        "type": "string", "maxLength": 3000}}}, excludes=["x"], whitespace=0)
    assert large.lazy is not None and not large.warnings
    assert not large.accepts('{"name":"' + "a" * 3001 + '"}') and not large.accepts('{"name":"x"}')
    with pytest.warns(SchemaWarning, match="/properties/name"):
        large = compile_json_schema({"type": "object", "properties": {"name": {
            "type": "string", "maxLength": 3000, "not": {"const": "b"}}}}, excludes=["x"],
            whitespace=0)
    assert large.accepts('{"name":"' + "a" * 3001 + '"}') and not large.accepts('{"name":"x"}')


def test_empty_exclusions_identical():
    a = compile_json_schema(OBJ).dfa
    b = compile_json_schema(OBJ, excludes=[]).dfa
    assert (a.classes, a.delta, a.accepting, a.start) == (b.classes, b.delta, b.accepting, b.start)


# ---------------------------------------------------------------- reachability

def test_reachability_optional_and_empty_object():
    s = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    d = compile_json_schema(s, whitespace=0).dfa
    assert reachable_after(d, "{", "}")
    assert reachable_after(d, "{", '"') and d.accepts('{"b":"x"}') and d.accepts('{"a":1}')
    assert reachable_after(d, '{"a":1', ",") and reachable_after(d, '{"a":1', "}")


def test_reachability_arrays_and_numbers():
    d = compile_json_schema({"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 3},
                            whitespace=0).dfa
    assert reachable_after(d, "[1", ",") and reachable_after(d, "[1", "]")
    assert not reachable_after(d, "[", "]")
    assert not reachable_after(d, "[1,2,3", ",")
    assert reachable_after(d, "[", "-") and reachable_after(d, "[1", ".") and reachable_after(d, "[1", "e")


# ---------------------------------------------------------------- errors and warnings

@pytest.mark.parametrize("schema,pointer", [
    ({"type": "strnig"}, "/type"),
    ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "/properties/a/$ref"),
    ({"properties": {"a": {"minLength": -1, "type": "string"}}}, "/properties/a/minLength"),
    ({"properties": {"a": 3}}, "/properties/a"),
])
def test_invalid_schema_pointer(schema, pointer):
    with pytest.raises(SchemaError) as e:
        compile_json_schema(schema)
    assert e.value.pointer == pointer


def test_unsatisfiable():
    with pytest.raises(SchemaError, match="unsatisfiable"):
        compile_json_schema({"allOf": [{"type": "string"}, {"type": "integer"}]})


def test_unique_items_strict_and_lenient():
    with pytest.raises(UnsupportedSchema) as e:
        compile_json_schema({"type": "array", "uniqueItems": True})
    assert e.value.pointer == "/uniqueItems"
    with pytest.warns(SchemaWarning, match="uniqueItems"):
        cs = compile_json_schema({"type": "array", "items": {"type": "null"}, "uniqueItems": True}, strict=False)
    assert cs.warnings


def test_unsupported_format_follows_strict():
    with pytest.raises(UnsupportedSchema):
        compile_json_schema({"type": "string", "format": "no-such-format"})
    cs = compile_quiet({"type": "string", "format": "no-such-format"}, strict=False)
    assert cs.accepts('"x"')


def test_budget_pointer():
    s = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 400}}}
    with pytest.raises(BudgetExceeded) as e:
        compile_json_schema(s, budget=Budget(max_states=300))
    assert e.value.pointer.startswith("/properties/a")


def test_pydantic_model():
    pydantic = pytest.importorskip("pydantic")

    class Point(pydantic.BaseModel):
        x: int
        y: int = 0

    cs = compile_json_schema(Point, whitespace=0)
    assert cs.accepts('{"x":1}') and cs.accepts('{"x":1,"y":2}') and not cs.accepts('{"y":2}')


def test_constrained_strings_use_minimal_spellings_and_complements_stay_sound():
    email = compile_json_schema({"type": "string", "format": "email"}, whitespace=0)
    assert email.accepts('"a@b.co"') and not email.accepts('"a\\u0040b.co"')
    plain = compile_json_schema({"type": "string", "maxLength": 3}, whitespace=0)
    assert plain.accepts('"\\u0061"')
    neg = compile_json_schema({"not": {"type": "string", "format": "ipv4"}}, whitespace=0)
    v = jsonschema.Draft202012Validator({"not": {"type": "string", "format": "ipv4"}},
                                        format_checker=jsonschema.FormatChecker())
    for text in ('"1.2.3.4"', '"1.2.3.\\u0034"', '"abc"', '"1.2.3"', '7'):
        assert neg.accepts(text) <= v.is_valid(json.loads(text)), text
    assert neg.accepts('"abc"') and not neg.accepts('"1.2.3.\\u0034"')


def test_not_additional_properties_needs_an_undeclared_member():
    schema = {"oneOf": [{"properties": {"a": {"type": "integer"}}, "additionalProperties": False},
                        {"properties": {"b": {}}, "additionalProperties": False}]}
    cs = compile_json_schema(schema, whitespace=0)
    v = jsonschema.Draft202012Validator(schema)
    for text in ('{"a":1}', '{"b":1}', '{"a":1,"b":1}', '{}', '{"a":"x"}', '{"b":"x"}'):
        assert cs.accepts(text) == v.is_valid(json.loads(text)), text
    rng = random.Random(0)
    for _ in range(30):
        assert v.is_valid(json.loads(cs.dfa.sample(rng, max_length=40)))


def test_const_object_in_any_key_order():
    schema = {"const": {"foo": "bar", "baz": [1, {"a": None, "b": 2}]}}
    cs = compile_json_schema(schema, whitespace=0)
    v = jsonschema.Draft202012Validator(schema)
    for x in ['{"foo":"bar","baz":[1,{"a":null,"b":2}]}', '{"baz":[1,{"b":2,"a":null}],"foo":"bar"}',
              '{"baz":[1,{"b":2}],"foo":"bar"}', '{"baz":[{"b":2,"a":null},1],"foo":"bar"}',
              '{"foo":"bar"}']:
        assert cs.accepts(x) == v.is_valid(json.loads(x)), x


@pytest.mark.parametrize("draft", ["https://json-schema.org/draft/2020-12/schema",
                                   "http://json-schema.org/draft-07/schema#",
                                   "http://json-schema.org/draft-04/schema#", None])
def test_integer_with_zero_fraction(draft):
    # 2.0 is an integer from draft 6 on; not in draft 4, and a schema naming no draft gets the
    # spelling every draft accepts
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 2, "multipleOf": 2}}}
    if draft:
        schema["$schema"] = draft
    cs = compile_json_schema(schema, whitespace=0)
    v = jsonschema.validators.validator_for(schema, default=jsonschema.Draft4Validator)(schema)
    for n in ["2", "2.0", "4.0", "3.0", "0.0", "2.00", "2.5", "1e1"]:
        text = '{"n":%s}' % n
        want = v.is_valid(json.loads(text)) and n.count("0") <= 1 + n.startswith("0") and "e" not in n
        assert cs.accepts(text) == want, n


@pytest.mark.parametrize("schema", [
    {"not": {"propertyNames": {"not": {"const": "0"}}}, "type": "object"},
    {"propertyNames": {"anyOf": [{"pattern": "^a"}, {"maxLength": 1}]}},
    {"propertyNames": {"oneOf": [{"pattern": "^a"}, {"maxLength": 2}]}},
    {"propertyNames": {"if": {"pattern": "^a"}, "then": {"maxLength": 2}, "else": {"minLength": 3}}},
    {"propertyNames": {"$ref": "#/$defs/n"}, "$defs": {"n": {"not": {"enum": ["b", "ab"]}}}},
    {"propertyNames": {"type": "number"}},
    {"propertyNames": {"minimum": 3, "not": {"const": "x"}}},
])
def test_property_names_with_applicators(schema):
    import itertools
    cs = compile_json_schema(schema, whitespace=0, allow_extra_keys=True)
    v = jsonschema.Draft202012Validator(schema)
    seen = set()
    for n in range(3):
        for keys in itertools.combinations(["", "a", "b", "ab", "abc", "x", "0", "bcd"], n):
            x = {k: 1 for k in keys}
            want = v.is_valid(x)
            seen.add(want)
            assert cs.accepts(json.dumps(x, separators=(",", ":"))) == want, x
    assert seen == {True, False}


@pytest.mark.parametrize("schema", [
    {"prefixItems": [{"type": "boolean"}, {"type": "boolean"}], "items": False, "uniqueItems": True},
    {"items": {"enum": [1, 1.0, "a", None]}, "maxItems": 3, "uniqueItems": True},
    {"type": "array", "items": {"enum": [{"a": 1}, {"a": 1.0}, [1]]}, "maxItems": 2, "minItems": 1,
     "uniqueItems": True},
])
def test_unique_items_over_finitely_many_arrays(schema):
    import itertools
    cs = compile_json_schema(schema, whitespace=0)
    v = jsonschema.Draft202012Validator(schema)
    seen = set()
    for n in range(4):
        for tup in itertools.product([True, False, 1, 1.0, "a", None, {"a": 1}, [1]], repeat=n):
            want = v.is_valid(list(tup))
            seen.add(want)
            assert cs.accepts(json.dumps(list(tup), separators=(",", ":"))) == want, tup
    assert seen == {True, False}


def test_unique_items_stays_unsupported_over_infinitely_many_arrays():
    for schema in ({"uniqueItems": True}, {"items": {"type": "integer"}, "maxItems": 2, "uniqueItems": True},
                   {"items": {"enum": [1, 2]}, "uniqueItems": True}):
        with pytest.raises(UnsupportedSchema):
            compile_json_schema(schema)
