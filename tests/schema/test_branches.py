"""A root union compiled branch by branch: the split (against the whole schema's automaton), the
fallback of compile_json_schema, and the union index (against the flat index of the union)."""

import json
import random
import warnings

import jsonschema
import pytest

from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.automata.dfa import DFA
from tokenfsm.masks import IndexCompiler, TokenIndex, UnionIndex
from tokenfsm.schema import compile_json_schema
from tokenfsm.schema.branches import disjoint_branches, root_branches
from tokenfsm.schema.errors import SchemaError

from test_lower_lazy import _walk


def _compile(schema, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile_json_schema(schema, whitespace=0, **options)


def _obj(tag, **props):
    return {"type": "object", "required": ["kind"],
            "properties": {"kind": tag, **props}}


SPLIT = [
    {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}, {"enum": [[1]]}]},
    {"anyOf": [_obj({"const": "a"}, x={"type": "integer"}), _obj({"const": "b"}),
               False], "required": ["kind"]},
    {"type": "object", "oneOf": [_obj({"const": "a"}, x={"type": "boolean"}),
                                 _obj({"enum": ["b", 1]}, x={"type": "null"})]},
    # the root's own keywords hold in each branch: the oneOf beside the anyOf stays whole
    {"minProperties": 2, "anyOf": [_obj({"const": 1}), _obj({"const": True})],
     "oneOf": [{"required": ["x"]}, {"required": ["y"]}]},
]


@pytest.mark.parametrize("schema", SPLIT)
@pytest.mark.parametrize("order", ["schema", "any"])
def test_the_branches_make_the_schema(schema, order):
    # (without undeclared keys: see the next test)
    branches = root_branches(schema)
    assert branches is not None and len(branches) >= 2
    kw = "anyOf" if "anyOf" in schema else "oneOf"
    for b in branches:      # every other branch false: pointers stay where they were
        assert len(b[kw]) == len(schema[kw]) and sum(x is not False for x in b[kw]) == 1
    options = dict(property_order=order, max_depth=2)
    assert _union_of(branches, options) == _compile(schema, **options).dfa


def _union_of(branches, options):
    parts = []
    for b in branches:
        try:
            parts.append(_compile(b, **options).dfa)
        except SchemaError:     # a branch with no value
            pass
    return DFA.union_all(parts)


def _repeats_a_key(text: str) -> bool:
    repeated = []

    def pairs(items):
        names = [k for k, _ in items]
        repeated.append(len(set(names)) < len(names))
        return dict(items)
    json.loads(text, object_pairs_hook=pairs)
    return any(repeated)


def test_with_undeclared_keys_a_branch_may_repeat_a_name_another_declares():
    # one automaton writes a name that some branch declares once in every branch; a branch
    # compiled alone takes it as any undeclared key, which may come again (as every undeclared
    # key may): the branches' union holds the one automaton's texts, and texts repeating a key
    options = dict(property_order="any", allow_extra_keys=True, max_depth=2)
    schema = SPLIT[1]
    whole = _compile(schema, **options).dfa
    union = _union_of(root_branches(schema), options)
    assert whole.issubset(union) and not union.issubset(whole)
    more, rng = union.difference(whole), random.Random(0)
    assert all(_repeats_a_key(more.sample(rng, max_length=80)) for _ in range(20))


@pytest.mark.parametrize("schema", [
    {"oneOf": [{"minimum": 0}, {"maximum": 9}]},
    # a tag, but values other than objects meet every branch
    {"oneOf": [{"required": ["kind"], "properties": {"kind": {"const": "a"}}},
               {"required": ["kind"], "properties": {"kind": {"const": "b"}}}]},
    # tags that meet (1 and 1.0), or a tag not required everywhere
    {"type": "object", "oneOf": [_obj({"const": 1}), _obj({"enum": [2, 1.0]})]},
    {"type": "object", "oneOf": [_obj({"const": "a"}),
                                 {"properties": {"kind": {"const": "b"}}}]},
    {"type": "object", "oneOf": [_obj({"const": ["a"]}), _obj({"const": ["b"]})]},
])
def test_a_oneof_is_split_only_where_no_value_meets_two_branches(schema):
    assert root_branches(schema) is None
    assert not disjoint_branches(schema, schema["oneOf"])


@pytest.mark.parametrize("schema", [
    {"anyOf": [{"type": "integer"}]},
    {"anyOf": [{"type": "integer"}, False]},
    {"anyOf": [{"type": "integer"}, {"type": "string"}], "unevaluatedProperties": False},
    {"anyOf": [{"type": "integer"}, {"$ref": "#/anyOf/0"}]},
    {"anyOf": [{"type": "integer"}, {"$anchor": "s", "type": "string"}]},
    {"$ref": "#/$defs/a", "$defs": {"a": {}}, "anyOf": [{"type": "integer"}, {}]},
    {"type": "integer"}, True,
])
def test_what_is_not_taken_apart(schema):
    assert root_branches(schema) is None


def _tagged(n):
    """Tagged objects whose ``v`` is an object in one branch and any value (an undeclared key)
    in the other: one network needs their key sets run in step, past the budget."""
    a = _obj({"const": "a"}, v={"type": "object", "properties": {
        f"p{i}": {"type": "integer"} for i in range(n)}}, **{f"a{i}": {"type": "string"}
                                                            for i in range(n)})
    a["required"] = ["kind", "v"]
    return {"anyOf": [a, _obj({"const": "b"}, **{f"b{i}": {"type": "boolean"}
                                                  for i in range(n)})]}


@pytest.fixture(scope="module")
def qwen():
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    return load_vocabulary("qwen")


def test_a_union_past_the_budget_is_compiled_branch_by_branch():
    schema = _tagged(3)
    cs = _compile(schema, property_order="any", allow_extra_keys=True)
    assert len(cs.branches) == 2 and cs.lazy is None and cs.recursive is None
    # the branches' warnings, where the schema has what they name
    assert "values nested deeper than max_depth=3 are cut (at /anyOf/0/properties/v)" \
        in cs.warnings
    v, rng = jsonschema.Draft202012Validator(schema), random.Random(0)
    for b in cs.branches:       # (their union's automaton passes the budget: each apart)
        for _ in range(15):
            assert v.is_valid(json.loads(b.dfa.sample(rng, max_length=80)))
    assert cs.accepts('{"b1":true,"v":[1],"kind":"b"}')
    assert not cs.accepts('{"a1":"x","v":[1],"kind":"a"}')       # v must be an object in a
    assert cs.accepts('{"a1":"x","v":{"p2":3},"kind":"a"}')


def test_the_union_index_walks_the_branches_side_by_side(qwen):
    # a budget the tagged oneOf passes as one automaton, and its branches do not: their masks
    # at every step are the one automaton's flat index's
    schema = SPLIT[2]
    options = dict(property_order="any", allow_extra_keys=True, max_depth=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = IndexCompiler(qwen).json_schema(schema, whitespace=0, **options,
                                                budget=Budget(max_states=300))
    assert isinstance(index, UnionIndex) and len(index.branches) == 2
    flat = TokenIndex.build(_compile(schema, **options).dfa, qwen)
    for seed, prefix in enumerate(["", '{"x":', '{"x":null,', '{"kind":"a"', '{"y":[],']):
        _walk(index, flat, qwen, random.Random(seed), steps=40, prefix=prefix, rollback_every=7)


def test_no_branch_past_the_budget_keeps_the_error():
    with pytest.raises(BudgetExceeded):
        _compile(_tagged(3), property_order="any", allow_extra_keys=True,
                 budget=Budget(max_states=300))


def test_a_union_index_samples_each_sequence_from_one_branch(qwen):
    from tokenfsm.masks.sampling import sample_documents

    schema = SPLIT[2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = IndexCompiler(qwen).json_schema(schema, whitespace=0, property_order="any",
                                                budget=Budget(max_states=60))
    assert isinstance(index, UnionIndex)
    runs = sample_documents(index, 8, seed=3, plain_json=True, pull=0.2)
    assert all(r.finished for r in runs)
    kinds = {json.dumps(jsonschema.validate(doc := json.loads(r.text), schema) or doc["kind"])
             for r in runs}
    assert len(kinds) >= 2            # (both branches drawn)
