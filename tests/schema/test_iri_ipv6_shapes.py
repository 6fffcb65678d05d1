"""IRI hosts in brackets: every IPv6 shape (groups left and right of ``::``, with and without a
dotted IPv4 tail) against the format checker, for ``iri`` and ``iri-reference``."""

import json

import pytest
from jsonschema import FormatChecker

from tokenfsm.schema import compile_json_schema

CHECKER = FormatChecker()


def _hosts():
    groups = ["1", "ab", "250", "ffff", "0", "D8"]
    for total in range(0, 10):
        g = [groups[i % len(groups)] for i in range(total)]
        yield ":".join(g)
        yield ":".join(g + ["1.2.3.4"])
        for left in range(0, total + 1):
            yield ":".join(g[:left]) + "::" + ":".join(g[left:])
            yield ":".join(g[:left]) + "::" + ":".join(g[left:] + ["10.0.0.255"])
            yield ":".join(g[:left]) + "::" + ":".join(g[left:]) + "::"


@pytest.mark.parametrize("fmt,prefix", [("iri-reference", "//"), ("iri", "http://")])
def test_bracketed_ipv6_hosts_match_the_checker(fmt, prefix):
    cs = compile_json_schema({"type": "string", "format": fmt}, whitespace=0)
    hosts = list(_hosts())
    verdicts = {(h, cs.accepts(json.dumps(prefix + "[" + h + "]/p"))) for h in hosts}
    expected = {(h, CHECKER.conforms(prefix + "[" + h + "]/p", fmt)) for h in hosts}
    assert verdicts == expected
    assert sum(ok for _, ok in expected) >= 16  # the shapes the checker accepts are exercised
