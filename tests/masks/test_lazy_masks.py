"""Token masks of lazy networks (counts and key sets in the configuration) against two oracles: the
flat TokenIndex of the network's expansion (masks, acceptance and forced text at every step of
random walks) and a naive token-by-token walk of the byte form (``LazyBytes.walk``)."""

from __future__ import annotations

import random
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenfsm.automata import DFA
from tokenfsm.automata.network import Call, Network, Text, Tick, choice, concat, optional, star
from tokenfsm.masks import (
    Matcher,
    RollbackError,
    TokenIndex,
    TokenRejected,
    Vocabulary,
    allocate_token_bitmask,
    fill_next_token_bitmasks,
    unpack_bitmask,
)
from tokenfsm.masks.frames import pack, unpack
from tokenfsm.masks.pushdown import PushdownIndex
from tokenfsm.masks.row_ways import KEY_NAMES_MAX_STATES
from tokenfsm.schema.jsontext import key_text, separators, whitespace_dfa

from mask_helpers import check_row_ways

TOKENS = [b"a", b"b", b"ab", b"abc", b"\xc3", b"\xa9", b"\xc3\xa9", b'"', b'"a', b'a"', b"\\",
          b"\\u", b"0041", b"n", b"{", b"}", b",", b":", b'{"', b'":', b" ", b"1", b"12", b'"b":',
          b'","', b"x", b'"x1"', b'{"a":1}', b"[", b"]", b"[1", b"1,", b",1]", b"aaaa", b"aaaaaaaa",
          b'"ab"', b'"ab":']
VOCAB = Vocabulary(TOKENS + [None], eos_token_ids=[len(TOKENS)], size=len(TOKENS) + 2)
EOS = len(TOKENS)


def counted_chars(lo, hi, cls=r"[\s\S]"):
    net = Network()
    return net, net.counted(star(concat(Text(DFA.from_regex(cls)), Tick())), lo=lo, hi=hi)


def key_set(n=3, required=(0,), lo=0, hi=None, extras=True, ws_n=1, extra_name=r'"x[0-9]"',
            terms=None):
    ws = whitespace_dfa(ws_n)
    colon, comma = separators(ws)
    net = Network()
    names = ["a", "ab", "b"][:n]
    vals = [net.piece(Text(DFA.from_regex(v))) for v in ["[0-9]+", "1|12", '"[ab]*"'][:n]]
    members = [concat(Text(key_text(nm)), Text(colon), Call(vals[i], key=i), Text(ws))
               for i, nm in enumerate(names)]
    if extras:
        x = net.piece(Text(DFA.from_regex("[0-9]")))
        members.append(concat(Text(DFA.from_regex(extra_name)), Text(colon), Call(x), Text(ws)))
    m = choice(*members)
    body = concat(Text(DFA.literal("{")), Text(ws),
                  optional(concat(m, star(concat(Text(comma), m)))), Text(DFA.literal("}")))
    if terms is not None:
        return net, net.key_set(body, n, terms=terms, lo=lo, hi=hi)
    return net, net.key_set(body, n, required=required, lo=lo, hi=hi)


def array(lo, hi, item="[0-9]+"):
    net = Network()
    it = net.piece(Text(DFA.from_regex(item)))
    lit = lambda s: Text(DFA.literal(s))  # noqa: E731
    items = concat(Call(it, tick=True), star(concat(lit(","), Call(it, tick=True))))
    body = concat(lit("["), optional(items), lit("]"))
    return net, net.counted(body, lo=lo, hi=hi)


def arrays_of_counted_words(hi):
    """Arrays nested by recursion whose items are numbers, arrays and strings of 1 to ``hi``
    letters (a counted piece): recursion and counts together."""
    net = Network()
    arr = net.declare()
    quote = Text(DFA.literal('"'))
    word = net.counted(concat(quote, star(concat(Text(DFA.from_regex("[ab]")), Tick())), quote),
                       lo=1, hi=hi)
    item = choice(Text(DFA.from_regex("1|12")), Call(word), Call(arr))
    items = concat(item, star(concat(Text(DFA.literal(",")), item)))
    net.piece(concat(Text(DFA.literal("[")), optional(items), Text(DFA.literal("]"))), into=arr)
    return net, arr


def walk_against_flat(index, flat, vocab, rng, steps=30):
    """Drive a lazy and a flat matcher with the same random tokens: masks, acceptance and forced
    text agree at every step."""
    m, f = Matcher(index), Matcher(flat)
    bm = allocate_token_bitmask(2, vocab.size)
    for _ in range(steps):
        m.fill_next_token_bitmask(bm, 0)
        f.fill_next_token_bitmask(bm, 1)
        assert bm[0].tolist() == bm[1].tolist(), (m.state, f.state)
        assert m.is_accepting() == f.is_accepting()
        assert m.find_jump_forward_string() == f.find_jump_forward_string()
        allowed = np.flatnonzero(unpack_bitmask(bm[1], vocab.size)).tolist()
        if not allowed:
            break
        text = [t for t in allowed if t not in vocab.eos_token_ids]
        t = rng.choice(text if text and rng.random() < 0.9 else allowed)
        m.advance(t)
        f.advance(t)
        if m.is_finished():
            break
    return m


def ref_mask(lb, vocab, top: int, stack) -> list[bool]:
    """The naive mask: every token's bytes walked by the byte form's reference step."""
    frame = unpack(top)
    frames = [unpack(s) for s in stack]
    out = []
    for t in range(vocab.size):
        tok = vocab[t]
        if t in vocab.eos_token_ids:
            out.append(frame[0] != 0 and lb.can_end(frame, frames))
        elif tok is None or frame[0] == 0:
            out.append(False)
        else:
            out.append(lb.walk(tok, frame, frames)[0] is not None)
    return out


@settings(max_examples=25)
@given(lo=st.integers(0, 4), span=st.one_of(st.none(), st.integers(0, 6)), seed=st.integers(0, 99))
def test_counted_masks_equal_the_flat_index(lo, span, seed):
    hi = None if span is None else lo + span
    net, p = counted_chars(lo, hi)
    index = PushdownIndex(net.build(p), VOCAB)
    flat = TokenIndex.build(net.to_dfa(p), VOCAB)
    for s in range(4):
        walk_against_flat(index, flat, VOCAB, random.Random(seed * 10 + s), steps=25)


@settings(max_examples=25)
@given(data=st.data(), extras=st.booleans(), seed=st.integers(0, 99))
def test_key_set_masks_equal_the_flat_index(data, extras, seed):
    required = tuple(sorted(data.draw(st.sets(st.integers(0, 2), max_size=3))))
    lo = data.draw(st.integers(0, 3))
    hi = data.draw(st.one_of(st.none(), st.integers(max(lo, len(required)), 4)))
    net, obj = key_set(3, required, lo, hi, extras)
    index = PushdownIndex(net.build(obj), VOCAB)
    flat = TokenIndex.build(net.to_dfa(obj), VOCAB)
    for s in range(6):
        walk_against_flat(index, flat, VOCAB, random.Random(seed * 10 + s), steps=30)


@settings(max_examples=20)
@given(data=st.data(), extras=st.booleans(), seed=st.integers(0, 99))
def test_key_set_terms_masks_equal_the_flat_index(data, extras, seed):
    # alternatives that differ in the keys they require and forbid, as terms of one key set
    keys = st.sets(st.integers(0, 2), max_size=2)
    terms = data.draw(st.lists(st.tuples(keys, keys).filter(lambda t: not t[0] & t[1]),
                               min_size=2, max_size=3))
    lo = data.draw(st.integers(0, 2))
    hi = data.draw(st.one_of(st.none(), st.integers(max(lo, 2), 4)))
    net, obj = key_set(3, (), lo, hi, extras, terms=terms)
    index = PushdownIndex(net.build(obj), VOCAB)
    flat = TokenIndex.build(net.to_dfa(obj), VOCAB)
    for s in range(6):
        walk_against_flat(index, flat, VOCAB, random.Random(seed * 10 + s), steps=30)


@settings(max_examples=15)
@given(lo=st.integers(0, 3), span=st.one_of(st.none(), st.integers(0, 3)), seed=st.integers(0, 99))
def test_array_masks_equal_the_flat_index(lo, span, seed):
    hi = None if span is None else lo + span
    net, arr = array(lo, hi)
    index = PushdownIndex(net.build(arr), VOCAB)
    flat = TokenIndex.build(net.to_dfa(arr), VOCAB)
    for s in range(4):
        walk_against_flat(index, flat, VOCAB, random.Random(seed * 10 + s), steps=30)


def configurations_met(index, vocab, seeds, steps):
    """The configurations random token walks of ``index`` meet."""
    seen = []
    for seed in seeds:
        rng = random.Random(seed)
        m = Matcher(index)
        for _ in range(steps):
            seen.append(m.state)
            allowed = [t for t in m.allowed_token_ids().tolist() if t not in vocab.eos_token_ids]
            if not allowed:
                break
            m.advance(rng.choice(allowed))
    return list(dict.fromkeys(seen))


def test_every_row_way_gives_the_reference_row_with_counts_and_keys():
    # row_ways.ROW_WAYS walked on the configurations of counted pieces (near and far from their
    # bounds), key sets, arrays of counted items and recursion, against the naive walk
    nets = [counted_chars(0, 10**6), counted_chars(3, 40), counted_chars(2, None, r"[a\\]"),
            key_set(3, (0, 2), 1, 3), key_set(3, (), 0, 3, terms=[((0,), (1,)), ((1, 2), ())]),
            array(2, 50)]
    rec, arr = arrays_of_counted_words(30)
    applied = {}
    for (net, p), depth in [(n, None) for n in nets] + [((rec, arr), 2)]:
        lb = net.build(p) if depth is None else net.build(p, max_depth=depth)
        index = PushdownIndex(lb, VOCAB)
        ref = lambda c, lb=lb: ref_mask(lb, VOCAB, *c)  # noqa: E731
        for cfg in configurations_met(index, VOCAB, range(6), 40):
            for name in check_row_ways(index, cfg, ref(cfg), ref):
                applied[name] = applied.get(name, 0) + 1
    assert applied["shared-region"] > 20 and applied["walk"] > 5 * applied["shared-region"] / 4
    assert applied["count-band"] > 5 and applied["region-band"] > 5, applied


def test_the_kernels_read_every_field_of_the_packed_automaton_as_it_is():
    # frame_kernels.FIELD_TYPES walked: each field the kernels take out of the packing is the
    # network's array, with the declared type (counted pieces, key sets over two words of keys)
    from tokenfsm.masks.frame_kernels import AUTOMATON_FIELDS, FIELD_TYPES, _fields, automaton_tuple

    wide = Network()
    value = wide.piece(Text(DFA.from_regex("[0-9]")))
    members = choice(*(concat(Text(DFA.literal(f"k{i:02d}")), Call(value, key=i))
                       for i in range(70)))
    wide_p = wide.key_set(concat(Text(DFA.literal("{")), optional(
        concat(members, star(concat(Text(DFA.literal(",")), members)))), Text(DFA.literal("}"))),
        70, terms=[((3, 69), (5,))])
    for net, p in [counted_chars(3, 40), key_set(3, (0, 2), 1, 3), (wide, wide_p)]:
        lb = net.build(p)
        got = _fields(automaton_tuple(lb))
        assert len(got) == len(AUTOMATON_FIELDS) == len(FIELD_TYPES)
        for name, arr in zip(AUTOMATON_FIELDS, got):
            dtype, dims = FIELD_TYPES[name]
            want = getattr(lb, name)
            assert arr.dtype == dtype and arr.ndim == dims, name
            assert arr.shape == want.shape and np.array_equal(arr, want), name
    assert got[AUTOMATON_FIELDS.index("key_mask")].shape[1] == 2


#: Counted bodies whose ticks come in steps: every character, every second one (a lasso of
#: period 2), or only in the first of two characters.
TICKED_BODIES = {
    "each": lambda: star(concat(Text(DFA.from_regex(r"[ab\\]")), Tick())),
    "pairs": lambda: star(concat(Text(DFA.literal("a")), Tick(), Text(DFA.literal("b")), Tick())),
    "half": lambda: star(concat(Text(DFA.from_regex("a|b")), Tick(), Text(DFA.literal("a")))),
}


@settings(max_examples=40)
@given(body=st.sampled_from(sorted(TICKED_BODIES)), lo=st.integers(1, 24),
       span=st.one_of(st.none(), st.integers(0, 30)), seed=st.integers(0, 99))
def test_counts_below_the_lower_bound_take_the_shared_walk_only_where_exact(body, lo, span, seed):
    # below the lower bound a region's shared walk serves a count only where every move in it
    # stays live (FrameAutomaton.below_lo_free); there, as everywhere, each way that applies
    # gives the naive walk's row, at every count from 0 to the bound
    hi = None if span is None else lo + span
    net = Network()
    lb = net.build(net.counted(TICKED_BODIES[body](), lo=lo, hi=hi))
    index = PushdownIndex(lb, VOCAB, eager_states=0)
    fa = index._frames
    rng = random.Random(seed)
    applied = 0
    for q in range(1, lb.num_states):
        for c in sorted({0, lo - 1, rng.randrange(lo)}):
            if not fa.live(q, c, 0):
                continue
            cfg = (pack(q, c, 0), ())
            ways = check_row_ways(index, cfg, ref_mask(lb, VOCAB, *cfg))
            applied += "shared-region" in ways
            if fa.below_lo_free(cfg[0]):
                assert hi is None or hi - c > fa._margin[fa._piece[q]]
    if hi is None or span >= 12:
        assert applied          # (a period of at most 2, and the margin left below the bound)


def test_a_long_minimum_is_written_from_the_shared_walk():
    # a string of at least 1,000 characters on Qwen's vocabulary: the counts before the bound
    # take the body's shared walk with its exits replayed, the first way the index tries
    # (before, each count near the bound, and each residue below it, walked the vocabulary)
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    from tokenfsm.schema.lazy_json import string_piece

    vocab = load_vocabulary("qwen")
    net = Network()
    lb = net.build(string_piece(net, 1000, None))
    index = PushdownIndex(lb, vocab, eager_states=0)
    m = Matcher(index)
    m.accept_string('"')
    text = "lorem ipsum dolor sit amet, " * 40
    for i in range(0, len(text), 97):
        assert not m.is_accepting()
        cfg = m.state
        assert "shared-region" in check_row_ways(index, cfg, ref_mask(lb, vocab, *cfg))
        m.accept_string(text[i:i + 97])
    m.accept_string('"')
    assert m.is_accepting()


def test_a_band_gives_the_row_of_every_count_near_the_bound():
    # a counted word called from recursive arrays (a stack below it, text after its close): one
    # band walk per state and stack gives the row of every count from the lower bound up,
    # equal to the naive walk's; below the lower bound the walk makes it
    net, arr = arrays_of_counted_words(6)
    lb = net.build(arr, max_depth=3)
    index = PushdownIndex(lb, VOCAB, eager_states=0)
    fa = index._frames
    applied = {}
    for text in [b'["', b'["a', b'[1,[["ab', b'[[12,"b']:
        x, stack = index.walk_bytes(index.start, text)
        q = unpack(x)[0]
        for c in range(8):
            if not fa.live(q, c, 0):
                continue
            cfg = (pack(q, c, 0), stack)
            ways = check_row_ways(index, cfg, ref_mask(lb, VOCAB, *cfg))
            assert ("count-band" in ways) == (c >= 1), (text, c)
            applied[(q, stack)] = applied.get((q, stack), 0) + 1
    assert index.stats["band_walks"] == len(applied) and max(applied.values()) >= 5


def counted_arrays(lo, hi):
    """Arrays of ``lo`` to ``hi`` items, each a number or such an array: a counted piece that
    calls its items (ticks on its calls), arrays among them."""
    net = Network()
    arr = net.declare()
    num = net.piece(Text(DFA.from_regex("1|12")))
    lit = lambda s: Text(DFA.literal(s))  # noqa: E731
    item = choice(Call(num, tick=True), Call(arr, tick=True))
    items = concat(item, star(concat(lit(","), item)))
    net.counted(concat(lit("["), optional(items), lit("]")), lo=lo, hi=hi, into=arr)
    return net, arr


def nested_words(lo, hi):
    """``(`` letters and such groups ``)``, ``lo`` to ``hi`` letters in each group: a counted
    piece (ticks on its moves) that calls groups."""
    net = Network()
    grp = net.declare()
    lit = lambda s: Text(DFA.literal(s))  # noqa: E731
    body = star(choice(concat(Text(DFA.from_regex("[ab]")), Tick()), Call(grp)))
    net.counted(concat(lit("("), body, lit(")")), lo=lo, hi=hi, into=grp)
    return net, grp


def words_in_parens(lo, hi):
    """``(`` a word of ``lo`` to ``hi`` letters (one at least) ``)``: a counted piece that may
    end wherever it has letters enough, ended by what its caller reads next."""
    net = Network()
    letter = concat(Text(DFA.from_regex("[ab]")), Tick())
    word = net.counted(concat(letter, star(letter)), lo=lo, hi=hi)
    lit = lambda s: Text(DFA.literal(s))  # noqa: E731
    return net, net.piece(concat(lit("("), Call(word), lit(")")))


#: Tokens that open, fill and close groups or arrays, several items or letters at once.
NESTING = Vocabulary([b"(", b")", b"a", b"ab", b"(a", b"(ab", b"(aab", b"ab)", b"b))", b")a",
                      b"((", b"(aaaaa", b"aaaa", b"[", b"]", b"1", b"12", b",", b"[]", b"[[",
                      b"[1,1]", b"],[", b"]]", b",[]", b"1,", b",1]", b"[1", b"1,1,1,1", None],
                     eos_token_ids=[28])


@pytest.mark.parametrize("grammar", [counted_arrays, nested_words, words_in_parens])
@pytest.mark.parametrize("lo, hi", [(0, 12), (2, 12), (8, None)])
def test_a_row_near_the_bound_serves_the_counts_its_walk_spans(grammar, lo, hi):
    # near a counted piece's upper bound, or below its lower one where it has no upper one,
    # every count is a key of its own, but a token ticks a few times at most: the walk says
    # over which counts of the top frame, and of the stack's top (an array below the item being
    # written), its row holds (each pair checked against the naive walk), and the index serves
    # those counts from it, whichever count came first (counts met upwards, then downwards over
    # a fresh index); the rows are the naive walk's
    net, top = grammar(lo, hi)
    lb = net.build(top, max_depth=3)
    ref = lambda cfg: ref_mask(lb, NESTING, *cfg)  # noqa: E731
    texts = ([b"[", b"[1,", b"[12,1,", b"[[1,", b"[1,[", b"[[1,1,1,1,1,1,1,1],", b"[1", b"[12,1",
              b"[[1,12"]
             if grammar is counted_arrays
             else [b"(", b"(a", b"(ab(", b"((ab", b"(ab(babababa)", b"((", b"(a(b("]
             if grammar is nested_words else [b"(a", b"(b", b"(ab", b"(aab"])
    spanned = 0
    for counts in (range(14), range(13, -1, -1)):
        index = PushdownIndex(lb, NESTING, eager_states=0)
        fa = index._frames
        met = 0
        for text in texts:
            x, stack = index.walk_bytes(index.start, text)
            q, c0, k = unpack(x)
            assert q != 0, text
            for c in counts:
                if fa.piece_kind(q) == 1:            # the count of the top frame
                    if not fa.live(q, c, k):
                        continue
                    cfg = (pack(q, c, k), stack)
                else:                                # the count of the array below the item
                    q1, _, k1 = unpack(stack[-1])
                    if not fa.live(q1, c, k1):
                        continue
                    cfg = (x, stack[:-1] + (pack(q1, c, k1),))
                want = ref(cfg)
                check_row_ways(index, cfg, want, ref)
                assert unpack_bitmask(index.mask_row(cfg), NESTING.size).tolist() == want, (
                    text, c)
                met += 1
        spanned += met - index.stats["misses"]
        assert index.stats["misses"] < met
    assert spanned > 20


def test_a_row_spanned_over_the_stack_top_keeps_the_top_frames_class():
    # an inner array far from its bound (its counts share one class) over an outer one near
    # its bound: a row that holds over a run of the outer counts serves those counts for the
    # far inner counts only, not for inner counts near the bound, whose rows differ
    net, top = counted_arrays(0, 30)
    lb = net.build(top, max_depth=3)
    index = PushdownIndex(lb, NESTING, eager_states=0)
    fa = index._frames
    x, stack = index.walk_bytes(index.start, b"[1,[")
    q, _, k = unpack(x)
    q1, _, k1 = unpack(stack[-1])
    rows = set()
    for c_top in (0, 1, 29, 28, 30):
        for c_below in range(18, 31):
            cfg = (pack(q, c_top, k), (pack(q1, c_below, k1),))
            if not (fa.live(q, c_top, k) and fa.live(q1, c_below, k1)):
                continue
            want = ref_mask(lb, NESTING, *cfg)
            assert unpack_bitmask(index.mask_row(cfg), NESTING.size).tolist() == want, (
                c_top, c_below)
            rows.add(tuple(want))
    assert len(rows) > 2 and index._spans


def test_key_names_are_walked_once_for_every_key_set():
    # while a key's name may still be an undeclared one, no move inside it reads the keys: the
    # key names' shared walk gives the row whatever keys were written (checked against the
    # naive walk), the moves out of it (a declared name closed, a value called) replayed with
    # the keys; where no undeclared key fits (the name "a" is written out) it is walked
    net, p = key_set(3, (0, 2), 0, None, extra_name=r'"(x[a-z]*|a[c-z][a-z]*)"')
    lb = net.build(p)
    index = PushdownIndex(lb, VOCAB, eager_states=0)
    applied = {}
    for prefix in [b'{', b'{"a":1,', b'{"b":"a","ab":1,', b'{"xq":2,"a":0,', b'{"acb":2,']:
        for name in [b'"', b'"x', b'"xab', b'"a', b'"ac', b'"a"']:
            cfg = index.walk_bytes(index.start, prefix + name)
            if cfg[0] == 0:
                assert name == b'"a"' and b'"a":' in prefix
                continue
            for way in check_row_ways(index, cfg, ref_mask(lb, VOCAB, *cfg)):
                applied.setdefault(way, set()).add(name)
    assert applied["shared-region"] == {b'"', b'"x', b'"xab', b'"a', b'"ac'}


def test_a_large_objects_key_names_are_walked_once():
    # the names of 150 declared keys, each also the prefix of undeclared ones: one region of
    # some 1,000 states (past the 512 a key set's names were once kept to), whose shared walk
    # gives the rows after several key sets (checked against the naive walk)
    words = ["".join("abc"[(i // 3 ** j) % 3] for j in range(5)) + "x" for i in range(150)]
    names = [w[: 3 + i % 4] + w for i, w in enumerate(words)]
    net = Network()
    val = net.piece(Text(DFA.from_regex("[0-9]")))
    declared = DFA.empty()
    members = []
    for i, nm in enumerate(names):
        members.append(concat(Text(DFA.literal(f'"{nm}":')), Call(val, key=i)))
        declared = declared.union(DFA.literal(f'"{nm}"'))
    extra = DFA.from_regex('"[a-z]*"').difference(declared)
    members.append(concat(Text(extra), Text(DFA.literal(":")), Call(val)))
    m = choice(*members)
    body = concat(Text(DFA.literal("{")), optional(concat(m, star(concat(Text(DFA.literal(",")),
                                                                        m)))),
                  Text(DFA.literal("}")))
    lb = net.build(net.key_set(body, len(names), required=(0,)))
    index = PushdownIndex(lb, VOCAB, eager_states=0)
    applied = set()
    for prefix in [b"{", f'{{"{names[0]}":1,'.encode(), f'{{"{names[7]}":2,"ab":1,'.encode()]:
        for name in [b'"', b'"a', b'"ab', b'"' + names[5][:4].encode()]:
            cfg = index.walk_bytes(index.start, prefix + name)
            if cfg[0] == 0:
                continue
            applied |= check_row_ways(index, cfg, ref_mask(lb, VOCAB, *cfg))
    size = int(index._comp_size[index._comp[index.walk_bytes(index.start, b'{"')[0] & 0xFFFFFFFF]])
    assert 512 < size <= KEY_NAMES_MAX_STATES
    assert "shared-region" in applied
    # states partway through declared names took the walk of an undeclared name's body
    twins = {q: g for q, g in index._twins.items() if g is not None and g != q}
    assert len(twins) >= 3 and len(set(twins.values())) == 1


@pytest.mark.parametrize("plain", [False, True])
def test_a_flat_objects_names_take_a_string_bodys_walk(plain):
    # a small object kept flat: the states of its declared names lie on no cycle (no shared
    # region), yet an undeclared name's body simulates them; their rows (the body's walk, the
    # exits replayed from them) against the naive walk, over frames and over a plain stack
    # automaton of the same bytes
    from tokenfsm.automata.recursive import PushdownBytes
    from tokenfsm.masks.index import as_byte_dfa

    string = DFA.from_regex(r'"([^"\\\x00-\x1f]|\\["\\/bfnrtu])*"')
    # ("b" declared, "ab" a name no member may have: a move out the body takes is dead there)
    names = DFA.literal('"ab"').union(DFA.literal('"b"'))
    members = DFA.union_all([DFA.literal('"b":2'),
                             string.difference(names).concat(DFA.from_regex(":[0-9]"))])
    text = DFA.concat_all([DFA.literal("{"), members, DFA.literal("}")])
    net = Network()
    lb = net.build(net.piece(Text(text)))
    index = PushdownIndex(PushdownBytes.without_calls(as_byte_dfa(text)) if plain else lb,
                          VOCAB, eager_states=0)
    applied = set()
    for name in [b'{"', b'{"a', b'{"ab', b'{"b', b'{"abc', b'{"\\']:
        cfg = index.walk_bytes(index.start, name)
        ref = ref_mask(lb, VOCAB, *lb_config(lb, name))
        applied |= check_row_ways(index, cfg, ref)
    assert "shared-region" in applied
    twins = {q: g for q, g in index._twins.items() if g is not None and g != q}
    assert len(twins) >= 3


def lb_config(lb, text: bytes):
    """The configuration of ``lb`` after ``text`` (for :func:`ref_mask`)."""
    index = PushdownIndex(lb, VOCAB, eager_states=0)
    return index.walk_bytes(index.start, text)


def test_key_names_take_the_keys_walk_without_undeclared_keys():
    # no undeclared key: every move inside a name reads the keys (a name written is dead), so
    # the names are walked with the keys; near the most members allowed too
    for extras, hi in ((False, None), (True, 2)):
        net, p = key_set(3, (0,), 0, hi, extras=extras, extra_name=r'"(x[a-z]*|a[c-z][a-z]*)"')
        lb = net.build(p)
        index = PushdownIndex(lb, VOCAB, eager_states=0)
        for text in [b'{"b":"a","', b'{"', b'{"a":2,"', b'{"a":2,"b":"","']:
            cfg = index.walk_bytes(index.start, text)
            if cfg[0] == 0:
                assert hi == 2 and text.count(b":") == 2, text
                continue
            assert "shared-region" not in check_row_ways(index, cfg, ref_mask(lb, VOCAB, *cfg))


def test_every_row_way_on_a_real_vocabulary():
    # a counted string body with an exclusion on Qwen's vocabulary: the region replay over the
    # vocabulary-wide shared walk where the count is far from the bounds, the walk and the
    # band (one walk for every count near the upper bound) near them
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    from tokenfsm.schema.lazy_json import string_piece

    vocab = load_vocabulary("qwen")
    net = Network()
    lb = net.build(string_piece(net, 0, 10**6, ["</s>"]))
    index = PushdownIndex(lb, vocab)
    applied = set()
    for text in [b'"ab', b'"</s']:
        cfg = index.walk_bytes(index.start, text)
        assert cfg[0] != 0, text
        q, c, k = unpack(cfg[0])
        for count in (c, 10**6 - 200, 10**6 - 40, 10**6 - 3, 10**6 - 1, 10**6):
            top = (pack(q, count, k), ())
            applied |= check_row_ways(index, top, ref_mask(lb, vocab, *top))
    assert applied == {"walk", "shared-region", "region-band", "count-band"}
    assert index.stats["band_walks"] in (1, 2)        # a state's band serves all its counts


def test_rows_near_the_bound_take_the_bodys_needs_once_per_vocabulary():
    # two strings of at most 300 characters in two indexes on Qwen's vocabulary, written up to
    # their bound: every row near it is the body's tokens by need (walked once, for both
    # indexes) with the exits replayed, equal to the naive walk's; no band is walked
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    from tokenfsm.masks.row_ways import REGION_NEEDS
    from tokenfsm.schema.lazy_json import string_piece

    vocab = load_vocabulary("qwen")
    REGION_NEEDS.clear()
    for lo in (0, 5):
        net = Network()
        lb = net.build(string_piece(net, lo, 300))
        index = PushdownIndex(lb, vocab, eager_states=0)
        m = Matcher(index)
        m.accept_string('"')
        text = "lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 6
        for i in range(0, 300, 7):
            cfg = m.state
            if index._frames.band_piece(cfg[0]) >= 0:
                want = ref_mask(lb, vocab, *cfg)
                assert unpack_bitmask(index.mask_row(cfg), vocab.size).tolist() == want, i
            m.accept_string(text[i:i + 7][:300 - i])
        assert index.stats["band_walks"] == 0
        allowed = m.allowed_token_ids().tolist()        # at the bound: only a closing quote
        assert allowed and all(vocab[t].startswith(b'"') for t in allowed)
        visited = index.stats["visited"]
        if lo:
            assert visited < 20_000       # the body's needs were walked for the first index
    assert len(REGION_NEEDS) == 1


def test_rows_keyed_by_count_class_equal_the_naive_mask_at_every_count():
    # rows are shared across counts far from the bounds; each one must still be the exact mask
    net, p = counted_chars(5, 60)
    lb = net.build(p)
    shared = PushdownIndex(lb, VOCAB)
    for c in list(range(0, 61)) + list(range(60, -1, -1)):
        for data in (b"a" * c, b"\xc3\xa9" * c):
            cfg = shared.walk_bytes(shared.start, data)
            if cfg[0] == 0:
                continue
            fresh = PushdownIndex(lb, VOCAB)
            want = ref_mask(lb, VOCAB, *cfg)
            assert unpack_bitmask(shared.mask_row(cfg), VOCAB.size).tolist() == want, c
            assert unpack_bitmask(fresh.mask_row(cfg), VOCAB.size).tolist() == want, c
            mid = shared.walk_bytes(cfg, b"\xc3")           # inside a character
            if mid[0]:
                assert unpack_bitmask(shared.mask_row(mid), VOCAB.size).tolist() == \
                    ref_mask(lb, VOCAB, *mid), c
    # 61 counts, but only those near a bound have rows of their own
    assert shared.num_cached_rows < 2 * 61


def test_a_count_of_a_billion_costs_no_more_rows():
    net, p = counted_chars(0, 10**9)
    lb = net.build(p)
    index = PushdownIndex(lb, VOCAB, eager_states=0)     # every row made when asked
    for c in (0, 1, 17, 10**6, 10**9 - 100, 10**9 - 3, 10**9):
        cfg = (pack(lb.start, c, 0), ())
        assert unpack_bitmask(index.mask_row(cfg), VOCAB.size).tolist() == ref_mask(lb, VOCAB, *cfg)
    last = (pack(lb.start, 10**9, 0), ())
    assert index.allowed_token_ids(last).tolist() == [EOS]     # no character may even begin
    assert index.num_cached_rows <= 5


def test_rows_made_at_construction_are_the_rows_made_when_asked():
    # a small automaton gets its top-level rows (counts far from the bounds) at construction:
    # the same rows as an index that makes each when asked, and none left to make at the top
    for net, p in [counted_chars(0, 10**6), counted_chars(3, 40), key_set(3, (0, 2), 1, 3),
                   array(2, 50)]:
        lb = net.build(p)
        eager, lazy = PushdownIndex(lb, VOCAB), PushdownIndex(lb, VOCAB, eager_states=0)
        assert eager.stats["eager"] > 0 and eager.stats["misses"] == 0
        assert lazy.stats["eager"] == 0
        for cfg in configurations_met(lazy, VOCAB, range(6), 40):
            want = ref_mask(lb, VOCAB, *cfg)
            assert unpack_bitmask(eager.mask_row(cfg), VOCAB.size).tolist() == want, cfg
            assert unpack_bitmask(lazy.mask_row(cfg), VOCAB.size).tolist() == want, cfg
    net, p = counted_chars(0, 10**6)
    index = PushdownIndex(net.build(p), VOCAB)
    for cfg in configurations_met(index, VOCAB, range(6), 40):
        index.mask_row(cfg)
    assert index.stats["misses"] == 0


def test_key_rows_per_key_set_match_the_naive_mask():
    net, obj = key_set(3, (0, 2), 1, 3)
    lb = net.build(obj)
    index = PushdownIndex(lb, VOCAB)
    for text in [b"{", b'{"a":1', b'{"a":1,', b'{"a":12,"b":"ab"', b'{"x1":1,"b":"a",', b'{"ab":1,',
                 b'{"a":1,"ab":12,"b":"b"', b'{"a', b'{"a":1,"a']:
        cfg = index.walk_bytes(index.start, text)
        assert cfg[0] != 0, text
        want = ref_mask(lb, VOCAB, *cfg)
        assert unpack_bitmask(index.mask_row(cfg), VOCAB.size).tolist() == want, text


def test_matcher_api_on_a_lazy_index():
    net, obj = key_set(3, (0,), 0, None)
    index = PushdownIndex(net.build(obj), VOCAB)
    tid = {t: i for i, t in enumerate(TOKENS)}
    m = Matcher(index)
    assert m.state == index.start and not m.is_accepting()
    m.advance(tid[b'{"'])
    m.advance(tid[b"a"])
    m.advance(tid[b'":'])
    m.advance(tid[b"1"])
    before = m.state
    c = m.copy()
    with pytest.raises(TokenRejected):
        m.advance(tid[b"x"])
    assert m.state == before
    with pytest.raises(TokenRejected, match="EOS"):
        m.advance(EOS)
    assert m.accept_string("}") and m.is_accepting()
    assert not m.accept_string(",")
    m.advance(EOS)
    assert m.is_finished() and m.allowed_token_ids().tolist() == [EOS]
    m.rollback(2)
    assert m.state == before and c.state == before
    with pytest.raises(RollbackError):
        m.rollback(99)
    assert m.find_jump_forward_string() == ""
    m.reset()
    assert m.find_jump_forward_string() == '{'
    # a batch mixing flat and lazy matchers
    flat = TokenIndex.build(net.to_dfa(obj), VOCAB)
    ms = [Matcher(index), None, Matcher(flat), c]
    bm = allocate_token_bitmask(4, VOCAB.size)
    fill_next_token_bitmasks(ms, bm)
    assert bm[0].tolist() == bm[2].tolist()
    assert (bm[1] == -1).all()
    assert bm[3].tolist() == index.mask_row(before).tolist()


def test_pushdown_matcher_is_a_deprecated_name_of_matcher():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        from tokenfsm.masks import pushdown
        alias = pushdown.PushdownMatcher
    assert alias is Matcher
    assert any(issubclass(x.category, DeprecationWarning) for x in w)


def test_configurations_are_checked():
    net, p = counted_chars(0, 5)
    lb = net.build(p)
    index = PushdownIndex(lb, VOCAB)
    with pytest.raises(ValueError, match="count"):
        index.mask_row((pack(lb.start, 6, 0), ()))
    with pytest.raises(ValueError, match="outside"):
        index.mask_row((pack(999, 0, 0), ()))
    with pytest.raises(ValueError, match="keys"):
        index.mask_row((pack(lb.start, 0, 1), ()))


def test_threads_share_the_rows():
    net, obj = key_set(3, (0,), 0, None)
    lb = net.build(obj)
    index = PushdownIndex(lb, VOCAB)
    flat = TokenIndex.build(net.to_dfa(obj), VOCAB)
    errors = []

    def run(seed):
        try:
            for s in range(5):
                walk_against_flat(index, flat, VOCAB, random.Random(seed * 100 + s), steps=25)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_compiler_indexes_a_huge_count_lazily():
    from tokenfsm.masks import IndexCompiler

    comp = IndexCompiler(VOCAB)
    index = comp.regex(r"[\s\S]{0,100000000}")
    assert isinstance(index, PushdownIndex) and comp.regex(r"[\s\S]{0,100000000}") is index
    # far from the bound the masks are those of [\s\S]* at every step
    flat = comp.regex(r"[\s\S]*")
    assert isinstance(flat, TokenIndex)
    for seed in range(5):
        walk_against_flat(index, flat, VOCAB, random.Random(seed), steps=40)
    small = comp.regex(r"(?:ab|c){2,5}")
    assert isinstance(small, TokenIndex)


@pytest.mark.parametrize("pattern,flat_pattern", [
    (r"[\s\S]{0,100000000}", r"[\s\S]*"),
    (r"(?:[a-z]{2}|\d){0,10000000}", r"(?:[a-z]{2}|\d)*"),
])
def test_huge_counts_on_a_real_vocabulary(pattern, flat_pattern):
    from tokenfsm.masks.builtin_vocab import load_vocabulary

    vocab = load_vocabulary("qwen")
    from tokenfsm.automata.lazy_regex import regex_automaton

    lb = regex_automaton(pattern)
    flat = TokenIndex.build(DFA.from_regex(flat_pattern), vocab)
    for share in (True, False):       # region walks kept per vocabulary, or walked in full
        index = PushdownIndex(lb, vocab, share_walks=share)
        for seed in range(3):
            walk_against_flat(index, flat, vocab, random.Random(seed), steps=25)
        assert (index.stats["shared_walks"] > 0) == share


def test_recursion_with_counted_pieces_equals_the_flat_index():
    # arrays nested to a depth whose strings are counted pieces: recursion and counts together
    net, arr = arrays_of_counted_words(3)
    lb = net.build(arr, max_depth=2)
    index = PushdownIndex(lb, VOCAB)
    flat = TokenIndex.build(net.to_dfa(arr, max_depth=2), VOCAB)
    for seed in range(25):
        walk_against_flat(index, flat, VOCAB, random.Random(seed), steps=30)


def test_key_sets_of_more_than_64_keys():
    # two words of keys per frame: rows from the kernel against the naive walk of the byte form
    from tokenfsm.schema.lazy_json import LazyMember, object_piece, value_piece

    net = Network()
    v = value_piece(net, DFA.from_regex("1|12"))
    names = [f"k{i}" for i in range(70)]
    required = {3, 66}
    obj = object_piece(net, [LazyMember(n, v, i in required) for i, n in enumerate(names)], None,
                       whitespace_dfa(0), max_properties=69)
    lb = net.build(obj)
    assert lb.key_words == 2
    toks = [b"{", b"}", b",", b":", b'"', b"k", b"6", b"3", b"1", b"12", b'"k6', b'"k66":',
            b'"k3":', b'6"', b'3"', b'":1', b',"k', b"1,", b"}"]
    vocab = Vocabulary(toks + [None], eos_token_ids=[len(toks)])
    index = PushdownIndex(lb, vocab)
    for text in [b"{", b'{"k66":1', b'{"k66":1,', b'{"k66":1,"k6', b'{"k3":1,"k66":12',
                 b'{"k3":1,"k66":12,"k6']:
        cfg = index.walk_bytes(index.start, text)
        assert cfg[0] != 0, text
        want = ref_mask(lb, vocab, *cfg)
        assert unpack_bitmask(index.mask_row(cfg), vocab.size).tolist() == want, text
    assert index.walk_bytes(index.start, b'{"k66":1,"k66"')[0] == 0      # key 66 twice
    assert not lb.accepts(b'{"k66":1}') and lb.accepts(b'{"k66":1,"k3":12}')
