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


def test_lowered_dfa_and_byte_dfa_round_trip():
    d = DFA.from_regex(r"[a-zé]+@[a-z]+\.(com|org)")
    b = d.to_bytes()  # kept on the DFA: the pickle carries it
    back, bb = pickle.loads(pickle.dumps((d, b)))
    assert back == d and back.accepts("adé@x.org")
    for name in ("byte_classes", "table", "accepting"):
        assert (getattr(bb, name) == getattr(b, name)).all()
    assert bb.start == b.start and bb.accepts("adé@x.org".encode()) and not bb.accepts(b"a@x.net")
    assert not bb.table.flags.writeable
