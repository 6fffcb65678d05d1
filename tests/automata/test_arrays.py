"""The stable-sort answers of :mod:`tokenfsm.automata.arrays` are the ``np.unique`` calls they
stand for."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tokenfsm.automata.arrays import unique_inverse, unique_rows

_ints = st.sampled_from([np.int32, np.int64, np.uint8])


@settings(max_examples=300, deadline=None)
@given(_ints.flatmap(lambda t: hnp.arrays(t, st.integers(0, 60),
                                          elements=st.integers(0, 6))))
def test_unique_inverse_is_np_unique(values):
    got = unique_inverse(values)
    assert got.dtype == np.int64
    assert got.tolist() == np.unique(values, return_inverse=True)[1].tolist()


@settings(max_examples=300, deadline=None)
@given(_ints.flatmap(lambda t: hnp.arrays(
    t, st.tuples(st.integers(0, 40), st.integers(1, 5)), elements=st.integers(0, 3))))
def test_unique_rows_is_np_unique_by_rows(a):
    first, inverse = unique_rows(a)
    _, want_first, want_inverse = np.unique(a, axis=0, return_index=True, return_inverse=True)
    assert first.tolist() == want_first.tolist()
    assert inverse.tolist() == want_inverse.reshape(-1).tolist()


def test_signed_rows_sort_as_numbers():
    a = np.array([[-1, 5], [2, -7], [-1, 4], [2, -7]], dtype=np.int64)
    first, inverse = unique_rows(a)
    assert first.tolist() == [2, 0, 1] and inverse.tolist() == [1, 2, 0, 2]
