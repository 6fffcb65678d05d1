"""A long enum is one union per type: the same language as the union of its values' consts."""

import json

import jsonschema
from hypothesis import given, settings, strategies as st

from tokenfsm.automata import DFA
from tokenfsm.schema import compile_json_schema

scalars = st.one_of(st.none(), st.booleans(), st.integers(-50, 50),
                    st.text(alphabet='ab"\\é\n ', max_size=4))
values = st.recursive(scalars, lambda c: st.lists(c, max_size=2)
                      | st.dictionaries(st.sampled_from("xy"), c, max_size=2), max_leaves=4)


@settings(max_examples=40)
@given(st.lists(values, min_size=1, max_size=6))
def test_enum_is_the_union_of_its_consts(vals):
    enum = compile_json_schema({"enum": vals}, whitespace=0).dfa
    consts = DFA.union_all([compile_json_schema({"const": v}, whitespace=0).dfa for v in vals])
    assert enum.equivalent(consts)
    for text in enum.examples(20):
        jsonschema.validate(json.loads(text), {"enum": vals})


def test_enum_of_many_strings_with_an_exclusion():
    vals = [f"v{i}_x" for i in range(200)] + ["keep", "drop<|x|>", 7]
    cs = compile_json_schema({"enum": vals}, whitespace=0, excludes=["<|x|>"])
    assert all(cs.accepts(json.dumps(v)) for v in vals if v != "drop<|x|>")
    assert not cs.accepts(json.dumps("drop<|x|>"))
    assert not cs.accepts('"v200_x"') and not cs.accepts("8")
