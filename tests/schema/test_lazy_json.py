"""JSON pieces of lazy networks (schema.lazy_json) against the flat constructions they replace
(``strings.json_string``, ``jsontext.array_dfa``, ``jsontext.object_dfa(any_order=True)``), against
``jsonschema`` on documents sampled through the masks, and against the flat index on Qwen's
vocabulary at every step of random walks."""

from __future__ import annotations

import itertools
import json
import random

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenfsm.automata import DFA
from tokenfsm.automata.errors import AutomatonError
from tokenfsm.automata.network import Network
from tokenfsm.masks import Matcher, TokenIndex, allocate_token_bitmask, unpack_bitmask
from tokenfsm.masks.pushdown import PushdownIndex
from tokenfsm.schema.jsontext import Member, array_dfa, key_text, object_dfa, whitespace_dfa
from tokenfsm.schema.lazy_json import LazyMember, array_piece, object_piece, string_piece, value_piece
from tokenfsm.schema.strings import json_string, string_value

EXCLUDES = ["ab", "<|im_end|>", "\\u", "é", "```"]


@settings(max_examples=30)
@given(lo=st.integers(0, 3), span=st.one_of(st.none(), st.integers(0, 3)),
       excludes=st.lists(st.sampled_from(EXCLUDES), max_size=3, unique=True),
       escapes=st.sampled_from(["all", "minimal"]))
def test_string_piece_is_the_flat_string(lo, span, excludes, escapes):
    hi = None if span is None else lo + span
    net = Network()
    p = string_piece(net, lo, hi, excludes, escapes)
    want = json_string(string_value(lo, hi), excludes=excludes, escapes=escapes)
    assert net.to_dfa(p) == want


@settings(max_examples=30)
@given(lo=st.integers(0, 3), span=st.one_of(st.none(), st.integers(0, 3)),
       pattern=st.sampled_from(["^[ab]*b", "é|\\\\|\"|\\n", "a.c", "^\\d+$"]),
       escapes=st.sampled_from(["all", "minimal"]))
def test_patterned_string_piece_is_the_flat_string(lo, span, pattern, escapes):
    hi = None if span is None else lo + span
    net = Network()
    value = string_value(pattern=pattern)       # the body: the pattern at any length
    p = string_piece(net, lo, hi, escapes=escapes, value=value)
    want = json_string(string_value(lo, hi, pattern=pattern), escapes=escapes)
    assert net.to_dfa(p) == want


INTEGER, BOOL, NULL = "-?(?:0|[1-9][0-9]*)", "true|false", "null"


@settings(max_examples=30)
@given(lo=st.integers(0, 3), span=st.one_of(st.none(), st.integers(0, 3)),
       n_prefix=st.integers(0, 2), rest=st.booleans(), ws_n=st.integers(0, 1))
def test_array_piece_is_the_flat_array(lo, span, n_prefix, rest, ws_n):
    hi = None if span is None else lo + span
    ws = whitespace_dfa(ws_n)
    langs = [DFA.from_regex(INTEGER), DFA.from_regex(BOOL), DFA.literal("null")]
    net = Network()
    pieces = [value_piece(net, d) for d in langs]
    p = array_piece(net, pieces[:n_prefix], pieces[2] if rest else None, ws, lo, hi)

    def item_at(i):
        if i < n_prefix:
            return langs[i]
        return langs[2] if rest else None

    assert net.to_dfa(p) == array_dfa(item_at, n_prefix, ws, min_items=lo, max_items=hi)


NAMES = ["id", "name", "tags", "a"]


def object_case(n, required, lo, hi, extras, ws_n=0):
    ws = whitespace_dfa(ws_n)
    vals = [DFA.from_regex(INTEGER), json_string(string_value(0, 3)), DFA.from_regex(BOOL),
            DFA.literal("null")]
    net = Network()
    pieces = [value_piece(net, d) for d in vals]
    members = [LazyMember(NAMES[i], pieces[i], i in required) for i in range(n)]
    xkey = DFA.from_regex(r'"x[0-9]"')
    ex = [(xkey, pieces[0])] if extras else None
    p = object_piece(net, members, ex, ws, lo, hi)
    colon = DFA.concat_all([ws, DFA.literal(":"), ws])
    flat = object_dfa([Member(key_text(NAMES[i]), vals[i], i in required) for i in range(n)],
                      DFA.concat_all([xkey, colon, vals[0]]) if extras else None, ws,
                      min_properties=lo, max_properties=hi, any_order=True)
    schema = {"type": "object",
              "properties": {NAMES[i]: s for i, s in enumerate(
                  [{"type": "integer"}, {"type": "string", "maxLength": 3}, {"type": "boolean"},
                   {"type": "null"}][:n])},
              "required": [NAMES[i] for i in sorted(required)],
              "patternProperties": {"^x[0-9]$": {"type": "integer"}} if extras else {},
              "additionalProperties": False, "minProperties": lo}
    if hi is not None:
        schema["maxProperties"] = hi
    return net, p, flat, schema


@settings(max_examples=30)
@given(n=st.integers(0, 4), data=st.data(), extras=st.booleans())
def test_object_piece_is_the_any_order_object(n, data, extras):
    required = data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n)) if n else set()
    lo = data.draw(st.integers(0, 3))
    hi = data.draw(st.one_of(st.none(), st.integers(lo, 5)))
    net, p, flat, schema = object_case(n, required, lo, hi, extras)
    got = net.to_dfa(p)
    assert got == flat
    for text in got.examples(15, max_length=80):
        pairs = json.loads(text, object_pairs_hook=lambda kv: kv)
        if len({k for k, _ in pairs}) < len(pairs):
            # an undeclared key written twice: the grammar, like the flat one, does not track
            # undeclared keys (json.loads would keep one of them)
            assert all(k.startswith("x") for k, _ in pairs if [q for q, _ in pairs].count(k) > 1)
            continue
        jsonschema.validate(dict(pairs), schema)


@pytest.mark.parametrize("ws_n", [0, 1])
def test_members_sharing_a_name_are_the_union_of_objects(ws_n):
    # "t" is a member per class of values (two string enums written in place, the key written
    # by a call reading the closing quote), "u" a member per first byte (calls); each term picks
    # one member of a name at most: the union of one flat object per term
    ws = whitespace_dfa(ws_n)
    one, two = DFA.from_regex('"(a|b)"'), DFA.literal('"cd"')
    obj, num = DFA.literal("{}"), DFA.from_regex(INTEGER)
    net = Network()
    members = [LazyMember("t", one), LazyMember("t", two), LazyMember("n", value_piece(net, num)),
               LazyMember("u", value_piece(net, obj)), LazyMember("u", value_piece(net, num))]
    terms = [((0,), (1, 4)), ((1,), (0, 3)), ((), (0, 1, 3))]
    p = object_piece(net, members, None, ws, terms=terms)
    values = [one, two, num, obj, num]
    flat = DFA.union_all([object_dfa(
        [Member(key_text(m.key), values[i], i in req) for i, m in enumerate(members)
         if i not in forb], None, ws, any_order=True) for req, forb in terms])
    assert net.to_dfa(p) == flat
    lb = net.build(p)
    assert lb.accepts(b'{"u":{},"t":"a","n":2}') and lb.accepts(b'{"t":"cd","u":7}')
    assert not lb.accepts(b'{"u":{},"t":"cd"}') and not lb.accepts(b'{"t":"a","t":"cd"}')
    n = len(net)
    with pytest.raises(AutomatonError, match="prefix-free"):
        object_piece(net, [LazyMember("t", one), LazyMember("u", num)], None, ws)
    with pytest.raises(AutomatonError, match="two members of one name free"):
        object_piece(net, members, None, ws, terms=[((), (0,))])
    assert len(net) == n                 # (refused before a piece is added)


def test_objects_accept_valid_documents_with_their_keys_as_written():
    # every order of the keys of a valid document, undeclared keys among the declared ones
    net, p, _, schema = object_case(4, {0, 1}, 0, None, True)
    lb = net.build(p)
    doc = {"id": 3, "x1": 5, "name": "ab", "tags": True, "x7": 0, "a": None}
    jsonschema.validate(doc, schema)
    for order in itertools.permutations(doc):
        text = json.dumps({k: doc[k] for k in order}, separators=(",", ":"))
        assert lb.accepts(text.encode()), text
    assert not lb.accepts(b'{"id":1,"name":"a","id":2}')     # a key twice
    assert not lb.accepts(b'{"name":"a"}')                   # a required key missing


def test_overlapping_keys_are_refused():
    net = Network()
    v = value_piece(net, DFA.literal("1"))
    with pytest.raises(AutomatonError, match="key texts 0 and 1 overlap"):
        object_piece(net, [LazyMember("a", v)], [(DFA.from_regex(r'"[a-z]"'), v)],
                     whitespace_dfa(0))
    with pytest.raises(AutomatonError, match="key texts 1 and 3 overlap"):
        object_piece(net, [LazyMember("a", v), LazyMember("é", v)],
                     [(DFA.from_regex(r'"[b-z]"'), v), (DFA.from_regex(r'"[^a-z]"'), v)],
                     whitespace_dfa(0))
    object_piece(net, [LazyMember("a", v), LazyMember("é", v)],
                 [(DFA.from_regex(r'"[b-z]"'), v), (DFA.from_regex(r'"[0-9]"'), v)],
                 whitespace_dfa(0))


# -- on a real vocabulary ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def qwen():
    from tokenfsm.masks.builtin_vocab import load_vocabulary

    return load_vocabulary("qwen")


def walk_against_flat(index, flat, vocab, rng, steps, prefer=None):
    m, f = Matcher(index), Matcher(flat)
    bm = allocate_token_bitmask(2, vocab.size)
    for _ in range(steps):
        m.fill_next_token_bitmask(bm, 0)
        f.fill_next_token_bitmask(bm, 1)
        assert bm[0].tolist() == bm[1].tolist(), (m.state, f.state)
        assert m.is_accepting() == f.is_accepting()
        allowed = np.flatnonzero(unpack_bitmask(bm[1], vocab.size)).tolist()
        if not allowed:
            break
        text = [t for t in allowed if t not in vocab.eos_token_ids]
        t = rng.choice(text if text and rng.random() < 0.95 else allowed)
        m.advance(t)
        f.advance(t)
        if m.is_finished():
            break
    return m


@pytest.mark.parametrize("lo,hi,excludes", [(0, 12, ["<|im_end|>", "```"]), (3, 8, []),
                                            (2, None, ["ab", "\\u"])])
def test_string_masks_on_qwen_equal_the_flat_index(qwen, lo, hi, excludes):
    net = Network()
    p = string_piece(net, lo, hi, excludes)
    index = PushdownIndex(net.build(p), qwen)
    flat = TokenIndex.build(json_string(string_value(lo, hi), excludes=excludes), qwen)
    for seed in range(4):
        walk_against_flat(index, flat, qwen, random.Random(seed), steps=20)


def test_object_masks_on_qwen_equal_the_flat_index(qwen):
    net, p, flat_dfa, _ = object_case(4, {0}, 1, 4, True, ws_n=1)
    index = PushdownIndex(net.build(p), qwen)
    flat = TokenIndex.build(flat_dfa, qwen)
    for seed in range(4):
        walk_against_flat(index, flat, qwen, random.Random(seed), steps=25)


def test_long_string_near_its_bound_matches_a_short_one(qwen):
    # with minLength 0, a string of maxLength 5000 holding 4990 characters has the future of a
    # string of maxLength 20 holding 10: the same masks, step by step, under three exclusions
    excludes = ["<|im_end|>", "</s>", "```"]
    net = Network()
    index = PushdownIndex(net.build(string_piece(net, 0, 5000, excludes)), qwen)
    flat = TokenIndex.build(json_string(string_value(0, 20), excludes=excludes), qwen)
    m, f = Matcher(index), Matcher(flat)
    assert m.accept_string('"' + "é" * 4990) and f.accept_string('"' + "é" * 10)
    bm = allocate_token_bitmask(2, qwen.size)
    rng = random.Random(5)
    for _ in range(15):
        m.fill_next_token_bitmask(bm, 0)
        f.fill_next_token_bitmask(bm, 1)
        assert bm[0].tolist() == bm[1].tolist()
        allowed = np.flatnonzero(unpack_bitmask(bm[1], qwen.size)).tolist()
        t = rng.choice(allowed)
        m.advance(t)
        f.advance(t)
        if m.is_finished():
            break


def sample(index, vocab, rng, max_tokens, close_after):
    """A document drawn through the masks: random allowed tokens, then EOS as soon as allowed
    once ``close_after`` tokens are out (and the shortest way out before that: a quote)."""
    m = Matcher(index)
    bm = allocate_token_bitmask(1, vocab.size)
    quote = vocab.tokens.index(b'"')
    out = []
    while not m.is_finished() and len(out) < max_tokens:
        m.fill_next_token_bitmask(bm, 0)
        bits = unpack_bitmask(bm[0], vocab.size)
        eos = [t for t in vocab.eos_token_ids if bits[t]]
        if eos and len(out) >= close_after:
            t = eos[0]
        elif len(out) >= close_after and bits[quote]:
            t = quote
        else:
            bits[list(vocab.eos_token_ids)] = False
            allowed = np.flatnonzero(bits)
            t = int(allowed[rng.randrange(len(allowed))]) if len(allowed) else eos[0]
        m.advance(t)
        out.append(t)
    return vocab.decode(out).decode()


@pytest.mark.parametrize("schema,excludes", [
    ({"type": "string", "maxLength": 7}, []),
    ({"type": "string", "minLength": 3, "maxLength": 40}, ["<|im_end|>", "</s>", "```"]),
    ({"type": "string", "maxLength": 10**9}, ["<|im_end|>"]),
])
def test_sampled_strings_validate(qwen, schema, excludes):
    net = Network()
    p = string_piece(net, schema.get("minLength", 0), schema.get("maxLength"), excludes)
    index = PushdownIndex(net.build(p), qwen)
    rng = random.Random(0)
    for i in range(6):
        text = sample(index, qwen, rng, max_tokens=200, close_after=8 + 10 * i)
        value = json.loads(text)
        jsonschema.validate(value, schema)
        assert not any(e in text[1:-1] for e in excludes), text


def test_shared_region_walks_give_the_same_rows(qwen):
    # a counted string's body, far from its bounds, reuses the region walk kept per vocabulary
    # (the flat string body's); rows must equal those walked in full, near the bounds too
    excludes = ["<|im_end|>"]
    net = Network()
    obj = object_piece(net, [LazyMember("s", string_piece(net, 2, 300, excludes), True),
                             LazyMember("t", string_piece(net, 0, None, []))], None,
                       whitespace_dfa(0))
    lb = net.build(obj)
    shared, plain = PushdownIndex(lb, qwen), PushdownIndex(lb, qwen, share_walks=False)
    bm = allocate_token_bitmask(2, qwen.size)
    for seed in range(4):
        rng = random.Random(seed)
        a, b = Matcher(shared), Matcher(plain)
        for _ in range(40):
            a.fill_next_token_bitmask(bm, 0)
            b.fill_next_token_bitmask(bm, 1)
            assert bm[0].tolist() == bm[1].tolist(), a.state
            allowed = np.flatnonzero(unpack_bitmask(bm[0], qwen.size)).tolist()
            text = [t for t in allowed if t not in qwen.eos_token_ids]
            if not text:
                break
            t = rng.choice(text)
            a.advance(t)
            b.advance(t)
    assert shared.stats["shared_walks"] > 0
