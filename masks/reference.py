"""Naive pure-Python token walk: the oracle the Numba index is tested against.

For a state and a vocabulary, walk every token's bytes through the byte DFA one at a time; the token
is allowed iff the walk ends in a live (non-zero) state. EOS is allowed iff the state accepts. No
trie, no classes merged, no kernels: slow and obviously right.

Example
-------
>>> from tokenfsm.masks.reference import reference_allowed
>>> reference_allowed(byte_dfa, vocab, byte_dfa.start)      # doctest: +SKIP
{0: 3, 2: 1, 5: 0}

The comparison of an engine with a naive walk mirrors stumpy's naive reference implementations.
"""

from __future__ import annotations

__all__ = ["reference_walk", "reference_allowed", "reference_mask", "reference_forced_string"]


def _tables(byte_dfa):
    return [int(c) for c in byte_dfa.byte_classes], [[int(x) for x in row] for row in byte_dfa.table]


def _walk(classes, table, state: int, data: bytes) -> int:
    s = state
    for b in data:
        s = table[s][classes[b]]
        if s == 0:
            return 0
    return s


def reference_walk(byte_dfa, state: int, data: bytes) -> int:
    """State reached from ``state`` by ``data``; 0 as soon as the dead state is hit."""
    classes, table = _tables(byte_dfa)
    return _walk(classes, table, int(state), data)


def reference_allowed(byte_dfa, vocab, state: int) -> dict[int, int]:
    """``{token id: next state}`` for every text token allowed in ``state``.

    EOS ids are not included; they are allowed iff ``byte_dfa.accepting[state]``.
    """
    out = {}
    if int(state) == 0:
        return out
    classes, table = _tables(byte_dfa)
    for i, tok in enumerate(vocab.tokens):
        if tok is None:
            continue
        ns = _walk(classes, table, int(state), tok)
        if ns != 0:
            out[i] = ns
    return out


def reference_mask(byte_dfa, vocab, state: int) -> list[bool]:
    """Allowed flags of every token id in ``state`` (EOS where the state accepts)."""
    allowed = [False] * vocab.size
    for i in reference_allowed(byte_dfa, vocab, state):
        allowed[i] = True
    if int(state) != 0 and bool(byte_dfa.accepting[int(state)]):
        for e in vocab.eos_token_ids:
            allowed[e] = True
    return allowed


def reference_forced_string(byte_dfa, state: int, limit: int = 10_000) -> str:
    """Forced text from ``state``: follow states that do not accept and have one live byte."""
    out = bytearray()
    s = int(state)
    for _ in range(limit):
        if s == 0 or bool(byte_dfa.accepting[s]):
            break
        live = [b for b in range(256) if reference_walk(byte_dfa, s, bytes([b])) != 0]
        if len(live) != 1:
            break
        out.append(live[0])
        s = reference_walk(byte_dfa, s, bytes([live[0]]))
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as e:
        return bytes(out[: e.start]).decode("utf-8")
