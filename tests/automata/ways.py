"""Walking ``minimize.MINIMIZERS``, the table of ways to minimise a table that the module declares
next to its reference: every entry is run on the same table and compared with the reference
entry's result, so that a way added to the table is tested by every test that walks it.
"""

from __future__ import annotations

from tokenfsm.automata import minimize as mz


def minimized_every_way(delta, accepting, start):
    """The minimisation of a (list) table by every way of ``minimize.MINIMIZERS``, each checked
    equal to the reference's; a way may step aside (None) only where it does not apply: state 0
    not a dead state, a single state, or more than 62 symbols. Returns the reference's result."""
    want = mz.MINIMIZERS[mz.MINIMIZER_REFERENCE](delta, accepting, start)
    assert want is not None
    dead0 = 0 not in accepting and not any(delta[0])
    for name, way in mz.MINIMIZERS.items():
        if name == mz.MINIMIZER_REFERENCE:
            continue
        got = way(delta, accepting, start)
        if got is None:
            assert not dead0 or len(delta) < 2 or len(delta[0]) > 62, name
        else:
            assert got == want, name
    return want
