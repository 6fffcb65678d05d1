"""The stand-in model: bytes still needed to accept, and documents sampled under the masks.

Oracles: a forward breadth-first search from every state of the byte table (flat indexes); for a
stack automaton, the Bellman-Ford relaxation over calls, and the flat index of the same schema
unrolled, which must agree on every prefix of a document; ``re.fullmatch`` and ``jsonschema`` for
what is sampled, and Python's own ``json.dumps`` for the plain spelling.
"""

import json
import re
import warnings
from collections import deque

import jsonschema
import numpy as np
import pytest
from mask_helpers import qwen_vocab

from tokenfsm.automata import DFA
from tokenfsm.masks import Matcher, TokenIndex, Vocabulary, VocabularyError
from tokenfsm.masks.examples import get_weather
from tokenfsm.masks.pushdown import PushdownIndex
from tokenfsm.masks.sampling import FAR, bytes_to_accept, distance_to_accept, sample_documents
from tokenfsm.schema import compile_json_schema

BYTES = Vocabulary([bytes([b]) for b in range(256)] + [b'{"', b'":', b'",', b"ab", b"abc", None],
                   eos_token_ids=[261])
PATTERNS = [r"(ab)+", r"a{2,5}|b{7}", r"[0-9]{3}-[0-9]{4}", r"x(yz)*w?", r"(é|e)+\.com", r"[a-c]*"]


def forward_bfs(table, accepting) -> list:
    out = []
    for s in range(table.shape[0]):
        seen, queue, found = {s}, deque([(s, 0)]), FAR
        while queue and s:
            q, d = queue.popleft()
            if accepting[q]:
                found = d
                break
            for t in set(table[q].tolist()) - seen - {0}:
                seen.add(t)
                queue.append((t, d + 1))
        out.append(found)
    return out


@pytest.mark.parametrize("pattern", PATTERNS)
def test_flat_distances_equal_a_forward_search(pattern):
    index = TokenIndex.build(DFA.from_regex(pattern), BYTES)
    dist = distance_to_accept(index)
    assert dist.tolist() == forward_bfs(np.asarray(index.table), np.asarray(index.accepting))
    shortest = DFA.from_regex(pattern).shortest()
    if shortest.isascii():
        assert bytes_to_accept(dist, index.start) == len(shortest)


def relaxation(pd) -> np.ndarray:
    """Bellman-Ford over moves and calls, to the fixpoint: the reference for stack automata."""
    table = np.asarray(pd.table)
    n = table.shape[0]
    dist = np.full(n, FAR, dtype=np.int64)
    dist[np.asarray(pd.accepting, dtype=bool)] = 0
    dist[0] = FAR
    ptr = np.asarray(pd.call_ptr, dtype=np.int64)
    caller = np.repeat(np.arange(n), np.diff(ptr))
    entry, ret = np.asarray(pd.call_entry, dtype=np.int64), np.asarray(pd.call_return, dtype=np.int64)
    while True:
        nxt = np.minimum(dist, 1 + dist[table].min(axis=1))
        if caller.size:
            np.minimum.at(nxt, caller, dist[entry] + dist[ret])
        nxt = np.minimum(nxt, FAR)
        nxt[0] = FAR
        if np.array_equal(nxt, dist):
            return dist
        dist = nxt


TREE = {"$defs": {"node": {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 3},
    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
    "required": ["name"], "additionalProperties": False}}, "$ref": "#/$defs/node"}


def both_routes(schema, vocab):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stack = compile_json_schema(schema, whitespace=0, recursion="stack", max_depth=3)
        flat = compile_json_schema(schema, whitespace=0, recursion="unroll", max_depth=3)
    return PushdownIndex(stack.recursive.to_bytes(), vocab), TokenIndex.build(flat.dfa, vocab)


def test_stack_distances_equal_the_relaxation_and_the_unrolled_index():
    pd, flat = both_routes(TREE, BYTES)
    d_pd, d_flat = distance_to_accept(pd), distance_to_accept(flat)
    assert d_pd.tolist() == relaxation(pd).tolist()
    for run in sample_documents(pd, 6, seed=4, max_tokens=300, plain_json=True):
        assert run.finished
        doc = run.text.encode()
        a, b = Matcher(pd), Matcher(flat)
        for i in range(len(doc) + 1):
            assert bytes_to_accept(d_pd, a.state) == bytes_to_accept(d_flat, b.state), doc[:i]
            if i < len(doc):
                assert a.accept_string(doc[i:i + 1]) and b.accept_string(doc[i:i + 1])


@pytest.mark.parametrize("pattern", PATTERNS)
def test_samples_are_matches_and_the_seed_fixes_them(pattern):
    index = TokenIndex.build(DFA.from_regex(pattern), BYTES)
    runs = sample_documents(index, 8, seed=2, max_tokens=200)
    assert all(r.finished for r in runs)
    for r in runs:
        assert re.fullmatch(pattern, r.text)
        assert BYTES.decode(r.token_ids).decode() == r.text
    assert [r.text for r in sample_documents(index, 8, seed=2, max_tokens=200)] == [r.text for r in runs]


def test_plain_spelling_of_the_demo_schema_on_a_real_vocabulary():
    example = get_weather()
    vocab = qwen_vocab()
    compiled = compile_json_schema(example.schema, excludes=example.excludes)  # whitespace allowed
    index = TokenIndex.build(compiled.dfa, vocab)
    runs = sample_documents(index, 12, seed=0, plain_json=True)
    for r in runs:
        assert r.finished
        doc = json.loads(r.text)
        jsonschema.validate(doc, example.schema)
        # written as Python writes it: no escapes, no whitespace, an int for an integer
        assert r.text == json.dumps(doc, ensure_ascii=False, separators=(",", ":")), r.text
        assert type(doc["arguments"]["days"]) is int
    # the language itself still holds the long spellings: the preference is the sampler's only
    assert compiled.accepts(r'{"name":"get\u005fweather", "arguments":{"location":"x","unit":'
                            r'"celsius","days":7}}')
    # and without the preference the noise finds them (the reason for it)
    loose = [r.text for r in sample_documents(index, 12, seed=0)]
    assert any("\\" in t or t != json.dumps(json.loads(t), ensure_ascii=False, separators=(",", ":"))
               for t in loose)


def test_no_end_of_sequence_is_a_typed_error():
    vocab = Vocabulary([b"a"])
    with pytest.raises(VocabularyError, match="end-of-sequence"):
        sample_documents(TokenIndex.build(DFA.from_regex("a+"), vocab), 1)


def test_numbers_come_without_fraction_or_exponent_where_the_schema_allows_both():
    schema = {"type": "object", "properties": {"x": {"type": "number"}, "ok": {"type": "boolean"}},
              "required": ["x", "ok"], "additionalProperties": False}
    compiled = compile_json_schema(schema)
    assert compiled.accepts('{"x":1.5e3,"ok":true}') and compiled.accepts('{"x": -0.25, "ok":false}')
    index = TokenIndex.build(compiled.dfa, qwen_vocab())
    for r in sample_documents(index, 10, seed=1, plain_json=True):
        doc = json.loads(r.text)
        jsonschema.validate(doc, schema)
        assert type(doc["x"]) is int and r.text == json.dumps(doc, separators=(",", ":")), r.text


# -- key sets: keys in any order, required keys missing -------------------------------------------
SHAPES = {"type": "object", "required": ["s", "z"], "properties": {
    "s": {"enum": [1, 2]}, "l": {"type": "string", "maxLength": 4},
    "z": {"type": "object", "required": ["w", "h"], "additionalProperties": {"type": "integer"},
          "properties": {k: {"type": "integer"} for k in "whdra"}},
    "n": {"type": "boolean"}, "c": {"enum": [1, 2]}},
    "additionalProperties": {"type": "integer"}}


def shortest_completion(index, config, limit: int = 60) -> int:
    """Bytes of the shortest text that ends from ``config``: breadth first over configurations,
    one byte of each kind a move reads (its table class and the calls it starts)."""
    lb = index._frames.lb
    kinds = {}
    for b in range(256):
        kinds.setdefault((int(lb.byte_classes[b]), lb.call_first[:, b].tobytes()), bytes([b]))
    seen, level = {config}, [config]
    for d in range(limit + 1):
        if any(index.config_can_end(c) for c in level):
            return d
        nxt = []
        for c in level:
            for b in kinds.values():
                n = index.config_after_bytes(c, b)
                if n is not None and n not in seen:
                    seen.add(n)
                    nxt.append(n)
        level = nxt
    return FAR


def test_key_set_distances_are_lower_bounds_that_count_the_missing_keys():
    # the plain distance lets an object with required keys missing close at once; the guide's
    # counts the members still to write, never past the shortest completion
    from tokenfsm.masks.sampling import _LazyGuide

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = compile_json_schema(SHAPES, whitespace=0, property_order="any")
    index = PushdownIndex(compiled.lazy, BYTES)
    dist = distance_to_accept(index)
    guide = _LazyGuide(index, dist)
    doc = b'{"x":1,"z":{"a":2,"h":30,"q":1,"w":4},"l":"ab","s":2}'
    informative = 0
    m = Matcher(index)
    for i in range(len(doc)):
        c = m.state
        true = shortest_completion(index, c)
        got = guide.distance(c)
        assert bytes_to_accept(dist, c) <= got <= true, (doc[:i], got, true)
        informative += got > bytes_to_accept(dist, c)
        assert m.accept_string(doc[i:i + 1])
    assert informative > len(doc) // 2


def test_samples_with_keys_in_any_order_and_undeclared_keys_end():
    # an object whose required keys may come last, between undeclared ones: the pull leads to
    # the missing keys' names (a ',' leads away from a '}' that is not allowed yet)
    vocab = qwen_vocab()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = compile_json_schema(SHAPES, whitespace=0, property_order="any",
                                       allow_extra_keys=True)
    index = PushdownIndex(compiled.lazy, vocab)
    runs = sample_documents(index, 6, seed=5, max_tokens=300, plain_json=True)
    assert all(r.finished for r in runs), [r.text[:200] for r in runs if not r.finished]
    for r in runs:
        jsonschema.validate(json.loads(r.text), SHAPES)
