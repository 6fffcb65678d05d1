"""Targets written alike compile once: content keys (what makes two ``$ref`` targets equal as
the compiler reads them), and compilations with the reuse against compilations without it (an
independent run of every target), on both routes."""

import copy
import json
import random
import warnings

import jsonschema
import pytest
from hypothesis import given, settings, strategies as st

from tokenfsm.schema import SchemaError, SchemaWarning, UnsupportedSchema, compile_json_schema
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.lower import Lowering
from tokenfsm.schema.resolve import resolve
from tokenfsm.schema.tuning import DEFAULT_TUNING, Tuning
from tokenfsm.schema.twins import ContentKeys

#: The reference of the fast path: every definition compiled where it is named.
NO_TWINS = DEFAULT_TUNING.with_reference("twins")
SHARE_ALL = Tuning(share_states=1)


def keys_of(schema):
    ir = resolve(schema)
    ck = ContentKeys(ir)
    out = {}
    for name in schema.get("$defs", {}):
        try:
            out[name] = ck.key(ir.define(f"/$defs/{name}"))
        except SchemaError:  # (a reference that resolves nowhere: no definition, no key)
            out[name] = None
    return out


def _compile(schema, tuning=DEFAULT_TUNING, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        return compile_tuned(schema, tuning, **kw)


# ---------------------------------------------------------------------------- keys

ITEM = {"type": "object", "properties": {"id": {"type": "integer"}, "tag": {"type": "string"}},
        "required": ["id"]}


def test_annotations_do_not_count_and_keywords_do():
    k = keys_of({"$defs": {
        "a": ITEM,
        "b": {**ITEM, "description": "the same, described", "title": "B", "examples": [{"id": 1}]},
        "c": {**ITEM, "required": ["id", "tag"]},
        "d": {**ITEM, "properties": {**ITEM["properties"], "tag": {"type": "string",
                                                                  "description": "x"}}},
        "e": {**ITEM, "properties": {**ITEM["properties"], "tag": {"type": "string",
                                                                  "maxLength": 3}}},
    }})
    assert None not in k.values()
    assert k["a"] == k["b"] == k["d"]
    assert len({k["a"], k["c"], k["e"]}) == 3


def test_property_names_and_data_are_kept_as_written():
    """A property called "description" is not an annotation, nor is an annotation's name inside
    ``const`` data or a ``dependentRequired`` list."""
    k = keys_of({"$defs": {
        "a": {"properties": {"description": {"type": "string"}}},
        "b": {"properties": {"title": {"type": "string"}}},
        "c": {"const": {"description": 1}},
        "d": {"const": {"description": 2}},
        "e": {"dependentRequired": {"description": ["x"]}},
        "f": {"dependentRequired": {"description": ["y"]}},
    }})
    assert len(set(k.values())) == 6


def test_references_count_by_what_they_name():
    k = keys_of({"$defs": {
        "x1": {"type": "string", "maxLength": 2},
        "x2": {"type": "string", "maxLength": 2, "description": "a copy"},
        "x3": {"type": "string", "maxLength": 3},
        "p": {"type": "array", "items": {"$ref": "#/$defs/x1"}},
        "q": {"type": "array", "items": {"$ref": "#/$defs/x2"}},
        "r": {"type": "array", "items": {"$ref": "#/$defs/x3"}},
    }})
    assert k["x1"] == k["x2"] != k["x3"]
    assert k["p"] == k["q"] != k["r"]


def test_no_key_for_cycles_dynamic_references_and_unknown_documents():
    k = keys_of({"$defs": {
        "loop": {"type": "array", "items": {"$ref": "#/$defs/loop"}},
        "above": {"properties": {"l": {"$ref": "#/$defs/loop"}}},
        "ring1": {"anyOf": [{"$ref": "#/$defs/ring2"}, {"type": "null"}]},
        "ring2": {"items": {"$ref": "#/$defs/ring1"}},
        "away": {"$ref": "https://example.com/other.json"},
        "missing": {"$ref": "#/$defs/nowhere"},
        "plain": {"type": "null"},
    }})
    assert k.pop("plain") is not None
    assert set(k.values()) == {None}
    dyn = {"$dynamicAnchor": "n", "$defs": {"a": {"type": "null"}, "b": {"$dynamicRef": "#n"}}}
    assert set(keys_of(dyn).values()) == {None}


# ---------------------------------------------------------------------------- compilation

def _versions(n):
    """A schema naming n copies of the same definitions (as API versions do), described apart."""
    defs = {}
    for v in range(n):
        defs[f"meta{v}"] = {"type": "object", "description": f"metadata, version {v}",
                            "properties": {"name": {"type": "string", "maxLength": 6},
                                           "labels": {"type": "array", "items": {"type": "string"},
                                                      "maxItems": 2}}}
        defs[f"list{v}"] = {"type": "object", "title": f"List v{v}", "properties": {
            "metadata": {"$ref": f"#/$defs/meta{v}"},
            "items": {"type": "array", "items": {"$ref": f"#/$defs/meta{v}"}}},
            "required": ["items"]}
    defs["different"] = {"type": "object", "properties": {
        "metadata": {"$ref": "#/$defs/meta0"},
        "items": {"type": "array", "items": {"$ref": "#/$defs/meta0"}, "maxItems": 1}},
        "required": ["items"]}
    props = {f"l{v}": {"$ref": f"#/$defs/list{v}"} for v in range(n)}
    props["d"] = {"$ref": "#/$defs/different"}
    return {"$defs": defs, "type": "object", "properties": props}


def _watch_lowered(monkeypatch) -> list:
    """The places of the definitions lowered from now on (watched; nothing changes)."""
    seen = []
    real = Lowering.entered

    def spy(self, target):
        seen.append(self.ir.locations[target])
        return real(self, target)

    monkeypatch.setattr(Lowering, "entered", spy)
    return seen


@pytest.mark.parametrize("recursion", ["unroll", "stack"])
def test_copies_compile_once_to_the_same_language(recursion, monkeypatch):
    schema = _versions(4)
    seen = _watch_lowered(monkeypatch)
    with_twins = _compile(schema, SHARE_ALL, recursion=recursion, whitespace=0)
    targets = {t for t in seen if t.startswith("/$defs/") and t.count("/") == 2}
    seen.clear()
    without = _compile(schema, Tuning(share_states=1, twins=False), recursion=recursion,
                       whitespace=0)
    assert targets == {"/$defs/meta0", "/$defs/list0", "/$defs/different"}
    assert {t for t in seen if t.startswith("/$defs/") and t.count("/") == 2} == {
        f"/$defs/{k}" for k in schema["$defs"]}
    assert with_twins.dfa == without.dfa
    validator = jsonschema.Draft202012Validator(schema)
    for text in with_twins.dfa.examples(30):
        validator.validate(json.loads(text))


def test_shared_twins_call_one_automaton():
    schema = _versions(3)
    schema["$defs"]["list0"]["properties"]["next"] = {"$ref": "#/$defs/list0"}  # recursive now
    with_twins = _compile(schema, SHARE_ALL, recursion="stack", whitespace=0, max_depth=2)
    without = _compile(schema, Tuning(share_states=1, twins=False), recursion="stack",
                       whitespace=0, max_depth=2)
    # meta0..2 are one module; list1 and list2 one module (list0 recurs: no key)
    assert len(with_twins.recursive.modules) == len(without.recursive.modules) - 3
    assert with_twins.dfa == without.dfa
    for text in without.dfa.examples(40):
        assert with_twins.accepts(text)


def test_a_twin_that_warns_is_compiled_in_its_own_place():
    """Lenient warnings name the place of the unsupported keyword: each copy keeps its own."""
    thing = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    schema = {"$defs": {"a": thing, "b": copy.deepcopy(thing)}, "type": "object",
              "properties": {"x": {"$ref": "#/$defs/a"}, "y": {"$ref": "#/$defs/b"}}}
    with pytest.warns(SchemaWarning) as rec:
        compile_json_schema(schema, strict=False)
    where = {str(w.message).rsplit("(at ", 1)[1] for w in rec}
    assert where == {"/$defs/a/uniqueItems)", "/$defs/b/uniqueItems)"}
    with pytest.raises(UnsupportedSchema):
        compile_json_schema(schema)


def test_definitions_are_shared_between_compilations(monkeypatch):
    """A definition written alike in another schema (another name, another description) is not
    lowered again when the options are the same; its warnings name the new place; the result is
    that of a compilation sharing nothing."""
    from tokenfsm.schema import lower as lower_mod
    from tokenfsm.automata.cache import ByteLRU

    monkeypatch.setattr(lower_mod, "SHARED_TWINS", ByteLRU("test.shared_twins", 1 << 20))
    body = {"type": "object", "required": ["id"], "properties": {
        "id": {"type": "integer"}, "at": {"type": "string", "format": "made-up"}}}
    first = {"$defs": {"thing": body}, "type": "object",
             "properties": {"t": {"$ref": "#/$defs/thing"}}}
    second = {"definitions": {"other": dict(body, description="the same, described")},
              "type": "array", "items": {"$ref": "#/definitions/other"}}
    seen = _watch_lowered(monkeypatch)
    compile_json_schema(first, strict=False, whitespace=0)
    seen.clear()
    with pytest.warns(SchemaWarning) as rec:
        got = compile_json_schema(second, strict=False, whitespace=0)
    assert "/definitions/other" not in seen
    assert any("(at /definitions/other/properties/at/format)" in str(w.message) for w in rec)
    assert got.dfa == _compile(second, NO_TWINS, strict=False, whitespace=0).dfa
    # other options (whitespace): lowered again
    compile_json_schema(second, strict=False, whitespace=2)
    assert "/definitions/other" in seen


def _warned(schema, **kw) -> tuple:
    """(compiled schema, the pointers its warnings name)."""
    with pytest.warns(SchemaWarning) as rec:
        got = compile_json_schema(schema, **kw)
    return got, sorted(str(w.message).rsplit("(at ", 1)[1] for w in rec)


def test_definitions_naming_open_values_are_shared_between_compilations(monkeypatch):
    """A definition reaching an open value in a definition it names (an object's metadata and
    its ``FieldsV1``) is shared with another compilation that names that one at the same place:
    the cut is warned there, the language is that of a compilation sharing nothing. Named from
    another place, it is lowered again."""
    from tokenfsm.automata.cache import ByteLRU
    from tokenfsm.schema import lower as lower_mod

    monkeypatch.setattr(lower_mod, "SHARED_TWINS", ByteLRU("test.shared_twins", 1 << 20))
    meta = {"type": "object", "properties": {"name": {"type": "string"},
                                              "fields": {"$ref": "#/$defs/fields"}}}
    first = {"$defs": {"meta": meta, "fields": {"type": "object"}}, "type": "object",
             "properties": {"m": {"$ref": "#/$defs/meta"}}}
    second = {"$defs": {"metadata": dict(meta, description="the same"),
                        "fields": {"type": "object", "title": "open"}},
              "type": "array", "items": {"$ref": "#/$defs/metadata"}}
    elsewhere = copy.deepcopy(second)
    elsewhere["$defs"]["open"] = elsewhere["$defs"].pop("fields")
    elsewhere["$defs"]["metadata"]["properties"]["fields"] = {"$ref": "#/$defs/open"}
    seen = _watch_lowered(monkeypatch)
    _warned(first, whitespace=0)
    for schema, lowered in ((second, False), (elsewhere, True)):
        seen.clear()
        got, where = _warned(schema, whitespace=0)
        assert ("/$defs/metadata" in seen) is lowered
        with pytest.warns(SchemaWarning) as rec:
            want = compile_tuned(schema, NO_TWINS, whitespace=0)
        assert where == sorted(str(w.message).rsplit("(at ", 1)[1] for w in rec)
        assert got.dfa == want.dfa


def test_open_values_count_where_a_shared_definition_is_reused(monkeypatch):
    """The open values a definition meets count toward the stack route (OPEN_SITES) where its
    language is reused from another compilation as where it is lowered: one compilation takes
    the same route whatever was compiled before (here, after a compilation that unrolls, where
    nothing counts)."""
    from tokenfsm.automata.cache import ByteLRU
    from tokenfsm.schema import lower as lower_mod
    from tokenfsm.schema.stack import OPEN_SITES

    monkeypatch.setattr(lower_mod, "SHARED_TWINS", ByteLRU("test.shared_twins", 1 << 20))
    opens = {"type": "object", "properties": {f"p{i}": {"type": "object"}
                                               for i in range(OPEN_SITES)}}
    schema = {"$defs": {"d": opens}, "type": "object", "properties": {"x": {"$ref": "#/$defs/d"}}}
    seen = _watch_lowered(monkeypatch)
    cold = _compile(schema, whitespace=0)
    assert seen == ["/$defs/d"] * 2            # (off the stack route, then on it)
    _compile(schema, whitespace=0, recursion="unroll")
    seen.clear()
    warm = _compile(schema, whitespace=0)
    assert seen == ["/$defs/d"]                # (reused off the stack route)
    assert (warm.recursive is None) == (cold.recursive is None)
    assert cold.recursive is not None          # (OPEN_SITES open values: the stack route)
    assert warm.recursive.to_dfa() == cold.recursive.to_dfa()


_BODIES = [
    {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3},
                                      "b": {"enum": ["x", 1, None]}}, "required": ["a"]},
    {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 2},
    {"anyOf": [{"type": "string", "pattern": "^[a-c]+$"}, {"type": "boolean"}]},
    {"type": "object", "properties": {"description": {"type": "integer"}}},
]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32))
def test_generated_copies(seed):
    """Random definitions, random copies of them (described, retitled, or changed in one
    keyword), named from random places, on both routes: the same DFA with and without the
    reuse."""
    rng = random.Random(seed)
    defs, refs = {}, []
    for i in range(rng.randint(1, 3)):
        body = copy.deepcopy(rng.choice(_BODIES))
        if refs and rng.random() < 0.5:
            body = {"anyOf": [body, {"$ref": rng.choice(refs)}]}
        defs[f"d{i}"] = body
        refs.append(f"#/$defs/d{i}")
    for j in range(rng.randint(1, 4)):
        twin = copy.deepcopy(defs[rng.choice(list(defs))])
        how = rng.randrange(3)
        if how == 0:
            twin["description"] = f"copy {j}"
        elif how == 1:
            twin["title"] = "T"
            twin["$comment"] = "c"
        else:
            twin["maxProperties" if twin.get("type") == "object" else "not"] = (
                1 if twin.get("type") == "object" else {"const": 1})
        defs[f"t{j}"] = twin
        refs.append(f"#/$defs/t{j}")
    props = {f"p{k}": rng.choice([{"$ref": r}, {"type": "array", "items": {"$ref": r},
                                                  "maxItems": 1}])
             for k, r in enumerate(rng.sample(refs, min(len(refs), 4)))}
    schema = {"$defs": defs, "type": "object", "properties": props}
    for route in ("unroll", "stack"):
        got = _compile(schema, SHARE_ALL, recursion=route, whitespace=0)
        want = _compile(schema, Tuning(share_states=1, twins=False), recursion=route,
                        whitespace=0)
        assert got.dfa == want.dfa, route
