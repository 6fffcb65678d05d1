"""JSON Schema ``pattern``: ECMA-262 regular expressions, read into the project's regex tree.

JSON Schema says ``pattern`` is an ECMA-262 regular expression, matched by *search* (``"a"``
accepts ``"xay"``) with Unicode (``u`` flag) semantics. That dialect differs from Python's in ways
that change which strings match: ``\\d`` and ``\\w`` are ASCII only while ``\\s`` is a fixed
Unicode list, ``.`` excludes the four line terminators, ``$`` matches only at the very end (never
before a final newline), ``\\b`` looks at ASCII word characters, and the syntax has its own escapes
(``\\cX``, ``\\u{1F600}``, ``\\p{Script=Greek}``) and classes (``[^]`` is any character, ``[]``
none). So patterns are parsed here by a small recursive-descent parser and lowered to the regex
tree of :mod:`tokenfsm.automata.regex_ast`, never translated to Python syntax.

Leniencies from ECMA-262 Annex B, which most validators apply: ``{``, ``}`` and ``]`` are
literals where they cannot be syntax, a class escape next to ``-`` in a class (``[\\w-.]``)
makes the ``-`` a literal, and an escaped character that is neither a letter nor a digit is
that character (``\\~``, ``\\_``; a ``u`` pattern may escape only syntax characters).
Back-references and look-around are not regular and raise
:class:`~tokenfsm.automata.errors.RegexError` with the position.

Example
-------
>>> d = ecma_pattern_dfa(r"^\\d{3}$")
>>> d.accepts("123"), d.accepts("123\\n"), d.accepts("١٢٣")
(True, False, False)
>>> ecma_pattern_dfa("a+").accepts("xaay")
True

The grammar follows ECMA-262 §22.2.1 (Patterns) and Annex B.1.2; the layering (syntax tree first,
automaton later) follows rust-lang/regex's regex-syntax.
"""

from __future__ import annotations

import re

from tokenfsm.automata.cache import byte_lru_cache
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import Budget, RegexError
from tokenfsm.automata.regex_ast import Alt, Assert, Chars, Node, Repeat, Seq

__all__ = ["parse_ecma", "ecma_pattern_dfa", "counted_class", "ECMA_DIGIT", "ECMA_WORD",
           "ECMA_SPACE", "LINE_TERMINATORS"]

ECMA_DIGIT = CharSet.range("0", "9")
ECMA_WORD = CharSet([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
# WhiteSpace and LineTerminator (ECMA-262 §12.2, §12.3; Zs as of Unicode 15)
ECMA_SPACE = CharSet([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680),
                      (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
                      (0x3000, 0x3000), (0xFEFF, 0xFEFF)])
LINE_TERMINATORS = CharSet.of("\n", "\r", 0x2028, 0x2029)
ANY = CharSet.any()
DOT = ANY - LINE_TERMINATORS

_CLASS_ESCAPES = {"d": ECMA_DIGIT, "D": ~ECMA_DIGIT, "w": ECMA_WORD, "W": ~ECMA_WORD,
                  "s": ECMA_SPACE, "S": ~ECMA_SPACE}
_CONTROL_ESCAPES = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}
_QUANT = re.compile(r"\{(\d+)(,(\d*))?\}")
_HEX = set("0123456789abcdefABCDEF")


def _is_high(c: int) -> bool:
    return 0xD800 <= c <= 0xDBFF


def _is_low(c: int) -> bool:
    return 0xDC00 <= c <= 0xDFFF


def _combine(hi: int, lo: int) -> int:
    return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)


def _single(c: int) -> CharSet:
    """One code point as a set; a lone surrogate can match no scalar value, so it is empty."""
    return CharSet.empty() if 0xD800 <= c <= 0xDFFF else CharSet.of(c)


class _Parser:
    """Recursive descent over ECMA-262 ``Pattern`` (u-mode with the Annex B leniencies above)."""

    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self._last_single: int | None = None  # the code point of the last escape, if one

    # -- helpers -------------------------------------------------------------------------------
    def error(self, msg: str, pos: int | None = None):
        raise RegexError(msg, self.p, self.i if pos is None else pos)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def eat(self, s: str) -> bool:
        if self.p.startswith(s, self.i):
            self.i += len(s)
            return True
        return False

    # -- grammar -------------------------------------------------------------------------------
    def parse(self) -> Node:
        node = self.disjunction()
        if self.i < len(self.p):  # only an unmatched ")" stops a disjunction early
            self.error("unmatched ')'")
        return node

    def disjunction(self) -> Node:
        alts = [self.alternative()]
        while self.eat("|"):
            alts.append(self.alternative())
        return alts[0] if len(alts) == 1 else Alt(tuple(alts))

    def alternative(self) -> Node:
        items = []
        while self.i < len(self.p) and self.peek() not in "|)":
            items.append(self.term())
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def term(self) -> Node:
        start = self.i
        assertion = self.assertion()
        if assertion is not None:
            if self.quantifier_ahead():
                self.error("nothing to repeat (an assertion cannot be quantified)")
            return assertion
        atom = self.atom()
        return self.quantified(atom, start)

    def assertion(self) -> Node | None:
        if self.eat("^"):
            return Assert("start")
        if self.eat("$"):
            return Assert("end_string")
        if self.p.startswith("\\b", self.i):
            self.i += 2
            return Assert("word_boundary", ECMA_WORD)
        if self.p.startswith("\\B", self.i):
            self.i += 2
            # ECMA's \B holds in the empty string (no word character on either side); the tree's
            # not_word_boundary follows Python's re, which may not, so say it explicitly
            return Alt((Assert("not_word_boundary", ECMA_WORD),
                        Seq((Assert("start"), Assert("end_string")))))
        for look, what in (("(?=", "look-ahead"), ("(?!", "negative look-ahead"),
                           ("(?<=", "look-behind"), ("(?<!", "negative look-behind")):
            if self.p.startswith(look, self.i):
                self.error(f"{what} assertion is not regular")
        return None

    def quantifier_ahead(self) -> bool:
        c = self.peek()
        return c in ("*", "+", "?") or (c == "{" and _QUANT.match(self.p, self.i) is not None)

    def quantified(self, atom: Node, start: int) -> Node:
        c = self.peek()
        if c in ("*", "+", "?"):
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        elif c == "{" and (m := _QUANT.match(self.p, self.i)):
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            if hi is not None and hi < lo:
                self.error("numbers out of order in {} quantifier")
            self.i = m.end()
        else:
            return atom
        self.eat("?")  # lazy: same strings
        if self.quantifier_ahead():
            self.error("nothing to repeat")
        return Repeat(atom, lo, hi)

    def atom(self) -> Node:
        c = self.peek()
        if c == ".":
            self.i += 1
            return Chars(DOT)
        if c == "(":
            return self.group()
        if c == "[":
            return Chars(self.char_class())
        if c == "\\":
            return Chars(self.escape(in_class=False))
        if c in ("*", "+", "?") or (c == "{" and self.quantifier_ahead()):
            self.error("nothing to repeat")
        # Annex B: "{", "}" and "]" are literals when they cannot be syntax
        return Chars(_single(self.source_char()))

    def source_char(self) -> int:
        """One pattern character; a surrogate pair written as two code units becomes one."""
        c = ord(self.p[self.i])
        self.i += 1
        if _is_high(c) and self.i < len(self.p) and _is_low(ord(self.p[self.i])):
            c = _combine(c, ord(self.p[self.i]))
            self.i += 1
        return c

    def group(self) -> Node:
        open_at = self.i
        self.i += 1
        if self.eat("?:"):
            pass
        elif self.p.startswith("?<", self.i):
            self.i += 2
            m = re.compile(r"[A-Za-z_$][\w$]*>").match(self.p, self.i)
            if m is None:
                self.error("bad group name")
            self.i = m.end()
        elif self.peek() == "?":
            self.error("unsupported group syntax (inline flags and Python extensions are not ECMA)")
        node = self.disjunction()
        if not self.eat(")"):
            self.error("missing ')'", open_at)
        return node

    # -- classes and escapes --------------------------------------------------------------------
    def char_class(self) -> CharSet:
        open_at = self.i
        self.i += 1
        negate = self.eat("^")
        acc = CharSet.empty()
        while True:
            if self.i >= len(self.p):
                self.error("missing ']'", open_at)
            if self.eat("]"):
                break
            first, single = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                dash_at = self.i
                self.i += 1
                second, single2 = self.class_atom()
                if single is None or single2 is None:
                    # Annex B: [\w-.] is \w, "-" and "."
                    acc = acc | first | second | CharSet.of("-")
                    continue
                if single > single2:
                    self.error("range out of order in character class", dash_at)
                acc = acc | CharSet([(single, single2)])
                continue
            acc = acc | first
        return ~acc if negate else acc

    def class_atom(self) -> tuple[CharSet, int | None]:
        """One class member: its set, and its code point when it is a single character."""
        if self.peek() == "\\":
            if self.p.startswith("\\b", self.i):
                self.i += 2
                return CharSet.of("\b"), 8
            cs = self.escape(in_class=True)
            return cs, self._last_single
        c = self.source_char()
        return _single(c), c

    def escape(self, in_class: bool) -> CharSet:
        """Parse ``\\...`` (not ``\\b``/``\\B`` outside classes) into a set of code points."""
        at = self.i
        self.i += 1
        self._last_single = None
        if self.i >= len(self.p):
            self.error("pattern ends with a backslash", at)
        c = self.p[self.i]
        self.i += 1
        if c in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[c]
        if c in _CONTROL_ESCAPES:
            return self._char(ord(_CONTROL_ESCAPES[c]))
        if c == "c":
            letter = self.peek()
            if not ("a" <= letter <= "z" or "A" <= letter <= "Z"):
                self.error("\\c must be followed by a letter", at)
            self.i += 1
            return self._char(ord(letter) % 32)
        if c == "0" and not self.peek().isdigit():
            return self._char(0)
        if c.isdigit():
            self.error("back-references are not regular" if not in_class and c != "0"
                       else "octal escapes are not allowed in Unicode patterns", at)
        if c == "k":
            self.error("back-references are not regular", at)
        if c == "x":
            digits = self.p[self.i:self.i + 2]
            if len(digits) != 2 or not set(digits) <= _HEX:
                self.error("\\x needs two hex digits", at)
            self.i += 2
            return self._char(int(digits, 16))
        if c == "u":
            return self._char(self.unicode_escape(at))
        if c in "pP":
            return self.property(c == "P", at)
        if not c.isalnum():     # (syntax characters, and Annex B's identity escapes)
            return self._char(ord(c))
        self.error(f"unknown escape \\{c}", at)

    def _char(self, cp: int) -> CharSet:
        self._last_single = cp
        return _single(cp)

    def unicode_escape(self, at: int) -> int:
        if self.eat("{"):
            m = re.compile(r"([0-9A-Fa-f]+)\}").match(self.p, self.i)
            if m is None or int(m.group(1), 16) > 0x10FFFF:
                self.error("bad \\u{...} escape", at)
            self.i = m.end()
            return int(m.group(1), 16)
        digits = self.p[self.i:self.i + 4]
        if len(digits) != 4 or not set(digits) <= _HEX:
            self.error("\\u needs four hex digits", at)
        self.i += 4
        cp = int(digits, 16)
        low = self.p[self.i:self.i + 6]
        if _is_high(cp) and low[:2] == "\\u" and set(low[2:]) <= _HEX and len(low) == 6 \
                and _is_low(int(low[2:], 16)):
            self.i += 6
            cp = _combine(cp, int(low[2:], 16))
        return cp

    def property(self, negate: bool, at: int) -> CharSet:
        m = re.compile(r"\{([A-Za-z0-9_]+(?:=[A-Za-z0-9_]+)?)\}").match(self.p, self.i)
        if m is None:
            self.error("\\p needs a {Property} or {Property=Value}", at)
        self.i = m.end()
        cs = _property(m.group(1))
        if cs is None:
            self.error(f"unknown Unicode property {m.group(1)!r}", at)
        return ~cs if negate else cs


@byte_lru_cache("schema.ecma.property", 4 << 20)
def _property(name: str) -> CharSet | None:
    """A Unicode property (General_Category, Script, Script_Extensions, binary) as the ``regex``
    module defines it for this Unicode version; None when unknown."""
    from tokenfsm.automata.unicode_sets import property_set
    if name == "Any":
        return CharSet.any()
    try:
        return property_set("\\p{" + name + "}")
    except ValueError:
        return None


def parse_ecma(pattern: str) -> Node:
    """Parse an ECMA-262 pattern (Unicode mode, no flags) into a regex tree.

    ``^`` and ``$`` become ``Assert("start")`` and ``Assert("end_string")``; ``\\b`` and ``\\B``
    word-boundary assertions over ``[A-Za-z0-9_]``.

    Parameters
    ----------
    pattern : str

    Returns
    -------
    Node
        The tree of what the pattern matches *entirely* (no search semantics added).

    Raises
    ------
    RegexError
        Malformed syntax, back-references, look-around, with the position.
    """
    return _Parser(pattern).parse()


_COUNTED_SOURCE = re.compile(r"\^(.+)\{(\d+)(,(\d*))?\}\$", re.S)


def counted_class(pattern: str) -> tuple[str, int, int | None] | None:
    """A pattern that is one character class repeated over the whole string: the pattern of
    the class repeated any number of times, and the least and most repetitions; else None.

    JSON Schema counts a string's length in characters as the pattern counts the class's
    repetitions, so ``^C{m,n}$`` is ``^(?:C)*$`` with ``minLength: m`` and ``maxLength: n``: a
    length the lowering may count rather than ``n`` copies of the class.

    >>> counted_class("^[a-z0-9-]{1,63}$")
    ('^(?:[a-z0-9-])*$', 1, 63)
    >>> counted_class("^.{8,}$"), counted_class("^a{2}b{3}$"), counted_class("[a-z]{1,63}")
    (('^(?:.)*$', 8, None), None, None)
    """
    m = _COUNTED_SOURCE.fullmatch(pattern)
    if m is None:
        return None
    lo = int(m.group(2))
    hi = lo if m.group(3) is None else int(m.group(4)) if m.group(4) else None
    rewritten = f"^(?:{m.group(1)})*$"
    try:
        whole, one = parse_ecma(pattern), parse_ecma(rewritten)
    except RegexError:
        return None
    # the same class, repeated lo..hi times between the anchors (checked on the trees)
    if not (isinstance(one, Seq) and len(one.items) == 3 and isinstance(one.items[1], Repeat)
            and isinstance(one.items[1].item, Chars)):
        return None
    start, rep, end = one.items
    if whole != Seq((start, Repeat(rep.item, lo, hi), end)):
        return None
    return rewritten, lo, hi


@byte_lru_cache("schema.ecma.pattern_dfa", 16 << 20)
def _pattern_dfa(pattern: str, budget: Budget | None) -> DFA:
    anything = Repeat(Chars(ANY), 0, None)
    return DFA.from_ast(Seq((anything, parse_ecma(pattern), anything)), budget=budget)


def ecma_pattern_dfa(pattern: str, budget: Budget | None = None) -> DFA:
    """The strings in which the ECMA-262 ``pattern`` finds a match (JSON Schema ``pattern``).

    Parameters
    ----------
    pattern : str
    budget : Budget, optional

    Returns
    -------
    DFA
        Over decoded characters: ``[\\s\\S]*`` + pattern + ``[\\s\\S]*``, with anchors exact.

    Raises
    ------
    RegexError
    """
    return _pattern_dfa(pattern, budget)
