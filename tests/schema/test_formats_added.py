"""The later draft 2020-12 formats (relative-json-pointer, iri, iri-reference, uri-template,
idn-hostname, idn-email, regex) against jsonschema's FormatChecker, the JSON Schema Test Suite's
optional/format cases, and independent references (``re.fullmatch`` grammars, ``idna``, Python's
``re.compile`` and, where installed, Node's ``RegExp``)."""

import json
import random
import re
import shutil
import subprocess
import unicodedata
import warnings
from pathlib import Path

import idna
import jsonschema
import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.schema import SchemaWarning, UnsupportedSchema, compile_json_schema
from tokenfsm.schema.formats import (FORMATS, IDN_GRIDS, IDN_ONE_WIDE, REGEX_DEPTH, format_dfa,
                                     idn_safe_chars, idn_safe_marks, punycode_length_bound)

CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER
SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite" / "optional" / "format"
ADDED = ["relative-json-pointer", "iri", "iri-reference", "uri-template", "idn-hostname",
         "idn-email", "regex"]
NON_ASCII = DFA.from_regex(r"[\s\S]*[^\x00-\x7f][\s\S]*")

VALID = {
    "relative-json-pointer": ["0", "1", "0#", "12/a~1b", "0//", "10/x", "9#"],
    "iri": ["http://ƒøø.ßår/?∂éœ=πîx#πîüx", "urn:example:resource", "file:/etc/hosts",
            "http://[2001:db8:0:0:1:0:0::]/", "http://[v7.:x]", "mailto:a@b", "x:"],
    "iri-reference": ["", "/âππ", "âππ", "#ƒrägmênt", "//host", "?q", "../a/b"],
    "uri-template": ["", "http://example.com/dictionary/{term:1}/{term}", "{+var}", "{#x,y*}",
                     "{a.b}", "a%41b", "a😀b", "a'b", "{v:999}", "{x_1.y2%41}"],
    "idn-hostname": ["실례.테스트", "hostname", "a.b", "a\u3002b", "a\uff0eb", "a\uff61b",
                     "ßς\u0f0b\u3007", "例え.jp", "xn-abc", "EXAMPLE.com", "δοκιμή.example",
                     "l\u00b7l", "ll\u00b7l\u00b7ll", "\u03b1\u0375\u03b2", "\u30fb\u3041",
                     "a\u30fb\u4e08", "\u06f00", "\u092d\u093e\u0930\u0924", "a\u093e"],
    "idn-email": ["실례@실례.테스트", "joe.bloggs@example.com", "δοκιμή@example.com",
                  '"δοκιμή"@example.com', "\x85@example.com", "\uffff@example.com",
                  "𝕏@example.com", "a@[127.0.0.1]"],
    "regex": ["", "([abc])+\\s+$", "a|b|", "(?:x|y){2,5}?", "[^\\d\\-a-f]", "\\bfoo\\B",
              "\\u00e9\\x41", "^\\/\\.\\*$", "((((a))))", "é+ü*", "[0-9]{1,99}"],
}
INVALID = {
    "relative-json-pointer": ["", "/foo", "-1/a", "01/a", "0##", "1#/a", "100", "١/foo", "1\n"],
    "iri": ["/abc", "âππ", "http://[::1]", "http://[V1.fe]", "http://a/𐌀", "http://a b"],
    "iri-reference": ["\\\\WINDOWS\\filëßåré", "#ƒräg\\mênt", "a b", "%zz"],
    "uri-template": ["{}", "{a,,b}", "{v:0}", "{v:1000}", "{v:01}", "a b", "a\x7fb", "{a,}",
                     "{var=def}", "{,+var}", "foo}bar", "{a..b}", "{%41}", "{!a}", "%4"],
    "idn-hostname": ["", ".", "example.", "a..b", "-hello", "hello-", "\u0300hello",
                     "xn--X", "a_b", "a\u05d0", "a\u00b7l", "l\u00b7", "\u03b1\u0375S",
                     "\u03b1\u0375", "def\u30fbabc", "\u30fb", "\u00fc" * 12, "ÄB.com",
                     "a" * 64, "cafe\u0301", "\u0628\u0660\u06f0", "\u093ea", "a.\u0903b"],
    "idn-email": ["2962", "user\uff20example.com", "a@", "@b.com", "a..b@c.com", "a b@c.com"],
    "regex": ["^(abc]", "(", ")", "a**", "*a", "[]", "[^]", "\\a", "(?<n>x)", "(?P<n>x)",
              "(?=a)", "a{2,1}", "{", "\\1", "\\cA", "((((((a))))))", "[[]", "[a--b]"],
}


def test_checker_checks_these_formats():
    """The oracle is live: each checker library is installed and rejects something."""
    for name in ADDED:
        assert name in CHECKER.checkers, name
        assert not CHECKER.conforms(INVALID[name][0], name), name


@pytest.mark.parametrize("name", ADDED)
def test_examples(name):
    d = format_dfa(name)
    assert d is not None and name in FORMATS
    for s in VALID[name]:
        assert d.accepts(s), (name, s)
        assert CHECKER.conforms(s, name), (name, s)  # the list itself is right
    for s in INVALID[name]:
        assert not d.accepts(s), (name, s)


@given(name=st.sampled_from(ADDED), seed=st.integers(0, 2 ** 32),
       max_length=st.sampled_from([4, 12, 40, 120]), non_ascii=st.booleans())
def test_sampled_strings_pass_the_checker(name, seed, max_length, non_ascii):
    d = format_dfa(name)
    if non_ascii and name != "relative-json-pointer":
        d = _non_ascii(name)
    rng = random.Random(seed)
    for _ in range(5):
        s = d.sample(rng, max_length=max_length)
        assert CHECKER.conforms(s, name), (name, s)


_NON_ASCII_CACHE: dict = {}


def _non_ascii(name):
    if name not in _NON_ASCII_CACHE:
        _NON_ASCII_CACHE[name] = format_dfa(name) & NON_ASCII
    return _NON_ASCII_CACHE[name]


# ------------------------------------------------------------------ the test suite's cases

def _ascii_or_safe(label: str) -> bool:
    safe = idn_safe_chars() | idn_safe_marks()
    return all(c.isascii() or c in safe for c in label)


_IDN_DOTS = re.compile("[.\u3002\uff0e\uff61]")


def _idn_documented_miss(data: str) -> bool:
    """Host names outside the documented subset: an A-label, a character that needs a context
    rule or is right-to-left, or a U-label longer than the A-label bound allows."""
    labels = _IDN_DOTS.split(data)
    return any(lab.lower().startswith("xn--") or not _ascii_or_safe(lab)
               or (not lab.isascii() and punycode_length_bound(len(lab)) > 63) for lab in labels)


# valid strings the automaton may reject although the checker accepts them (documented subsets)
DOCUMENTED_MISSES = {
    "hostname": lambda s: any(lab.lower().startswith("xn--") for lab in s.split(".")),
    "idn-hostname": _idn_documented_miss,
    "idn-email": lambda s: _idn_documented_miss(s.rpartition("@")[2]),
}


def _suite_cases():
    out = []
    for f in sorted(SUITE.glob("*.json")):
        for group in json.loads(f.read_text()):
            name = group["schema"]["format"]
            if name not in FORMATS:
                continue
            for test in group["tests"]:
                if isinstance(test["data"], str):
                    out.append(pytest.param(name, test["data"], test["valid"],
                                            id=f"{f.stem}:{test['description']}"))
    assert len(out) > 500
    return out


@pytest.mark.parametrize("name, data, valid", _suite_cases())
def test_suite_case_is_judged_right(name, data, valid):
    """Accepted: the suite says valid and the checker agrees. Rejected although valid: the
    checker rejects it too, or it lies outside a documented subset."""
    accepted = format_dfa(name).accepts(data)
    if accepted:
        assert valid and CHECKER.conforms(data, name)
    elif valid:
        assert not CHECKER.conforms(data, name) or DOCUMENTED_MISSES[name](data)


def test_suite_pass_counts_for_the_added_formats():
    """At least these many of the suite's string cases are judged right (measured)."""
    right: dict[str, int] = {}
    for f in sorted(SUITE.glob("*.json")):
        for group in json.loads(f.read_text()):
            name = group["schema"]["format"]
            for test in group["tests"]:
                if name in ADDED and isinstance(test["data"], str):
                    ok = format_dfa(name).accepts(test["data"]) == test["valid"]
                    right[f.stem] = right.get(f.stem, 0) + ok
    assert right == {"ecmascript-regex": 6, "idn-email": 11, "idn-hostname": 72, "iri": 14,
                     "iri-reference": 7, "regex": 2, "relative-json-pointer": 18,
                     "uri-template": 30}


# ------------------------------------------------------------------ independent references

def _strings(alphabet: str, longest: int):
    yield ""
    level = [""]
    for _ in range(longest):
        level = [w + c for w in level for c in alphabet]
        yield from level


RJP = re.compile(r"(?:0|[1-9]+0?)(?:#|(?:/(?:[^/~]|~[01])*)*)")


def test_relative_json_pointer_exhaustive():
    d = format_dfa("relative-json-pointer")
    for s in _strings("01#/~a", 5):
        expected = bool(RJP.fullmatch(s)) and CHECKER.conforms(s, "relative-json-pointer")
        assert d.accepts(s) == expected, s
        if RJP.fullmatch(s) and not expected:  # only "a zero before a digit" separates them
            assert re.match(r"\d*0\d", s), s


_LIT = r"(?:[!#$&-;=?-\[\]_a-z~]|%[0-9A-Fa-f]{2})"
_NAME = r"[A-Za-z0-9_](?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*"
_SPEC = _NAME + r"(?::[1-9][0-9]{0,2}|\*)?"
TEMPLATE = re.compile(rf"(?:{_LIT}|\{{[+#./;?&]?{_SPEC}(?:,{_SPEC})*\}})*")


def test_uri_template_exhaustive_over_a_small_alphabet():
    d = format_dfa("uri-template")
    for s in _strings("{}a,:1*+%4. ", 4):
        assert d.accepts(s) == bool(TEMPLATE.fullmatch(s)), s
        if d.accepts(s):
            assert CHECKER.conforms(s, "uri-template"), s


@pytest.mark.parametrize("name", ["iri", "iri-reference", "uri-template", "idn-email"])
def test_mutations_of_accepted_strings_stay_sound(name):
    """Single-character edits of accepted strings: whatever the automaton still accepts, the
    checker accepts."""
    d = format_dfa(name)
    rng = random.Random(7)
    pool = "%:/?#[]@.!$&'()*+,;=~-_aZ09vVé€\U00010348\ue000 \\\"{}<>"
    for _ in range(150):
        s = list(d.sample(rng, max_length=rng.choice([8, 30])))
        i = rng.randrange(len(s) + 1)
        op = rng.randrange(3)
        if op == 0 or not s:
            s.insert(i, rng.choice(pool))
        elif op == 1:
            s[min(i, len(s) - 1)] = rng.choice(pool)
        else:
            del s[min(i, len(s) - 1)]
        w = "".join(s)
        if d.accepts(w):
            assert CHECKER.conforms(w, name), (name, w)


# ------------------------------------------------------------------ idn-hostname

def test_safe_characters_are_context_free_pvalid():
    safe = idn_safe_chars()
    assert len(safe) > 100_000 and not safe & CharSet.range(0, 0x7F)
    rng = random.Random(1)
    ranges = list(safe)
    for _ in range(1500):
        lo, hi = rng.choice(ranges)
        c = chr(rng.randint(lo, hi))
        assert unicodedata.bidirectional(c) == "L" and unicodedata.normalize("NFC", c) == c
        for w in (c, "a" + c + "b", c + c, "1-" + c):
            idna.encode(w)  # raises if not valid


def test_safe_marks_follow_any_safe_character():
    marks, safe = list(idn_safe_marks()), list(idn_safe_chars())
    assert sum(hi - lo + 1 for lo, hi in marks) > 1000 and not idn_safe_marks() & idn_safe_chars()
    rng = random.Random(8)
    for _ in range(1500):
        m = chr(rng.randint(*rng.choice(marks)))
        c = chr(rng.randint(*rng.choice(safe)))
        assert unicodedata.category(m).startswith("M") and not unicodedata.combining(m)
        for w in (c + m, "a" + m + m + c, c + m + "-" + m):
            idna.encode(w)
        with pytest.raises(idna.IDNAError):
            idna.encode(m + c)  # and the automaton never starts a label with one
        assert not format_dfa("idn-hostname").accepts(m + c)


def test_labels_of_safe_characters_encode_within_the_bound():
    safe = list(idn_safe_chars())
    extremes = [safe[0][0], safe[-1][1], safe[len(safe) // 2][0]]
    rng = random.Random(2)
    for _ in range(1500):
        n = rng.randint(1, 9)
        label = "".join(chr(rng.choice(extremes)) if rng.random() < 0.4
                        else rng.choice("ab9-") if rng.random() < 0.3
                        else chr(rng.randint(*rng.choice(safe))) for _ in range(n))
        label = label.strip("-") or "\u00df"
        if label[2:4] == "--" or label.isascii():
            continue
        encoded = idna.encode(label)
        assert len(encoded) <= punycode_length_bound(len(label)), label
    for _ in range(300):  # one non-ASCII character among many ASCII ones
        label = "".join(rng.choice("abz09") for _ in range(rng.randint(0, 40)))
        i = rng.randint(0, len(label))
        label = label[:i] + chr(rng.choice(extremes)) + label[i:]
        assert len(idna.encode(label)) <= punycode_length_bound(len(label), non_ascii=1), label


def test_contextual_characters_sampled_in_their_contexts():
    contextual = DFA.from_regex("[\\s\\S]*[\u00b7\u0375\u30fb\u06f0-\u06f9][\\s\\S]*")
    d = format_dfa("idn-hostname") & contextual
    rng = random.Random(6)
    for _ in range(300):
        s = d.sample(rng, max_length=rng.choice([3, 9, 30]))
        assert CHECKER.conforms(s, "idn-hostname"), s


def test_idn_hostname_limits():
    d = format_dfa("idn-hostname")
    u = "\u00df"
    assert d.accepts(u * 9) and not d.accepts(u * 10)  # 9 characters: bound 61 <= 63
    assert punycode_length_bound(9) <= 63 < punycode_length_bound(10)
    assert d.accepts(u * 9 + "a") and not d.accepts(u * 9 + "ab")
    one = "a" * (IDN_ONE_WIDE - 1) + u
    assert d.accepts(one) and d.accepts("a.b." + one) and not d.accepts("a" + one)
    assert not d.accepts("a.b.c." + one) and not d.accepts(one[:-2] + u + u)
    assert punycode_length_bound(IDN_ONE_WIDE, non_ascii=1) <= 63
    assert d.accepts(".".join([u * 9] * 3)) and not d.accepts(".".join([u * 9] * 4))
    assert d.accepts(".".join([u * 4] * 8)) and not d.accepts(".".join([u * 5] * 8))
    assert not d.accepts(".".join([u * 4] * 9)) and not d.accepts(".".join(["abc"] * 9))
    assert d.accepts(".".join(["a" * 63] * 3)) and not d.accepts(".".join(["a" * 63] * 4))
    assert all(k * (m + 1) - 1 <= 253 for k, m in IDN_GRIDS)
    assert not d.accepts("Ä.com") and d.accepts("ä.com") and d.accepts("A.com")


# ------------------------------------------------------------------ regex

def _compiles_in_python(p: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            re.compile(p)
        except (re.error, FutureWarning, DeprecationWarning):
            return False
    return True


def test_regex_samples_compile_in_python_without_warnings():
    d = format_dfa("regex")
    rng = random.Random(3)
    for _ in range(400):
        p = d.sample(rng, max_length=rng.choice([5, 20, 60]))
        assert _compiles_in_python(p), p


def test_regex_nesting_depth():
    d = format_dfa("regex")
    assert d.accepts("(" * (REGEX_DEPTH) + "a" + ")" * REGEX_DEPTH)
    assert d.accepts("(?:" * (REGEX_DEPTH) + "a|" + ")*" * REGEX_DEPTH)
    assert not d.accepts("(" * (REGEX_DEPTH + 1) + "a" + ")" * (REGEX_DEPTH + 1))
    assert not d.accepts("(a))(") and not d.accepts("(()")


def _node_rejects(patterns: list[str]) -> list:
    js = ("const ps = JSON.parse(require('fs').readFileSync(0, 'utf8')); const bad = [];"
          "for (const p of ps) { for (const f of ['', 'u']) {"
          "try { new RegExp(p, f); } catch (e) { bad.push([p, f, String(e)]); } } }"
          "console.log(JSON.stringify(bad));")
    out = subprocess.run(["node", "-e", js], input=json.dumps(patterns), capture_output=True,
                         text=True, timeout=120, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js for ECMA-262 RegExp")
def test_regex_samples_are_ecma262_with_and_without_u():
    d = format_dfa("regex")
    rng = random.Random(4)
    patterns = [d.sample(rng, max_length=rng.choice([5, 20, 60])) for _ in range(1000)]
    patterns += VALID["regex"]
    assert _node_rejects(patterns) == []


# ------------------------------------------------------------------ in the compiler

@pytest.mark.parametrize("name", ["relative-json-pointer", "uri-template", "iri", "regex"])
def test_compiled_schemas_sample_valid_instances(name):
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": name}},
              "required": ["v"]}
    cs = compile_json_schema(schema)
    rng = random.Random(5)
    for _ in range(40):
        jsonschema.validate(json.loads(cs.dfa.sample(rng, max_length=60)), schema,
                            format_checker=CHECKER)


def test_unknown_format_is_never_silent():
    schema = {"type": "string", "format": "no-such-format"}
    with pytest.raises(UnsupportedSchema, match="no-such-format"):
        compile_json_schema(schema)
    with pytest.warns(SchemaWarning, match="no-such-format"):
        cs = compile_json_schema(schema, strict=False)
    assert cs.accepts('"anything"')


# ------------------------------------------------------------------ long sweeps

@pytest.mark.slow
def test_every_safe_character_in_context():
    for lo, hi in idn_safe_chars():
        for cp in range(lo, hi + 1):
            c = chr(cp)
            idna.encode("a" + c + c + "0")
            idna.encode(c + "-" + c)
    for lo, hi in idn_safe_marks():
        for cp in range(lo, hi + 1):
            m = chr(cp)
            idna.encode("a" + m + m + "\u00df" + m)


@pytest.mark.slow
@pytest.mark.parametrize("name", ADDED)
def test_many_samples_pass_the_checker(name):
    rng = random.Random(11)
    for d in (format_dfa(name), _non_ascii(name) if name != "relative-json-pointer" else None):
        if d is None:
            continue
        for _ in range(800 if name.startswith("iri") else 3000):  # the IRI checker is slow
            s = d.sample(rng, max_length=rng.choice([5, 20, 60, 150]))
            assert CHECKER.conforms(s, name), (name, s)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js for ECMA-262 RegExp")
def test_many_regex_samples_are_ecma262():
    d = format_dfa("regex")
    rng = random.Random(12)
    patterns = [d.sample(rng, max_length=rng.choice([5, 20, 60, 200])) for _ in range(20000)]
    assert _node_rejects(patterns) == []
    assert all(_compiles_in_python(p) for p in patterns)
