"""JSON pieces of lazy networks: strings of bounded length, arrays, objects as key sets.

The flat constructions (:mod:`.strings`, :mod:`.jsontext`) copy what is counted: a string of
``maxLength: 5000`` is 5,000 copies of one character's spellings (times an exclusion automaton),
an array of ``maxItems: 1000`` a thousand copies of its separators, an object whose keys may come
in any order a state per subset of keys. These functions add the same languages to a
:class:`~tokenfsm.automata.network.Network` as pieces whose count (or key set) is held in the
walk's configuration instead. Pieces in, piece number out: the schema compiler decides which
values are pieces and passes their numbers.

* :func:`string_piece`: ``"..."`` with ``min_length..max_length`` decoded characters, every
  spelling JSON allows (or only the plain ones), and ``excludes`` forbidden in the text between
  the quotes, exactly: the exclusion automaton's state is carried from character to character.
* :func:`array_piece`: ``[ item, item ]`` with leading items of their own and ``min_items..
  max_items`` items in all.
* :func:`object_piece`: ``{ "key": value, ... }`` whose declared keys may come in any order, each at
  most once, required keys before the object closes, undeclared keys (when given) anywhere among
  them, ``min_properties..max_properties`` members in all.

Whitespace, separators and key spellings are those of :mod:`.jsontext` (``ws`` after ``{ [ , :``
and after every member or item), so each piece is the flat construction's language.

Example
-------
>>> from tokenfsm.automata.network import Network
>>> net = Network()
>>> s = string_piece(net, max_length=10**9, excludes=["<|im_end|>"])
>>> n = value_piece(net, integer_dfa)                                   # doctest: +SKIP
>>> lb = net.build(s)
>>> lb.accepts(b'"' + b"x" * 5000 + b'"'), lb.accepts(b'"a<|im_end|>"')
(True, False)

The flat languages are xgrammar's and llguidance's JSON grammars; holding the count or the key
set in the configuration is how llguidance writes objects and how counting automata (Turonova
et al., OOPSLA 2020) write bounded repetitions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable, Sequence

from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import AutomatonError
from tokenfsm.automata.network import (
    EMPTY,
    Call,
    Network,
    Text,
    choice,
    concat,
    optional,
    sep_by,
    star,
)

from .jsontext import separators
from .strings import escape_image, escape_policy

__all__ = ["string_piece", "array_piece", "object_piece", "value_piece", "LazyMember",
           "TICK_MARK", "prefix_free"]

#: The character that marks the end of one decoded character inside a string body's automaton
#: (a control character, which JSON text never holds raw between quotes).
TICK_MARK = 0x1F
_MARK = chr(TICK_MARK)
_QUOTE = DFA.literal('"')


def value_piece(net: Network, dfa: DFA) -> int:
    """A plain piece of the value texts ``dfa`` (a number, an enum, a small object...)."""
    return net.piece(Text(dfa))


def _marked(value: DFA, escapes: str, budget) -> DFA:
    """The spellings of the decoded strings ``value``, each character followed by the mark
    (``(C mark)*`` for every string: any number of characters, each in any allowed spelling)."""
    mark = DFA.literal(_MARK)
    escape_policy(escapes)
    return value.substitute(lambda cs: DFA.concat_all([escape_image(cs, escapes), mark]),
                            budget=budget)


def _excluding_unmarked(excludes: list[str]) -> DFA:
    """Texts with marks anywhere whose text without the marks contains none of ``excludes``."""
    if any(_MARK in e for e in excludes):
        raise ValueError("an excluded string may not hold the control character U+001F")
    plain = DFA.excluding(excludes) & DFA.from_charset(~CharSet.of(_MARK)).star()
    marks = DFA.literal(_MARK).star()
    return plain.substitute(lambda cs: DFA.concat_all([marks, DFA.from_charset(cs)]), suffix=marks)


def string_piece(net: Network, min_length: int = 0, max_length: int | None = None,
                 excludes: Iterable[str] = (), escapes: str = "all",
                 value: DFA | None = None) -> int:
    """A counted piece: the JSON strings of ``min_length..max_length`` decoded characters.

    Parameters
    ----------
    net : Network
    min_length, max_length : int
        Bounds on the decoded length in code points (``max_length=None``: unbounded), as
        ``jsonschema`` counts them (an escape or a surrogate pair is one character).
    excludes : iterable of str
        Substrings the text between the quotes must not contain (as written, before
        unescaping), across characters and across tokens.
    escapes : {"all", "minimal", "plain-ascii"}
        The spellings of a policy of :data:`.strings.ESCAPES` (see
        :func:`.strings.json_encode`).
    value : DFA, optional
        Decoded strings the text must spell, whatever their length (an automaton over code
        points: a ``pattern`` or ``format``); the count is still the bounds'. None: any.

    Returns
    -------
    int
        The piece's number.
    """
    excludes = [e for e in excludes]
    body = _marked(DFA.universal() if value is None else value, escapes, net.budget)
    if excludes:
        body = body & _excluding_unmarked(excludes)
    expr = concat(Text(_QUOTE), Text(body, tick=TICK_MARK), Text(_QUOTE))
    return net.counted(expr, lo=min_length, hi=max_length)


def array_piece(net: Network, prefix: Sequence[int], items: int | None, ws: DFA,
                min_items: int = 0, max_items: int | None = None) -> int:
    """A counted piece: ``[`` items ``]``, item ``i < len(prefix)`` a text of piece
    ``prefix[i]``, later ones of piece ``items`` (None: no more items), ``min_items..max_items``
    items in all.

    Parameters
    ----------
    net : Network
    prefix : sequence of int
        Pieces of the leading items (``prefixItems``).
    items : int or None
        Piece of every later item.
    ws : DFA
        The whitespace allowed between tokens (:func:`.jsontext.whitespace_dfa`).
    min_items, max_items : int

    Returns
    -------
    int
    """
    comma = separators(ws)[1]
    w = Text(ws)
    rest = None
    if items is not None:
        one = concat(Text(comma), Call(items, tick=True), w)
        rest = star(one)
    # from the last prefix position back: each item optional, the next ones only after it
    tail = None
    if items is not None:
        tail = concat(Call(items, tick=True), w, rest)
    for i in range(len(prefix) - 1, -1, -1):
        nxt = concat(Text(comma), tail) if tail is not None else None
        here = concat(Call(prefix[i], tick=True), w)
        tail = concat(here, optional(nxt)) if nxt is not None else here
    inner = optional(tail) if tail is not None else concat()
    body = concat(Text(DFA.literal("[")), w, inner, Text(DFA.literal("]")))
    return net.counted(body, lo=min_items, hi=max_items)


@dataclass(frozen=True)
class LazyMember:
    """A declared property of :func:`object_piece`: its name (written in its shortest JSON
    spelling, as :func:`.jsontext.key_text`) or its key texts as a DFA, its value, and whether
    it is required.

    ``value`` is a piece number (the value is a call of it) or the value texts as a DFA written
    in place, prefix-free (no text goes on past a whole value: strings, objects, arrays,
    literals) and without placeholders: the member's key is then written by a call reading the
    text's last character. Members may share a name when their values tell them apart (the
    values of one property that different alternatives of an object allow: each member one of
    them, its key a term reads; see :func:`object_piece`)."""

    key: str | DFA
    value: int | DFA
    required: bool = False


def _check_disjoint(members, keys: list, extra_keys: list) -> None:
    """Key texts that could be read as two members (texts given as automata that overlap a
    name or each other; members that share a name are one key text, see :class:`LazyMember`)."""
    names: dict = {}
    for i, m in enumerate(members):
        if isinstance(m.key, str):
            names.setdefault(m.key, i)
    # distinct names have distinct shortest spellings, and JSON strings are prefix-free: only
    # key texts given as automata need a product, against the names at once and each other
    others = [(i, k) for i, k in enumerate(keys) if not isinstance(members[i].key, str)]
    others += [(len(keys) + j, k) for j, k in enumerate(extra_keys)]
    if not others:
        return
    # a declared name's text is one string: read it, rather than intersect
    texts = {i: json.dumps(name, ensure_ascii=False) for name, i in names.items()}
    for n, (i, a) in enumerate(others):
        j = next((j for j, t in texts.items() if a.accepts(t)), None)
        if j is not None:
            raise AutomatonError(f"key texts {j} and {i} overlap")
        for j, b in others[:n]:
            if not (a & b).is_empty():
                raise AutomatonError(f"key texts {j} and {i} overlap")


def prefix_free(value: DFA) -> bool:
    """Whether no text of ``value`` goes on past another: what a value written in place in a
    key-set piece must be (see :class:`LazyMember`)."""
    d = value.minimize()
    return not any(t for f in d.accepting for t in d.delta[f])


def _last_characters(value: DFA) -> list[tuple[CharSet, DFA]]:
    """``value`` (prefix-free) as ``(last characters, texts before them)`` pairs, one per class
    of characters that ends a text: each text is one of the second's followed by one of the
    first's."""
    d = value.minimize()
    final = d.accepting
    if not prefix_free(d):
        raise AutomatonError("a value written in place must be prefix-free (no text goes on "
                             "past another)")
    delta = [[0 if t in final else t for t in row] for row in d.delta]
    out = []
    for c, cs in enumerate(d.classes):
        ends = frozenset(q for q in range(1, len(d.delta)) if d.delta[q][c] in final)
        if ends:
            out.append((cs, DFA.from_parts(d.classes, delta, ends, d.start)))
    return out


def object_piece(net: Network, members: Sequence[LazyMember], extras: Sequence[tuple] | None,
                 ws: DFA, min_properties: int = 0, max_properties: int | None = None,
                 terms: Sequence[tuple] | None = None) -> int:
    """A key-set piece: objects whose members come in any order.

    Parameters
    ----------
    net : Network
    members : sequence of LazyMember
        Declared properties; each may be written at most once, required ones must be.
    extras : sequence of (DFA, int) or None
        Undeclared members: key texts (JSON strings with quotes, disjoint from the declared keys
        and from each other) and their value piece. They may come anywhere, any number of
        times. None or empty: no undeclared keys.
    ws : DFA
    min_properties, max_properties : int
        Bounds on the number of members.
    terms : sequence of (required, forbidden) pairs of member indices, optional
        The object meets one of them (the members' ``required`` is then not read); see
        :meth:`~tokenfsm.automata.network.Network.key_set`. Each forbids all but one, at most,
        of the members that share a name.

    Returns
    -------
    int

    Raises
    ------
    AutomatonError
        Two key texts that overlap (a key would not say which member it starts), a value
        written in place that is not prefix-free, a term leaving members of one name free.
    NondeterministicCall
        Members of one name whose values the walk cannot tell apart (called values that begin
        alike; see :class:`LazyMember`), from :meth:`~tokenfsm.automata.network.Network.build`.
    """
    colon, comma = separators(ws)
    w = Text(ws)
    keys = [DFA.literal(json.dumps(m.key, ensure_ascii=False)) if isinstance(m.key, str)
            else m.key for m in members]
    _check_disjoint(members, keys, [k for k, _ in (extras or ())])
    # members of one name share its key text; a value written in place ends in a call that
    # reads its last character and writes the key (all checked before a piece is added)
    by_key: dict = {}
    for i, m in enumerate(members):
        by_key.setdefault(m.key if isinstance(m.key, str) else ("dfa", i), []).append(i)
    if terms is None:
        terms = [([i for i, m in enumerate(members) if m.required], ())]
    shared = [g for g in by_key.values() if len(g) > 1]
    for req, forb in terms:
        if any(len(set(g) - set(forb)) > 1 for g in shared):
            raise AutomatonError(f"the term {(tuple(req), tuple(forb))} leaves two members of "
                                 "one name free (the name could be written twice)")
    split = {i: _last_characters(m.value) for i, m in enumerate(members)
             if isinstance(m.value, DFA)}
    last: dict = {}
    alts = []
    for group in by_key.values():
        values = []
        for i in group:
            for chars, stem in split.get(i, ()):
                if chars not in last:
                    last[chars] = net.piece(Text(DFA.from_charset(chars)))
                values.append(concat(Text(stem), Call(last[chars], key=i)))
            if i not in split:
                values.append(Call(members[i].value, key=i))
        alts.append(concat(Text(keys[group[0]]), Text(colon),
                           values[0] if len(values) == 1 else choice(*values)))
    alts += [concat(Text(k), Text(colon), Call(v)) for k, v in (extras or ())]
    # (the whitespace after a member is shared by all of them: every call returns to one state)
    members_text = optional(sep_by(concat(choice(*alts), w), Text(comma))) if alts else EMPTY
    body = concat(Text(DFA.literal("{")), w, members_text, Text(DFA.literal("}")))
    return net.key_set(body, len(members), lo=min_properties, hi=max_properties, terms=terms)
