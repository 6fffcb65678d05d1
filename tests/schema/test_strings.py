"""JSON string texts against ``json.loads`` / ``json.dumps``."""

import json
import random

import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.schema import strings as strings_mod
from tokenfsm.schema.strings import (
    escape_image, json_encode, json_string, json_string_outside, literal_json_string,
    string_value,
)

# value automata over decoded characters, with a Python predicate for each
VALUES = {
    "any": (lambda: DFA.universal(), lambda v: True),
    "len 2..4": (lambda: string_value(2, 4), lambda v: 2 <= len(v) <= 4),
    "len <= 1": (lambda: string_value(max_length=1), lambda v: len(v) <= 1),
    "controls": (lambda: DFA.from_regex(r'[\x00-\x1f"\\/]{0,6}'),
                 lambda v: len(v) <= 6 and all(c < " " or c in '"\\/' for c in v)),
    "astral": (lambda: DFA.from_regex("[\U0001F600-\U0001F64F\u00e9a]*"),
               lambda v: all(c in "\u00e9a" or 0x1F600 <= ord(c) <= 0x1F64F for c in v)),
    "pattern": (lambda: string_value(pattern=r"^[a-c]+\d$"),
                lambda v: len(v) >= 2 and set(v[:-1]) <= set("abc") and v[-1] in "0123456789"),
}
_BUILT = {}


def value_case(name):
    if name not in _BUILT:
        build, pred = VALUES[name]
        value = build()
        _BUILT[name] = (value, json_string(value), pred)
    return _BUILT[name]


SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
         "\r": "\\r", "\t": "\\t"}


def respell(value: str, rng: random.Random, escapes: str = "all",
            coded: list | None = None) -> str:
    """A random valid JSON spelling of ``value`` (an independent encoder), in the spellings of
    the policy ``escapes``; ``coded`` collects the characters written ``\\uXXXX``."""
    out = []
    for ch in value:
        cp = ord(ch)
        options = []
        if ch not in '"\\' and cp >= 0x20:
            options.append(ch)
        if ch in SHORT and (escapes != "minimal" or not options):
            options.append(SHORT[ch])
        if escapes == "minimal" and options or escapes == "plain-ascii" and 0x20 <= cp <= 0x7E:
            pass
        elif cp <= 0xFFFF:
            options.append("\\u%04x" % cp)
            options.append("\\u%04X" % cp)
        else:
            v = cp - 0x10000
            hi, lo = 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)
            options.append("\\u%04x\\u%04X" % (hi, lo))
            options.append("\\u%04X\\u%04x" % (hi, lo))
        out.append(rng.choice(options))
        if coded is not None and out[-1].startswith("\\u"):
            coded.append(ch)
    return '"' + "".join(out) + '"'


@given(name=st.sampled_from(sorted(VALUES)), seed=st.integers(0, 2 ** 32))
def test_sampled_texts_decode_to_accepted_values(name, seed):
    value, text_dfa, pred = value_case(name)
    rng = random.Random(seed)
    for _ in range(5):
        text = text_dfa.sample(rng, max_length=40)
        decoded = json.loads(text)
        assert isinstance(decoded, str)
        assert value.accepts(decoded) and pred(decoded), (text, decoded)


@given(name=st.sampled_from(sorted(VALUES)), v=st.text(max_size=6), seed=st.integers(0, 2 ** 32))
def test_every_spelling_of_a_valid_value_is_accepted(name, v, seed):
    value, text_dfa, pred = value_case(name)
    assert value.accepts(v) == pred(v)
    for text in (json.dumps(v), json.dumps(v, ensure_ascii=False),
                 respell(v, random.Random(seed))):
        assert text_dfa.accepts(text) == pred(v), (name, text)


@given(v=st.text(st.characters(codec="utf-8"), max_size=5), seed=st.integers(0, 2 ** 32))
def test_literal_json_string(v, seed):
    d = literal_json_string(v)
    assert d.accepts(json.dumps(v)) and d.accepts(json.dumps(v, ensure_ascii=False))
    assert d.accepts(respell(v, random.Random(seed)))
    rng = random.Random(seed)
    for _ in range(3):
        assert json.loads(d.sample(rng, max_length=60)) == v
    assert not d.accepts(json.dumps(v + "x"))


def test_invalid_spellings_are_rejected():
    d = json_string(DFA.universal())
    for bad in ['"\\x41"', '"\\U0041"', '"\\u41"', '"\\"', '"a', 'a"', '"\n"', '"\x00"',
                '"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d"', '"\\a"', "'a'", '"\\u00"', '"""']:
        assert not d.accepts(bad), bad
        with pytest.raises(json.JSONDecodeError):
            if "\\ud8" in bad or "\\udc" in bad:  # json accepts lone surrogates; we never emit them
                raise json.JSONDecodeError("lone surrogate", bad, 0)
            json.loads(bad)
    for good in ['""', '"\\u00e9\\u00E9\u00e9"', '"\\ud83d\\ude00"', '"\U0001F600"', '"\x7f"',
                 '"\\/"', '"/"', '"\\b\\f\\n\\r\\t\\"\\\\"']:
        assert d.accepts(good), good


def test_lengths_count_code_points():
    one = json_string(string_value(1, 1))
    assert one.accepts('"\\ud83d\\ude00"') and one.accepts('"\U0001F600"')
    assert one.accepts('"\\n"') and one.accepts('"\\u0041"')
    assert not one.accepts('"ab"') and not one.accepts('""')
    assert string_value(2, 3).accepts("\U0001F600\U0001F600")


def test_exclusions_are_on_the_emitted_text():
    value = DFA.universal()
    assert json_string(value, excludes=[]) == json_string(value)
    assert json_string(value, excludes=()) == json_string(value)
    d = json_string(value, excludes=["\\n", "ab"])
    assert not d.accepts('"x\\ny"') and d.accepts('"x\\u000ay"')  # the written escape is what counts
    assert not d.accepts('"xaby"') and d.accepts('"xa\\u0062y"')
    q = json_string(value, excludes=['\\"'])
    assert not q.accepts('"say \\"hi\\""') and q.accepts('"say \\u0022hi\\u0022"')
    rng = random.Random(3)
    for _ in range(20):
        body = d.sample(rng, max_length=30)[1:-1]
        assert "\\n" not in body and "ab" not in body


def test_escape_image_per_class():
    img = escape_image(CharSet.range(0x10000, 0x10FFFF))
    assert img.accepts("\\uD800\\uDC00") and img.accepts("\\udbff\\udfff")
    assert img.accepts("\U00010000") and not img.accepts("\\uDC00\\uD800")
    assert not img.accepts("\\uD7FF\\uDC00")
    quote = escape_image(CharSet.of('"'))
    assert quote == DFA.union_all([DFA.literal(s) for s in ('\\"', "\\u0022")])
    encoded = json_encode(DFA.literal("é"))
    assert encoded == DFA.union_all([DFA.literal(s) for s in ("é", "\\u00e9", "\\u00E9")])


def test_string_value_keywords():
    d = string_value(min_length=3, max_length=10, pattern="^2", format="date")
    assert d.accepts("2024-01-01") and not d.accepts("1999-01-01") and not d.accepts("2024-02-30")
    assert string_value(pattern="b").accepts("abc") and not string_value(pattern="^b").accepts("abc")
    with pytest.raises(ValueError):
        string_value(format="no-such-format")
    with pytest.raises(ValueError):
        string_value(3, 2)
    assert string_value() == DFA.universal()


@given(v=st.text(max_size=8), seed=st.integers(0, 2 ** 32))
def test_minimal_escapes(v, seed):
    value = string_value(max_length=8)
    minimal = json_string(value, escapes="minimal")
    assert minimal.accepts(json.dumps(v, ensure_ascii=False))  # json.dumps writes the plain way
    rng = random.Random(seed)
    text = minimal.sample(rng, max_length=30)
    assert value.accepts(json.loads(text))
    assert json.dumps(json.loads(text), ensure_ascii=False).lower() == text.lower()


# characters of every kind a spelling policy tells apart: printable ASCII (with short escapes or
# not), controls, non-ASCII and astral ones
_SPELLED_CHARS = list('aZ9 ~"\\/\n\x01\x7f\u00e9\u2028\U0001F600')


def test_minimal_is_a_subset():
    assert json_string(DFA.universal(), escapes="minimal") <= json_string(DFA.universal())
    with pytest.raises(ValueError):
        json_string(DFA.universal(), escapes="some")


def test_the_spelling_policies_nest():
    every, plain, minimal = (json_string(DFA.universal(), escapes=e)
                             for e in ("all", "plain-ascii", "minimal"))
    assert minimal <= plain <= every and minimal != plain != every


@given(value=st.text(st.sampled_from(_SPELLED_CHARS), max_size=6), seed=st.integers(0, 2 ** 32))
def test_plain_ascii_spells_printable_ascii_without_u_escapes(value, seed):
    # every spelling (the independent encoder's) that writes no printable ASCII character as
    # \uXXXX, and only those; each policy's own spellings are all accepted
    rng = random.Random(seed)
    coded: list = []
    text = respell(value, rng, "all", coded)
    plain = json_string(DFA.universal(), escapes="plain-ascii")
    assert plain.accepts(text) == all(not " " <= c <= "~" for c in coded)
    for e in ("all", "plain-ascii", "minimal"):
        assert json_string(DFA.universal(), escapes=e).accepts(respell(value, rng, e))


@pytest.mark.parametrize("names, excludes", [
    (["a", "ab", "kind", "apiVersion"], ()),
    (['q"uote', "back\\slash", "é", "\x01ctl", "tab\t"], ()),
    (["a", "ab", "kind"], ("ab", "\\u")),
    ([], ()),
])
def test_undeclared_key_regions_are_every_other_name_spelled(names, excludes):
    # Lowering.key_region takes every string's texts but the left-out names' spellings where
    # those names are few: the same language as spelling every other name (as undeclared keys
    # are spelled)
    from tokenfsm.schema.lower import KEY_ESCAPES, Lowering
    from tokenfsm.schema.resolve import resolve

    lw = Lowering(resolve({}), excludes=excludes, allow_extra_keys=True, property_order="any")
    left_out = DFA.union_all([DFA.literal(n) for n in names]) if names else DFA.empty()
    for value in (DFA.universal().difference(left_out),
                  DFA.from_regex("x[a-z]*").difference(left_out)):      # (infinite: spelled)
        assert lw.key_region(value).equivalent(
            json_string(value, excludes=excludes, escapes=KEY_ESCAPES))
        # kept across compilations by the names and the exclusions
        assert Lowering(resolve({}), excludes=excludes).key_region(value) is lw.key_region(value)
        other = Lowering(resolve({}), excludes=(*excludes, "zz")).key_region(value)
        assert other.equivalent(json_string(value, excludes=(*excludes, "zz"),
                                            escapes=KEY_ESCAPES))


# characters that a name's spellings read their own way: hex letters in both cases, escape
# letters, a quote, a backslash, controls, non-ASCII and astral ones (a surrogate pair each)
_NAME_CHARS = list('aAbBfFuU09_/"\\\n\x01\u00e9\u2028\U0001F600\U0001F601')


@given(names=st.lists(st.text(st.sampled_from(_NAME_CHARS), max_size=4), max_size=5),
       other=st.text(st.sampled_from(_NAME_CHARS), max_size=4), seed=st.integers(0, 2 ** 32),
       escapes=st.sampled_from(sorted(strings_mod.ESCAPES)))
def test_every_way_to_the_strings_outside_names_gives_one_automaton(names, other, seed, escapes):
    # the ways declared in OUTSIDE_WAYS give the reference's canonical automaton (or None where
    # they do not apply), and it holds every spelling of every other string in the policy, none
    # of the names in any spelling
    left_out = DFA.union_all([DFA.literal(n) for n in names]) if names else DFA.empty()
    got = {way: make(left_out, None, escapes) for way, make in strings_mod.OUTSIDE_WAYS.items()}
    want = got[strings_mod.OUTSIDE_REFERENCE]
    for d in [*got.values(), json_string_outside(left_out, escapes=escapes)]:
        assert d is not None
        assert (d.classes, d.delta, d.accepting, d.start) == \
            (want.classes, want.delta, want.accepting, want.start)
    rng = random.Random(seed)
    for n in names:
        assert not want.accepts(respell(n, rng))
    assert want.accepts(respell(other, rng, escapes)) == (other not in names)
    assert not want.accepts(respell(other, rng, escapes)[1:])   # (no opening quote)


# escapes, hex letters in both cases, "u", controls, non-ASCII and astral characters
_TEXT_CHARS = list('abfnrtuAFU09 /"\\\b\x00\x1f\x7f\u00e9\u2028\uffff\U0001F600\U0010FFFF')


@given(words=st.lists(st.text(st.sampled_from(_TEXT_CHARS), max_size=6), min_size=1,
                      max_size=3),
       seed=st.integers(0, 2 ** 32), escapes=st.sampled_from(sorted(strings_mod.ESCAPES)))
def test_every_way_to_a_strings_texts_gives_one_automaton(words, seed, escapes):
    # the ways declared in STRING_WAYS give the reference's canonical automaton where they
    # apply (one string written as DFA.literal: a const, an enum member), and the texts are
    # every spelling of the policy; a union of strings is left to the reference
    value = DFA.literal(words[0]) if len(words) == 1 else DFA.union_all(
        [DFA.literal(w) for w in words])
    got = {way: make(value, None, escapes) for way, make in strings_mod.STRING_WAYS.items()}
    want = got[strings_mod.STRING_REFERENCE]
    assert want is not None
    applies = len(words) == 1 and words[0] != "" and escapes == "all"
    assert (got["literal"] is not None) == applies
    for d in [*got.values(), json_string(value, escapes=escapes)]:
        if d is not None:
            assert (d.classes, d.delta, d.accepting, d.start) == \
                (want.classes, want.delta, want.accepting, want.start)
    rng = random.Random(seed)
    for w in words:
        assert want.accepts(respell(w, rng, escapes))
        assert want.accepts(json.dumps(w, ensure_ascii=False))
    other = words[0] + "a"
    assert want.accepts(json.dumps(other, ensure_ascii=False)) == (other in words)


@pytest.mark.parametrize("names", [DFA.from_regex("[\u0100-\u0200]x"), DFA.from_regex("a+")])
def test_strings_outside_names_too_wide_to_follow(names):
    # a class of more than TRACKED_CLASS_MAX characters, or infinitely many names: the tracked
    # way does not apply, and the product answers
    assert strings_mod._outside_tracked(names, None) is None
    assert json_string_outside(names).equivalent(
        json_string(DFA.universal()).difference(json_string(names)))
