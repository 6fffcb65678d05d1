"""Unions and complements are exact, or refused (strict) / warned about (lenient): never silently
narrower than the schema's language.

Oracle: jsonschema on every instance tried; an accepted text must be valid, and in the cases the
compiler compiles without a warning, a valid instance written in schema order must be accepted.
"""

import json
import warnings

import jsonschema
import pytest

from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.schema import SchemaError, SchemaWarning, UnsupportedSchema, compile_json_schema
from tokenfsm.schema.serialize import dumps_in_schema_order, has_undeclared_keys


def _text(x, schema):
    return dumps_in_schema_order(x, schema, 0)


def _exact(schema, instances, **kw):
    """Compiled without a warning, the automaton's verdict is jsonschema's on every instance
    (that the options let it write: keys the alternative it takes does not declare need
    ``allow_extra_keys``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)
        # (undeclared keys' values nest at most max_depth deep: the instances here do not)
        warnings.filterwarnings("ignore", "values nested deeper than max_depth", SchemaWarning)
        cs = compile_json_schema(schema, whitespace=0, **kw)
    v = jsonschema.Draft202012Validator(schema)
    seen = set()
    for x in instances:
        texts = {_text(x, schema), json.dumps(x, separators=(",", ":"))}
        got = any(cs.accepts(t) for t in texts)
        if kw.get("allow_extra_keys") or not has_undeclared_keys(x, schema):
            assert got == v.is_valid(x), x
        else:
            assert not got or v.is_valid(x), x
        seen.add(got)
    assert seen == {True, False}
    return cs


def _sound_or_warned(schema, instances, **kw):
    """Strict mode refuses or is exact; lenient mode is sound and warns where it is not exact."""
    v = jsonschema.Draft202012Validator(schema)
    try:
        _exact(schema, instances, **kw)
        return "exact"
    except (UnsupportedSchema, BudgetExceeded):
        pass
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", SchemaWarning)
        try:
            cs = compile_json_schema(schema, whitespace=0, strict=False, **kw)
        except BudgetExceeded:
            return "refused"
    lost = False
    for x in instances:
        texts = {_text(x, schema), json.dumps(x, separators=(",", ":"))}
        got = any(cs.accepts(t) for t in texts)
        assert not got or v.is_valid(x), x
        lost |= v.is_valid(x) and not got
    assert not lost or rec, "valid instances rejected without a warning"
    return "refused"


# ---------------------------------------------------------------- many alternatives

ANY_OF_65 = {"type": "object", "properties": {"name": {"type": "string"}},
             "anyOf": [{"properties": {f"k{i}": {"type": "integer"}}} for i in range(65)]}
INSTANCES_65 = [{"name": "x", "k0": 1}, {"name": "x", "k64": 2}, {"k3": 1}, {"name": "x", "k3": "s"},
                {"name": 1, "k0": 1}, {}, {"name": "x"}, 3]


def test_anyof_of_65_objects_merges_with_the_base():
    assert _sound_or_warned(ANY_OF_65, INSTANCES_65) == "exact"


def test_anyof_of_65_objects_with_extra_keys_is_exact_or_refused():
    # every undeclared key's value free: which of the 65 keys were written as extras matters,
    # an automaton of 2**65 states; refused (over the budget), never narrower
    _sound_or_warned(ANY_OF_65, INSTANCES_65, allow_extra_keys=True,
                     budget=Budget(max_states=20_000))


def test_anyof_of_many_required_objects():
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
              "anyOf": [{"required": [f"k{i}"], "properties": {f"k{i}": {"const": i}}}
                        for i in range(70)]}
    instances = [{"id": 1, "k7": 7}, {"id": 1, "k7": 8}, {"id": 1}, {"k79": 79},
                 {"id": 2, "k79": 79, "k0": 0}]
    assert _sound_or_warned(schema, instances, allow_extra_keys=True) == "exact"


KINDS = ["Point", "LineString", "Polygon", "MultiPoint", "MultiLineString"]


def test_discriminated_oneof_of_five_objects_is_exact():
    schema = {"oneOf": [{"type": "object", "required": ["type", "coordinates"],
                         "properties": {"type": {"const": k},
                                        "coordinates": {"type": "array",
                                                        "items": {"type": "number"}}}}
                        for k in KINDS]}
    instances = [{"type": k, "coordinates": c} for k in KINDS[:3] for c in ([1, 2], [], ["x"])]
    instances += [{"type": "Nope", "coordinates": []}, {"type": "Point"}, {"coordinates": [1]}, 1]
    assert _sound_or_warned(schema, instances) == "exact"


def test_oneof_of_overlapping_objects_is_exact_or_refused():
    schema = {"oneOf": [{"type": "object", "required": ["a"]},
                        {"type": "object", "required": ["b"]},
                        {"type": "object", "required": ["c"]},
                        {"type": "object", "properties": {"d": {"type": "integer"}},
                         "required": ["d"]},
                        {"type": "object", "properties": {"e": {"type": "string"}},
                         "required": ["e"]}]}
    instances = [{"a": 1}, {"a": 1, "b": 2}, {"d": 1}, {"d": "x"}, {"e": "s", "a": 1}, {"e": "s"},
                 {}, {"c": None}]
    _sound_or_warned(schema, instances, allow_extra_keys=True)


@pytest.mark.parametrize("n", [3, 9])
def test_anyof_product_never_silently_narrower(n):
    # two anyOfs of n objects each: the product has n * n alternatives
    schema = {"type": "object",
              "allOf": [{"anyOf": [{"properties": {f"a{i}": {"type": "integer"}}, "required": [f"a{i}"]}
                                   for i in range(n)]},
                        {"anyOf": [{"properties": {f"b{i}": {"type": "string"}}, "required": [f"b{i}"]}
                                   for i in range(n)]}]}
    instances = [{"a0": 1, "b0": "x"}, {f"a{n - 1}": 1, f"b{n - 1}": "y"}, {"a0": 1}, {"b1": "s"},
                 {"a0": "x", "b0": "y"}]
    _sound_or_warned(schema, instances, allow_extra_keys=True)


# ---------------------------------------------------------------- complements

def test_not_on_arrays_of_deep_objects_is_not_cut():
    schema = {"type": "array", "items": {"type": "object"}, "not": {"maxItems": 0}}
    instances = [[{"a": {"b": {}}}], [{}], [], [{"a": 1}, {}], [1]]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", SchemaWarning)
        cs = compile_json_schema(schema, whitespace=0)
    v = jsonschema.Draft202012Validator(schema)
    for x in instances:
        assert cs.accepts(json.dumps(x, separators=(",", ":"))) == v.is_valid(x), x
    assert rec  # unconstrained objects are cut at max_depth: said, with the pointer
    assert any("/items" in str(w.message) for w in rec)


def test_complement_keeps_numbers_of_every_spelling_it_needs():
    schema = {"type": "array", "items": {"type": "number"}, "not": {"items": {"minimum": 5}}}
    v = jsonschema.Draft202012Validator(schema)
    cs = compile_json_schema(schema, whitespace=0)
    for text in ("[1]", "[1.0]", "[5,1e0]", "[5]", "[5.0]", "[6,7]", "[]", "[[[[[1]]]]]"):
        x = json.loads(text)
        if cs.accepts(text):
            assert v.is_valid(x), text


def test_recursion_cut_under_not_is_never_unsound():
    # "not" of a language cut at max_depth: the values the cut may have missed are left out
    # (here all of them: the schema is a paradox, and no value is written)
    for strict in (True, False):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always", SchemaWarning)
            with pytest.raises(SchemaError, match="unsatisfiable"):
                compile_json_schema({"not": {"$ref": "#"}}, strict=strict)
        assert any("cut at depth" in str(w.message) for w in rec)


def test_complement_of_a_cut_recursion_keeps_only_shallower_values():
    # a list of lists, cut at max_depth: "not list" must not accept a deeper list
    schema = {"$defs": {"l": {"type": "array", "items": {"$ref": "#/$defs/l"}}},
              "not": {"$ref": "#/$defs/l"}}
    v = jsonschema.Draft202012Validator(schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        cs = compile_json_schema(schema, whitespace=0, max_depth=2)
    for text in ("1", '"x"', "[]", "[[]]", "[[[]]]", "[[[[]]]]", "[1]", "[[1]]", "[[[[1]]]]"):
        if cs.accepts(text):
            assert v.is_valid(json.loads(text)), text
    assert cs.accepts("[1]") and cs.accepts("1")
