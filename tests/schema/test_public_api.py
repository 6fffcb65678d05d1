"""One public ``compile_json_schema``: defined once, every option in its signature and docstring,
tool-call styles reachable through ``style``; the keyword table and the fast-path table are what
their modules say."""

import inspect

import pytest

import tokenfsm.schema
from tokenfsm.schema import compile_json_schema
from tokenfsm.schema.compiler import CompiledSchema, compile_tuned
from tokenfsm.schema.lower import canonical_texts
from tokenfsm.schema.keywords import KEYWORDS, keyword, subschemas
from tokenfsm.schema.toolcalls import STYLES, CompiledArguments
from tokenfsm.schema.algebra import Rewriter
from tokenfsm.schema.resolve import resolve
from tokenfsm.schema.tuning import DEFAULT_TUNING, FAST_PATHS, SCALAR_ALTERNATIVES, Tuning

OPTIONS = ["whitespace", "excludes", "strict", "allow_extra_keys", "property_order", "max_depth",
           "budget", "documents", "recursion", "style"]


def test_defined_once_with_every_option_shown():
    from tokenfsm.schema import compiler, toolcalls
    assert tokenfsm.schema.compile_json_schema is compiler.compile_json_schema
    assert not hasattr(toolcalls, "compile_json_schema")
    sig = inspect.signature(tokenfsm.schema.compile_json_schema)
    assert list(sig.parameters) == ["schema"] + OPTIONS
    doc = inspect.getdoc(tokenfsm.schema.compile_json_schema)
    for name in OPTIONS:
        assert f"\n{name} :" in doc, name


@pytest.mark.parametrize("style", STYLES)
def test_styles_give_their_documented_result(style):
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    got = compile_json_schema(schema, style=style, whitespace=0)
    assert isinstance(got, CompiledSchema if style == "json" else CompiledArguments)
    assert not got.dfa.is_empty()
    if style != "json":  # options of the JSON text alone
        with pytest.raises(ValueError):
            compile_json_schema(schema, style=style, recursion="stack")


def test_the_keyword_table_holds_each_keyword_once_and_reads_shapes():
    assert len(KEYWORDS) == len({k.name for k in KEYWORDS.values()})
    for k in KEYWORDS.values():
        assert k.merge in ("min", "max", "union", "intersect", "both", "group", "applicator",
                           "ignore"), k
        assert k.negate in ("complement", "other-types", "forbid", "flip-count", "member",
                            "some-item", "witness", "de-morgan", "none"), k
    assert [p for p, _ in subschemas("items", [{}, True])] == [(0,), (1,)]
    assert list(subschemas("x-unknown", {"type": "string"})) == []
    assert keyword("$id", 4) is None and keyword("id", 2020) is None
    assert keyword("contentMediaType", 7).lower == "unsupported"
    assert keyword("contentMediaType", 2020).lower == "annotation"


@pytest.mark.parametrize("fast_path", FAST_PATHS, ids=lambda f: f.name)
def test_each_fast_path_equals_its_reference(fast_path):
    # a schema that exercises every fast path: definitions written alike, a large shared one on
    # the stack route, objects large enough to compose
    item = {"type": "object", "properties": {f"k{i}": {"type": "string", "maxLength": 4}
                                             for i in range(6)}}
    schema = {"$defs": {"a": item, "b": dict(item, description="a copy"),
                        "t": {"type": "object", "properties": {
                            "kids": {"type": "array", "items": {"$ref": "#/$defs/t"}, "maxItems": 2},
                            "a": {"$ref": "#/$defs/a"}, "b": {"$ref": "#/$defs/b"}}}},
              "$ref": "#/$defs/t"}
    for recursion in ("unroll", "stack"):
        fast = compile_tuned(schema, Tuning(share_states=1), recursion=recursion, max_depth=2,
                             whitespace=0)
        plain = compile_tuned(schema, Tuning(share_states=1).with_reference(fast_path.name),
                              recursion=recursion, max_depth=2, whitespace=0)
        assert fast.dfa == plain.dfa, (fast_path.name, recursion)
    # nested negations of pattern unions: more alternatives of strings than SCALAR_ALTERNATIVES
    def inner(letters):
        return {"not": {"anyOf": [{"pattern": c} for c in letters]}}
    strings = {"type": "string", "maxLength": 5,
               "anyOf": [{"not": {"anyOf": [inner(w) for w in words]}}
                         for words in (("abc", "bcd", "cda"), ("xyz", "yzw", "zwx"),
                                       ("a1", "b2c", "3d4"))]}
    schema_ir = resolve(strings)
    assert len(Rewriter(schema_ir).alternatives(schema_ir.root)) > SCALAR_ALTERNATIVES
    fast = compile_tuned(strings, DEFAULT_TUNING, whitespace=0)
    plain = compile_tuned(strings, DEFAULT_TUNING.with_reference(fast_path.name), whitespace=0)
    assert fast.dfa == plain.dfa, fast_path.name
    # a formula of multipleOf and bounds, in a property and under a reference
    numbers = {"$defs": {"n": {"type": "number", "minimum": -40, "not": {"multipleOf": 15},
                               "anyOf": [{"multipleOf": 3}, {"multipleOf": 2.5}]}},
               "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["a"]}
    fast = compile_tuned(numbers, DEFAULT_TUNING, whitespace=0).dfa
    plain = compile_tuned(numbers, DEFAULT_TUNING.with_reference(fast_path.name),
                          whitespace=0).dfa
    assert fast_path.spellings in ("all", "canonical")
    if fast_path.spellings == "canonical":
        assert fast != plain    # (else "all" would do: "3.0" is the fast path's alone)
        fast, plain = fast & canonical_texts(), plain & canonical_texts()
    assert fast == plain, fast_path.name
    assert getattr(DEFAULT_TUNING, fast_path.name) != fast_path.reference
