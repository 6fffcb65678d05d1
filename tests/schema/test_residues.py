"""Number schemas under a formula of ``multipleOf`` and bounds (:mod:`tokenfsm.schema.residues`):
every non-exponent text is accepted exactly when ``jsonschema`` (read with decimals, so exactly)
passes its value; on canonical spellings the language is the reference's (the applicators
lowered one by one); the automaton is in the canonical form every other construction gives."""

from __future__ import annotations

import json
from decimal import Decimal

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import DEFAULT_BUDGET
from tokenfsm.schema import compile_json_schema
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.errors import SchemaError
from tokenfsm.schema.jsontext import CANONICAL_NUMBER
from tokenfsm.schema.numbers import number_range
from tokenfsm.schema.residues import (RESIDUE_STATES, _canonical, _product, _quotient,
                                      _reachable_product, _residue_table, number_formula)
from tokenfsm.schema.resolve import resolve
from tokenfsm.schema.tuning import DEFAULT_TUNING

REFERENCE = DEFAULT_TUNING.with_reference("number_formulas")
MULTIPLES = [2, 3, 4, 5, 6, 7, 10, 12, 0.5, 0.25, 1.5, 2.5]
BOUNDS = [-12, -2.5, 0, 1, 3.5, 10, 30]


def _atom():
    return st.one_of(
        st.builds(lambda k: {"multipleOf": k}, st.sampled_from(MULTIPLES)),
        st.builds(lambda k, b: {k: b}, st.sampled_from(["minimum", "maximum", "exclusiveMinimum",
                                                         "exclusiveMaximum"]),
                  st.sampled_from(BOUNDS)),
        st.just({"type": "number"}), st.just({"type": "string"}), st.just({"maxLength": 2}))


def _formula(sub):
    return st.one_of(
        st.builds(lambda ps: {"anyOf": ps}, st.lists(sub, min_size=1, max_size=3)),
        st.builds(lambda ps: {"allOf": ps}, st.lists(sub, min_size=1, max_size=3)),
        st.builds(lambda ps: {"oneOf": ps}, st.lists(sub, min_size=1, max_size=3)),
        st.builds(lambda p: {"not": p}, sub),
        st.builds(lambda c, t, e: {"if": c, "then": t, "else": e}, sub, sub, sub))


formulas = st.recursive(_atom(), _formula, max_leaves=6)


@st.composite
def number_schemas(draw):
    schema = {"type": "number", "allOf": [draw(formulas)]}
    if draw(st.booleans()) or "multipleOf" not in json.dumps(schema):
        schema["multipleOf"] = draw(st.sampled_from(MULTIPLES))
    return schema


@st.composite
def number_texts(draw):
    """Non-exponent number texts, trailing fraction zeros and ``-0`` included."""
    sign = draw(st.sampled_from(["", "-"]))
    whole = str(draw(st.integers(0, 40)))
    if not draw(st.booleans()):
        return sign + whole
    return sign + whole + "." + draw(st.text(alphabet="0123455", min_size=1, max_size=3))


def _compiled(schema, tuning) -> DFA:
    """The schema's automaton (the empty one where it is unsatisfiable)."""
    try:
        return compile_tuned(schema, tuning, whitespace=0).dfa
    except SchemaError as e:
        assert "unsatisfiable" in str(e)
        return DFA.empty()


def _valid(schema, text: str) -> bool:
    exact = json.loads(json.dumps(schema), parse_float=Decimal)
    return jsonschema.Draft202012Validator(exact).is_valid(json.loads(text, parse_float=Decimal))


@settings(max_examples=150, deadline=None)
@given(number_schemas(), st.lists(number_texts(), min_size=12, max_size=12))
def test_texts_are_accepted_exactly_when_jsonschema_passes_their_value(schema, texts):
    sir = resolve(schema)
    got = number_formula(sir.root, sir)
    assert got is not None          # every generated schema is such a formula
    if got.is_empty():
        with pytest.raises(SchemaError, match="unsatisfiable"):
            compile_json_schema(schema, whitespace=0)
        whole = got
    else:
        whole = compile_json_schema(schema, whitespace=0).dfa
    for text in texts + ["0", "-0", "3", "7.5", "-2.50", "10.000", "0.25", "1e2"]:
        expected = _valid(schema, text) and "e" not in text      # (no exponent forms)
        assert got.accepts(text) == expected, (schema, text)
        assert whole.accepts(text) == expected, (schema, text)


@settings(max_examples=60, deadline=None)
@given(number_schemas())
def test_canonical_spellings_are_the_references(schema):
    fast, plain = (_compiled(schema, t) for t in (DEFAULT_TUNING, REFERENCE))
    assert fast & CANONICAL_NUMBER == plain & CANONICAL_NUMBER
    # the reference's other spellings (a multiple written 10.0) are kept
    assert (plain & DFA.from_regex(r"-?[0-9]+(\.[0-9]+)?")).difference(fast).is_empty()


@settings(max_examples=60, deadline=None)
@given(number_schemas())
def test_the_automaton_is_canonical(schema):
    sir = resolve(schema)
    d = number_formula(sir.root, sir)
    again = DFA.from_parts(d.classes, d.delta, d.accepting, d.start).minimize()
    assert d == again and d.delta == again.delta and d.classes == again.classes


def test_integers_in_drafts_that_count_one_point_zero():
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "integer",
              "not": {"multipleOf": 3}, "anyOf": [{"multipleOf": 2}, {"maximum": 0}]}
    sir = resolve(schema)
    d = number_formula(sir.root, sir)
    texts = ("4", "4.0", "4.00", "6", "-3", "-1", "-1.0", "2.5", "-0")
    assert [t for t in texts if d.accepts(t)] == ["4", "4.0", "-1", "-1.0"]
    # draft 4 (or none declared): 1.0 is no integer, which the spelling decides: applicator by
    # applicator
    draft4 = dict(schema, **{"$schema": "http://json-schema.org/draft-04/schema#"})
    sir4 = resolve(draft4)
    assert number_formula(sir4.root, sir4) is None
    assert not compile_json_schema(draft4, whitespace=0).dfa.accepts("4.0")
    assert compile_json_schema(draft4, whitespace=0).dfa.accepts("4")


@pytest.mark.parametrize("schema", [
    {"type": "number", "not": {"enum": [3, 6]}, "anyOf": [{"multipleOf": 3}]},   # listed values
    {"type": "number", "$defs": {"n": {"anyOf": [{"multipleOf": 2}, {"$ref": "#/$defs/n"}]}},
     "$ref": "#/$defs/n"},                                                   # names itself
    {"type": "number", "anyOf": [{"minimum": 3}, {"maximum": -3}]},         # bounds alone
    {"type": "number", "anyOf": [{"multipleOf": 7919}, {"multipleOf": 0.0001}]},  # too many
    {"type": ["number", "string"], "not": {"multipleOf": 3}},              # strings too
    {"type": "number", "multipleOf": 3},                                   # no applicator
])
def test_what_it_leaves_to_the_applicators(schema):
    sir = resolve(schema)
    assert number_formula(sir.root, sir) is None
    assert _compiled(schema, DEFAULT_TUNING) == _compiled(schema, REFERENCE)


def test_a_large_modulus_stays_within_the_states_it_may_take():
    # lcm(7919, 10**4 * 1) * (4 + 3) residue states is past the limit: declined, before any
    # table is allocated
    assert 7919 * 10 ** 4 * 7 > RESIDUE_STATES
    schema = {"type": "number", "not": {"multipleOf": 9}, "anyOf": [{"multipleOf": 11},
                                                                    {"multipleOf": 13}]}
    sir = resolve(schema)
    d = number_formula(sir.root, sir)
    assert d.accepts("11") and not d.accepts("99") and d.accepts("26") and not d.accepts("1")


@pytest.mark.parametrize("bounds", [{"exclusiveMinimum": -300, "exclusiveMaximum": 0},
                                    {"allOf": [{"minimum": -40.5}, {"maximum": 130}]}])
def test_a_large_lcm_within_bounds_reads_the_value_exactly(bounds):
    # lcm(101, 103, 107, 109, 0.5) is past RESIDUE_STATES; within the bounds every value's
    # digits are read exactly
    schema = dict({"type": "number", "anyOf": [{"multipleOf": 101}, {"multipleOf": 103},
                                               {"not": {"multipleOf": 107}}],
                   "not": {"anyOf": [{"multipleOf": 109}, {"multipleOf": 0.5}]}}, **bounds)
    sir = resolve(schema)
    d = number_formula(sir.root, sir)
    assert d is not None
    texts = [f"{sign}{n}{frac}" for sign in ("", "-") for n in range(0, 330, 7)
             for frac in ("", ".0", ".25", ".5", ".75", ".1")]
    texts += ["-101", "-206", "-218", "-214", "-107", "101", "103", "-0", "-40.5", "-40.75"]
    for text in texts:
        assert d.accepts(text) == _valid(schema, text), text


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 60), st.integers(0, 2), st.data())
def test_a_bounded_range_paired_first_is_the_range_after_minimising(modulus, scale, data):
    # the two routes to a residue table within a range: pairs reachable from the start, then
    # one minimisation (bounded ranges), or the minimal table times the whole range
    passed = np.array(data.draw(st.lists(st.booleans(), min_size=modulus + 1,
                                         max_size=modulus + 1)))
    lo, hi = sorted(data.draw(st.lists(st.sampled_from(BOUNDS), min_size=2, max_size=2)))
    lo_x, hi_x = data.draw(st.booleans()), data.draw(st.booleans())
    limit = number_range(lo, hi, lo_x and lo < hi, hi_x and lo < hi)
    residues = _residue_table(passed, modulus, scale)
    paired = _reachable_product(*residues, limit, DEFAULT_BUDGET)
    assert paired is not None
    want = _canonical(*_quotient(*_product(*_quotient(*residues), limit, DEFAULT_BUDGET)))
    assert _canonical(*_quotient(*paired)) == want
