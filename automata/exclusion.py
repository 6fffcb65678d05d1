"""The automaton of strings that contain none of a set of substrings.

Tool-call markers (``<|open|>``, ``</parameter>``) must never appear inside a generated value, even
split across tokens or overlapping each other. The language "no element of X occurs as a
substring" is regular: the Aho-Corasick automaton of X with every state that completes a match
made dead. Its states are the prefixes of the excluded strings, so its size is the total length of
X, whatever the rest of the grammar; intersecting it with a bounded-length language is what
multiplies states (see the notebooks).

Example
-------
>>> from tokenfsm.automata import DFA
>>> d = DFA.excluding(["ab", "bc"])
>>> d.accepts("acb"), d.accepts("xabx"), d.accepts("b c")
(True, False, True)

Aho & Corasick, "Efficient string matching: an aid to bibliographic search" (1975).
"""

from __future__ import annotations

from collections import deque

from .charset import CharSet, refine
from .errors import DEFAULT_BUDGET, Budget

__all__ = ["excluding_table"]


def excluding_table(substrings: list[str], budget: Budget | None = None):
    """Tables for the DFA of strings containing none of ``substrings``.

    Returns ``(classes, delta, accepting, start)`` with dead state 0, as :func:`.nfa.determinize`.
    """
    meter = (budget or DEFAULT_BUDGET).meter("excluding")
    for x in substrings:
        if not isinstance(x, str):
            raise TypeError(f"excluded substrings must be str, got {type(x).__name__}")
        for ch in x:
            if 0xD800 <= ord(ch) <= 0xDFFF:
                raise ValueError(f"excluded substring {x!r} contains a lone surrogate")
    if any(x == "" for x in substrings):
        # every string contains the empty string
        return [CharSet.any()], [[0]], set(), 0
    letters = sorted({ch for x in substrings for ch in x})
    classes = refine([CharSet.of(ch) for ch in letters])
    meter.width = len(classes)        # each trie node becomes a row of this many cells
    cls_of = {}
    other = None
    letter_set = set(letters)
    for i, c in enumerate(classes):
        if len(c) == 1 and chr(c.min()) in letter_set:
            cls_of[chr(c.min())] = i
        else:
            other = i
    # trie; node 0 of the trie is the root
    goto: list[dict[int, int]] = [{}]
    terminal = [False]
    for x in substrings:
        node = 0
        for ch in x:
            c = cls_of[ch]
            nxt = goto[node].get(c)
            if nxt is None:
                nxt = len(goto)
                goto.append({})
                terminal.append(False)
                goto[node][c] = nxt
                meter.add()
            node = nxt
        terminal[node] = True
    # failure links, breadth first; a node is terminal if any suffix of it is
    fail = [0] * len(goto)
    order = []
    queue = deque()
    for c, t in goto[0].items():
        queue.append(t)
    while queue:
        u = queue.popleft()
        order.append(u)
        for c, v in goto[u].items():
            f = fail[u]
            while f and c not in goto[f]:
                f = fail[f]
            fv = goto[f].get(c, 0)
            fail[v] = fv if fv != v else 0
            terminal[v] = terminal[v] or terminal[fail[v]]
            queue.append(v)
    nclasses = len(classes)
    # complete transition function (classic AC automaton): states shifted by one, 0 is dead
    full = [[0] * nclasses for _ in range(len(goto))]
    for u in [0] + order:
        for c in range(nclasses):
            if c in goto[u]:
                full[u][c] = goto[u][c]
            elif u == 0:
                full[u][c] = 0
            else:
                full[u][c] = full[fail[u]][c]
    delta = [[0] * nclasses]
    for u in range(len(goto)):
        delta.append([0 if terminal[v] else v + 1 for v in full[u]])
    accepting = {u + 1 for u in range(len(goto)) if not terminal[u]}
    if other is None:
        pass  # the letters cover the alphabet (impossible in practice); nothing to add
    return classes, delta, accepting, 1
