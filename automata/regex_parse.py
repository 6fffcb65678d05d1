"""The Python ``re`` dialect, parsed by the interpreter itself and lowered to :mod:`.regex_ast`.

:func:`parse_regex` hands the pattern to the interpreter's own parser (``re._parser``, or
``sre_parse`` on 3.10), so every escape, flag and quirk of the dialect is exactly Python's: ``\\（``
and ``\\<`` are literals, ``{,3}`` is a quantifier and ``{x}`` is text, inline and scoped flags
apply where ``re`` applies them. The parsed tree is then lowered to the five regular node types,
reading every character set off the engine itself (see :mod:`.unicode_sets`), so that for every
pattern it accepts the language equals ``re.fullmatch(pattern, s, flags)`` on every string ``s``.

Two things go beyond ``re``:

* ``\\p{..}`` / ``\\P{..}`` Unicode properties in the syntax of the ``regex`` module (``\\p{L}``,
  ``\\p{Han}``, ``\\p{Script=Latin}``, ``[^\\p{L}\\d]``), with the sets ``regex`` gives them. They
  are swapped for private-use placeholder characters before ``re`` parses the pattern and swapped
  back for their sets afterwards. The rest of the pattern keeps ``re``'s meaning (``\\w`` is
  ``re``'s, not ``regex``'s). One corner differs from ``regex``: under IGNORECASE, a class that mixes
  a property with other items is the union of the parts' case-insensitive sets, whereas ``regex``
  also folds characters such as U+0345 into the class as a whole; and with ASCII and IGNORECASE
  together, where ``regex`` itself answers differently for ``fullmatch`` and ``search``, the set is
  what ``regex`` finds when searching.
* What ``re`` accepts but is not regular (back-references, look-around, conditionals, atomic
  groups, possessive quantifiers) raises :class:`~.errors.RegexError` naming the construct and its
  index in the pattern, found by a small lexer that mirrors the parser's tokenisation.

Case-insensitive matching is exact too: outside a small "cased universe" of code points it equals
case-sensitive matching, and inside it each literal or class is asked directly, by compiling just
that node with ``re``'s own compiler and running it over the universe.

Example
-------
>>> from tokenfsm.automata.regex_parse import parse_regex
>>> parse_regex(r"a[0-9]?")
Seq(items=(Chars(cs=CharSet(a)), Repeat(item=Chars(cs=CharSet([0-9])), min=0, max=1)))
>>> parse_regex(r"(a)\\1")
Traceback (most recent call last):
    ...
tokenfsm.automata.errors.RegexError: back-reference \\1 is not regular at position 3 in pattern '(a)\\\\1'
  (a)\\1
     ^

The design follows regex-syntax (rust-lang/regex): a parser for the concrete syntax, a lowering
to a small high-level IR, Unicode classes as range sets.
"""

from __future__ import annotations

import re
import warnings

from .cache import byte_lru_cache
from .charset import CharSet
from .errors import RegexError
from .regex_ast import EMPTY, Alt, Assert, Chars, Node, Repeat, Seq
from .unicode_sets import (category_set, cased_universe, check_property, property_set,
                           universe_sweep, word_set)

try:  # CPython 3.11+
    from re import _compiler as _sre_compile
    from re import _constants as _sre_constants
    from re import _parser as _sre_parse
except ImportError:  # pragma: no cover - CPython 3.10
    import sre_compile as _sre_compile
    import sre_constants as _sre_constants
    import sre_parse as _sre_parse

__all__ = ["parse_regex"]

_c = _sre_constants
_MISSING = object()
LITERAL, NOT_LITERAL, ANY, IN = _c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN
RANGE, NEGATE, CATEGORY = _c.RANGE, _c.NEGATE, _c.CATEGORY
BRANCH, SUBPATTERN, AT = _c.BRANCH, _c.SUBPATTERN, _c.AT
MAX_REPEAT, MIN_REPEAT = _c.MAX_REPEAT, _c.MIN_REPEAT
POSSESSIVE_REPEAT = getattr(_c, "POSSESSIVE_REPEAT", _MISSING)
ATOMIC_GROUP = getattr(_c, "ATOMIC_GROUP", _MISSING)
GROUPREF, GROUPREF_EXISTS = _c.GROUPREF, _c.GROUPREF_EXISTS
ASSERT, ASSERT_NOT = _c.ASSERT, _c.ASSERT_NOT
MAXREPEAT = _c.MAXREPEAT

F_IGNORECASE, F_LOCALE, F_MULTILINE = _c.SRE_FLAG_IGNORECASE, _c.SRE_FLAG_LOCALE, _c.SRE_FLAG_MULTILINE
F_DOTALL, F_UNICODE, F_VERBOSE = _c.SRE_FLAG_DOTALL, _c.SRE_FLAG_UNICODE, _c.SRE_FLAG_VERBOSE
F_ASCII, F_DEBUG = _c.SRE_FLAG_ASCII, _c.SRE_FLAG_DEBUG
F_TEMPLATE = getattr(_c, "SRE_FLAG_TEMPLATE", 0)
_TYPE_FLAGS = F_ASCII | F_LOCALE | F_UNICODE

_CATEGORY_NAMES = {
    _c.CATEGORY_DIGIT: "digit", _c.CATEGORY_NOT_DIGIT: "not_digit",
    _c.CATEGORY_SPACE: "space", _c.CATEGORY_NOT_SPACE: "not_space",
    _c.CATEGORY_WORD: "word", _c.CATEGORY_NOT_WORD: "not_word",
}

_NEWLINE = CharSet.of("\n")
_ANY_BUT_NEWLINE = ~_NEWLINE

# -------------------------------------------------------------------------------------------------
# A lexer that mirrors re's tokenisation, just far enough to find constructs by position
# -------------------------------------------------------------------------------------------------

_DIGITS = "0123456789"
_OCTDIGITS = "01234567"
_WHITESPACE = " \t\n\r\v\f"
_FLAG_CHARS = "aiLmsux"

# kind -> how the construct is described in an error message
_CONSTRUCTS = {
    "backreference": "back-reference {text}",
    "lookahead": "look-ahead assertion (?=...)",
    "negative_lookahead": "negative look-ahead assertion (?!...)",
    "lookbehind": "look-behind assertion (?<=...)",
    "negative_lookbehind": "negative look-behind assertion (?<!...)",
    "conditional": "conditional group (?(...)...)",
    "atomic": "atomic group (?>...)",
    "possessive": "possessive quantifier {text}",
}


def _scan(pattern: str, verbose: bool) -> list[tuple[str, int, int]]:
    """Find property escapes and non-regular constructs as ``(kind, start, end)`` in text order.

    Kinds are ``"property"`` (``\\p{..}``, ``\\P{..}``, ``\\pL``) and the keys of ``_CONSTRUCTS``.
    The lexer follows ``re``'s parser: escapes are two characters (more for ``\\N{..}``, octal
    escapes and group numbers), character classes end at the first ``]`` after their first item,
    verbose mode (global or scoped with ``(?x:..)``) skips whitespace and ``#`` comments outside
    classes, and a ``{`` is a quantifier only when ``re`` would read it as one.
    """
    tokens: list[tuple[str, int, int]] = []
    n = len(pattern)
    stack: list[bool] = []
    i = 0
    while i < n:
        c = pattern[i]
        if c == "\\":
            i = _scan_escape(pattern, i, tokens, in_class=False)
        elif verbose and c in _WHITESPACE:
            i += 1
        elif verbose and c == "#":
            i += 1
            while i < n and pattern[i] != "\n":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
        elif c == "[":
            i = _scan_class(pattern, i + 1, tokens)
        elif c == "(":
            stack.append(verbose)
            i, verbose = _scan_group(pattern, i, tokens, verbose, stack)
        elif c == ")":
            if stack:
                verbose = stack.pop()
            i += 1
        elif c in "*+?":
            i = _scan_quantifier_suffix(pattern, i, i + 1, tokens)
        elif c == "{":
            end = _counted_repeat_end(pattern, i)
            i = i + 1 if end is None else _scan_quantifier_suffix(pattern, i, end, tokens)
        else:
            i += 1
    return tokens


def _scan_escape(pattern: str, i: int, tokens: list, in_class: bool) -> int:
    n = len(pattern)
    d = pattern[i + 1] if i + 1 < n else ""
    if d in ("p", "P"):
        if i + 2 < n and pattern[i + 2] == "{":
            close = pattern.find("}", i + 3)
            if close != -1:
                tokens.append(("property", i, close + 1))
                return close + 1
        elif i + 2 < n and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
            tokens.append(("property", i, i + 3))
            return i + 3
        return i + 2
    if d == "N" and i + 2 < n and pattern[i + 2] == "{":
        close = pattern.find("}", i + 3)
        return n if close == -1 else close + 1
    if d and d in "123456789" and not in_class:
        j = i + 2
        if j < n and pattern[j] in _DIGITS:
            if d in _OCTDIGITS and pattern[j] in _OCTDIGITS and j + 1 < n and pattern[j + 1] in _OCTDIGITS:
                return j + 2  # a three-digit octal escape
            j += 1
        tokens.append(("backreference", i, j))
        return j
    return i + 2


def _scan_class(pattern: str, i: int, tokens: list) -> int:
    n = len(pattern)
    if i < n and pattern[i] == "^":
        i += 1
    first = True
    while i < n:
        c = pattern[i]
        if c == "]" and not first:
            return i + 1
        if c == "\\":
            i = _scan_escape(pattern, i, tokens, in_class=True)
        else:
            i += 1
        first = False
    return n


def _scan_group(pattern: str, i: int, tokens: list, verbose: bool, stack: list) -> tuple[int, bool]:
    """Scan from an opening parenthesis (already pushed on ``stack``); return (index, verbose)."""
    n = len(pattern)
    if not pattern.startswith("(?", i):
        return i + 1, verbose
    j = i + 2
    d = pattern[j] if j < n else ""
    nxt = pattern[j + 1] if j + 1 < n else ""
    if d == "P" and nxt == "=":
        close = pattern.find(")", j)
        end = n if close == -1 else close + 1
        tokens.append(("backreference", i, end))
        stack.pop()
        return end, verbose
    if d == "P" and nxt == "<":
        close = pattern.find(">", j)
        return (n if close == -1 else close + 1), verbose
    if d == "#":
        stack.pop()
        k = j + 1
        while k < n and pattern[k] != ")":
            k += 2 if pattern[k] == "\\" else 1
        return k + 1, verbose
    if d in ("=", "!"):
        tokens.append(("lookahead" if d == "=" else "negative_lookahead", i, j + 1))
        return j + 1, verbose
    if d == "<" and nxt in ("=", "!"):
        tokens.append(("lookbehind" if nxt == "=" else "negative_lookbehind", i, j + 2))
        return j + 2, verbose
    if d == "(":
        close = pattern.find(")", j)
        end = n if close == -1 else close + 1
        tokens.append(("conditional", i, end))
        return end, verbose
    if d == ">":
        tokens.append(("atomic", i, j + 1))
        return j + 1, verbose
    if d and (d in _FLAG_CHARS or d == "-"):
        k = j
        added = deleted = ""
        while k < n and pattern[k] in _FLAG_CHARS:
            added += pattern[k]
            k += 1
        if k < n and pattern[k] == "-":
            k += 1
            while k < n and pattern[k] in _FLAG_CHARS:
                deleted += pattern[k]
                k += 1
        if k < n and pattern[k] == ")":  # global flags: they hold from here on
            stack.pop()
            return k + 1, verbose or "x" in added
        if k < n and pattern[k] == ":":
            return k + 1, (verbose or "x" in added) and "x" not in deleted
        return k, verbose
    return j, verbose


def _counted_repeat_end(pattern: str, i: int) -> int | None:
    """If ``re`` reads the ``{`` at ``i`` as ``{m}``, ``{m,}``, ``{,n}`` or ``{m,n}``, the index
    just after its ``}``; otherwise None (the brace is a literal)."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] == "}":
        return None
    while j < n and pattern[j] in _DIGITS:
        j += 1
    if j < n and pattern[j] == ",":
        j += 1
        while j < n and pattern[j] in _DIGITS:
            j += 1
    return j + 1 if j < n and pattern[j] == "}" else None


def _scan_quantifier_suffix(pattern: str, start: int, end: int, tokens: list) -> int:
    if end < len(pattern):
        if pattern[end] == "+":
            tokens.append(("possessive", start, end + 1))
            return end + 1
        if pattern[end] == "?":
            return end + 1
    return end


def _leading_verbose(pattern: str, flags: int) -> bool:
    """Whether verbose mode is on from the start: by flag or by leading inline global flags."""
    if flags & F_VERBOSE:
        return True
    m = re.match(r"(?:\(\?[aiLmsux]+\))+", pattern)
    return bool(m and "x" in m.group())


# -------------------------------------------------------------------------------------------------
# \p{..} properties: placeholders in, sets out
# -------------------------------------------------------------------------------------------------

_PLACEHOLDER_BASE = 0xF0000  # Supplementary Private Use Area-A


class _Substitution:
    """The pattern as ``re`` sees it, with each property escape replaced by one placeholder."""

    def __init__(self, pattern: str, flags: int, verbose: bool):
        self.original = pattern
        self.properties: dict[int, tuple[str, int]] = {}  # placeholder -> (token, original pos)
        self._shifts: list[tuple[int, int]] = []  # (index in new text, cumulative shift after it)
        has_escapes = "\\p" in pattern or "\\P" in pattern
        tokens = [t for t in _scan(pattern, verbose) if t[0] == "property"] if has_escapes else []
        if not tokens:
            self.text = pattern
            return
        used = set(pattern)
        by_token: dict[str, int] = {}
        free = _PLACEHOLDER_BASE
        pieces = []
        last = shift = 0
        for _, start, end in tokens:
            token = pattern[start:end]
            try:
                check_property(token)
            except ValueError as exc:
                detail = "" if str(exc) == "unknown property" else f" ({exc})"
                raise RegexError(f"unknown property {token}{detail}", pattern, start) from None
            if token not in by_token:
                while chr(free) in used:
                    free += 1
                by_token[token] = free
                self.properties[free] = (token, start)
                free += 1
            pieces.append(pattern[last:start])
            new_index = start - shift
            pieces.append(chr(by_token[token]))
            shift += end - start - 1
            self._shifts.append((new_index, shift))
            last = end
        pieces.append(pattern[last:])
        self.text = "".join(pieces)

    def original_pos(self, pos: int | None) -> int | None:
        """Map an index into the substituted text back to the original pattern."""
        if pos is None:
            return None
        shift = 0
        for new_index, after in self._shifts:
            if pos <= new_index:
                break
            shift = after
        return pos + shift

    def readable(self, text: str) -> str:
        """``text`` (an error message) with placeholders shown as the escapes they stand for."""
        for ph, (token, _) in self.properties.items():
            text = text.replace(chr(ph), token)
        return text


# -------------------------------------------------------------------------------------------------
# Lowering
# -------------------------------------------------------------------------------------------------


class _NotRegular(Exception):
    """Raised inside the lowering; turned into a RegexError with a position at the top."""


def _combine_flags(flags: int, add_flags: int, del_flags: int) -> int:
    # the same rule as re's compiler (a scoped (?a:..) replaces the type flag)
    if add_flags & _TYPE_FLAGS:
        flags &= ~_TYPE_FLAGS
    return (flags | add_flags) & ~del_flags


@byte_lru_cache("automata.regex_parse.leaf_repeat", 8 << 20)
def _compile_leaf_repeat(op, av, flags: int):
    """``re``'s own compiled program for ``(?:leaf)+`` under ``flags``."""
    state = _sre_parse.State()
    state.flags = flags
    body = _sre_parse.SubPattern(state, [(op, list(av) if op is IN else av)])
    program = _sre_parse.SubPattern(state, [(MAX_REPEAT, (1, MAXREPEAT, body))])
    return _sre_compile.compile(program, flags)


class _Lowering:
    def __init__(self, properties: dict[int, tuple[str, int]], pattern: str):
        self.properties = properties
        self.pattern = pattern
        self._sets: dict = {}

    # -- tree ----------------------------------------------------------------------------------
    def sequence(self, sub, flags: int) -> Node:
        items = []
        for op, av in sub:
            node = self.node(op, av, flags)
            if isinstance(node, Seq):
                items.extend(node.items)
            else:
                items.append(node)
        if len(items) == 1:
            return items[0]
        return Seq(tuple(items)) if items else EMPTY

    def node(self, op, av, flags: int) -> Node:
        if op is LITERAL or op is NOT_LITERAL or op is IN or op is ANY:
            key = (op, tuple(av) if op is IN else av, flags)
            cs = self._sets.get(key)
            if cs is None:
                cs = self._sets[key] = self.leaf_set(op, av, flags)
            return Chars(cs)
        if op is SUBPATTERN:
            return self.sequence(av[-1], _combine_flags(flags, av[1], av[2]))
        if op is BRANCH:
            return Alt(tuple(self.sequence(branch, flags) for branch in av[1]))
        if op is MAX_REPEAT or op is MIN_REPEAT:
            lo, hi, item = av
            if hi == 0:
                return EMPTY
            inner = self.sequence(item, flags)
            if lo == hi == 1:
                return inner
            return Repeat(inner, lo, None if hi == MAXREPEAT else hi)
        if op is AT:
            return self.anchor(av, flags)
        raise _NotRegular(op)

    def anchor(self, at, flags: int) -> Assert:
        if at is _c.AT_BEGINNING:
            return Assert("start_line" if flags & F_MULTILINE else "start")
        if at is _c.AT_BEGINNING_STRING:
            return Assert("start")
        if at is _c.AT_END:
            return Assert("end_line" if flags & F_MULTILINE else "end")
        if at is _c.AT_END_STRING:
            return Assert("end_string")
        ascii = not flags & F_UNICODE
        if at is _c.AT_BOUNDARY:
            return Assert("word_boundary", word=word_set(ascii))
        if at is _c.AT_NON_BOUNDARY:
            return Assert("not_word_boundary", word=word_set(ascii))
        raise AssertionError(f"unexpected anchor {at}")  # pragma: no cover

    # -- character sets ------------------------------------------------------------------------
    def leaf_set(self, op, av, flags: int) -> CharSet:
        """The set of characters one literal / class / ``.`` matches, exactly as ``re`` does."""
        if op is ANY:
            return CharSet.any() if flags & F_DOTALL else _ANY_BUT_NEWLINE
        if op is LITERAL or op is NOT_LITERAL:
            if av in self.properties:
                cs = self.property(av, flags)
            else:
                if not flags & F_IGNORECASE or av not in cased_universe()[2]:
                    cs = CharSet.of(av)
                else:
                    return self.folded(op, av, flags, CharSet.of(av) if op is LITERAL else ~CharSet.of(av))
            return cs if op is LITERAL else ~cs
        # a class
        negate = bool(av) and av[0][0] is NEGATE
        items = av[1:] if negate else av
        plain = [item for item in items if not (item[0] is LITERAL and item[1] in self.properties)]
        cs = self.items_set(plain, flags)
        if flags & F_IGNORECASE and plain:
            # re folds the class as a whole (categories too are tested on the lowered character)
            cs = self.folded(IN, tuple(plain), flags, cs)
        for item in items:
            if item[0] is LITERAL and item[1] in self.properties:
                cs = cs | self.property(item[1], flags)
        return ~cs if negate else cs

    def items_set(self, items, flags: int) -> CharSet:
        ascii = not flags & F_UNICODE
        ranges = []
        extra = []
        for op, av in items:
            if op is LITERAL:
                ranges.append((av, av))
            elif op is RANGE:
                lo, hi = av
                for end in (lo, hi):
                    if end in self.properties:
                        token, pos = self.properties[end]
                        raise RegexError(f"bad character range: {token} cannot be a range end",
                                         self.pattern, pos)
                ranges.append((lo, hi))
            elif op is CATEGORY:
                extra.append(category_set(_CATEGORY_NAMES[av], ascii))
            else:  # pragma: no cover - the parser produces nothing else in a class
                raise AssertionError(f"unexpected class item {op}")
        cs = CharSet(ranges)
        for other in extra:
            cs = cs | other
        return cs

    def folded(self, op, av, flags: int, case_sensitive: CharSet) -> CharSet:
        """``case_sensitive`` corrected, on the cased universe, to what IGNORECASE matches."""
        universe = cased_universe()[2]
        matched = universe_sweep(_compile_leaf_repeat(op, av, flags))
        return (case_sensitive - universe) | matched

    def property(self, placeholder: int, flags: int) -> CharSet:
        token, _ = self.properties[placeholder]
        return property_set(token, bool(flags & F_IGNORECASE), not flags & F_UNICODE)


# -------------------------------------------------------------------------------------------------
# Non-regular constructs: from tree nodes back to positions in the pattern
# -------------------------------------------------------------------------------------------------


def _nonregular_nodes(sub, out: dict) -> None:
    """Append the kinds of non-regular nodes to ``out[kind]``: prefix constructs in pre-order,
    possessive quantifiers (written after their operand) in post-order, which is text order."""
    for op, av in sub:
        if op is GROUPREF:
            out.setdefault("backreference", []).append(op)
        elif op is ASSERT or op is ASSERT_NOT:
            kind = ("lookahead" if av[0] > 0 else "lookbehind")
            out.setdefault(kind if op is ASSERT else "negative_" + kind, []).append(op)
            _nonregular_nodes(av[1], out)
        elif op is GROUPREF_EXISTS:
            out.setdefault("conditional", []).append(op)
            for branch in av[1:]:
                if branch is not None:
                    _nonregular_nodes(branch, out)
        elif op is ATOMIC_GROUP:
            out.setdefault("atomic", []).append(op)
            _nonregular_nodes(av, out)
        elif op is SUBPATTERN:
            _nonregular_nodes(av[-1], out)
        elif op is BRANCH:
            for branch in av[1]:
                _nonregular_nodes(branch, out)
        elif op is MAX_REPEAT or op is MIN_REPEAT or op is POSSESSIVE_REPEAT:
            _nonregular_nodes(av[2], out)
            if op is POSSESSIVE_REPEAT:
                out.setdefault("possessive", []).append(op)


def _first_nonregular(tree, text: str, verbose: bool) -> tuple[str, int, int]:
    """The non-regular construct of ``tree`` that comes first in ``text``, as (kind, start, end).

    The k-th node of each kind (in the order its syntax appears) is the k-th token of that kind
    the lexer finds; the parser may merge identical prefixes of alternatives, so a kind can have
    fewer nodes than tokens, never more.
    """
    nodes: dict = {}
    _nonregular_nodes(tree, nodes)
    tokens: dict = {}
    for kind, start, end in _scan(text, verbose):
        tokens.setdefault(kind, []).append((start, end))
    found = []
    for kind, seen in nodes.items():
        spans = tokens.get(kind)
        for k in range(len(seen)):
            if spans:
                start, end = spans[min(k, len(spans) - 1)]
                found.append((start, kind, end))
            else:  # pragma: no cover - the lexer and the parser disagree
                found.append((0, kind, 0))
    start, kind, end = min(found)
    return kind, start, end


# -------------------------------------------------------------------------------------------------
# Public entry point
# -------------------------------------------------------------------------------------------------


def parse_regex(pattern: str, flags: int = 0) -> Node:
    """Parse a Python ``re`` pattern into the regular AST of :mod:`.regex_ast`.

    Parameters
    ----------
    pattern : str
        A pattern in Python's ``re`` syntax, optionally with ``\\p{..}``/``\\P{..}`` Unicode
        properties in the ``regex`` module's syntax.
    flags : int
        ``re`` flags: ``IGNORECASE``, ``DOTALL``, ``ASCII``, ``MULTILINE``, ``VERBOSE`` (and the
        no-op ``UNICODE``, ``DEBUG``).

    Returns
    -------
    Node
        A tree whose language (with assertions read as ``re`` reads them) is exactly
        ``{s : re.fullmatch(pattern, s, flags)}``.

    Raises
    ------
    RegexError
        For a malformed pattern (with ``re``'s message and position), an unknown property, the
        ``LOCALE`` flag, or a construct that is not regular (back-references, look-ahead and
        look-behind, conditionals, atomic groups, possessive quantifiers); ``.pos`` is an index
        into ``pattern``.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"parse_regex takes a str pattern, got {type(pattern).__name__}")
    if isinstance(flags, bool) or not isinstance(flags, int):
        raise TypeError(f"flags must be re flags (an int), not {flags!r}")
    flags = int(flags) & ~F_DEBUG
    if flags & F_LOCALE:
        raise RegexError("the LOCALE flag cannot be used with a str pattern", pattern)
    if flags & F_TEMPLATE:
        raise RegexError("the TEMPLATE flag is not supported", pattern)

    verbose = _leading_verbose(pattern, flags)
    subst = _Substitution(pattern, flags, verbose)

    tree = _parse(subst, flags)
    global_flags = tree.state.flags
    if bool(global_flags & F_VERBOSE) != verbose and subst.properties:
        # re switched to verbose mode later than the lexer guessed (3.10 allows (?x) anywhere)
        verbose = not verbose
        subst = _Substitution(pattern, flags, verbose)
        tree = _parse(subst, flags)
    verbose = bool(global_flags & F_VERBOSE)

    lowering = _Lowering(subst.properties, pattern)
    try:
        return lowering.sequence(tree, global_flags)
    except _NotRegular:
        kind, start, end = _first_nonregular(tree, subst.text, verbose)
        what = _CONSTRUCTS[kind].format(text=subst.readable(subst.text[start:end]))
        raise RegexError(f"{what} is not regular", pattern, subst.original_pos(start)) from None


def _parse(subst: _Substitution, flags: int):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning "possible nested set" and the like
            return _sre_parse.parse(subst.text, flags)
    except re.error as exc:
        raise RegexError(subst.readable(exc.msg), subst.original, subst.original_pos(exc.pos)) from None
    except (OverflowError, ValueError, RecursionError) as exc:
        raise RegexError(str(exc), subst.original) from None
