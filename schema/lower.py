"""Lowering: the intermediate form (:mod:`.ir`) to typed languages of JSON text.

:class:`Lowering` reads nodes only. :meth:`Lowering.lower` dispatches on the node type:

* ``true`` is every value up to ``max_depth`` levels of nesting (a cut, warned with its pointer);
* a :class:`~.ir.Ref` goes through :meth:`Lowering.reference`, the one place that decides what a
  reference becomes: expanded in place (depth counted, cut at ``max_depth`` with a warning), a
  definition written alike reused (:mod:`.twins`), or on the stack route a *call* of the
  definition's own automaton (:mod:`.stack`);
* a number schema whose applicators combine ``multipleOf`` and bounds is one residue automaton
  (:mod:`.residues`, with ``tuning.number_formulas``);
* anything else is rewritten into alternatives (:mod:`.algebra`), each lowered by type: numbers
  and strings and listed values (:mod:`.lower_scalars`), arrays and objects
  (:mod:`.lower_containers`), then its residual conjuncts intersected or subtracted as texts.

When the rewriting would give too many alternatives, applicators are taken as set operations on
texts (:meth:`Lowering.fallback`). Those are exact when one side of each intersection holds every
spelling of its values on the types they share (scalars always do as far as values go; objects
and arrays of objects only when unconstrained); otherwise strict mode refuses
(:class:`UnsupportedSchema`) and lenient mode warns: never silently narrower.

Complements (:meth:`Lowering.subtract`) are taken on canonical spellings (numbers without
exponent or trailing zeros; only where the language subtracted holds numbers, which it may hold
in one spelling only), with no depth limit, except where the language subtracted was itself cut
at some depth: then only values shallower than the cut are kept (the cut values might be in it),
with a warning when that loses any.

Example
-------
>>> from tokenfsm.schema.resolve import resolve
>>> lw = Lowering(resolve({"type": "integer", "not": {"const": 3}}), whitespace=0)
>>> lang = lw.lower(lw.ir.root)
>>> d = lang.to_dfa()
>>> d.accepts("2"), d.accepts("3"), d.accepts('"x"')
(True, False, False)

The per-type lowering follows xgrammar's and llguidance's JSON-schema converters; ``allOf``,
``not``, ``oneOf`` and ``if/then/else`` as exact set operations are what automata make possible.
"""

from __future__ import annotations

import time
import warnings
import weakref
from contextlib import nullcontext
from dataclasses import replace

from tokenfsm.automata.cache import ByteLRU, byte_lru_cache
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import DEFAULT_BUDGET, Budget, BudgetExceeded, OpaqueSymbolError

from . import ir
from .algebra import TOP, Alternative, Rewriter, conjoin, trivial
from .errors import SchemaError, SchemaWarning, UnsupportedSchema
from .jsontext import (CANONICAL_NUMBER, TYPES, TypedLanguage, _rows, shallower, whitespace_dfa)
from .lower_containers import (array_part, object_part, object_terms_part, object_union_part,
                               unique_arrays)
from .listed import passing
from .lower_lazy import OPEN_TARGETS
from .lower_scalars import (any_scalar, any_value, number_part, patterned_string,
                            patterned_strings_texts, string_part, string_text,
                            values_lang)
from .refs import pointer
from .residues import number_formula
from .stack import _OpenValues
from .strings import json_string, json_string_outside
from .tuning import DEFAULT_TUNING, Tuning
from .twins import ContentKeys

__all__ = ["Lowering", "MAX_REFERENCE_DEPTH", "canonical_texts", "shallow_texts"]

#: Lowering follows references into references at most this deep (a chain of distinct
#: definitions each naming the next): deeper is a :class:`SchemaError`.
MAX_REFERENCE_DEPTH = 64

_STRING_ONLY = frozenset({"string"})
_OBJECTS_ONLY = frozenset({"object"})
_NOT_OBJECTS = frozenset(TYPES) - {"object"}


def _object_language(part) -> TypedLanguage:
    """The typed language of an object part ``(dfa, complete, calls, cut)`` and nothing else."""
    dfa, complete, calls, cut = part
    return TypedLanguage.of({"object": dfa}, set(TYPES) if complete else _NOT_OBJECTS, calls,
                            {} if cut is None else {"object": cut})


def canonical_texts() -> DFA:
    """JSON texts whose every number is written canonically (no exponent, no trailing fraction
    zeros, no ``-0``... as :data:`.jsontext.CANONICAL_NUMBER`), at any depth: what complements
    of texts are taken on. Strings are skipped over (escapes included); nothing else is read."""
    return _CANONICAL_TEXTS


def _canonical_texts() -> DFA:
    num = CANONICAL_NUMBER.minimize()
    starts = CharSet.from_chars("-0123456789")       # what begins a number
    number_chars = CharSet.from_chars("-0123456789.eE+")
    quote, backslash = CharSet.of('"'), CharSet.of("\\")
    alphabet = _partition(list(num.classes) + [starts, number_chars, quote, backslash])
    # states: 0 dead, 1 outside strings and numbers, 2 in a string, 3 after a backslash in a
    # string, then one per live state of the canonical number automaton (offset 4)
    n_num = len(num.delta)
    delta = [[0] * len(alphabet) for _ in range(4 + n_num)]
    accepting = {1} | {4 + s for s in num.accepting}

    def num_step(s: int, cs: CharSet) -> int:
        t = num.delta[s][num.class_of(chr(cs.ranges[0][0]))]
        return 4 + t if t else 0

    for ci, cs in enumerate(alphabet):
        if cs == quote:
            delta[1][ci] = 2
        elif cs.issubset(starts):
            delta[1][ci] = num_step(num.start, cs)
        else:
            delta[1][ci] = 1
        delta[2][ci] = 1 if cs == quote else 3 if cs == backslash else 2
        delta[3][ci] = 2
        for s in range(1, n_num):
            if cs.issubset(number_chars):
                delta[4 + s][ci] = num_step(s, cs)
            elif s in num.accepting:
                delta[4 + s][ci] = delta[1][ci]
    return DFA.from_parts(alphabet, delta, accepting, 1).minimize()


def _partition(sets) -> list[CharSet]:
    """The coarsest partition of the alphabet that refines every set."""
    blocks = [CharSet.any()]
    for s in sets:
        nxt = []
        for b in blocks:
            nxt += [x for x in (b & s, b - s) if x]
        blocks = nxt
    return blocks


_CANONICAL_TEXTS = _canonical_texts()


def _texts_with_numbers() -> DFA:
    """Texts with a number somewhere outside their strings (a minus sign or a digit there)."""
    starts = CharSet.from_chars("-0123456789")
    quote, backslash = CharSet.of('"'), CharSet.of("\\")
    alphabet = _partition([starts, quote, backslash])
    # 1 outside strings, 2 in a string, 3 after a backslash in one, 4 a number was seen
    delta = [[0] * len(alphabet) for _ in range(5)]
    for ci, cs in enumerate(alphabet):
        delta[1][ci] = 2 if cs == quote else 4 if cs.issubset(starts) else 1
        delta[2][ci] = 1 if cs == quote else 3 if cs == backslash else 2
        delta[3][ci] = 2
        delta[4][ci] = 4
    return DFA.from_parts(alphabet, delta, [4], 1).minimize()


_TEXTS_WITH_NUMBERS = _texts_with_numbers()


@byte_lru_cache("schema.lower.shallow_texts", 4 << 20)
def shallow_texts(depth: int) -> DFA:
    """Texts whose arrays and objects nest at most ``depth`` levels deep (brackets counted
    outside strings): the values a cut at ``depth + 1`` cannot have missed. A filter of
    ``3 (depth + 1)`` states, to intersect with JSON texts."""
    opening, closing = CharSet.from_chars("[{"), CharSet.from_chars("]}")
    quote, backslash = CharSet.of('"'), CharSet.of("\\")
    alphabet = _partition([opening, closing, quote, backslash])
    # state 1 + 3 d + m: nesting d (0..depth), m 0 outside strings, 1 in one, 2 after a backslash
    n = 1 + 3 * (depth + 1)
    delta = [[0] * len(alphabet) for _ in range(n)]
    for d in range(depth + 1):
        out, inside, escaped = 1 + 3 * d, 2 + 3 * d, 3 + 3 * d
        for ci, cs in enumerate(alphabet):
            if cs == opening:
                delta[out][ci] = 1 + 3 * (d + 1) if d < depth else 0
            elif cs == closing:
                delta[out][ci] = 1 + 3 * (d - 1) if d > 0 else 0
            elif cs == quote:
                delta[out][ci] = inside
            else:
                delta[out][ci] = out
            delta[inside][ci] = out if cs == quote else escaped if cs == backslash else inside
            delta[escaped][ci] = inside
    return DFA.from_parts(alphabet, delta, range(1, n), 1).minimize()


class Lowering:
    """Lowers the nodes of one :class:`~.resolve.SchemaIR` under one set of options.

    Parameters
    ----------
    schema_ir : SchemaIR
    whitespace, excludes, strict, allow_extra_keys, property_order, max_depth, budget
        As :func:`~.compiler.compile_json_schema` takes them (checked there).
    tuning : Tuning
        Fast paths (:mod:`.tuning`).
    deadline : float, optional
        ``time.perf_counter()`` value past which a compilation stops (one time budget for every
        route a compilation tries).
    stack : Modules, optional
        On the stack route, the definitions kept as automata of their own (:mod:`.stack`).
    """

    def __init__(self, schema_ir, whitespace: int | None = 2, excludes: tuple = (),
                 strict: bool = True, allow_extra_keys: bool = False,
                 property_order: str = "schema", max_depth: int = 3,
                 budget: Budget | None = None, tuning: Tuning = DEFAULT_TUNING,
                 deadline: float | None = None, stack=None, counted=None):
        self.ir = schema_ir
        #: the counted pieces strings and arrays may become (:mod:`.lower_lazy`), or None
        self.counted = counted
        self.excludes = tuple(excludes)
        self.strict = strict
        self.allow_extra_keys = allow_extra_keys
        self.any_order = property_order == "any"
        self.max_depth = max_depth
        self.budget = budget or DEFAULT_BUDGET
        self.tuning = tuning
        self.ws = whitespace_dfa(whitespace)
        self.ws_n = whitespace
        self.stack = stack
        self.warnings: list[str] = []
        self.warning_log: list[tuple[str, str]] = []  # (message, pointer) of every warn call
        self.defer = stack is not None  # the stack route issues its warnings once it is taken
        # pointers of the values cut at max_depth, per lowering under way (innermost last), and
        # how many complements are being lowered (their cuts are reported by subtract, where
        # they lose something; see cut_here)
        self._cut_log: list[list] = [[]]
        self.negated = 0
        self._copy_any = 0          # see any_copied
        #: how many objects' member values in any order are being lowered (see
        #: lower_lazy.ANY_ORDER_STRING_STATES)
        self.in_members = 0
        self.open_sites = None      # see stack.OPEN_SITES
        self._open_at: set = set()
        self._open_met: list = []   # pointers of the open values met off the stack route
        self._location_of: dict | None = None     # definition location -> target
        self._cut_message = f"values nested deeper than max_depth={max_depth} are cut"
        self.ref_stack: dict[str, int] = {"": 1}
        self.cuts = 0
        self.depth = 0
        self.cache: dict = {}
        self.names_cache: dict = {}
        self.values_cache: dict = {}
        self.number_texts: dict = {}
        self._strings: dict = {}
        self._conjunctions: dict = {}
        self._restricted: dict = {}
        self._scoped: dict = {}
        self._scoped_parts: dict = {}
        self._numbers: dict = {}
        self._minimal: DFA | None = None
        self.deadline = deadline
        if deadline is None and self.budget.max_seconds is not None:
            self.deadline = time.perf_counter() + self.budget.max_seconds
        self.keys = ContentKeys(schema_ir, enabled=tuning.twins)
        self.twins: dict[str, tuple] = {}
        self.where = ""  # innermost node being lowered (names a route conflict)
        self.empty_why: list = []  # (why, pointer) of alternatives found empty
        # (through a weak proxy: the rewriter's calls back hold no reference to this lowering,
        # which is freed, with its caches, as soon as the compilation ends)
        me = weakref.proxy(self)
        self.rewriter = Rewriter(schema_ir, lambda target: me._kept_as_text(target),
                                 lambda *args: me.unsupported(*args),
                                 tuning.scalar_alternatives, item_negations=strict)

    # ------------------------------------------------------------------ reporting
    def warn(self, msg: str, ptr: str) -> None:
        self.warning_log.append((msg, ptr))
        text = f"{msg} (at {ptr or '/'})"
        if text not in self.warnings:
            self.warnings.append(text)
            if not self.defer:
                warnings.warn(text, SchemaWarning, stacklevel=5)

    def unsupported(self, msg: str, ptr: str, keyword: str | None = None) -> None:
        if self.strict:
            raise UnsupportedSchema(msg, ptr, keyword)
        self.warn(msg + "; not enforced", ptr)

    def charge(self, states: int, operation: str, ptr: str) -> None:
        """Charge an automaton of at least ``states`` states to the budget before building it."""
        if states > self.budget.max_states:
            raise BudgetExceeded(self.budget.max_states, states, operation, pointer=ptr or "/")

    def no_calls(self, langs, what: str) -> None:
        """Raise :class:`OpaqueSymbolError` when a product or complement is about to look inside
        languages that hold calls of other automata (the stack route then copies those
        definitions in place, or unrolls)."""
        calls = frozenset().union(*(la.calls for la in langs))
        if calls:
            raise OpaqueSymbolError(f"{what} over a call of another automaton", targets=calls)

    def excluded(self, text: str) -> bool:
        return any(e in text for e in self.excludes)

    # ------------------------------------------------------------------ entry
    def lower(self, node: ir.Node) -> TypedLanguage:
        """The typed text language of ``node``."""
        key = id(node)
        hit = self.cache.get(key)
        if hit is not None:
            for ptr in hit[2]:
                self.cut_here(ptr)
            return hit[1]
        if self.deadline is not None and time.perf_counter() > self.deadline:
            spent = time.perf_counter() - self.deadline + self.budget.max_seconds
            raise BudgetExceeded(self.budget.max_seconds, spent, "schema", kind="seconds",
                                 pointer=node.ptr or "/")
        cuts = self.cuts
        self.depth += 1
        self._cut_log.append([])
        try:
            if self.depth > 2 * MAX_REFERENCE_DEPTH:
                raise SchemaError(f"the schema nests (through references) deeper than "
                                  f"{MAX_REFERENCE_DEPTH} levels", node.ptr)
            lang = self._lower(node)
        except OpaqueSymbolError:
            if not self.where:
                self.where = node.ptr or "/"
            raise
        except BudgetExceeded as e:
            if e.pointer is None:
                raise e.with_pointer(node.ptr or "/") from None
            raise
        finally:
            self.depth -= 1
            cut_at = tuple(dict.fromkeys(self._cut_log.pop()))
            self._cut_log[-1].extend(cut_at)
        if self.cuts == cuts:
            self.cache[key] = (node, lang, cut_at)
        return lang

    def lower_negated(self, node: ir.Node) -> TypedLanguage:
        """``node``'s language, to be subtracted: its own cuts at ``max_depth`` are not reported
        (what subtracting a cut language loses is, see :meth:`subtract`)."""
        self.negated += 1
        try:
            return self.lower(node)
        finally:
            self.negated -= 1

    def any_copied(self) -> "_AnyCopied":
        """Within: open arrays and objects are copied in place, not called (see
        :meth:`any_value`): what is lowered meets a product, a complement or a list of values,
        which cannot look inside a call."""
        return _AnyCopied(self)

    def cut_here(self, ptr: str) -> None:
        """Values at ``ptr`` are cut at ``max_depth``: said (unless being subtracted, and then
        said when the same language is used elsewhere, see :meth:`lower`)."""
        self._cut_log[-1].append(ptr)
        if not self.negated:
            self.warn(self._cut_message, ptr)

    def cut_anywhere(self) -> bool:
        """Whether the lowering cut some value at ``max_depth`` (a recursion, or a value nested
        deeper), so that the language may lack values the schema allows."""
        return bool(self.cuts or self._cut_log[0])

    def _lower(self, node) -> TypedLanguage:
        if isinstance(node, ir.Always):
            return self.any_value(node.ptr)
        if isinstance(node, ir.Never):
            return TypedLanguage.nothing()
        if isinstance(node, ir.Ref):
            return self.reference(node)
        if self.tuning.number_formulas:
            number = number_formula(node, self.ir, self.budget)
            if number is not None:      # (every canonical spelling of every value it passes)
                return TypedLanguage.of({"number": number})
        rw = self.rewriter
        mark = len(rw.inlined)
        try:
            alts = rw.alternatives(node)
        finally:
            # targets expanded in place count as entered while the alternatives (which hold
            # their subschemas) are lowered: recursion through them is cut as well
            targets = rw.inlined[mark:]
            del rw.inlined[mark:]
        if alts is None:
            # (the fallback enters the references it meets itself, through reference())
            return self.fallback(node)
        for t in targets:
            self.ref_stack[t] = self.ref_stack.get(t, 0) + 1
        try:
            return self.union_of(alts)
        finally:
            for t in targets:
                self.ref_stack[t] -= 1

    def union_of(self, alts) -> TypedLanguage:
        """The union of the languages of ``alts``. Alternatives that are strings under a
        ``pattern`` or ``format`` and nothing else (with ``tuning.string_unions``) are unioned as
        decoded values and spelled once (:func:`.lower_scalars.patterned_strings_texts`): one
        substitution into JSON spellings, not one per alternative and then a product of the
        spelled automata (Handwritten allany22, nested negations of patterns: 5.5 s -> 1.4 s);
        where they share large length bounds, one counted piece whose body is the union of
        their patterns (:meth:`.lower_lazy.CountedPieces.strings`). In any order, alternatives
        that are objects only are lowered as one (:meth:`_object_union`), and others that
        differ only in the keys they require and forbid are one key set
        (:meth:`_object_terms`)."""
        b = self.budget
        keys = {}
        if self.tuning.string_unions:
            # (read only where two alternatives may merge: a lone patterned string, the usual
            # case, is lowered as it is without its patterns being read twice)
            maybe = [i for i, alt in enumerate(alts)
                     if not alt.residual and alt.assertions.values is None
                     and not alt.assertions.unsupported and alt.assertions.types == _STRING_ONLY
                     and alt.assertions.string is not None
                     and (alt.assertions.string.patterns or alt.assertions.string.formats)]
            if len(maybe) >= 2:
                for i in maybe:
                    got = patterned_string(self, alts[i].assertions.string)
                    if got is not None:
                        keys[i] = got
        if len(keys) < 2:
            keys = {}
        out = TypedLanguage.nothing()
        if keys:
            distinct = tuple(dict.fromkeys(keys.values()))
            got = None
            if self.counted is not None:    # one counted piece, the patterns' union its body
                got = self.counted.strings(self, distinct, alts[next(iter(keys))].ptr)
            if got is not None:
                out = TypedLanguage.of({"string": got[0]}, set(TYPES) - {"string"}, got[1])
            else:
                for i in keys:
                    lo, hi = keys[i][:2]
                    self.charge(max(lo, hi or 0), "string", alts[i].ptr)
                for text in patterned_strings_texts(distinct, b):
                    out = out.union(TypedLanguage.of({"string": text}, set(TYPES) - {"string"}),
                                    b)
        merged: dict = {}
        if len(alts) > 1:
            merged = self._object_union(alts)
            merged.update(self._object_terms(alts, merged))
        for i, alt in enumerate(alts):
            if i in merged:
                if merged[i] is not None:
                    out = out.union(merged[i], b)
            elif i not in keys:
                out = out.union(self.alternative(alt), b)
        return out

    def _object_terms(self, alts, taken) -> dict:
        """Alternatives alike but for the keys their objects require and forbid
        (``dependentRequired``, ``not: {required: [...]}``), lowered as one: their objects one
        key set with a term each (:func:`.lower_containers.object_terms_part`), their other
        types once. ``{index: language}`` for the first of each such group, None for the
        others; ``taken``: alternatives lowered already."""
        groups: dict = {}
        for i, alt in enumerate(alts):
            a, o = alt.assertions, alt.assertions.object
            if i in taken or alt.residual or a.values is not None or o is None or o.witnesses or \
                    (a.types is not None and "object" not in a.types):
                continue
            alike = (a.types, id(a.string), id(a.number), id(a.array), a.unsupported,
                     tuple(map(id, o.members)), tuple(map(id, o.names)), o.min_properties,
                     o.max_properties)
            groups.setdefault(alike, []).append(i)
        out = {}
        for group in groups.values():
            if len(group) < 2:
                continue
            first = alts[group[0]]
            a = first.assertions
            terms = [(alts[i].assertions.object.required, alts[i].assertions.object.forbidden)
                     for i in group]
            got = object_terms_part(self, a.object, terms, first.ptr)
            if got is None:
                continue
            lang = _object_language(got)
            if a.types is None or a.types - {"object"}:
                rest = replace(a, object=None, types=(a.types or frozenset(TYPES)) - {"object"})
                lang = self.assertions(rest, first.ptr).union(lang, self.budget)
            out[group[0]] = lang
            out.update(dict.fromkeys(group[1:]))
        return out

    def _object_union(self, alts) -> dict:
        """Alternatives that are objects and nothing else, keys in any order, lowered as one
        (:func:`.lower_containers.object_union_part`: the members of one are the members of
        all, a key set where it can be): ``{index: language}`` for the first of them, None for
        the others; empty where that is not made (schema order, fewer than two)."""
        if not self.any_order:
            return {}
        group = [i for i, alt in enumerate(alts) if not alt.residual
                 and alt.assertions.values is None and not alt.assertions.unsupported
                 and alt.assertions.types == _OBJECTS_ONLY and alt.assertions.object is not None
                 and not alt.assertions.object.witnesses]
        if len(group) < 2:
            return {}
        got = object_union_part(self, [alts[i].assertions.object for i in group],
                                [alts[i].ptr for i in group])
        if got is None:
            return {}
        return {group[0]: _object_language(got), **dict.fromkeys(group[1:])}

    def _kept_as_text(self, target: str) -> bool:
        """A recursive target being lowered stays a residual (followed by :meth:`reference`,
        which counts the depth)."""
        return bool(self.ref_stack.get(target, 0))

    def conjunction(self, parts) -> ir.Node:
        """One node for the conjunction of ``parts`` (the same parts give the same node)."""
        parts = tuple(p for p in parts if not isinstance(p, ir.Always)) or tuple(parts[:1])
        if len(parts) == 1:
            return parts[0]
        key = tuple(map(id, parts))
        node = self._conjunctions.get(key)
        if node is None:
            node = self._conjunctions[key] = ir.AllOf(parts[0].ptr, parts)
        return node

    def restricted(self, node, types: frozenset) -> ir.Node:
        """``node`` with only values of ``types`` (the others need not be built)."""
        key = (id(node), types)
        got = self._restricted.get(key)
        if got is None:
            got = self._restricted[key] = ir.Schema(
                node.ptr, ir.Assertions(node.ptr, types), (node,))
        return got

    # ------------------------------------------------------------------ references
    def reference(self, ref: ir.Ref) -> TypedLanguage:
        """What a reference becomes, decided here and nowhere else: a cut (past ``max_depth``),
        the language of a definition written alike (:mod:`.twins`), a call of the definition's
        own automaton (stack route: a recursive definition, or a large one that is shared), a
        call of a recursive definition's piece of the network (:meth:`.lower_lazy.CountedPieces
        .reference`), or the definition expanded in place."""
        if ref.target is None:
            self.unsupported(f"$ref {ref.shown!r} is not local", ref.ptr, "$ref")
            return self.any_value(ref.ptr)
        target, s = ref.target, self.stack
        if s is None and self.counted is not None:
            got = self.counted.reference(self, ref)
            if got is not None:
                return got
        if s is not None:
            if target in s.entered:  # recursion: a cycle of modules
                s.enter_cycle(target)
            if target in s.module_of:
                if target in s.entered:  # the walk cuts it at max_depth, as unrolling does
                    self.warn(f"recursive $ref {ref.shown!r} cut at depth {self.max_depth}",
                              ref.ptr)
                return s.call(target)
        elif self.ref_stack.get(target, 0) >= self.max_depth:
            return self.cut(ref)
        key, twin = self.twin(target)
        if twin is not None:
            if s is not None and twin[0] in s.module_of:
                return s.call(twin[0])
            return self.reuse(twin, target)
        mark = self.mark()
        lang = self.entered(target)
        if s is not None:
            if target in s.module_of:  # it recurred while being lowered: lang is its body
                s.bodies.setdefault(target, lang)
                return s.call(target)
            if s.share_it(target, self.ir.definitions[target], lang):
                self.keep_twin(key, mark, target, lang)
                return s.call(target)
        self.keep_twin(key, mark, target, lang)
        return lang

    def entered(self, target: str) -> TypedLanguage:
        """Lower a definition with it marked as entered (a reference back to it recurs)."""
        node = self.ir.definitions[target]
        n = self.ref_stack.get(target, 0)
        self.ref_stack[target] = n + 1
        if self.stack is not None:
            self.stack.entered[target] = node
        try:
            return self.lower(node)
        finally:
            self.ref_stack[target] = n
            if self.stack is not None:
                del self.stack.entered[target]

    def cut(self, ref: ir.Ref) -> TypedLanguage:
        """A recursive reference past ``max_depth``: no value (warned), cut at depth 0 for the
        types its definition may have."""
        self.cuts += 1
        self.warn(f"recursive $ref {ref.shown!r} cut at depth {self.max_depth}", ref.ptr)
        return TypedLanguage({}, frozenset(TYPES), frozenset(),
                             {t: 0 for t in self.possible_types(self.ir.definitions[ref.target])})

    def possible_types(self, node, seen=None) -> frozenset:
        """The JSON types (of :data:`.jsontext.TYPES`) a node's values may have, as far as its
        ``type`` keywords tell (all six when they do not)."""
        if isinstance(node, ir.Never):
            return frozenset()
        if isinstance(node, ir.Ref) and node.target is not None:
            seen = seen or set()
            if node.target in seen:
                return frozenset(TYPES)
            seen.add(node.target)
            return self.possible_types(self.ir.definitions[node.target], seen)
        a = node.assertions if isinstance(node, ir.Schema) else node
        if isinstance(a, ir.Assertions) and a.types is not None:
            return frozenset(t for t in TYPES if t in a.types
                             or (t == "number" and "integer" in a.types))
        return frozenset(TYPES)

    def twin(self, target: str) -> tuple:
        """``(key, twin)``: the content key of a definition (see :mod:`.twins`) and, when a
        definition with the same key was lowered before, in this compilation or (off the stack
        route) in another with the same options (:data:`SHARED_TWINS`), ``(target or None,
        location, language, warnings, cuts, open values)``. One from another compilation whose
        warnings, cuts or open values lie in the definitions it names is taken where those are
        here too, at the same places (an API's schemas name their definitions alike)."""
        key = self.keys.key(target)
        if key is None:
            return None, None
        got = self.twins.get(key)
        if got is None and self.stack is None:
            shared = SHARED_TWINS.get((key, self._context()))
            if shared is not None and all(self.ir.locations.get(t) == loc
                                          and self.keys.key(t) == k for t, loc, k in shared[-1]):
                got = self.twins[key] = (None,) + shared[:-1]
        return key, got

    def _context(self) -> tuple:
        """What the language of a definition depends on besides its content: the options, the
        draft's integers, the route."""
        return (self.ws_n, self.excludes, self.strict, self.allow_extra_keys, self.any_order,
                self.max_depth, self.tuning, self.ir.float_integers, self.counted is not None,
                self.counted is not None and self.counted.calls_open_values())

    def mark(self) -> tuple:
        return len(self.warning_log), self.cuts, len(self.empty_why), len(self._open_met)

    def keep_twin(self, key, mark: tuple, target: str, lang: TypedLanguage) -> None:
        """Keep a definition's language for the definitions written alike, unless its lowering
        cut a recursion (which depends on where it was entered) or reported why an alternative
        was empty; the warnings and cuts it gave, and the open values it met (each counts
        toward the stack route, see :meth:`any_value`), are given again, at the twin's place,
        where it is reused. Off the stack route and outside complements, a language without
        calls is kept for other compilations too, with the places of the definitions it names
        where it said, cut or left open something (the metadata of every Kubernetes object
        reaches an open ``FieldsV1``)."""
        if key is not None and self.cuts == mark[1] and len(self.empty_why) == mark[2]:
            said = tuple((m, p) for m, p in self.warning_log[mark[0]:] if m != self._cut_message)
            hit = self.cache.get(id(self.ir.definitions[target]))
            loc, cut_at = self.ir.locations[target], hit[2] if hit else ()
            opened = tuple(dict.fromkeys(self._open_met[mark[3]:]))
            self.twins.setdefault(key, (target, loc, lang, said, cut_at, opened))
            # (calls of counted pieces belong to this lowering's network, but for the open
            # values' placeholders, the same in every lowering: see CountedPieces.open_holes)
            if self.stack is not None or lang.calls - _OPEN_CALLS or self.negated \
                    or self._copy_any:
                return
            # what it said, cut or left open in the definitions it names: where those are
            # (checked where it is reused, see twin)
            named = set()
            for p in [p for _, p in said] + list(cut_at) + list(opened):
                if not (p == loc or p.startswith(loc + "/")):
                    t = self._definition_at(p)
                    if t is None or self.keys.key(t) is None:
                        return
                    named.add((t, self.ir.locations[t], self.keys.key(t)))
            SHARED_TWINS.put((key, self._context()),
                             (loc, lang, said, cut_at, opened, tuple(sorted(named))),
                             nbytes=sum(_dfa_bytes(d) for d in lang.parts.values()))

    def _definition_at(self, ptr: str) -> str | None:
        """The definition whose location holds ``ptr`` (the innermost), or None."""
        if self._location_of is None:
            self._location_of = {loc: t for t, loc in self.ir.locations.items()}
        while True:
            got = self._location_of.get(ptr)
            if got is not None or "/" not in ptr:
                return got
            ptr = ptr.rsplit("/", 1)[0]

    def reuse(self, twin: tuple, target: str) -> TypedLanguage:
        _, loc_from, lang, said, cut_at, opened = twin
        loc_to = self.ir.locations[target]

        def moved(ptr: str) -> str:
            if ptr == loc_from or ptr.startswith(loc_from + "/"):
                return loc_to + ptr[len(loc_from):]
            return ptr

        if lang.calls & _OPEN_CALLS:
            self.counted.open_holes(self)     # (a language kept from another compilation)
        for msg, ptr in said:
            self.warn(msg, moved(ptr))
        for ptr in cut_at:
            self.cut_here(moved(ptr))
        if not (self.negated or self._copy_any):
            for ptr in opened:
                self._met_open(moved(ptr))
        return lang

    # ------------------------------------------------------------------ one alternative
    def alternative(self, alt: Alternative) -> TypedLanguage:
        a = alt.assertions
        if a.values is not None and alt.residual:
            # listed values against the residuals one by one (:mod:`.listed`), where they decide
            kept = passing(a, self.ir, self.any_order and self.allow_extra_keys, alt.residual)
            if kept is not None:
                return self.assertions(ir.Assertions(a.ptr, values=kept,
                                                     values_ptr=a.values_ptr), alt.ptr)
        for kind, sub in alt.residual if not (_types_only(a) or trivial(a)) else ():
            possible = self.possible_types(sub) if kind == "schema" else TYPES
            if len(possible) < len(TYPES):
                # assertions beside a subschema kept as text (a recursive $ref): only the types
                # it may have are built (not the arrays a negation adds beside an object)
                a = conjoin(a, ir.Assertions(a.ptr, frozenset(possible) | (
                    {"integer"} if "number" in possible else set())))
        if a.types is not None and not a.types:
            return TypedLanguage.nothing()
        first = alt.residual and alt.residual[0][0] == "schema"
        rest = alt.residual[1:] if first and (_types_only(a) or trivial(a)) else alt.residual
        # (residuals are products and complements: their operands copy open values in place)
        copying = self.any_copied() if rest else nullcontext()
        if first and _types_only(a):
            # the types of that subschema (anyOf: [{$ref}, ...] beside a negation): its language
            # as it is, not intersected with every JSON value (which nests only max_depth deep,
            # and on the stack route cannot meet a call)
            with copying:
                lang, universe = self.lower(alt.residual[0][1]), set()
            if a.types is not None:
                lang = lang.only(t for t in TYPES if t in a.types)
        elif first and trivial(a):
            # nothing but that subschema (anyOf: [{$ref}, ...]): its language as it is, not
            # intersected with every JSON value (which nests only max_depth deep, and on the
            # stack route cannot meet a call)
            with copying:
                lang, universe = self.lower(alt.residual[0][1]), set()
        else:
            with copying:
                lang, universe = self._assertions(a, alt.ptr)
            if universe and not rest:
                self.cut_here(alt.ptr)
        for kind, sub in rest:
            if lang.is_empty():
                break
            if kind != "schema" and not self.possible_types(sub) & lang.parts.keys():
                # a negation of values of other types only (the branches of a oneOf over
                # a string, an object and an array): nothing to take away, and nothing to
                # lower (a recursive reference there would be expanded in place)
                continue
            if not isinstance(sub, ir.Ref) and {"object", "array"} - set(lang.parts):
                # only the types still in lang matter: objects and arrays are costly to build
                # (a reference stays as it is: it is followed by reference())
                sub = self.restricted(sub, frozenset(lang.parts) | (
                    {"integer"} if "number" in lang.parts else set()))
            if kind == "schema":
                with self.any_copied():
                    other = self.lower(sub)
                self._inexact_intersection(lang, other, sub.ptr)
                lang = lang.intersect(other, self.budget)
            else:
                lang = self.subtract(lang, self.lower_negated(sub), sub.ptr)
        if rest and universe and (universe & set(lang.parts) or not self.max_depth):
            # the universe the residuals were taken in was cut, and some of it is left (at
            # max_depth=0 none of it was there)
            self.cut_here(alt.ptr)
        if rest and self.counted is not None and not (self.negated or self._copy_any):
            lang = self.counted.shared_open(self, lang)
        return lang

    def assertions(self, a: ir.Assertions, ptr: str) -> TypedLanguage:
        """The texts of the values that meet ``a`` (one merged alternative)."""
        lang, universe = self._assertions(a, ptr)
        if universe:
            self.cut_here(ptr)
        return lang

    def _assertions(self, a: ir.Assertions, ptr: str):
        """``(language, types)``: the texts of the values that meet ``a``, and the types whose
        part is the shared any-value automaton (cut at ``max_depth``, for the caller to
        report), or would be: at ``max_depth=0`` it has no arrays and objects."""
        if a.values is not None and (
                a.types is not None or a.string or a.number or a.array or a.object):
            kept = passing(a, self.ir, self.any_order and self.allow_extra_keys)
            if kept == ():
                return TypedLanguage.nothing(), set()
            if kept is not None:   # the values that pass: every spelling of each
                a = ir.Assertions(a.ptr, values=kept, values_ptr=a.values_ptr)
        if a.values is not None and not self._copy_any:
            with self.any_copied():   # (the listed values meet the parts' texts)
                return self._assertions(a, ptr)
        types = a.types
        if types is not None and not types:
            return TypedLanguage.nothing(), set()
        wanted = [t for t in TYPES if types is None or t in types
                  or (t == "number" and "integer" in types)]
        integer = types is not None and "integer" in types and "number" not in types
        if a.values is None and not any((a.string, a.number, a.array, a.object, a.unsupported)):
            if set(wanted) <= {"null", "boolean", "number", "string"}:
                # scalars only: no need to build the nested any-value automaton
                scalars = any_scalar(self.excludes, self.budget)
                lang = TypedLanguage.of({t: scalars[t] for t in wanted})
            else:
                lang = self.any_value(ptr, False).only(wanted)
            if integer:
                parts = dict(lang.parts)
                parts["number"] = number_part(self, None, True, ptr)
                lang = TypedLanguage.of(parts, lang.complete, lang.untyped(), lang.cut,
                                        lang.typed)
            # (at max_depth=0 there are none: cut all the same)
            return lang, {t for t in ("array", "object") if t in wanted}
        if a.array is not None and a.array.unique and "array" in wanted:
            if unique_arrays(a.array) is None:
                self.unsupported("uniqueItems is not regular", pointer(a.array.ptr, "uniqueItems"),
                                 "uniqueItems")
        value_lang = None
        if a.values is not None:
            value_lang = values_lang(self, a.values, a.values_ptr or pointer(ptr, "enum"))
        parts, complete, calls, cut, universe = {}, set(TYPES), frozenset(), {}, set()
        typed: set = set()
        for t in wanted:
            if value_lang is not None and t not in value_lang.parts:
                continue
            before = calls
            if t == "null":
                part = DFA.literal("null")
            elif t == "boolean":
                part = DFA.literal("true") | DFA.literal("false")
            elif t == "number":
                part = number_part(self, a.number, integer, ptr)
            elif t == "string":
                for kw, at in a.unsupported:
                    self.unsupported(f"{kw} asserts in this draft and is not enforced", at, kw)
                got = None
                if value_lang is None and self.counted is not None:
                    got = self.counted.string(self, a.string)
                if got is not None:       # a placeholder calling a counted piece
                    part, c = got
                    calls = calls | c
                else:
                    part = string_part(self, a.string, ptr, value_lang is not None)
                if a.string is not None and (a.string.patterns or a.string.formats):
                    complete.discard(t)  # minimal spellings only
            elif t in ("array", "object") and getattr(a, t) is None and value_lang is not None:
                part = value_lang.parts[t]  # the listed values, however deep
            elif t in ("array", "object") and getattr(a, t) is None:
                every = self.any_value(ptr, False)  # unconstrained: the shared one
                universe.add(t)
                part = every.parts.get(t)
                if part is None:
                    continue                # (max_depth=0: every value a scalar, this type cut)
                typed |= {x for x in every.typed if x[1] == t}
                cut[t] = self.max_depth + 1
            else:
                container = array_part if t == "array" else object_part
                part, ok, c, k = container(self, getattr(a, t), ptr)
                calls = calls | c
                if k is not None:
                    cut[t] = k
                if not ok:
                    complete.discard(t)
                arrays = unique_arrays(a.array) if t == "array" and a.array.unique else None
                if arrays is not None:
                    unique = values_lang(self, tuple(arrays), pointer(a.array.ptr, "uniqueItems"))
                    self.no_calls((TypedLanguage({}, frozenset(), c),), "uniqueItems")
                    part = part.intersect(unique.parts.get("array", DFA.empty()), self.budget)
                    if "array" not in unique.complete:
                        complete.discard(t)
            if value_lang is not None:
                if part is value_lang.parts[t]:
                    pass
                elif t == "string" and part is self.cached_string(0, None, (), (), ()):
                    # every spelling of every string: the listed strings are all in it
                    part = value_lang.parts[t]
                else:
                    # the listed values' texts against the part's: not through a call
                    self.no_calls((TypedLanguage({}, frozenset(), calls - before),), "an enum")
                    part = part.intersect(value_lang.parts[t], self.budget)
                if t not in value_lang.complete:
                    complete.discard(t)
            parts[t] = part
        return TypedLanguage.of(parts, complete, calls, cut, frozenset(typed)), universe

    # ------------------------------------------------------------------ complements
    def subtract(self, lang: TypedLanguage, other: TypedLanguage, ptr: str) -> TypedLanguage:
        """Texts of ``lang`` whose values ``other`` rejects: ``lang ∩ complement(other)``, computed
        without building the complement."""
        self.no_calls((lang, other), "a complement")
        b = self.budget
        parts = {}
        complete = set(lang.complete & other.complete)
        cut = dict(lang.cut)
        for t, d in lang.parts.items():
            if other.parts.get(t) is d:
                continue  # the same automaton (the shared any-value one): nothing is left
            if t in ("array", "object") and t in other.parts and self._has_numbers(other.parts[t]):
                # other may hold a number in one spelling only: compare canonical spellings
                d = d.intersect(canonical_texts(), b)
            if t in other.cut:
                # values at or past other's cut may be in other though its texts miss them:
                # keep only shallower ones (a cut of lang, said where it loses any)
                depth = other.cut[t]
                d = self._within(d.minimize(), depth - 1, ptr)
                cut[t] = min(cut.get(t, depth), depth)
                if d.is_empty():
                    continue
            if t not in other.parts:
                parts[t] = d
                continue
            if t == "string" and t not in other.complete and not self.excludes:
                # every string language holds the minimal spelling of each of its values
                parts[t] = d.intersect(self.minimal_strings(), b).difference(other.parts[t], b)
                complete.discard(t)
                continue
            if t not in other.complete:
                self._incomplete_complement(t, ptr)
            if t == "number":
                d = d.intersect(CANONICAL_NUMBER, b)
            parts[t] = d.difference(other.parts[t], b)
        return TypedLanguage.of(parts, complete, cut=cut)

    def _has_numbers(self, d: DFA) -> bool:
        """Whether some text of ``d`` holds a number (outside its strings)."""
        got = self._numbers.get(id(d))
        if got is None or got[0] is not d:
            got = self._numbers[id(d)] = (d, not d.intersect(_TEXTS_WITH_NUMBERS,
                                                              self.budget).is_empty())
        return got[1]

    def _within(self, d: DFA, depth: int, ptr: str) -> DFA:
        """The texts of ``d`` nested at most ``depth`` deep (none for a negative depth),
        warning when that loses any."""
        kept = d.intersect(shallow_texts(depth), self.budget) if depth >= 0 else DFA.empty()
        if not kept.equivalent(d):  # (both minimal: a comparison of tables)
            self.warn(f"values nested deeper than max_depth={self.max_depth} are cut under a "
                      "negation", ptr)
        return kept

    def _incomplete_complement(self, t: str, ptr: str) -> None:
        """A complement of ``t`` texts that do not hold every spelling of their values would
        accept spellings of rejected values: unsupported (strict) or a warning (lenient)."""
        if self.strict:
            raise UnsupportedSchema(f"complement of {t} texts that do not hold every spelling of "
                                    "their values", ptr, "not")
        self.warn(f"complement of {t} texts is taken on spellings, not values", ptr)

    # ------------------------------------------------------------------ text fallback
    def fallback(self, node) -> TypedLanguage:
        """``node``'s applicators as set operations on texts (the rewriting gives too many
        alternatives): exact where each intersection has a side that holds every spelling of
        its values (else refused in strict mode, warned in lenient mode).

        What the bare assertions of a conjunction say of types and numbers is conjoined into
        its other parts first (:meth:`scoped`), and pushed on through their unions,
        conjunctions and complements: ``allOf: [{anyOf: [...]}, {maximum: 0}]`` builds each
        branch within the bound, not every branch's numbers and then their product."""
        b = self.budget
        scoped = self._scoped_parts.get(id(node))
        if scoped is not None:
            return self._pushed(*scoped)
        if isinstance(node, ir.Schema):
            self._no_unevaluated(node)
            return self._conjoined((node.assertions,) + node.applicators)
        if isinstance(node, ir.AllOf):
            return self._conjoined(node.parts)
        if isinstance(node, ir.AnyOf):
            out = TypedLanguage.nothing()
            for p in node.parts:
                out = out.union(self.lower(p), b)
            return out
        if isinstance(node, ir.OneOf):
            with self.any_copied():   # (each part is subtracted from the others)
                return self._exactly_one([self.lower(p) for p in node.parts], node.parts)
        if isinstance(node, ir.Not):
            return self.subtract(self.any_value(node.ptr, shared=False),
                                 self.lower_negated(node.part), node.ptr)
        if isinstance(node, ir.IfThenElse):
            with self.any_copied():   # (products and a complement of the three)
                cond = self.lower(node.cond)
                then = self._intersect_exact(cond, self.lower(node.then), node.then.ptr)
                rest = self.subtract(self.any_value(node.ptr, shared=False), cond,
                                     node.cond.ptr)
                return then.union(self._intersect_exact(rest, self.lower(node.else_),
                                                        node.else_.ptr), b)
        if isinstance(node, ir.Dependent):
            self.unsupported("dependencies among too many alternatives", node.ptr,
                             "dependentSchemas")
            return self.any_value(node.ptr)
        raise TypeError(f"not a node: {node!r}")  # pragma: no cover

    def _no_unevaluated(self, node: ir.Schema) -> None:
        if node.unevaluated_properties is not None or node.unevaluated_items is not None:
            kw = "unevaluatedProperties" if node.unevaluated_properties is not None \
                else "unevaluatedItems"
            self.unsupported(f"{kw} next to in-place applicators under not, oneOf or if, "
                             "or among too many alternatives", pointer(node.ptr, kw), kw)

    def _conjoined(self, parts) -> TypedLanguage:
        """The intersection of ``parts``' languages, each part built within the scope of the
        bare assertions among them."""
        scope = self._scope(parts)
        lang = None
        for p in parts:
            p = self.scoped(p, scope)
            other = self.assertions(p, p.ptr) if isinstance(p, ir.Assertions) else self.lower(p)
            lang = other if lang is None else self._intersect_exact(lang, other, p.ptr)
        return lang

    def _exactly_one(self, subs: list, parts) -> TypedLanguage:
        """``oneOf``: the values of exactly one of the languages ``subs`` (of ``parts``)."""
        out = TypedLanguage.nothing()
        for i, sub in enumerate(subs):
            piece = sub
            for j, other in enumerate(subs):
                if j != i and not piece.is_empty():
                    piece = self.subtract(piece, other, parts[j].ptr)
            out = out.union(piece, self.budget)
        return out

    @staticmethod
    def _scope(parts) -> ir.Assertions | None:
        """What the bare assertions among ``parts`` say of types, and of numbers when they allow
        neither objects nor arrays (so no recursive reference meets the scope's any-value
        texts); None when that is nothing."""
        merged = None
        for p in parts:
            if isinstance(p, ir.Schema) and not p.applicators and \
                    p.unevaluated_properties is None and p.unevaluated_items is None:
                p = p.assertions
            if isinstance(p, ir.Assertions):
                merged = p if merged is None else conjoin(merged, p)
        if merged is None or merged.types is None:
            return None
        number = merged.number if not {"object", "array"} & merged.types else None
        return ir.Assertions(merged.ptr, merged.types, number=number)

    def scoped(self, node: ir.Node, scope: ir.Assertions | None) -> ir.Node:
        """``node`` within ``scope`` (the same two give the same node): assertions merged with
        it, any other node wrapped so that the rewriting conjoins the scope into each of its
        alternatives, and the fallback pushes it into its parts (:meth:`_pushed`)."""
        if scope is None:
            return node
        key = (id(node), id(scope))
        got = self._scoped.get(key)
        if got is None:
            if isinstance(node, ir.Assertions):
                got = conjoin(scope, node)
            else:
                got = ir.Schema(node.ptr, scope, (node,))
                self._scoped_parts[id(got)] = (scope, node)
            # (the entry holds the node and the scope: their ids are not reused meanwhile)
            got = self._scoped[key] = (node, scope, got)
        return got[2]

    def _pushed(self, scope: ir.Assertions, node: ir.Node) -> TypedLanguage:
        """``node`` within ``scope``, the scope pushed one level into ``node``: into each
        branch of a union, each part of a conjunction, the subtrahend of a complement."""
        b = self.budget
        if isinstance(node, ir.AnyOf):
            out = TypedLanguage.nothing()
            for p in node.parts:
                out = out.union(self.lower(self.scoped(p, scope)), b)
            return out
        if isinstance(node, ir.AllOf):
            return self._conjoined((scope,) + node.parts)
        if isinstance(node, ir.Schema) and node.unevaluated_properties is None \
                and node.unevaluated_items is None:
            return self._conjoined((scope, node.assertions) + node.applicators)
        if isinstance(node, ir.OneOf):
            return self._exactly_one([self.lower(self.scoped(p, scope)) for p in node.parts],
                                     node.parts)
        if isinstance(node, ir.Not):
            return self.subtract(self.assertions(scope, node.ptr),
                                 self.lower_negated(self.scoped(node.part, scope)), node.ptr)
        t = node.target if isinstance(node, ir.Ref) else None
        if t is not None and not self.ir.recursive(t) and (
                self.stack is None or t not in self.stack.module_of):
            # a definition expanded in place, as the rewriting expands it
            n = self.ref_stack.get(t, 0)
            self.ref_stack[t] = n + 1
            try:
                return self.lower(self.scoped(self.ir.definitions[t], scope))
            finally:
                self.ref_stack[t] = n
        return self._intersect_exact(self.assertions(scope, node.ptr), self.lower(node),
                                     node.ptr)

    def _inexact_intersection(self, a: TypedLanguage, b: TypedLanguage, ptr: str) -> None:
        """Warn where an intersection of texts (a recursive reference kept as text beside other
        keywords) may reject valid values: objects (or arrays of them) whose two sides each
        write only their own keys, in their own order."""
        for t in ("object", "array"):
            if t in a.parts and t in b.parts and t not in a.complete and t not in b.complete:
                self.warn(f"{t} texts of a recursive $ref kept as text are intersected with its "
                          "siblings' as texts: keys only one side declares are not written", ptr)
                return

    def _intersect_exact(self, a: TypedLanguage, b: TypedLanguage, ptr: str) -> TypedLanguage:
        for t in ("array", "object"):
            if t in a.parts and t in b.parts and t not in a.complete and t not in b.complete:
                self.unsupported(f"too many alternatives to merge: an intersection of {t} texts "
                                 "written in two key orders or with two sets of keys would "
                                 "reject valid values", ptr, "anyOf")
                break
        return a.intersect(b, self.budget)

    # ------------------------------------------------------------------ strings and values
    def cached_string(self, lo, hi, patterns, formats, excludes) -> DFA:
        """Texts of strings with these keywords (see :mod:`.lower_scalars`)."""
        key = (lo, hi, patterns, formats, excludes)
        if key not in self._strings:
            self._strings[key] = string_text(lo, hi, patterns, formats, excludes, self.budget)
        return self._strings[key]

    def key_region(self, value: DFA) -> DFA:
        """Quoted texts of undeclared keys with decoded names in ``value`` (exclusions applied),
        spelled as :data:`KEY_ESCAPES` says. Where ``value`` leaves out a few names only (the
        declared ones: the usual region), every string's texts but those names' spellings
        (:func:`.strings.json_string_outside`, or a product with a small automaton under
        exclusions), not every spelling of every other name made again."""
        key = (value, self.excludes)
        got = KEY_REGIONS.get(key)
        if got is None:
            names = value.complement().minimize()
            b, esc = self.budget, KEY_ESCAPES
            few = names.num_states <= KEY_REGION_STATES and names.is_finite()
            if few and self.excludes:
                every = json_string(DFA.universal(), excludes=self.excludes, escapes=esc, budget=b)
                got = every.difference(json_string(names, escapes=esc, budget=b), b)
            elif few:
                got = json_string_outside(names, b, escapes=esc)
            else:
                got = json_string(value, excludes=self.excludes, escapes=esc, budget=b)
            KEY_REGIONS.put(key, got, nbytes=_dfa_bytes(value) + _dfa_bytes(got))
        return got

    # ------------------------------------------------------------------ any value
    def any_value(self, ptr: str, warn: bool = True, shared: bool = True) -> TypedLanguage:
        """Every JSON value up to ``max_depth`` levels of nesting (with these spelling rules):
        a cut, warned with the pointer of the value (unless the caller reports it). On the
        stack route its arrays and objects are calls of a module each where the tuning shares
        them (:meth:`.stack.Modules.any_value`); ``shared=False`` (a universe to subtract
        from) keeps the automaton, as does a language being subtracted. Off the stack route,
        where the lowering counts, a value past :data:`~.lower_lazy.OPEN_VALUE_STATES` has its
        objects and arrays calls of counted pieces
        (:meth:`.lower_lazy.CountedPieces.open_value`); else the
        :data:`~.stack.OPEN_SITES`-th place met (``open_sites``) sends the schema there."""
        if warn:
            self.cut_here(ptr)
        shared = shared and not (self.negated or self._copy_any)
        if shared and self.stack is None:
            self._met_open(ptr)
            if self.counted is not None:
                got = self.counted.open_value(self)
                if got is not None:
                    return got
        lang = any_value(self.ws_n, self.excludes, self.max_depth, self.budget,
                         self.tuning.compose_min_rows)
        if shared and self.stack is not None:
            return self.stack.any_value(lang)
        return lang

    def _met_open(self, ptr: str) -> None:
        """An open value at ``ptr`` (off the stack route, outside complements): counted toward
        :data:`~.stack.OPEN_SITES` (where counted), and again where its definition's language is
        reused."""
        self._open_met.append(ptr)
        if self.open_sites is not None and not (self.counted and self.counted.counts()):
            self._open_at.add(ptr)
            if len(self._open_at) >= self.open_sites:
                raise _OpenValues(ptr)

    def minimal_strings(self) -> DFA:
        """Every string value in its minimal spelling: the universe of string complements when
        one side holds minimal spellings only (exact on values, minimal spellings out)."""
        if self._minimal is None:
            self._minimal = json_string(DFA.universal(), escapes="minimal", budget=self.budget)
        return self._minimal


class _AnyCopied:
    """The context of :meth:`Lowering.any_copied` (a class: entered on hot paths)."""

    __slots__ = ("lw",)

    def __init__(self, lw: Lowering):
        self.lw = lw

    def __enter__(self):
        self.lw._copy_any += 1

    def __exit__(self, *exc):
        self.lw._copy_any -= 1


#: :meth:`Lowering.key_region` spells the names left out where they are finite and their
#: automaton has at most this many states.
KEY_REGION_STATES = 2_000

#: The spelling of undeclared keys (a policy of :data:`.strings.ESCAPES`): printable ASCII never
#: as ``\\u0061``, as serializers write keys (``json.dumps`` escapes only what is not ASCII).
#: Every spelling of a declared name must be kept out of the undeclared keys beside it, and
#: ``\\uXXXX`` would take five states per character of those names: the undeclared keys beside
#: five names of 47 characters are 251 states in every spelling, 58 in this one.
KEY_ESCAPES = "plain-ascii"

#: Languages of definitions by (content key, options; see :meth:`Lowering.keep_twin`), kept
#: across compilations: schemas of one API share their definitions (Kubernetes' object metadata,
#: label selectors, resource lists recur in most of its schemas), and lowering them again is most
#: of such a schema's compilation.
SHARED_TWINS = ByteLRU("schema.lower.shared_twins", 32 << 20)
#: The calls of open values' pieces (:data:`.lower_lazy.OPEN_TARGETS`).
_OPEN_CALLS = frozenset(OPEN_TARGETS.values())

#: Key regions by (decoded names, exclusions), kept across compilations: the same objects'
#: undeclared keys recur from schema to schema (one function's arguments, a Kubernetes
#: object's metadata), and spelling them takes milliseconds.
KEY_REGIONS = ByteLRU("schema.lower.key_regions", 16 << 20)


def _dfa_bytes(d: DFA) -> int:
    """An estimate of the memory of ``d``'s table and classes: its rows as they are, unreachable
    or dead ones included (counting its live states alone walks the table; a composed table's
    rows are counted on its array, not made into lists)."""
    return 200 + 8 * _rows(d) * (2 + len(d.classes)) + 100 * len(d.classes)


def _types_only(a: ir.Assertions) -> bool:
    """Whether ``a`` says nothing but which types (``integer`` not among them)."""
    return a is not TOP and a.values is None and not any(
        (a.string, a.number, a.array, a.object, a.unsupported)) \
        and a.types is not None and ("integer" not in a.types or "number" in a.types)
