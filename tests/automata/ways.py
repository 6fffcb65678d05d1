"""Walking the tables of ways that modules of ``tokenfsm.automata`` declare next to their
reference (``minimize.MINIMIZERS``, ``dfa.PRODUCTS``, ``bytedfa.LOWERINGS`` ...): every entry is
run on the same input and compared with the reference entry's result, so that a way added to a
table is tested by the tests that already walk it.
"""

from __future__ import annotations

from tokenfsm.automata import minimize as mz


def every_way(ways: dict, reference: str, *args, **kwargs):
    """``(want, got)``: the reference entry's result on ``args`` and ``kwargs``, and every entry's
    result by name (the reference's included)."""
    got = {name: way(*args, **kwargs) for name, way in ways.items()}
    return got[reference], got


def minimized_every_way(delta, accepting, start):
    """The minimisation of a (list) table by every way of ``minimize.MINIMIZERS``, each checked
    equal to the reference's; a way may step aside (None) only where it does not apply: state 0
    not a dead state, a single state, or more than 62 symbols. Returns the reference's result."""
    want, got = every_way(mz.MINIMIZERS, mz.MINIMIZER_REFERENCE, delta, accepting, start)
    assert want is not None
    dead0 = 0 not in accepting and not any(delta[0])
    for name, result in got.items():
        if result is None:
            assert not dead0 or len(delta) < 2 or len(delta[0]) > 62, name
        else:
            assert result == want, name
    return want
