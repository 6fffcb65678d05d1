"""JSON Schema to the automaton of the exact JSON text a model may emit.

:func:`compile_json_schema` lowers a schema (a dict, JSON text or a pydantic model class) to a
:class:`~tokenfsm.automata.dfa.DFA` over code points whose language is a set of JSON texts, every
one of which validates against the schema (strict mode), written under a whitespace policy, with
optional substrings excluded from every string.

How it works:

0. ``$ref`` and ``$dynamicRef`` are resolved by URI (:mod:`.refs`: ``$id`` resources, anchors,
   the dynamic scope, documents the caller supplies; nothing is fetched).
1. ``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if/then/else`` and the dependency keywords
   are rewritten into a disjunction of merged keyword dictionaries (:mod:`.applicators`,
   :mod:`.rewrite`; arrays and objects are lowered in :mod:`.containers`), so objects
   that combine several schemas get one object automaton with all their keys, and negations of
   object schemas are structural (a missing required key, a property whose value violates its
   schema). Whatever cannot be merged is intersected as text. Each alternative records what its
   passing subschemas evaluate, which is what ``unevaluatedProperties`` and ``unevaluatedItems``
   constrain (not under ``not``/``oneOf``/``if`` conditions: unsupported there).
2. Each merged dictionary becomes a :class:`~.jsontext.TypedLanguage`: per JSON type, the automaton
   of its texts (numbers from :mod:`.numbers`, strings from :mod:`.strings` over decoded
   characters, objects and arrays from :mod:`.jsontext`).
3. Complements of text languages (``not`` on scalars and arrays, the non-matching items of
   ``contains``) are taken inside the language of every JSON value up to ``max_depth`` with the
   same spelling rules.

Where it is not exact (always on the sound side, so an emitted text is valid):

* integers are written canonically (``1``, never ``1.00`` or ``1e0``), and also with one ``.0``
  (``1.0``) when the schema declares draft 6 or later (drafts 3 and 4 do not count ``1.0`` as an
  integer); numbers with a bound other than zero, or with ``multipleOf``, have no exponent form;
* keys are written in schema order (or any order with ``property_order="any"``) and in their
  shortest spelling; undeclared keys come after the declared ones;
* strings with ``format`` or ``pattern`` are written with one plain spelling per character
  (``json_string(value, escapes="minimal")``: literal where JSON allows it, else the short escape,
  else ``\\uXXXX``): the format or pattern is the schema's contract, no model writes ``\\u0040`` in
  an e-mail address, and every spelling multiplies the automaton (a 1,870-state e-mail automaton
  becomes 13,367 states). Unconstrained strings, strings with only ``minLength``/``maxLength``,
  property names and ``const``/``enum`` keep every spelling;
* complements (``not``, ``oneOf``, ``if``) are only taken on text languages that hold every
  spelling of their values (object texts, arrays of such, and minimal-spelling strings do not,
  unless rewritten structurally, see :mod:`.rewrite`); elsewhere strict mode raises
  :class:`UnsupportedSchema` and lenient mode takes the text complement with a
  :class:`SchemaWarning`;
* ``minLength``/``maxLength`` are dropped (with a warning) on strings under ``excludes``, as are
  length bounds on nothing else; recursion is cut at ``max_depth`` with a warning (unrolled, or
  kept as automata that call each other and walked with a stack: ``recursion``, see
  :func:`_stack_route`);
* duplicate undeclared keys are not prevented: ``minProperties`` counts keys as written.

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

import itertools
import json
import time
import warnings
from typing import Any, Iterable, Mapping

from tokenfsm.automata.cache import ByteLRU, byte_lru_cache
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA, OpaqueSymbolError, opaque_symbols
from tokenfsm.automata.errors import DEFAULT_BUDGET, Budget, BudgetExceeded, RegexError, as_budget
from tokenfsm.automata.gcpause import gc_paused

from . import rewrite
from .applicators import (ANNOTATIONS, ARRAY_KEYWORDS, KNOWN_UNSUPPORTED,
                          OBJECT_KEYWORDS, SUPPORTED_FORMATS, Alt, Applicators, _int, _is_count,
                          _ptr, _refs_in)
from .containers import Containers
from .errors import SchemaError, SchemaWarning, UnsupportedSchema
from .jsontext import (CANONICAL_NUMBER, TYPES, Member, TypedLanguage, array_dfa, key_text,
                       object_dfa, whitespace_dfa)
from .numbers import number_schema, number_range
from .refs import Registry, shown
from .twins import ContentKeys
from .strings import json_string, string_value

__all__ = ["compile_json_schema", "CompiledSchema"]



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
    """

    __slots__ = ("_dfa", "warnings", "schema", "recursive", "_budget")

    def __init__(self, dfa: DFA | None, warnings: list | None = None, schema: Any = None,
                 recursive=None, budget: Budget | None = None):
        if dfa is None and recursive is None:
            raise ValueError("a compiled schema needs a DFA or a recursive automaton")
        self._dfa = dfa
        self.warnings = list(warnings or [])
        self.schema = schema
        self.recursive = recursive
        self._budget = budget

    @property
    def dfa(self) -> DFA:
        if self._dfa is None:
            self._dfa = self.recursive.to_dfa(self._budget)
        return self._dfa

    def accepts(self, text: str) -> bool:
        """Whether ``text`` is one of the JSON texts the automaton allows."""
        if self._dfa is None:
            return self.recursive.accepts(text)
        return self._dfa.accepts(text)

    def __repr__(self) -> str:
        what = (f"recursive, {len(self.recursive.modules)} automata" if self._dfa is None
                else f"{self._dfa.num_states} states")
        return f"CompiledSchema({what}, {len(self.warnings)} warnings)"


def compile_json_schema(schema, whitespace: int | None = 2, excludes: Iterable[str] = (),
                        strict: bool = True, allow_extra_keys: bool = False,
                        property_order: str = "schema", max_depth: int = 3,
                        budget: Budget | None = None,
                        documents: Mapping[str, Any] | None = None,
                        recursion: str = "auto") -> CompiledSchema:
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
        non-recursive one (:data:`SHARE_STATES`), which call each other
        (``CompiledSchema.recursive``, walked with a stack; ``UnsupportedSchema`` where a recursive
        reference meets an intersection or complement, which only unrolling makes exact).
        "auto" unrolls unless the unrolled automaton would pass :data:`UNROLL_STATES` states and
        the stack route applies.

    Returns
    -------
    CompiledSchema

    Raises
    ------
    SchemaError
        Invalid or unsatisfiable schema, with the JSON pointer.
    UnsupportedSchema
        In strict mode, for keywords the automaton cannot enforce.
    BudgetExceeded
        With ``pointer`` naming the subschema whose automaton grew too large.
    """
    schema = _load(schema)
    if whitespace is not None and (isinstance(whitespace, bool) or not isinstance(whitespace, int)
                                   or whitespace < 0):
        raise ValueError(f"whitespace must be a non-negative int or None, got {whitespace!r}")
    if property_order not in ("schema", "any"):
        raise ValueError(f"property_order must be 'schema' or 'any', got {property_order!r}")
    if isinstance(excludes, str):
        raise TypeError("excludes must be a collection of strings, not one string")
    excludes = tuple(excludes)
    if any(not isinstance(e, str) or not e for e in excludes):
        raise ValueError("excludes must be non-empty strings")
    if documents is not None and not isinstance(documents, Mapping):
        raise TypeError("documents must map absolute URIs to schemas")
    if recursion not in ("auto", "unroll", "stack"):
        raise ValueError(f"recursion must be 'auto', 'unroll' or 'stack', got {recursion!r}")
    args = (schema, whitespace, excludes, strict, allow_extra_keys, property_order, max_depth,
            as_budget(budget), documents)
    with gc_paused():  # (a with block adds no frame: the warnings' stack levels hold)
        c = _Compiler(*args)
        if recursion != "unroll" and max_depth >= 1 and (recursion == "stack" or c.has_recursion()):
            out = _stack_route(args, recursion, c.deadline)
            if out is not None:
                return out
        if whitespace is None:
            c.warn("whitespace=None allows unbounded whitespace between tokens", "")
        lang = c.compile(c.root, "")
        dfa = lang.to_dfa(c.budget).minimize()  # nested objects and arrays are minimised once
        if dfa.is_empty():
            _unsatisfiable(c)
        return CompiledSchema(dfa, c.warnings, schema)


#: ``recursion="auto"`` unrolls a recursive schema when the unrolled automaton (before
#: minimisation: every copy of every definition the unrolling makes) has at most this many states:
#: about a second of compilation, for an index with every mask row precomputed. (Kubernetes'
#: ``JSONSchemaProps`` at depth 3 would be 4.9 million: 51 s unrolled, 1 s on the stack route.)
UNROLL_STATES = 100_000

#: On the stack route, a definition that is not recursive but whose automaton has at least this
#: many states is compiled once and called (a module of its own) wherever a ``$ref`` names it,
#: instead of being copied into each place: a schema that refers to hundreds of large definitions
#: (Kubernetes' API) stays the sum of its definitions rather than their product with the places.
SHARE_STATES = 64


#: A schema with at least this many distinct ``$ref`` writes its calls as pairs of placeholder
#: characters (784 modules) rather than single ones (28).
PAIR_REFS = 28


def _call_words(pairs: bool) -> list[str]:
    """The placeholder texts of the calls: one control character each, or, for more modules than
    there are such characters, a pair of them."""
    from tokenfsm.automata.recursive import HOLE_PAIRS, HOLES
    return list(HOLE_PAIRS) if pairs else [chr(h) for h in HOLES]


def _states(lang: TypedLanguage) -> int:
    """Table rows of a typed language's parts (a lazy table's rows are not built to count)."""
    from .compose import _size
    return sum(_size(d) for d in lang.parts.values())


#: Characters that may share a class with a call placeholder in a JSON text automaton: a digit is
#: the only one-character JSON value, so it can lead where a call does.
_DIGITS = CharSet.range(0x30, 0x39)


class _StackRouteConflict(Exception):
    """The stack route does not apply (``what`` at ``ptr``): unroll instead."""

    def __init__(self, what: str, ptr: str):
        super().__init__(what, ptr)
        self.what, self.ptr = what, ptr


#: Attempts of the stack route with shared definitions, each copying in place the shared ones a
#: product or complement met in the one before; the last attempt shares none.
SHARE_ATTEMPTS = 4


def _stack_route(args, recursion: str, deadline) -> CompiledSchema | None:
    """Compile with recursive definitions as automata that call each other; None when "auto"
    should unroll instead (small result, or the route does not apply).

    Large non-recursive definitions are shared the same way (see :data:`SHARE_STATES`). A product
    or complement that meets a shared definition's call is exact once that definition is copied
    in place: the compilation is tried again with it copied (at most :data:`SHARE_ATTEMPTS`
    times, the last one sharing nothing)."""
    from tokenfsm.automata.recursive import NondeterministicCall

    schema = args[0]
    # pairs of placeholders when the schema names more targets than there are single ones
    pairs = len(set(_refs_in(schema if isinstance(schema, dict) else {}))) >= PAIR_REFS
    inline: set = set()
    for attempt in range(SHARE_ATTEMPTS):
        share = attempt < SHARE_ATTEMPTS - 1
        s = _Compiler(*args, stack=True, deadline=deadline, share=share,
                      inline=frozenset(inline), pairs=pairs)
        try:
            return _stack_attempt(s, args, recursion)
        except _SharedConflict as e:
            inline |= e.targets
        except (_StackRouteConflict, NondeterministicCall, UnsupportedSchema, SchemaError) as e:
            if recursion == "auto":
                return None  # unrolling decides (and reports what is really wrong)
            if isinstance(e, _StackRouteConflict):
                raise UnsupportedSchema(f"recursion='stack': {e.what}; only unrolling is exact "
                                        "here", e.ptr, "$ref") from None
            if isinstance(e, NondeterministicCall):  # module k > 0 is the k-th target
                where = s.module_order[e.module - 1] if e.module else ""
                raise UnsupportedSchema(f"recursion='stack': {e}", where or "/", "$ref") from None
            raise
    raise AssertionError("the last attempt shares nothing")  # pragma: no cover


class _SharedConflict(Exception):
    """A product or complement met calls of shared definitions (``targets``): copy them."""

    def __init__(self, targets: set):
        super().__init__(sorted(targets))
        self.targets = targets


def _stack_attempt(s: "_Compiler", args, recursion: str) -> CompiledSchema | None:
    """One compilation on the stack route (see :func:`_stack_route`)."""
    from tokenfsm.automata.recursive import HOLE_SET, NondeterministicCall, RecursiveDFA
    schema, whitespace, budget, max_depth = args[0], args[1], args[7], args[6]
    with opaque_symbols(HOLE_SET, _DIGITS):
        try:
            lang = s.compile(s.root, "")
            s.finish_modules()
        except OpaqueSymbolError as e:
            if s.shared:  # copy the shared definitions it met (all of them, if it names none)
                raise _SharedConflict((s.conflict_targets(e) & s.shared) or set(s.shared)) from None
            raise _StackRouteConflict(str(e), s.where or "/") from None
        if "" in s.module_of:  # the root itself recurs: the top calls it
            s.bodies[""] = lang
            lang = s.call("")
        top = lang.to_dfa(budget).minimize()
        if not s.module_order:
            # no $ref recurred (the unrolled route walks the same way and cuts nothing)
            if top.is_empty():
                _unsatisfiable(s)
            return _taken(s, top, whitespace, schema)
        modules = [top] + [s.bodies[t].to_dfa(budget).minimize() for t in s.module_order]
    calls = {s.words[i]: i + 1 for i in range(len(s.module_order))}
    rd = RecursiveDFA(modules, calls, 0, max_depth, budget)
    if recursion == "auto" and rd.expanded_states(UNROLL_STATES) <= UNROLL_STATES:
        return None
    try:
        pushdown = rd.to_bytes()  # checks that the stack walk is deterministic
    except BudgetExceeded as e:  # the depth variants of the definitions
        raise (e if e.pointer else e.with_pointer("/")) from None
    except NondeterministicCall as e:
        if s.shared:
            # a call of a shared definition may begin where its caller goes on: copied in
            # place, the caller's automaton decides (the shared ones that module calls)
            called = {t for t in s.shared
                      if set(map(ord, s.words[s.module_of[t] - 1])) <= _reads(modules[e.module])}
            raise _SharedConflict(called or set(s.shared)) from None
        raise
    if pushdown.start == 0:
        _unsatisfiable(s)
    return _taken(s, None, whitespace, schema, rd, budget)


def _reads(d: DFA) -> set:
    """The placeholder characters an automaton moves on."""
    from tokenfsm.automata.recursive import HOLE_SET
    live = {c for row in d.delta for c, t in enumerate(row) if t}
    return {x for c in live for lo, hi in (d.classes[c] & HOLE_SET).ranges
            for x in range(lo, hi + 1)}


def _unsatisfiable(c: "_Compiler"):
    why, where = c.empty_why[0] if c.empty_why else ("no JSON value satisfies it", "")
    raise SchemaError(f"schema is unsatisfiable: {why}", where)


def _taken(s, dfa, whitespace, schema, rd=None, budget=None) -> CompiledSchema:
    """The result of the stack route, its warnings issued now that it is taken (in the order
    the unrolled route gives them)."""
    if whitespace is None:
        s.warnings.insert(0, "whitespace=None allows unbounded whitespace between tokens (at /)")
    for text in s.warnings:  # (stack: here, the attempt, the route, compile_json_schema, its
        warnings.warn(text, SchemaWarning, stacklevel=6)  # wrapper, the caller)
    return CompiledSchema(dfa, s.warnings, schema, recursive=rd, budget=budget)


#: String texts kept across compilations (a ``format`` or ``pattern`` automaton costs milliseconds
#: to build and recurs from schema to schema, like the any-value automaton below): at most
#: 32 MiB of them, each of at most ``_STRING_CACHE_STATES`` states.
_STRING_CACHE = ByteLRU("schema.compiler.string_text", 32 << 20)
_STRING_CACHE_STATES = 20_000


def string_text(lo: int, hi: int | None, pattern: str | None, fmt: str | None, excludes: tuple,
                budget: Budget) -> DFA:
    """The JSON texts of the strings of decoded length ``lo..hi`` matching ``pattern`` and
    ``fmt``, without the ``excludes`` substrings: one plain spelling per character under a
    ``pattern`` or ``format``, every spelling otherwise (cached across compilations; a kept
    automaton larger than ``budget.max_states`` is built again, under that budget)."""
    key = (lo, hi, pattern, fmt, excludes)
    hit = _STRING_CACHE.get(key)
    if hit is not None and hit.num_states <= budget.max_states:
        return hit
    value = string_value(lo, hi, pattern, fmt, budget=budget)
    minimal = pattern is not None or fmt is not None
    text = json_string(value, excludes=excludes, escapes="minimal" if minimal else "all",
                       budget=budget)
    if text.num_states <= _STRING_CACHE_STATES:
        _STRING_CACHE.put(key, text)
    return text


@byte_lru_cache("schema.compiler.any_scalar", 8 << 20)
def any_scalar(excludes: tuple, budget: Budget) -> dict:
    """The texts of every null, boolean, number and string (strings under the exclusions)."""
    return {"null": DFA.literal("null"), "boolean": DFA.literal("true") | DFA.literal("false"),
            "number": number_schema(),
            "string": json_string(DFA.universal(), excludes=excludes, budget=budget)}


@byte_lru_cache("schema.compiler.any_value", 32 << 20)
def any_value(whitespace: int | None, excludes: tuple, depth: int, budget: Budget) -> TypedLanguage:
    """Every JSON value nested at most ``depth`` levels deep, under a whitespace policy and string
    exclusions: the universe in which ``not`` takes complements (cached across compilations)."""
    ws = whitespace_dfa(whitespace)
    scalars = any_scalar(excludes, budget)
    strings = scalars["string"]
    value = DFA.union_all(list(scalars.values()), budget)
    member_key = DFA.concat_all([strings, ws, DFA.literal(":"), ws], budget)
    arr = obj = None
    for _ in range(depth):
        arr = array_dfa(lambda i, v=value: v, 0, ws, budget=budget)
        obj = object_dfa([], member_key + value, ws, budget=budget)
        value = DFA.union_all([value, arr, obj], budget)
    parts = dict(scalars)
    if arr is not None:
        parts["array"], parts["object"] = arr, obj
    return TypedLanguage.of(parts)


def _finite_values(schema) -> list | None:
    """The values of an item schema that lists them (``const``, ``enum``, ``type`` boolean or
    null, nothing else), or None."""
    if not isinstance(schema, dict) or set(schema) - ANNOTATIONS - {"const", "enum", "type"}:
        return None
    t = schema.get("type")
    if "const" in schema or "enum" in schema:
        if t is not None:
            return None
        vals = [schema["const"]] if "const" in schema else schema["enum"]
        return list(vals) if isinstance(vals, list) and len(vals) <= 8 else None
    return {"boolean": [True, False], "null": [None]}.get(t) if isinstance(t, str) else None


def _load(schema):
    if isinstance(schema, (str, bytes)):
        try:
            return json.loads(schema)
        except json.JSONDecodeError as e:
            raise SchemaError(f"schema is not valid JSON: {e}", "") from None
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    if isinstance(schema, (dict, bool)):
        return schema
    raise SchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", "")


class _Compiler(Applicators, Containers):
    def __init__(self, root, whitespace, excludes, strict, allow_extra_keys, property_order,
                 max_depth, budget, documents=None, stack: bool = False, deadline=None,
                 share: bool = False, inline: frozenset = frozenset(), pairs: bool = False):
        self.excludes = excludes
        self.strict = strict
        self.allow_extra_keys = allow_extra_keys
        self.any_order = property_order == "any"
        self.max_depth = max_depth
        self.budget = budget
        self.warnings: list[str] = []
        self.ws = whitespace_dfa(whitespace)
        self.ws_n = whitespace
        self.registry = Registry(root, documents)
        self.root = self.registry.root
        self.old_draft = self.registry.old_draft
        self.ref_stack: dict[str, int] = {"": 1}
        self.inlined: list[str] = []  # $ref targets dnf expanded in place (see _compile)
        self.cuts = 0
        self.cache: dict = {}
        self._any: TypedLanguage | None = None
        self._strings: dict = {}
        self._values: dict = {}  # const / enum lists (as JSON text) -> their TypedLanguage
        self._minimal: DFA | None = None
        # budget.max_seconds also bounds the whole compilation, checked per subschema
        self.deadline = None if budget.max_seconds is None else time.perf_counter() + budget.max_seconds
        if deadline is not None:
            self.deadline = deadline  # one time budget for every route a compilation tries
        # the stack route (see _stack_route): recursive $ref targets become automata of their own
        self.stack = stack
        self.entered: dict[str, Any] = {"": self.root}  # $ref targets being compiled, in order
        self.module_of: dict[str, int] = {}   # recursive target -> module number (1, 2, ...)
        self.module_order: list[str] = []
        self.module_node: dict[str, Any] = {}
        self.bodies: dict[str, TypedLanguage] = {}
        # shared definitions (stack route, ``share``): a non-recursive target whose automaton has
        # at least SHARE_STATES states is a module too, called wherever it is referred to, rather
        # than copied into every place; ``inline`` names targets always copied (they met a
        # product or complement); with ``pairs`` calls are two placeholder characters
        self.share = share
        self.inline = inline
        self.shared: set[str] = set()
        self.words = _call_words(pairs)
        # targets written alike compile once (see .twins): content key -> (target, language)
        self.keys = ContentKeys(self.registry)
        self.twins: dict[str, tuple] = {}
        self.where = ""  # innermost subschema being compiled (names a route conflict)
        self.empty_why: list = []  # (why, pointer) of alternatives found empty

    # ------------------------------------------------------------------ reporting
    def warn(self, msg: str, ptr: str) -> None:
        text = f"{msg} (at {ptr or '/'})"
        if text not in self.warnings:
            self.warnings.append(text)
            if not self.stack:  # the stack route issues its warnings once it is taken
                warnings.warn(text, SchemaWarning, stacklevel=4)

    def unsupported(self, msg: str, ptr: str, keyword: str | None = None) -> None:
        if self.strict:
            raise UnsupportedSchema(msg, ptr, keyword)
        self.warn(msg + "; not enforced", ptr)

    # ------------------------------------------------------------------ references
    def resolve(self, ref, ptr, scope=None):
        """The schema an (absolute, see :mod:`.refs`) ``$ref`` names and its location; (True,
        None) for a document that is not known (unsupported: it raises in strict mode). With
        ``scope`` (the dynamic scope the reference is followed in), the target comes with its
        ``$dynamicRef`` resolved in that scope."""
        node, target = self.registry.resolve(ref, ptr)
        if target is None:
            self.unsupported(f"$ref {shown(ref)!r} is not local", ptr, "$ref")
            return True, None
        if scope is not None:
            node = self.registry.specialize(node, ref, tuple(scope))
        return node, target

    # ------------------------------------------------------------------ entry
    def compile(self, schema, ptr: str) -> TypedLanguage:
        """The typed text language of ``schema`` (found at ``ptr``)."""
        key = (id(schema), ptr)
        hit = self.cache.get(key)
        if hit is not None:
            return hit[1]
        if self.deadline is not None and time.perf_counter() > self.deadline:
            spent = time.perf_counter() - self.deadline + self.budget.max_seconds
            raise BudgetExceeded(self.budget.max_seconds, spent, "schema", kind="seconds",
                                 pointer=ptr or "/")
        cuts = self.cuts
        try:
            lang = self._compile(schema, ptr)
        except OpaqueSymbolError:
            if not self.where:
                self.where = ptr or "/"
            raise
        except BudgetExceeded as e:
            if e.pointer is None:
                raise e.with_pointer(ptr or "/") from None
            raise
        if self.cuts == cuts:
            self.cache[key] = (schema, lang)
        return lang

    def _compile(self, schema, ptr) -> TypedLanguage:
        if schema is True:
            return self.any()
        if schema is False:
            return TypedLanguage.nothing()
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema must be an object or a boolean, got {json.dumps(schema)[:60]}", ptr)
        if set(schema) - ANNOTATIONS == {"$ref"} or ("$ref" in schema and self.old_draft):
            return self.compile_ref(schema["$ref"], ptr, schema.get("x-scope"))
        mark = len(self.inlined)
        try:
            alts = self.dnf(schema, ptr, frozenset())
        finally:
            # $ref targets that dnf expanded in place count as entered while the alternatives
            # (which hold their subschemas) are compiled: recursion through them is cut as well
            targets = self.inlined[mark:]
            del self.inlined[mark:]
        for t in targets:
            self.ref_stack[t] = self.ref_stack.get(t, 0) + 1
        try:
            if alts is None:
                return self.text_fallback(schema, ptr)
            out = TypedLanguage.nothing()
            for alt in alts:
                out = out.union(self.compile_alt(alt), self.budget)
            return out
        finally:
            for t in targets:
                self.ref_stack[t] -= 1

    def compile_ref(self, ref, ptr, scope=None) -> TypedLanguage:
        node, target = self.resolve(ref, _ptr(ptr, "$ref"), scope)
        if node is True and target is None:
            return self.any()
        if self.stack:
            return self.stack_ref(ref, node, target, ptr)
        n = self.ref_stack.get(target, 0)
        if n >= self.max_depth:
            self.cuts += 1
            self.warn(f"recursive $ref {shown(ref)!r} cut at depth {self.max_depth}", ptr)
            return TypedLanguage.nothing()
        key, twin = self.twin(target, node)
        if twin is not None:
            return twin[1]
        mark = (len(self.warnings), self.cuts)
        self.ref_stack[target] = n + 1
        try:
            lang = self.compile(node, target)
        finally:
            self.ref_stack[target] = n
        self.keep_twin(key, mark, target, lang)
        return lang

    # ------------------------------------------------------------------ the stack route
    def stack_ref(self, ref, node, target: str, ptr: str) -> TypedLanguage:
        """A ``$ref`` on the stack route: a target being compiled already (or found recursive
        before) is *called* (a placeholder the walk replaces by that target's automaton, at most
        ``max_depth`` frames deep); any other target is compiled in place."""
        if target in self.entered:
            # recursion: the target and every target entered since are on a cycle
            names = list(self.entered)
            for t in names[names.index(target):]:
                self.module(t, self.entered[t])
        if target in self.module_of:
            if target in self.entered:
                self.warn(f"recursive $ref {shown(ref)!r} cut at depth {self.max_depth}", ptr)
            return self.call(target)
        key, twin = self.twin(target, node)
        if twin is not None:
            return self.call(twin[0]) if twin[0] in self.module_of else twin[1]
        mark = (len(self.warnings), self.cuts)
        lang = self.compile_entered(node, target)
        if target in self.module_of:  # it recurred while being compiled: lang is its body
            self.bodies.setdefault(target, lang)
            return self.call(target)
        if self.share and target not in self.inline and _states(lang) >= SHARE_STATES \
                and len(self.module_order) < len(self.words):
            # a large definition: one automaton, called from every place that refers to it
            self.module(target, node)
            self.shared.add(target)
            self.bodies[target] = lang
        self.keep_twin(key, mark, target, lang)
        return self.call(target) if target in self.shared else lang

    # ------------------------------------------------------------------ targets written alike
    def twin(self, target: str, node) -> tuple:
        """``(key, twin)``: the content key of a ``$ref`` target (see :mod:`.twins`) and, when a
        target with the same key compiled before, that ``(target, language)``."""
        key = self.keys.key(target, node)
        return key, (None if key is None else self.twins.get(key))

    def keep_twin(self, key, mark: tuple, target: str, lang: TypedLanguage) -> None:
        """Keep a target's language for the targets written alike, unless its compilation warned
        or cut (a twin's warnings would name its own places)."""
        if key is not None and (len(self.warnings), self.cuts) == mark:
            self.twins.setdefault(key, (target, lang))

    def compile_entered(self, node, target: str) -> TypedLanguage:
        """Compile a ``$ref`` target with it marked as entered (a ``$ref`` back to it recurs)."""
        self.entered[target] = node
        self.ref_stack[target] = self.ref_stack.get(target, 0) + 1
        try:
            return self.compile(node, target)
        finally:
            del self.entered[target]
            self.ref_stack[target] -= 1

    def module(self, target: str, node) -> int:
        """The module number of a recursive or shared target (numbered on first sight)."""
        k = self.module_of.get(target)
        if k is None:
            if len(self.module_order) >= len(self.words):
                raise OpaqueSymbolError(f"more than {len(self.words)} definitions as automata")
            self.module_order.append(target)
            k = self.module_of[target] = len(self.module_order)
            self.module_node[target] = node
        return k

    def call(self, target: str) -> TypedLanguage:
        """The text of one call of a target's automaton: its placeholder, standing for a value
        of any type (a recursive target, whose body is not known yet) or of the types of its
        body (a shared one)."""
        hole = DFA.literal(self.words[self.module_of[target] - 1])
        if target in self.shared:
            types = [t for t in TYPES if t in self.bodies[target].parts]
            return TypedLanguage({t: hole for t in types},
                                 frozenset(t for t in TYPES if t not in types),
                                 frozenset([target]))
        return TypedLanguage({t: hole for t in TYPES}, frozenset(), frozenset([target]))

    def conflict_targets(self, e: OpaqueSymbolError) -> set:
        """The targets whose calls an :class:`OpaqueSymbolError` met (every call of a
        placeholder character it names, when it names characters rather than targets)."""
        got = set(e.targets)
        if e.symbols:
            for t, k in self.module_of.items():
                if set(map(ord, self.words[k - 1])) & e.symbols:
                    got.add(t)
        return got

    def finish_modules(self) -> None:
        """Compile the body of every recursive target that has none yet (one reached only
        through ``$ref`` merged in place with its siblings)."""
        i = 0
        while i < len(self.module_order):
            t = self.module_order[i]
            if t not in self.bodies:
                self.bodies[t] = self.compile_entered(self.module_node[t], t)
            i += 1

    def has_recursion(self) -> bool:
        """Whether some ``$ref`` of the schema names a location that reaches itself."""
        for ref in set(_refs_in(self.root)):
            try:
                node, target = self.registry.resolve(ref, "")
            except SchemaError:
                continue
            if target is not None and self.recursive(target, node):
                return True
        return False

    # ------------------------------------------------------------------ one merged alternative
    def compile_alt(self, alt: Alt) -> TypedLanguage:
        kw = alt.keywords
        if "x-eval" in kw or "x-evali" in kw:  # bookkeeping for unevaluated* only
            kw = {k: v for k, v in kw.items() if k not in ("x-eval", "x-evali")}
        if alt.residual and alt.residual[0][0] == "schema" and not set(kw) - ANNOTATIONS:
            # nothing but that subschema (anyOf: [{$ref}, ...]): its language as it is, not
            # intersected with every JSON value (which nests only max_depth deep, and on the
            # stack route cannot meet a call)
            (_, sub, ptr), rest = alt.residual[0], alt.residual[1:]
            lang = self.compile(sub, ptr)
        else:
            lang, rest = self.compile_keywords(kw, alt.ptr), alt.residual
        for kind, sub, ptr in rest:
            if lang.is_empty():
                break
            if isinstance(sub, dict) and "$ref" not in sub and {"object", "array"} - set(lang.parts):
                # only the types still in lang matter: objects and arrays are costly to build
                # (a $ref stays as it is: it was kept as text to be followed by compile_ref)
                sub = {"allOf": [sub], "type": [t for t in TYPES if t in lang.parts]}
            if kind == "schema":
                lang = lang.intersect(self.compile(sub, ptr), self.budget)
            else:
                lang = self.subtract(lang, self.compile(sub, ptr), ptr)
        return lang

    def subtract(self, lang: TypedLanguage, other: TypedLanguage, ptr: str) -> TypedLanguage:
        """Texts of ``lang`` whose values ``other`` rejects: ``lang ∩ complement(other)``, computed
        without building the complement."""
        if lang.calls or other.calls:
            raise OpaqueSymbolError("a complement of a call of another automaton",
                                    targets=lang.calls | other.calls)
        parts = {}
        complete = set(lang.complete & other.complete)
        for t, d in lang.parts.items():
            if t not in other.parts:
                parts[t] = d
                continue
            if t == "string" and t not in other.complete and not self.excludes:
                # every string language holds the minimal spelling of each of its values
                parts[t] = d.intersect(self.minimal_strings(), self.budget).difference(
                    other.parts[t], self.budget)
                complete.discard(t)
                continue
            if t not in other.complete:
                self._incomplete_complement(t, ptr)
            if t == "number":
                d = d.intersect(CANONICAL_NUMBER, self.budget)
            elif t in ("array", "object") or (t == "string" and self.excludes):
                d = d.intersect(self.canonical().parts[t], self.budget)
            parts[t] = d.difference(other.parts[t], self.budget)
        return TypedLanguage.of(parts, complete)

    def _incomplete_complement(self, t: str, ptr: str) -> None:
        """A complement of ``t`` texts that do not hold every spelling of their values would
        accept spellings of rejected values: unsupported (strict) or a warning (lenient)."""
        if self.strict:
            raise UnsupportedSchema(f"complement of {t} texts that do not hold every spelling of "
                                    "their values", ptr, "not")
        self.warn(f"complement of {t} texts is taken on spellings, not values", ptr)

    def complement(self, lang: TypedLanguage, ptr: str) -> TypedLanguage:
        """JSON values (up to the depth limit) whose texts ``lang`` does not accept."""
        if lang.calls:
            raise OpaqueSymbolError("a complement of a call of another automaton",
                                    targets=lang.calls)
        canon = self.canonical()
        parts = {}
        complete = set(TYPES)
        for t in TYPES:
            if t not in lang.parts:
                parts[t] = canon.parts[t]
                continue
            if t == "string" and t not in lang.complete and not self.excludes:
                parts[t] = self.minimal_strings().difference(lang.parts[t], self.budget)
                complete.discard(t)
                continue
            if t not in lang.complete:
                self._incomplete_complement(t, ptr)
                complete.discard(t)
            parts[t] = canon.parts[t].difference(lang.parts[t], self.budget)
        return TypedLanguage.of(parts, complete)

    def compile_keywords(self, d: dict, ptr: str) -> TypedLanguage:
        if set(d) <= ANNOTATIONS | {"type"}:
            types = rewrite.schema_types(d)
            if not types:
                return TypedLanguage.nothing()
            wanted = [t for t in TYPES if t in types or (t == "number" and "integer" in types)]
            if set(wanted) <= {"null", "boolean", "number", "string"}:
                # scalars only: no need to build the nested any-value automaton
                scalars = any_scalar(self.excludes, self.budget)
                lang = TypedLanguage.of({t: scalars[t] for t in wanted})
            else:
                lang = self.any().only(wanted)
            if "integer" in types and "number" not in types:
                parts = dict(lang.parts)
                parts["number"] = self.number_part({}, True, ptr)
                lang = TypedLanguage.of(parts, lang.complete)
            return lang
        for k in d:
            if k in KNOWN_UNSUPPORTED:
                if k == "uniqueItems" and d[k] is False:
                    continue
                if k == "uniqueItems" and d[k] is True and self.unique_arrays(d) is not None:
                    continue  # finitely many arrays: enumerated below
                self.unsupported(f"{k} is not regular", _ptr(ptr, k), k)
        types = rewrite.schema_types(d)
        if d.get("type") == []:
            return TypedLanguage.nothing()
        enum = None
        if "const" in d:
            enum = [d["const"]]
        elif "enum" in d:
            enum = d["enum"]
            if not isinstance(enum, list):
                raise SchemaError("enum must be an array", _ptr(ptr, "enum"))
        parts = {}
        complete = set(TYPES)
        value_lang = self.values_lang(enum, ptr) if enum is not None else None
        for t in ("null", "boolean", "number", "string", "array", "object"):
            allowed = t in types or (t == "number" and "integer" in types)
            if not allowed:
                continue
            if value_lang is not None and t not in value_lang.parts:
                continue
            if t == "null":
                part = DFA.literal("null")
            elif t == "boolean":
                part = DFA.literal("true") | DFA.literal("false")
            elif t == "number":
                part = self.number_part(d, "number" not in types, ptr)
            elif t == "string":
                part = self.string_part(d, ptr, value_lang is not None)
                if d.get("pattern") is not None or d.get("format") is not None:
                    complete.discard(t)  # minimal spellings only
            elif t in ("array", "object") and not set(d) & (ARRAY_KEYWORDS if t == "array" else OBJECT_KEYWORDS):
                part = self.any().parts[t]  # unconstrained: the shared any-value automaton
            elif t == "array":
                part, ok = self.array_part(d, ptr)
                if not ok:
                    complete.discard(t)
                arrays = self.unique_arrays(d) if d.get("uniqueItems") is True else None
                if arrays is not None:  # (otherwise unsupported, reported above)
                    unique = self.values_lang(arrays, ptr)
                    part = part.intersect(unique.parts.get("array", DFA.empty()), self.budget)
                    if "array" not in unique.complete:
                        complete.discard(t)
            else:
                part, ok = self.object_part(d, ptr)
                if not ok:
                    complete.discard(t)
            if value_lang is not None:
                if t == "string" and part is self.cached_string(0, None, None, None, ()):
                    # every spelling of every string: the listed strings are all in it
                    part = value_lang.parts[t]
                else:
                    part = part.intersect(value_lang.parts[t], self.budget)
                if t not in value_lang.complete:
                    complete.discard(t)
            parts[t] = part
        return TypedLanguage.of(parts, complete)

    def unique_arrays(self, d: dict) -> list | None:
        """``uniqueItems: true`` where it is regular because the arrays are finitely many: at
        most four items, each from a short list of values (``const``, ``enum``, boolean or null
        type). The arrays without two equal items, or None when not so."""
        prefix, rest = d.get("prefixItems", []), d.get("items", True)
        hi, lo = _int(d.get("maxItems")), _int(d.get("minItems", 0))
        if not isinstance(prefix, list) or not _is_count(lo) or not _is_count(hi):
            return None
        n = len(prefix) if rest is False else None
        if hi is not None:
            n = hi if n is None else min(n, hi)
        if n is None or n > 4:
            return None
        values = []
        for i in range(n):
            v = _finite_values(prefix[i] if i < len(prefix) else rest)
            if v is None:
                return None
            values.append(v)
        out = []
        for length in range(lo, n + 1):
            for tup in itertools.product(*values[:length]):
                if all(not rewrite.json_equal(a, b) for a, b in itertools.combinations(tup, 2)):
                    out.append(list(tup))
            if len(out) > 256:
                return None
        return out

    # ------------------------------------------------------------------ values (const / enum)
    def values_lang(self, values: list, ptr: str) -> TypedLanguage:
        """The texts of the JSON values ``values`` (a ``const`` or ``enum``); the same list
        written again (enums recur across definitions) is built once."""
        try:
            key = json.dumps(values)  # (key order kept: a long object value is written in it)
        except (TypeError, ValueError):
            return self._values_lang(values, ptr)  # not JSON: reported where it is
        got = self._values.get(key)
        if got is None:
            got = self._values[key] = self._values_lang(values, ptr)
        return got

    def _values_lang(self, values: list, ptr: str) -> TypedLanguage:
        # String values are unioned as decoded literals and encoded once (encoding distributes over
        # union); every other value's automaton joins its type's part in one n-ary union, so a long
        # enum costs one determinisation per type, not one per value.
        strings = [DFA.literal(v) for v in values if isinstance(v, str)
                   and not self._excluded(json.dumps(v, ensure_ascii=False)[1:-1])]
        parts: dict = {}
        complete = frozenset(TYPES)
        if strings:
            parts["string"] = [json_string(DFA.union_all(strings, self.budget),
                                           excludes=self.excludes, budget=self.budget)]
        for v in values:
            if isinstance(v, str):
                continue
            lang = self.value_lang(v, ptr)
            complete &= lang.complete
            for t, d in lang.parts.items():
                parts.setdefault(t, []).append(d)
        return TypedLanguage.of({t: DFA.union_all(ds, self.budget) for t, ds in parts.items()},
                                complete)

    def value_lang(self, v, ptr) -> TypedLanguage:
        if v is None:
            return TypedLanguage.of({"null": DFA.literal("null")})
        if isinstance(v, bool):
            return TypedLanguage.of({"boolean": DFA.literal("true" if v else "false")})
        if isinstance(v, (int, float)):
            return TypedLanguage.of({"number": number_range(v, v, budget=self.budget)})
        if isinstance(v, str):
            if self._excluded(json.dumps(v, ensure_ascii=False)[1:-1]):
                return TypedLanguage.nothing()
            return TypedLanguage.of({"string": json_string(DFA.literal(v), excludes=self.excludes,
                                                           budget=self.budget)})
        if isinstance(v, list):
            items = [self.value_lang(x, ptr) for x in v]
            if any(i.is_empty() for i in items):
                return TypedLanguage.nothing()
            seq = [DFA.literal("["), self.ws]
            for i, it in enumerate(items):
                if i:
                    seq += [DFA.literal(","), self.ws]
                seq += [it.to_dfa(self.budget), self.ws]
            seq.append(DFA.literal("]"))
            ok = all(set(TYPES) <= it.complete for it in items)
            return TypedLanguage.of({"array": DFA.concat_all(seq, self.budget)},
                                    TYPES if ok else set(TYPES) - {"array"})
        if isinstance(v, dict):
            members = []
            for k, x in v.items():
                if self._excluded(json.dumps(k, ensure_ascii=False)[1:-1]):
                    return TypedLanguage.nothing()
                xl = self.value_lang(x, ptr)
                if xl.is_empty():
                    return TypedLanguage.nothing()
                members.append(Member(key_text(k), xl.to_dfa(self.budget), True))
            # an object value is the same in any key order: small ones accept every order
            d = object_dfa(members, None, self.ws, any_order=self.any_order or len(members) <= 4,
                           budget=self.budget)
            return TypedLanguage.of({"object": d}, TYPES if len(v) <= 1 else set(TYPES) - {"object"})
        raise SchemaError(f"not a JSON value: {v!r}", ptr)

    def _excluded(self, text: str) -> bool:
        return any(e in text for e in self.excludes)

    # ------------------------------------------------------------------ scalars
    def number_part(self, d, integer: bool, ptr) -> DFA:
        for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            v = d.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise SchemaError(f"{k} must be a number", _ptr(ptr, k))
        if d.get("multipleOf") is not None and d["multipleOf"] <= 0:
            raise SchemaError("multipleOf must be positive", _ptr(ptr, "multipleOf"))
        try:
            return number_schema(integer=integer, minimum=d.get("minimum"), maximum=d.get("maximum"),
                                 exclusive_minimum=d.get("exclusiveMinimum"),
                                 exclusive_maximum=d.get("exclusiveMaximum"),
                                 multiple_of_=d.get("multipleOf"), budget=self.budget,
                                 zero_fraction=self.registry.float_integers)
        except ValueError as e:
            raise SchemaError(str(e), ptr) from None

    def string_part(self, d, ptr, enumerated: bool) -> DFA:
        lo, hi = _int(d.get("minLength", 0)), _int(d.get("maxLength"))
        for k, v in (("minLength", lo), ("maxLength", hi)):
            if not _is_count(v):
                raise SchemaError(f"{k} must be a non-negative integer", _ptr(ptr, k))
        pattern, fmt = d.get("pattern"), d.get("format")
        if pattern is not None and not isinstance(pattern, str):
            raise SchemaError("pattern must be a string", _ptr(ptr, "pattern"))
        if fmt is not None:
            from .formats import format_dfa
            if fmt not in SUPPORTED_FORMATS and format_dfa(fmt) is None:
                self.unsupported(f"format {fmt!r} is not supported", _ptr(ptr, "format"), "format")
                fmt = None
        if hi is not None and hi < lo:
            return DFA.empty()
        if pattern is None and fmt is None:
            if enumerated:
                # the enum alternatives carry the exclusions; bounds stay exact
                return self.cached_string(lo, hi, None, None, ())
            if self.excludes:
                if lo or hi is not None:
                    self.warn(f"minLength/maxLength ({lo}..{hi}) dropped under string exclusions", ptr)
                return self.cached_string(0, None, None, None, self.excludes)
            return self.cached_string(lo, hi, None, None, ())
        try:
            return self.cached_string(lo, hi, pattern, fmt, ())
        except RegexError as e:
            self.unsupported(f"pattern {pattern!r}: {e.msg}", _ptr(ptr, "pattern"), "pattern")
            return self.cached_string(lo, hi, None, fmt, ())

    def cached_string(self, lo, hi, pattern, fmt, excludes) -> DFA:
        """Texts of strings with these keywords: one plain spelling per character under a
        ``pattern`` or ``format``, every spelling otherwise (see the module docstring)."""
        key = (lo, hi, pattern, fmt, excludes)
        if key not in self._strings:
            self._strings[key] = string_text(lo, hi, pattern, fmt, excludes, self.budget)
        return self._strings[key]

    def key_region(self, value: DFA) -> DFA:
        """Quoted texts of undeclared keys with decoded names in ``value`` (exclusions applied)."""
        return json_string(value, excludes=self.excludes, budget=self.budget)

    # ------------------------------------------------------------------ any value
    def any(self) -> TypedLanguage:
        """Every JSON value up to ``max_depth`` levels of nesting (with these spelling rules)."""
        if self._any is None:
            self._any = any_value(self.ws_n, self.excludes, self.max_depth, self.budget)
        return self._any

    def minimal_strings(self) -> DFA:
        """Every string value in its minimal spelling: the universe of string complements when
        one side holds minimal spellings only (exact on values, minimal spellings out)."""
        if self._minimal is None:
            self._minimal = json_string(DFA.universal(), escapes="minimal", budget=self.budget)
        return self._minimal

    def canonical(self) -> TypedLanguage:
        """:meth:`any` with canonical number spellings: the universe of complements."""
        a = self.any()
        parts = dict(a.parts)
        parts["number"] = CANONICAL_NUMBER
        return TypedLanguage.of(parts)
