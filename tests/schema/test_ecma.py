"""ECMA-262 patterns against the ``regex`` module on hand-translated equivalents, hand-written
ECMA cases, and the JSON Schema Test Suite's pattern files (when the corpora are present)."""

import json
import random
from pathlib import Path

import pytest
import regex
from hypothesis import given, strategies as st

from tokenfsm.automata.errors import RegexError
from tokenfsm.schema.ecma import ecma_pattern_dfa, parse_ecma

SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite"

ASCII_WORD = "[A-Za-z0-9_]"
PY_SPACE = "[\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
PY_BOUNDARY = (f"(?:(?<={ASCII_WORD})(?!{ASCII_WORD})|(?<!{ASCII_WORD})(?={ASCII_WORD}))")
PY_NOT_BOUNDARY = (f"(?:(?<={ASCII_WORD})(?={ASCII_WORD})|(?<!{ASCII_WORD})(?!{ASCII_WORD}))")

# (ECMA spelling, Python `regex` spelling) of atoms
ATOMS = [
    ("a", "a"), ("b", "b"), ("\\d", "[0-9]"), ("\\D", "[^0-9]"), ("\\w", ASCII_WORD),
    ("\\W", "[^A-Za-z0-9_]"), ("\\s", PY_SPACE), ("\\S", "[^" + PY_SPACE[1:]),
    (".", "[^\\n\\r\\u2028\\u2029]"), ("[^]", "[\\s\\S]"), ("[]", "(?!)"), ("[a-c]", "[a-c]"),
    ("[^a]", "[^a]"), ("\\u0041", "A"), ("\\x41", "A"), ("\\cJ", "\\n"), ("\\u{1F600}", "\U0001F600"),
    ("\\uD83D\\uDE00", "\U0001F600"), ("\\p{Lu}", "\\p{Lu}"), ("\\P{L}", "\\P{L}"), ("\\n", "\\n"),
    ("{", "\\{"), ("]", "\\]"), ("\\.", "\\."), ("[\\w-.]", "[A-Za-z0-9_.\\-]"), ("\\/", "/"),
    ("[\\b]", "\\x08"), ("\\0", "\\x00"), ("[\\]a]", "[\\]a]"), ("\\p{Script=Greek}", "\\p{Script=Greek}"),
]
ASSERTIONS = [("^", "^"), ("$", "\\Z"), ("\\b", PY_BOUNDARY), ("\\B", PY_NOT_BOUNDARY)]


@st.composite
def patterns(draw, depth=0):
    kind = draw(st.sampled_from(["atom"] * 4 + ["assert"] + (["seq", "alt", "rep", "group"]
                                                              if depth < 3 else [])))
    if kind == "atom":
        return draw(st.sampled_from(ATOMS))
    if kind == "assert":
        return draw(st.sampled_from(ASSERTIONS))
    if kind in ("seq", "alt"):
        parts = draw(st.lists(patterns(depth + 1), min_size=2, max_size=3))
        if kind == "seq":
            return "".join(p[0] for p in parts), "".join(p[1] for p in parts)
        return ("(?:" + "|".join(p[0] for p in parts) + ")",
                "(?:" + "|".join(p[1] for p in parts) + ")")
    if kind == "group":
        e, p = draw(patterns(depth + 1))
        return draw(st.sampled_from(["(%s)", "(?:%s)", "(?<name>%s)"])) % e, "(?:%s)" % p
    e, p = draw(st.sampled_from(ATOMS))
    q = draw(st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "+?", "{1,2}?"]))
    return "(?:" + e + ")" + q, "(?:" + p + ")" + q


ALPHABET = list("ab0_ -\n\r.AZ{}]\t/\x00\x08") + ["\u2028", "\xa0", "\u00e9", "\U0001F600", "\u03b1"]


@given(pat=patterns(), strings=st.lists(st.text(st.sampled_from(ALPHABET), max_size=6), max_size=12),
       seed=st.integers(0, 2 ** 32))
def test_random_patterns_agree_with_regex_search(pat, strings, seed):
    ecma, py = pat
    d = ecma_pattern_dfa(ecma)
    compiled = regex.compile(py)
    for s in strings:
        assert d.accepts(s) == bool(compiled.search(s)), (ecma, py, s)
    if not d.is_empty():
        rng = random.Random(seed)
        for _ in range(3):
            s = d.sample(rng, max_length=12)
            assert compiled.search(s), (ecma, py, s)


# (pattern, matching strings, non-matching strings), written from ECMA-262
CASES = [
    ("^abc$", ["abc"], ["abc\n", "xabc"]),
    ("a+", ["xaay", "a"], ["", "b"]),
    ("^\\d+$", ["0123"], ["\u0663", "1a"]),
    ("\\wcole", ["Ecole"], ["\u00e9cole"]),
    ("\\p{Letter}cole", ["\u00e9cole"], ["1cole"]),
    ("^\\p{digit}+$", ["\u0663\u0664"], ["a"]),
    ("^\\s$", ["\u2029", "\ufeff", "\u00a0", "\u000b"], ["\u180e", "\u001c", "a"]),
    ("^.$", ["\u0085", "a"], ["\n", "\r", "\u2028", "\u2029"]),
    ("^[^]$", ["\n"], ["", "ab"]),
    ("^[]$", [], ["", "a"]),
    ("^\\cC$", ["\x03"], ["C"]),
    ("^\\cc$", ["\x03"], ["c"]),
    ("^a{2}$", ["aa"], ["a", "aaa"]),
    ("^a{,2}$", ["a{,2}"], ["aa"]),
    ("^x{$", ["x{"], ["x"]),
    ("^}]$", ["}]"], []),
    ("\\bfoo\\b", ["a foo.", "foo"], ["foobar", "foox"]),
    ("\\Bfoo", ["xfoo"], ["foo", " foo"]),
    ("^\\B$", [""], ["a"]),
    ("^[\\d-z]+$", ["1-z"], ["a"]),
    ("^(?<year>\\d{4})-(?:\\d\\d)$", ["2024-01"], ["2024-1"]),
    ("^a*?b+?$", ["aab"], ["ba"]),
    ("^\\u{1F432}*$", ["\U0001F432\U0001F432", ""], ["\U0001F433"]),
    ("^\ud83d\udc32*$", ["\U0001F432"], ["x"]),
    ("^[\\u0041-\\u0043]$", ["B"], ["D"]),
    ("^\\/\\-$", ["/-"], []),
    ("^[\\w\\_\\~]+@\\_$", ["a_~@_"], ["a@", "a@\\_"]),   # (Annex B identity escapes)
    ("^\\p{Script=Greek}+$", ["\u03b1\u03b2"], ["a"]),
    ("^\\P{L}$", ["1"], ["a"]),
    ("^[\\p{Lu}\\d]+$", ["A1"], ["a"]),
    ("^\\0$", ["\x00"], ["0"]),
    ("a|^$", ["", "ba"], ["b"]),
]


@pytest.mark.parametrize("pattern, good, bad", CASES)
def test_hand_written_ecma_cases(pattern, good, bad):
    d = ecma_pattern_dfa(pattern)
    for s in good:
        assert d.accepts(s), (pattern, s)
    for s in bad:
        assert not d.accepts(s), (pattern, s)


@pytest.mark.parametrize("pattern, construct", [
    ("(a)\\1", "back-reference"), ("\\k<x>", "back-reference"), ("(?=a)", "look-ahead"),
    ("(?!a)", "look-ahead"), ("(?<=a)b", "look-behind"), ("(?<!a)b", "look-behind"),
    ("a**", "nothing to repeat"), ("*a", "nothing to repeat"), ("^*", "nothing to repeat"),
    ("\\a", "unknown escape"), ("(?i)a", "group syntax"), ("[b-a]", "out of order"),
    ("(a", "missing ')'"), ("a)", "unmatched ')'"), ("[a", "missing ']'"), ("\\p{NoSuch}", "property"),
    ("x{3,1}", "out of order"), ("\\", "backslash"), ("\\x4", "hex"), ("\\u12", "hex"),
    ("\\c1", "\\c"), ("\\01", "octal"),
])
def test_errors_name_the_construct_and_position(pattern, construct):
    with pytest.raises(RegexError) as info:
        parse_ecma(pattern)
    assert construct in str(info.value)
    assert info.value.pos is not None and 0 <= info.value.pos <= len(pattern)


def _suite_pattern_cases():
    files = [SUITE / "pattern.json", SUITE / "optional" / "ecmascript-regex.json",
             SUITE / "optional" / "non-bmp-regex.json"]
    out = []
    for f in files:
        for group in json.loads(f.read_text()):
            pattern = group["schema"].get("pattern")
            if pattern is None:
                continue
            for test in group["tests"]:
                if isinstance(test["data"], str):
                    out.append(pytest.param(pattern, test["data"], test["valid"],
                                            id=f"{f.stem}:{test['description']}"))
    assert out, f"no pattern cases found under {SUITE}"
    return out


@pytest.mark.parametrize("pattern, data, valid", _suite_pattern_cases())
def test_json_schema_test_suite_patterns(pattern, data, valid):
    assert ecma_pattern_dfa(pattern).accepts(data) == valid
