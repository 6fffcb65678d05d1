"""The collector pause around automaton constructions: nesting, threads, errors, and the schema
compiler running inside it."""

import gc
import threading

import pytest

from tokenfsm.automata.gcpause import gc_paused, gc_paused_call


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_restored_after():
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


def test_restored_after_an_exception():
    with pytest.raises(KeyError):
        with gc_paused():
            raise KeyError("x")
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_decorator_keeps_the_name_and_the_result():
    @gc_paused_call
    def f(x, y=1):
        """doc"""
        return x + y, gc.isenabled()

    assert f(2, y=3) == (5, False)
    assert f.__name__ == "f" and f.__doc__ == "doc"
    assert gc.isenabled()


def test_threads_overlapping_pauses():
    """The collector comes back only when the last of several overlapping pauses ends."""
    inside = threading.Barrier(3)
    leave_first = threading.Event()
    first_left = threading.Event()
    seen = {}

    def first():
        with gc_paused():
            inside.wait()
            leave_first.wait()
        first_left.set()

    def second():
        with gc_paused():
            inside.wait()
            first_left.wait()
            seen["after first left"] = gc.isenabled()

    ts = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in ts:
        t.start()
    inside.wait()
    seen["both inside"] = gc.isenabled()
    leave_first.set()
    for t in ts:
        t.join()
    assert seen == {"both inside": False, "after first left": False}
    assert gc.isenabled()


def test_schema_compilation_runs_paused(monkeypatch):
    from tokenfsm.schema import compile_json_schema, compiler
    from tokenfsm.schema.lower import Lowering

    states = []
    real = Lowering.lower

    def spy(self, node):
        states.append(gc.isenabled())
        return real(self, node)

    monkeypatch.setattr(Lowering, "lower", spy)
    cs = compile_json_schema({"type": "object", "properties": {"a": {"type": "integer"}}})
    assert cs.accepts('{"a": 1}')
    assert states and not any(states)
    assert gc.isenabled()
    with pytest.raises(compiler.SchemaError):
        compile_json_schema({"type": "no such type"})
    assert gc.isenabled()


def test_kept_objects_go_to_the_oldest_generation():
    """What a pause allocated and kept skips the young generations; nothing stays frozen."""
    gc.collect()
    with gc_paused():
        kept = [[i] for i in range(5000)]
    assert gc.get_freeze_count() == 0
    young = {id(o) for o in gc.get_objects(generation=0)}
    assert not any(id(x) in young for x in kept)
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(x) in oldest for x in kept)


def test_a_callers_frozen_objects_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            kept = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
        assert gc.isenabled() and len(kept) == 100
    finally:
        gc.unfreeze()


def test_what_a_minimal_automaton_keeps_the_collector_drops():
    """The tables an automaton keeps for later use (its segments, its groups, the covers of a
    partition) are tuples of ints: a collection stops tracking them, so that the automata held in
    caches do not lengthen every full collection of a serving process."""
    from tokenfsm.automata import DFA
    from tokenfsm.automata.nfa import _partitions

    d = (DFA.from_regex("[a-c]+x|y{2,4}") | DFA.from_regex("[^q]z")).minimize()
    gc.collect()
    gc.collect()       # (a tuple of tuples is dropped once the inner ones are)
    kept = [d._segs, d._starts, d._seg_class]
    assert d._groups is not None
    kept += list(d._groups)
    for _, cover in _partitions.values():
        kept += [c for c, _ in cover.values()]
    assert kept and not [x for x in kept if gc.is_tracked(x)]
