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
from dataclasses import dataclass, field

__all__ = ["TokenfsmError", "Budget", "BudgetExceeded", "RegexError", "AutomatonError",
           "NondeterministicCall", "OpaqueSymbolError"]


class TokenfsmError(Exception):
    """Base class of every error tokenfsm raises on purpose (automata, schema and masks alike), so
    that a caller can catch them all with one ``except TokenfsmError``."""


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
    """

    def __init__(self, msg: str, module: int | None = None, frames: tuple | None = None,
                 state: int | None = None, byte: int | None = None):
        self.module = module
        self.frames = frames
        self.state = state
        self.byte = byte
        super().__init__(msg)

    def __reduce__(self):
        return (NondeterministicCall, (self.args[0], self.module, self.frames, self.state, self.byte))


class OpaqueSymbolError(AutomatonError):
    """A product or complement met a symbol that stands for a whole sub-language (see
    :func:`opaque_symbols`): taken symbol by symbol, the operation would not mean what it should.

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
            text += f" in pattern {pattern!r}"
            if pos is not None and len(pattern) <= 200:
                text += f"\n  {pattern}\n  {' ' * pos}^"
        super().__init__(text)


class BudgetExceeded(TokenfsmError, RuntimeError):
    """An automaton construction went over its :class:`Budget`.

    Attributes
    ----------
    limit : float
        The limit that was hit (states, or seconds when ``kind == "seconds"``).
    reached : float
        How many states had been built (or seconds spent) when it stopped.
    operation : str
        The operation that was running (``"intersect"``, ``"determinize"``, ...).
    kind : str
        ``"states"`` or ``"seconds"``.
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
            return (f"{self.operation}{where} exceeded its time budget of {self.limit:g} s "
                    f"(stopped after {self.reached:.3g} s)")
        return (f"{self.operation}{where} exceeded its budget of {self.limit:,} states "
                f"(stopped at {self.reached:,})")

    def with_pointer(self, pointer: str) -> "BudgetExceeded":
        """Return a copy that names where the blown-up automaton came from."""
        return BudgetExceeded(self.limit, self.reached, self.operation, self.kind, pointer)

    def __reduce__(self):
        return (BudgetExceeded, (self.limit, self.reached, self.operation, self.kind, self.pointer))


@dataclass(frozen=True)
class Budget:
    """Limits for one automaton construction.

    Parameters
    ----------
    max_states : int
        Most states any single construction (product, determinisation) may create.
    max_seconds : float or None
        Wall-clock limit per construction, or None for no time limit.
    """

    max_states: int = 200_000
    max_seconds: float | None = None

    def __post_init__(self):
        if not isinstance(self.max_states, int) or self.max_states < 1:
            raise ValueError(f"Budget.max_states must be a positive int, got {self.max_states!r}")
        if self.max_seconds is not None and not self.max_seconds > 0:
            raise ValueError(f"Budget.max_seconds must be positive or None, got {self.max_seconds!r}")

    def meter(self, operation: str) -> "Meter":
        """A fresh counter that enforces this budget for one construction."""
        return Meter(self, operation)


DEFAULT_BUDGET = Budget()


@dataclass
class Meter:
    """Counts states created by one construction and raises when the budget is exceeded."""

    budget: Budget
    operation: str
    states: int = 0
    started: float = field(default_factory=time.perf_counter)

    def add(self, n: int = 1) -> None:
        self.states += n
        if self.states > self.budget.max_states:
            raise BudgetExceeded(self.budget.max_states, self.states, self.operation)
        if self.budget.max_seconds is not None and (self.states & 255) == 0:
            self.check_time()

    def check_time(self) -> None:
        if self.budget.max_seconds is not None:
            spent = time.perf_counter() - self.started
            if spent > self.budget.max_seconds:
                raise BudgetExceeded(self.budget.max_seconds, spent, self.operation, kind="seconds")
