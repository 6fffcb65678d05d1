"""parse_regex against re.fullmatch, through the naive AST matcher in ast_reference.py."""

from __future__ import annotations

import itertools
import json
import re
import time
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ast_reference import fullmatch as ast_fullmatch
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.errors import RegexError
from tokenfsm.automata.regex_ast import Assert, Chars
from tokenfsm.automata.regex_parse import parse_regex
from tokenfsm.automata.unicode_sets import all_scalars

DATA = Path(__file__).resolve().parent.parent / "data" / "regex"

# -------------------------------------------------------------------------------------------------
# generators, shared with test_regex_dialect.py
# -------------------------------------------------------------------------------------------------

# characters where case folding, word/digit/space categories and line anchors all get exercised
ALPHABET = "aAbBkKsS0_ \n-.ßſéÉİıi\u212aσΣς٣"

FLAG_COMBOS = [
    sum(combo)
    for n in range(5)
    for combo in itertools.combinations((re.IGNORECASE, re.DOTALL, re.MULTILINE, re.ASCII), n)
]

_CLASS_ESCAPES = {"\\": "\\\\", "]": "\\]", "[": "\\[", "^": "\\^", "-": "\\-", "\n": "\\n"}


def _class_char(c: str) -> str:
    return _CLASS_ESCAPES.get(c, c)


def _literal(c: str) -> str:
    return "\\n" if c == "\n" else re.escape(c)


_chars = st.sampled_from(ALPHABET)
_category = st.sampled_from([r"\d", r"\w", r"\s", r"\D", r"\W", r"\S"])
_class_item = st.one_of(
    _chars.map(_class_char),
    st.tuples(_chars, _chars).map(lambda ab: "-".join(_class_char(c) for c in sorted(ab))),
    _category,
)
_char_class = st.tuples(st.booleans(), st.lists(_class_item, min_size=1, max_size=3)).map(
    lambda t: "[" + ("^" if t[0] else "") + "".join(t[1]) + "]")
_repeatable = st.one_of(_chars.map(_literal), _char_class, _category, st.just("."))
_anchor = st.sampled_from(["^", "$", r"\A", r"\Z", r"\b", r"\B"])
_quantifier = st.tuples(
    st.sampled_from(["*", "+", "?", "{2}", "{0,2}", "{1,3}", "{,2}", "{2,}"]),
    st.sampled_from(["", "?"]),  # lazy quantifiers match the same language
).map("".join)
_group_open = st.sampled_from(["(", "(?:", "(?i:", "(?-i:", "(?s:", "(?m:", "(?a:", "(?P<g>"])


def _extend(inner):
    group = st.tuples(_group_open, st.lists(inner, min_size=1, max_size=3)).map(
        lambda t: t[0] + "|".join(t[1]) + ")")
    quantified = st.tuples(st.one_of(group, _repeatable), _quantifier).map("".join)
    sequence = st.lists(inner, min_size=2, max_size=3).map("".join)
    return st.one_of(group, quantified, sequence)


_body = st.recursive(st.one_of(_repeatable, _anchor), _extend, max_leaves=6)
_global_flags = st.sampled_from(["", "", "", "(?i)", "(?s)", "(?m)", "(?a)", "(?im)"])

patterns = st.tuples(_global_flags, _body).map("".join).filter(
    lambda p: p.count("(?P<g>") <= 1)
subjects = st.lists(st.text(alphabet=ALPHABET, max_size=5), min_size=1, max_size=8)


def compiles(pattern: str, flags: int = 0) -> bool:
    try:
        re.compile(pattern, flags)
        return True
    except (re.error, ValueError, OverflowError):
        return False


@lru_cache(maxsize=None)
def re2_cases() -> list[dict]:
    with open(DATA / "re2-search.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


# -------------------------------------------------------------------------------------------------
# the dialect, against re.fullmatch
# -------------------------------------------------------------------------------------------------


@given(patterns, subjects)
def test_generated_patterns_agree_with_re_for_every_flag_combination(pattern, strings):
    assume(compiles(pattern))
    for flags in FLAG_COMBOS:
        if not compiles(pattern, flags):
            continue
        ast = parse_regex(pattern, flags)
        for s in strings:
            expected = re.fullmatch(pattern, s, flags) is not None
            assert ast_fullmatch(ast, s) == expected, (pattern, flags, s)


def test_re2_corpus_agrees_with_re():
    checked = raised = skipped = 0
    trees: dict = {}
    for case in re2_cases():
        pattern = case["regex"]
        if "py_re_fullmatch" not in case:  # Python does not compile it
            skipped += 1
            continue
        if pattern not in trees:
            try:
                trees[pattern] = parse_regex(pattern)
            except RegexError as exc:
                assert exc.msg.endswith("is not regular"), (pattern, exc)
                trees[pattern] = None
        if trees[pattern] is None:
            raised += 1
            continue
        assert ast_fullmatch(trees[pattern], case["string"]) == case["py_re_fullmatch"], case
        checked += 1
    print(f"\nRE2 corpus: {checked} checked, {raised} not regular, {skipped} skipped")
    assert checked > 1000


@pytest.mark.parametrize("pattern, text", [
    (r"\（", "（"), (r"\。", "。"), (r"\<", "<"), (r"\/", "/"),
    (r"\<\w+\>", "<tag>"), (r"a\/b\（c\）", "a/b（c）"),
])
def test_escaped_punctuation_is_literal(pattern, text):
    assert ast_fullmatch(parse_regex(pattern), text)
    assert re.fullmatch(pattern, text)


@pytest.mark.parametrize("pattern, flags, text", [
    (r"a.b", 0, "a\nb"), (r"a.b", re.S, "a\nb"), (r"(?s)a.b", 0, "a\nb"), (r"(?s:a.)b", 0, "a\nb"),
    (r"^b$", re.M, "a\nb\nc"), (r"a$\n^b", re.M, "a\nb"), (r"a$", 0, "a\n"), (r"a\Z", 0, "a\n"),
    (r"(?i)straße", 0, "STRASSE"), (r"(?i)ǅ", 0, "ǆ"), (r"(?i:a)b", 0, "Ab"), (r"(?i)(?-i:a)b", 0, "AB"),
    (r"\w+", re.A, "é"), (r"(?a:\w)\w", 0, "aé"), (r"a \d # digit", re.X, "a1"),
    (r"(?x) a [ ] b", 0, "a b"), (r"(?x:a b)c d", 0, "abc d"), (r"a{,2}", 0, "aa"), (r"a{x}", 0, "a{x}"),
    (r"a{1,2}?b??", 0, "ab"), (r"\bfoo\b", 0, "foo"), (r"\B", 0, ""), (r"x*\B", 0, "xx"),
    (r"\N{EM DASH}+", 0, "——"), (r"[\s\S]{3}", 0, "a\nb"), (r"a|b|", 0, ""),
])
def test_flags_and_escapes(pattern, flags, text):
    expected = re.fullmatch(pattern, text, flags) is not None
    assert ast_fullmatch(parse_regex(pattern, flags), text) == expected


def test_anchors_lower_to_assertions():
    assert parse_regex("^") == Assert("start")
    assert parse_regex("^", re.M) == Assert("start_line")
    assert parse_regex("$") == Assert("end")
    assert parse_regex("(?m)$") == Assert("end_line")
    assert parse_regex(r"\A") == Assert("start")
    assert parse_regex(r"\Z") == Assert("end_string")
    boundary = parse_regex(r"\b")
    assert boundary.kind == "word_boundary" and "é" in boundary.word
    assert "é" not in parse_regex(r"\b", re.A).word
    assert parse_regex(r"(?a:\B)").word == CharSet([(48, 57), (65, 90), (95, 95), (97, 122)])


# -------------------------------------------------------------------------------------------------
# character sets, swept over every code point
# -------------------------------------------------------------------------------------------------


def _set_by_fullmatch(pattern: str) -> CharSet:
    """Every scalar value c with re.fullmatch(pattern, c): the slow, independent way."""
    rx = re.compile(pattern)
    text = all_scalars()
    matched = [i for i, c in enumerate(text) if rx.fullmatch(c)]
    ranges = []
    for i in matched:
        x = i if i < 0xD800 else i + 0x800
        if ranges and ranges[-1][1] == x - 1:
            ranges[-1][1] = x
        else:
            ranges.append([x, x])
    return CharSet(map(tuple, ranges))


@pytest.mark.parametrize("pattern", [
    "(?i)k", "(?i)[a-z]", "(?i)ß", "(?i)\u0130", "(?i)[^a]", r"(?i)\w",
    r"(?i)[\W\d]", "(?ai)[k-s]", "(?i)[^\u212a]", "(?i)[\U00010400-\U00010410]",
    r"\s", r"(?a)\w", r"\D", ".",
])
def test_leaf_sets_equal_re_on_every_code_point(pattern):
    node = parse_regex(pattern)
    assert isinstance(node, Chars)
    assert node.cs == _set_by_fullmatch(pattern)


# -------------------------------------------------------------------------------------------------
# Unicode properties, against the regex module
# -------------------------------------------------------------------------------------------------

PROPERTY_PATTERNS = [
    r"\p{L}+", r"\p{Nd}+", r"\P{L}*", r"\p{Han}+", r"\p{Script=Latin}+", r"\p{Lu}\p{Ll}*",
    r"[\p{L}0-9_]+", r"[^\p{L}]", r"[^\p{L}\p{N}]+", r"\pL\pN", r"x\p{Greek}+y",
    r"[\p{Greek}\p{Cyrillic}]+", r"(?i)\p{Lu}+", r"(?i)[^\p{Lu}]", r"(?i)\P{Lu}", r"\p{Lu}|\d",
    r"[\\p{L}]+", r"\\p{L}", r"(?i)[^\p{Ll}x]+",
]
PROPERTY_ALPHABET = "aZ5_ é中ा٣Ⅻ-ǅxyαΩжЖ\\p{L}ß"


@pytest.mark.parametrize("pattern", PROPERTY_PATTERNS)
@given(strings=st.lists(st.text(alphabet=PROPERTY_ALPHABET, max_size=4), min_size=1, max_size=10))
def test_unicode_properties_agree_with_regex_module(pattern, strings):
    regex = pytest.importorskip("regex")
    ast = parse_regex(pattern)
    for s in strings:
        assert ast_fullmatch(ast, s) == (regex.fullmatch(pattern, s) is not None), (pattern, s)


@pytest.mark.parametrize("pattern", [r"\p{L}", r"[^\p{L}\p{Nd}]", r"(?i)\p{Lu}", r"(?i)[^\p{Ll}]",
                                     r"(?i)[^\P{Lu}]", r"\P{Greek}", r"[\p{Han}a-c]"])
def test_property_sets_on_a_stride_of_code_points(pattern):
    regex = pytest.importorskip("regex")
    cs = parse_regex(pattern).cs
    rx = regex.compile(pattern)
    for x in itertools.chain(range(0, 0x3000), range(0x3000, 0x110000, 97)):
        if 0xD800 <= x <= 0xDFFF:
            continue
        assert (x in cs) == (rx.fullmatch(chr(x)) is not None), (pattern, hex(x))


# -------------------------------------------------------------------------------------------------
# errors
# -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern, pos, what", [
    (r"(a)\1", 3, "back-reference \\1"),
    (r"(?P<n>a)b(?P=n)", 9, "back-reference (?P=n)"),
    (r"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)\11", 33, "back-reference \\11"),
    (r"x(?=a)", 1, "look-ahead"),
    (r"x(?!a)", 1, "negative look-ahead"),
    (r"[(?=]x(?<=a)", 6, "look-behind"),
    (r"\(?<!x(?<!a)", 6, "negative look-behind"),
    (r"(a)?(?(1)a|b)", 4, "conditional"),
    (r"a(?>bc|b)c", 1, "atomic group"),
    (r"a*+", 1, "possessive quantifier *+"),
    (r"ab?+", 2, "possessive quantifier ?+"),
    (r"(a++)+", 2, "possessive quantifier ++"),
    (r"(?:ab){2,3}+", 6, "possessive quantifier {2,3}+"),
    (r"a{x}+", 4, None),  # {x} is text: '+' repeats '}' greedily, which is regular
    ("(?x) a # (?=\n (?!b)", 14, "negative look-ahead"),
    (r"\p{L}+(?=\p{N})", 6, "look-ahead"),
    (r"(?:(?=a)b|(?=a)c)", 3, "look-ahead"),
    (r"(\d)[\1]\1", 8, "back-reference \\1"),
])
def test_non_regular_constructs_are_named_with_their_position(pattern, pos, what):
    assert compiles(pattern) or "\\p" in pattern
    if what is None:
        parse_regex(pattern)
        return
    with pytest.raises(RegexError) as info:
        parse_regex(pattern)
    assert info.value.msg.startswith(what)
    assert info.value.msg.endswith("is not regular")
    assert info.value.pos == pos
    assert info.value.pattern == pattern


@pytest.mark.parametrize("pattern", ["(a", "a)", "[a", "*a", "a**", r"\q", "a{3,2}", r"(?P<1>a)",
                                     r"(?i)a(?L)", "a(?i)"])
def test_malformed_patterns_carry_re_message_and_position(pattern):
    with pytest.raises(RegexError) as info:
        parse_regex(pattern)
    with pytest.raises(re.error) as expected:
        re.compile(pattern)
    assert (info.value.msg, info.value.pos) == (expected.value.msg, expected.value.pos)


@pytest.mark.parametrize("pattern, pos", [
    (r"\p{L}(", 5), (r"\p{L}\p{N}[", 10), (r"\p{L}\q", 5), (r"\p{L}**", 6), (r"\p{Greek}\p", 9),
])
def test_malformed_positions_count_property_escapes_in_full(pattern, pos):
    with pytest.raises(RegexError) as info:
        parse_regex(pattern)
    assert info.value.pos == pos


def test_property_errors():
    with pytest.raises(RegexError) as info:
        parse_regex(r"ab\p{NoSuchProperty}")
    assert info.value.pos == 2 and "NoSuchProperty" in info.value.msg
    with pytest.raises(RegexError) as info:
        parse_regex(r"[a-\p{L}]")
    assert info.value.pos == 3
    parse_regex("(?x) a # \\p{NoSuchProperty} is a comment\n b")  # no error


def test_locale_flag_is_rejected():
    with pytest.raises(RegexError):
        parse_regex("a", re.LOCALE)
    with pytest.raises(RegexError):
        parse_regex("(?L)a")


# -------------------------------------------------------------------------------------------------
# speed
# -------------------------------------------------------------------------------------------------


def json_object_regex(n_keys: int) -> str:
    string = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
    number = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
    ws = r"[ \t\n\r]*"
    fields = []
    for k in range(n_keys):
        value = [string, number, r"(?:true|false)", r"null"][k % 4]
        fields.append(f'"key_{k}"{ws}:{ws}{value}')
    return r"\{" + ws + f"{ws},{ws}".join(fields) + ws + r"\}"


def test_a_2000_character_json_regex_parses_in_milliseconds():
    pattern = json_object_regex(26)
    assert len(pattern) > 2000
    parse_regex(pattern)  # warm the tables
    timings = []
    for _ in range(7):  # the best of several runs, so that a busy machine does not fail the test
        start = time.perf_counter()
        parse_regex(pattern)
        timings.append(time.perf_counter() - start)
    assert min(timings) < 0.05, timings


# construct, offset of the reported position within it
_NON_REGULAR = [
    ("(?=a)", 0), ("(?!a)", 0), ("(?<=a)", 0), ("(?<!a)", 0), ("(?>a|ab)", 0), ("(?(1)a|b)", 0),
    (r"\1", 0), ("(?P=h)", 0), ("a*+", 1), ("[*]++", 3), ("(?:ab){1,2}+", 6), ("a?+", 1),
]


@given(st.sampled_from(_NON_REGULAR), patterns, patterns, st.sampled_from(["", " # (?=x) [ \n"]))
def test_the_first_non_regular_construct_is_located(construct, left, right, comment):
    text, offset = construct
    verbose = "(?x)" if comment else ""
    prefix = verbose + "(?P<h>x)?" + (left if not left.startswith("(?") else "") + comment
    pattern = prefix + text + right
    assume(compiles(pattern))
    with pytest.raises(RegexError) as info:
        parse_regex(pattern)
    assert info.value.pos == len(prefix) + offset, (pattern, info.value.msg)
