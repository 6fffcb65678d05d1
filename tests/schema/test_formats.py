"""Format automata against jsonschema's FormatChecker (soundness) and lists of valid values."""

import datetime
import json
import random
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, strategies as st

from tokenfsm.schema.formats import FORMATS, HOSTNAME_GRIDS, format_dfa, hostname_exact

CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER
SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite"

VALID = {
    "date": ["2024-02-29", "2000-02-29", "1999-12-31", "0001-01-01", "9999-12-31", "2023-04-30"],
    "time": ["23:59:59Z", "00:00:00.123456+05:30", "12:34:56z", "08:30:06-08:00"],
    "date-time": ["1985-04-12T23:20:50.52Z", "1996-12-19T16:39:57-08:00", "2020-02-29t00:00:00z"],
    "duration": ["P4DT12H30M5S", "P1Y2M3D", "PT36H", "P2W", "PT0S", "P1M", "PT1M30S"],
    "email": ["joe.bloggs@example.com", "a+b@c.io", '"joe bloggs"@example.com', "x@[127.0.0.1]",
              "x@[IPv6:::1]", "te~st@example.com"],
    "hostname": ["example.com", "a.b-c.d", "localhost", "xn-abc.com", "a" * 63 + ".com",
                 ".".join(["abc"] * 30)],
    "ipv4": ["192.168.0.1", "0.0.0.0", "255.255.255.255", "10.0.100.9"],
    "ipv6": ["::1", "::", "1:2:3:4:5:6:7:8", "fe80::1", "::ffff:192.168.0.1", "1::",
             "1:2:3:4:5:6:7::", "ABCD:ef01::9", "::2:3:4:5:6:7:8"],
    "uuid": ["2eb8aa08-aa98-11ea-b4aa-73b441d16380", "2EB8AA08-AA98-11EA-B4AA-73B441D16380"],
    "uri": ["http://foo.bar/?baz=qux#quux", "urn:isbn:0451450523", "mailto:a@b.c",
            "http://[2001:db8::7]/c=GB?objectClass?one", "tel:+1-816-555-1212", "file:///x",
            "http://foo.com/%E2%82%AC", "ldap://[v1.fe]/x"],
    "uri-reference": ["/abc", "#frag", "", "../x?y", "http://x.y/z", "//host:80/p"],
    "json-pointer": ["", "/foo/0", "/a~1b", "/m~0n", "/ "],
}
INVALID = {
    "date": ["2023-02-29", "1900-02-29", "2024-04-31", "0000-01-01", "2024-1-01", "2024-13-01",
             "2024-01-01\n"],
    "time": ["24:00:00Z", "12:60:00Z", "23:59:60Z", "12:00:00", "12:00:00+24:00"],
    "date-time": ["1985-04-12 23:20:50Z", "1985-04-12T23:20:50"],
    "duration": ["P", "PT", "P1D2Y", "P1W1D", "1D", "PT1D"],
    "email": ["no-at-sign", "a@", "@b.com", "a..b@c.com", "a b@c.com"],
    "hostname": ["-a.com", "a-.com", "a..b", "", "a" * 64 + ".com", "xn--X", "ab--c.com",
                 "a_b.com"],
    "ipv4": ["256.0.0.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.04"],
    "ipv6": ["1:2:3:4:5:6:7:8:9", "::1::", "1:2:3:4:5:6:7", "12345::", "::1%eth0", ":1::",
             "::ffff:1.2.3.04"],
    "uuid": ["2eb8aa08aa9811eab4aa73b441d16380", "2eb8aa08-aa98-11ea-b4aa-73b441d1638"],
    "uri": ["//foo.bar/", "http://a b", "1http://x", "http://x/%zz", "\\\\host\\share"],
    "uri-reference": ["http://a b", "\\\\x", "#a#b"],
    "json-pointer": ["a", "/~2", "/~"],
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_examples(name):
    d = format_dfa(name)
    for s in VALID[name]:
        assert d.accepts(s), (name, s)
        assert CHECKER.conforms(s, name), (name, s)  # the list itself is right
    for s in INVALID[name]:
        assert not d.accepts(s), (name, s)


@given(name=st.sampled_from(sorted(FORMATS)), seed=st.integers(0, 2 ** 32),
       max_length=st.sampled_from([6, 20, 60]))
def test_sampled_strings_pass_jsonschema(name, seed, max_length):
    d = format_dfa(name)
    rng = random.Random(seed)
    for _ in range(4):
        s = d.sample(rng, max_length=max_length)
        assert CHECKER.conforms(s, name), (name, s)


def test_dates_match_the_calendar():
    d = format_dfa("date")
    for year in (1, 4, 100, 400, 1896, 1900, 1999, 2000, 2023, 2024, 2100, 2400, 9996, 9999):
        for month in range(1, 13):
            for day in range(1, 32):
                s = f"{year:04d}-{month:02d}-{day:02d}"
                try:
                    ok = bool(datetime.date.fromisoformat(s))
                except ValueError:
                    ok = False
                assert d.accepts(s) == ok, s


def test_hostname_grids_fit_the_length_limit():
    assert all(k * (m + 1) - 1 <= 253 for k, m in HOSTNAME_GRIDS)
    d = format_dfa("hostname")
    assert d.is_finite()
    assert not d.accepts(".".join(["a" * 63] * 4))  # 255 characters


@pytest.mark.slow
def test_hostname_default_is_inside_the_exact_language():
    exact = hostname_exact()
    assert format_dfa("hostname") <= exact
    assert exact.accepts(".".join(["a" * 49] * 5)) and exact.accepts("a." * 126 + "b")
    assert not exact.accepts(".".join(["a" * 63] * 4)) and not exact.accepts("a" * 64)


def test_unknown_format_is_none():
    assert format_dfa("no-such-format") is None


def _suite_cases():
    out = []
    folder = SUITE / "optional" / "format"
    for name in sorted(FORMATS):
        f = folder / f"{name}.json"
        for group in json.loads(f.read_text()):
            for test in group["tests"]:
                if isinstance(test["data"], str) and not test["valid"]:
                    out.append(pytest.param(name, test["data"], id=f"{name}:{test['description']}"))
    assert out, f"no format cases found under {SUITE}"
    return out


@pytest.mark.parametrize("name, data", _suite_cases())
def test_suite_invalid_strings_are_rejected(name, data):
    assert not format_dfa(name).accepts(data)
