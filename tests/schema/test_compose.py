"""Object and array automata composed from their members (schema/compose.py) against the general
route (one NFA determinised state set by state set), and against jsonschema."""

from __future__ import annotations

import gzip
import json
import os
import random
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import Budget, BudgetExceeded
from tokenfsm.schema import jsontext
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.compose import Composer, LazyDFA
from tokenfsm.schema.tuning import DEFAULT_TUNING, Tuning

#: Every object and array composed, however small (the fast path as far as it goes).
COMPOSE_ALL = Tuning(compose_min_rows=0)
#: The reference: every object and array determinised as one NFA.
NO_COMPOSE = DEFAULT_TUNING.with_reference("compose_min_rows")


def _compile(schema, compose: bool, **kw):
    """Compiled with every object and array composed (``compose``) or determinised as one NFA."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile_tuned(schema, COMPOSE_ALL if compose else NO_COMPOSE, **kw)


def _same(schema, **kw):
    new = _compile(schema, True, **kw).dfa
    old = _compile(schema, False, **kw).dfa
    # canonical minimal tables: equal fields exactly when the languages are equal
    assert new._minimal and not isinstance(new, LazyDFA)
    assert (new.classes, new.delta, new.accepting, new.start) == \
        (old.classes, old.delta, old.accepting, old.start)
    assert all(t == 0 for t in new.delta[0]) and 0 not in new.accepting
    return new


ADDRESS = {"type": "object", "properties": {
    "street": {"type": "string", "maxLength": 12}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
    "tags": {"type": "array", "items": {"enum": ["a", "ab", "b"]}, "maxItems": 3}},
    "required": ["street"]}

NESTED = [
    ADDRESS,
    {"type": "object", "properties": {"home": ADDRESS, "work": ADDRESS, "n": {"type": "integer"}},
     "required": ["home"]},
    {"type": "array", "items": ADDRESS, "minItems": 1},
    {"type": "object", "properties": {"a": {"type": "object", "properties": {
        "b": {"type": "object", "properties": {"c": {"type": "array", "items": {
            "type": "object", "properties": {"d": {"type": "number"}, "da": {"type": "boolean"}}}}}}}}}},
    # keys that share prefixes, undeclared keys, pattern properties
    {"type": "object", "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
                                      "n": {"type": "null"}},
     "additionalProperties": {"type": "integer"}},
    {"type": "object", "patternProperties": {"^x-": ADDRESS}, "additionalProperties": False,
     "properties": {"x": {"type": "integer"}}},
    {"type": "object", "properties": {"a": ADDRESS}, "minProperties": 1, "maxProperties": 2,
     "additionalProperties": {"type": "boolean"}},
    # arrays: prefixItems, contains, bounds
    {"type": "array", "prefixItems": [{"type": "integer"}, ADDRESS], "items": {"type": "string"},
     "maxItems": 4},
    {"type": "array", "items": {"type": ["integer", "string"]}, "contains": {"type": "integer"},
     "minContains": 2, "maxContains": 3},
    # recursion (cut at the depth limit) and unions of objects
    {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                          "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                        "required": ["v"]}}, "$ref": "#/$defs/node"},
    {"anyOf": [ADDRESS, {"type": "object", "properties": {"street": {"type": "integer"}}}, {"type": "null"}]},
    {"type": "object", "properties": {"v": {}, "w": {"type": ["object", "array"]}}},
]


@pytest.mark.parametrize("i", range(len(NESTED)))
@pytest.mark.parametrize("ws", [0, 1, 2])
def test_composed_equals_determinised(i, ws):
    _same(NESTED[i], whitespace=ws)


def test_composed_equals_determinised_any_order():
    _same(NESTED[1], whitespace=1, property_order="any")
    _same(NESTED[4], whitespace=0, property_order="any")


def test_composed_equals_determinised_extra_keys():
    _same(NESTED[1], whitespace=1, allow_extra_keys=True)


def test_a_part_that_runs_on_into_what_follows_is_explored():
    # [0-9]+ then "1": the accepting state of the first part moves on the follower's character,
    # so it cannot be copied as a block
    c = Composer()
    end = c.node()
    start = c.chain([DFA.from_regex("[0-9]+"), DFA.literal("1"), DFA.from_regex("a*")], end)
    d = c.build(start, end)
    assert d == DFA.from_regex("[0-9]+1a*")
    c = Composer()
    end = c.node()
    loop = c.chain([DFA.from_regex("ab|a"), DFA.from_regex("b?c")], end)
    c.link(end, loop)
    start = c.node()
    c.link(start, loop)
    assert c.build(start, end) == DFA.from_regex("((ab|a)b?c)+")


def test_large_composition_is_lazy_and_minimises_to_the_same():
    schema = {"type": "object", "properties": {f"k{i}": ADDRESS for i in range(12)}}
    inner = jsontext.object_dfa(
        [jsontext.Member(jsontext.key_text(f"k{i}"), _compile(ADDRESS, True, whitespace=1).dfa, False)
         for i in range(12)], None, jsontext.whitespace_dfa(1), compose_min_rows=0)
    assert isinstance(inner, LazyDFA) and not inner.is_empty()
    m = inner.minimize()
    assert inner.minimize() is m
    assert m == _same(schema, whitespace=1)
    assert inner.accepts('{"k3": {"street": "x"}}') and not inner.accepts('{"k3": {}}')


def test_a_lazy_table_met_again_finds_its_minimal_automaton():
    # kept across compilations by the table: the same composition made again (another schema
    # holding the same object) is not minimised again; another table is
    from tokenfsm.schema.compose import MINIMAL

    def composed(n, required=False):
        return jsontext.object_dfa(
            [jsontext.Member(jsontext.key_text(f"k{i}"), _compile(ADDRESS, True, whitespace=1).dfa,
                             required) for i in range(n)], None, jsontext.whitespace_dfa(1),
            compose_min_rows=0)

    MINIMAL.clear()
    first = composed(12).minimize()
    kept = len(MINIMAL)
    again = composed(12)
    assert isinstance(again, LazyDFA) and again.minimize() is first and len(MINIMAL) == kept
    other = composed(12, required=True)
    assert other.minimize() is not first and len(MINIMAL) == kept + 1
    assert other.minimize() == LazyDFA(other.classes, other._array, other.accepting,
                                       other.start).minimize()
    assert not other.minimize().accepts('{"k1": {"street": "x"}}')


def test_union_of_lazy_automata():
    from tokenfsm.schema.compose import union_composed
    big = jsontext.object_dfa(
        [jsontext.Member(jsontext.key_text(f"k{i}"), _compile(ADDRESS, True, whitespace=1).dfa, False)
         for i in range(12)], None, jsontext.whitespace_dfa(1), compose_min_rows=0)
    assert isinstance(big, LazyDFA)
    other = _compile({"type": "object", "properties": {"k1": {"type": "integer"}}}, True,
                     whitespace=1).dfa
    for ds in ([big, DFA.literal("null")], [big, other], [other, big, DFA.from_regex("[0-9]+")]):
        want = DFA.union_all([d.minimize() for d in ds])
        got = union_composed(ds)
        assert got.minimize() == want
        assert jsontext.TypedLanguage.of({"object": ds[0]}).to_dfa() is ds[0]
    assert jsontext.union_of([big, DFA.literal("null")]).minimize() == \
        DFA.union_all([big.minimize(), DFA.literal("null")])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([
    r'"[a-c]*"', r'-?[0-9]+(\.[0-9]+)?', r'\[(1(,1)*)?\]', r'null', r'true|false', r'\{\}',
    r'"x(y|z)"', r'[0-9]', r'(ab)*', r'b+c', r'', r'n(ul)*l']), min_size=2, max_size=5))
def test_side_by_side_union_when_the_first_characters_differ(patterns):
    """The union of automata whose first characters are disjoint is their tables side by side
    (a lazy automaton); it is refused (None) when two of them share a first character. Against
    the product union."""
    from tokenfsm.schema.compose import _union_disjoint
    ds = [DFA.from_regex(p) for p in patterns]
    firsts = [{c for c in range(len(d.classes)) if d.delta[d.start][c]} for d in ds]
    chars = [set().union(*(set(range(lo, hi + 1)) for c in f for lo, hi in d.classes[c].ranges
                           if hi - lo < 1000)) for d, f in zip(ds, firsts)]
    disjoint = all(not (chars[i] & chars[j]) for i in range(len(ds)) for j in range(i))
    got = _union_disjoint(ds)
    live = [d for d in ds if not d.is_empty()]
    if len(live) < 2 or not disjoint:
        assert got is None
        return
    assert isinstance(got, LazyDFA)
    assert got.minimize() == DFA.union_all(ds)
    for t in DFA.union_all(ds).examples(20):
        assert got.accepts(t)


def test_budget_counts_copied_states():
    schema = {"type": "object", "properties": {f"k{i}": ADDRESS for i in range(12)}}
    with pytest.raises(Exception, match="budget"):
        _compile(schema, True, whitespace=1, budget=Budget(max_states=500))


# ------------------------------------------------------------------ generated schemas

LEAVES = st.sampled_from([
    {"type": "integer"}, {"type": "string"}, {"type": "boolean"}, {"type": "null"},
    {"enum": ["x", "xy", 1]}, {"type": "string", "maxLength": 2}, {"type": "number"},
    {"const": None}, {},
])
NAMES = st.sampled_from(["a", "ab", "b", "name", "namespace", "k"])


def _schemas():
    return st.recursive(LEAVES, lambda inner: st.one_of(
        st.builds(lambda props, req, extra: {
            "type": "object", "properties": props,
            "required": sorted(set(req) & set(props)),
            **({} if extra is None else {"additionalProperties": extra})},
            st.dictionaries(NAMES, inner, max_size=3), st.lists(NAMES, max_size=2),
            st.one_of(st.none(), st.just(False), LEAVES)),
        st.builds(lambda items, lo, hi: {"type": "array", "items": items, "minItems": lo,
                                         **({} if hi is None else {"maxItems": hi})},
                  inner, st.integers(0, 1), st.one_of(st.none(), st.integers(1, 3))),
        st.builds(lambda a, b: {"anyOf": [a, b]}, inner, inner),
    ), max_leaves=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas(), st.integers(0, 1), st.integers(0, 10**6))
def test_generated_nested_schemas(schema, ws, seed):
    try:
        d = _same(schema, whitespace=ws, max_depth=2)
    except Exception as e:  # noqa: BLE001 - the same outcome on both routes
        with pytest.raises(type(e)):
            _compile(schema, False, whitespace=ws, max_depth=2)
        return
    rng = random.Random(seed)
    for _ in range(10):
        text = d.sample(rng, max_length=80)
        jsonschema.validate(json.loads(text), schema)


# ------------------------------------------------------------------ maskbench rows

CORPUS = Path(os.environ.get("TOKENFSM_CORPORA", "/work/shared/corpora")) / "maskbench" / \
    "Kubernetes.jsonl.gz"


@pytest.mark.skipif(not CORPUS.exists(), reason="maskbench corpus not available")
def test_kubernetes_rows_compose_to_the_same_automaton():
    with gzip.open(CORPUS, "rt") as fh:
        rows = [json.loads(line) for _, line in zip(range(40), fh)]
    rows = sorted(rows, key=lambda r: len(json.dumps(r["schema"])))[:6]
    for r in rows:
        try:
            _same(r["schema"], whitespace=1, budget=Budget(max_states=50_000, max_seconds=20))
        except Exception as e:  # noqa: BLE001 - unsupported rows: same on both routes
            with pytest.raises(type(e)):
                _compile(r["schema"], False, whitespace=1,
                         budget=Budget(max_states=50_000, max_seconds=20))


def test_a_language_of_several_types_is_unioned_once():
    # a definition of several types that many properties name: one union, the same each time
    lang = jsontext.TypedLanguage.of({"null": DFA.literal("null"),
                                      "number": DFA.from_regex("-?[0-9]+"),
                                      "string": DFA.from_regex('"[a-z]*"')})
    d = lang.to_dfa()
    assert d is lang.to_dfa()
    assert d == DFA.union_all(list(lang.parts.values()))
    assert lang == jsontext.TypedLanguage.of(dict(lang.parts))   # (the memo is not a field)
    # a smaller budget than the kept union's is not passed by handing the kept one out
    with pytest.raises(BudgetExceeded):
        lang.to_dfa(Budget(max_states=d.num_states - 1))


def _equivalent_bytes(a, b) -> bool:
    """Whether two byte automata accept the same language (their reachable state pairs agree
    on acceptance and on the dead state)."""
    seen = {(a.start, b.start)}
    todo = list(seen)
    while todo:
        x, y = todo.pop()
        if bool(a.accepting[x]) != bool(b.accepting[y]) or (x == 0) != (y == 0):
            return False
        for pair in set(zip(a.table[x][a.byte_classes].tolist(),
                            b.table[y][b.byte_classes].tolist())):
            if pair not in seen:
                seen.add(pair)
                todo.append(pair)
    return True


@pytest.mark.parametrize("i", range(len(NESTED)))
def test_an_index_lowers_the_composition_as_it_is(i):
    # (compiled.to_bytes(), what an index reads, skips the minimisation the dfa has)
    compiled = _compile(NESTED[i], True, whitespace=1)
    got = compiled.to_bytes()
    if isinstance(compiled._dfa, LazyDFA):      # (not minimised on the way)
        assert compiled._dfa._min is None
    assert _equivalent_bytes(got, compiled.dfa.to_bytes())
    assert not _equivalent_bytes(got, _compile({"type": "object"}, True, whitespace=1).to_bytes())


_RANGES = st.lists(st.tuples(st.sampled_from([0x30, 0x61, 0x7F, 0x80, 0x7FF, 0xD7FF, 0xE000,
                                               0xFFFF, 0x10000, 0x10FFFF]),
                              st.integers(0, 40)), min_size=1, max_size=3)


@given(st.lists(_RANGES, min_size=1, max_size=4))
def test_the_joint_classes_are_canonical_and_refine_every_automaton(sets):
    # each automaton: one move on a few ranges (around the surrogates and the UTF-8 lengths),
    # another on the rest
    from tokenfsm.schema.compose import _joint
    dfas = []
    for ranges in sets:
        chars = CharSet([(lo, min(lo + n, 0x10FFFF)) for lo, n in ranges])
        dfas.append(DFA([chars, ~chars], [[0, 0], [2, 3], [0, 0], [0, 0]], {2}, 1).minimize())
    classes, colmaps = _joint(dfas)
    assert all(c.ranges == CharSet(c.ranges).ranges and c.ranges for c in classes)
    assert CharSet.union_of_disjoint(classes) == CharSet.any()
    for d, cols in zip(dfas, colmaps):
        for c, k in zip(classes, cols.tolist()):
            assert c <= d.classes[k]


def _reached_by_search(lz: LazyDFA) -> set:
    seen, todo = {lz.start}, [lz.start]
    while todo:
        for t in lz._array[todo.pop()].tolist():
            if t and t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def test_a_composition_keeps_the_states_its_start_reaches():
    large = {"type": "object", "properties": {f"k{i}": ADDRESS for i in range(12)},
             "required": ["k3"]}
    lazy = [d for d in (_compile(x, True, whitespace=1)._dfa for x in [*NESTED, large])
            if isinstance(d, LazyDFA)]     # (small compositions are minimised at once)
    assert len(lazy) >= 2
    for lz in lazy:
        reached = _reached_by_search(lz)
        assert len(reached) < lz._array.shape[0] - 1      # (a key's first state is not)
        table, accepting = lz.reachable()
        assert table.shape[0] == len(reached) + 1       # (and the dead state)
        kept = DFA(lz.classes, table.tolist(), accepting, 1)
        assert kept.minimize() == lz.minimize()


def test_states_only_dropped_states_move_into_are_dropped():
    # 1 -a-> 2 (accepting); 3 -a-> 4 -a-> 2 and 5 -a-> 5, 5 -b-> 2 are reached from nowhere: the
    # chain is dropped, the cycle stays (compositions make none)
    classes = [CharSet.of("a"), CharSet.of("b")]
    a = np.array([[0, 0], [2, 0], [0, 0], [4, 0], [2, 0], [5, 2]], dtype=np.int64)
    lz = LazyDFA(classes, a, {2}, 1)
    table, accepting = lz.reachable()
    assert table.tolist() == [[0, 0], [2, 0], [0, 0], [3, 2]] and accepting == [2]


def test_an_index_of_a_large_composition_has_its_masks():
    from tokenfsm.masks import TokenIndex, Vocabulary
    schema = {"type": "object", "properties": {f"k{i}": ADDRESS for i in range(12)},
              "required": ["k3"]}
    compiled = _compile(schema, True, whitespace=0)
    assert isinstance(compiled._dfa, LazyDFA)
    vocab = Vocabulary([b"{", b'"k3":', b'{"street":"', b"x", b'"}', b"}", b'"k1', b'"k', b"3",
                        b'":{', b"street", b'"', b",", None], eos_token_ids=[13])
    ours, minimal = TokenIndex.build(compiled, vocab), TokenIndex.build(compiled.dfa, vocab)
    text = [0, 1, 2, 3, 4, 5]
    s, t = ours.start, minimal.start
    for tok in text:
        assert np.array_equal(ours.mask_rows[ours.state_row[s]],
                              minimal.mask_rows[minimal.state_row[t]])
        s, t = ours.next_state(s, tok), minimal.next_state(t, tok)
    assert ours.accepting[s] and minimal.accepting[t]
