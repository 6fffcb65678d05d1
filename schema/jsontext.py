"""Automata of JSON texts: whitespace, objects, arrays, any value, and typed languages of values.

The schema compiler (:mod:`.compiler`) turns each subschema into a :class:`TypedLanguage`: one
automaton of JSON *text* per JSON type (``null``, ``boolean``, ``number``, ``string``, ``array``,
``object``), plus the set of types on which the language is *complete*, meaning that it holds every
spelling (in the shared spelling rules below) of every value the subschema accepts, up to the depth
limit. Complements (``not``, ``oneOf``, ``if``) are only exact on complete types; elsewhere the
compiler chooses the sound side.

Shared spelling rules, used by every sublanguage so that set operations on texts are set operations
on values wherever a language is complete:

* whitespace: at most ``n`` of space, tab, newline, carriage return at every place between
  structural tokens (after ``{ [ , :``, before ``} ] , :``), none inside scalars;
* strings: every escape JSON allows (:func:`.strings.json_string`);
* numbers: the *canonical* spellings for complements are ``-?(0|[1-9][0-9]*)(\\.[0-9]*[1-9])?``
  (no exponent, no trailing fraction zeros). Every number language the compiler builds contains
  all canonical spellings of its values (integer schemas emit exactly the canonical integers), so
  complements are taken against :data:`CANONICAL_NUMBER` and are exact on values;
* objects: keys in one order (schema order), declared names in their shortest spelling. Object
  languages are therefore complete only when unconstrained; see :mod:`.compiler` for how
  ``not``/``oneOf`` stay exact on objects by rewriting schemas instead of complementing texts.

Object and array languages are built as one automaton each (members embedded between counter
states), the way xgrammar's and llguidance's JSON converters emit one grammar rule per object: small
ones as an NFA determinised once, larger ones by :class:`.compose.Composer`, which copies member
values as blocks of table rows instead of determinising them again at every nesting level and
leaves large results unminimised until an operation needs the minimal automaton (both routes give
the same language; the compiled schema is minimised once, at the top). The subset-of-keys
construction for ``property_order="any"`` is exponential in the number of keys and runs under the
budget.

Example
-------
>>> ws = whitespace_dfa(1)
>>> obj = object_dfa([Member(key_text("a"), integer_range(), True)], None, ws)
>>> obj.accepts('{"a": 1}'), obj.accepts('{"a":  1}'), obj.accepts('{}')
(True, False, False)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Sequence

from tokenfsm.automata.cache import ByteLRU, byte_lru_cache
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA, OpaqueSymbolError, _embed
from tokenfsm.automata.errors import DEFAULT_BUDGET, Budget
from tokenfsm.automata.nfa import NFA, determinize_groups

from .numbers import integer_range, json_number  # noqa: F401  (integer_range used in the example)

__all__ = ["TYPES", "TypedLanguage", "Member", "whitespace_dfa", "key_text", "object_dfa",
           "array_dfa", "CANONICAL_NUMBER", "embed", "nfa_to_dfa"]

TYPES = ("null", "boolean", "number", "string", "array", "object")
WS_CHARS = CharSet.from_chars(" \t\n\r")

CANONICAL_NUMBER = DFA.from_regex(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?")


@byte_lru_cache("schema.jsontext.whitespace_dfa", 4 << 20)
def whitespace_dfa(n: int | None) -> DFA:
    """At most ``n`` JSON whitespace characters (``None``: any number)."""
    one = DFA.from_charset(WS_CHARS)
    return one.star() if n is None else one.repeat(0, n)


@byte_lru_cache("schema.jsontext.separators", 4 << 20)
def separators(ws: DFA) -> tuple[DFA, DFA]:
    """``ws : ws`` and ``, ws``: the texts between a key and its value, and before a further
    member or item (built once per whitespace policy: every object and array needs them)."""
    return DFA.concat_all([ws, DFA.literal(":"), ws]), DFA.concat_all([DFA.literal(","), ws])


def key_text(name: str) -> DFA:
    """The shortest JSON spelling of the property name ``name`` (quotes included)."""
    return DFA.literal(json.dumps(name, ensure_ascii=False))


# ---------------------------------------------------------------- NFA assembly

def embed(nfa: NFA, d: DFA, exit_: int) -> int | None:
    """Copy the live part of ``d`` into ``nfa``, accepting states leading to ``exit_`` by epsilon.

    Returns the entry state, or None when ``d`` is empty."""
    return _embed(nfa, d, exit_)


def embed_chain(nfa: NFA, parts: Sequence[DFA], exit_: int) -> int | None:
    """Embed the concatenation of ``parts`` (one copy of each, joined by epsilon moves) without
    determinising it on its own: the enclosing automaton is determinised once.

    Returns the entry state, or None when the concatenation is empty."""
    entry = exit_
    for p in reversed(parts):
        entry = _embed(nfa, p, entry)
        if entry is None:
            return None
    return entry


def nfa_to_dfa(nfa: NFA, budget: Budget | None, operation: str) -> DFA:
    """Determinise and minimise an NFA under ``budget`` (the construction hands its
    ``(target, classes)`` groups on to the minimisation, which then need not find them)."""
    return DFA._minimal_of(*determinize_groups(nfa, budget, operation))


class _NFABuild:
    """The :class:`.compose.Composer` interface over an :class:`NFA` (the general route)."""

    def __init__(self):
        self.nfa = NFA()

    def node(self) -> int:
        return self.nfa.new_state()

    def link(self, a: int, b: int) -> None:
        self.nfa.eps[a].append(b)

    def chain(self, parts, exit_: int) -> int | None:
        return embed_chain(self.nfa, parts, exit_)

    def build(self, start: int, accept: int, budget: Budget | None, operation: str) -> DFA:
        self.nfa.start = start
        self.nfa.accepting = {accept}
        return nfa_to_dfa(self.nfa, budget, operation)


#: Object and array automata whose embedded automata have at least this many table rows are
#: built by :class:`.compose.Composer` (it copies member values as blocks of rows instead of
#: determinising them again at every nesting level); smaller ones as one NFA determinised state
#: set by state set, the quicker route there. Both give the same automaton: a fast path, whose
#: reference is ``compose_min_rows=None`` (never compose); see ``FAST_PATHS`` in
#: :mod:`.compiler`.
COMPOSE_MIN_ROWS = 300


def _rows(d: DFA | None) -> int:
    if d is None:
        return 0
    a = getattr(d, "_array", None)
    return len(a) if a is not None else len(d.delta)


def _builder(rows: int, compose_min_rows: int | None):
    if compose_min_rows is not None and rows >= compose_min_rows:
        from .compose import Composer
        return Composer()
    return _NFABuild()


# ---------------------------------------------------------------- typed languages

@dataclass(frozen=True)
class TypedLanguage:
    """The JSON texts a subschema accepts, split by JSON type.

    Attributes
    ----------
    parts : dict
        JSON type name to the (non-empty) DFA of the texts of that type; ``number`` covers integers.
    complete : frozenset of str
        Types on which the language holds every canonical spelling of every accepted value.
    calls : frozenset of str
        The definitions whose calls some part holds (a placeholder for another automaton, see
        :mod:`.stack`): a call's texts may be of several types, so such a part cannot be split
        by type (unless :attr:`typed` says otherwise), and no product or complement can look
        inside it.
    cut : dict
        Per JSON type, the shallowest nesting depth (0: the value itself) at which values of
        that type may be missing because a language was cut there (values nested past
        ``max_depth``, a recursion cut); types not listed were not cut. A complement of a cut
        language is exact only on values shallower than that.
    typed : frozenset of (str, str)
        ``(definition, type)`` for the calls of :attr:`calls` whose texts are all of one JSON
        type and that only the part of that type holds (the shared every-object and
        every-array automata, :meth:`.stack.Modules.any_value`): a filter by type keeps or
        drops them whole.
    """

    parts: dict
    complete: frozenset
    calls: frozenset = frozenset()
    cut: dict = field(default_factory=dict)
    typed: frozenset = frozenset()

    @staticmethod
    def nothing() -> "TypedLanguage":
        return TypedLanguage({}, frozenset(TYPES))

    @staticmethod
    def of(parts: dict, complete: Iterable[str] = TYPES, calls: frozenset = frozenset(),
           cut: dict | None = None, typed: frozenset = frozenset()) -> "TypedLanguage":
        live = {t: d for t, d in parts.items() if d is not None and not d.is_empty()}
        calls = frozenset(calls)
        if typed:
            # (a typed call also held elsewhere, inside a container, is filtered as any other)
            typed = frozenset((c, t) for c, t in typed if t in live and c not in calls)
            calls |= {c for c, _ in typed}
        return TypedLanguage(live, frozenset(complete), calls,
                             {t: c for t, c in (cut or {}).items() if t in live}, typed)

    def is_empty(self) -> bool:
        return not self.parts

    def only(self, types: Iterable[str]) -> "TypedLanguage":
        types = set(types)
        untyped = self.untyped()
        if not types & self.parts.keys():
            untyped = frozenset()     # (no part kept: no text of any call either)
        elif untyped and set(self.parts) - types:
            raise OpaqueSymbolError("a type filter on a call of another automaton",
                                    targets=untyped)
        typed = frozenset((c, t) for c, t in self.typed if t in types)
        return TypedLanguage({t: d for t, d in self.parts.items() if t in types},
                             self.complete | frozenset(t for t in TYPES if t not in types),
                             untyped | {c for c, _ in typed},
                             {t: c for t, c in self.cut.items() if t in types}, typed)

    def union(self, other: "TypedLanguage", budget: Budget | None = None) -> "TypedLanguage":
        parts = dict(self.parts)
        for t, d in other.parts.items():
            parts[t] = union_of([parts[t], d], budget) if t in parts else d
        typed = self.typed | other.typed
        if typed:
            untyped = self.untyped() | other.untyped()
            typed = frozenset(x for x in typed if x[0] not in untyped)
        return TypedLanguage(parts, self.complete & other.complete, self.calls | other.calls,
                             shallower(self.cut, other.cut), typed)

    def untyped(self) -> frozenset:
        """The calls a filter by type cannot split (see :attr:`typed`)."""
        return self.calls - {c for c, _ in self.typed} if self.typed else self.calls

    def intersect(self, other: "TypedLanguage", budget: Budget | None = None) -> "TypedLanguage":
        if self.calls or other.calls:
            raise OpaqueSymbolError("an intersection with a call of another automaton",
                                    targets=self.calls | other.calls)
        parts = {}
        for t, d in self.parts.items():
            if t in other.parts:
                x = d if d is other.parts[t] else d.intersect(other.parts[t], budget)
                if not x.is_empty():
                    parts[t] = x
        # an empty side is complete when it is complete: X ∩ Y keeps all values of both
        return TypedLanguage(parts, self.complete & other.complete, frozenset(),
                             {t: c for t, c in shallower(self.cut, other.cut).items()
                              if t in parts})

    def difference(self, other: "TypedLanguage", budget: Budget | None = None) -> "TypedLanguage":
        """Texts of ``self`` not in ``other`` (exact on values where ``other`` is complete)."""
        if self.calls or other.calls:
            raise OpaqueSymbolError("a difference with a call of another automaton",
                                    targets=self.calls | other.calls)
        parts = {}
        for t, d in self.parts.items():
            x = d.difference(other.parts[t], budget) if t in other.parts else d
            if not x.is_empty():
                parts[t] = x
        return TypedLanguage(parts, self.complete, frozenset(),
                             {t: c for t, c in self.cut.items() if t in parts})

    def to_dfa(self, budget: Budget | None = None) -> DFA:
        """The texts of every type as one automaton (a union built once per language: a
        definition of several types referred to by many properties is asked for it each time)."""
        ds = [self.parts[t] for t in TYPES if t in self.parts]
        if not ds:
            return DFA.empty()
        if len(ds) == 1:
            return ds[0]
        got = self.__dict__.get("_union")
        if got is None or _rows(got) - 1 > (budget or DEFAULT_BUDGET).max_states:
            # (another language of the same automata: the lowering rebuilds ``not: false`` and
            # a closed object's witness, the shared any-value's parts, at every place)
            got = kept_by_parts(UNIONS, ds, lambda: union_of(ds, budget), budget)
        self.__dict__["_union"] = got   # (a memo, as functools.cached_property keeps one)
        return got


#: Unions of the texts of several types (:meth:`TypedLanguage.to_dfa`), by the automata joined
#: (see :func:`kept_by_parts`), across languages and compilations.
UNIONS = ByteLRU("schema.jsontext.unions", 16 << 20)


def kept_by_parts(cache: ByteLRU, parts: Sequence[DFA], make: Callable[[], DFA],
                  budget: Budget | None) -> DFA:
    """``make()``, an automaton made of the automata ``parts``, kept in ``cache`` under the
    parts' identities: the entry holds the parts, so that no other automaton takes their ids
    while it lives, and is charged for them too. Made again under a budget smaller than the
    kept automaton's rows (which bound its states): it raises there."""
    key = tuple(map(id, parts))
    kept = cache.get(key)
    if kept is not None and _rows(kept[1]) - 1 <= (budget or DEFAULT_BUDGET).max_states:
        return kept[1]
    got = make()
    cache.put(key, (tuple(parts), got),
              nbytes=400 + sum(8 * _rows(d) * (2 + len(d.classes)) for d in (got, *parts)))
    return got


def shallower(a: dict, b: dict) -> dict:
    """Per type, the shallower of two cuts (see :attr:`TypedLanguage.cut`)."""
    if not a:
        return b
    if not b:
        return a
    out = dict(a)
    for t, c in b.items():
        out[t] = min(out[t], c) if t in out else c
    return out


def union_of(ds: Sequence[DFA], budget: Budget | None = None) -> DFA:
    """The union of ``ds``: a product, or (when one of them is a large automaton kept unminimised,
    see :mod:`.compose`) a composition that copies each as a block of rows and determinises only
    where they share a prefix (texts of different JSON types share no first character)."""
    from .compose import LazyDFA, union_composed
    if any(isinstance(d, LazyDFA) for d in ds):
        return union_composed(ds, budget)
    return DFA.union_all(ds, budget)


# ---------------------------------------------------------------- objects

@dataclass(frozen=True)
class Member:
    """One declared property: its key text, its value texts, whether it must be present.

    ``pieces`` optionally splits ``value`` into ``(texts, witnesses)`` pairs, ``witnesses`` a
    bit mask of the witness conditions a member with those value texts meets (see
    :func:`object_dfa`); empty means ``((value, 0),)``."""

    key: DFA
    value: DFA
    required: bool
    pieces: tuple = ()


def object_dfa(members: Sequence[Member], extra: DFA | None, ws: DFA, *,
               min_properties: int = 0, max_properties: int | None = None,
               any_order: bool = False, witnesses: int = 0,
               budget: Budget | None = None,
               compose_min_rows: int | None = COMPOSE_MIN_ROWS) -> DFA:
    """The texts of objects with the declared members (in order, or in any order) then extras.

    Parameters
    ----------
    members : sequence of Member
        Declared properties, in schema order.
    extra : DFA, dict or None
        The texts ``"key" ws : ws value`` of one undeclared member (None: no undeclared keys), or
        a dict from witness bit mask to those texts. Extras follow the declared members (in
        ``any_order`` mode they may come anywhere).
    ws : DFA
        The whitespace allowed at each place between tokens.
    min_properties, max_properties : int
        Bounds on the number of members written.
    any_order : bool
        Declared keys in any order, each at most once (a subset-of-keys automaton).
    witnesses : int
        Number of witness conditions ("some member has a key in K and a value in W", the
        negation of ``additionalProperties``, ``patternProperties`` and ``propertyNames``): an
        object is written only when its members together meet all of them.
    budget : Budget, optional
    compose_min_rows : int or None
        See :data:`COMPOSE_MIN_ROWS` (None: never compose).

    Returns
    -------
    DFA
    """
    budget = budget or DEFAULT_BUDGET
    meter = budget.meter("object")
    colon, comma = separators(ws)
    # bodies[i]: (member text, witness bits) pairs of declared member i; index k: the extras
    # (embedded as chains of parts: the object automaton is determinised and minimised once)
    bodies = [[((m.key, colon, v, ws), bits)
               for v, bits in (m.pieces or ((m.value, 0),)) if not v.is_empty()] for m in members]
    if extra is not None:
        by_bits = extra if isinstance(extra, dict) else {0: extra}
        bodies.append([((d, ws), bits) for bits, d in by_bits.items() if not d.is_empty()])
        extra = bodies[-1] or None
    full = (1 << witnesses) - 1
    k = len(members)
    cap = max_properties if max_properties is not None else min_properties
    required = frozenset(i for i, m in enumerate(members) if m.required)

    def bump(c: int) -> int | None:
        c += 1
        if max_properties is not None and c > max_properties:
            return None
        return min(c, cap)

    # a state is (position, count, written, bits): position is the next declared index (schema
    # order) or the frozenset of declared keys written (any order), index k meaning declared keys
    # done; count is capped where it stops mattering; written says whether a "," must come first;
    # bits are the witness conditions met so far
    def moves(state) -> list[tuple[tuple, Hashable]]:
        pos, c, _, w = state
        out = []
        c2 = bump(c)
        if any_order:
            if c2 is not None:
                for i in range(k):
                    if i not in pos:
                        out += [((i, j), (pos | {i}, c2, True, w | b)) for j, (_, b) in enumerate(bodies[i])]
                if extra is not None:
                    out += [((k, j), (pos, c2, True, w | b)) for j, (_, b) in enumerate(bodies[k])]
            return out
        if pos < k:
            if c2 is not None:
                out += [((pos, j), (pos + 1, c2, True, w | b)) for j, (_, b) in enumerate(bodies[pos])]
            if pos not in required:
                out.append((None, (pos + 1, c, state[2], w)))
        elif extra is not None and c2 is not None:
            out += [((k, j), (k, c2, True, w | b)) for j, (_, b) in enumerate(bodies[k])]
        return out

    def closable(state) -> bool:
        pos, c, _, w = state
        if c < min_properties or w != full:
            return False
        return required <= pos if any_order else pos == k

    b = _builder(sum(_rows(body[2 if len(body) == 4 else 0]) for group in bodies
                     for body, _ in group), compose_min_rows)
    final = b.node()
    close = b.chain((DFA.literal("}"),), final)
    node: dict = {}
    todo = []

    def node_of(state) -> int:
        q = node.get(state)
        if q is None:
            q = node[state] = b.node()
            meter.add()
            todo.append(state)
        return q

    embedded: dict = {}
    q0 = node_of((frozenset() if any_order else 0, 0, False, 0))
    while todo:
        state = todo.pop()
        q = node[state]
        if closable(state):
            b.link(q, close)
        for ij, nxt in moves(state):
            t = node_of(nxt)
            if ij is None:
                b.link(q, t)
                continue
            written = state[2]
            key = (ij, written, t)
            entry = embedded.get(key)
            if entry is None:
                body = bodies[ij[0]][ij[1]][0]
                if written:
                    body = (comma,) + body
                entry = b.chain(body, t)
                if compose_min_rows is None:  # (a Composer meters the states it copies itself)
                    meter.add(sum(p.num_states for p in body))
                embedded[key] = entry
            if entry is not None:
                b.link(q, entry)
    inner = b.node()
    b.link(inner, q0)
    start = b.chain((DFA.literal("{"), ws), inner)
    return b.build(start, final, budget, "object")


# ---------------------------------------------------------------- arrays

def array_dfa(item_at: Callable[[int], DFA | None], fixed: int, ws: DFA, *,
              min_items: int = 0, max_items: int | None = None,
              contains: tuple[DFA, DFA, int, int | None] | None = None,
              budget: Budget | None = None,
              compose_min_rows: int | None = COMPOSE_MIN_ROWS) -> DFA:
    """The texts of arrays whose ``i``-th item is in ``item_at(i)``.

    Parameters
    ----------
    item_at : callable
        ``item_at(i)`` is the DFA of the item texts at position ``i``; for ``i >= fixed`` it must
        not depend on ``i``. None or an empty DFA: no item may stand there.
    fixed : int
        Number of leading positions with their own item language (``prefixItems``).
    ws : DFA
    min_items, max_items : int
    contains : (matches, misses, min, max) or None
        Per item index up to ``fixed`` (as ``item_at``), the item's texts that count as matches
        and those that do not (texts in neither are not emitted: a sound reading when a miss is
        only known to undershoot the complement); between ``min`` and ``max`` matches.
    budget : Budget, optional
    compose_min_rows : int or None
        See :data:`COMPOSE_MIN_ROWS` (None: never compose).

    Returns
    -------
    DFA
    """
    budget = budget or DEFAULT_BUDGET
    meter = budget.meter("array")
    comma = separators(ws)[1]
    cap = max(fixed, min_items, max_items if max_items is not None else 0, 1)
    ccap = 0
    if contains is not None:
        _, _, cmin, cmax = contains
        ccap = cmax + 1 if cmax is not None else cmin

    b = _builder(sum(_rows(item_at(i)) for i in range(fixed + 1)), compose_min_rows)
    final = b.node()
    close = b.chain((DFA.literal("]"),), final)
    node: dict = {}
    todo = []
    items_cache: dict = {}

    def node_of(state) -> int:
        q = node.get(state)
        if q is None:
            q = node[state] = b.node()
            meter.add()
            todo.append(state)
        return q

    def langs(i: int) -> list[tuple[DFA, int]]:
        key = min(i, fixed)
        if key not in items_cache:
            item = item_at(i)
            out = []
            if item is not None and not item.is_empty():
                if contains is None:
                    out.append((item, 0))
                else:
                    out = [(contains[0][key], 1), (contains[1][key], 0)]
            items_cache[key] = [(d, inc) for d, inc in out if not d.is_empty()]
        return items_cache[key]

    embedded: dict = {}
    q0 = node_of((0, 0))
    while todo:
        i, m = todo.pop()
        q = node[(i, m)]
        ok_len = i >= min_items
        ok_contains = contains is None or (m >= contains[2] and (contains[3] is None or m <= contains[3]))
        if ok_len and ok_contains:
            b.link(q, close)
        if max_items is not None and i >= max_items:
            continue
        for d, inc in langs(i):
            m2 = min(m + inc, ccap)
            if contains is not None and contains[3] is not None and m + inc > contains[3]:
                continue
            nxt = (min(i + 1, cap), m2)
            t = node_of(nxt)
            key = (min(i, fixed), inc, i > 0, t)
            entry = embedded.get(key)
            if entry is None:
                body = (comma, d, ws) if i > 0 else (d, ws)
                entry = b.chain(body, t)
                if compose_min_rows is None:  # (a Composer meters the states it copies itself)
                    meter.add(sum(p.num_states for p in body))
                embedded[key] = entry
            if entry is not None:
                b.link(q, entry)
    start = b.chain((DFA.literal("["), ws), q0)
    return b.build(start, final, budget, "array")
