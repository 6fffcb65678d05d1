"""Open values called, not copied: in schema order every array and every object a schema leaves
open (``{}``, ``additionalProperties: true``, an untyped property, undeclared keys) is one
automaton of its own, called from each place on the stack route
(:data:`tokenfsm.schema.stack.ANY_TARGETS`). The language must be the copied one (the fast
path's reference, ``share_any_values=False``), also where products, complements, type filters
and lists of values meet open values, and the masks the flat index's."""

import json
import pathlib
import random
import warnings

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tokenfsm.automata.dfa import DFA, OpaqueSymbolError
from tokenfsm.masks import Matcher, TokenIndex, allocate_token_bitmask
from tokenfsm.masks.pushdown import PushdownIndex
from tokenfsm.schema import SchemaError, SchemaWarning, UnsupportedSchema
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.jsontext import TypedLanguage
from tokenfsm.schema.stack import ANY_TARGETS, OPEN_SITES
from tokenfsm.schema.tuning import DEFAULT_TUNING

from test_lower_lazy import _walk
from test_stack_route import same_language

COPIED = DEFAULT_TUNING.with_reference("share_any_values")


def _compile(schema, tuning=DEFAULT_TUNING, **kw):
    kw.setdefault("whitespace", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        return compile_tuned(schema, tuning, **kw)


OPEN = {"type": "object", "properties": {
    "id": {"type": "integer"}, "meta": {}, "tags": {"type": "array"},
    "spec": {"type": "object", "properties": {"name": {"type": "string"}},
             "additionalProperties": True}},
    "required": ["id"], "additionalProperties": False}


def test_open_values_are_modules_called_from_each_place():
    cs = _compile(OPEN, max_depth=2, recursion="stack")
    assert cs.recursive is not None
    # the top automaton, every array and every object: three automata, however many places
    assert len(cs.recursive.modules) == 3
    copied = _compile(OPEN, COPIED, max_depth=2)
    assert copied.recursive is None
    same_language(cs, copied, 1)
    validator = jsonschema.Draft202012Validator(OPEN)
    for text in cs.dfa.examples(40):
        validator.validate(json.loads(text))
    fresh = _compile(OPEN, max_depth=2, recursion="stack")   # (its walk, not the expansion)
    assert fresh.accepts('{"id":1,"meta":{"a":[1,null]},"spec":{"name":"x","y":[]}}')
    assert not fresh.accepts('{"id":1,"meta":{"a":[1,[null]]}}')     # nested past max_depth
    assert not fresh.accepts('{"id":1,"meta":{"a":[1,nul]}}')
    assert not fresh.accepts('{"id":1,"extra":2}')


def _open_in(places: int, extra=None) -> dict:
    """An object with ``places`` open properties (and ``extra`` declared ones)."""
    props = {f"o{i}": {} for i in range(places)}
    props.update(extra or {})
    return {"type": "object", "properties": props, "additionalProperties": False}


def test_open_values_met_in_enough_places_are_called():
    # "auto": called where the lowering meets them in OPEN_SITES places, else copied
    many, few = _open_in(OPEN_SITES), _open_in(OPEN_SITES - 1)
    assert _compile(many).recursive is not None
    assert _compile(few).recursive is None
    same_language(_compile(many), _compile(many, COPIED), 2)
    validator = jsonschema.Draft202012Validator(many)
    for text in _compile(many).dfa.examples(30):
        validator.validate(json.loads(text))
    # the reference copies; any order keeps to the counted route (key sets); a closed schema
    # has nothing to call
    assert _compile(many, COPIED).recursive is None
    assert _compile(many, property_order="any").recursive is None
    closed = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert _compile(closed).recursive is None


def test_where_a_lowering_would_count_the_flat_route_counts():
    # the stack route counts nothing: a string too long to copy gives way to the counted route
    schema = _open_in(OPEN_SITES, {"s": {"type": "string", "maxLength": 10**9}})
    cs = _compile(schema)
    assert cs.recursive is None and cs.lazy is not None
    assert cs.accepts('{"o0":[{}],"s":"' + "x" * 5000 + '"}')
    assert not cs.accepts('{"o0":[{]}')


def test_a_filter_by_type_keeps_or_drops_a_typed_call():
    hole_o, hole_a = DFA.literal("\x01"), DFA.literal("\x02")
    obj, arr = ANY_TARGETS["object"], ANY_TARGETS["array"]
    lang = TypedLanguage.of({"object": hole_o, "array": hole_a, "null": DFA.literal("null")},
                            typed=frozenset([(obj, "object"), (arr, "array")]))
    assert lang.calls == {obj, arr} and lang.untyped() == frozenset()
    only = lang.only(["object", "null"])
    assert set(only.parts) == {"object", "null"}
    assert only.calls == {obj} and only.typed == {(obj, "object")}
    assert lang.only(["null"]).calls == frozenset()
    # the same call also held inside a container: a filter cannot tell, so it refuses
    nested = TypedLanguage.of({"object": hole_o, "array": hole_a}, calls=frozenset([obj]),
                              typed=frozenset([(obj, "object"), (arr, "array")]))
    assert nested.typed == {(arr, "array")} and nested.untyped() == {obj}
    with pytest.raises(OpaqueSymbolError):
        nested.only(["array"])
    # unless it keeps no part: no text of the call is left either
    none = nested.only(["string", "null"])
    assert none.is_empty() and none.calls == frozenset() and none.typed == frozenset()
    # a union keeps a call typed only where neither side holds it otherwise
    assert lang.union(nested).typed == {(arr, "array")}
    assert lang.union(lang).typed == lang.typed


# open values in every context the lowering meets them in: products (allOf, an enum, a
# witness), complements (not, if/then/else), type filters, contains, items and extras
_LEAVES = [
    lambda rng: {},
    lambda rng: True,
    lambda rng: {"type": "object"},
    lambda rng: {"type": "array", "maxItems": 2},
    lambda rng: {"type": ["object", "string"]},
    lambda rng: {"type": "integer", "minimum": 0, "maximum": 9},
    lambda rng: {"enum": [{"a": 1}, [None], "x"]},
    lambda rng: {"type": "object", "properties": {"k": {}}, "additionalProperties": True},
    lambda rng: {"type": "object", "patternProperties": {"^p": {}},
                 "additionalProperties": {"type": "null"}},
]
_WRAPS = [
    lambda rng, s: s,
    lambda rng, s: {"allOf": [s, {"type": ["object", "array", "integer"]}]},
    lambda rng, s: {"anyOf": [s, {"type": "null"}]},
    lambda rng, s: {"oneOf": [s, {"type": "object", "properties": {"z": {"const": 1}},
                                  "required": ["z"]}]},
    lambda rng, s: {"not": s},
    lambda rng, s: {"if": {"type": "object"}, "then": s, "else": {"type": "integer"}},
    lambda rng, s: {"type": "array", "items": s, "maxItems": 2},
    lambda rng, s: {"type": "array", "contains": {"type": "object"}, "items": s, "maxItems": 2},
    lambda rng, s: {"type": "object", "properties": {"q": s}, "minProperties": 1,
                    "dependentRequired": {"q": ["r"]}},
    lambda rng, s: {"properties": {"w": s}},
    lambda rng, s: {"type": "object", "additionalProperties": s},
]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32))
def test_generated_schemas_with_open_values(seed):
    """Random open values under random applicators: called, they mean what copied means (or
    both routes refuse the schema alike)."""
    rng = random.Random(seed)
    props = {}
    for j in range(rng.randint(1, 3)):
        s = rng.choice(_LEAVES)(rng)
        for _ in range(rng.randint(1, 2)):
            s = rng.choice(_WRAPS)(rng, s)
        props[f"p{j}"] = s
    schema = {"type": "object", "properties": props,
              "additionalProperties": rng.choice([True, False, {}])}
    outcomes = {}
    for name, tuning, route in (("called", DEFAULT_TUNING, "stack"), ("copied", COPIED, "auto")):
        try:
            outcomes[name] = _compile(schema, tuning, max_depth=2, strict=False, recursion=route)
        except (UnsupportedSchema, SchemaError) as e:
            outcomes[name] = type(e)
    called, copied = outcomes["called"], outcomes["copied"]
    if isinstance(called, type) or isinstance(copied, type):
        assert called == copied
        return
    same_language(called, copied, seed)


@pytest.fixture(scope="module")
def qwen():
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    return load_vocabulary("qwen")


def _real_schemas():
    rows = json.loads((pathlib.Path(__file__).parent.parent / "data" / "schema"
                       / "maskbench_sample.json").read_text())
    return [pytest.param(r["schema"], extra, id=f"{r['name']}-{'extra' if extra else 'declared'}")
            for r in rows for extra in (False, True)]


@pytest.mark.parametrize("schema, extra", _real_schemas())
def test_real_schemas_called_equal_the_copied_route(schema, extra, qwen):
    # the maskbench sample, declared keys only and undeclared keys allowed (every undeclared
    # value open): the language of the copied route, and the masks of its flat index at every
    # step of random walks on Qwen
    options = dict(allow_extra_keys=extra, strict=False)
    called = _compile(schema, recursion="stack", **options)
    copied = _compile(schema, COPIED, **options)
    assert called.dfa == copied.dfa
    if called.recursive is None or copied.dfa is None:
        return
    index = PushdownIndex(called.recursive.to_bytes(), qwen)
    flat_index = TokenIndex.build(copied.dfa, qwen)
    for seed in range(2):
        _walk(index, flat_index, qwen, random.Random(seed), steps=25)


def test_a_document_through_an_open_value_fills_the_flat_masks(qwen):
    # a walk deep into the called automata, along a document: at each step the longest allowed
    # token the rest of the document begins with
    cs = _compile(OPEN, max_depth=3, recursion="stack")
    flat = TokenIndex.build(_compile(OPEN, COPIED, max_depth=3).dfa, qwen)
    doc = ('{"id":7,"meta":{"a":[1,{"b":"\\u00e9x"},[true,null]]},"tags":[{},[],"t"],'
           '"spec":{"name":"n","more":{"deep":[1.5e3]}}}').encode()
    m, f = Matcher(PushdownIndex(cs.recursive.to_bytes(), qwen)), Matcher(flat)
    bm = allocate_token_bitmask(2, qwen.size)
    tokens = qwen.tokens
    while doc:
        m.fill_next_token_bitmask(bm, 0)
        f.fill_next_token_bitmask(bm, 1)
        assert np.array_equal(bm[0], bm[1])
        allowed = np.flatnonzero(np.unpackbits(bm[1].view(np.uint8), bitorder="little"))
        t = max((int(t) for t in allowed if t < qwen.size and tokens[t]
                 and doc.startswith(tokens[t])), key=lambda t: len(tokens[t]))
        m.advance(t)
        f.advance(t)
        doc = doc[len(tokens[t]):]
    assert m.is_accepting() and f.is_accepting()


def test_the_union_of_the_same_automata_is_built_once_across_languages():
    # the lowering rebuilds some languages from the same parts at every place (``not: false``,
    # a closed object's witness): their union of types is kept by the automata it joins
    strings = DFA.from_regex('"[a-z]*"')
    parts = {"null": DFA.literal("null"), "string": strings}
    joined = TypedLanguage.of(parts).to_dfa()
    assert TypedLanguage.of(dict(parts)).to_dfa() is joined
    assert joined == DFA.literal("null") | strings
    other = TypedLanguage.of({"null": DFA.literal("null"), "string": DFA.from_regex('"[a-z]+"')})
    assert other.to_dfa() is not joined and not other.to_dfa().accepts('""')


def test_an_automaton_kept_by_its_parts_is_made_again_under_a_smaller_budget():
    from tokenfsm.automata import Budget, BudgetExceeded
    from tokenfsm.automata.cache import ByteLRU
    from tokenfsm.schema.jsontext import kept_by_parts

    cache = ByteLRU(None, 1 << 20)
    parts = [DFA.from_regex('"[a-z]{0,30}"'), DFA.literal(":")]
    made = kept_by_parts(cache, parts, lambda: DFA.concat_all(parts), None)
    assert made == DFA.from_regex('"[a-z]{0,30}":')
    assert kept_by_parts(cache, list(parts), lambda: 1 / 0, None) is made    # not made again
    small = Budget(max_states=5)
    with pytest.raises(BudgetExceeded):
        kept_by_parts(cache, parts, lambda: DFA.concat_all(parts, small), small)
    other = [DFA.from_regex('"[a-z]{0,30}"'), parts[1]]     # the same language, another automaton
    assert kept_by_parts(cache, other, lambda: DFA.concat_all(other), None) is not made
