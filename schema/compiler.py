"""JSON Schema to the automaton of the exact JSON text a model may emit.

:func:`compile_json_schema` lowers a schema (a dict, JSON text or a pydantic model class) to a
:class:`~tokenfsm.automata.dfa.DFA` over code points whose language is a set of JSON texts, every
one of which validates against the schema (strict mode), written under a whitespace policy, with
optional substrings excluded from every string.

How it works:

1. :mod:`.resolve` turns the schema into the intermediate form (:mod:`.ir`): immutable nodes per
   JSON type and per combinator, read through the keyword table (:mod:`.keywords`), references
   resolved by URI (:mod:`.refs`: ``$id`` resources, anchors, the dynamic scope, documents the
   caller supplies; nothing is fetched), every draft normalised. The user's dicts are read once
   and never written.
2. :mod:`.algebra` rewrites each node into a disjunction of merged alternatives, so objects that
   combine several schemas get one object automaton with all their keys, and negations of object
   schemas are structural (a missing required key, a property whose value violates its schema);
   what cannot be merged is intersected or subtracted as text.
3. :mod:`.lower` turns each alternative into a :class:`~.jsontext.TypedLanguage`: per JSON type,
   the automaton of its texts (:mod:`.lower_scalars`, :mod:`.lower_containers`). Recursion is
   unrolled to ``max_depth`` or kept as automata that call each other (:mod:`.stack`, or, in
   any order, pieces of the lazy network: :mod:`.lower_lazy`).

Where it is not exact (always on the sound side, so an emitted text is valid):

* integers are written canonically (``1``, never ``1.00`` or ``1e0``), and also with one ``.0``
  (``1.0``) when the schema declares draft 6 or later (drafts 3 and 4 do not count ``1.0`` as an
  integer); numbers with a bound other than zero, or with ``multipleOf``, have no exponent form;
* keys are written in schema order (or any order with ``property_order="any"``) and in their
  shortest spelling; undeclared keys come after the declared ones, and never write a printable
  ASCII character as ``\\u0061`` (as serializers write them; every spelling of each declared
  name must be kept out of them, which would take five states per character);
* strings with ``format`` or ``pattern`` are written with one plain spelling per character
  (literal where JSON allows it, else the short escape, else ``\\uXXXX``): the format or pattern is
  the schema's contract, no model writes ``\\u0040`` in an e-mail address, and every spelling
  multiplies the automaton (a 1,870-state e-mail automaton becomes 13,367 states). Unconstrained
  strings, strings with only ``minLength``/``maxLength``, property names and ``const``/``enum``
  keep every spelling;
* ``format`` asserts (the test suite's ``format.json`` treats it as an annotation by default);
  punycode host names are not decoded (``idn-hostname`` holds the Unicode forms);
* complements (``not``, ``oneOf``, ``if``) are only taken on text languages that hold every
  spelling of their values (object texts, arrays of such, and minimal-spelling strings do not,
  unless rewritten structurally, see :mod:`.algebra`: objects always, arrays of ``items`` and
  bounds in strict mode); elsewhere strict mode raises
  :class:`UnsupportedSchema` and lenient mode takes the text complement with a
  :class:`SchemaWarning`; the same holds for intersections of texts when a rewriting would give
  too many alternatives;
* values are cut at ``max_depth`` levels of nesting where nothing bounds them (``{}``,
  ``{"type": "object"}``, undeclared keys' values) and where a recursion is cut, each with a
  warning naming the pointer;
* ``minLength``/``maxLength`` are dropped (with a warning) on strings under ``excludes``;
* ``uniqueItems`` is enforced only over finitely many arrays (short arrays of listed values);
* duplicate undeclared keys are not prevented: ``minProperties`` counts keys as written;
* ``$vocabulary`` is not read (a meta-schema without the validation vocabulary still
  validates), and documents are never fetched (a ``$ref`` to a meta-schema the caller does not
  supply is unsupported);
* every keyword is read in every draft (a draft-04 schema's ``const`` holds), except the
  identifier (``id`` in drafts 3 and 4, ``$id`` later), the siblings of ``$ref`` (ignored in
  drafts up to 7) and draft 7's content keywords (unsupported there), see :mod:`.keywords`;
* ``property_order="any"`` over many declared keys, with undeclared keys allowed, is exponential
  and may go over the budget (a :class:`~tokenfsm.automata.errors.BudgetExceeded`, never a
  narrower language).

Example
-------
>>> cs = compile_json_schema({"type": "object", "properties": {"n": {"type": "integer",
...                           "minimum": 1}}, "required": ["n"]}, whitespace=0)
>>> cs.accepts('{"n":3}'), cs.accepts('{"n":0}'), cs.accepts('{}')
(True, False, False)

The lowering follows the JSON-schema converters of xgrammar (``json_schema_converter``),
llguidance (``json`` module) and outlines' ``build_regex_from_schema``; ``allOf``/``not``/``oneOf``
as exact set operations are what an automaton (rather than a grammar) makes possible.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import replace
from typing import Any, Iterable, Mapping

from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import (DEFAULT_BUDGET, Budget, BudgetExceeded,
                                     NondeterministicCall, OpaqueSymbolError, OptionError,
                                     as_budget)
from tokenfsm.automata.gcpause import gc_paused

from .branches import root_branches
from .compose import LazyDFA
from .errors import SchemaError, SchemaWarning
from .lower import Lowering
from .lower_lazy import (COUNT_ATTEMPTS, MAX_PREFIXES, PAIR_PREFIXES, CountedPieces,
                         _OutOfPlaceholders)
from .refs import MAX_NESTING
from .resolve import resolve
from .stack import OPEN_SITES, UNROLL_STATES, _OpenValues, calls_pay, stack_route
from .tuning import DEFAULT_TUNING, FAST_PATHS, Tuning

__all__ = ["compile_json_schema", "compile_tuned", "CompiledSchema", "MAX_NESTING",
           "UNROLL_STATES", "FAST_PATHS"]


class CompiledSchema:
    """A schema lowered to an automaton.

    Attributes
    ----------
    dfa : DFA
        Accepts exactly the JSON texts the model may emit. For a schema that took the stack route
        (``recursive`` is set) it is built on first access by expanding the calls to
        ``max_depth``, which may raise :class:`~tokenfsm.automata.errors.BudgetExceeded`.
    warnings : list of str
        What the automaton does not enforce exactly (each also issued as a :class:`SchemaWarning`).
    schema : dict or bool
        The schema as compiled (pydantic models and JSON text decoded).
    recursive : RecursiveDFA or None
        For a recursive schema whose unrolled automaton would be large: one automaton per
        recursive definition (and per large non-recursive one), calling each
        other (:mod:`tokenfsm.automata.recursive`), walked with a stack bounded by ``max_depth``.
        Same language as ``dfa``.
    lazy : LazyBytes or None
        For a schema whose value is counted (:mod:`.lower_lazy`: a string of ``maxLength:
        10**9``, an array of ``minItems: 10**6``): the lazy network, counts held in the walk's
        configuration, which :meth:`~tokenfsm.masks.IndexCompiler.json_schema` indexes with rows
        on demand. Same language as ``dfa`` (which expands it, under the budget).
    branches : tuple of CompiledSchema
        For a schema whose root union passed the budget as one automaton (see
        :mod:`.branches`): its branches compiled apart, which the index walks side by side.
        ``dfa`` is their union, built under the budget; empty otherwise.
    """

    __slots__ = ("_dfa", "warnings", "schema", "recursive", "lazy", "_budget", "_flat",
                 "branches")

    def __init__(self, dfa: DFA | None, warnings: list | None = None, schema: Any = None,
                 recursive=None, budget: Budget | None = None, lazy=None, flat=None,
                 branches=()):
        if dfa is None and recursive is None and lazy is None and not branches:
            raise ValueError("a compiled schema needs a DFA, a recursive automaton, a network "
                             "or branches")
        self._dfa = dfa
        self.warnings = list(warnings or [])
        self.schema = schema
        self.recursive = recursive
        self.lazy = lazy
        self._budget = budget
        self._flat = flat      # () -> the flat route's DFA where it is the same language, or None
        self.branches = tuple(branches)

    @property
    def dfa(self) -> DFA:
        if isinstance(self._dfa, LazyDFA):
            return self._dfa.minimize()
        if self._dfa is None and self.branches:
            self._dfa = DFA.union_all([b.dfa for b in self.branches], self._budget).minimize()
        if self._dfa is None:
            if self.lazy is not None:
                from tokenfsm.automata.network import expand
                # the flat route builds it fastest; where it would not be the same language
                # (a length bound it drops under exclusions), the network is expanded
                flat = self._flat() if self._flat is not None else None
                self._dfa = flat if flat is not None else expand(self.lazy,
                                                                 self._budget).minimize()
            else:
                self._dfa = self.recursive.to_dfa(self._budget)
        return self._dfa

    def to_bytes(self):
        """The UTF-8 byte automaton of the texts, for an index (:func:`.masks.index.as_byte_dfa`
        reads it): a large object's or array's composition is lowered as it is, not minimised
        first (see :meth:`.compose.LazyDFA.to_bytes_as_composed`); otherwise
        ``dfa.to_bytes()``."""
        if isinstance(self._dfa, LazyDFA):
            return self._dfa.to_bytes_as_composed()
        return self.dfa.to_bytes()

    def accepts(self, text: str) -> bool:
        """Whether ``text`` is one of the JSON texts the automaton allows."""
        if self._dfa is None:
            if self.branches:
                return any(b.accepts(text) for b in self.branches)
            if self.lazy is not None:
                return self.lazy.accepts(text.encode("utf-8", "surrogatepass"))
            return self.recursive.accepts(text)
        return self._dfa.accepts(text)

    def __repr__(self) -> str:
        if self._dfa is None and self.branches:
            return (f"CompiledSchema(union of {len(self.branches)} branches, "
                    f"{len(self.warnings)} warnings)")
        if self._dfa is None and self.lazy is not None:
            return f"CompiledSchema(lazy, {self.lazy.num_states} states, {len(self.warnings)} warnings)"
        what = (f"recursive, {len(self.recursive.modules)} automata" if self._dfa is None
                else f"{self.dfa.num_states} states")
        return f"CompiledSchema({what}, {len(self.warnings)} warnings)"


def compile_json_schema(schema, whitespace: int | None = 2, excludes: Iterable[str] = (),
                        strict: bool = True, allow_extra_keys: bool = False,
                        property_order: str = "schema", max_depth: int = 3,
                        budget: Budget | None = None,
                        documents: Mapping[str, Any] | None = None,
                        recursion: str = "auto", style: str = "json"):
    """Lower a JSON Schema to the automaton of the JSON texts that satisfy it.

    Parameters
    ----------
    schema : dict, bool, str or pydantic model class
    whitespace : int or None
        Most JSON whitespace characters at each place between structural tokens (0: compact;
        None: unbounded, with a warning).
    excludes : iterable of str
        Substrings that may never appear in the written text of a string value or property name
        (strings with ``pattern`` or ``format`` are matched as they are).
    strict : bool
        Unsupported keywords raise :class:`UnsupportedSchema` (True) or warn (False).
    allow_extra_keys : bool
        Where ``additionalProperties`` is absent: False emits declared keys only, True also
        undeclared keys after them, with any JSON value.
    property_order : {"schema", "any"}
    max_depth : int
        How far recursive ``$ref`` is unrolled, and how deep unconstrained values nest.
    budget : Budget, optional
        Limits every automaton construction; its ``max_seconds`` also bounds the whole
        compilation (checked before each subschema).
    documents : mapping of str to dict or bool, optional
        Other schema documents by the absolute URI they are retrieved from, for ``$ref`` that
        leave the schema (``{"https://example.com/a.json": {...}}``); every other non-local
        ``$ref`` is unsupported. Nothing is fetched.
    recursion : {"auto", "unroll", "stack"}
        How a recursive ``$ref`` becomes an automaton, both exact to ``max_depth``: "unroll" copies
        each definition once per nesting level and context into one DFA (its size multiplies with
        the depth); "stack" keeps one automaton per recursive definition, and per large
        non-recursive one (:data:`~.tuning.SHARE_STATES`), which call each other
        (``CompiledSchema.recursive``, walked with a stack; ``UnsupportedSchema`` where a recursive
        reference meets an intersection or complement, which only unrolling makes exact).
        "auto" unrolls unless the unrolled automaton would pass :data:`UNROLL_STATES` states and
        the stack route applies; a schema without recursion takes the stack route when inlining
        its references would copy definitions :data:`~.stack.CALL_COPIES` times or more, or
        (in schema order) when it leaves values open in :data:`~.stack.OPEN_SITES` places or
        more: every open array and every open object is then one automaton
        (:data:`~.stack.ANY_TARGETS`). In any order, "auto" first makes each recursive
        definition a piece of the lazy network (``CompiledSchema.lazy``), called where a
        ``$ref`` names it, so that its objects are key sets beside the calls; the routes above
        take over where nothing else there is counted, or where a product, a complement or a
        merge into an ``allOf`` has to look inside a call.
    style : str
        ``"json"`` (the JSON text of the value), or a tool-call style of
        :data:`~.toolcalls.STYLES` in which the value, an arguments object, is written as that
        style's argument sequence (:func:`~.toolcalls.compile_arguments`; ``documents`` and
        ``recursion`` then do not apply).

    Returns
    -------
    CompiledSchema
        For ``style="json"``; a :class:`~.toolcalls.CompiledArguments` (``.dfa``, ``.accepts``,
        ``.warnings``) for a tool-call style.

    Raises
    ------
    SchemaError
        Invalid or unsatisfiable schema, with the JSON pointer.
    UnsupportedSchema
        In strict mode, for keywords the automaton cannot enforce.
    BudgetExceeded
        With ``pointer`` naming the subschema whose automaton grew too large.
    TypeError, ValueError
        An option of the wrong type or value.
    """
    if style != "json":
        from .toolcalls import compile_arguments
        if documents is not None or recursion != "auto":
            raise OptionError(f"documents and recursion do not apply to the {style!r} style")
        return compile_arguments(schema, style, excludes=excludes, whitespace=whitespace,
                                 strict=strict, allow_extra_keys=allow_extra_keys,
                                 property_order=property_order, max_depth=max_depth,
                                 budget=budget)
    options = dict(whitespace=whitespace, excludes=excludes, strict=strict,
                   allow_extra_keys=allow_extra_keys, property_order=property_order,
                   max_depth=max_depth, documents=documents, recursion=recursion)
    started = time.perf_counter()
    try:
        return compile_tuned(schema, DEFAULT_TUNING, **options, budget=budget)
    except BudgetExceeded:
        got = _by_branches(schema, options, budget, started)
        if got is None:
            raise
        return got


def compile_tuned(schema, tuning: Tuning, *, whitespace: int | None = 2,
                  excludes: Iterable[str] = (), strict: bool = True,
                  allow_extra_keys: bool = False, property_order: str = "schema",
                  max_depth: int = 3, budget: Budget | None = None,
                  documents: Mapping[str, Any] | None = None,
                  recursion: str = "auto") -> CompiledSchema:
    """:func:`compile_json_schema` with the fast paths of ``tuning`` (:mod:`.tuning`): the
    same language for every tuning; tests compare each fast path with its reference.

    Parameters
    ----------
    schema
    tuning : Tuning
    whitespace, excludes, strict, allow_extra_keys, property_order, max_depth, budget, documents, recursion
        As for :func:`compile_json_schema`.

    Returns
    -------
    CompiledSchema
    """
    if not isinstance(tuning, Tuning):
        raise TypeError(f"tuning must be a Tuning, got {type(tuning).__name__}")
    excludes = _check_options(whitespace, excludes, strict, allow_extra_keys, property_order,
                              max_depth, budget, documents, recursion)
    schema = _load(schema)
    options = dict(whitespace=whitespace, excludes=excludes, strict=strict,
                   allow_extra_keys=allow_extra_keys, property_order=property_order,
                   max_depth=max_depth, documents=documents, recursion=recursion)
    given_budget, budget = budget, as_budget(budget)  # one deadline for the whole compilation
    with gc_paused():  # (a with block adds no frame: the warnings' stack levels hold)
        schema_ir = resolve(schema, documents)

        def lowering(stack=None, deadline=None, counted=None) -> Lowering:
            return Lowering(schema_ir, whitespace, excludes, strict, allow_extra_keys,
                            property_order, max_depth, budget, tuning, deadline, stack, counted)

        lw = lowering()
        # (objects in any order are key sets only where counted pieces are: not on the stack
        # route, which a schema without recursion then does not take)
        recursive = recursion == "stack" or schema_ir.has_recursion
        share_defs = recursive or (recursion == "auto" and property_order == "schema"
                                   and calls_pay(schema_ir, tuning))
        share_any = property_order == "schema" and tuning.share_any_values
        calls = share_defs and not recursive and max_depth >= 1   # (calls_pay said so)
        # in any order, recursive definitions are pieces of the network, beside key sets
        call_refs = (schema_ir.has_recursion and recursion == "auto" and max_depth >= 1
                     and property_order == "any" and tuning.call_recursion
                     and tuning.lazy_states is not None)
        if recursion != "unroll" and max_depth >= 1 and (recursive or calls) and not call_refs:
            try:
                got = stack_route(lambda stack: lowering(stack, lw.deadline), schema_ir,
                                  recursion, max_depth, budget, tuning, share_any=share_any)
            except BudgetExceeded:
                if not calls:
                    raise
                got = None  # values too large to copy, which only the flat route counts
            if got is not None:
                return _taken(got, whitespace, schema, budget)
        # open values met in OPEN_SITES places or more: the stack route calls them (where the
        # lowering counts nothing: there, counted pieces only probe, and a count gives way)
        open_sites = (OPEN_SITES if share_any and not share_defs and recursion == "auto"
                      and max_depth >= 1 else None)
        inline, count = frozenset(), tuning.lazy_states is not None
        attempt, fresh, prefixes = 0, False, PAIR_PREFIXES
        while attempt < COUNT_ATTEMPTS:
            counted = None
            if count and attempt < COUNT_ATTEMPTS - 1:
                counted = CountedPieces(tuning.lazy_states, budget, inline, refs=call_refs,
                                        prefixes=prefixes)
            if attempt or fresh:
                lw = lowering(deadline=lw.deadline, counted=counted)
            lw.counted = counted
            lw.open_sites = open_sites
            lw.defer = call_refs         # (issued once the calls are taken)
            if whitespace is None:
                lw.warn("whitespace=None allows unbounded whitespace between tokens", "")
            try:
                lang = lw.lower(schema_ir.root)
                # nested objects and arrays: minimised once, when the minimal automaton is
                # asked for (an index lowers the composition as it is, see CompiledSchema)
                dfa = lang.to_dfa(budget)
                lazy = None
                if counted and counted.text(_reachable(dfa)).calls:
                    lazy = counted.build(dfa.minimize())
            except _OpenValues:
                open_sites, fresh = None, True

                def probing(stack) -> Lowering:
                    probe = (None if tuning.lazy_states is None
                             else CountedPieces(tuning.lazy_states, budget, probe=True))
                    return lowering(stack, lw.deadline, probe)

                try:
                    got = stack_route(probing, schema_ir, recursion, max_depth, budget, tuning,
                                      share_defs=False, share_any=True)
                except BudgetExceeded:
                    got = None
                if got is not None:
                    return _taken(got, whitespace, schema, budget)
                continue
            except OpaqueSymbolError as e:
                # a product or complement met counted values: lowered again, those inlined
                if counted is None:
                    raise
                inline |= {t for t in e.targets if t[:1] == ("counted",)}
                attempt += 1
                continue
            except _OutOfPlaceholders:
                prefixes, fresh = MAX_PREFIXES, True    # (the same attempt, more pairs)
                continue
            except BudgetExceeded:
                if not call_refs:
                    raise
                return _without_calls(schema, tuning, options, budget)
            except NondeterministicCall as e:
                # the walk could not tell a count's texts apart: those counted pieces inlined
                # (where the conflict names none, nothing counted)
                conflicting = counted.conflicting(e) - inline if counted is not None else None
                if conflicting:
                    inline |= conflicting
                else:
                    count = False
                attempt += 1
                continue
            break
        if call_refs:
            if counted is not None and counted.only_recursion():
                # nothing counted but the recursion: the stack route's automata, or the
                # unrolled one where small, index faster
                return _without_calls(schema, tuning, options, budget)
            for text in lw.warnings:   # (stack: here, compile_json_schema, the caller)
                warnings.warn(text, SchemaWarning, stacklevel=3)
        if dfa.is_empty() or (lazy is not None and lazy.start == 0):
            _unsatisfiable(lw)
        if lazy is not None:
            def flat() -> DFA | None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = compile_tuned(schema, replace(tuning, lazy_states=None),
                                        **options, budget=given_budget)
                return got.dfa if got.warnings == lw.warnings else None

            return CompiledSchema(None, lw.warnings, schema, budget=budget, lazy=lazy, flat=flat)
        return CompiledSchema(dfa, lw.warnings, schema)


def _by_branches(schema, options: dict, budget: Budget | None,
                 started: float) -> CompiledSchema | None:
    """``schema``, a root union that passed the budget as one automaton, compiled branch by
    branch (:func:`.branches.root_branches`) in what is left of its time, each branch's
    automaton or network walked beside the others' by the index; None where the root is no
    such union or a branch passes the budget too. A branch with no value is left out."""
    schema = _load(schema)
    branches = root_branches(schema)
    if branches is None:
        return None
    given = budget if budget is not None else DEFAULT_BUDGET
    compiled, said = [], {}
    for branch in branches:
        left = given
        if given.max_seconds is not None:     # (the time left when the branch starts)
            remaining = given.max_seconds - (time.perf_counter() - started)
            if remaining <= 0:
                return None
            left = replace(given, max_seconds=remaining, deadline=None)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = compile_tuned(branch, DEFAULT_TUNING, **options, budget=left)
        except BudgetExceeded:
            return None
        except SchemaError as e:
            if "unsatisfiable" not in e.msg:
                raise
            continue
        compiled.append(got)
        said.update(dict.fromkeys(got.warnings))
    if not compiled:
        raise SchemaError("schema is unsatisfiable: no JSON value satisfies it", "")
    for text in said:  # (stack: here, compile_json_schema, the caller)
        warnings.warn(text, SchemaWarning, stacklevel=3)
    if len(compiled) == 1:
        return compiled[0]
    return CompiledSchema(None, list(said), schema, budget=budget, branches=compiled)


def _reachable(dfa: DFA) -> DFA:
    """``dfa`` without the rows its start cannot reach (a composition's, see :mod:`.compose`)."""
    if not isinstance(dfa, LazyDFA):
        return dfa
    table, accepting = dfa.reachable()
    return DFA(dfa.classes, table.tolist(), accepting, 1 if dfa.start else 0)


def _without_calls(schema, tuning: Tuning, options: dict, budget: Budget) -> CompiledSchema:
    """``schema`` compiled with its recursive definitions not called as pieces of the network
    (:attr:`.tuning.Tuning.call_recursion`), by the deadline already running, its warnings
    issued once."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = compile_tuned(schema, replace(tuning, call_recursion=False), **options,
                            budget=budget)
    for text in got.warnings:  # (stack: here, compile_tuned, compile_json_schema, the caller)
        warnings.warn(text, SchemaWarning, stacklevel=4)
    return got


def _taken(got, whitespace, schema, budget) -> CompiledSchema:
    """The result of the stack route, its warnings issued now that it is taken (in the order
    the unrolled route gives them)."""
    lw, dfa, rd = got
    if dfa is not None and dfa.is_empty():
        _unsatisfiable(lw)
    if whitespace is None:
        lw.warnings.insert(0, "whitespace=None allows unbounded whitespace between tokens (at /)")
    for text in lw.warnings:  # (stack: here, compile_tuned, compile_json_schema, the caller)
        warnings.warn(text, SchemaWarning, stacklevel=4)
    return CompiledSchema(dfa, lw.warnings, schema, recursive=rd, budget=budget)


def _unsatisfiable(lw: Lowering):
    if lw.empty_why:
        why, where = lw.empty_why[0]
    elif lw.cut_anywhere():
        why, where = f"no JSON value nested at most max_depth={lw.max_depth} deep satisfies it", ""
    else:
        why, where = "no JSON value satisfies it", ""
    raise SchemaError(f"schema is unsatisfiable: {why}", where)


def _check_options(whitespace, excludes, strict, allow_extra_keys, property_order, max_depth,
                   budget, documents, recursion) -> tuple:
    """Raise ``TypeError`` (wrong type) or :class:`OptionError` (wrong value) for a bad option;
    the exclusions as a tuple."""
    def flag(name, v):
        if not isinstance(v, bool):
            raise TypeError(f"{name} must be True or False, got {v!r}")

    def count(name, v):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int, got {v!r}")
        if v < 0:
            raise OptionError(f"{name} must be non-negative, got {v!r}")

    def choice(name, v, options):
        if not isinstance(v, str):
            raise TypeError(f"{name} must be one of {', '.join(map(repr, options))}, got {v!r}")
        if v not in options:
            raise OptionError(f"{name} must be one of {', '.join(map(repr, options))}, got {v!r}")

    if whitespace is not None:
        count("whitespace", whitespace)
    count("max_depth", max_depth)
    flag("strict", strict)
    flag("allow_extra_keys", allow_extra_keys)
    choice("property_order", property_order, ("schema", "any"))
    choice("recursion", recursion, ("auto", "unroll", "stack"))
    if budget is not None and not isinstance(budget, Budget):
        raise TypeError(f"budget must be a Budget, got {type(budget).__name__}")
    if documents is not None and not isinstance(documents, Mapping):
        raise TypeError("documents must map absolute URIs to schemas")
    if isinstance(excludes, (str, bytes)) or not isinstance(excludes, Iterable):
        raise TypeError("excludes must be a collection of strings, not one string")
    excludes = tuple(excludes)
    for e in excludes:
        if not isinstance(e, str):
            raise TypeError(f"excludes must hold strings, got {e!r}")
        if not e:
            raise OptionError("excludes must be non-empty strings")
    return excludes


def _load(schema):
    if isinstance(schema, (str, bytes)):
        try:
            return json.loads(schema)
        except json.JSONDecodeError as e:
            raise SchemaError(f"schema is not valid JSON: {e}", "") from None
        except RecursionError:
            raise SchemaError("schema is not valid JSON: nested too deeply", "") from None
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    if isinstance(schema, (dict, bool)):
        return schema
    raise SchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", "")
