"""Helpers the kernels share, against what they stand in for."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenfsm.masks import kernels


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2 ** 63), 2 ** 63 - 1) | st.integers(0, 5), max_size=300))
def test_stable_order_is_numpys_stable_argsort(keys):
    """Runs of every length around the insertion runs and the merges, ties in their order."""
    a = np.array(keys, dtype=np.int64)
    assert kernels._stable_order(a).tolist() == np.argsort(a, kind="stable").tolist()
