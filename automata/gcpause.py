"""Pausing Python's cyclic garbage collector while large automata are built.

Building a schema's automata allocates millions of small containers (table rows, state sets,
partition blocks) that stay alive until the construction ends. Each allocation counts towards the
collector's thresholds, so it keeps running full collections that traverse every one of them and
free nothing: on a Kubernetes schema with 600 definitions a quarter of the compile time went there.
The constructions create almost no reference cycles (their garbage is freed by reference counting
as it goes), so :func:`gc_paused` switches the automatic collector off for their duration and back
on afterwards.

What the construction keeps (its automata, the caches) is long-lived: when the pause ends it is
moved to the oldest generation as it is (``gc.freeze()`` then ``gc.unfreeze()``), so the first
collection afterwards does not walk all of it, unless the caller has frozen objects of its own.

The pause nests and is shared between threads: the collector is disabled on the first entry and
re-enabled when the last one leaves, and only if it was enabled at the first entry (a caller that
disabled it keeps it disabled). ``gc.collect()`` still works inside.

Example
-------
>>> import gc
>>> with gc_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import functools
import gc
import threading
from contextlib import contextmanager

__all__ = ["gc_paused", "gc_paused_call"]

_lock = threading.Lock()
_depth = 0
_restore = False


@contextmanager
def gc_paused():
    """A context in which the automatic cyclic garbage collector does not run."""
    global _depth, _restore
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _restore:
                if not gc.get_freeze_count():
                    # what the pause allocated and kept is long-lived (automata, caches): moved
                    # to the oldest generation at once rather than by a first collection that
                    # walks all of it (half a second after a 600-definition schema); a caller's
                    # own frozen objects are left alone
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()


def gc_paused_call(fn):
    """Decorator: ``fn`` runs inside :func:`gc_paused`."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with gc_paused():
            return fn(*args, **kwargs)
    return wrapper
