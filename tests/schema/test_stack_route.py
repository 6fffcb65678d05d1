"""The stack route for recursive ``$ref`` (``recursion="stack"``): one automaton per recursive
definition, calling each other, must mean exactly what unrolling means (``recursion="unroll"``,
an independent construction: one DFA with a copy per nesting level)."""

import json
import random
import warnings

import jsonschema
import pytest
from hypothesis import given, settings, strategies as st

from tokenfsm.automata.dfa import DFA, OpaqueSymbolError
from tokenfsm.schema.jsontext import TYPES, TypedLanguage
from tokenfsm.automata.charset import CharSet
from tokenfsm.schema import SchemaError, SchemaWarning, UnsupportedSchema, compile_json_schema
from tokenfsm.schema.compiler import UNROLL_STATES

TREE = {"$defs": {"node": {"type": "object", "properties": {
    "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
    "required": ["v"]}}, "$ref": "#/$defs/node"}

RECURSIVE = {
    "tree": TREE,
    "list": {"$defs": {"l": {"type": "object", "properties": {
        "h": {"type": "boolean"}, "t": {"$ref": "#/$defs/l"}}}}, "$ref": "#/$defs/l"},
    "root": {"type": "object", "properties": {"a": {"type": "null"}, "next": {"$ref": "#"}}},
    "mutual": {"$defs": {"a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
                         "b": {"type": "array", "items": {"$ref": "#/$defs/a"}, "maxItems": 2}},
               "$ref": "#/$defs/a"},
    "anyof": {"$defs": {"e": {"anyOf": [{"type": "integer"},
                                        {"type": "array", "items": {"$ref": "#/$defs/e"}}]}},
              "$ref": "#/$defs/e"},
    "map": {"$defs": {"m": {"type": "object", "additionalProperties": {"$ref": "#/$defs/m"}}},
            "$ref": "#/$defs/m"},
    # no "type": any value, objects constrained (JSON Schema's own meta-schema style)
    "untyped": {"$defs": {"p": {"properties": {"x": {"$ref": "#/$defs/p"}, "y": {"type": "string"}}}},
                "properties": {"top": {"$ref": "#/$defs/p"}}, "type": "object"},
    "two_slots": {"$defs": {"s": {"type": "object", "properties": {
        "not": {"$ref": "#/$defs/s"}, "items": {"type": "array", "items": {"$ref": "#/$defs/s"}},
        "type": {"enum": ["string", "object"]}}}}, "$ref": "#/$defs/s"},
    # pydantic's Optional[Node]
    "optional": {"$defs": {"n": {"type": "object", "properties": {
        "next": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}, "v": {"type": "integer"}}}},
        "$ref": "#/$defs/n"},
    "prefix": {"$defs": {"t": {"type": "array", "prefixItems": [{"type": "string"}, {"$ref": "#/$defs/t"}],
                               "items": False}}, "$ref": "#/$defs/t"},
}


def _compile(schema, recursion, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        return compile_json_schema(schema, recursion=recursion, **kw)


@pytest.mark.parametrize("name", sorted(RECURSIVE))
@pytest.mark.parametrize("max_depth", [1, 2, 3])
@pytest.mark.parametrize("whitespace", [0, 1])
def test_stack_route_is_the_unrolled_language(name, max_depth, whitespace):
    schema = RECURSIVE[name]
    unrolled = _compile(schema, "unroll", max_depth=max_depth, whitespace=whitespace)
    stack = _compile(schema, "stack", max_depth=max_depth, whitespace=whitespace)
    assert unrolled.recursive is None and stack.recursive is not None
    assert len(stack.recursive.modules) >= 2
    same_language(stack, unrolled, max_depth * 10 + whitespace)
    assert stack.warnings == unrolled.warnings


def same_language(stack, unrolled, seed):
    """The stack walk against the unrolled DFA on its texts and on near misses, and the stack
    route's expansion (built on demand) the same minimal DFA."""
    rng = random.Random(seed)
    texts = unrolled.dfa.examples(40)
    for t in list(texts):
        for _ in range(3):
            i = rng.randrange(len(t) + 1)
            texts.append(t[:i] + rng.choice('{}[],:"0 an') + t[i:])
            texts.append(t[:i] + t[i + 1:])
    for t in texts:
        assert stack.accepts(t) == unrolled.dfa.accepts(t), t
    assert stack.dfa == unrolled.dfa


@pytest.mark.parametrize("name", sorted(RECURSIVE))
def test_stack_route_texts_validate(name):
    schema = RECURSIVE[name]
    cs = _compile(schema, "stack", max_depth=3, whitespace=1)
    validator = jsonschema.Draft202012Validator(schema)
    for text in cs.dfa.examples(60):
        assert cs.accepts(text)
        validator.validate(json.loads(text))


def test_any_property_order_and_extra_keys():
    for kw in ({"property_order": "any"}, {"allow_extra_keys": True}, {"whitespace": 2}):
        u = _compile(RECURSIVE["two_slots"], "unroll", max_depth=2, **kw)
        s = _compile(RECURSIVE["two_slots"], "stack", max_depth=2, **kw)
        assert s.dfa == u.dfa, kw


def test_deeper_than_max_depth_is_cut_and_warned():
    doc = {"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]}
    with pytest.warns(SchemaWarning, match=r"recursive \$ref '#/\$defs/node' cut at depth 2"):
        cs = compile_json_schema(TREE, whitespace=0, max_depth=2, recursion="stack")
    assert cs.accepts('{"v":1,"kids":[{"v":2}]}')
    assert not cs.accepts(json.dumps(doc, separators=(",", ":")))
    # at the cut an empty array is all that is left: no item can start
    pd = cs.recursive.to_bytes()
    state, stack = pd.walk(b'{"v":1,"kids":[{"v":2,"kids":[')
    assert state != 0
    assert pd.walk(b"{", state, list(stack))[0] == 0
    assert pd.walk(b"]}]}", state, list(stack))[0] != 0
    assert cs.accepts('{"v":1,"kids":[{"v":2,"kids":[]}]}')


def test_auto_unrolls_small_recursion():
    cs = _compile(TREE, "auto", max_depth=3)
    assert cs.recursive is None
    assert cs.dfa == _compile(TREE, "unroll", max_depth=3).dfa


def _wide(slots: int) -> dict:
    """A definition with ``slots`` properties that hold the definition again, and a few others:
    unrolled, every nesting level multiplies the contexts by ``slots``."""
    props = {f"k{i:02d}": {"$ref": "#/$defs/w"} for i in range(slots)}
    props.update({"name": {"type": "string", "maxLength": 8}, "n": {"type": "integer"}})
    return {"$defs": {"w": {"type": "object", "properties": props}}, "$ref": "#/$defs/w"}


def test_auto_takes_the_stack_route_when_unrolling_is_large():
    schema = _wide(40)
    cs = _compile(schema, "auto", max_depth=3, whitespace=0)
    assert cs.recursive is not None
    assert cs.recursive.expanded_states(UNROLL_STATES) > UNROLL_STATES
    doc = {"k03": {"k39": {"name": "x", "n": -4}, "n": 2}, "name": "abc"}
    assert cs.accepts(json.dumps(doc, separators=(",", ":")))
    assert not cs.accepts(json.dumps({"k03": {"k39": {"k00": {"k01": {}}}}}, separators=(",", ":")))
    assert not cs.accepts('{"name":"123456789"}')
    # the same language as unrolling (checked on texts: the unrolled DFA is the large thing)
    small = _compile(_wide(3), "unroll", max_depth=2, whitespace=0)
    stack = _compile(_wide(3), "stack", max_depth=2, whitespace=0)
    assert stack.dfa == small.dfa


def test_route_conflicts_fall_back_or_raise():
    # a recursive reference intersected with its sibling keywords: only unrolling is exact
    schema = {"$defs": {"n": {"type": "object", "properties": {
        "k": {"allOf": [{"$ref": "#/$defs/n"}, {"required": ["k"]}]}}}}, "$ref": "#/$defs/n"}
    auto = _compile(schema, "auto", max_depth=2)
    assert auto.recursive is None
    assert auto.dfa == _compile(schema, "unroll", max_depth=2).dfa
    with pytest.raises(UnsupportedSchema, match="recursion='stack'.*intersection") as e:
        _compile(schema, "stack", max_depth=2)
    assert e.value.pointer.startswith("/$defs/n/properties/k")
    negated = {"$defs": {"n": {"type": "object", "properties": {"k": {"not": {"$ref": "#/$defs/n"}}}}},
               "$ref": "#/$defs/n"}
    with pytest.raises(UnsupportedSchema, match="recursion='stack'.*complement"):
        _compile(negated, "stack", max_depth=1)


def test_bad_option_and_unsatisfiable():
    with pytest.raises(ValueError, match="recursion"):
        compile_json_schema(TREE, recursion="deep")
    never = {"$defs": {"n": {"type": "object", "properties": {"k": {"$ref": "#/$defs/n"}},
                             "required": ["k"]}}, "$ref": "#/$defs/n"}
    with pytest.raises(SchemaError, match="unsatisfiable"):
        _compile(never, "stack")
    with pytest.raises(SchemaError, match="unsatisfiable"):
        _compile(never, "unroll")


def test_max_depth_zero_and_non_recursive_schemas_unroll():
    optional = {"type": "object", "properties": {"t": {"$ref": "#/$defs/node"}}, "$defs": TREE["$defs"]}
    zero = _compile(optional, "auto", max_depth=0)
    assert zero.recursive is None and zero.accepts("{}") and not zero.accepts('{"t":{"v":1}}')
    flat = {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "integer"}}}
    s = _compile(flat, "stack")
    assert s.dfa == _compile(flat, "unroll").dfa


def test_products_over_calls_are_refused_by_the_schema_layer():
    # the schema layer knows which languages hold calls and refuses to look inside them; the
    # automata themselves treat placeholders as plain characters
    call = TypedLanguage({t: DFA.literal("\x01") for t in TYPES}, frozenset(), frozenset(["/d"]))
    plain = TypedLanguage.of({"array": DFA.from_regex(r"\[.*\]"), "null": DFA.literal("null")})
    for op in (lambda: call.intersect(plain), lambda: plain.intersect(call),
               lambda: call.difference(plain), lambda: plain.difference(call),
               lambda: call.only(["array"])):
        with pytest.raises(OpaqueSymbolError) as e:
            op()
        assert e.value.targets == {"/d"}
    assert call.union(plain).calls == {"/d"}
    calls = DFA.literal("[\x01]") | DFA.literal("[]")
    assert (calls & DFA.from_regex(r"\[.*\]")) == calls


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2), st.integers(1, 3), st.booleans(), st.sampled_from(["string", "integer", "null"]))
def test_generated_recursive_schemas(min_items, slots, required, leaf):
    """Generated recursive definitions: stack route and unrolling agree."""
    props = {f"p{i}": {"type": "array", "items": {"$ref": "#/$defs/d"}, "minItems": min_items % 2}
             for i in range(slots)}
    props["leaf"] = {"type": leaf}
    d = {"type": "object", "properties": props}
    if required:
        d["required"] = ["leaf"]
    schema = {"$defs": {"d": d}, "$ref": "#/$defs/d"}
    u = _compile(schema, "unroll", max_depth=2, whitespace=0)
    s = _compile(schema, "stack", max_depth=2, whitespace=0)
    assert s.dfa == u.dfa
    for t in u.dfa.examples(10):
        assert s.accepts(t)


def test_unbounded_whitespace_warns_alike():
    u = _compile(TREE, "unroll", whitespace=None, max_depth=2)
    with pytest.warns(SchemaWarning) as rec:
        s = compile_json_schema(TREE, whitespace=None, max_depth=2, recursion="stack")
    assert [str(w.message) for w in rec] == u.warnings
    assert {w.filename for w in rec} == {__file__}  # issued where the caller called
    assert s.warnings == u.warnings and s.dfa == u.dfa


def test_recursion_never_reached_gives_the_flat_automaton():
    # the recursive definition is only reachable through a property the schema forbids
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False,
              "$defs": {"r": {"type": "array", "items": {"$ref": "#/$defs/r"}}}}
    for recursion in ("auto", "stack"):
        cs = _compile(schema, recursion)
        assert cs.recursive is None
        assert cs.dfa == _compile(schema, "unroll").dfa


def test_ambiguous_call_falls_back_or_raises():
    # the value of "a" is either a call of t or another object: both start with "{"
    schema = {"$defs": {"t": {"type": "object", "properties": {"a": {"anyOf": [
        {"$ref": "#/$defs/t"}, {"type": "object", "properties": {"z": {"type": "null"}}}]}}}},
        "$ref": "#/$defs/t"}
    auto = _compile(schema, "auto", max_depth=2, whitespace=0)
    unrolled = _compile(schema, "unroll", max_depth=2, whitespace=0)
    assert auto.recursive is None and auto.dfa == unrolled.dfa
    assert auto.accepts('{"a":{"a":{}}}') and auto.accepts('{"a":{"z":null}}')
    with pytest.raises(UnsupportedSchema, match="recursion='stack'") as e:
        _compile(schema, "stack", max_depth=2, whitespace=0)
    assert e.value.pointer == "/$defs/t"


def test_a_reference_in_anyof_nests_as_deep_as_its_schema():
    # not cut to max_depth by the every-JSON-value universe: a chain of definitions, not recursion
    schema = {"$defs": {"a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
                        "b": {"type": "object", "properties": {"c": {"$ref": "#/$defs/c"}}},
                        "c": {"type": "object", "properties": {"d": {"type": "integer"}}}},
              "type": "object", "properties": {"x": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}}}
    cs = _compile(schema, "auto", max_depth=1, whitespace=0)
    doc = {"x": {"b": {"c": {"d": 1}}}}
    jsonschema.validate(doc, schema)
    assert cs.accepts(json.dumps(doc, separators=(",", ":"))) and cs.accepts('{"x":null}')
    assert not cs.accepts('{"x":{"b":{"c":{"d":"1"}}}}')


@pytest.mark.parametrize("name", ["tree", "mutual"])
def test_a_stack_route_compilation_leaves_no_cyclic_garbage(name):
    # as on the flat route (test_rewriting): everything is freed when the compilation ends
    import gc
    schema = RECURSIVE[name]
    _compile(schema, "stack", max_depth=2)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        cs = _compile(schema, "stack", max_depth=2)
        assert cs.recursive is not None
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()
