"""Soundness and completeness of the schema compiler against jsonschema on corpus schemas.

Soundness: texts sampled from the automaton parse and validate (format checking on).
Completeness: valid instances, serialised in schema key order, are accepted; invalid ones are
rejected (strict mode).
"""

import json
import random
import warnings
from decimal import Decimal, localcontext
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.schema.compiler import compile_json_schema
from tokenfsm.schema.errors import SchemaError, SchemaWarning, UnsupportedSchema
from tokenfsm.schema.serialize import dumps_in_schema_order

DATA = Path(__file__).parents[1] / "data"
SUITE = DATA / "json-schema-test-suite"
#: The suite files whose keywords the compiler implements (the others are swept, with counts, by
#: benchmarks/schema_corpus_report.py).
SUITE_FILES = (
    "additionalProperties", "allOf", "anyOf", "boolean_schema", "const", "contains", "defs",
    "dependentRequired", "enum", "exclusiveMaximum", "exclusiveMinimum", "if-then-else", "items",
    "maxItems", "maxLength", "maxProperties", "maximum", "minItems", "minLength", "minProperties",
    "minimum", "multipleOf", "not", "oneOf", "pattern", "prefixItems", "properties", "required",
    "type",
)
BUDGET = Budget(max_states=50_000, max_seconds=10.0)
# groups whose schemas need features outside the grammar (remote refs) or slow formats
SKIP_DESCRIPTIONS = {"remote ref", "$id"}


def _compile(schema, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        return compile_json_schema(schema, budget=BUDGET, **kw)


def _valid(v, text) -> bool:
    """Validate the value of ``text``; numbers are read both as floats and exactly (Decimal), so
    that float rounding in the oracle is not mistaken for an invalid text."""
    if v.is_valid(json.loads(text)):
        return True
    with localcontext() as ctx:  # exact remainders for multipleOf on long numbers
        ctx.prec = 1000
        try:
            return v.is_valid(json.loads(text, parse_float=Decimal, parse_int=Decimal))
        except (TypeError, ArithmeticError):
            return False


def _pattern(validator, patrn, instance, schema):
    """``pattern`` through the ``regex`` module, which knows ``\\p{...}`` like ECMA-262 (``re``
    raises on it)."""
    import regex
    if validator.is_type(instance, "string") and not regex.search(patrn, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")


def _validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls = jsonschema.validators.extend(cls, {"pattern": _pattern})
    return cls(schema, format_checker=jsonschema.FormatChecker())


def _texts(data, schema):
    """The instance in schema key order and in its own key order (the order of keys the schema
    does not declare in ``properties`` is not fixed by the schema)."""
    return {dumps_in_schema_order(data, schema, 1), json.dumps(data, ensure_ascii=False,
                                                               separators=(", ", ": "))}


# groups that take over 1.5 s each (run with -m slow)
SLOW_GROUPS = {"dependentRequired-2", "dependentRequired-3", "oneOf-6", "oneOf-9", "properties-1",
               "required-3", "oneOf-8"}


def _suite_cases():
    for f in (SUITE / f"{name}.json" for name in SUITE_FILES):
        for i, group in enumerate(json.loads(f.read_text())):
            slow = f"{f.stem}-{i}" in SLOW_GROUPS
            yield pytest.param(group, id=f"{f.stem}-{i}", marks=(pytest.mark.slow,) if slow else ())


def _undeclared(schema, data):
    if not isinstance(schema, dict) or not isinstance(data, dict):
        return False
    props = schema.get("properties") or {}
    return any(k not in props for k in data) or any(_undeclared(props.get(k), v) for k, v in data.items())


def _check_group(schema, tests, rng):
    extra = any(t["valid"] and _undeclared(schema, t["data"]) for t in tests)
    try:
        cs = _compile(schema, whitespace=1, allow_extra_keys=extra)
    except (UnsupportedSchema, BudgetExceeded):
        pytest.skip("outside the grammar")
    except SchemaError as e:
        assert "unsatisfiable" in str(e) and not any(t["valid"] for t in tests)
        return
    v = _validator(schema)
    for t in tests:
        if not t["valid"]:
            for text in _texts(t["data"], schema):
                assert not cs.accepts(text), (t["description"], text)
    for _ in range(15):
        sample = cs.dfa.sample(rng, max_length=60)
        assert _valid(v, sample), (sample, schema)
    return cs


@pytest.mark.parametrize("group", list(_suite_cases()))
def test_suite_group(group):
    rng = random.Random(0)
    cs = _check_group(group["schema"], group["tests"], rng)
    if cs is None:
        return
    missed = [t["description"] for t in group["tests"]
              if t["valid"] and not any(cs.accepts(x) for x in _texts(t["data"], group["schema"]))]
    assert not [m for m in missed if m not in KNOWN_MISSES], missed


# valid instances outside the documented restrictions: x.0 spellings of integers, values nested
# deeper than max_depth, key orders other than the compiler's (undeclared keys before declared
# ones; required keys absent from properties: dependencies are written before their dependents)
KNOWN_MISSES = {"a float with zero fractional part is an integer", "Deep nested is valid",
                "same object with different property order is valid", "CRLF"}


def _maskbench():
    rows = json.loads((DATA / "schema" / "maskbench_sample.json").read_text())
    return [pytest.param(r, id=r["name"]) for r in rows]


@pytest.mark.parametrize("row", _maskbench())
def test_maskbench_sample(row):
    rng = random.Random(1)
    cs = _check_group(row["schema"], row["tests"], rng)
    if cs is None:
        return
    for t in row["tests"]:
        if t["valid"]:
            assert any(cs.accepts(x) for x in _texts(t["data"], row["schema"])), t["data"]


SCALAR = st.one_of(
    st.just({"type": "integer"}),
    st.builds(lambda lo, w: {"type": "integer", "minimum": lo, "maximum": lo + w},
              st.integers(-1000, 1000), st.integers(0, 500)),
    st.builds(lambda lo: {"type": "number", "exclusiveMinimum": lo}, st.integers(-5, 5)),
    st.builds(lambda a, b: {"type": "string", "minLength": a, "maxLength": a + b},
              st.integers(0, 3), st.integers(0, 4)),
    st.just({"type": "string", "pattern": "^[a-c]+$"}),
    st.just({"type": "string", "format": "date"}),
    st.just({"type": "boolean"}), st.just({"type": "null"}),
    st.lists(st.one_of(st.integers(-3, 3), st.text("ab\"\\", max_size=3), st.none()),
             min_size=1, max_size=4).map(lambda xs: {"enum": xs}),
)


def _object(props, required_mask):
    names = [f"k{i}" for i in range(len(props))]
    return {"type": "object", "properties": dict(zip(names, props)),
            "required": [n for n, r in zip(names, required_mask) if r]}


SCHEMAS = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.builds(_object, st.lists(inner, min_size=1, max_size=3), st.lists(st.booleans(), min_size=3, max_size=3)),
        st.builds(lambda it, lo, w: {"type": "array", "items": it, "minItems": lo, "maxItems": lo + w},
                  inner, st.integers(0, 2), st.integers(0, 2)),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: {"anyOf": xs}),
        st.lists(inner, min_size=2, max_size=2).map(lambda xs: {"oneOf": xs}),
        inner.map(lambda x: {"not": x}),
    ),
    max_leaves=4,
)


@given(SCHEMAS, st.integers(0, 2), st.randoms(use_true_random=False))
def test_generated_schemas_sound(schema, ws, rng):
    try:
        cs = _compile(schema, whitespace=ws, max_depth=2)
    except (UnsupportedSchema, BudgetExceeded):
        return
    except SchemaError as e:
        assert "unsatisfiable" in str(e)
        return
    v = _validator(schema)
    for _ in range(5):
        text = cs.dfa.sample(rng, max_length=40)
        assert _valid(v, text), (schema, text)


@pytest.mark.slow
def test_corpus_report_runs():
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).parents[2] / "benchmarks" / "schema_corpus_report.py"
    out = subprocess.run([sys.executable, str(script), "--limit", "20"], capture_output=True, text=True,
                         timeout=3000)
    assert out.returncode == 0, out.stderr
    assert "Glaiveai2K" in out.stdout
