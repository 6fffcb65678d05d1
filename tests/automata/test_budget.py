"""Budgets: constructions that would blow up stop early with BudgetExceeded and its numbers."""

from __future__ import annotations

import pickle
import time
import tracemalloc

import pytest

from tokenfsm.automata import DFA, Budget, BudgetExceeded, CharSet
from tokenfsm.automata.regex_ast import Chars, Repeat, Seq

ANY = DFA.from_charset(CharSet.any())
MARKERS = ["<|open|>", "</parameter>", "<tool_call>", "。。", "😀😀", "\n\n\n", "```", "\\u0000"]


def test_bounded_any_times_exclusions_hits_a_small_budget_quickly():
    bounded = ANY.repeat(0, 2000)                       # [\s\S]{0,2000}
    assert bounded.num_states == 2001
    excl = DFA.excluding(MARKERS)
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(BudgetExceeded) as e:
        bounded.intersect(excl, budget=Budget(max_states=500))
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    err = e.value
    assert (err.limit, err.reached, err.operation, err.kind) == (500, 501, "intersect", "states")
    assert "intersect" in str(err) and "500" in str(err) and "501" in str(err)
    assert elapsed < 1.0
    assert peak < 20_000_000
    # a shorter bound fits a larger budget and is what it should be
    ok = ANY.repeat(0, 100).intersect(excl, budget=Budget(max_states=20_000))
    assert ok.num_states > 500
    assert ok.accepts("x" * 100) and not ok.accepts("x" * 101) and not ok.accepts("a<|open|>")
    assert ok.accepts("<|open|" * 14) and not ok.accepts("😀" * 2)


@pytest.mark.parametrize("op", ["intersect", "union", "difference", "symmetric_difference"])
def test_every_product_is_budgeted(op):
    a = ANY.repeat(0, 300)
    b = DFA.excluding(["ab", "ba", "xyz"])
    with pytest.raises(BudgetExceeded) as e:
        getattr(a, op)(b, budget=Budget(max_states=50))
    assert (e.value.limit, e.value.reached, e.value.operation) == (50, 51, op)


def test_determinize_and_regular_operations_are_budgeted():
    ab = Chars(CharSet.range("a", "b"))
    # (a|b)*a(a|b){12}: 2**13 states
    node = Seq((Repeat(ab, 0, None), Chars(CharSet.of("a")), Repeat(ab, 12, 12)))
    with pytest.raises(BudgetExceeded) as e:
        DFA.from_ast(node, budget=Budget(max_states=1000))
    assert (e.value.limit, e.value.reached, e.value.operation) == (1000, 1001, "determinize")
    d = DFA.from_ast(Seq((Repeat(ab, 0, None), Chars(CharSet.of("a")), Repeat(ab, 4, 4))))
    for name, call in [("repeat", lambda: d.repeat(2, 3, budget=Budget(max_states=40))),
                       ("concat", lambda: d.concat(d, budget=Budget(max_states=40))),
                       ("reverse", lambda: d.reverse(budget=Budget(max_states=3))),
                       ("union", lambda: DFA.union_all([d, d.reverse()], budget=Budget(max_states=20)))]:
        with pytest.raises(BudgetExceeded) as e:
            call()
        assert e.value.operation == name and e.value.reached == e.value.limit + 1


def test_time_budget():
    bounded = ANY.repeat(0, 5000)
    excl = DFA.excluding(MARKERS)
    t0 = time.perf_counter()
    with pytest.raises(BudgetExceeded) as e:
        bounded.intersect(excl, budget=Budget(max_states=10_000_000, max_seconds=0.05))
    elapsed = time.perf_counter() - t0
    err = e.value
    assert err.kind == "seconds" and err.limit == 0.05 and err.operation == "intersect"
    assert err.reached >= 0.05
    assert "time budget" in str(err)
    assert elapsed < 2.0


def test_budget_validation_and_pickling():
    for bad in (dict(max_states=0), dict(max_states=1.5), dict(max_seconds=0), dict(max_seconds=-1)):
        with pytest.raises(ValueError):
            Budget(**bad)
    err = BudgetExceeded(10, 11, "intersect").with_pointer("/properties/a")
    back = pickle.loads(pickle.dumps(err))
    assert (back.limit, back.reached, back.operation, back.pointer) == (10, 11, "intersect", "/properties/a")
    assert "/properties/a" in str(back)
