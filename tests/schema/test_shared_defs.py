"""Shared definitions on the stack route: a large non-recursive ``$ref`` target is compiled once
and *called* wherever it is named, instead of being copied into each place. The language must be
exactly the unrolled one (``recursion="unroll"``, an independent construction that copies), with
single and with paired placeholder characters, and a product or complement that meets a shared
call must still be exact (the definition is then copied in place)."""

import json
import random
import warnings

import jsonschema
import pytest
from hypothesis import given, settings, strategies as st

from tokenfsm.schema import SchemaError, SchemaWarning, UnsupportedSchema
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.tuning import DEFAULT_TUNING, Tuning

from test_stack_route import RECURSIVE, same_language

#: Every non-empty non-recursive target shared (the threshold as low as it goes).
SHARE_ALL = Tuning(share_states=1)


def _compile(schema, recursion, tuning=DEFAULT_TUNING, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        return compile_tuned(schema, tuning, recursion=recursion, **kw)


@pytest.fixture(params=["single", "pairs"])
def words(request):
    """Share everything, with single placeholder characters or (the reference) pairs."""
    return SHARE_ALL if request.param == "single" else SHARE_ALL.with_reference("pair_refs")


ADDRESS = {"type": "object", "properties": {
    "street": {"type": "string", "maxLength": 8}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
    "kind": {"enum": ["home", "work"]}}, "required": ["zip"]}
PERSON = {"type": "object", "properties": {
    "name": {"type": "string"}, "home": {"$ref": "#/$defs/address"},
    "work": {"anyOf": [{"$ref": "#/$defs/address"}, {"type": "null"}]},
    "friends": {"type": "array", "items": {"$ref": "#/$defs/person"}, "maxItems": 2}},
    "required": ["name"]}

SHARED = {
    # a recursive definition calling a shared one from two places
    "person": {"$defs": {"address": ADDRESS, "person": PERSON}, "$ref": "#/$defs/person"},
    # shared definitions calling shared definitions, the root not recursive
    "chain": {"$defs": {"a": ADDRESS, "b": {"type": "object", "properties": {
        "x": {"$ref": "#/$defs/a"}, "y": {"type": "array", "items": {"$ref": "#/$defs/a"}}}},
        "tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {
            "$ref": "#/$defs/tree"}}, "b": {"$ref": "#/$defs/b"}}}},
        "type": "object", "properties": {"b": {"$ref": "#/$defs/b"}, "t": {"$ref": "#/$defs/tree"},
                                         "a": {"$ref": "#/$defs/a"}}, "required": ["b"]},
    # a shared definition of several types (a call stands for every one of them)
    "types": {"$defs": {"v": {"anyOf": [{"type": "integer", "minimum": 3}, {"type": "string"},
                                        {"type": "array", "items": {"$ref": "#/$defs/v"}}]},
                        "w": {"type": ["null", "boolean", "object"],
                              "properties": {"q": {"$ref": "#/$defs/v"}}}},
              "type": "array", "prefixItems": [{"$ref": "#/$defs/w"}, {"$ref": "#/$defs/v"}]},
    # a shared definition that may begin with '"' where its caller also takes a string: the call
    # and the caller's own string would start on the same byte (the walk must not guess)
    "overlap": {"$defs": {"s": {"anyOf": [{"type": "string", "maxLength": 2}, ADDRESS]},
                          "r": {"type": "array", "items": {"anyOf": [
                              {"$ref": "#/$defs/r"}, {"$ref": "#/$defs/s"},
                              {"type": "string", "pattern": "^x+$"}]}}},
                "$ref": "#/$defs/r"},
}

ALL = {**RECURSIVE, **SHARED}


@pytest.mark.parametrize("name", sorted(ALL))
@pytest.mark.parametrize("max_depth", [1, 2])
def test_shared_definitions_keep_the_unrolled_language(name, max_depth, words):
    schema = ALL[name]
    unrolled = _compile(schema, "unroll", words, max_depth=max_depth, whitespace=1)
    stack = _compile(schema, "stack", words, max_depth=max_depth, whitespace=1)
    assert stack.recursive is not None
    same_language(stack, unrolled, max_depth)
    assert stack.warnings == unrolled.warnings
    if words.pair_refs == 0:
        assert all(len(w) == 2 for w in stack.recursive.calls)


def test_shared_definitions_are_modules():
    cs = _compile(SHARED["person"], "stack", SHARE_ALL, max_depth=2, whitespace=1)
    # the top, person (recursive) and address (shared): address is one module, not two copies
    assert len(cs.recursive.modules) == 3
    validator = jsonschema.Draft202012Validator(SHARED["person"])
    for text in cs.dfa.examples(50):
        validator.validate(json.loads(text))


def test_small_definitions_are_copied():
    # below SHARE_STATES nothing is shared: the modules are the recursive definitions only
    cs = _compile(SHARED["person"], "stack", Tuning(share_states=10**9), max_depth=2, whitespace=1)
    assert len(cs.recursive.modules) == 2
    cs = _compile(SHARED["person"], "stack", SHARE_ALL, max_depth=2, whitespace=1)
    assert len(cs.recursive.modules) == 3


@pytest.mark.parametrize("name", sorted(SHARED))
def test_sharing_is_a_fast_path_of_copying(name):
    # the fast path against its reference (share nothing), both on the stack route
    shared = _compile(SHARED[name], "stack", SHARE_ALL, max_depth=2, whitespace=1)
    copied = _compile(SHARED[name], "stack", DEFAULT_TUNING.with_reference("share_states"),
                      max_depth=2, whitespace=1)
    same_language(shared, copied, 5)


def test_a_product_with_a_shared_call_copies_that_definition(words):
    # allOf intersects the shared address with another object: exact only when address is copied
    schema = {"$defs": {"address": ADDRESS, "person": PERSON},
              "type": "object", "properties": {
                  "p": {"$ref": "#/$defs/person"},
                  "strict_home": {"allOf": [{"$ref": "#/$defs/address"},
                                            {"properties": {"kind": {"const": "home"}}}]},
                  "not_work": {"not": {"$ref": "#/$defs/address"}, "type": "object",
                               "properties": {"zip": {"type": "integer"}}}}}
    unrolled = _compile(schema, "unroll", words, max_depth=2, whitespace=0)
    stack = _compile(schema, "stack", words, max_depth=2, whitespace=0)
    same_language(stack, unrolled, 7)
    assert stack.accepts('{"strict_home":{"zip":"12345","kind":"home"}}')
    assert not stack.accepts('{"strict_home":{"zip":"12345","kind":"work"}}')


def test_many_definitions_need_pairs():
    # 40 definitions, each called from the top object, and a recursive one: more modules than
    # single placeholder characters
    defs = {f"d{i}": {"type": "object", "properties": {f"k{i}": {"type": "integer"},
                                                       "s": {"enum": [f"v{i}", "w"]}},
                      "required": [f"k{i}"]} for i in range(40)}
    defs["r"] = {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/r"}, {"$ref": "#/$defs/d0"}]}}
    schema = {"$defs": defs, "type": "object",
              "properties": {**{f"p{i}": {"$ref": f"#/$defs/d{i}"} for i in range(40)},
                             "r": {"$ref": "#/$defs/r"}},
              "required": [f"p{i}" for i in range(0, 40, 3)]}
    stack = _compile(schema, "stack", SHARE_ALL, max_depth=2, whitespace=0)
    assert len(stack.recursive.modules) == 42
    assert all(len(w) == 2 for w in stack.recursive.calls)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(3)
    for _ in range(30):
        doc = {f"p{i}": {f"k{i}": rng.randrange(100)} for i in range(40)
               if i % 3 == 0 or rng.random() < 0.3}
        if rng.random() < 0.5:
            doc["r"] = [[{"k0": 1}], {"k0": 2, "s": "w"}]
        validator.validate(doc)
        text = json.dumps(doc, separators=(",", ":"))
        assert stack.accepts(text), text
        # a required key left out, an undeclared key, a wrong enum value
        bad = dict(doc)
        del bad["p0"]
        assert not stack.accepts(json.dumps(bad, separators=(",", ":")))
        assert not stack.accepts(text[:-1] + ',"zz":1}')
        # the last key of p0's object followed by an enum value: "w" allowed, "zz" not
        k0 = json.dumps(doc["p0"], separators=(",", ":"))
        assert stack.accepts(text.replace(k0, k0[:-1] + ',"s":"w"}', 1)) == ("s" not in doc["p0"])
        assert not stack.accepts(text.replace(k0, k0[:-1] + ',"s":"zz"}', 1))
    unrolled = _compile(schema, "unroll", SHARE_ALL, max_depth=2, whitespace=0)
    for text in unrolled.dfa.examples(30):
        assert stack.accepts(text)


def test_a_call_starting_where_the_caller_goes_on_copies_that_definition():
    cs = _compile(SHARED["overlap"], "stack", SHARE_ALL, max_depth=2, whitespace=0)
    # the top and r: s is copied in place (the byte '"' begins both s and r's own string)
    assert len(cs.recursive.modules) == 2
    assert cs.accepts('[["ab",{"zip":"12345"}],"xx"]')
    assert not cs.accepts('[["abc"]]')


def test_a_product_over_a_call_names_the_definitions_it_met():
    import pickle

    from tokenfsm.automata.errors import OpaqueSymbolError
    from tokenfsm.schema.lower import Lowering
    from tokenfsm.schema.resolve import resolve
    from tokenfsm.schema.stack import Modules

    # the items that contains counts are the items minus a call: a complement over a call
    schema = {"$defs": {"a": ADDRESS}, "type": "array", "items": {"$ref": "#/$defs/a"},
              "contains": {"required": ["kind"]}}
    modules = Modules(True, 1, frozenset(), False)
    lw = Lowering(resolve(schema), stack=modules)
    with pytest.raises(OpaqueSymbolError) as e:
        lw.lower(lw.ir.root)
    assert e.value.targets == {"/$defs/a"} and modules.shared == {"/$defs/a"}
    back = pickle.loads(pickle.dumps(e.value))
    assert back.targets == {"/$defs/a"} and str(back) == str(e.value)


_TEMPLATES = [
    lambda rng, refs: {"type": "object", "properties": {
        "a": {"type": rng.choice(["string", "integer", "boolean"])},
        "b": {"enum": ["x", "y", 3]}}, "required": rng.choice([[], ["a"]])},
    lambda rng, refs: {"enum": ["red", "green", "blue", None]},
    lambda rng, refs: {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 0}]},
    lambda rng, refs: {"type": "array", "items": {"$ref": rng.choice(refs)} if refs else {"type": "null"},
                       "maxItems": 2},
    lambda rng, refs: {"type": "object", "properties": {"n": {"$ref": rng.choice(refs)} if refs else
                                                        {"type": "number"}, "s": {"const": "k"}}},
]
_USES = [
    lambda ref: {"$ref": ref},
    lambda ref: {"anyOf": [{"$ref": ref}, {"type": "null"}]},
    lambda ref: {"allOf": [{"$ref": ref}, {"type": ["object", "string", "array", "integer"]}]},
    lambda ref: {"type": "array", "items": {"$ref": ref}, "maxItems": 2},
    lambda ref: {"not": {"$ref": ref}, "type": ["integer", "boolean"]},
]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32))
def test_generated_schemas_with_shared_definitions(seed):
    """Random shared definitions named from random places (products and complements included)
    around a recursive one: the stack route, sharing everything it can, means what unrolling
    means, or both refuse the schema alike."""
    rng = random.Random(seed)
    defs, refs = {}, []
    for i in range(rng.randint(1, 4)):
        defs[f"s{i}"] = rng.choice(_TEMPLATES)(rng, list(refs))
        refs.append(f"#/$defs/s{i}")
    props = {"kids": {"type": "array", "items": {"$ref": "#/$defs/r"}, "maxItems": 2}}
    for j in range(rng.randint(1, 4)):
        props[f"u{j}"] = rng.choice(_USES)(rng.choice(refs))
    defs["r"] = {"type": "object", "properties": props}
    schema = {"$defs": defs, "$ref": "#/$defs/r"}
    outcomes = {}
    for route in ("unroll", "stack"):
        try:
            outcomes[route] = _compile(schema, route, SHARE_ALL, max_depth=2, whitespace=0,
                                       strict=False)
        except (UnsupportedSchema, SchemaError) as e:
            outcomes[route] = type(e)
    u, s = outcomes["unroll"], outcomes["stack"]
    if isinstance(u, type) or isinstance(s, type):
        # the stack route refuses only what unrolling alone makes exact (a recursive call under a
        # product), never a schema unrolling finds unsatisfiable or invalid in another way
        assert u == s or (s is UnsupportedSchema and not isinstance(u, type)), (u, s)
        return
    assert s.dfa == u.dfa
    for t in u.dfa.examples(15):
        assert s.accepts(t)


def _copied(n_outer: int, n_inner: int, extra=None) -> dict:
    """A schema without recursion whose root names ``b`` ``n_outer`` times and ``b`` names the
    address ``n_inner`` times: inlined, ``1 + n_outer * (1 + n_inner)`` definition copies."""
    b = {"type": "object", "properties": {f"a{j}": {"$ref": "#/$defs/address"}
                                          for j in range(n_inner)}}
    props = {f"p{i}": {"$ref": "#/$defs/b"} for i in range(n_outer)}
    if extra is not None:
        props["extra"] = extra
    return {"$defs": {"address": ADDRESS, "b": b}, "type": "object", "properties": props}


def test_auto_calls_definitions_a_schema_copies_many_times():
    from tokenfsm.schema.resolve import resolve
    from tokenfsm.schema.stack import CALL_COPIES

    many = _copied(11, 9)            # 111 copies of 3 definitions
    assert resolve(many).inlined_copies(10**6) == 111 >= CALL_COPIES
    auto = _compile(many, "auto", max_depth=2, whitespace=0)
    assert auto.recursive is not None
    unrolled = _compile(many, "unroll", max_depth=2, whitespace=0)
    assert unrolled.recursive is None
    same_language(auto, unrolled, 3)
    validator = jsonschema.Draft202012Validator(many)
    for text in auto.dfa.examples(30):
        validator.validate(json.loads(text))
    # fewer copies, or sharing turned off (the fast path's reference): one flat automaton
    assert resolve(_copied(3, 9)).inlined_copies(10**6) == 31
    assert _compile(_copied(3, 9), "auto", max_depth=2, whitespace=0).recursive is None
    off = _compile(many, "auto", DEFAULT_TUNING.with_reference("share_states"), max_depth=2,
                   whitespace=0)
    assert off.recursive is None and off.dfa == unrolled.dfa


def test_auto_counts_what_calls_cannot_hold():
    # a string too long to copy under a schema whose references pay for calls: the stack route
    # goes over the budget, and the flat route counts the string instead
    schema = _copied(11, 9, extra={"type": "string", "maxLength": 10**9})
    cs = _compile(schema, "auto", max_depth=2, whitespace=0)
    assert cs.lazy is not None
    assert cs.accepts('{"extra":"' + "x" * 3000 + '"}')
    assert cs.accepts('{"p0":{"a1":{"zip":"12345"}}}')
    assert not cs.accepts('{"p0":{"a1":{"zip":"1234"}}}')


def test_any_order_copies_instead_of_calling():
    # objects in any order are key sets on the counted route only: a schema without recursion
    # whose references would pay for calls keeps to it in any order (11 objects of 9 keys, key
    # sets; their addresses flat), keys in any order as jsonschema reads them
    many = _copied(11, 9)
    options = dict(max_depth=2, whitespace=0, property_order="any")
    cs = _compile(many, "auto", **options)
    assert cs.recursive is None and cs.lazy is not None
    validator = jsonschema.Draft202012Validator(many)
    texts = ['{"p3":{"a8":{"zip":"12345"},"a1":{"zip":"00000","kind":"home"}},"p0":{}}',
             '{"p3":{"a8":{"zip":"1"}}}', '{"p3":{"a1":{}}}',
             '{"p10":{},"p2":{"a0":{"kind":"work","zip":"99999"}}}']
    assert [cs.accepts(t) for t in texts] == [validator.is_valid(json.loads(t)) for t in texts] \
        == [True, False, False, True]
