"""Conversion to and from interegular's FSMs.

interegular (used by outlines and others) labels transitions with single characters plus an
``anything_else`` symbol for every character it does not list. Going from interegular to a
:class:`~.dfa.DFA` is exact. Going back lists every character of every class except the largest,
which becomes ``anything_else``; a class of more than ``max_listed`` characters otherwise is an
error rather than a silent approximation.

Example
-------
>>> import interegular
>>> from tokenfsm.automata import DFA
>>> d = DFA.from_interegular(interegular.parse_pattern("[ab]c*").to_fsm())
>>> d.accepts("acc"), d.accepts("ca")
(True, False)
"""

from __future__ import annotations

from .charset import CharSet

__all__ = ["from_interegular", "to_interegular"]


def from_interegular(cls, fsm):
    """A :class:`~.dfa.DFA` of the same language as the interegular ``fsm``."""
    from interegular.fsm import anything_else

    by_key: dict = {}
    listed: list[int] = []
    for sym, key in fsm.alphabet.items():
        if sym is anything_else:
            by_key.setdefault(key, [])
            continue
        cp = ord(sym)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        listed.append(cp)
        by_key.setdefault(key, []).append((cp, cp))
    sets = {key: CharSet(rs) for key, rs in by_key.items()}
    rest = ~CharSet((c, c) for c in listed)
    else_key = fsm.alphabet._symbol_mapping.get(anything_else)
    if else_key is not None:
        sets[else_key] = sets.get(else_key, CharSet()) | rest
    keys = [k for k, s in sets.items() if s]
    classes = [sets[k] for k in keys]
    if else_key is None and rest:
        classes.append(rest)
        keys.append(None)
    states = sorted(fsm.states, key=repr)
    num = {s: i + 1 for i, s in enumerate(states)}
    delta = [[0] * len(classes)]
    for s in states:
        row = [0] * len(classes)
        trans = fsm.map.get(s, {})
        for ci, k in enumerate(keys):
            if k is not None and k in trans:
                row[ci] = num[trans[k]]
        delta.append(row)
    accepting = {num[s] for s in fsm.finals}
    return cls._minimal_of(classes, delta, accepting, num[fsm.initial])


def to_interegular(dfa, max_listed: int = 200_000):
    """An interegular ``FSM`` of the same language as the minimal ``dfa``."""
    from interegular.fsm import FSM, Alphabet, TransitionKey, anything_else

    sizes = [len(c) for c in dfa.classes]
    big = max(range(len(sizes)), key=sizes.__getitem__)
    listed = sum(sizes) - sizes[big]
    if listed > max_listed:
        raise ValueError(f"interegular lists characters one by one; this automaton would list "
                         f"{listed:,} (more than max_listed={max_listed:,})")
    mapping = {anything_else: TransitionKey(big)}
    for ci, cs in enumerate(dfa.classes):
        if ci != big:
            for ch in cs.chars():
                mapping[ch] = TransitionKey(ci)
    n = len(dfa.delta)
    fmap = {}
    for s in range(1, n):
        fmap[s] = {TransitionKey(c): t for c, t in enumerate(dfa.delta[s]) if t}
    states = set(range(1, n)) if dfa.start else {0}
    if not dfa.start:
        fmap = {0: {}}
    return FSM(alphabet=Alphabet(mapping), states=states, initial=dfa.start if dfa.start else 0,
               finals=set(dfa.accepting), map=fmap)
