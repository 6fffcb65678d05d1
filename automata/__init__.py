"""Finite automata over Unicode code points and UTF-8 bytes.

Regular expressions (Python's ``re`` dialect, exactly), exclusion sets and code-built languages
become minimal DFAs with a set algebra (``& | ~ - ^``, subset, equivalence), budgeted products,
and a lowering to UTF-8 byte automata stored as dense arrays for token masking.

Example
-------
>>> from tokenfsm.automata import DFA
>>> email = DFA.from_regex(r"[a-z]+@[a-z]+\\.com")
>>> safe = email & DFA.excluding(["admin"])
>>> safe.accepts("ada@x.com"), safe.accepts("admin@x.com")
(True, False)
"""

from .bytedfa import ByteDFA
from .cache import cache_info, clear_caches
from .charset import CharSet, refine
from .dfa import DFA
from .errors import (AutomatonError, Budget, BudgetExceeded, OptionError, RegexError,
                     TokenfsmError)
from .recursive import NondeterministicCall, PushdownBytes, RecursiveDFA
from .regex_ast import Alt, Assert, Chars, Repeat, Seq

__all__ = ["DFA", "ByteDFA", "CharSet", "Budget", "BudgetExceeded", "RegexError", "AutomatonError",
           "TokenfsmError", "OptionError",
           "refine", "Chars", "Seq", "Alt", "Repeat", "Assert", "RecursiveDFA", "PushdownBytes",
           "NondeterministicCall", "clear_caches", "cache_info"]
