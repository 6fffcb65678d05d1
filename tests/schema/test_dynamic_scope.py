"""``$dynamicRef`` and ``$recursiveRef`` bind in the dynamic scope the way the specification says.

Oracle: the test suite's verdicts (checked against jsonschema as well), on every group of the
suite's ``dynamicRef.json`` (2020-12) and ``recursiveRef.json`` (2019-09).
"""

import json
import warnings
from pathlib import Path

import jsonschema
import pytest

from tokenfsm.schema import SchemaWarning, UnsupportedSchema, compile_json_schema
from tokenfsm.schema.serialize import dumps_in_schema_order

DATA = Path(__file__).parents[1] / "data"


def _documents(root: Path) -> dict:
    return {"http://localhost:1234/" + p.relative_to(root).as_posix(): json.loads(p.read_text())
            for p in sorted(root.rglob("*.json"))}


DOCS_2020 = _documents(DATA / "json-schema-test-suite" / "remotes")
DOCS_OLD = _documents(DATA / "json-schema-test-suite-drafts" / "remotes")


def _groups(path: Path):
    return [pytest.param(g, id=g["description"][:60]) for g in json.loads(path.read_text())]


def _run(group, documents, validator_cls):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SchemaWarning)
            cs = compile_json_schema(group["schema"], whitespace=0, allow_extra_keys=True,
                                     property_order="any", documents=documents, max_depth=4)
    except UnsupportedSchema as e:
        # refusing is allowed only for what the compiler documents as out of reach
        assert e.keyword in ("$ref", "uniqueItems"), e
        return
    for t in group["tests"]:
        texts = {json.dumps(t["data"], separators=(",", ":")),
                 dumps_in_schema_order(t["data"], group["schema"], 0, documents)}
        got = any(cs.accepts(x) for x in texts)
        assert got == t["valid"], t["description"]


@pytest.mark.parametrize("group", _groups(DATA / "json-schema-test-suite" / "dynamicRef.json"))
def test_dynamic_ref_suite(group):
    _run(group, DOCS_2020, jsonschema.Draft202012Validator)


@pytest.mark.parametrize("group", _groups(DATA / "json-schema-test-suite-drafts" / "draft2019-09"
                                          / "recursiveRef.json"))
def test_recursive_ref_suite(group):
    _run(group, DOCS_OLD, jsonschema.Draft201909Validator)


def test_pointer_ref_into_another_resource_enters_it():
    # the $ref crosses into resource "inner" by a JSON pointer: its $dynamicAnchor is in scope
    schema = {
        "$id": "https://example.test/outer",
        "$ref": "#/$defs/inner/$defs/list",
        "$defs": {
            "inner": {"$id": "inner", "$dynamicAnchor": "item", "type": "integer",
                      "$defs": {"list": {"type": "array",
                                         "items": {"$dynamicRef": "#item"}}}},
        },
    }
    cs = compile_json_schema(schema, whitespace=0)
    v = jsonschema.Draft202012Validator(schema)
    for x in ([1, 2], ["a"], [], [1.5]):
        assert cs.accepts(json.dumps(x, separators=(",", ":"))) == v.is_valid(x), x
