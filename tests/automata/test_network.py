"""Lazy networks (automata.network) against the flat constructions they stand for.

Oracles: ``DFA.from_regex`` for counted repetitions (itself checked against ``re.fullmatch``),
``schema.jsontext.object_dfa(any_order=True)`` for key sets, and ``re.fullmatch`` directly on
the reference walk of the byte form."""

from __future__ import annotations

import itertools
import pickle
import random
import re

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from tokenfsm.automata import DFA, Budget, BudgetExceeded
from tokenfsm.automata.errors import AutomatonError, NondeterministicCall
from tokenfsm.automata.lazy_bytes import COUNTED, KEY_SET, LazyBytes
from tokenfsm.automata.network import (
    Call,
    Network,
    Text,
    Tick,
    choice,
    concat,
    optional,
    sep_by,
    star,
)
from tokenfsm.schema.jsontext import Member, key_text, object_dfa, separators, whitespace_dfa

ANY = Text(DFA.from_regex(r"[\s\S]"))


def counted_chars(char: Text, lo: int, hi: int | None):
    net = Network()
    return net, net.counted(star(concat(char, Tick())), lo=lo, hi=hi)


@given(lo=st.integers(0, 4), span=st.one_of(st.none(), st.integers(0, 4)),
       cls=st.sampled_from([r"[\s\S]", r"[a-c]", r"[é€😀x]", r"(?:ab|c)"]))
def test_counted_repetition_is_the_regex_repetition(lo, span, cls):
    hi = None if span is None else lo + span
    net, p = counted_chars(Text(DFA.from_regex(cls)), lo, hi)
    want = DFA.from_regex(f"(?:{cls}){{{lo},{'' if hi is None else hi}}}")
    assert net.to_dfa(p) == want
    lb = net.build(p)
    rng = random.Random(lo * 7 + (hi or 99))
    for _ in range(60):
        s = "".join(rng.choice("abcé€😀x\n") for _ in range(rng.randint(0, 9)))
        assert lb.accepts(s.encode()) == bool(re.fullmatch(f"(?:{cls}){{{lo},{'' if hi is None else hi}}}", s)), s


@given(lo=st.integers(0, 3), span=st.one_of(st.none(), st.integers(0, 3)), item=st.sampled_from(
    ["[0-9]+", "a|bc", "x(?:yz)*", "[0-9]{1,3}"]))
def test_counted_calls_with_separators(lo, span, item):
    # "[" item ("," item)* "]" with lo..hi items: the shape of a JSON array
    hi = None if span is None else lo + span
    net = Network()
    it = net.piece(Text(DFA.from_regex(item)))
    lit = lambda s: Text(DFA.literal(s))  # noqa: E731
    body = concat(lit("["), optional(concat(Call(it, tick=True), star(concat(lit(","), Call(it, tick=True))))),
                  lit("]"))
    p = net.counted(body, lo=lo, hi=hi)
    one = f"(?:{item})"
    if hi == 0:
        want = r"\[\]"
    else:
        inner = f"{one}(?:,{one}){{{max(lo - 1, 0)},{'' if hi is None else hi - 1}}}"
        want = rf"\[(?:{inner})\]" if lo > 0 else rf"\[(?:{inner})?\]"
    assert net.to_dfa(p) == DFA.from_regex(want)


@given(texts=st.lists(st.sampled_from(["ab", "ac", "a[0-9]+", "[a-c]x", "é?b", "a|bc"]),
                      min_size=2, max_size=4, unique=True),
       sep=st.sampled_from([None, ",", "a"]))
def test_overlapping_texts_are_their_regex(texts, sep):
    # a choice of texts that begin alike, repeated: the subset construction meets the same
    # targets in many states (a key region beside declared keys is this shape)
    net = Network()
    alts = choice(*(Text(DFA.from_regex(t)) for t in texts))
    body = star(alts) if sep is None else sep_by(alts, Text(DFA.literal(sep)))
    p = net.piece(body)
    one = "(?:" + "|".join(f"(?:{t})" for t in texts) + ")"
    want = f"{one}*" if sep is None else f"{one}(?:{sep}{one})*"
    assert net.to_dfa(p) == DFA.from_regex(want)
    lb = net.build(p)
    rng = random.Random(len(texts) * 31 + len(sep or ""))
    for _ in range(80):
        s = "".join(rng.choice("abcx0é,") for _ in range(rng.randint(0, 8)))
        assert lb.accepts(s.encode()) == bool(re.fullmatch(want, s)), s


def test_nested_counts_in_called_pieces():
    net = Network()
    inner = net.counted(star(concat(Text(DFA.from_regex("[ab]")), Tick())), lo=1, hi=2)
    word = net.piece(concat(Call(inner), Text(DFA.literal(";"))))
    outer = net.counted(star(Call(word, tick=True)), lo=2, hi=3)
    assert net.to_dfa(outer) == DFA.from_regex(r"(?:[ab]{1,2};){2,3}")
    assert net.build(outer).max_stack == 2


def test_huge_bounds_build_at_once():
    net, p = counted_chars(ANY, 3, 10**9)
    lb = net.build(p)
    assert lb.num_states < 16
    assert lb.accepts(b"abc") and not lb.accepts(b"ab")
    f, stack = lb.walk(b"x" * 5000)
    assert f[1] == 5000 and stack == []
    with pytest.raises(BudgetExceeded):
        net.to_dfa(p, Budget(max_states=1000))


def test_ambiguous_count_and_ambiguous_exit_are_reported():
    net = Network()
    with pytest.raises(NondeterministicCall, match="not forced"):
        net.counted(star(concat(Text(DFA.from_regex("ab?")), Tick())), lo=0, hi=5)
    net = Network()
    a = net.piece(Text(DFA.literal("a")))
    rep = net.counted(star(Call(a, tick=True)), lo=2, hi=9)
    top = net.piece(concat(Call(rep), Text(DFA.literal("a"))))       # a{2,9}a
    with pytest.raises(NondeterministicCall, match="may end") as e:
        net.build(top)
    assert e.value.module == rep and e.value.calls == ()
    net = Network()
    a = net.piece(Text(DFA.literal("ab")))
    top = net.piece(choice(Call(a), Text(DFA.literal("ac"))))
    with pytest.raises(NondeterministicCall, match="begins a call") as e:
        net.build(top)
    assert (e.value.module, e.value.calls) == (top, (a,))
    # two calls beginning alike: both named (what a compiler may inline to resolve it)
    net = Network()
    a, b = net.piece(Text(DFA.literal("ab"))), net.piece(Text(DFA.literal("ac")))
    top = net.piece(concat(Text(DFA.literal("x")), choice(Call(a), Call(b))))
    with pytest.raises(NondeterministicCall, match="two different calls") as e:
        net.build(top)
    assert (e.value.module, e.value.calls) == (top, (a, b))
    assert pickle.loads(pickle.dumps(e.value)).calls == (a, b)


def test_construction_errors_say_what():
    net = Network()
    with pytest.raises(AutomatonError, match="added or declared before"):
        net.piece(Call(0))
    p = net.piece(Text(DFA.from_regex("a?")))
    top = net.piece(concat(Text(DFA.literal("x")), Call(p)))
    with pytest.raises(AutomatonError, match="empty text"):
        net.build(top)
    with pytest.raises(AutomatonError, match="without a count"):
        net.piece(concat(Text(DFA.literal("x")), Tick()))
    with pytest.raises(AutomatonError, match="outside a key-set"):
        net.counted(Call(p, key=0))
    with pytest.raises(AutomatonError, match="inverted"):
        net.counted(Tick(), lo=3, hi=2)
    with pytest.raises(AutomatonError, match="required key"):
        net.key_set(Text(DFA.literal("{}")), 2, required=[2])
    with pytest.raises(AutomatonError, match="forbidden key"):
        net.key_set(Text(DFA.literal("{}")), 2, terms=[((0,), (5,))])
    with pytest.raises(AutomatonError, match="requires a key it forbids"):
        net.key_set(Text(DFA.literal("{}")), 2, terms=[((0,), (0,)), ((1,), (1,))])
    with pytest.raises(AutomatonError, match="not both"):
        net.key_set(Text(DFA.literal("{}")), 2, required=[0], terms=[((1,), ())])
    with pytest.raises(AutomatonError, match="tick marker"):
        Text(DFA.literal("a"), tick=0x100)


@given(lo=st.integers(0, 3), span=st.one_of(st.none(), st.integers(0, 3)),
       outer=st.sampled_from(["<\x01>(,\x01)*", "\x01?x\x02|y", "(\x01\x02)*z?"]))
def test_placeholders_in_a_text_call_their_pieces(lo, span, outer):
    # an automaton whose placeholder characters stand for other pieces' texts: the language of
    # the automaton with each placeholder replaced by that piece's regex
    hi = None if span is None else lo + span
    net = Network()
    counted = net.counted(star(concat(Text(DFA.from_regex("[a-c]")), Tick())), lo=lo, hi=hi)
    word = net.piece(Text(DFA.from_regex("[0-9]+!")))
    top = net.piece(Text(DFA.from_regex(outer), calls=((1, Call(counted)), (2, Call(word)))))
    if lo == 0:   # a called piece may not accept the empty text
        with pytest.raises(AutomatonError, match="empty text"):
            net.build(top)
        return
    rep = "[a-c]{%d,%s}" % (lo, "" if hi is None else hi)
    flat = outer.replace("\x01", f"(?:{rep})").replace("\x02", "(?:[0-9]+!)")
    assert net.to_dfa(top) == DFA.from_regex(flat)


@given(lo=st.integers(1, 3), span=st.one_of(st.none(), st.integers(0, 3)),
       outer=st.sampled_from(["<\x03\x01>(,\x03\x01)*", "(\x03\x01)?x\x03\x02|y\x04",
                              "(\x03\x01\x03\x02)*z?\x04", "\x03\x03\x04*"]))
def test_pairs_of_placeholders_call_their_pieces(lo, span, outer):
    # pieces past the single placeholders take a pair each: the same substitution, a pair
    # standing for one text and its first character for nothing alone
    hi = None if span is None else lo + span
    net = Network()
    counted = net.counted(star(concat(Text(DFA.from_regex("[a-c]")), Tick())), lo=lo, hi=hi)
    word = net.piece(Text(DFA.from_regex("[0-9]+!")))
    calls = (("\x03\x01", Call(counted)), ("\x03\x02", Call(word)), (4, Call(word)),
             ("\x03\x03", Call(counted)))
    top = net.piece(Text(DFA.from_regex(outer), calls=calls))
    rep = "(?:[a-c]{%d,%s})" % (lo, "" if hi is None else hi)
    flat = (outer.replace("\x03\x01", rep).replace("\x03\x03", rep)
            .replace("\x03\x02", "(?:[0-9]+!)").replace("\x04", "(?:[0-9]+!)"))
    assert net.to_dfa(top) == DFA.from_regex(flat)
    assert _pieces_every_way([Text(DFA.from_regex(outer), calls=calls)]) == {"subsets",
                                                                              "one-text"}


def test_placeholders_are_checked():
    net = Network()
    p = net.piece(Text(DFA.literal("a")))
    for calls in [((0, Call(p)),), ((0x80, Call(p)),), ((1, p),), [(1, Call(p))],
                  ((1, Call(p)), (1, Call(p)))]:
        with pytest.raises(AutomatonError, match="placeholder|tuple"):
            Text(DFA.literal("\x01"), calls=calls)
    with pytest.raises(AutomatonError, match="placeholder"):
        Text(DFA.literal("\x01"), tick=1, calls=((1, Call(p)),))
    with pytest.raises(AutomatonError, match="added or declared before"):
        net.piece(Text(DFA.literal("\x01"), calls=((1, Call(5)),)))
    # pairs: two markers, neither the tick, the first no single placeholder
    for calls in [(("\x01\x02\x03", Call(p)),), (("\x01", Call(p)),), (("\x01\x80", Call(p)),),
                  (("\x01\x02", Call(p)), ("\x01\x02", Call(p)))]:
        with pytest.raises(AutomatonError, match="placeholder"):
            Text(DFA.literal("\x01\x02"), calls=calls)
    with pytest.raises(AutomatonError, match="placeholder"):
        Text(DFA.literal("\x01\x02"), tick=2, calls=(("\x01\x02", Call(p)),))
    with pytest.raises(AutomatonError, match="two ways"):
        Text(DFA.literal("\x01\x02"), calls=((1, Call(p)), ("\x01\x02", Call(p))))
    # a placeholder read like another character cannot be told apart from it
    with pytest.raises(AutomatonError, match="read like other characters"):
        net.piece(Text(DFA.from_regex("[\x01a]"), calls=((1, Call(p)),)))


def test_empty_pieces_are_dropped_with_their_calls():
    net = Network()
    never = net.counted(star(concat(Text(DFA.literal("a")), Tick())), lo=5, hi=3 + 2)
    empty = net.counted(concat(Text(DFA.literal("b")), Tick()), lo=2, hi=2)
    top = net.piece(choice(Call(never), Call(empty), Text(DFA.literal("c"))))
    assert net.to_dfa(top) == DFA.from_regex("a{5}|c")
    assert net.build(top).num_calls == 1


# -- pieces that call themselves, to a depth ------------------------------------------------------

def nested_arrays(depth_words: int | None):
    """``[item, ...]`` whose items are numbers, short strings or arrays again; the strings have at
    most ``depth_words`` characters when given (a counted piece inside the recursion)."""
    net = Network()
    arr = net.declare()
    if depth_words is None:
        word = net.piece(Text(DFA.from_regex(r'"[a-z ]*"')))
    else:
        word = net.counted(concat(Text(DFA.literal('"')), star(concat(Text(DFA.from_regex("[a-z ]")),
                                                                      Tick())),
                                  Text(DFA.literal('"'))), lo=0, hi=depth_words)
    num = Text(DFA.from_regex("[0-9]+"))
    item = choice(num, Call(word), Call(arr))
    net.piece(concat(Text(DFA.literal("[")), optional(concat(item, star(concat(
        Text(DFA.literal(",")), item)))), Text(DFA.literal("]"))), into=arr)
    return net, arr


def unrolled(item: str, depth: int) -> str:
    inner = None
    for _ in range(depth):
        x = item if inner is None else f"(?:{item}|{inner})"
        inner = rf"\[(?:{x}(?:,{x})*)?\]"
    return inner


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("words", [None, 2])
def test_recursion_is_the_unrolled_language(depth, words):
    net, arr = nested_arrays(words)
    item = r'(?:[0-9]+|"[a-z ]*")' if words is None else r'(?:[0-9]+|"[a-z ]{0,%d}")' % words
    # the top's own frame does not count: max_depth nested calls below it, as RecursiveDFA
    want = DFA.from_regex(unrolled(item, depth + 1))
    assert net.to_dfa(arr, max_depth=depth) == want
    lb = net.build(arr, max_depth=depth)
    assert lb.max_stack == depth + 1           # the arrays nested, then a word
    for s in want.examples(20, max_length=40):
        assert lb.accepts(s.encode()), s


def test_recursion_needs_a_depth_and_a_definition():
    net, arr = nested_arrays(None)
    with pytest.raises(AutomatonError, match="max_depth"):
        net.build(arr)
    net2 = Network()
    later = net2.declare()
    top = net2.piece(concat(Text(DFA.literal("x")), Call(later)))
    with pytest.raises(AutomatonError, match="never defined"):
        net2.build(top)
    with pytest.raises(AutomatonError, match="into="):
        net2.piece(Text(DFA.literal("y")), into=top)


# -- key sets against the flat any-order object ---------------------------------------------------

NAMES = ["a", "ab", "b", "c", "long key"]
VALUES = ["[0-9]", "true|false", "[0-9]{1,2}", "null", '"[a-z]*"']


def key_set_object(n: int, required, lo, hi, extras: bool, ws_n: int, terms=None):
    ws = whitespace_dfa(ws_n)
    colon, comma = separators(ws)
    net = Network()
    vals = [net.piece(Text(DFA.from_regex(v))) for v in VALUES[:n]]
    members = [concat(Text(key_text(NAMES[i])), Text(colon), Call(vals[i], key=i), Text(ws))
               for i in range(n)]
    xkey, xval = DFA.from_regex(r'"x[0-9]"'), DFA.from_regex("[0-9]")
    if extras:
        members.append(concat(Text(xkey), Text(colon), Call(net.piece(Text(xval))), Text(ws)))
    m = choice(*members)
    body = concat(Text(DFA.literal("{")), Text(ws), optional(concat(m, star(concat(Text(comma), m)))),
                  Text(DFA.literal("}")))
    if terms is not None:
        return net, net.key_set(body, n, terms=terms, lo=lo, hi=hi), None
    obj = net.key_set(body, n, required=required, lo=lo, hi=hi)
    flat = object_dfa([Member(key_text(NAMES[i]), DFA.from_regex(VALUES[i]), i in required)
                       for i in range(n)],
                      DFA.concat_all([xkey, colon, xval]) if extras else None, ws,
                      min_properties=lo, max_properties=hi, any_order=True)
    return net, obj, flat


@given(n=st.integers(0, 4), data=st.data(), extras=st.booleans(), ws_n=st.integers(0, 1))
def test_key_sets_are_the_any_order_object(n, data, extras, ws_n):
    required = data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n)) if n else set()
    lo = data.draw(st.integers(0, 3))
    hi = data.draw(st.one_of(st.none(), st.integers(lo, 5)))
    net, obj, flat = key_set_object(n, sorted(required), lo, hi, extras, ws_n)
    got = net.to_dfa(obj)
    assert got == flat
    if not flat.is_empty():
        lb = net.build(obj)
        assert lb.piece_kind[lb.state_piece[lb.start]] == KEY_SET
        for s in flat.examples(20, max_length=60):
            assert lb.accepts(s.encode()), s


TERMS = st.lists(st.tuples(st.sets(st.integers(0, 3), max_size=2),
                           st.sets(st.integers(0, 3), max_size=2)), min_size=1, max_size=3)


@given(n=st.integers(1, 4), terms=TERMS, extras=st.booleans(),
       bounds=st.sampled_from([(0, None), (1, 2), (2, None)]))
def test_key_set_terms_are_the_union_of_their_objects(n, terms, extras, bounds):
    # each term (required, forbidden keys) against the flat any-order object of the members it
    # does not forbid, its required keys required: the key set is their union
    terms = [(sorted(r & set(range(n))), sorted(f & set(range(n)))) for r, f in terms]
    kept = [(r, f) for r, f in terms if not set(r) & set(f)]
    lo, hi = bounds
    if not kept:
        with pytest.raises(AutomatonError, match="requires a key it forbids"):
            key_set_object(n, [], lo, hi, extras, 0, terms)
        return
    net, obj, _ = key_set_object(n, [], lo, hi, extras, 0, terms)
    colon = separators(whitespace_dfa(0))[0]
    xmember = DFA.concat_all([DFA.from_regex(r'"x[0-9]"'), colon, DFA.from_regex("[0-9]")])
    flat = DFA.union_all([object_dfa(
        [Member(key_text(NAMES[i]), DFA.from_regex(VALUES[i]), i in r)
         for i in range(n) if i not in f], xmember if extras else None, whitespace_dfa(0),
        min_properties=lo, max_properties=hi, any_order=True) for r, f in kept]).minimize()
    assert net.to_dfa(obj) == flat


def test_key_set_never_offers_a_key_twice_nor_a_comma_after_the_last_key():
    net, obj, _ = key_set_object(2, [0], 0, None, False, 0)
    lb = net.build(obj)
    f, st_ = lb.walk(b'{"a":1,"ab":true')
    assert f is not None
    assert lb.step(f, list(st_), ord(",")) is None          # no key left to write
    assert lb.step(f, list(st_), ord("}")) is not None
    f, st_ = lb.walk(b'{"a":1,')
    g = lb.walk(b'"a', f, st_)[0]
    assert g is not None                                     # "ab" may still come
    assert lb.walk(b'"a"', f, st_)[0] is None                # but not "a" again
    f, st_ = lb.walk(b'{"ab":true')
    assert lb.step(f, list(st_), ord("}")) is None           # "a" is required


def test_key_set_needs_the_object_shape():
    net = Network()
    v = net.piece(Text(DFA.literal("1")))
    body = concat(Text(DFA.literal("{")), Call(v, key=0), Text(DFA.literal("}")))
    obj = net.key_set(body, 1)
    with pytest.raises(AutomatonError, match="close or to write any member"):
        net.build(obj)


# -- the byte form --------------------------------------------------------------------------------

def test_lazy_bytes_validates_its_arrays():
    net, p = counted_chars(ANY, 0, 4)
    lb = net.build(p)
    arrays = {n: getattr(lb, n) for n, _ in LazyBytes._ARRAYS}
    bad = dict(arrays, piece_hi=np.array([-5]))
    with pytest.raises(AutomatonError, match="bounds"):
        LazyBytes(start=lb.start, max_stack=lb.max_stack, **bad)
    bad = dict(arrays, table=np.asarray(lb.table) + 100)
    with pytest.raises(AutomatonError, match="nonexistent"):
        LazyBytes(start=lb.start, max_stack=lb.max_stack, **bad)
    with pytest.raises(AutomatonError, match="missing"):
        LazyBytes(start=lb.start, max_stack=0, table=lb.table)
    assert lb.piece_kind.tolist() == [COUNTED]
    import pickle
    again = pickle.loads(pickle.dumps(lb))
    assert again.accepts(b"abcd") and not again.accepts(b"abcde")
    with pytest.raises(AttributeError):
        lb.start = 3


@given(maps=st.lists(st.lists(st.integers(-3, 9), min_size=256, max_size=256), min_size=1,
                     max_size=40))
@example(maps=[[random.Random(i).randrange(-1, 12) for _ in range(256)] for i in range(40)])
@example(maps=[list(range(256))] + [[255 * (b == 255 - k) for b in range(256)] for k in range(8)])
def test_joint_classes_are_the_partition_of_every_map(maps):
    # (many maps pass 2**62 as one number: renumbered on the way; nine maps of 256 values would
    # shift the first one out of 64 bits)
    from tokenfsm.automata.network_piece import _joint_classes
    arrays = [np.array(m, dtype=np.int64) for m in maps]
    cls, colmaps = _joint_classes(arrays)
    first: dict = {}
    want = [first.setdefault(tuple(m[b] for m in maps), len(first)) for b in range(256)]
    assert cls.tolist() == want                     # the same partition, numbered by first byte
    for m, cm in zip(arrays, colmaps):
        assert cm[cls].tolist() == m.tolist()


def _pieces_every_way(bodies):
    """Build each body every way of ``PIECE_WAYS`` that applies; all equal the reference's."""
    from tokenfsm.automata.network_piece import PIECE_REFERENCE, PIECE_WAYS, build_piece

    applied = set()
    for i, body in enumerate(bodies):
        want = build_piece(body, i, way=PIECE_REFERENCE)
        for name in PIECE_WAYS:
            try:
                got = build_piece(body, i, way=name)
            except ValueError:
                continue
            applied.add(name)
            for f in ("byte_classes", "table", "accepting"):
                assert np.array_equal(getattr(got, f), getattr(want, f)), (name, f, body)
            assert (got.start, got.calls, got.call_specs) == (want.start, want.calls,
                                                              want.call_specs), (name, body)
    return applied


@given(outer=st.sampled_from(["<\x01>(,\x01)*", "\x01?x\x02|y", "(\x01\x02)*z?", "a|b\x01",
                              "[^\x01-\x1f]*\x01é", "\x02{0,3}", None, ""]),
       tick=st.booleans(), key=st.sampled_from([None, 0, 1]))
def test_every_way_of_building_a_piece_gives_the_reference_piece(outer, tick, key):
    dfa = DFA.empty() if outer is None else DFA.from_regex(outer)
    text = Text(dfa, calls=((1, Call(0, tick=tick, key=key)), (2, Call(1))))
    bodies = [text, concat(Text(DFA.literal("[")), text, Text(DFA.literal("]"))),
              star(concat(Text(DFA.from_regex("[a-c]")), Tick()))]
    assert _pieces_every_way(bodies) == {"subsets", "one-text"}
    assert _pieces_every_way(bodies[1:]) == {"subsets"}


@given(st.sampled_from(['"[a-z]*"', "a{0,40}b", '[^"]{3,9}', "é|ü+x", "(ab|cd)*e?", "[\\s\\S]"]))
def test_a_text_without_placeholders_is_its_own_byte_automaton(pattern):
    # the reference's piece of a text without placeholders is the text's byte automaton as it
    # is (what the one-text way returns without walking it again)
    from tokenfsm.automata.network_piece import PIECE_REFERENCE, build_piece

    dfa = DFA.from_regex(pattern)
    b = dfa.to_bytes()
    assert _pieces_every_way([Text(dfa)]) == {"subsets", "one-text"}
    want = build_piece(Text(dfa), 0, way=PIECE_REFERENCE)
    assert np.array_equal(want.table, b.table) and np.array_equal(want.accepting, b.accepting)
    assert want.start == b.start == 1 and want.calls == ()


def test_a_text_piece_is_minimal_where_its_placeholders_call_alike():
    # a text's byte automaton is minimal, and stays so with its placeholders read as calls,
    # unless two placeholders make the same call: after "a" and after "c" are then alike
    for calls in (((1, Call(0)), (2, Call(0))), ((1, Call(0)), (2, Call(0, key=1))),
                  ((1, Call(0, tick=True)), (2, Call(1, tick=True)))):
        body = Text(DFA.from_regex("a\x01b|c\x02b|d\x01"), calls=calls)
        assert _pieces_every_way([body]) == {"subsets", "one-text"}
    from tokenfsm.automata.network_piece import build_piece

    merged = build_piece(Text(DFA.from_regex("a\x01b|c\x02b"),
                              calls=((1, Call(0)), (2, Call(0)))), 0)
    assert merged.table.shape[0] == 5       # dead, start, after a or c, after the call, end


def test_a_piece_is_built_once_per_shape():
    # a body is kept by its shape: its texts by language (another automaton of it finds it),
    # its calls by slot; a body of the same shape calling other pieces gets the kept piece with
    # its own calls, equal to the piece built anew; the arrays are read-only
    from tokenfsm.automata.network_piece import PIECE_REFERENCE, PIECES, build_piece

    PIECES.clear()
    a = build_piece(Text(DFA.from_regex('"[a-z]*"')), 0)
    b = build_piece(Text(DFA.from_regex('"([a-m]|[n-z])*"').minimize()), 5)
    assert b is a and not a.table.flags.writeable
    want = build_piece(Text(DFA.from_regex('"[a-z]*"')), 0, way=PIECE_REFERENCE)
    assert np.array_equal(a.table, want.table) and a.calls == want.calls == ()
    assert build_piece(Text(DFA.from_regex('"[a-y]*"')), 0) is not a

    def body(x, y, keys=(0, 1), tick=False):
        return concat(Text(DFA.literal("{")), sep_by(choice(
            concat(Text(DFA.literal('"a":')), Call(x, key=keys[0])),
            concat(Text(DFA.literal('"b":')), Call(y, tick=tick, key=keys[1]))),
            Text(DFA.literal(","))), Text(DFA.literal("}")))

    first = build_piece(body(3, 4), 7)
    again = build_piece(body(3, 4), 8)
    assert again is first and first.call_specs == ((3, False, 0), (4, False, 1))
    # the same shape: two distinct calls, whichever pieces they call
    for other in (body(9, 2), body(2, 2), body(4, 3), body(3, 4, keys=(None, 0))):
        got = build_piece(other, 1)
        assert got.table is first.table
        want = build_piece(other, 1, way=PIECE_REFERENCE)
        for f in ("byte_classes", "table", "accepting"):
            assert np.array_equal(getattr(got, f), getattr(want, f)), other
        assert (got.start, got.calls, got.call_specs) == (want.start, want.calls,
                                                          want.call_specs), other
    # one call for both keys is another shape (one call symbol, not two); so is a tick
    for other in (body(2, 2, keys=(None, None)), body(3, 4, tick=True)):
        got = build_piece(other, 1)
        assert got.table is not first.table
        assert got.calls == build_piece(other, 1, way=PIECE_REFERENCE).calls
    assert len(PIECES) == 5


def test_every_way_on_the_pieces_of_json_values():
    # the pieces the schema compiler makes: a counted string, a date value, counted arrays of
    # it, an object whose keys come in any order with undeclared keys
    from tokenfsm.automata.network_piece import PIECE_WAYS
    from tokenfsm.schema.formats import format_dfa
    from tokenfsm.schema.lazy_json import (
        LazyMember,
        array_piece,
        object_piece,
        string_piece,
        value_piece,
    )

    net = Network()
    ws = DFA.from_regex("[ ]?")
    text = string_piece(net, 2, 700, excludes=["</s>"])
    date = value_piece(net, DFA.literal('"') + format_dfa("date") + DFA.literal('"'))
    dates = array_piece(net, [text], date, ws, 1, 900)
    obj = object_piece(net, [LazyMember("a", text, True), LazyMember("when", date),
                             LazyMember("all", dates)],
                       [(DFA.from_regex('"x[a-z]*"'), date)], ws, 1, 3)
    bodies = [net.body(i) for i in range(len(net))]
    assert len(bodies) == 4 and obj == 3
    assert _pieces_every_way(bodies) == set(PIECE_WAYS)


def test_kept_pieces_link_as_pieces_built_anew():
    # the second network finds its pieces kept (PIECES) and their liveness and key tables too
    # (TABLES); the linked automaton is the one a process with nothing kept makes
    from tokenfsm.automata.lazy_bytes import rows_to_ints
    from tokenfsm.automata.network_link import TABLES
    from tokenfsm.automata.network_piece import PIECES
    from tokenfsm.schema.lazy_json import LazyMember, object_piece, string_piece, value_piece

    def network(extra_names):
        net = Network()
        ws = DFA.from_regex("[ ]?")
        text = string_piece(net, 0, 40)
        num = value_piece(net, DFA.from_regex("-?[0-9]+"))
        obj = object_piece(net, [LazyMember("a", text, True), LazyMember("n", num)]
                           + [LazyMember(f"k{i}", num) for i in range(extra_names)],
                           [(DFA.from_regex('"x[a-z]*"'), num)], ws, 1, None)
        return net.build(obj)

    for extra_names in (0, 70):           # one word of keys, then two
        PIECES.clear()
        TABLES.clear()
        fresh = network(extra_names)
        assert len(TABLES) > 0
        kept = network(extra_names)
        for name, _ in LazyBytes._ARRAYS:
            assert np.array_equal(getattr(kept, name), getattr(fresh, name)), name
        assert (kept.start, kept.max_stack) == (fresh.start, fresh.max_stack)
        words = kept.key_mask
        assert rows_to_ints(words) == [sum(int(w) << (64 * i) for i, w in enumerate(row))
                                       for row in words.tolist()]
        assert kept.accepts(b'{"a":"hi","n":1,"xy":2}') and not kept.accepts(b'{"n":1}')


def _nests_within(text: str, depth: int) -> bool:
    """Whether ``text`` is one bracketed group of ``()`` and ``[]``, balanced and matched, at
    most ``depth`` brackets deep in all."""
    stack, opened = [], 0
    for i, ch in enumerate(text):
        if ch in "([":
            if i and not stack:
                return False            # (a second group at the top)
            stack.append(ch)
            if len(stack) > depth:
                return False
            opened += 1
        elif not stack or "([".index(stack.pop()) != ")]".index(ch):
            return False
    return bool(opened) and not stack


@pytest.mark.parametrize("depth", range(4))
def test_pieces_sharing_a_depth_bound_nest_that_deep_in_all(depth):
    # two pieces calling each other: apart, each may nest max_depth deep; grouped, all their
    # frames together (the objects and arrays of an open JSON value), against every string of
    # brackets up to eight long
    net = Network()
    a, b = net.declare(), net.declare()
    inside = star(choice(Call(a), Call(b)))
    net.piece(concat(Text(DFA.literal("(")), inside, Text(DFA.literal(")"))), into=a)
    net.piece(concat(Text(DFA.literal("[")), inside, Text(DFA.literal("]"))), into=b)
    top = net.piece(choice(Call(a), Call(b)))
    apart = net.to_dfa(top, max_depth=depth)
    net.same_depth(b, a)
    grouped = net.to_dfa(top, max_depth=depth)
    texts = ["".join(p) for n in range(9) for p in itertools.product("()[]", repeat=n)]
    for text in texts:
        assert grouped.accepts(text) == _nests_within(text, depth), text
    assert apart.accepts("([([])])") == (depth >= 2) and (apart == grouped) == (depth == 0)


def test_same_depth_groups_merge_and_check_their_pieces():
    net = Network()
    a, b, c = net.declare(), net.declare(), net.declare()
    net.same_depth(a, b)
    net.same_depth(c, b)
    assert net._depth_of == {a: a, b: a, c: a}
    with pytest.raises(AutomatonError, match="same_depth"):
        net.same_depth(a, 7)
    with pytest.raises(AutomatonError, match="same_depth"):
        net.same_depth(True)


@pytest.mark.parametrize("dense_levels", [0, 3, None])
def test_the_closure_of_a_piece_reads_each_frontier_s_edges_only(dense_levels):
    # past its first levels, the trim of a piece reaches states over its frontier's edges
    # (sorted by source once, minimize.reach): the same states as reading every edge at every
    # level (the reference: as many such levels as states), on random graphs and chains,
    # through all states or through some; from the first level on, from the third, and at the
    # default
    from tokenfsm.automata.network_piece import CLOSURE_DENSE_LEVELS, _closure

    levels = CLOSURE_DENSE_LEVELS if dense_levels is None else dense_levels
    rng = np.random.default_rng(7)
    for trial in range(400):
        n = int(rng.integers(1, 60))
        if trial % 4 == 3:          # a chain with a few edges besides: many levels
            n = int(rng.integers(20, 80))
            src = np.concatenate([np.arange(n - 1), rng.integers(0, n, 5)])
            dst = np.concatenate([np.arange(1, n), rng.integers(0, n, 5)])
        else:
            src, dst = rng.integers(0, n, (2, int(rng.integers(0, 150))))
        seeds = rng.integers(0, n, int(rng.integers(1, 4)))
        within = rng.random(n) < 0.9 if trial % 2 else None
        want = _closure(seeds, src, dst, n, within, dense_levels=n)
        got = _closure(seeds, src, dst, n, within, dense_levels=levels)
        assert got.tolist() == want.tolist(), trial
