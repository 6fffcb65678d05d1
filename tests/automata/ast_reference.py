"""A naive reference matcher over the regex AST: the oracle for testing the front end alone.

It simulates a node over a concrete string as a function from sets of start positions to sets of
end positions (Thompson's idea without the automaton), and reads each zero-width assertion as
Python's ``re`` reads it. Slow and obviously correct; strings in tests are short.

Example
-------
>>> from tokenfsm.automata.regex_parse import parse_regex
>>> fullmatch(parse_regex(r"a+\\b"), "aaa")
True
"""

from __future__ import annotations

import re

from tokenfsm.automata.regex_ast import Alt, Assert, Chars, Repeat, Seq

# Python 3.11 says \B never matches the empty string; later versions may not.
_B_ON_EMPTY = re.search(r"\B", "") is not None


def assertion_holds(node: Assert, s: str, i: int) -> bool:
    """Whether the zero-width assertion ``node`` holds at position ``i`` of ``s``."""
    n = len(s)
    kind = node.kind
    if kind == "start":
        return i == 0
    if kind == "start_line":
        return i == 0 or s[i - 1] == "\n"
    if kind == "end":
        return i == n or (i == n - 1 and s[i] == "\n")
    if kind == "end_string":
        return i == n
    if kind == "end_line":
        return i == n or s[i] == "\n"
    before = i > 0 and s[i - 1] in node.word
    after = i < n and s[i] in node.word
    if kind == "word_boundary":
        return before != after
    if kind == "not_word_boundary":
        if n == 0 and not _B_ON_EMPTY:
            return False
        return before == after
    raise AssertionError(kind)


def ends(node, s: str, starts: frozenset) -> frozenset:
    """Every position where a match of ``node`` that began at one of ``starts`` can end."""
    if not starts:
        return starts
    if isinstance(node, Chars):
        return frozenset(i + 1 for i in starts if i < len(s) and s[i] in node.cs)
    if isinstance(node, Seq):
        for item in node.items:
            starts = ends(item, s, starts)
        return starts
    if isinstance(node, Alt):
        out = frozenset()
        for item in node.items:
            out |= ends(item, s, starts)
        return out
    if isinstance(node, Assert):
        return frozenset(i for i in starts if assertion_holds(node, s, i))
    if isinstance(node, Repeat):
        current = starts
        for _ in range(node.min):
            current = ends(node.item, s, current)
            if not current:
                return current
        reached = set(current)
        frontier = current
        count = node.min
        # breadth first: a position reached after fewer iterations leaves more iterations to spare
        while frontier and (node.max is None or count < node.max):
            frontier = frozenset(ends(node.item, s, frontier) - reached)
            reached |= frontier
            count += 1
        return frozenset(reached)
    raise TypeError(f"not an AST node: {node!r}")


def fullmatch(node, s: str) -> bool:
    """Whether ``node`` matches the whole of ``s``."""
    return len(s) in ends(node, s, frozenset({0}))
