"""Applicators of a JSON Schema (``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``,
``if/then/else``, dependencies) rewritten into disjunctions of merged keyword dictionaries.

Part of the schema compiler (:mod:`.compiler`), as a mixin of its compiler class: ``dnf`` turns
a schema into alternatives (:class:`Alt`) whose keywords :func:`.rewrite.merge` combined and whose
residual conjuncts are intersected (or subtracted) as text; ``negate`` is the structural negation
(De Morgan on the keywords, a missing required key, a member that violates its schema, a witness
member for ``additionalProperties``/``patternProperties``/``propertyNames``); ``text_fallback``
takes applicators as set operations on texts when the rewriting would give too many alternatives.

Example
-------
>>> from tokenfsm.schema import compile_json_schema
>>> cs = compile_json_schema({"oneOf": [{"properties": {"a": {}}, "additionalProperties": False},
...                                     {"properties": {"b": {}}, "additionalProperties": False}]},
...                          whitespace=0)
>>> cs.accepts('{"a":1}'), cs.accepts('{"a":1,"b":2}')
(True, False)

The rewriting is the disjunctive normal form of the keyword semantics in JSON Schema 2020-12, the
way xgrammar's and llguidance's converters flatten ``allOf``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenfsm.automata.dfa import DFA  # noqa: F401  (used by the compiler class)

from . import rewrite
from .errors import SchemaError
from .jsontext import TypedLanguage

ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "$comment", "$schema", "$id", "id",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "$anchor", "$dynamicAnchor",
    "$vocabulary", "contentMediaType", "contentEncoding", "contentSchema", "discriminator",
    "example", "nullable", "x-scope",
})  # contentSchema too: in 2019-09 and later the content keywords only annotate
KNOWN_UNSUPPORTED = frozenset({"uniqueItems", "$dynamicRef", "$recursiveRef",
                               "$recursiveAnchor"})
APPLICATORS = frozenset({"$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
                         "dependentRequired", "dependentSchemas", "dependencies"})
# applicators that evaluate properties of the instance itself (what unevaluatedProperties sees)
IN_PLACE = APPLICATORS - {"dependentRequired"}
SUPPORTED_FORMATS = ("date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6",
                     "uuid", "uri", "uri-reference")
_MAX_ALTERNATIVES = 64
ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "minItems", "maxItems", "contains", "minContains",
                            "maxContains", "uniqueItems", "x-unevali"})
OBJECT_KEYWORDS = rewrite.OBJECT_KEYWORDS | {"x-undeclared", "x-negated", "x-uneval"}
_MISSING = object()
_NO_EVAL = {"names": [], "patterns": [], "all": False}
_NO_EVALI = {"prefix": 0, "all": False, "contains": []}
# keywords of a schema kept as a text residual whose evaluations no x-eval records (residuals
# split off by rewrite.merge come from a subschema whose own x-eval/x-evali is recorded)
_EVALUATING = APPLICATORS | {"$dynamicRef", "$recursiveRef"}


def _ref_only(schema: dict) -> dict:
    """The ``$ref`` of a schema alone (with the dynamic scope it is followed in, see .refs)."""
    return {k: schema[k] for k in ("$ref", "x-scope") if k in schema}


def _refs_in(node) -> list:
    """Every ``$ref`` / ``$dynamicRef`` string in a schema, nested ones included (not in
    ``const``/``enum`` data)."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        if isinstance(n, dict):
            for k, v in n.items():
                if k in ("$ref", "$dynamicRef") and isinstance(v, str):
                    out.append(v)
                elif k not in ("const", "enum", "default", "examples", "example"):
                    todo.append(v)
        elif isinstance(n, list):
            todo.extend(n)
    return out


def _may_evaluate(schema) -> bool:
    return isinstance(schema, dict) and bool(set(schema) & _EVALUATING)


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
class Alt:
    """One disjunct of a rewritten schema: merged keywords, residual conjuncts, where it came from."""

    keywords: dict
    residual: list  # of (kind, schema, ptr): kind "schema" or "complement"
    ptr: str


class Applicators:
    """Rewriting of applicators (mixed into the compiler class)."""

    def text_fallback(self, schema: dict, ptr: str) -> TypedLanguage:
        """``schema`` with its applicators taken as set operations on texts (when the rewriting
        gives too many alternatives): sound, exact where the text languages are complete."""
        self._check_unevaluated(schema, ptr)
        base = {k: v for k, v in schema.items() if k not in APPLICATORS}
        self._normalize(base, ptr)
        b = self.budget
        lang = self.compile_keywords(base, ptr)
        if "$ref" in schema:
            lang = lang.intersect(self.compile_ref(schema["$ref"], ptr, schema.get("x-scope")), b)
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
    def dnf(self, schema, ptr, expanding: frozenset, track: bool = False) -> list[Alt] | None:
        """``schema`` as a disjunction of merged keyword dictionaries (None: too many).

        With ``track`` (an enclosing schema at the same instance location has
        ``unevaluatedProperties``), each alternative also records in ``x-eval`` which properties
        its passing subschemas evaluate (annotations of ``not`` and of failing subschemas do not
        count), and ``anyOf`` spells out which of its branches pass."""
        if schema is True:
            return [Alt({"x-eval": dict(_NO_EVAL), "x-evali": dict(_NO_EVALI)} if track else {},
                        [], ptr)]
        if schema is False:
            return []
        if not isinstance(schema, dict):
            raise SchemaError("a schema must be an object or a boolean", ptr)
        uneval = uneval_items = _MISSING
        if "unevaluatedProperties" in schema and set(schema) & IN_PLACE:
            uneval = schema["unevaluatedProperties"]
            track = True
        if "unevaluatedItems" in schema:
            uneval_items = schema["unevaluatedItems"]
            track = True
        base = {k: v for k, v in schema.items() if k not in APPLICATORS and k != "unevaluatedItems"
                and not (k == "unevaluatedProperties" and uneval is not _MISSING)}
        self._normalize(base, ptr)
        if track:
            base["x-eval"] = {"names": list(base.get("properties") or {}),
                              "patterns": list(base.get("patternProperties") or {}),
                              "all": "additionalProperties" in base}
            prefix = base.get("prefixItems", [])
            base["x-evali"] = {
                "prefix": len(prefix) if isinstance(prefix, list) else 0, "all": "items" in base,
                "contains": [{"schema": base["contains"], "ptr": _ptr(ptr, "contains")}]
                if "contains" in base else []}
        alts = [Alt(base, [], ptr)]
        conj: list[list[Alt] | None] = []
        if "$ref" in schema:
            ref_ptr = _ptr(ptr, "$ref")
            node, target = self.resolve(schema["$ref"], ref_ptr, schema.get("x-scope"))
            # a target an enclosing value is being compiled from is merged as well when it is
            # not recursive (objects intersected as text lose the keys the other side
            # declares); a recursive one is kept as text, for compile_ref to count and cut
            if target is None or target in expanding or \
                    (self.ref_stack.get(target, 0) and self.recursive(target, node)):
                conj.append([Alt({}, [("schema", _ref_only(schema), ptr)], ptr)])
            else:
                if target not in self.inlined:  # one level of depth however often it is inlined here
                    self.inlined.append(target)
                conj.append(self.dnf(node, target, expanding | {target}, track))
        for i, sub in enumerate(self._list(schema, "allOf", ptr)):
            conj.append(self.dnf(sub, _ptr(ptr, "allOf", i), expanding, track))
        if "anyOf" in schema:
            subs = self._list(schema, "anyOf", ptr)
            if track and len(subs) <= 3:
                # every passing branch evaluates: one alternative per set of passing branches
                branches = []
                for mask in range(1, 1 << len(subs)):
                    branches.append(self._conjunction([
                        self.dnf(s, _ptr(ptr, "anyOf", i), expanding, track) if mask >> i & 1
                        else self.negate(s, _ptr(ptr, "anyOf", i), expanding)
                        for i, s in enumerate(subs)]))
                conj.append(self._disjunction(branches))
            else:
                # with tracking, an alternative then ignores what other passing branches
                # evaluate: unevaluatedProperties is applied to more keys (sound)
                conj.append(self._disjunction([self.dnf(s, _ptr(ptr, "anyOf", i), expanding, track)
                                               for i, s in enumerate(subs)]))
        if "oneOf" in schema:
            subs = self._list(schema, "oneOf", ptr)
            branches = []
            for i, s in enumerate(subs):
                parts = [self.dnf(s, _ptr(ptr, "oneOf", i), expanding, track)]
                for j, o in enumerate(subs):
                    if j != i:
                        parts.append(self.negate(o, _ptr(ptr, "oneOf", j), expanding))
                branches.append(self._conjunction(parts))
            conj.append(self._disjunction(branches))
        if "not" in schema:
            conj.append(self.negate(schema["not"], _ptr(ptr, "not"), expanding))
        if "if" in schema:
            p_if = _ptr(ptr, "if")
            then = self.dnf(schema.get("then", True), _ptr(ptr, "then"), expanding, track)
            else_ = self.dnf(schema.get("else", True), _ptr(ptr, "else"), expanding, track)
            conj.append(self._disjunction([
                self._conjunction([self.dnf(schema["if"], p_if, expanding, track), then]),
                self._conjunction([self.negate(schema["if"], p_if, expanding), else_])]))
        for k, v in self._dependencies(schema, ptr):
            conj.append(self._disjunction([
                [Alt({"x-forbidden": [k]}, [], ptr)],
                # the keys it depends on are written before it
                self._conjunction([self.dnf(v, ptr, expanding, track),
                                   [Alt({"required": [k]}, [], ptr)]])]))
        out = self._conjunction([alts] + conj)
        if uneval is not _MISSING and out is not None:
            out = [self._unevaluated(a, uneval, _ptr(ptr, "unevaluatedProperties")) for a in out]
        if uneval_items is not _MISSING and out is not None:
            out = [self._unevaluated_items(a, uneval_items, _ptr(ptr, "unevaluatedItems"))
                   for a in out]
        return out

    def recursive(self, target: str, node) -> bool:
        """Whether the schema at ``target`` reaches itself through ``$ref`` (and
        ``$dynamicRef``): only then can expanding it in place go on forever."""
        memo = self.__dict__.setdefault("_reach", {})
        if target not in memo:
            seen, todo = {target}, [node]
            memo[target] = False
            while todo:
                for ref in _refs_in(todo.pop()):
                    try:
                        n, t = self.registry.resolve(ref, "")
                    except SchemaError:
                        continue
                    if t == target:
                        memo[target] = True
                        return True
                    if t is not None and t not in seen:
                        seen.add(t)
                        todo.append(n)
        return memo[target]

    def _evaluated(self, alt: Alt, key: str, nothing: dict, keyword: str, ptr: str) -> dict:
        """What the passing subschemas of one alternative evaluate (``key``: ``x-eval`` for
        properties, ``x-evali`` for items), with what residual subschemas evaluate statically; a
        residual whose evaluation depends on the instance makes ``keyword`` unsupported."""
        ev = alt.keywords.get(key, nothing)
        for kind, r, p in alt.residual:
            if kind == "schema" and _may_evaluate(r) and not ev["all"]:
                more = self._static_evaluation(r, p, key)
                if more is None:
                    self.unsupported(f"{keyword} next to a subschema kept as text "
                                     "(a recursive $ref) with conditional applicators", ptr,
                                     keyword)
                    continue
                ev = rewrite.merge({key: ev}, {key: more})[0][key]
        return ev

    def _unevaluated_items(self, alt: Alt, schema, ptr: str) -> Alt:
        """``unevaluatedItems: schema`` on one alternative: items past the longest
        ``prefixItems`` of its passing subschemas (``x-evali``), unless some passing ``items``
        takes them all, must match one of their ``contains`` schemas or ``schema``."""
        kw = dict(alt.keywords)
        ev = self._evaluated(alt, "x-evali", _NO_EVALI, "unevaluatedItems", ptr)
        if ev["all"]:
            return alt
        kw["x-unevali"] = list(kw.get("x-unevali", [])) + [
            {"prefix": ev["prefix"], "contains": ev["contains"], "schema": schema, "ptr": ptr}]
        kw["x-evali"] = {"prefix": 0, "all": True, "contains": []}
        return Alt(kw, alt.residual, alt.ptr)

    def _unevaluated(self, alt: Alt, schema, ptr: str) -> Alt:
        """``unevaluatedProperties: schema`` on one alternative: the properties its passing
        subschemas do not evaluate (``x-eval``) must have values in ``schema`` (``x-uneval``)."""
        kw = dict(alt.keywords)
        ev = self._evaluated(alt, "x-eval", _NO_EVAL, "unevaluatedProperties", ptr)
        if ev["all"]:
            return alt
        kw["x-uneval"] = list(kw.get("x-uneval", [])) + [
            {"names": ev["names"], "patterns": ev["patterns"], "schema": schema, "ptr": ptr}]
        # keys no keyword of the alternative names are unevaluated ones; what a residual
        # subschema evaluates is named here too (its own text constrains the values)
        props = dict(kw.get("properties") or {})
        for n in ev["names"]:
            props.setdefault(n, True)
        if props:
            kw["properties"] = props
        pats = dict(kw.get("patternProperties") or {})
        for p in ev["patterns"]:
            pats.setdefault(p, True)
        if pats:
            kw["patternProperties"] = pats
        kw.setdefault("additionalProperties", schema)
        kw["x-eval"] = {"names": [], "patterns": [], "all": True}
        return Alt(kw, alt.residual, alt.ptr)

    def _static_evaluation(self, schema, ptr, which: str, seen=None):
        """What ``schema`` evaluates (``x-eval`` or ``x-evali`` form) when that does not depend
        on the instance: its in-place applicators are only ``allOf`` and ``$ref`` (followed,
        recursion included); None otherwise."""
        if schema is True or schema is False:
            return dict(_NO_EVAL if which == "x-eval" else _NO_EVALI)
        if not isinstance(schema, dict):
            return None
        seen = set() if seen is None else seen
        if set(schema) & (IN_PLACE - {"allOf", "$ref"}) or "$dynamicRef" in schema:
            return None
        base = {k: v for k, v in schema.items() if k not in APPLICATORS}
        self._normalize(base, ptr)
        if which == "x-eval":
            out = {"names": list(base.get("properties") or {}),
                   "patterns": list(base.get("patternProperties") or {}),
                   "all": "additionalProperties" in base or "unevaluatedProperties" in base}
        else:
            prefix = base.get("prefixItems", [])
            out = {"prefix": len(prefix) if isinstance(prefix, list) else 0,
                   "all": "items" in base or "unevaluatedItems" in base,
                   "contains": [{"schema": base["contains"], "ptr": _ptr(ptr, "contains")}]
                   if "contains" in base else []}
        subs = [(s, _ptr(ptr, "allOf", i)) for i, s in enumerate(self._list(schema, "allOf", ptr))]
        if "$ref" in schema:
            node, target = self.resolve(schema["$ref"], _ptr(ptr, "$ref"), schema.get("x-scope"))
            if target is None:
                return None
            if target not in seen:
                seen.add(target)
                subs.append((node, target))
        for s, p in subs:
            more = self._static_evaluation(s, p, which, seen)
            if more is None:
                return None
            out = rewrite.merge({which: out}, {which: more})[0][which]
        return out

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

    def _conjunction(self, parts: list) -> list[Alt] | None:
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
                    nxt.append(Alt(kw, a.residual + b.residual + extra, a.ptr))
            alts = nxt
        return alts

    @staticmethod
    def _disjunction(parts: list) -> list[Alt] | None:
        if any(p is None for p in parts):
            return None
        out = [a for p in parts for a in p]
        return out if len(out) <= _MAX_ALTERNATIVES else None

    def negate(self, schema, ptr, expanding) -> list[Alt] | None:
        """``not schema`` as alternatives: structural on objects, text complements elsewhere."""
        if schema is True:
            return []
        if schema is False:
            return [Alt({}, [], ptr)]
        if not isinstance(schema, dict):
            raise SchemaError("a schema must be an object or a boolean", ptr)
        self._check_unevaluated(schema, ptr)
        if "$ref" in schema and (self.old_draft or set(schema) - ANNOTATIONS == {"$ref"}):
            node, target = self.resolve(schema["$ref"], _ptr(ptr, "$ref"), schema.get("x-scope"))
            if target is None or target in expanding or \
                    (self.ref_stack.get(target, 0) and self.recursive(target, node)):
                return [Alt({}, [("complement", schema, ptr)], ptr)]
            if target not in self.inlined:  # one level of depth however often it is inlined here
                self.inlined.append(target)
            return self.negate(node, target, expanding | {target})
        if set(schema) & APPLICATORS:
            # not (A and B and ...) = not A or not B or ...
            base = {k: v for k, v in schema.items() if k not in APPLICATORS}
            parts = [self.negate(base, ptr, expanding)] if set(base) - ANNOTATIONS else []
            if "$ref" in schema:
                parts.append(self.negate(_ref_only(schema), ptr, expanding))
            for i, s in enumerate(self._list(schema, "allOf", ptr)):
                parts.append(self.negate(s, _ptr(ptr, "allOf", i), expanding))
            if "anyOf" in schema:
                parts.append(self._conjunction([self.negate(s, _ptr(ptr, "anyOf", i), expanding)
                                                for i, s in enumerate(self._list(schema, "anyOf", ptr))]))
            if "oneOf" in schema:
                # none passes, or two (or more) pass
                subs = self._list(schema, "oneOf", ptr)
                p = [_ptr(ptr, "oneOf", i) for i in range(len(subs))]
                parts.append(self._conjunction([self.negate(s, p[i], expanding)
                                                for i, s in enumerate(subs)]))
                if len(subs) > 6:
                    return None
                for i in range(len(subs)):
                    for j in range(i + 1, len(subs)):
                        parts.append(self._conjunction([self.dnf(subs[i], p[i], expanding),
                                                        self.dnf(subs[j], p[j], expanding)]))
            if "not" in schema:
                parts.append(self.dnf(schema["not"], _ptr(ptr, "not"), expanding))
            if "if" in schema:
                p_if = _ptr(ptr, "if")
                parts.append(self._conjunction([
                    self.dnf(schema["if"], p_if, expanding),
                    self.negate(schema.get("then", True), _ptr(ptr, "then"), expanding)]))
                parts.append(self._conjunction([
                    self.negate(schema["if"], p_if, expanding),
                    self.negate(schema.get("else", True), _ptr(ptr, "else"), expanding)]))
            for k, v in self._dependencies(schema, ptr):
                # the key is present and what it depends on fails
                parts.append(self._conjunction([[Alt({"required": [k]}, [], ptr)],
                                                self.negate(v, ptr, expanding)]))
            return self._disjunction(parts)
        base = dict(schema)
        self._normalize(base, ptr)
        types = rewrite.schema_types(base)
        # everything but objects: complement of the text language, exact on scalars
        alts = [Alt({"type": [t for t in ("null", "boolean", "number", "string", "array")]},
                     [("complement", base, ptr)], ptr)]
        if "object" not in types:
            alts.append(Alt({"type": "object"}, [], ptr))
            return alts
        obj_kw = {k for k in base if k in rewrite.OBJECT_KEYWORDS}
        structural = {"properties", "required", "x-forbidden", "minProperties", "maxProperties",
                      "additionalProperties", "patternProperties", "propertyNames"}
        enum = base.get("enum", [base["const"]] if "const" in base else None)
        if obj_kw - structural or (enum is not None and any(isinstance(v, dict) for v in enum)):
            alts.append(Alt({"type": "object"}, [("complement", base, ptr)], ptr))
            return alts
        if enum is not None:
            alts.append(Alt({"type": "object"}, [], ptr))  # no object is in a scalar enum
            return alts
        if not obj_kw:
            return alts  # every object is valid
        for r in base.get("required", []):
            alts.append(Alt({"type": "object", "x-forbidden": [r]}, [], ptr))
        for f in base.get("x-forbidden", []):
            alts.append(Alt({"type": "object", "required": [f]}, [], ptr))
        if base.get("minProperties", 0) > 0:
            alts.append(Alt({"type": "object", "maxProperties": base["minProperties"] - 1}, [], ptr))
        if base.get("maxProperties") is not None:
            alts.append(Alt({"type": "object", "minProperties": base["maxProperties"] + 1}, [], ptr))
        for name, sub in (base.get("properties") or {}).items():
            if sub is True or sub == {}:
                continue
            alts.append(Alt({"type": "object", "required": [name], "x-negated": [name],
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
    def _witness(keys: dict, value, ptr: str) -> Alt:
        """Objects with at least one member whose key is in ``keys`` and value in ``value``."""
        return Alt({"type": "object", "x-witness": [{"keys": keys, "value": value, "ptr": ptr}]},
                    [], ptr)

    def _check_unevaluated(self, schema: dict, ptr: str) -> None:
        """``unevaluatedProperties``/``unevaluatedItems`` next to in-place applicators depend
        on what they evaluate, per instance: exact in :meth:`dnf` only, unsupported where a
        schema is negated or taken as text."""
        for kw in ("unevaluatedProperties", "unevaluatedItems"):
            if kw in schema and set(schema) & IN_PLACE:
                self.unsupported(f"{kw} next to in-place applicators under not, oneOf or if, "
                                 "or among too many alternatives", _ptr(ptr, kw), kw)

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

