"""Output for people: to_rules, rule_count, to_dot."""

from __future__ import annotations

import re

from hypothesis import given

from oracles import automata, fewer
from tokenfsm.automata import DFA, CharSet, refine


def test_rules_and_dot_exact_small():
    d = DFA.from_regex("a[a-c]*")
    assert d.to_rules() == 'S1 ::= "a" S2\nS2 ::= [a-c] S2 | ε'
    assert d.rule_count == 3
    assert d.to_dot() == "\n".join([
        "digraph DFA {",
        "  rankdir=LR;",
        "  node [shape=circle];",
        "  __start [shape=point];",
        "  S1 [shape=circle];",
        "  S2 [shape=doublecircle];",
        "  __start -> S1;",
        '  S1 -> S2 [label="\\"a\\""];',
        '  S2 -> S2 [label="[a-c]"];',
        "}",
    ])


def test_rules_and_dot_exact_unicode():
    d = DFA.from_regex("(é|\\n)😀")
    assert d.to_rules() == 'S1 ::= [\\né] S2\nS2 ::= "😀" S3\nS3 ::= ε'
    assert d.rule_count == 3
    dot = d.to_dot()
    assert '  S1 -> S2 [label="[\\\\né]"];' in dot.splitlines()
    assert '  S2 -> S3 [label="\\"😀\\""];' in dot.splitlines()
    assert "  S3 [shape=doublecircle];" in dot.splitlines()


def test_rules_of_trivial_languages():
    assert DFA.empty().to_rules() == "S1 ::= ∅" and DFA.empty().rule_count == 0
    assert "->" not in DFA.empty().to_dot()
    assert DFA.epsilon().to_rules() == "S1 ::= ε" and DFA.epsilon().rule_count == 1
    assert DFA.universal().to_rules() == "S1 ::= [\\s\\S] S1 | ε" and DFA.universal().rule_count == 2
    assert DFA.from_charset(~CharSet.of("a")).to_rules() == "S1 ::= [^a] S2\nS2 ::= ε"


def _parse_rules(text: str) -> DFA:
    """Rebuild an automaton from to_rules() text: each alternative is a quoted character or a
    regex class (read with DFA.from_regex) and a target state."""
    trans, accepting = {}, set()
    for line in text.splitlines():
        m = re.fullmatch(r"S(\d+) ::= (.*)", line)
        s = int(m.group(1))
        trans[s] = []
        for alt in m.group(2).split(" | "):
            if alt == "ε":
                accepting.add(s)
                continue
            sym, target = alt.rsplit(" S", 1)
            if len(sym) == 3 and sym[0] == sym[2] == '"':
                cs = CharSet.of(sym[1])
            else:
                one = DFA.from_regex(sym)
                cs = CharSet([r for c, k in enumerate(one.classes)
                              if one.delta[one.start][c] in one.accepting for r in k.ranges])
            trans[s].append((cs, int(target)))
    n = max(trans) + 1
    classes = refine([cs for out in trans.values() for cs, _ in out])
    delta = [[0] * len(classes) for _ in range(n)]
    for s, out in trans.items():
        for cs, t in out:
            for c, k in enumerate(classes):
                if k.min() in cs:
                    delta[s][c] = t
    return DFA.from_parts(classes, delta, accepting, 1)


@fewer(2)
@given(automata())
def test_rules_describe_the_automaton(a):
    d, _ = a
    text = d.to_rules()
    if d.is_empty():
        assert text == "S1 ::= ∅"
        return
    lines = text.splitlines()
    assert len(lines) == d.minimize().num_states
    alts = sum(len(line.split(" ::= ")[1].split(" | ")) for line in lines)
    assert d.rule_count == alts
    assert _parse_rules(text) == d


@given(automata())
def test_dot_structure(a):
    d, _ = a
    lines = d.to_dot().splitlines()
    assert lines[0] == "digraph DFA {" and lines[-1] == "}"
    nodes = [x for x in lines if re.fullmatch(r"  S\d+ \[shape=(double)?circle\];", x)]
    edges = [x for x in lines if re.fullmatch(r'  S\d+ -> S\d+ \[label=".*"\];', x)]
    starts = [x for x in lines if x.startswith("  __start -> ")]
    m = d.minimize()
    assert len(nodes) == m.num_states
    assert sum("doublecircle" in x for x in nodes) == len(m.accepting)
    assert len(edges) == d.rule_count - len(m.accepting)
    assert len(starts) == (0 if d.is_empty() else 1)


def test_viable_prefix_length_against_a_naive_completion_check():
    d = DFA.from_regex(r"ab+c")
    for text, want in [("", 0), ("a", 1), ("abbc", 4), ("abx", 2), ("x", 0), ("abcc", 3)]:
        assert d.viable_prefix_length(text) == want, text
    assert DFA.empty().viable_prefix_length("a") == 0
