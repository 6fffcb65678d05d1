r"""Regexes with large counted repetitions as lazy networks instead of flat automata.

``DFA.from_regex`` unrolls ``x{m,n}`` into ``n`` copies of ``x``: ``[\s\S]{0,100000000}`` would be a
hundred million states. :func:`regex_automaton` reads the same pattern, estimates the size of the
flat construction from the regex tree (the Thompson NFA it would build, counted without building
it) and returns:

* the flat :class:`~.dfa.DFA` when that estimate is at most ``lazy_above`` (``LAZY_REPEAT_STATES``):
  small patterns keep the eager index, which fills masks fastest;
* otherwise a :class:`~.lazy_bytes.LazyBytes`: every repetition whose own expansion is large
  becomes a counted piece (a piece of one copy, with a count bounded by ``m..n`` in the walk's
  configuration); what lies around it stays flat, in pieces of the network.

A copy is inlined into its counted piece when its automaton never continues after accepting (a
character class, ``(ab)``, ``\d{3}``): the count then ticks as each copy ends. Otherwise the copy is
a piece of its own, called once per copy. Where the walk could not tell copies apart from what
follows (``a{2,1000}a``, ``[\s\S]{0,10**8}x``), the network cannot be built and the flat
construction is tried instead, under the budget; a flat construction whose estimate is above the
budget raises :class:`~.errors.BudgetExceeded` before anything is allocated.

Anchors at the two ends of the pattern (``^``, ``\A``, ``$``, ``\Z``) mean nothing for a full match
and are dropped; any other assertion (``\b``, a ``$`` in the middle) needs the flat construction.

Example
-------
>>> lb = regex_automaton(r"[\s\S]{0,100000000}")
>>> type(lb).__name__, lb.num_states < 16, lb.accepts(b"any text")
('LazyBytes', True, True)
>>> regex_automaton(r"[a-z]{2,5}@x\.com") == DFA.from_regex(r"[a-z]{2,5}@x\.com")
True
>>> expand(regex_automaton(r"(?:ab|c){3,50}d", lazy_above=0)) == DFA.from_regex(r"(?:ab|c){3,50}d")
True

Counting instead of unrolling is the idea of counting automata (Turonova et al., OOPSLA 2020) and of
RE2's and Rust regex's bounded-repetition limits turned around: a count is held, not copied.
"""

from __future__ import annotations

from .dfa import DFA
from .errors import DEFAULT_BUDGET, Budget, BudgetExceeded, NondeterministicCall
from .lazy_bytes import LazyBytes
from .network import Call, Network, Text, Tick, choice, concat, optional, star
from .network import expand  # noqa: F401  (used in the example)
from .regex_ast import Alt, Assert, Chars, Node, Repeat, Seq

__all__ = ["regex_automaton", "nfa_states", "LAZY_REPEAT_STATES"]

#: A pattern whose flat Thompson NFA would have more states than this is built lazily. Measured
#: on Qwen's vocabulary (build, first mask and 40 more fills): ``[\s\S]{0,64}`` (130 states)
#: 69 ms flat against 541 ms lazy (counts within a token's length of the bound each need rows of
#: their own), ``[\s\S]{0,256}`` (514) 96 ms against 17 ms, ``\w{0,256}`` 4.1 s against 146 ms.
LAZY_REPEAT_STATES = 500

_START = frozenset({"start", "start_line"})
_END = frozenset({"end", "end_string", "end_line"})


def nfa_states(node: Node) -> int:
    """States of the Thompson NFA ``from_ast`` would build for ``node`` (counted, not built)."""
    if isinstance(node, Chars):
        return 2
    if isinstance(node, Seq):
        return max(1, sum(nfa_states(x) for x in node.items))
    if isinstance(node, Alt):
        return 2 + sum(nfa_states(x) for x in node.items)
    if isinstance(node, Repeat):
        copies = node.min + 1 if node.max is None else node.max
        return 2 + nfa_states(node.item) * copies
    return 2


def _nullable(node: Node) -> bool:
    if isinstance(node, Chars):
        return False
    if isinstance(node, Seq):
        return all(_nullable(x) for x in node.items)
    if isinstance(node, Alt):
        return any(_nullable(x) for x in node.items)
    if isinstance(node, Repeat):
        return node.min == 0 or _nullable(node.item)
    return True


def _has_assert(node: Node) -> bool:
    if isinstance(node, Assert):
        return True
    if isinstance(node, (Seq, Alt)):
        return any(_has_assert(x) for x in node.items)
    if isinstance(node, Repeat):
        return _has_assert(node.item)
    return False


def _strip_anchors(node: Node) -> Node:
    """Leading ``^``/``\\A`` and trailing ``$``/``\\Z`` of the whole pattern (no-ops in a full
    match) removed."""
    if isinstance(node, Assert) and node.kind in _START | _END:
        return Seq(())
    if not isinstance(node, Seq):
        return node
    items = list(node.items)
    while items and isinstance(items[0], Assert) and items[0].kind in _START:
        items.pop(0)
    while items and isinstance(items[-1], Assert) and items[-1].kind in _END:
        items.pop()
    return Seq(tuple(items))


def _prefix_free(d: DFA) -> bool:
    """No accepting state moves on: each copy ends exactly where its automaton accepts."""
    return all(not any(d.delta[s]) for s in d.accepting)


class _Lowering:
    def __init__(self, net: Network, limit: int, budget: Budget):
        self.net, self.limit, self.budget = net, limit, budget

    def flat(self, node: Node) -> Text:
        return Text(DFA.from_ast(node, self.budget))

    def expr(self, node: Node):
        """A network expression of ``node``; large repetitions become calls of counted pieces."""
        if nfa_states(node) <= self.limit:
            return self.flat(node)
        if isinstance(node, Seq):
            parts, run = [], []
            for x in node.items:
                if nfa_states(x) <= self.limit:
                    run.append(x)           # neighbouring small items stay one automaton
                    continue
                if run:
                    parts.append(self.flat(Seq(tuple(run))))
                    run = []
                parts.append(self.expr(x))
            if run:
                parts.append(self.flat(Seq(tuple(run))))
            return concat(*parts)
        if isinstance(node, Alt):
            small = [x for x in node.items if nfa_states(x) <= self.limit]
            parts = [self.expr(x) for x in node.items if nfa_states(x) > self.limit]
            if small:
                parts.append(self.flat(Alt(tuple(small))))
            return choice(*parts)
        if isinstance(node, Repeat):
            lo = 0 if _nullable(node.item) else node.min
            piece = self.counted(node.item, max(lo, 1), node.max)
            return Call(piece) if lo >= 1 else optional(Call(piece))
        return self.flat(node)

    def counted(self, item: Node, lo: int, hi: int | None) -> int:
        """A counted piece of ``lo..hi`` non-empty copies of ``item``."""
        net = self.net
        if nfa_states(item) <= max(self.limit, LAZY_REPEAT_STATES):
            d = DFA.from_ast(item, self.budget) - DFA.epsilon()
            if _prefix_free(d.minimize()):
                return net.counted(star(concat(Text(d), Tick())), lo=lo, hi=hi)
            copy = net.piece(Text(d))
        else:
            if _nullable(item):
                raise NondeterministicCall("a large repetition of an item that may be empty")
            copy = net.piece(self.expr(item))
        return net.counted(star(Call(copy, tick=True)), lo=lo, hi=hi)


def regex_automaton(pattern: str, flags: int = 0, budget: Budget | None = None,
                    lazy_above: int = LAZY_REPEAT_STATES) -> DFA | LazyBytes:
    """The automaton of a Python ``re`` pattern: flat when small, a lazy network when large.

    Parameters
    ----------
    pattern : str
    flags : int
        ``re`` flags, as for :meth:`DFA.from_regex`.
    budget : Budget, optional
        Bounds each construction; a flat construction estimated above it raises at once.
    lazy_above : int
        Patterns whose flat NFA would have more states than this are built lazily.

    Returns
    -------
    DFA or LazyBytes
        Both accept exactly the strings ``re.fullmatch`` matches.

    Raises
    ------
    RegexError
        As :meth:`DFA.from_regex`.
    BudgetExceeded
        The pattern needs the flat construction (see the module docstring) and it is too large.
    """
    from .regex_parse import parse_regex

    budget = budget or DEFAULT_BUDGET
    node = parse_regex(pattern, flags)
    size = nfa_states(node)
    if size <= lazy_above:
        return DFA.from_ast(node, budget)
    core = _strip_anchors(node)
    if not _has_assert(core):
        try:
            return _network(core, budget, lazy_above)
        except NondeterministicCall:
            pass
    if size > budget.max_states:
        raise BudgetExceeded(budget.max_states, size, "regex expansion")
    return DFA.from_ast(node, budget)


def _network(node: Node, budget: Budget, limit: int) -> LazyBytes:
    net = Network(budget)
    low = _Lowering(net, limit, budget)
    if isinstance(node, Repeat) and nfa_states(node) > limit:
        lo = 0 if _nullable(node.item) else node.min
        top = low.counted(node.item, lo, node.max)
    else:
        top = net.piece(low.expr(node))
    return net.build(top)
