"""Unknown keywords never change the language, and identifiers count only where the draft says.

Oracle: jsonschema (the validator of the schema's draft) on every instance tried, and the language
of the same schema without the unknown keyword (JSON Schema says an unknown keyword is ignored).
"""

import json
import warnings
from pathlib import Path

import jsonschema
import pytest

from tokenfsm.schema import SchemaWarning, UnsupportedSchema, compile_json_schema

SUITE = Path(__file__).parents[1] / "data" / "json-schema-test-suite"
DRAFTS = Path(__file__).parents[1] / "data" / "json-schema-test-suite-drafts"

#: Every marker the compiler ever kept inside schema dicts, and two made-up keywords: none of them
#: may mean anything when a user writes it.
UNKNOWN = {
    "x-forbidden": ["a"], "x-negated": ["a"], "x-undeclared": ["a"], "x-scope": ["tokenfsm:root"],
    "x-witness": [{"keys": {"pattern": "^a"}, "value": False, "ptr": ""}],
    "x-eval": {"names": [], "patterns": [], "all": False},
    "x-evali": {"prefix": 0, "all": False, "contains": []},
    "x-uneval": [{"names": [], "patterns": [], "schema": False, "ptr": ""}],
    "x-unevali": [{"prefix": 0, "contains": [], "schema": False, "ptr": ""}],
    "x-unevaluated": False, "frobnicate": {"type": "string"}, "x-kind": {"$ref": "#/nowhere"},
}

BASES = [
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}},
    {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
    {"anyOf": [{"type": "object", "properties": {"a": {"const": 1}}}, {"type": "string"}]},
    {"not": {"type": "object", "required": ["a"]}},
]

INSTANCES = [{}, {"a": 1}, {"a": "x"}, {"b": "s"}, {"a": 1, "b": "s"}, {"c": None}, [], [1], [1, 2],
             [1, 2, 3], ["x"], "s", 1, None]


def _texts(value) -> list[str]:
    return [json.dumps(value, separators=(",", ":"))]


@pytest.mark.parametrize("keyword", sorted(UNKNOWN))
@pytest.mark.parametrize("base", range(len(BASES)))
def test_unknown_keyword_leaves_the_language_alone(keyword, base):
    schema = dict(BASES[base], **{keyword: UNKNOWN[keyword]})
    kw = dict(whitespace=0, allow_extra_keys=True, property_order="any")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        got = compile_json_schema(schema, **kw)
        want = compile_json_schema(BASES[base], **kw)
    assert got.dfa.equivalent(want.dfa)
    v = jsonschema.Draft202012Validator(schema)
    for x in INSTANCES:
        assert got.accepts(_texts(x)[0]) == v.is_valid(x), (keyword, x)


def test_x_forbidden_written_by_a_user_is_just_a_name():
    cs = compile_json_schema({"type": "object", "x-forbidden": ["a"]}, whitespace=0,
                             allow_extra_keys=True)
    assert cs.accepts('{"a":1}')


def _suite_group(path: Path, description: str) -> dict:
    for group in json.loads(path.read_text()):
        if group["description"] == description:
            return group
    raise KeyError(description)


DIALECTS = {jsonschema.Draft202012Validator: "https://json-schema.org/draft/2020-12/schema",
            jsonschema.Draft201909Validator: "https://json-schema.org/draft/2019-09/schema",
            jsonschema.Draft7Validator: "http://json-schema.org/draft-07/schema#",
            jsonschema.Draft6Validator: "http://json-schema.org/draft-06/schema#",
            jsonschema.Draft4Validator: "http://json-schema.org/draft-04/schema#"}


def _check_group(group, validator_cls, documents=None):
    # the suite's files say their draft by where they are: the schema says it here
    schema = dict(group["schema"])
    schema.setdefault("$schema", DIALECTS[validator_cls])
    cs = compile_json_schema(schema, whitespace=0, documents=documents)
    v = validator_cls(schema)
    for t in group["tests"]:
        text = json.dumps(t["data"], separators=(",", ":"))
        assert v.is_valid(t["data"]) == t["valid"]  # the oracle agrees with the suite
        assert cs.accepts(text) == t["valid"], t["description"]


def test_id_inside_an_unknown_keyword_is_not_registered():
    group = _suite_group(SUITE / "optional" / "unknownKeyword.json",
                         "$id inside an unknown keyword is not a real identifier")
    _check_group(group, jsonschema.Draft202012Validator)


@pytest.mark.parametrize("draft, cls", [("draft2019-09", jsonschema.Draft201909Validator),
                                        ("draft7", jsonschema.Draft7Validator),
                                        ("draft6", jsonschema.Draft6Validator)])
def test_id_inside_an_unknown_keyword_in_older_drafts(draft, cls):
    group = _suite_group(DRAFTS / draft / "optional" / "unknownKeyword.json",
                         "$id inside an unknown keyword is not a real identifier")
    _check_group(group, cls)


DRAFT4 = "http://json-schema.org/draft-04/schema#"


def test_draft4_reads_id_and_not_dollar_id():
    uri = "http://example.test/s.json"
    with_id = {"$schema": DRAFT4, "definitions": {"s": {"id": uri, "type": "string"}},
               "$ref": uri}
    cs = compile_json_schema(with_id, whitespace=0)
    assert cs.accepts('"x"') and not cs.accepts("1")
    dollar = {"$schema": DRAFT4, "definitions": {"s": {"$id": uri, "type": "string"}},
              "anyOf": [{"$ref": uri}, {"type": "null"}]}
    # "$id" means nothing in draft 4: the reference names a document that is not known
    with pytest.raises(UnsupportedSchema) as e:
        compile_json_schema(dollar, whitespace=0)
    assert e.value.keyword == "$ref"


def test_draft6_reads_dollar_id_and_not_id():
    uri = "http://example.test/s.json"
    schema = {"$schema": "http://json-schema.org/draft-06/schema#",
              "definitions": {"s": {"id": uri, "type": "string"}}, "anyOf": [{"$ref": uri}]}
    with pytest.raises(UnsupportedSchema):
        compile_json_schema(schema, whitespace=0)


def test_draft4_id_in_enum_is_data():
    group = _suite_group(DRAFTS / "draft4" / "optional" / "id.json",
                         "id inside an enum is not a real identifier")
    _check_group(group, jsonschema.Draft4Validator)
