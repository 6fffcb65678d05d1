"""Counted values inside flat automata: large strings, arrays and maps called as pieces of a
network.

The flat lowering copies what a schema counts: ``{"type": "string", "maxLength": 5000}`` is 5,000
copies of a character's spellings, ``"minItems": 10**6`` a million copies of an item. The
lowering (:class:`~.lower.Lowering`) asks :class:`CountedPieces`, per node of the intermediate
form, whether the strings or arrays it allows are **counted**: when their estimated flat size
passes :data:`LAZY_STATES` and their node holds nothing but counts (a string's length bounds; an
array's items and item counts), or a string's bounds meet patterns or formats in a flat product
past :data:`PATTERNED_COST` times that, they become a counted piece of a
:class:`~tokenfsm.automata.network.Network` (:mod:`.lazy_json`: one copy of the string body or of
the item, the count held in the walk's configuration; a patterned string's body is its patterns'
automaton, as is a union of patterned strings sharing their bounds) and the flat automaton holds a
**placeholder** character where their texts go. Everything else is **inlined** as the flat route
lowers it; an array's items are pieces made of their own flat automata, placeholders included, so
an object with a long string property is a flat object calling a counted string. An object in any
order of many declared keys holds the keys written as a set (a key-set piece), and one that takes
undeclared keys and bounds its number of members (:data:`MAP_COUNT_MIN` or more) counts them
there: a key set of no declared key, or the flat object without that bound, a tick after each key.
A piece whose texts are every value (``{}``, the values of undeclared keys) calls the pieces of
every object and every array, which call each other up to ``max_depth`` frames deep in all
(:meth:`~tokenfsm.automata.network.Network.same_depth`), rather than holding the unrolled value,
whose states double with each level of nesting; where that value passes
:data:`OPEN_VALUE_STATES` (``max_depth`` 4 or more), every open value the lowering meets is
those calls (:meth:`CountedPieces.open_value`), its scalars written in place. In any order
a recursive definition is a piece too, lowered once and called wherever a ``$ref`` names it
(:meth:`CountedPieces.reference`): Kubernetes' ``JSONSchemaProps`` then holds its keys as a set
at every depth, where the stack route's automata hold a state per subset of them.
Alternatives of an object that differ only in the keys they require and forbid
(``dependentRequired``, ``not: {required: [...]}``) are one key set with a term per alternative
(:func:`.lower_containers.object_terms_part`), not one object per alternative; so are the
alternatives of a union of objects whose values differ (:meth:`CountedPieces.union_key_set`): a
member per class of values that the same alternatives allow, the combinations that meet an
alternative its terms.

The placeholders are control characters that JSON text never holds raw
(:data:`~tokenfsm.automata.recursive.HOLES`). A product or complement cannot look inside one: the
lowering raises :class:`~tokenfsm.automata.errors.OpaqueSymbolError` there (as on the stack
route) and the compiler lowers again with those nodes inlined. At the end the root's automaton is
the top piece (``Text(dfa, calls=...)``), and :meth:`CountedPieces.build` links the network.

A string's length bounds under ``excludes`` multiply: the flat route builds their product with
the exclusions up to :data:`.lower_scalars.EXCLUDED_BOUNDS_STATES` states and drops the bounds
past it, with a warning; a counted string keeps them at any size (the size the decision reads is
that product's).

Example
-------
>>> from tokenfsm.schema import compile_json_schema
>>> cs = compile_json_schema({"type": "object", "properties": {"text": {"type": "string",
...                          "maxLength": 10**9}}, "required": ["text"]}, whitespace=0)
>>> cs.lazy is not None, cs.accepts('{"text":"' + "x" * 5000 + '"}'), cs.accepts('{}')
(True, True, False)
>>> compile_json_schema({"type": "array", "items": {"type": "integer"}, "minItems": 3}).lazy
>>> # (small: the flat automaton)

Counting instead of copying is the idea of counting automata (Turonova et al., OOPSLA 2020); a
flat automaton calling pieces is the stack route's recursive transition network (Woods, 1970).
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import OpaqueSymbolError
from tokenfsm.automata.network import Call, Network, Text
from tokenfsm.automata.recursive import HOLES

from . import ir
from .jsontext import TYPES, TypedLanguage, _rows, object_dfa
from .lazy_json import TICK_MARK, LazyMember, array_piece, object_piece, string_piece
from .lower_containers import extra_texts
from .lower_scalars import (any_scalar, any_value, decoded_strings, exclusion_states,
                            factored_union, open_value_texts, open_values_pass, patterned_string)

__all__ = ["LAZY_STATES", "PATTERNED_COST", "ANY_ORDER_STRING_STATES", "KEY_SET_MIN",
           "MAP_COUNT_MIN", "OPEN_VALUE_STATES", "COUNT_ATTEMPTS", "PAIR_PREFIXES",
           "MAX_PREFIXES", "CountedPieces", "has_length", "placeholders"]

#: Strings or arrays whose estimated flat size passes this many states, and whose node holds
#: nothing but counts, are counted rather than copied. The regex route's threshold
#: (:data:`tokenfsm.automata.lazy_regex.LAZY_REPEAT_STATES`), measured there: below it the flat
#: index fills masks fastest and builds fast enough; above it its build time grows with the copies.
LAZY_STATES = 500

#: A string under a ``pattern`` or ``format`` is counted only past this many times
#: :data:`LAZY_STATES` (the flat route's product of its bounds and patterns): near a bound every
#: count has rows of its own, and a row there is a walk of most of the vocabulary (7 ms on
#: Llama-3's), where the flat index makes rows in bulk. Handwritten allany20, a union of
#: patterned strings of 10..90 characters (12,880 states): 2.4 s flat, 52 ms counted;
#: allany22 (2,300): 0.57 s flat, about what a document's rows cost counted.
PATTERNED_COST = 10

#: Strings in the member values of objects in any order are counted from this estimated flat
#: size on (elsewhere from :data:`LAZY_STATES`). Those objects are mostly key sets, indexed
#: lazily: a string's copies there are rows made when first met, each a walk of most of the
#: vocabulary (5 ms on Llama-3 for ``maxLength: 100``), where a counted string's rows come
#: from its body's walk, kept per vocabulary. Dev corpora in any order, Llama-3, every valid
#: document replayed: fills 500 -> 382 ms in all (``maxLength: 64``: 64 -> 2 ms), compile
#: times within 5% (at 16: fills 437 ms; counting every string in any order also counted the
#: lengths of a top-level ``allOf``, whose products made Handwritten allany12-13 lower three
#: times, 1.7-2x slower).
ANY_ORDER_STRING_STATES = 4

#: Lowerings a compilation tries: each one after the first inlines the counted nodes that a
#: product or complement met in the one before; the last counts nothing.
COUNT_ATTEMPTS = 3

#: Objects in any order with more declared keys than this hold the keys written as a set (a
#: key-set piece); smaller ones keep their state per subset of keys (at most 16), whose mask
#: rows are made up front, unless their values make that product pass :data:`LAZY_STATES`.
KEY_SET_MIN = 4

#: Objects that take undeclared keys are counted only where their bound on the number of
#: members is at least this (and past their declared keys), and the copies of a member pass
#: :data:`LAZY_STATES`: a map with ``maxProperties: 5000`` took 3 s flat (135,002 states), with
#: ``10**9`` a budget error; 8 ms counted. Below it the copies are few, and a product that
#: meets the piece makes the compilation lower again: Handwritten dep10 (``minProperties: 4``
#: under ``dependencies``) 0.70 s flat, 1.47 s counted.
MAP_COUNT_MIN = 16

#: Open values (``{}``, ``additionalProperties: true``, undeclared keys) whose unrolled objects
#: and arrays pass this many states in all are calls of the pieces of every object and every
#: array (:meth:`CountedPieces.open_value`): from ``max_depth=4`` on (1,262 states; 614 at 3).
#: The unrolled value doubles with each level, and with it every product and index that holds
#: it; the calls cost the same at any depth. At the default depth the value stays in place: the
#: flat index makes its rows up front, where called values leave rows to the fills.
OPEN_VALUE_STATES = 1000

#: The targets of the pieces of every object and every array (one conflict inlines both).
OPEN_TARGETS = {"object": ("counted", "(every object)"), "array": ("counted", "(every array)")}

#: Holes that begin pairs of placeholders rather than stand alone: the pieces past the single
#: placeholders take a pair each (the four Kubernetes list schemas hold 28 or more objects of
#: over :data:`KEY_SET_MIN` keys; with the 22 singles, 103 pieces in all). A lowering that
#: needs more lowers again with every hole but the open values' a prefix (624 pairs): Kubernetes
#: kb_1161, the whole API in one schema, holds over 500 objects of more than four keys.
PAIR_PREFIXES = 3

#: The placeholders, singles (code points) then pairs (2-character str); a string piece's body
#: uses :data:`.lazy_json.TICK_MARK` itself.
_HOLES = tuple(h for h in HOLES if h != TICK_MARK)
#: The placeholders of every object and every array: in the texts of every value, and in every
#: text that holds an open value (the same two in every lowering, so that a definition's
#: language holding them is kept from one compilation to the next).
_OPEN_HOLES = (_HOLES[0], _HOLES[1])
#: The most pair prefixes: every hole but the open values'.
MAX_PREFIXES = len(_HOLES) - len(_OPEN_HOLES)


def placeholders(prefixes: int) -> tuple:
    """The placeholders with ``prefixes`` holes beginning pairs: the singles left (code points)
    then the pairs (2-character str)."""
    return _HOLES[2:len(_HOLES) - prefixes] + tuple(
        chr(p) + chr(h) for p in _HOLES[len(_HOLES) - prefixes:] for h in _HOLES)


#: The placeholders of the two settings a compilation takes.
_PLACEHOLDERS = {p: placeholders(p) for p in (PAIR_PREFIXES, MAX_PREFIXES)}


class _OutOfPlaceholders(Exception):
    """A lowering needs more pieces than its placeholders name (control flow to the compiler,
    which lowers again with :data:`MAX_PREFIXES`; never raised to its caller)."""


@functools.cache
def _open_hole_texts() -> tuple[DFA, DFA]:
    """The automata of :data:`_OPEN_HOLES` alone, one object each: the automata holding them are
    then kept (by the identity of their parts) from one compilation to the next, as those
    holding a value in place are."""
    return tuple(DFA.literal(chr(h)) for h in _OPEN_HOLES)


def _reader(dfa: DFA):
    """``reads(h)``: whether ``dfa`` moves on every character of the placeholder ``h`` (a code
    point, or a pair of them), each character asked once."""
    moves: dict[str, bool] = {}

    def moves_on(ch: str) -> bool:
        got = moves.get(ch)
        if got is None:
            c = dfa.class_of(ch)
            got = moves[ch] = c is not None and any(row[c] for row in dfa.delta)
        return got

    return lambda h: all(map(moves_on, h if isinstance(h, str) else chr(h)))


#: Lengths :func:`has_length` follows before it gives up (and the string is not counted).
LENGTH_STEPS = 1 << 14


def has_length(dfa: DFA, lo: int, hi: int | None) -> bool:
    """Whether the minimal automaton ``dfa`` accepts some string of ``lo..hi`` characters
    (``hi=None``: at least ``lo``); False also where that is not known within
    :data:`LENGTH_STEPS` lengths. The sets of states reached at each length repeat with a
    period, so a huge ``lo`` costs one period."""
    if dfa.start == 0:
        return False
    seen: dict[frozenset, int] = {}
    reached = [frozenset([dfa.start])]
    k = 0
    while k < lo:
        here = reached[-1]
        if here in seen:           # a period: the set at lo is one already reached
            first = seen[here]
            reached = [reached[first + (lo - first) % (k - first)]]
            break
        if k >= LENGTH_STEPS or not here:
            return False
        seen[here] = k
        reached.append(frozenset(t for s in here for t in dfa.delta[s] if t))
        k += 1
    dist = dfa._distance_to_accept()      # every state of a minimal automaton is live
    return bool(reached[-1]) and (hi is None or min(dist[s] for s in reached[-1]) <= hi - lo)


_TICK = chr(TICK_MARK)

#: The last step of a pointer into an alternative of a union.
_UNION_BRANCH = re.compile(r"/(?:anyOf|oneOf)/\d+$")


def _recursion_depths(lw) -> tuple:
    """The recursive definitions ``lw`` is expanding, each with its depth: a piece made under
    them holds values cut at ``max_depth`` counted from there (empty outside recursion)."""
    return tuple((t, n) for t, n in sorted(lw.ref_stack.items())
                 if n and lw.ir.recursive(t))


class _WouldCount(Exception):
    """A lowering that only asks whether it would count (``CountedPieces(probe=True)``) would
    count ``key`` (control flow between this module and :mod:`.stack`, never raised to a
    caller of the compiler)."""

    def __init__(self, key: tuple):
        super().__init__(key)
        self.key = key


class CountedPieces:
    """The counted pieces of one lowering and their placeholders.

    Parameters
    ----------
    threshold : int
        See :data:`LAZY_STATES`.
    budget : Budget
    inline : frozenset
        Targets (:meth:`target`) never to count: met by a product in an earlier attempt.
    probe : bool
        Count nothing: raise :class:`_WouldCount` where a piece would be made (the stack
        route, which counts nothing, then gives way to the flat one).
    refs : bool
        Recursive definitions are pieces called wherever a ``$ref`` names them
        (:meth:`reference`), rather than unrolled.
    prefixes : int
        Holes that begin pairs of placeholders (:data:`PAIR_PREFIXES`); short of placeholders,
        a lowering with fewer than :data:`MAX_PREFIXES` raises :class:`_OutOfPlaceholders`.
    """

    def __init__(self, threshold: int, budget, inline: frozenset = frozenset(),
                 probe: bool = False, refs: bool = False, prefixes: int = PAIR_PREFIXES):
        self.probe = probe
        self.prefixes = prefixes
        self._placeholders = _PLACEHOLDERS.get(prefixes) or placeholders(prefixes)
        self.refs = refs and not probe
        self._refs: dict = {}                  # recursive definition -> its call
        self._entered: set = set()             # recursive definitions whose body is lowered
        self.threshold = threshold
        self.net = Network(budget)
        self.inline = inline
        self._piece_of: dict = {}              # placeholder -> piece
        self._target_of: dict = {}             # piece -> target
        self._objects: set = set()             # targets of objects' pieces
        self._memo: dict = {}                  # a key of _counted -> (placeholder DFA, calls)
        self._texts: dict = {}                 # id of an item automaton -> (automaton, piece)
        self._every: DFA | None = None         # every value, unrolled (what _value_piece finds)
        self._open: tuple | None = None        # the open value's text and calls, once made
        self._holes: tuple | None = None       # their placeholders in the lowering's texts
        self._open_lang = None                 # every value calling them (open_value)
        self._value: int | None = None         # the piece of every value, once made
        self._depth: int | None = None         # the network's depth, once it is made

    @staticmethod
    def target(node) -> tuple:
        """What an :class:`~tokenfsm.automata.errors.OpaqueSymbolError` names for the counted
        strings or arrays of ``node`` (an :class:`.ir.StringNode` or :class:`.ir.ArrayNode`): a
        string node by what it says (a node merged from several is made again by each
        lowering), an array node by itself."""
        if isinstance(node, ir.StringNode):
            return ("counted", node.ptr, node.min_length, node.max_length, node.patterns,
                    node.formats)
        return ("counted", node.ptr, id(node))

    def __bool__(self) -> bool:
        return bool(self._piece_of)

    def counts(self) -> bool:
        """Whether a piece other than those of open values and recursive definitions was made
        (the stack route, which calls those as modules of its own, counts nothing)."""
        return self._placed() > len(self._refs)

    def _placeholder_left(self) -> bool:
        """Whether a placeholder is left for one more piece; short of one, a lowering that
        may take more raises :class:`_OutOfPlaceholders`."""
        if self._placed() < len(self._placeholders):
            return True
        if self.prefixes < MAX_PREFIXES:
            raise _OutOfPlaceholders
        return False

    def _next_placeholder(self) -> tuple:
        """The first placeholder not taken, and the automaton of its one text."""
        h = self._placeholders[self._placed()]
        return h, DFA.literal(h if isinstance(h, str) else chr(h))

    def only_recursion(self) -> bool:
        """Whether the pieces made are those of recursive definitions (and of open values)
        alone: the stack route calls those too, and where nothing else is counted its automata
        (or the unrolled one, where small) index faster."""
        return bool(self._refs) and not self.counts()

    def _placed(self) -> int:
        """The placeholders of :func:`placeholders` taken (the open values' are apart)."""
        return len(self._piece_of) - len(self._holes or ())

    # ------------------------------------------------------------------ strings
    def string(self, lw, node: ir.StringNode | None) -> tuple | None:
        """``(placeholder DFA, calls)`` for the strings of ``node`` when they are counted, else
        None (the flat route lowers them)."""
        if node is None:
            return None
        lo, hi = node.min_length, node.max_length
        if hi is not None and hi < lo:
            return None
        size = max(lo, hi or 0) + 2
        if node.patterns or node.formats:
            # the flat route's product of the bounds and the patterns, one plain spelling each
            got = patterned_string(lw, node)
            if got is None or (lo == 0 and hi is None) or self.target(node) in self.inline:
                return None
            return self._patterned(self.target(node), lo, hi,
                                   decoded_strings(0, None, *got[2:], lw.budget))
        if lw.excludes and (lo or hi is not None):
            size *= exclusion_states(lw.excludes)
        if size <= (min(self.threshold, ANY_ORDER_STRING_STATES)
                    if lw.any_order and lw.in_members else self.threshold):
            return None
        return self._counted(self.target(node), lambda: string_piece(
            self.net, lo, hi, excludes=lw.excludes))

    def strings(self, lw, keys: tuple, ptr: str) -> tuple | None:
        """``(placeholder DFA, calls)`` for the strings of any of ``keys`` (patterned strings,
        see :func:`.lower_scalars.patterned_string`, unioned by :meth:`.Lowering.union_of`)
        when they share their length bounds and are counted as one piece (the union of their
        patterns its body), else None."""
        lo, hi = keys[0][:2]
        if any(k[:2] != (lo, hi) for k in keys) or (lo == 0 and hi is None):
            return None
        target = ("counted", ptr, keys)
        if target in self.inline:
            return None
        unbounded = tuple((0, None) + k[2:] for k in keys)
        value = factored_union(unbounded, lw.budget) or DFA.union_all(
            [decoded_strings(*k, lw.budget) for k in unbounded], lw.budget)
        return self._patterned(target, lo, hi, value)

    def _patterned(self, target: tuple, lo: int, hi: int | None, value: DFA) -> tuple | None:
        """The strings of ``lo..hi`` characters spelling a string of ``value`` (one plain
        spelling each), counted when their flat product is large (:data:`PATTERNED_COST`)."""
        value = value.minimize()
        if (max(lo, hi or 0) + 2) * value.num_states <= PATTERNED_COST * self.threshold \
                or not has_length(value, lo, hi):
            return None    # (no string of those lengths: the flat route says where)
        return self._counted(target, lambda: string_piece(self.net, lo, hi, escapes="minimal",
                                                          value=value))

    # ------------------------------------------------------------------ arrays
    def array(self, lw, node: ir.ArrayNode, langs: list) -> tuple | None:
        """``(placeholder DFA, complete, calls, cut items)`` for the arrays of ``node`` when
        they are counted, else None. ``langs``: the typed languages of the leading items and of
        every later one (the flat route's, see :func:`.lower_containers.item_langs`), lowered
        only when asked for (a callable)."""
        if len(node.items) > 1 or node.contains or node.unique or node.size <= self.threshold:
            return None
        lo, hi = node.min_items, node.max_items
        if hi is not None and hi < lo:
            return None
        key = self.target(node)
        if key in self.inline or not self._placeholder_left():
            return None
        langs = langs()
        dfas = [la.to_dfa(lw.budget).minimize() for la in langs]
        prefix, rest = dfas[:-1], dfas[-1]
        # an item with no text ends the arrays before it
        n_ok = next((i for i, d in enumerate(prefix) if d.is_empty()), len(prefix))
        items = None
        if n_ok == len(prefix) and not rest.is_empty():
            items = self._text_piece(rest, lw)
        else:
            hi = n_ok if hi is None else min(hi, n_ok)
            if hi < lo:
                return None        # no array at all: the flat route says so
        pieces = [self._text_piece(d, lw) for d in prefix[:n_ok]]
        got = self._counted(key, lambda: array_piece(self.net, pieces, items, lw.ws, lo, hi), lw)
        if got is None:
            return None
        complete = all(set(TYPES) <= la.complete for la in langs)
        return got[0], complete, got[1], [la.cut for la in langs]

    # ------------------------------------------------------------------ objects
    def key_set(self, lw, node: ir.ObjectNode, names: list, members: list,
                regions: list, terms: list | None = None) -> tuple | None:
        """``(placeholder DFA, calls)`` for the objects of ``node`` when they are a key-set
        piece, else None: their keys may come in any order (``property_order="any"``) and there
        are more than :data:`KEY_SET_MIN` of them (or their values, the undeclared members'
        included, copied per subset of keys pass :data:`LAZY_STATES`: one declared key beside
        any value under undeclared ones), or they declare no key and their bound on
        the number of undeclared members (:data:`MAP_COUNT_MIN` or more) would copy those
        members past :data:`LAZY_STATES` states (a map: its members counted, in either order).
        ``names``, ``members``: the declared members kept (their value texts as
        :class:`.jsontext.Member`); ``regions``: the undeclared keys as (decoded names, value
        texts) pairs; ``terms``: ``(required, forbidden)`` pairs of member indices, one of which
        the object meets (alternatives that differ only in those, see
        :func:`.lower_containers.object_terms_part`), None: the members' own ``required``."""
        if not members:
            if terms is not None or not self._copies_pass(node, 0, regions):
                return None
        elif not lw.any_order or (terms is None and len(members) < 2 and not regions):
            return None
        elif len(members) <= KEY_SET_MIN and (sum(self._weight(m.value) for m in members) + sum(
                self._weight(v) for _, v in regions)) * len(terms or [()]) << len(members) \
                <= self.threshold:
            # a state per subset of keys (per alternative, with terms), each holding the values
            # that may follow: small objects of small values stay flat (rows made up front)
            return None

        def make() -> int:
            declared = [LazyMember(name, self._text_piece(m.value.minimize(), lw), m.required)
                        for name, m in zip(names, members)]
            extras = [(lw.key_region(k), self._text_piece(v.minimize(), lw)) for k, v in regions]
            return object_piece(self.net, declared, extras or None, lw.ws, node.min_properties,
                                node.max_properties, terms)
        return self._object(lw, node, make)

    def union_key_set(self, lw, nodes: list, members: list, regions: list,
                      terms: list) -> tuple | None:
        """``(placeholder DFA, calls)`` for the objects of a union of ``nodes`` as one key-set
        piece (:func:`.lower_containers.object_union_part`), else None (its members' values and
        the subsets of its keys make a small flat object). ``members``: ``(name, value texts,
        language)``, the language None where the value is written in place; ``regions``: the
        undeclared keys as (decoded names, value texts) pairs; ``terms``: see
        :meth:`key_set`."""
        node = nodes[0]
        size = sum(self._weight(v) for _, v, _ in members) + sum(
            self._weight(v) for _, v in regions)
        if size * len(terms) << min(len(members), 20) <= self.threshold:
            return None

        def make() -> int:
            declared = [LazyMember(name, v if lang is None else self._text_piece(v.minimize(), lw))
                        for name, v, lang in members]
            extras = [(lw.key_region(k), self._text_piece(v.minimize(), lw)) for k, v in regions]
            return object_piece(self.net, declared, extras or None, lw.ws, node.min_properties,
                                node.max_properties, terms)
        return self._object(lw, node, make, ("counted", node.ptr, tuple(map(id, nodes))))

    def members(self, lw, node: ir.ObjectNode, members: list, regions: list) -> tuple | None:
        """``(placeholder DFA, calls)`` for the objects of ``node`` when the number of their
        members is counted, else None: they declare keys and take undeclared ones, and their
        bound on the number of members (:data:`MAP_COUNT_MIN` or more, past the declared keys)
        would copy the undeclared members past :data:`LAZY_STATES` states. The piece's text is
        the flat object without that bound, a tick after each key. ``members``: the declared
        members kept (:class:`.jsontext.Member`); ``regions``: the undeclared keys as (decoded
        names, value texts) pairs."""
        if not members or not self._copies_pass(node, len(members), regions):
            return None

        def make() -> int:
            b = lw.budget
            tick = DFA.literal(_TICK)
            ticked = [replace(m, key=DFA.concat_all([m.key, tick], b)) for m in members]
            extra = extra_texts(lw, regions, after_key=tick)
            body = object_dfa(ticked, extra, lw.ws, any_order=lw.any_order, budget=b,
                              compose_min_rows=lw.tuning.compose_min_rows).minimize()
            return self.net.counted(self.text(body, tick=TICK_MARK), lo=node.min_properties,
                                    hi=node.max_properties)
        return self._object(lw, node, make)

    def _copies_pass(self, node: ir.ObjectNode, declared: int, regions: list) -> bool:
        """Whether the flat objects of ``node``, a copy of an undeclared member per count up to
        its bound on the members, would pass :data:`LAZY_STATES` (the bound at least
        :data:`MAP_COUNT_MIN` and past the ``declared`` keys)."""
        cap = node.max_properties if node.max_properties is not None else node.min_properties
        return bool(regions) and cap >= max(MAP_COUNT_MIN, declared + 1) and \
            cap * sum(_rows(k) + self._weight(v) for k, v in regions) > self.threshold

    def _object(self, lw, node: ir.ObjectNode, make, key: tuple | None = None) -> tuple | None:
        """:meth:`_counted` for an object's piece, which a conflict inlines by its place (see
        :meth:`conflicting`); ``key``: its target, if not ``node``'s own (the alternatives of a
        union made one piece)."""
        key = key or self.target(node)
        if self._place(node.ptr) in self.inline:
            return None
        self._objects.add(key)
        return self._counted(key, make, lw)

    # ------------------------------------------------------------------ recursion
    def reference(self, lw, ref: ir.Ref) -> TypedLanguage | None:
        """A call of the piece of the recursive definition that ``ref`` names, else None (not
        recursive, or its cycle inlined: unrolled as the flat route does). The piece's text is
        the definition's language, lowered once, with every reference on its cycle a call of
        that definition's piece; the walk allows ``max_depth`` frames of each piece, as the flat
        route expands each definition ``max_depth`` times. A cycle is called or unrolled whole
        (one target in :attr:`inline`): a definition unrolled inside a piece would
        be cut at a depth counted from wherever the piece was first lowered; so is a cycle
        whose definition a merge expanded in place, or that finds no placeholder left. A cycle
        holding the root is unrolled (the top text is no frame of it)."""
        target = ref.target
        cycle = lw.ir.cycle(target)
        if not self.refs or lw.max_depth < 1 or not cycle or "" in cycle:
            return None
        key = ("counted", "cycle", min(cycle))
        if key in self.inline:
            return None
        if any(lw.ref_stack.get(t, 0) != (t in self._entered) for t in cycle):
            # a definition of the cycle expanded in place (merged into its caller's
            # alternatives), its depth counted there: the cycle unrolled
            raise OpaqueSymbolError("a recursive definition expanded in place", targets={key})
        got = self._refs.get(target)
        if got is not None:
            if target in self._entered:    # the walk cuts it at max_depth, as unrolling does
                lw.cuts += 1
                lw.warn(f"recursive $ref {ref.shown!r} cut at depth {lw.max_depth}", ref.ptr)
            return got
        if not self._placeholder_left():
            raise OpaqueSymbolError("no placeholder left for a recursive definition",
                                    targets={key})
        h, hole = self._next_placeholder()
        self._piece_of[h] = piece = self.net.declare()
        self._target_of[piece] = key
        self._depth = lw.max_depth
        self._refs[target] = self._call(hole, key, lw.possible_types(lw.ir.definitions[target]))
        self._entered.add(target)
        try:
            body = lw.entered(target)
        finally:
            self._entered.discard(target)
        self.net.piece(self.text(body.to_dfa(lw.budget).minimize()), into=piece)
        got = self._refs[target] = self._call(hole, key, body.parts)
        return got

    @staticmethod
    def _call(hole: DFA, key: tuple, types) -> TypedLanguage:
        """The language of a call of a definition's piece whose texts are of ``types``: its
        placeholder in each of them (typed, where there is one)."""
        types = [t for t in TYPES if t in types]
        typed = frozenset([(key, types[0])]) if len(types) == 1 else frozenset()
        return TypedLanguage.of({t: hole for t in types}, (), frozenset([key]) - {
            k for k, _ in typed}, typed=typed)

    # ------------------------------------------------------------------ the network
    def _counted(self, key: tuple, make, lw=None) -> tuple | None:
        """The piece of ``key`` (made by ``make`` when first asked for), as its placeholder and
        calls, kept by ``key`` and, with ``lw``, the depths of the recursive definitions it is
        expanding: a piece made inside a recursion is made again at each depth of it, since
        what it holds is cut deeper down."""
        if key in self.inline:
            return None
        if self.probe:
            raise _WouldCount(key)
        at = key if lw is None else (key, _recursion_depths(lw))
        got = self._memo.get(at)
        if got is None and at not in self._memo:
            if not self._placeholder_left():
                return None        # no placeholder left: inlined
            h, hole = self._next_placeholder()
            self._piece_of[h] = piece = make()
            self._target_of[piece] = key
            got = self._memo[at] = (hole, frozenset([key]))
        return got

    def _text_piece(self, dfa: DFA, lw) -> int:
        """A plain piece of the texts of ``dfa``, its placeholders calling their pieces; for
        every value (:meth:`.lower.Lowering.any_value`), a piece calling its arrays and objects
        (:meth:`_value_piece`)."""
        if self.probe:
            return 0   # (a probe makes no piece)
        got = self._value_piece(lw, dfa)
        if got is not None:
            return got
        got = self._texts.get(id(dfa))
        if got is None or got[0] is not dfa:
            got = self._texts[id(dfa)] = (dfa, self.net.piece(self.text(dfa)))
        return got[1]

    def _value_piece(self, lw, dfa: DFA) -> int | None:
        """The piece of every value when ``dfa`` is every value (up to ``max_depth`` levels),
        else None: the scalars, or a call of the piece of every object or of every array
        (:meth:`_containers`). The same texts as the unrolled automaton, whose states double
        with each level: a piece per level instead (the network's variants), each a few
        hundred byte states. (At ``max_depth=0`` every value is its scalars, and a network that
        deep would cut every call: the plain piece.)"""
        if lw.max_depth < 1:
            return None
        if self._every is None:
            self._every = any_value(lw.ws_n, lw.excludes, lw.max_depth, lw.budget,
                                    lw.tuning.compose_min_rows).to_dfa(lw.budget).minimize()
        every = self._every
        if dfa is not every and (dfa.num_states != every.num_states or dfa != every):
            return None
        if self._value is None:
            value, calls = self._containers(lw)
            self._value = self.net.piece(Text(value, calls=calls))
        return self._value

    def open_value(self, lw) -> TypedLanguage | None:
        """Every value (:func:`.lower_scalars.any_value` at ``max_depth``) with its objects and
        arrays the calls of the pieces of every object and every array (:meth:`_containers`)
        and its scalars in place, where the unrolled objects and arrays would pass
        :data:`OPEN_VALUE_STATES` (at that depth and deeper; the unrolled value is not built);
        else None: the value stays in place (small, or met by a product before)."""
        if not self._calls_open(lw):
            return None
        if self.probe:
            raise _WouldCount(OPEN_TARGETS["object"])
        if self._open_lang is None:
            parts = dict(any_scalar(lw.excludes, lw.budget))
            self.open_holes(lw)
            parts["object"], parts["array"] = _open_hole_texts()
            depth = lw.max_depth + 1          # (the cut of the unrolled value, any_value's)
            self._open_lang = TypedLanguage.of(parts, cut={"array": depth, "object": depth},
                                               typed=frozenset((target, t) for t, target
                                                               in OPEN_TARGETS.items()))
        return self._open_lang

    def _calls_open(self, lw) -> bool:
        """Whether open values are calls here: past :data:`OPEN_VALUE_STATES`, and not met by
        a product in an earlier attempt."""
        return self.calls_open_values() and open_values_pass(
            lw.ws_n, lw.excludes, lw.budget, lw.tuning.compose_min_rows, OPEN_VALUE_STATES,
            lw.max_depth)

    def calls_open_values(self) -> bool:
        """Whether open values past :data:`OPEN_VALUE_STATES` may be calls here (not where a
        product met them in an earlier attempt: they are in place)."""
        return not any(t in self.inline for t in OPEN_TARGETS.values())

    def shared_open(self, lw, lang):
        """``lang`` with its objects or arrays the calls of :meth:`open_value` where they are
        still the unrolled open value's own automata (a product or complement copied the open
        value in place to look inside it, and left that type alone): so that they meet the
        calls of the open values elsewhere as the same texts."""
        if not any(t in lang.parts for t in OPEN_TARGETS) or self.probe \
                or not self._calls_open(lw):
            return lang
        every = any_value(lw.ws_n, lw.excludes, lw.max_depth, lw.budget,
                          lw.tuning.compose_min_rows)
        swap = [t for t in OPEN_TARGETS if t in every.parts and lang.parts.get(t) is every.parts[t]]
        if not swap:
            return lang
        got = self.open_value(lw)
        parts = {**lang.parts, **{t: got.parts[t] for t in swap}}
        return TypedLanguage.of(parts, lang.complete, lang.untyped(), lang.cut, lang.typed | {
            x for x in got.typed if x[1] in swap})

    def _weight(self, dfa: DFA) -> int:
        """The rows of ``dfa`` as the choice between a flat object and a key set weighs them: a
        text calling every object or every array (:meth:`open_value`) weighs what the unrolled
        value would, past :data:`OPEN_VALUE_STATES` (the route a value takes does not depend on
        how deep open values nest)."""
        n = _rows(dfa)
        if self._holes is not None and any(map(_reader(dfa), self._holes)):
            n += OPEN_VALUE_STATES
        return n

    def _containers(self, lw) -> tuple:
        """``(value, calls)``: the pieces of every object and every array, made on first use,
        whose member values and items are ``value`` (every scalar, or a call of one of them:
        ``calls``, by placeholders of their own), nested at most ``max_depth`` deep in all
        (:func:`.lower_scalars.open_value_texts`)."""
        if self._open is None:
            value, objects, arrays = open_value_texts(lw.ws_n, lw.excludes, lw.budget,
                                                      lw.tuning.compose_min_rows, _OPEN_HOLES)
            bo, ba = self.net.declare(), self.net.declare()
            calls = ((_OPEN_HOLES[0], Call(bo)), (_OPEN_HOLES[1], Call(ba)))
            self.net.piece(Text(objects, calls=calls), into=bo)
            self.net.piece(Text(arrays, calls=calls), into=ba)
            self.net.same_depth(bo, ba)
            self._target_of[bo], self._target_of[ba] = OPEN_TARGETS["object"], OPEN_TARGETS["array"]
            self._open, self._depth = (value, calls), lw.max_depth
        return self._open

    def open_holes(self, lw) -> tuple:
        """The placeholders of every object and every array in the texts of the lowering
        (:data:`_OPEN_HOLES`, calling :meth:`_containers`' pieces, made on first use; also where
        a definition's language holding them comes from another compilation)."""
        if self._holes is None:
            for h, (_, call) in zip(_OPEN_HOLES, self._containers(lw)[1]):
                self._piece_of[h] = call.piece
            self._holes = _OPEN_HOLES
        return self._holes

    def text(self, dfa: DFA, tick: int | None = None) -> Text:
        """``Text(dfa, tick)`` with a call for each placeholder it moves on (a pair: each of
        its characters)."""
        reads = _reader(dfa)
        calls = [(h, Call(p)) for h, p in self._piece_of.items() if reads(h)]
        return Text(dfa, tick=tick, calls=tuple(calls))

    def build(self, dfa: DFA):
        """The :class:`~tokenfsm.automata.lazy_bytes.LazyBytes` whose top piece is ``dfa``."""
        return self.net.build(self.net.piece(self.text(dfa)), max_depth=self._depth)

    def conflicting(self, e) -> frozenset:
        """The targets of the counted pieces a
        :class:`~tokenfsm.automata.errors.NondeterministicCall` from :meth:`build` names (the
        piece whose walk is ambiguous, the pieces it calls there): lowered again with those
        inlined, the walk may tell the texts apart (two objects in any order under ``anyOf``
        both begin with ``{``), and the rest stays counted."""
        pieces = (e.module, *e.calls) if e.module is not None else e.calls
        # an object by its place: the alternatives of a union are made again by each lowering
        return frozenset(self._place(t[1]) if t in self._objects else t
                         for t in map(self._target_of.get, pieces) if t is not None)

    @staticmethod
    def _place(ptr: str) -> tuple:
        """What :attr:`inline` holds for every object's piece at ``ptr``, and at the pointers of
        the other alternatives of its ``anyOf`` or ``oneOf`` (which meet it at ``{``)."""
        return ("counted", _UNION_BRANCH.sub("", ptr), "object")
