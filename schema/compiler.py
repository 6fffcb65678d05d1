"""JSON Schema to the automaton of the exact JSON text a model may emit.

:func:`compile_json_schema` lowers a schema (a dict, JSON text or a pydantic model class) to a
:class:`~tokenfsm.automata.dfa.DFA` over code points whose language is a set of JSON texts, every
one of which validates against the schema (strict mode), written under a whitespace policy, with
optional substrings excluded from every string.

How it works:

1. ``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if/then/else`` and the dependency keywords
   are rewritten into a disjunction of merged keyword dictionaries (:mod:`.rewrite`), so objects
   that combine several schemas get one object automaton with all their keys, and negations of
   object schemas are structural (a missing required key, a property whose value violates its
   schema). Whatever cannot be merged is intersected as text.
2. Each merged dictionary becomes a :class:`~.jsontext.TypedLanguage`: per JSON type, the automaton
   of its texts (numbers from :mod:`.numbers`, strings from :mod:`.strings` over decoded
   characters, objects and arrays from :mod:`.jsontext`).
3. Complements of text languages (``not`` on scalars and arrays, the non-matching items of
   ``contains``) are taken inside the language of every JSON value up to ``max_depth`` with the
   same spelling rules.

Where it is not exact (always on the sound side, so an emitted text is valid):

* integers are written canonically (``1``, never ``1.0`` or ``1e0``); numbers with a bound other
  than zero, or with ``multipleOf``, have no exponent form;
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
  length bounds on nothing else; recursion is cut at ``max_depth`` with a warning;
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

import json
import time
import warnings
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any, Iterable

from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import DEFAULT_BUDGET, Budget, BudgetExceeded, RegexError

from . import rewrite
from .ecma import ecma_pattern_dfa
from .errors import SchemaError, SchemaWarning, UnsupportedSchema
from .jsontext import (CANONICAL_NUMBER, TYPES, Member, TypedLanguage, array_dfa, key_text,
                       object_dfa, whitespace_dfa)
from .numbers import number_schema, number_range
from .strings import json_string, string_value

__all__ = ["compile_json_schema", "CompiledSchema"]

ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "$comment", "$schema", "$id", "id",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "$anchor", "$dynamicAnchor",
    "$vocabulary", "contentMediaType", "contentEncoding", "discriminator", "example", "nullable",
})
KNOWN_UNSUPPORTED = frozenset({"uniqueItems", "unevaluatedItems", "$dynamicRef", "$recursiveRef",
                               "$recursiveAnchor", "contentSchema"})
APPLICATORS = frozenset({"$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
                         "dependentRequired", "dependentSchemas", "dependencies"})
# applicators that evaluate properties of the instance itself (what unevaluatedProperties sees)
IN_PLACE = APPLICATORS - {"dependentRequired"}
SUPPORTED_FORMATS = ("date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6",
                     "uuid", "uri", "uri-reference")
_MAX_ALTERNATIVES = 64
ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "minItems", "maxItems", "contains", "minContains",
                            "maxContains", "uniqueItems"})
OBJECT_KEYWORDS = rewrite.OBJECT_KEYWORDS | {"x-undeclared", "x-negated"}


@dataclass
class CompiledSchema:
    """A schema lowered to an automaton.

    Attributes
    ----------
    dfa : DFA
        Accepts exactly the JSON texts the model may emit.
    warnings : list of str
        What the automaton does not enforce exactly (each also issued as a :class:`SchemaWarning`).
    schema : dict or bool
        The schema as compiled (pydantic models and JSON text decoded).
    """

    dfa: DFA
    warnings: list = field(default_factory=list)
    schema: Any = None

    def accepts(self, text: str) -> bool:
        """Whether ``text`` is one of the JSON texts the automaton allows."""
        return self.dfa.accepts(text)


def compile_json_schema(schema, whitespace: int | None = 2, excludes: Iterable[str] = (),
                        strict: bool = True, allow_extra_keys: bool = False,
                        property_order: str = "schema", max_depth: int = 3,
                        budget: Budget | None = None) -> CompiledSchema:
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
    c = _Compiler(schema, whitespace, excludes, strict, allow_extra_keys, property_order,
                  max_depth, budget or DEFAULT_BUDGET)
    if whitespace is None:
        c.warn("whitespace=None allows unbounded whitespace between tokens", "")
    lang = c.compile(schema, "")
    dfa = lang.to_dfa(c.budget)
    if dfa.is_empty():
        why, where = c.empty_why[0] if c.empty_why else ("no JSON value satisfies it", "")
        raise SchemaError(f"schema is unsatisfiable: {why}", where)
    return CompiledSchema(dfa, c.warnings, schema)


@lru_cache(maxsize=16)
def any_value(whitespace: int | None, excludes: tuple, depth: int, budget: Budget) -> TypedLanguage:
    """Every JSON value nested at most ``depth`` levels deep, under a whitespace policy and string
    exclusions: the universe in which ``not`` takes complements (cached across compilations)."""
    ws = whitespace_dfa(whitespace)
    strings = json_string(DFA.universal(), excludes=excludes, budget=budget)
    scalars = {"null": DFA.literal("null"), "boolean": DFA.literal("true") | DFA.literal("false"),
               "number": number_schema(), "string": strings}
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


def _is_count(v) -> bool:
    """A non-negative integer (``2.0`` counts, as JSON Schema says) or None."""
    return v is None or (not isinstance(v, bool) and isinstance(v, (int, float)) and v >= 0
                         and float(v).is_integer())


def _int(v):
    return int(v) if _is_count(v) and v is not None else v


def _ptr(base: str, *parts) -> str:
    return base + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _unescape(token: str) -> str:
    from urllib.parse import unquote
    return unquote(token).replace("~1", "/").replace("~0", "~")


@dataclass
class _Alt:
    """One disjunct of a rewritten schema: merged keywords, residual conjuncts, where it came from."""

    keywords: dict
    residual: list  # of (kind, schema, ptr): kind "schema" or "complement"
    ptr: str


class _Compiler:
    def __init__(self, root, whitespace, excludes, strict, allow_extra_keys, property_order,
                 max_depth, budget):
        self.root = root
        self.excludes = excludes
        self.strict = strict
        self.allow_extra_keys = allow_extra_keys
        self.any_order = property_order == "any"
        self.max_depth = max_depth
        self.budget = budget
        self.warnings: list[str] = []
        self.ws = whitespace_dfa(whitespace)
        self.ws_n = whitespace
        self.old_draft = isinstance(root, dict) and any(
            d in str(root.get("$schema", "")) for d in ("draft-03", "draft-04", "draft-06", "draft-07"))
        self.anchors = {}
        self._scan_anchors(root, "")
        self.ref_stack: dict[str, int] = {"": 1}
        self.cuts = 0
        self.cache: dict = {}
        self._any: TypedLanguage | None = None
        self._strings: dict = {}
        self._minimal: DFA | None = None
        # budget.max_seconds also bounds the whole compilation, checked per subschema
        self.deadline = None if budget.max_seconds is None else time.perf_counter() + budget.max_seconds
        self.empty_why: list = []  # (why, pointer) of alternatives found empty

    # ------------------------------------------------------------------ reporting
    def warn(self, msg: str, ptr: str) -> None:
        text = f"{msg} (at {ptr or '/'})"
        if text not in self.warnings:
            self.warnings.append(text)
            warnings.warn(text, SchemaWarning, stacklevel=4)

    def unsupported(self, msg: str, ptr: str, keyword: str | None = None) -> None:
        if self.strict:
            raise UnsupportedSchema(msg, ptr, keyword)
        self.warn(msg + "; not enforced", ptr)

    # ------------------------------------------------------------------ references
    def _scan_anchors(self, node, ptr):
        if isinstance(node, dict):
            a = node.get("$anchor")
            if isinstance(a, str):
                self.anchors[a] = (node, ptr)
            i = node.get("$id")
            if isinstance(i, str) and i.startswith("#") and len(i) > 1:
                self.anchors[i[1:]] = (node, ptr)
            for k, v in node.items():
                if k not in ("const", "enum", "default", "examples"):
                    self._scan_anchors(v, _ptr(ptr, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                self._scan_anchors(v, _ptr(ptr, i))

    def resolve(self, ref, ptr):
        if not isinstance(ref, str):
            raise SchemaError(f"$ref must be a string, got {ref!r}", ptr)
        base, _, frag = ref.partition("#")
        root_id = self.root.get("$id") if isinstance(self.root, dict) else None
        if base and base != root_id:
            self.unsupported(f"$ref {ref!r} is not local", ptr, "$ref")
            return True, None
        if frag and not frag.startswith("/"):
            if frag not in self.anchors:
                raise SchemaError(f"$ref {ref!r}: no such anchor", ptr)
            return self.anchors[frag]
        node = self.root
        target = ""
        for tok in frag.split("/")[1:] if frag else []:
            tok = _unescape(tok)
            target = _ptr(target, tok)
            if isinstance(node, dict) and tok in node:
                node = node[tok]
            elif isinstance(node, list) and tok.isdigit() and int(tok) < len(node):
                node = node[int(tok)]
            else:
                raise SchemaError(f"$ref {ref!r} does not resolve", ptr)
        if not isinstance(node, (dict, bool)):
            raise SchemaError(f"$ref {ref!r} does not point to a schema", ptr)
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
            return self.compile_ref(schema["$ref"], ptr)
        alts = self.dnf(schema, ptr, frozenset())
        if alts is None:
            return self.text_fallback(schema, ptr)
        out = TypedLanguage.nothing()
        for alt in alts:
            out = out.union(self.compile_alt(alt), self.budget)
        return out

    def compile_ref(self, ref, ptr) -> TypedLanguage:
        node, target = self.resolve(ref, _ptr(ptr, "$ref"))
        if node is True and target is None:
            return self.any()
        n = self.ref_stack.get(target, 0)
        if n >= self.max_depth:
            self.cuts += 1
            self.warn(f"recursive $ref {ref!r} cut at depth {self.max_depth}", ptr)
            return TypedLanguage.nothing()
        self.ref_stack[target] = n + 1
        try:
            return self.compile(node, target)
        finally:
            self.ref_stack[target] = n

    def text_fallback(self, schema: dict, ptr: str) -> TypedLanguage:
        """``schema`` with its applicators taken as set operations on texts (when the rewriting
        gives too many alternatives): sound, exact where the text languages are complete."""
        self._check_unevaluated(schema, ptr)
        base = {k: v for k, v in schema.items() if k not in APPLICATORS}
        self._normalize(base, ptr)
        b = self.budget
        lang = self.compile_keywords(base, ptr)
        if "$ref" in schema:
            lang = lang.intersect(self.compile_ref(schema["$ref"], ptr), b)
        for i, sub in enumerate(self._list(schema, "allOf", ptr)):
            lang = lang.intersect(self.compile(sub, _ptr(ptr, "allOf", i)), b)
        if "anyOf" in schema:
            any_ = TypedLanguage.nothing()
            for i, sub in enumerate(self._list(schema, "anyOf", ptr)):
                any_ = any_.union(self.compile(sub, _ptr(ptr, "anyOf", i)), b)
            lang = lang.intersect(any_, b)
        if "oneOf" in schema:
            subs = [self.compile(s, _ptr(ptr, "oneOf", i))
                    for i, s in enumerate(self._list(schema, "oneOf", ptr))]
            one = TypedLanguage.nothing()
            for i, sub in enumerate(subs):
                piece = lang.intersect(sub, b)
                for j, other in enumerate(subs):
                    if j != i and not piece.is_empty():
                        piece = self.subtract(piece, other, _ptr(ptr, "oneOf", j))
                one = one.union(piece, b)
            lang = one
        if "not" in schema:
            lang = self.subtract(lang, self.compile(schema["not"], _ptr(ptr, "not")), _ptr(ptr, "not"))
        if "if" in schema:
            cond = self.compile(schema["if"], _ptr(ptr, "if"))
            then = self.compile(schema.get("then", True), _ptr(ptr, "then"))
            else_ = self.compile(schema.get("else", True), _ptr(ptr, "else"))
            lang = lang.intersect(cond, b).intersect(then, b).union(
                self.subtract(lang, cond, _ptr(ptr, "if")).intersect(else_, b), b)
        if self._dependencies(schema, ptr):
            self.unsupported("dependencies among too many alternatives", ptr, "dependentSchemas")
        return lang

    # ------------------------------------------------------------------ rewriting
    def dnf(self, schema, ptr, expanding: frozenset) -> list[_Alt] | None:
        """``schema`` as a disjunction of merged keyword dictionaries (None: too many)."""
        if schema is True:
            return [_Alt({}, [], ptr)]
        if schema is False:
            return []
        if not isinstance(schema, dict):
            raise SchemaError("a schema must be an object or a boolean", ptr)
        self._check_unevaluated(schema, ptr)
        base = {k: v for k, v in schema.items() if k not in APPLICATORS}
        self._normalize(base, ptr)
        alts = [_Alt(base, [], ptr)]
        conj: list[list[_Alt] | None] = []
        if "$ref" in schema:
            ref_ptr = _ptr(ptr, "$ref")
            node, target = self.resolve(schema["$ref"], ref_ptr)
            if target is None or target in expanding or self.ref_stack.get(target, 0):
                conj.append([_Alt({}, [("schema", {"$ref": schema["$ref"]}, ptr)], ptr)])
            else:
                conj.append(self.dnf(node, target, expanding | {target}))
        for i, sub in enumerate(self._list(schema, "allOf", ptr)):
            conj.append(self.dnf(sub, _ptr(ptr, "allOf", i), expanding))
        if "anyOf" in schema:
            conj.append(self._disjunction([self.dnf(s, _ptr(ptr, "anyOf", i), expanding)
                                           for i, s in enumerate(self._list(schema, "anyOf", ptr))]))
        if "oneOf" in schema:
            subs = self._list(schema, "oneOf", ptr)
            branches = []
            for i, s in enumerate(subs):
                parts = [self.dnf(s, _ptr(ptr, "oneOf", i), expanding)]
                for j, o in enumerate(subs):
                    if j != i:
                        parts.append(self.negate(o, _ptr(ptr, "oneOf", j), expanding))
                branches.append(self._conjunction(parts))
            conj.append(self._disjunction(branches))
        if "not" in schema:
            conj.append(self.negate(schema["not"], _ptr(ptr, "not"), expanding))
        if "if" in schema:
            p_if = _ptr(ptr, "if")
            then = self.dnf(schema.get("then", True), _ptr(ptr, "then"), expanding)
            else_ = self.dnf(schema.get("else", True), _ptr(ptr, "else"), expanding)
            conj.append(self._disjunction([
                self._conjunction([self.dnf(schema["if"], p_if, expanding), then]),
                self._conjunction([self.negate(schema["if"], p_if, expanding), else_])]))
        for k, v in self._dependencies(schema, ptr):
            conj.append(self._disjunction([
                [_Alt({"x-forbidden": [k]}, [], ptr)],
                # the keys it depends on are written before it
                self._conjunction([self.dnf(v, ptr, expanding),
                                   [_Alt({"required": [k]}, [], ptr)]])]))
        return self._conjunction([alts] + conj)

    def _list(self, schema, key, ptr) -> list:
        v = schema.get(key, [])
        if not isinstance(v, list) or (key != "allOf" and not v):
            raise SchemaError(f"{key} must be a non-empty array of schemas", _ptr(ptr, key))
        return v

    def _dependencies(self, schema, ptr):
        """(key, schema) pairs from dependentRequired / dependentSchemas / dependencies."""
        out = []
        for kw in ("dependentRequired", "dependentSchemas", "dependencies"):
            v = schema.get(kw)
            if v is None:
                continue
            if not isinstance(v, dict):
                raise SchemaError(f"{kw} must be an object", _ptr(ptr, kw))
            for k, dep in v.items():
                if isinstance(dep, list):
                    if not all(isinstance(x, str) for x in dep):
                        raise SchemaError(f"{kw}/{k} must list property names", _ptr(ptr, kw, k))
                    out.append((k, {"required": dep} if dep else True))
                elif kw != "dependentRequired":
                    out.append((k, dep))
                else:
                    raise SchemaError(f"dependentRequired/{k} must be an array", _ptr(ptr, kw, k))
        return out

    def _conjunction(self, parts: list) -> list[_Alt] | None:
        if any(p is None for p in parts):
            # too many alternatives somewhere: keep the whole thing as text intersections
            return None
        alts = parts[0]
        for p in parts[1:]:
            if len(alts) * len(p) > _MAX_ALTERNATIVES:
                return None
            nxt = []
            for a in alts:
                for b in p:
                    kw, res = rewrite.merge(a.keywords, b.keywords)
                    if kw.get("type") == []:
                        continue
                    extra = [("schema", r, b.ptr) for r in res]
                    nxt.append(_Alt(kw, a.residual + b.residual + extra, a.ptr))
            alts = nxt
        return alts

    @staticmethod
    def _disjunction(parts: list) -> list[_Alt] | None:
        if any(p is None for p in parts):
            return None
        out = [a for p in parts for a in p]
        return out if len(out) <= _MAX_ALTERNATIVES else None

    def negate(self, schema, ptr, expanding) -> list[_Alt] | None:
        """``not schema`` as alternatives: structural on objects, text complements elsewhere."""
        if schema is True:
            return []
        if schema is False:
            return [_Alt({}, [], ptr)]
        if not isinstance(schema, dict):
            raise SchemaError("a schema must be an object or a boolean", ptr)
        self._check_unevaluated(schema, ptr)
        if "$ref" in schema and (self.old_draft or set(schema) - ANNOTATIONS == {"$ref"}):
            node, target = self.resolve(schema["$ref"], _ptr(ptr, "$ref"))
            if target is None or target in expanding or self.ref_stack.get(target, 0):
                return [_Alt({}, [("complement", schema, ptr)], ptr)]
            return self.negate(node, target, expanding | {target})
        if set(schema) & APPLICATORS:
            # not (A and B and ...) = not A or not B ...; applicators other than these stay text
            if set(schema) & APPLICATORS - {"allOf", "anyOf", "not"}:
                return [_Alt({}, [("complement", schema, ptr)], ptr)]
            base = {k: v for k, v in schema.items() if k not in APPLICATORS}
            parts = [self.negate(base, ptr, expanding)]
            for i, s in enumerate(schema.get("allOf", [])):
                parts.append(self.negate(s, _ptr(ptr, "allOf", i), expanding))
            if "anyOf" in schema:
                parts.append(self._conjunction([self.negate(s, _ptr(ptr, "anyOf", i), expanding)
                                                for i, s in enumerate(self._list(schema, "anyOf", ptr))]))
            if "not" in schema:
                parts.append(self.dnf(schema["not"], _ptr(ptr, "not"), expanding))
            return self._disjunction(parts)
        base = dict(schema)
        self._normalize(base, ptr)
        types = rewrite.schema_types(base)
        # everything but objects: complement of the text language, exact on scalars
        alts = [_Alt({"type": [t for t in ("null", "boolean", "number", "string", "array")]},
                     [("complement", base, ptr)], ptr)]
        if "object" not in types:
            alts.append(_Alt({"type": "object"}, [], ptr))
            return alts
        obj_kw = {k for k in base if k in rewrite.OBJECT_KEYWORDS}
        structural = {"properties", "required", "x-forbidden", "minProperties", "maxProperties",
                      "additionalProperties", "patternProperties", "propertyNames"}
        enum = base.get("enum", [base["const"]] if "const" in base else None)
        if obj_kw - structural or (enum is not None and any(isinstance(v, dict) for v in enum)):
            alts.append(_Alt({"type": "object"}, [("complement", base, ptr)], ptr))
            return alts
        if enum is not None:
            alts.append(_Alt({"type": "object"}, [], ptr))  # no object is in a scalar enum
            return alts
        if not obj_kw:
            return alts  # every object is valid
        for r in base.get("required", []):
            alts.append(_Alt({"type": "object", "x-forbidden": [r]}, [], ptr))
        for f in base.get("x-forbidden", []):
            alts.append(_Alt({"type": "object", "required": [f]}, [], ptr))
        if base.get("minProperties", 0) > 0:
            alts.append(_Alt({"type": "object", "maxProperties": base["minProperties"] - 1}, [], ptr))
        if base.get("maxProperties") is not None:
            alts.append(_Alt({"type": "object", "minProperties": base["maxProperties"] + 1}, [], ptr))
        for name, sub in (base.get("properties") or {}).items():
            if sub is True or sub == {}:
                continue
            alts.append(_Alt({"type": "object", "required": [name], "x-negated": [name],
                              "properties": {name: {"not": sub}}}, [], _ptr(ptr, "properties", name)))
        # some member violates patternProperties / additionalProperties / propertyNames
        patterns = base.get("patternProperties") or {}
        for pat, sub in patterns.items():
            if sub is not True and sub != {}:
                alts.append(self._witness({"pattern": pat}, {"not": sub},
                                          _ptr(ptr, "patternProperties", pat)))
        additional = base.get("additionalProperties")
        if additional is not None and additional is not True and additional != {}:
            keys = {"undeclared": list(base.get("properties") or {}), "patterns": list(patterns)}
            alts.append(self._witness(keys, {"not": additional}, _ptr(ptr, "additionalProperties")))
        names = base.get("propertyNames")
        if names is not None and names is not True and names != {}:
            alts.append(self._witness({"names_not": names}, True, _ptr(ptr, "propertyNames")))
        return alts if len(alts) <= _MAX_ALTERNATIVES else None

    @staticmethod
    def _witness(keys: dict, value, ptr: str) -> _Alt:
        """Objects with at least one member whose key is in ``keys`` and value in ``value``."""
        return _Alt({"type": "object", "x-witness": [{"keys": keys, "value": value, "ptr": ptr}]},
                    [], ptr)

    def _check_unevaluated(self, schema: dict, ptr: str) -> None:
        """``unevaluatedProperties`` next to in-place applicators depends on what they evaluate,
        per instance: not expressible by merging keywords."""
        if "unevaluatedProperties" in schema and set(schema) & IN_PLACE:
            self.unsupported("unevaluatedProperties next to in-place applicators",
                             _ptr(ptr, "unevaluatedProperties"), "unevaluatedProperties")

    def _normalize(self, d: dict, ptr: str) -> None:
        """Older drafts' spellings to 2020-12, in place; type checks. Without in-place applicators
        (checked before), ``unevaluatedProperties`` means ``additionalProperties``."""
        if "unevaluatedProperties" in d:
            u = d.pop("unevaluatedProperties")
            d.setdefault("additionalProperties", u)
        t = d.get("type")
        if t is not None:
            ts = [t] if isinstance(t, str) else t
            if not isinstance(ts, list) or not ts:
                raise SchemaError(f"type must be a string or a non-empty array, got {t!r}", _ptr(ptr, "type"))
            for x in ts:
                if x not in rewrite.ALL_TYPES:
                    raise SchemaError(f"unknown type {x!r}", _ptr(ptr, "type"))
        if isinstance(d.get("items"), list):
            d["prefixItems"] = d.pop("items")
            if "additionalItems" in d:
                d["items"] = d.pop("additionalItems")
        else:
            d.pop("additionalItems", None)
        for side in ("Minimum", "Maximum"):
            ex = d.get("exclusive" + side)
            if isinstance(ex, bool):
                del d["exclusive" + side]
                if ex and side.lower() in d:
                    d["exclusive" + side] = d.pop(side.lower())
        if "required" in d:
            r = d["required"]
            if not isinstance(r, list) or not all(isinstance(x, str) for x in r):
                raise SchemaError("required must be an array of strings", _ptr(ptr, "required"))
        for k in ("properties", "patternProperties"):
            if k in d and not isinstance(d[k], dict):
                raise SchemaError(f"{k} must be an object", _ptr(ptr, k))

    # ------------------------------------------------------------------ one merged alternative
    def compile_alt(self, alt: _Alt) -> TypedLanguage:
        lang = self.compile_keywords(alt.keywords, alt.ptr)
        for kind, sub, ptr in alt.residual:
            if lang.is_empty():
                break
            if kind == "schema":
                lang = lang.intersect(self.compile(sub, ptr), self.budget)
            else:
                lang = self.subtract(lang, self.compile(sub, ptr), ptr)
        return lang

    def subtract(self, lang: TypedLanguage, other: TypedLanguage, ptr: str) -> TypedLanguage:
        """Texts of ``lang`` whose values ``other`` rejects: ``lang ∩ complement(other)``, computed
        without building the complement."""
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
            lang = self.any().only(t for t in TYPES if t in types or (t == "number" and "integer" in types))
            if "integer" in types and "number" not in types:
                parts = dict(lang.parts)
                parts["number"] = self.number_part({}, True, ptr)
                lang = TypedLanguage.of(parts, lang.complete)
            return lang
        for k in d:
            if k in KNOWN_UNSUPPORTED:
                if k == "uniqueItems" and d[k] is False:
                    continue
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
            else:
                part, ok = self.object_part(d, ptr)
                if not ok:
                    complete.discard(t)
            if value_lang is not None:
                part = part.intersect(value_lang.parts[t], self.budget)
                if t not in value_lang.complete:
                    complete.discard(t)
            parts[t] = part
        return TypedLanguage.of(parts, complete)

    # ------------------------------------------------------------------ values (const / enum)
    def values_lang(self, values: list, ptr: str) -> TypedLanguage:
        out = TypedLanguage.nothing()
        for v in values:
            out = out.union(self.value_lang(v, ptr), self.budget)
        return out

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
            d = object_dfa(members, None, self.ws, any_order=self.any_order, budget=self.budget)
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
                                 multiple_of_=d.get("multipleOf"), budget=self.budget)
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
            value = string_value(lo, hi, pattern, fmt, budget=self.budget)
            minimal = pattern is not None or fmt is not None
            self._strings[key] = json_string(value, excludes=excludes,
                                             escapes="minimal" if minimal else "all",
                                             budget=self.budget)
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

    # ------------------------------------------------------------------ arrays
    def array_part(self, d, ptr) -> tuple[DFA, bool]:
        prefix = d.get("prefixItems", [])
        if not isinstance(prefix, list):
            raise SchemaError("prefixItems must be an array", _ptr(ptr, "prefixItems"))
        prefix_key = "items" if self.old_draft else "prefixItems"
        langs = [self.compile(s, _ptr(ptr, prefix_key, i)) for i, s in enumerate(prefix)]
        rest = self.compile(d.get("items", True), _ptr(ptr, "additionalItems" if self.old_draft and prefix else "items"))
        complete = all(set(TYPES) <= l.complete for l in langs + [rest])
        lo, hi = _int(d.get("minItems", 0)), _int(d.get("maxItems"))
        for k, v in (("minItems", lo), ("maxItems", hi)):
            if not _is_count(v):
                raise SchemaError(f"{k} must be a non-negative integer", _ptr(ptr, k))
        dfas = [l.to_dfa(self.budget) for l in langs]
        rest_dfa = rest.to_dfa(self.budget)
        contains = None
        if "contains" in d:
            c = self.compile(d["contains"], _ptr(ptr, "contains"))
            miss = TypedLanguage.nothing()
            for l in langs + [rest]:
                miss = miss.union(self.subtract(l, c, _ptr(ptr, "contains")), self.budget)
            cmin, cmax = _int(d.get("minContains", 1)), _int(d.get("maxContains"))
            contains = (c.to_dfa(self.budget), miss.to_dfa(self.budget), cmin, cmax)
            complete = complete and set(TYPES) <= c.complete
        if hi is not None and hi < lo:
            return DFA.empty(), True
        item_at = (lambda i: dfas[i] if i < len(dfas) else rest_dfa)
        return array_dfa(item_at, len(dfas), self.ws, min_items=lo, max_items=hi,
                         contains=contains, budget=self.budget), complete

    # ------------------------------------------------------------------ objects
    def object_part(self, d, ptr) -> tuple[DFA, bool]:
        props = d.get("properties") or {}
        required = list(dict.fromkeys(d.get("required", [])))
        forbidden = set(d.get("x-forbidden", []))
        patterns = d.get("patternProperties") or {}
        additional = d.get("additionalProperties")
        if additional is None and "unevaluatedProperties" in d:
            additional = d["unevaluatedProperties"]
        names_schema = d.get("propertyNames")
        names_value = None
        if names_schema is not None:
            names_value = self.names_value(names_schema, _ptr(ptr, "propertyNames"))
        min_p, max_p = _int(d.get("minProperties", 0)), _int(d.get("maxProperties"))
        # declared names: properties first, then required names not declared there
        order = list(props) + [r for r in required if r not in props]
        pattern_dfas = []
        for pat, sub in patterns.items():
            try:
                pattern_dfas.append((ecma_pattern_dfa(pat, budget=self.budget), sub, pat))
            except RegexError as e:
                self.unsupported(f"patternProperties {pat!r}: {e.msg}", _ptr(ptr, "patternProperties"),
                                 "patternProperties")
        members = []
        witnesses = self.witness_sets(d, ptr)
        undeclared = set(d.get("x-undeclared", ()))
        if undeclared and d.get("additionalProperties") is None and not self.allow_extra_keys:
            # only a negation asks for these keys: with declared keys only, nothing to emit
            return DFA.empty(), False
        for name in order:
            p = _ptr(ptr, "properties", name)
            req = name in required
            drop_why = None
            if name in forbidden:
                drop_why = "must be absent"
            elif self._excluded(json.dumps(name, ensure_ascii=False)[1:-1]):
                drop_why = "contains an excluded substring"
            elif names_value is not None and not names_value.accepts(name):
                drop_why = "violates propertyNames"
            if drop_why is None:
                subs = [props[name]] if name in props else []
                subs += [s for dfa, s, _ in pattern_dfas if dfa.accepts(name)]
                if name not in props and not any(dfa.accepts(name) for dfa, _, _ in pattern_dfas):
                    subs.append(True if additional is None else additional)
                lang = TypedLanguage.of(self.any().parts) if not subs else None
                for s in subs:
                    sl = self.compile(s, p)
                    lang = sl if lang is None else lang.intersect(sl, self.budget)
                value = lang.to_dfa(self.budget)
                if value.is_empty():
                    drop_why = "has no valid value"
            if drop_why is not None:
                if req:  # no object of this alternative exists
                    self.empty_why.append((f"required property {name!r} {drop_why}", p))
                    return DFA.empty(), True
                continue
            pieces = [(value, 0)]
            for i, (keys, wv) in enumerate(witnesses):
                if keys.accepts(name):
                    pieces = [x for v, bits in pieces for x in
                              ((v.intersect(wv, self.budget), bits | 1 << i),
                               (v.difference(wv, self.budget), bits))]
            members.append(Member(key_text(name), value, req,
                                  tuple((v, b) for v, b in pieces if not v.is_empty())))
        regions = self.extra_members(order, forbidden, pattern_dfas, additional, names_value, ptr,
                                     bool(order))
        extra = self.extra_texts(regions, witnesses)
        complete = not order and not forbidden and not patterns and names_schema is None and \
            additional in (None, True, {}) and min_p == 0 and max_p is None and not witnesses
        for k, v in (("minProperties", min_p), ("maxProperties", max_p)):
            if not _is_count(v):
                raise SchemaError(f"{k} must be a non-negative integer", _ptr(ptr, k))
        return object_dfa(members, extra, self.ws, min_properties=min_p, max_properties=max_p,
                          any_order=self.any_order, witnesses=len(witnesses),
                          budget=self.budget), complete

    def witness_sets(self, d, ptr) -> list[tuple[DFA, DFA]]:
        """``x-witness`` conditions as (decoded key names, value texts) pairs."""
        out = []
        for w in d.get("x-witness", ()):
            keys = w["keys"]
            try:
                if "pattern" in keys:
                    k = ecma_pattern_dfa(keys["pattern"], budget=self.budget)
                elif "undeclared" in keys:
                    taken = [DFA.literal(n) for n in keys["undeclared"]]
                    taken += [ecma_pattern_dfa(p, budget=self.budget) for p in keys["patterns"]]
                    k = DFA.universal().difference(DFA.union_all(taken, self.budget), self.budget) \
                        if taken else DFA.universal()
                else:
                    names = self.names_value(keys["names_not"], w["ptr"])
                    k = DFA.universal().difference(names, self.budget)
            except RegexError as e:
                self.unsupported(f"pattern: {e.msg}", w["ptr"], "patternProperties")
                continue
            out.append((k, self.compile(w["value"], w["ptr"]).to_dfa(self.budget)))
        if len(out) > 3:
            self.unsupported("more than three negated member conditions", ptr, "not")
        return out

    def extra_texts(self, regions, witnesses) -> dict | None:
        """Texts of one undeclared member, by the witness conditions it meets."""
        pieces = [(k, v, 0) for k, v in regions]
        for i, (wk, wv) in enumerate(witnesses):
            nxt = []
            for k, v, bits in pieces:
                inside = k.intersect(wk, self.budget)
                if not inside.is_empty():
                    nxt += [(inside, v.intersect(wv, self.budget), bits | 1 << i),
                            (inside, v.difference(wv, self.budget), bits)]
                nxt.append((k.difference(wk, self.budget), v, bits))
            pieces = nxt
        colon = DFA.concat_all([self.ws, DFA.literal(":"), self.ws])
        by_bits: dict = {}
        for k, v, bits in pieces:
            if k.is_empty() or v.is_empty():
                continue
            text = DFA.concat_all([self.key_region(k), colon, v], self.budget)
            by_bits[bits] = by_bits[bits].union(text, self.budget) if bits in by_bits else text
        return by_bits or None

    def names_value(self, schema, ptr) -> DFA:
        """Decoded property names allowed by ``propertyNames`` (a string schema)."""
        if schema is True:
            return DFA.universal()
        if schema is False:
            return DFA.empty()
        lang = self.compile(schema, ptr)
        if "string" not in lang.parts:
            return DFA.empty()
        d = schema if isinstance(schema, dict) else {}
        if set(d) - ANNOTATIONS - {"type", "minLength", "maxLength", "pattern", "format", "enum", "const"}:
            self.unsupported("propertyNames beyond string keywords", ptr, "propertyNames")
        value = string_value(d.get("minLength", 0), d.get("maxLength"), d.get("pattern"),
                             d.get("format"), budget=self.budget)
        enum = d.get("enum", [d["const"]] if "const" in d else None)
        if enum is not None:
            value = value & DFA.union_all([DFA.literal(x) for x in enum if isinstance(x, str)] or [DFA.empty()])
        return value

    def extra_members(self, declared, forbidden, pattern_dfas, additional, names_value, ptr,
                      has_declared) -> list[tuple[DFA, DFA]]:
        """Undeclared members as (decoded key names, value texts) regions."""
        taken = DFA.union_all([DFA.literal(n) for n in list(declared) + list(forbidden)]) \
            if declared or forbidden else DFA.empty()
        free = DFA.universal().difference(taken, self.budget)
        if names_value is not None:
            free = free.intersect(names_value, self.budget)
        if additional is None:
            generate_rest = self.allow_extra_keys or (not has_declared and not pattern_dfas)
            additional = True if generate_rest else False
        regions = []  # (decoded key DFA, value DFA)
        n = len(pattern_dfas)
        if n > 4:
            self.unsupported("more than four patternProperties", _ptr(ptr, "patternProperties"),
                             "patternProperties")
            pattern_dfas, n = pattern_dfas[:4], 4
        any_pattern = DFA.union_all([p for p, _, _ in pattern_dfas]) if n else DFA.empty()
        for mask in range(1, 1 << n):
            keys = free
            lang = None
            for i, (pdfa, sub, pat) in enumerate(pattern_dfas):
                if mask >> i & 1:
                    keys = keys.intersect(pdfa, self.budget)
                    sl = self.compile(sub, _ptr(ptr, "patternProperties", pat))
                    lang = sl if lang is None else lang.intersect(sl, self.budget)
                else:
                    keys = keys.difference(pdfa, self.budget)
            if not keys.is_empty() and not lang.is_empty():
                regions.append((keys, lang.to_dfa(self.budget)))
        if additional is not False:
            keys = free.difference(any_pattern, self.budget)
            lang = self.compile(additional, _ptr(ptr, "additionalProperties"))
            if not keys.is_empty() and not lang.is_empty():
                regions.append((keys, lang.to_dfa(self.budget)))
        return regions
