"""Products built from the operands' (target, class bit set) groups (``DFA._product_groups``).

Oracle: the cell-by-cell product of the same operands with their groups hidden, which must give
the identical canonical table, and membership by the operands' own oracles.
"""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from oracles import automata, fewer, points_of
from tokenfsm.automata import DFA

OPS = ["intersect", "difference", "union", "symmetric_difference"]
ACCEPT = {"intersect": lambda x, y: x and y, "difference": lambda x, y: x and not y,
          "union": lambda x, y: x or y, "symmetric_difference": lambda x, y: x != y}


def without_groups(d: DFA) -> DFA:
    return DFA(d.classes, d.delta, d.accepting, d.start)


def same(a: DFA, b: DFA) -> bool:
    return (a.classes == b.classes and a.delta == b.delta and a.accepting == b.accepting
            and a.start == b.start)


@fewer(2)
@given(automata(), automata(), st.sampled_from(OPS), st.data())
def test_group_product_equals_cell_product(a, b, op, data):
    x, y = a[0].minimize(), b[0].minimize()
    assume(x._groups is not None and y._groups is not None)   # the group path is taken
    got = getattr(x, op)(y)
    want = getattr(without_groups(x), op)(without_groups(y))
    assert same(got, want)
    assert got._minimal
    alphabet = points_of(list(x.classes) + list(y.classes))
    for _ in range(20):
        s = "".join(data.draw(st.lists(st.sampled_from(alphabet), max_size=5)))
        assert got.accepts(s) == ACCEPT[op](a[1](s), b[1](s))
