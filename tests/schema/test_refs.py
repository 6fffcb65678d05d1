"""Tests of $ref resolution: base URIs from $id, anchors, URN ids, supplied documents."""

import json
import warnings

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tokenfsm.schema.compiler import compile_json_schema
from tokenfsm.schema.errors import SchemaError, SchemaWarning, UnsupportedSchema
from tokenfsm.schema.refs import Registry as RefRegistry, join_uri
from tokenfsm.schema.serialize import dumps_in_schema_order


def oracle(schema, documents=None):
    registry = Registry().with_resources(
        (uri, Resource.from_contents(doc, default_specification=DRAFT202012))
        for uri, doc in (documents or {}).items())
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, registry=registry)


def check(schema, instances, documents=None):
    """The automaton's verdict on each instance is the validator's (and some are valid, some not)."""
    cs = compile_json_schema(schema, whitespace=0, documents=documents, allow_extra_keys=True)
    v = oracle(schema, documents)
    verdicts = set()
    for x in instances:
        want = v.is_valid(x)
        verdicts.add(want)
        texts = {dumps_in_schema_order(x, schema, 0), json.dumps(x, separators=(",", ":"))}
        assert any(cs.accepts(t) for t in texts) == want, (x, want)
    assert verdicts == {True, False}


VALUES = [None, True, 1, -3, 2.5, "a", "", [], [1], ["a", 2], {}, {"a": 1}, {"a": "x"},
          {"b": None}, {"a": 1, "b": "y"}, {"foo": "x"}, {"foo": 3}, {"name": None},
          {"name": "n"}, {"name": 4}, [[1]], [["x"]], {"a": [1, 2]}, {"a": ["x"]}, {"a": 2.5},
          {"a": None}, {"a": "s", "b": 1}]


def test_join_uri():
    assert join_uri("http://a.test/b/c.json", "d.json#x") == "http://a.test/b/d.json#x"
    assert join_uri("http://a.test/b/c.json", "/e.json") == "http://a.test/e.json"
    assert join_uri("urn:uuid:1234", "#/$defs/a") == "urn:uuid:1234#/$defs/a"
    assert join_uri("urn:uuid:1234", "urn:other") == "urn:other"


@pytest.mark.parametrize("schema", [
    # $id changes the base of relative references below it
    {"$id": "http://x.test/root.json",
     "$defs": {"a": {"$id": "folder/", "$defs": {"i": {"type": "integer"}},
                     "items": {"$ref": "#/$defs/i"}}},
     "properties": {"a": {"$ref": "folder/"}}},
    # an anchor in an embedded resource, named through that resource's URI
    {"$id": "http://x.test/root.json",
     "$defs": {"c": {"$id": "child.json", "$defs": {"s": {"$anchor": "s", "type": "string"}}}},
     "properties": {"a": {"$ref": "child.json#s"}}},
    # a URN $id, and a pointer through it
    {"$id": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed",
     "$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s"}}},
    # a plain $ref to a $dynamicAnchor is a $ref to an anchor
    {"$defs": {"n": {"$dynamicAnchor": "n", "type": "number"}}, "properties": {"a": {"$ref": "#n"}}},
    # a $ref copied into a merged allOf keeps its meaning
    {"$id": "http://x.test/root.json",
     "allOf": [{"$id": "http://x.test/other/", "$defs": {"i": {"type": "integer"}},
                "properties": {"a": {"$ref": "#/$defs/i"}}},
               {"properties": {"b": {"type": "string"}}}]},
])
def test_base_uri_and_anchors(schema):
    check(schema, VALUES)


REMOTES = {
    "http://r.test/integer.json": {"type": "integer"},
    "http://r.test/defs.json": {"$defs": {"int": {"type": "integer"}, "to_int": {"$ref": "#/$defs/int"}}},
    "http://r.test/nested/obj.json": {"type": "object", "properties": {"foo": {"$ref": "string.json"}}},
    "http://r.test/nested/string.json": {"type": "string"},
    "http://r.test/other-id.json": {"$id": "http://r.test/real.json", "$defs": {"b": {"type": "string"}},
                                    "$ref": "#/$defs/b"},
    "http://r.test/name.json": {"$defs": {"orNull": {"anyOf": [{"type": "null"}, {"$ref": "#"}]}},
                                "type": "string"},
}


@pytest.mark.parametrize("schema", [
    {"$ref": "http://r.test/integer.json"},
    {"$ref": "http://r.test/defs.json#/$defs/to_int"},
    {"$id": "http://r.test/some-id", "properties": {"a": {"$ref": "nested/obj.json"}}},
    {"$ref": "http://r.test/other-id.json"},
    {"$id": "http://r.test/object", "type": "object", "properties": {"name": {"$ref": "name.json#/$defs/orNull"}}},
])
def test_supplied_documents(schema):
    check(schema, VALUES + [{"a": {"foo": "x"}}, {"a": {"foo": 1}}], REMOTES)


def test_unknown_document_is_unsupported():
    schema = {"properties": {"a": {"$ref": "http://nowhere.test/s.json"}}}
    with pytest.raises(UnsupportedSchema) as e:
        compile_json_schema(schema)
    assert e.value.keyword == "$ref"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", SchemaWarning)
        compile_json_schema(schema, strict=False)
    assert any("not local" in str(x.message) for x in w)


def test_missing_anchor_and_pointer():
    with pytest.raises(SchemaError, match="no such anchor"):
        compile_json_schema({"properties": {"a": {"$ref": "#nope"}}})
    with pytest.raises(SchemaError, match="does not resolve"):
        compile_json_schema({"$ref": "http://r.test/defs.json#/$defs/nope"}, documents=REMOTES)
    with pytest.raises(ValueError, match="absolute"):
        compile_json_schema(True, documents={"relative.json": {}})


def test_draft4_id_anchors():
    schema = {"$schema": "http://json-schema.org/draft-04/schema#",
              "definitions": {"a": {"id": "#a", "type": "integer"},
                              "l": {"id": "#l", "type": "array", "items": {"$ref": "#a"}}},
              "properties": {"x": {"$ref": "#l"}, "y": {"$ref": "#/definitions/a"}}}
    check(schema, VALUES + [{"x": [1, 2]}, {"x": [1, "a"]}, {"y": 3}, {"y": "3"}])


def test_old_draft_ref_siblings_do_not_change_the_base():
    reg = RefRegistry({"$schema": "http://json-schema.org/draft-07/schema#",
                       "$id": "http://x.test/a/", "properties": {
                           "p": {"$id": "http://y.test/", "$ref": "#/definitions/d"}},
                       "definitions": {"d": {"type": "null"}}})
    assert reg.base("/properties/p") == "http://x.test/a/"
    assert "http://y.test/" not in reg.resources
    assert reg.resolve(join_uri(reg.base("/properties/p"), "#/definitions/d"), "")[1] == \
        "/definitions/d"


def test_properties_named_like_keywords_are_not_references():
    schema = {"properties": {"$ref": {"type": "string"}, "$id": {"type": "integer"}}}
    check(schema, [{"$ref": "a"}, {"$ref": 1}, {"$id": 2}, {"$id": "x"}, {}])


def test_recursion_through_merged_references_is_cut():
    # allOf expands both references in place; their additionalProperties merge into a new allOf
    # of references at every level: the recursion must still be cut at max_depth
    schema = {"allOf": [{"$ref": "#/definitions/x0"}, {"$ref": "#/definitions/w"}],
              "definitions": {"x0": {"additionalProperties": {"$ref": "#/definitions/x1"},
                                     "minProperties": 1},
                              "x1": {"additionalProperties": {"$ref": "#/definitions/x0"}},
                              "w": {"type": "object", "additionalProperties": {"$ref": "#/definitions/w"}}}}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", SchemaWarning)
        cs = compile_json_schema(schema, whitespace=0, max_depth=4)
    assert any("cut at depth" in str(x.message) for x in w)
    v = oracle(schema)
    for x in [{}, {"a": {}}, {"a": {"b": {}}}, {"a": {"b": {"c": {}}}}, {"a": {}, "b": {"c": {}}},
              {"a": 1}, []]:
        text = json.dumps(x, separators=(",", ":"))
        # sound everywhere; exact on these shallow instances
        assert cs.accepts(text) == v.is_valid(x), x


DYNAMIC = [
    # the outermost resource declaring the anchor wins: items are strings
    {"$id": "http://d.test/root", "$ref": "list",
     "$defs": {"foo": {"$dynamicAnchor": "items", "type": "string"},
               "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#items"},
                        "$defs": {"items": {"$dynamicAnchor": "items", "type": ["string", "integer"]}}}}},
    # no $dynamicAnchor where it first resolves: a plain $ref
    {"$id": "http://d.test/root", "$ref": "list",
     "$defs": {"foo": {"$dynamicAnchor": "items", "type": "string"},
               "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#items"},
                        "$defs": {"items": {"$anchor": "items", "type": "integer"}}}}},
    # the scope depends on the path: then and else reach the same list through different lists
    {"$id": "http://d.test/main",
     "if": {"properties": {"kind": {"const": "n"}}, "required": ["kind"]},
     "then": {"$ref": "numbers"}, "else": {"$ref": "strings"},
     "$defs": {"generic": {"$id": "generic", "properties": {"list": {"items": {"$dynamicRef": "#t"}}},
                           "$defs": {"default": {"$dynamicAnchor": "t"}}},
               "numbers": {"$id": "numbers", "$defs": {"t": {"$dynamicAnchor": "t", "type": "number"}},
                           "$ref": "generic"},
               "strings": {"$id": "strings", "$defs": {"t": {"$dynamicAnchor": "t", "type": "string"}},
                           "$ref": "generic"}}},
]


@pytest.mark.parametrize("schema", DYNAMIC)
def test_dynamic_ref(schema):
    check(schema, VALUES + [["a", "b"], [1, "a"], [1, 2], {"kind": "n", "list": [1, 2]},
                            {"kind": "n", "list": ["a"]}, {"kind": "s", "list": ["a"]},
                            {"kind": "s", "list": [1]}, {"list": [1]}, {"list": ["x"]}])


def test_dynamic_ref_extends_a_recursive_schema():
    tree = {"$id": "http://d.test/tree.json", "$dynamicAnchor": "node", "type": "object",
            "properties": {"data": True, "children": {"type": "array", "items": {"$dynamicRef": "#node"}}}}
    strict = {"$id": "http://d.test/strict-tree.json", "$dynamicAnchor": "node", "$ref": "tree.json",
              "unevaluatedProperties": False}
    docs = {"http://d.test/tree.json": tree}
    check(strict, [{"children": [{"data": 1}]}, {"children": [{"daat": 1}]}, {"data": 2, "x": 1},
                   {"children": [{"children": [{"data": None}]}]}, {"children": [{"children": [{"d": 0}]}]},
                   {}, 3], docs)
    check(tree, [{"children": [{"daat": 1}]}, {"children": 1}, {}], docs)


def test_recursive_reference_kept_as_text_in_an_alternative_without_objects():
    # a $ref kept as text (its target is being compiled) in an alternative whose other keywords
    # leave no objects: it is followed by compile_ref (depth-counted), never re-expanded in place
    schema = {"$id": "https://d.test/root", "$dynamicAnchor": "meta", "type": "object",
              "properties": {"foo": {"const": "pass"}}, "$ref": "extended",
              "$defs": {"extended": {"$id": "extended", "$dynamicAnchor": "meta", "type": "object",
                                     "properties": {"bar": {"$ref": "bar"}}},
                        "bar": {"$id": "bar", "type": "object",
                                "properties": {"baz": {"$dynamicRef": "extended#meta"}}}}}
    check(schema, [{"foo": "pass", "bar": {"baz": {"foo": "pass"}}},
                   {"foo": "pass", "bar": {"baz": {"foo": "fail"}}}, {"foo": "fail"}, {}])
