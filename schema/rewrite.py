"""Schema-level algebra: merging conjunctions of schemas and negating them structurally.

Intersecting the *texts* of two object schemas is wrong whenever they declare different keys:
``{"properties": {"a": ...}}`` and ``{"properties": {"b": ...}}`` each generate objects with their
own keys only, so the texts share nothing although ``{"a": 1, "b": 2}`` satisfies both. The
compiler therefore rewrites ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if/then/else`` and the
dependency keywords into a disjunction of *merged* keyword dictionaries before building automata
(a disjunctive normal form), and negates object keywords structurally: an object violates
``{"required": ["a"], "properties": {"a": S}}`` when ``a`` is absent or when ``a``'s value
violates ``S``. Whatever cannot be merged stays a residual conjunct, intersected as text (sound,
possibly incomplete).

Internal keywords appear in rewritten schemas: ``x-forbidden`` (property names that must be
absent), ``x-witness`` (members one of which must have a key in a set and a value in a schema: the
negation of ``additionalProperties``, ``patternProperties`` and ``propertyNames``) and, on
residuals, complements (the JSON values *not* accepted by a schema, taken on texts where exact,
see :mod:`.jsontext`).

Example
-------
>>> merge({"properties": {"a": {}}, "required": ["a"]}, {"properties": {"b": {}}})[0]
{'properties': {'a': True, 'b': True}, 'required': ['a']}

The merging rules follow the way xgrammar's and llguidance's converters flatten ``allOf``;
structural negation is the De Morgan reading of the keyword semantics in JSON Schema 2020-12.
"""

from __future__ import annotations

import json
import math

__all__ = ["merge", "ALL_TYPES", "schema_types", "json_equal", "OBJECT_KEYWORDS"]

ALL_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "patternProperties",
                             "propertyNames", "minProperties", "maxProperties",
                             "unevaluatedProperties", "x-forbidden", "x-witness", "x-uneval"})
_MAX_KEYS = {"maxLength", "maxItems", "maxProperties", "maxContains"}
_MIN_KEYS = {"minLength", "minItems", "minProperties"}


def schema_types(d: dict) -> frozenset:
    """The allowed types of a keyword dictionary (``integer`` implied by ``number``)."""
    t = d.get("type")
    if t is None:
        return ALL_TYPES
    ts = frozenset([t] if isinstance(t, str) else t)
    if "number" in ts:
        ts |= {"integer"}
    return ts


def _type_value(ts: frozenset):
    if ts >= ALL_TYPES:
        return None
    order = ["null", "boolean", "object", "array", "number", "string", "integer"]
    out = [t for t in order if t in ts and not (t == "integer" and "number" in ts)]
    return out[0] if len(out) == 1 else out


def _canon(v):
    """A hashable form of a JSON value with JSON Schema equality (1 == 1.0, True != 1)."""
    if isinstance(v, bool) or v is None:
        return ("lit", v)
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isfinite(v) and v == int(v):
            v = int(v)
        return ("num", v)
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, list):
        return ("arr", tuple(_canon(x) for x in v))
    if isinstance(v, dict):
        return ("obj", tuple(sorted((k, _canon(x)) for k, x in v.items())))
    return ("other", repr(v))


def json_equal(a, b) -> bool:
    """JSON Schema equality of two values."""
    return _canon(a) == _canon(b)


def _enum_of(d: dict):
    if "const" in d:
        return [d["const"]]
    return d.get("enum")


def merge(a: dict, b: dict) -> tuple[dict, list]:
    """The conjunction of two keyword dictionaries (no applicators in either).

    Returns
    -------
    (dict, list)
        The merged keywords and residual schemas whose keywords could not be merged (to be
        intersected as text).
    """
    out = dict(a)
    residual = []
    # keywords that only mean something together: merge them as a group or not at all
    for group in (("items", "prefixItems"), ("contains", "minContains", "maxContains")):
        if any(k in a for k in group) and any(k in b for k in group):
            part = {k: b[k] for k in group if k in b}
            if any(json.dumps(a.get(k), sort_keys=True) != json.dumps(v, sort_keys=True)
                   for k, v in part.items()) or any(k in a and k not in b for k in group):
                residual.append(part)
                b = {k: v for k, v in b.items() if k not in group}
    for k, v in b.items():
        if k not in out:
            out[k] = v
            continue
        u = out[k]
        if k in ("type",):
            continue  # handled below
        if json.dumps(u, sort_keys=True, default=str) == json.dumps(v, sort_keys=True, default=str):
            continue
        if k in ("required", "x-forbidden", "x-negated", "x-undeclared"):
            out[k] = list(dict.fromkeys(list(u) + list(v)))
        elif k == "x-eval":  # what the passing subschemas evaluate (see applicators.dnf)
            out[k] = {"names": list(dict.fromkeys(list(u["names"]) + list(v["names"]))),
                      "patterns": list(dict.fromkeys(list(u["patterns"]) + list(v["patterns"]))),
                      "all": u["all"] or v["all"]}
        elif k == "x-evali":  # what the passing subschemas evaluate of an array
            seen = {json.dumps(c, sort_keys=True) for c in u["contains"]}
            out[k] = {"prefix": max(u["prefix"], v["prefix"]), "all": u["all"] or v["all"],
                      "contains": list(u["contains"]) + [
                          c for c in v["contains"] if json.dumps(c, sort_keys=True) not in seen]}
        elif k in ("x-witness", "x-uneval", "x-unevali"):
            seen = {json.dumps(w, sort_keys=True) for w in u}
            out[k] = list(u) + [w for w in v if json.dumps(w, sort_keys=True) not in seen]
        elif k in _MAX_KEYS:
            out[k] = min(u, v)
        elif k in _MIN_KEYS or k == "minContains":
            out[k] = max(u, v)
        elif k in ("minimum", "exclusiveMinimum") and not isinstance(u, bool) and not isinstance(v, bool):
            out[k] = max(u, v)
        elif k in ("maximum", "exclusiveMaximum") and not isinstance(u, bool) and not isinstance(v, bool):
            out[k] = min(u, v)
        elif k in ("const", "enum"):
            pass  # handled below
        elif k == "properties":
            continue  # handled below
        elif k == "patternProperties" and isinstance(u, dict) and isinstance(v, dict) and \
                "additionalProperties" not in a and "additionalProperties" not in b:
            # each side's patterns constrain the keys they match; with additionalProperties on a
            # side, the other side's patterns would exempt keys from it: kept as text then
            merged = dict(u)
            for pat, sub in v.items():
                same = pat in merged and json.dumps(merged[pat], sort_keys=True, default=str) == \
                    json.dumps(sub, sort_keys=True, default=str)
                merged[pat] = sub if pat not in merged else merged[pat] if same else \
                    {"allOf": [merged[pat], sub]}
            out[k] = merged
        elif k == "additionalProperties":
            out[k] = {"allOf": [u, v]}
        elif k in ("title", "description", "default", "examples", "$comment", "deprecated",
                   "readOnly", "writeOnly", "$id", "$schema", "$anchor", "$defs", "definitions",
                   "$dynamicAnchor", "x-scope"):
            continue
        else:
            residual.append({k: v})
    # types
    ts = schema_types(a) & schema_types(b)
    tv = _type_value(ts)
    if tv is None:
        out.pop("type", None)
    else:
        out["type"] = tv
    # const / enum: intersect by JSON equality
    ea, eb = _enum_of(a), _enum_of(b)
    if ea is not None or eb is not None:
        out.pop("const", None)
        if ea is not None and eb is not None:
            keys = {_canon(x) for x in eb}
            out["enum"] = [x for x in ea if _canon(x) in keys]
        else:
            out["enum"] = list(ea if ea is not None else eb)
    # properties: a key declared on one side only also meets the other side's
    # additionalProperties / patternProperties
    pa, pb = a.get("properties") or {}, b.get("properties") or {}
    if pa or pb:
        props = {}
        for name in list(pa) + [n for n in pb if n not in pa]:
            parts = []
            for side, own in ((a, pa), (b, pb)):
                if name in own:
                    parts.append(own[name])
                else:
                    parts.extend(_other_key_schemas(side, name))
            parts = [x for x in parts if x is not True and x != {}] or [True]
            props[name] = parts[0] if len(parts) == 1 else {"allOf": parts}
        out["properties"] = props
    # keys that only a negated schema asks for, undeclared by the positive side (a key that
    # either side declares outside a negation is declared: ``x-negated`` keeps the names that
    # only negations name)
    declared = set(_positive(a)) | set(_positive(b))
    for k in ("x-negated", "x-undeclared"):
        if k in out:
            out[k] = [n for n in out[k] if n not in declared]
            if not out[k]:
                del out[k]
    for x, y in ((a, b), (b, a)):
        for name in x.get("x-negated", ()):
            if "properties" in y and (_positive(y) or not y.get("x-negated")) \
                    and name not in declared:
                out["x-undeclared"] = list(dict.fromkeys(list(out.get("x-undeclared", [])) + [name]))
    # an object that must both have and lack a key cannot exist
    req = set(out.get("required", ())) & set(out.get("x-forbidden", ()))
    if req:
        ts = schema_types(out) - {"object"}
        out["type"] = _type_value(ts) if ts else []
    return out, residual


def _positive(d: dict) -> list:
    """The names ``d`` declares in ``properties`` other than through a negation."""
    negated = d.get("x-negated", ())
    return [n for n in (d.get("properties") or {}) if n not in negated]


def _other_key_schemas(side: dict, name: str) -> list:
    """What ``side`` says about a key it does not declare in ``properties``."""
    out = []
    matched = False
    for pattern, s in (side.get("patternProperties") or {}).items():
        from tokenfsm.automata.errors import BudgetExceeded, RegexError

        from .ecma import ecma_pattern_dfa
        try:
            hit = ecma_pattern_dfa(pattern).accepts(name)
        except (RegexError, BudgetExceeded):
            hit = True  # the compiler reports bad patterns; stay on the safe side here
            out.append(s)
            continue
        if hit:
            matched = True
            out.append(s)
    if not matched and "additionalProperties" in side:
        out.append(side["additionalProperties"])
    if "x-forbidden" in side and name in side["x-forbidden"]:
        out.append(False)
    return out or [True]
