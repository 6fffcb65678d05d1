"""Error types and the resource budget shared by every automaton operation.

Automaton products can blow up exponentially (a length bound times an exclusion set, a key order
that may vary). Every operation that creates states takes a :class:`Budget`; going over it raises
:class:`BudgetExceeded` with the limit, how far the construction got and which operation it was,
long before memory runs out.

Example
-------
>>> from tokenfsm.automata import DFA, Budget, BudgetExceeded
>>> try:
...     DFA.from_regex(r"[\\s\\S]{0,300}").intersect(DFA.excluding(["ab"]), budget=Budget(max_states=50))
... except BudgetExceeded as e:
...     print(e.limit, e.operation)
50 intersect
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

__all__ = ["TokenfsmError", "OptionError", "Budget", "BudgetExceeded", "RegexError", "AutomatonError",
           "NondeterministicCall", "OpaqueSymbolError"]


class TokenfsmError(Exception):
    """Base class of every error tokenfsm raises on purpose (automata, schema and masks alike), so
    that a caller can catch them all with one ``except TokenfsmError``."""


class OptionError(TokenfsmError, ValueError):
    """An option given a value it cannot take (``whitespace=-1``, ``recursion="deep"``,
    ``strategy="fast"``); the message names the option and what it accepts. A value of the wrong
    type is a ``TypeError`` instead."""


class AutomatonError(TokenfsmError, ValueError):
    """An automaton was given input it cannot represent (bad ranges, inconsistent tables)."""


class NondeterministicCall(AutomatonError):
    """The deterministic stack walk would be ambiguous: some byte both continues the current
    module and starts a callee (or starts two callees), or both continues a module that may end
    here and continues its caller.

    Attributes
    ----------
    module : int
        The module (index into ``RecursiveDFA.modules``) whose state is ambiguous.
    frames : tuple of int
        The variant: frames of each module on the stack.
    state : int
        The state in the global byte table (:class:`PushdownBytes`).
    byte : int
        A byte that has two meanings there.
    calls : tuple of int
        In a lazy network (:mod:`.network`): the pieces called there whose first bytes meet the
        module's moves or each other's (empty where the module's end meets its caller's moves).
    """

    def __init__(self, msg: str, module: int | None = None, frames: tuple | None = None,
                 state: int | None = None, byte: int | None = None, calls: tuple = ()):
        self.module = module
        self.frames = frames
        self.state = state
        self.byte = byte
        self.calls = tuple(calls)
        super().__init__(msg)

    def __reduce__(self):
        return (NondeterministicCall, (self.args[0], self.module, self.frames, self.state,
                                       self.byte, self.calls))


class OpaqueSymbolError(AutomatonError):
    """A product or complement met a symbol that stands for a whole sub-language (a call of
    another automaton, which the caller tracks and checks before such an operation): taken symbol
    by symbol, the operation would not mean what it should.

    ``symbols`` holds the placeholder characters the operand reads (when known); a caller that
    knows what the placeholders stand for may also set ``targets``."""

    def __init__(self, msg: str, symbols: frozenset = frozenset(), targets: frozenset = frozenset()):
        super().__init__(msg)
        self.symbols = frozenset(symbols)
        self.targets = frozenset(targets)

    def __reduce__(self):
        return (type(self), (self.args[0], self.symbols, self.targets))


class RegexError(TokenfsmError, ValueError):
    """A pattern that is malformed or not regular.

    Attributes
    ----------
    pattern : str
        The pattern as given.
    pos : int or None
        Index into ``pattern`` where the problem is, when known.
    msg : str
        What is wrong, e.g. ``"look-ahead assertion is not regular"``.
    """

    def __init__(self, msg: str, pattern: str | None = None, pos: int | None = None):
        self.msg = msg
        self.pattern = pattern
        self.pos = pos
        text = msg
        if pos is not None:
            text += f" at position {pos}"
        if pattern is not None:
            if len(pattern) <= 200:
                text += f" in pattern {pattern!r}"
                if pos is not None:
                    text += f"\n  {pattern}\n  {' ' * pos}^"
            else:                              # a long pattern: its length and the part at pos
                at = 0 if pos is None else max(0, pos - 40)
                text += (f" in a pattern of {len(pattern):,} characters"
                         f" ({'...' if at else ''}{pattern[at:at + 80]!r}...)")
        super().__init__(text)


class BudgetExceeded(TokenfsmError, RuntimeError):
    """An automaton construction went over its :class:`Budget`.

    Attributes
    ----------
    limit : float
        The limit that was hit (states, table cells, or seconds, after ``kind``).
    reached : float
        How many states (or cells) had been built, or seconds spent, when it stopped.
    operation : str
        The operation that was running (``"intersect"``, ``"determinize"``, ...).
    kind : str
        ``"states"``, ``"cells"`` (states times alphabet classes), ``"nfa_states"`` (the
        nondeterministic automaton a construction starts from), ``"visits"`` (NFA states gathered
        by the subset construction), ``"characters"`` (of a pattern) or ``"seconds"``.
    pointer : str or None
        Set by callers that know where the automaton came from (a JSON pointer in a schema).
    """

    def __init__(self, limit, reached, operation: str, kind: str = "states", pointer: str | None = None):
        self.limit = limit
        self.reached = reached
        self.operation = operation
        self.kind = kind
        self.pointer = pointer
        super().__init__(self._text())

    def _text(self) -> str:
        where = f" at {self.pointer}" if self.pointer is not None else ""
        if self.kind == "seconds":
            return (f"{self.operation}{where} ran out of its time budget of {self.limit:g} s "
                    f"(stopped after {self.reached:.3g} s; the last {TIME_RESERVE:.0%} are left "
                    f"to free what it built)")
        if self.kind == "nfa_states":
            return (f"{self.operation}{where} exceeded its budget of {self.limit:,} NFA states "
                    f"({NFA_STATES_PER_STATE} per state of its Budget; it needed {self.reached:,})")
        if self.kind == "characters":
            return (f"{self.operation}{where} exceeded its budget of {self.limit:,} pattern "
                    f"characters (one per state of its Budget; it has {self.reached:,})")
        if self.kind == "visits":
            return (f"{self.operation}{where} exceeded its budget of {self.limit:,} NFA states "
                    f"gathered into subsets (stopped at {self.reached:,})")
        if self.kind == "cells":
            return (f"{self.operation}{where} exceeded its budget of {self.limit:,} table cells "
                    f"(states times alphabet classes; stopped at {self.reached:,})")
        return (f"{self.operation}{where} exceeded its budget of {self.limit:,} states "
                f"(stopped at {self.reached:,})")

    def with_pointer(self, pointer: str) -> "BudgetExceeded":
        """Return a copy that names where the blown-up automaton came from."""
        return BudgetExceeded(self.limit, self.reached, self.operation, self.kind, pointer)

    def __reduce__(self):
        return (BudgetExceeded, (self.limit, self.reached, self.operation, self.kind, self.pointer))


def _check_count(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Budget.{name} must be an int, got {value!r}")
    if value < 1:
        raise ValueError(f"Budget.{name} must be positive, got {value!r}")


@dataclass(frozen=True)
class Budget:
    """Limits for one automaton construction.

    Parameters
    ----------
    max_states : int
        Most states any single construction (product, determinisation) may create. An NFA built
        on the way may have :data:`~.nfa.NFA_STATES_PER_STATE` times as many.
    max_seconds : float or None
        Wall-clock limit per construction, or None for no time limit. After :meth:`started`, it
        is also a deadline shared by every construction that uses the budget.
    max_cells : int
        Most cells (states times alphabet classes) a construction's transition table may have:
        a long sequence of distinct characters needs a class per character in every state.
    max_visits : int
        Most NFA states the subset construction may gather into its states (the sum of their
        sizes): its time grows with them, not with its states alone (``(a|b)*a(a|b){30}``
        searched for makes states of thirty NFA states each).

    Every limit is charged before the memory it stands for is taken.
    """

    max_states: int = 200_000
    max_seconds: float | None = None
    max_cells: int = 20_000_000
    max_visits: int = 1_000_000
    #: ``time.perf_counter()`` value past which every construction stops (see :meth:`started`)
    deadline: float | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        _check_count("max_states", self.max_states)
        _check_count("max_cells", self.max_cells)
        _check_count("max_visits", self.max_visits)
        if self.max_seconds is not None:
            if isinstance(self.max_seconds, bool) or not isinstance(self.max_seconds, (int, float)):
                raise TypeError(f"Budget.max_seconds must be a number or None, got {self.max_seconds!r}")
            if not self.max_seconds > 0:
                raise ValueError(f"Budget.max_seconds must be positive or None, got {self.max_seconds!r}")
        if self.deadline is not None and not isinstance(self.deadline, float):
            raise TypeError(f"Budget.deadline must be a time.perf_counter() value, got {self.deadline!r}")

    def started(self) -> "Budget":
        """This budget with its time limit turned into one deadline from now, for a task made of
        many constructions (a schema): each then stops at the deadline rather than
        ``max_seconds`` after its own start. Equal to ``self`` (the deadline is not compared)."""
        if self.max_seconds is None or self.deadline is not None:
            return self
        return replace(self, deadline=time.perf_counter() + self.max_seconds)

    def meter(self, operation: str) -> "Meter":
        """A fresh counter that enforces this budget for one construction."""
        return Meter(self, operation)


DEFAULT_BUDGET = Budget()


def as_budget(budget) -> Budget:
    """The budget a construction runs under: ``budget`` :meth:`~Budget.started` (its clock runs
    from the call), or :data:`DEFAULT_BUDGET` for None; anything else is a ``TypeError``."""
    if budget is None:
        return DEFAULT_BUDGET
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a Budget or None, not {type(budget).__name__}")
    return budget.started()


def check_deadline(budget: Budget, operation: str) -> None:
    """Raise :class:`BudgetExceeded` (seconds) if ``budget``'s deadline has passed (see
    :meth:`Budget.started`); for the phases of a construction that make no states."""
    if budget.deadline is not None:
        now = time.perf_counter()
        limit = budget.max_seconds
        if now > budget.deadline - TIME_RESERVE * limit:
            raise BudgetExceeded(limit, now - budget.deadline + limit, operation, kind="seconds")


#: Share of ``max_seconds`` a construction leaves when it stops for time: raising frees what it
#: built (millions of objects for a large automaton, a tenth of the time it took to build them),
#: and the caller should have its error, with that done, within the time it allowed.
TIME_RESERVE = 0.08

#: NFA states a construction may build per state of its :class:`Budget`: Thompson's construction
#: takes about two states per character of a pattern, and an embedded automaton one per state,
#: while the subset construction's result is usually no larger than its NFA. The NFA is charged
#: before it is built (:func:`.nfa.from_ast`, :meth:`.nfa.NFA.reserve`), so that
#: ``a{1000000000}`` is a :class:`BudgetExceeded` at once, not an out-of-memory.
NFA_STATES_PER_STATE = 4

#: Table cells, and states, a construction builds at most between two looks at the clock (a look
#: costs well under a microsecond; a state at least a few).
CELLS_PER_CLOCK_CHECK = 1 << 13
STATES_PER_CLOCK_CHECK = 1 << 6


@dataclass
class Meter:
    """Counts states created by one construction and raises when the budget is exceeded.

    A construction that knows its alphabet sets :attr:`width` (classes per state) so that the
    cell budget is charged too; :meth:`state_limit` is the most states both budgets allow."""

    budget: Budget
    operation: str
    states: int = 0
    started: float = field(default_factory=time.perf_counter)
    width: int = 1
    visits: int = 0
    _next_clock: int = 0

    def __post_init__(self):
        b = self.budget
        ends = [t for t in (b.deadline, None if b.max_seconds is None else self.started + b.max_seconds)
                if t is not None]
        #: the time at which this construction stops (None: no time limit), the time reserve
        #: before its end (see :data:`TIME_RESERVE`)
        self._end = min(ends) if ends else None
        self.deadline = None if self._end is None else self._end - TIME_RESERVE * b.max_seconds

    def state_limit(self) -> int:
        """The most states allowed: by the state budget, and by the cell budget at this width."""
        return min(self.budget.max_states, self.budget.max_cells // max(self.width, 1))

    def clock_every(self) -> int:
        """States between two looks at the clock, as a mask (a power of two minus one): at most
        :data:`STATES_PER_CLOCK_CHECK`, fewer for wide tables (:data:`CELLS_PER_CLOCK_CHECK`)."""
        n = max(1, min(STATES_PER_CLOCK_CHECK, CELLS_PER_CLOCK_CHECK // max(self.width, 1)))
        return (1 << (n.bit_length() - 1)) - 1

    def visit_limit(self) -> int:
        return self.budget.max_visits

    def add(self, n: int = 1, visits: int = 0) -> None:
        """Charge ``n`` new states (and ``visits`` NFA states gathered into them)."""
        self.states += n
        self.visits += visits
        if self.states > self.budget.max_states:
            raise BudgetExceeded(self.budget.max_states, self.states, self.operation)
        if self.visits > self.budget.max_visits:
            raise BudgetExceeded(self.budget.max_visits, self.visits, self.operation, kind="visits")
        if self.states * self.width > self.budget.max_cells:
            raise BudgetExceeded(self.budget.max_cells, self.states * self.width, self.operation,
                                 kind="cells")
        if self.deadline is not None and self.states >= self._next_clock:
            self._next_clock = self.states + self.clock_every() + 1
            self.check_time()

    @property
    def time_check(self):
        """:meth:`check_time` where this construction has a deadline, else None (for the long
        loops that take a ``check``)."""
        return self.check_time if self.deadline is not None else None

    def check_time(self) -> None:
        if self.deadline is not None:
            now = time.perf_counter()
            if now > self.deadline:
                limit = self.budget.max_seconds
                raise BudgetExceeded(limit, now - self._end + limit, self.operation, kind="seconds")
