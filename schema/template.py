"""Slot templates: literal text with regex-constrained slots between tags, as one automaton.

A fill-in-the-middle response is fixed text with holes the model fills, each hole wrapped in tags
and constrained by its own regular expression::

    <|GIM_RESPONSE|>The capital is <|MASKED id="m_0"|>Paris<|/MASKED|>.<|/GIM_RESPONSE|>

Compiling the template naively (``open tag``, the slot regex, ``close tag``, concatenated) has a
well-known failure: a permissive slot regex such as ``.*`` or ``[^，]+`` matches its own close tag
and every tag after it, so a sampler can stop *inside* the slot with a text that still "parses".
Here each slot's content is its regex **intersected with the language of strings that contain no
tag**: no close tag, no open tag of any slot name, no special marker the literal text uses (outer
markers such as ``<|/GIM_RESPONSE|>``), and none of the extra strings the caller forbids. In addition the close tag may occur in the slot
region only at its very end, even across the content/tag boundary, so the first close tag after an
open tag always ends the slot and :meth:`Template.parse` is unambiguous. A slot can end only where
its regex is satisfied, tags appear in the template's order, and nothing follows the final text.

Slot regexes are Python ``re`` patterns, exactly (``\\（``, ``\\<`` and an unescaped ``/`` mean
what ``re`` says); patterns of other dialects (``(?<name>..)``, look-around) raise
:class:`~tokenfsm.automata.RegexError` naming the slot.

Example
-------
>>> from tokenfsm.schema.template import compile_template, Slot
>>> t = compile_template(
...     ["<|GIM_RESPONSE|>The capital is ", Slot(r"[A-Z][a-z]+", name="m_0"), ".<|/GIM_RESPONSE|>"])
>>> text = '<|GIM_RESPONSE|>The capital is <|MASKED id="m_0"|>Paris<|/MASKED|>.<|/GIM_RESPONSE|>'
>>> t.accepts(text), t.parse(text)
(True, {'m_0': 'Paris'})
>>> t.accepts(text.replace("Paris", "Paris<|/MASKED|>"))
False

Where the idea comes from: the structural tags of xgrammar (a trigger, a constrained body, an end
marker) and llguidance's lazy lexemes stop a body at its end marker; doing it with an exact
"contains none of" intersection (Aho-Corasick, see :mod:`tokenfsm.automata.exclusion`) makes the
guarantee hold for any slot regex rather than by convention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Iterable, Mapping
from typing import Sequence, Union

from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import Budget, RegexError, as_budget

from .errors import TemplateError

__all__ = ["Slot", "Template", "TemplateError", "compile_template", "SLOT_NAME_PATTERN",
           "DEFAULT_OPEN_TAG", "DEFAULT_CLOSE_TAG", "MARKER"]

#: Slot names: what ``{name}`` in an open tag may be replaced by.
SLOT_NAME_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9_.:\-]*"
DEFAULT_OPEN_TAG = '<|MASKED id="{name}"|>'
DEFAULT_CLOSE_TAG = "<|/MASKED|>"
#: Special markers in literal text (``<|GIM_RESPONSE|>``) that slots may not write by default.
MARKER = re.compile(r"<\|[^<>|\s]{1,64}\|>")


@dataclass(frozen=True)
class Slot:
    """A hole in a template.

    Parameters
    ----------
    regex : str
        Python ``re`` pattern the content must match in full (``re.fullmatch``).
    name : str, optional
        Substituted for ``{name}`` in the open tag; defaults to ``m_<k>`` for the ``k``-th slot.
        Must match :data:`SLOT_NAME_PATTERN`.
    flags : int
        ``re`` flags for ``regex`` (``re.DOTALL`` lets ``.`` match a newline).
    """

    regex: str
    name: str | None = None
    flags: int = 0


Part = Union[str, Slot]


@dataclass(frozen=True)
class _Compiled:
    """One slot after compilation."""

    name: str
    regex: str
    flags: int
    open_tag: str
    content: DFA  # regex minus everything forbidden (without the boundary condition)


class Template:
    """A compiled slot template. Build with :func:`compile_template`.

    Attributes
    ----------
    dfa : DFA
        The automaton of every complete response.
    parts : tuple of (str or Slot)
        The template as given, slot names filled in.
    open_tag, close_tag : str
        The tag spellings (``open_tag`` may contain ``{name}``).
    forbidden : tuple of str
        The literal strings no slot content may contain (close tag, each slot's open tag, the
        caller's extra strings).
    tag_regex : str
        A Python regex matching any tag of the template (open tag of any slot name, close tag),
        for tag-splitting parsers.
    """

    def __init__(self, parts, slots, open_tag, close_tag, forbidden, tag_regex, dfa):
        self.parts: tuple[Part, ...] = tuple(parts)
        self._slots: tuple[_Compiled, ...] = tuple(slots)
        self.open_tag = open_tag
        self.close_tag = close_tag
        self.forbidden: tuple[str, ...] = tuple(forbidden)
        self.tag_regex = tag_regex
        self.dfa: DFA = dfa

    @property
    def slot_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self._slots)

    def slot_dfa(self, name: str) -> DFA:
        """The automaton of the contents allowed in slot ``name``."""
        for s in self._slots:
            if s.name == name:
                return s.content
        raise KeyError(name)

    def accepts(self, text: str) -> bool:
        """Whether ``text`` is a complete response of this template."""
        return self.dfa.accepts(text)

    def parse(self, text: str) -> dict[str, str]:
        """The slot contents of an accepted response, by slot name.

        Parameters
        ----------
        text : str

        Returns
        -------
        dict of str to str
            In template order.

        Raises
        ------
        TemplateError
            ``text`` is not a complete response (literal text differs, a tag is missing or out
            of order, a content breaks its regex or contains a forbidden string, or text
            follows the end). ``position`` says where it stops fitting.
        """
        if not isinstance(text, str):
            raise TypeError(f"parse needs a str, not {type(text).__name__}")
        out: dict[str, str] = {}
        pos = 0
        slots = iter(self._slots)
        for part in self.parts:
            if isinstance(part, str):
                if not text.startswith(part, pos):
                    raise TemplateError(f"expected {part!r}", pos)
                pos += len(part)
                continue
            slot = next(slots)
            if not text.startswith(slot.open_tag, pos):
                raise TemplateError(f"expected the open tag {slot.open_tag!r} of slot {slot.name!r}", pos)
            start = pos + len(slot.open_tag)
            end = text.find(self.close_tag, start)
            if end < 0:
                raise TemplateError(f"slot {slot.name!r} is never closed by {self.close_tag!r}", start)
            content = text[start:end]
            if not slot.content.accepts(content):
                bad = [f for f in self.forbidden if f in content]
                why = (f"contains {bad[0]!r}" if bad
                       else f"does not match {slot.regex!r}")
                raise TemplateError(f"content {content!r} of slot {slot.name!r} {why}", start)
            out[slot.name] = content
            pos = end + len(self.close_tag)
        if pos != len(text):
            raise TemplateError(f"unexpected text after the end: {text[pos:pos + 40]!r}", pos)
        return out

    def render(self, values: Mapping[str, str]) -> str:
        """The response text with ``values`` in the slots (checked against the template).

        Raises
        ------
        TemplateError
            A slot value is missing or the result is not accepted.
        """
        if not isinstance(values, Mapping):
            raise TypeError(f"values must map slot names to str, not {type(values).__name__}")
        pieces = []
        slots = iter(self._slots)
        for part in self.parts:
            if isinstance(part, str):
                pieces.append(part)
                continue
            slot = next(slots)
            if slot.name not in values:
                raise TemplateError(f"no value for slot {slot.name!r}")
            if not isinstance(values[slot.name], str):
                raise TypeError(f"the value for slot {slot.name!r} must be a str, "
                                f"not {type(values[slot.name]).__name__}")
            pieces.extend((slot.open_tag, values[slot.name], self.close_tag))
        text = "".join(pieces)
        self.parse(text)  # raises with the reason if a value does not fit
        return text

    def __repr__(self) -> str:
        return f"<Template: {len(self._slots)} slots, {self.dfa.num_states} states>"


def _open_tag_family(open_tag: str) -> DFA:
    """Every spelling of the open tag, ``{name}`` ranging over all slot names."""
    if "{name}" not in open_tag:
        return DFA.literal(open_tag)
    pieces = open_tag.split("{name}")
    name = DFA.from_regex(SLOT_NAME_PATTERN)
    seq: list[DFA] = [DFA.literal(pieces[0])]
    for p in pieces[1:]:
        seq.extend((name, DFA.literal(p)))
    return DFA.concat_all(seq)


def _tag_regex(open_tag: str, close_tag: str) -> str:
    if "{name}" in open_tag:
        opener = SLOT_NAME_PATTERN.join(re.escape(p) for p in open_tag.split("{name}"))
    else:
        opener = re.escape(open_tag)
    return f"{opener}|{re.escape(close_tag)}"


def compile_template(parts: Sequence[Part], open_tag: str = DEFAULT_OPEN_TAG,
                     close_tag: str = DEFAULT_CLOSE_TAG, forbidden: Iterable[str] = (),
                     forbid_markers: bool = True, budget: Budget | None = None) -> Template:
    """Compile literal text and slots into one automaton of complete responses.

    Parameters
    ----------
    parts : sequence of str or Slot
        The response in order. Adjacent strings are fine; empty strings are ignored.
    open_tag : str
        Written before each slot's content; ``{name}`` is replaced by the slot name.
    close_tag : str
        Written after each slot's content.
    forbidden : iterable of str
        Extra strings no slot content may contain, e.g. the outer markers
        ``("<|GIM_RESPONSE|>", "<|/GIM_RESPONSE|>")``. The close tag and the open tag (for any
        slot name) are always forbidden.
    forbid_markers : bool
        Also forbid every special marker of the form ``<|...|>`` that the literal text uses (such
        as ``<|GIM_RESPONSE|>`` and ``<|/GIM_RESPONSE|>``): they are tags of the response too, and
        a slot that could write one would let the response close early.
    budget : Budget, optional
        Limits every automaton construction.

    Returns
    -------
    Template

    Raises
    ------
    TypeError
        ``parts``, a tag, a slot's fields or ``forbidden`` of the wrong type (``forbidden`` must
        be a collection of strings, not one string, as ``excludes`` elsewhere).
    RegexError
        A slot regex that is not Python ``re`` syntax or not regular; the message names the slot.
    TemplateError
        Empty tags, a bad or duplicate slot name, literal text containing a tag, or a slot whose
        regex leaves no content once the forbidden strings are removed.
    BudgetExceeded
        The automaton grew past ``budget``.
    """
    budget = as_budget(budget)
    if isinstance(parts, str) or not isinstance(parts, Iterable):
        raise TypeError("parts must be a sequence of str and Slot, not "
                        + ("one string" if isinstance(parts, str) else type(parts).__name__))
    for tag in (open_tag, close_tag):
        if not isinstance(tag, str):
            raise TypeError(f"tags must be str, not {type(tag).__name__}")
    if not open_tag or not close_tag:
        raise TemplateError("open_tag and close_tag must be non-empty")
    if "{name}" in close_tag:
        raise TemplateError("close_tag cannot depend on the slot name")
    if isinstance(forbidden, str) or not isinstance(forbidden, Iterable):
        raise TypeError("forbidden must be a collection of strings, not "
                        + ("one string" if isinstance(forbidden, str) else type(forbidden).__name__))
    extra = [f for f in forbidden]
    for f in extra:
        if not isinstance(f, str):
            raise TypeError(f"forbidden strings must be str, got {f!r}")
        if not f:
            raise TemplateError("forbidden strings must be non-empty")

    named: list[Part] = []
    names: list[str] = []
    k = 0
    for part in parts:
        if isinstance(part, str):
            if part:
                named.append(part)
            continue
        if not isinstance(part, Slot):
            raise TemplateError(f"template parts must be str or Slot, not {type(part).__name__}")
        if not isinstance(part.regex, str) or not isinstance(part.name, (str, type(None))):
            raise TypeError(f"a Slot's regex and name must be str, not {part.regex!r}, {part.name!r}")
        name = part.name if part.name is not None else f"m_{k}"
        k += 1
        if not re.fullmatch(SLOT_NAME_PATTERN, name):
            raise TemplateError(f"slot name {name!r} does not match {SLOT_NAME_PATTERN}")
        if name in names:
            raise TemplateError(f"duplicate slot name {name!r}")
        names.append(name)
        named.append(Slot(part.regex, name, part.flags))

    tag_family = _open_tag_family(open_tag) | DFA.literal(close_tag)
    tag_re = re.compile(_tag_regex(open_tag, close_tag))
    for part in named:
        if isinstance(part, str) and tag_re.search(part):
            raise TemplateError(f"literal text {part!r} contains a tag "
                                f"({tag_re.search(part).group()!r})")

    if forbid_markers:
        extra += [m for part in named if isinstance(part, str) for m in MARKER.findall(part)]
    open_tags = [open_tag.replace("{name}", n) for n in names]
    literal_forbidden = list(dict.fromkeys([close_tag, *open_tags, *extra]))
    anything = DFA.universal()
    # contains no open tag of any name and no close tag ...
    no_tags = ~DFA.concat_all([anything, tag_family, anything], budget=budget)
    # ... and none of the caller's strings
    no_extra = DFA.excluding(extra, budget=budget) if extra else anything
    clean = no_tags.intersect(no_extra, budget=budget)
    # the close tag occurs in "content + close tag" only at the very end (no overlap either)
    close = DFA.literal(close_tag)
    once_at_end = ~DFA.concat_all([anything, close, DFA.from_charset(CharSet.any()), anything],
                                  budget=budget)

    compiled: list[_Compiled] = []
    pieces: list[DFA] = []
    for part in named:
        if isinstance(part, str):
            pieces.append(DFA.literal(part, budget=budget))
            continue
        try:
            regex = DFA.from_regex(part.regex, part.flags, budget=budget)
        except RegexError as e:
            raise RegexError(f"slot {part.name!r}: {e.msg}", e.pattern, e.pos) from e
        content = regex.intersect(clean, budget=budget)
        if content.is_empty():
            raise TemplateError(f"slot {part.name!r}: no content matches {part.regex!r} "
                                f"without containing one of {literal_forbidden!r}")
        region = content.concat(close, budget=budget).intersect(once_at_end, budget=budget)
        if region.is_empty():
            raise TemplateError(f"slot {part.name!r}: every content would run into the close tag")
        otag = open_tag.replace("{name}", part.name)
        compiled.append(_Compiled(part.name, part.regex, part.flags, otag, content))
        pieces.extend((DFA.literal(otag), region))
    dfa = DFA.concat_all(pieces, budget=budget)
    return Template(named, compiled, open_tag, close_tag, literal_forbidden, tag_re.pattern, dfa)
