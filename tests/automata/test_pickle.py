"""Automata pieces survive pickling (worker processes, caches on disk)."""

import pickle

from hypothesis import given

from tokenfsm.automata import DFA
from tokenfsm.automata.charset import CharSet

from oracles import charsets


@given(charsets())
def test_charset_round_trip(cs):
    back = pickle.loads(pickle.dumps(cs))
    assert back == cs and hash(back) == hash(cs) and back.ranges == cs.ranges
    assert isinstance(back, CharSet)


def test_dfa_tables_round_trip():
    d = DFA.from_regex(r"[a-z]+@[a-z]+\.(com|org)")
    classes, delta = pickle.loads(pickle.dumps((d.classes, d.delta)))
    again = DFA.from_parts(classes, delta, d.accepting, d.start)
    assert again.equivalent(d) and again.accepts("ada@x.org") and not again.accepts("ada@x.net")
