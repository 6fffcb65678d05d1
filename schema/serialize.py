"""Serialise a JSON value the way the compiled automata write it: keys in schema order.

Used to check completeness (a valid instance, written under the same whitespace policy and key
order as the automaton, must be accepted) in tests and benchmarks.

The compiler (:mod:`.applicators`, :mod:`.rewrite`, :mod:`.containers`) rewrites a schema into
alternatives of merged keyword dictionaries; an object of one alternative has its declared keys in
the order of the merged ``properties`` (then the ``required`` names not among them, then the
undeclared keys). The merge concatenates, first occurrence first: the schema's own keywords, its
``$ref`` target, each ``allOf`` subschema, the ``anyOf`` branch, the ``oneOf`` branch (and the
negations of the other branches), ``not``, ``if`` with ``then`` (or the negation of ``if`` with
``else``), then each dependency whose key is present (the schema it depends on, then the key).
A negation adds the property whose value violates its schema (or the key a negated
``x-forbidden`` asks for). This module follows the same rules on the *value*: the branches an
instance takes are decided by validating it (:mod:`jsonschema`, a test dependency, imported only
for schemas with conditional applicators), never by looking at the automaton.

Example
-------
>>> dumps_in_schema_order({"b": 1, "a": [1, 2]}, {"properties": {"a": {}, "b": {}}}, 0)
'{"a":[1,2],"b":1}'
>>> dumps_in_schema_order({"b": 1, "a": 2}, {"allOf": [{"properties": {"b": {}}},
...                                                    {"properties": {"a": {}}}]}, 0)
'{"b":1,"a":2}'
"""

from __future__ import annotations

import json

from .refs import Registry

__all__ = ["dumps_in_schema_order", "has_undeclared_keys"]

_ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "$comment", "$schema", "$id", "id",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "$anchor", "$dynamicAnchor",
    "$vocabulary", "contentMediaType", "contentEncoding", "contentSchema", "discriminator",
    "example", "nullable", "x-scope",
})
_APPLICATORS = frozenset({"$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
                          "dependentRequired", "dependentSchemas", "dependencies"})
_IN_PLACE = _APPLICATORS - {"dependentRequired"}
_OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "patternProperties",
                              "propertyNames", "minProperties", "maxProperties",
                              "unevaluatedProperties"})
_STRUCTURAL = frozenset({"properties", "required", "minProperties", "maxProperties",
                         "additionalProperties", "patternProperties", "propertyNames"})
_MAX_REF_DEPTH = 64


def dumps_in_schema_order(value, schema, whitespace: int | None = 0, documents=None) -> str:
    """JSON text of ``value`` with object keys in the order the compiled automaton writes them
    (declared keys of the alternative the value belongs to, then the others in their own
    order), one space after ``:`` and ``,`` when ``whitespace`` allows it.

    Parameters
    ----------
    value : JSON value
    schema : dict or bool
    whitespace : int or None
    documents : mapping of str to dict or bool, optional
        Other schema documents, as for :func:`~.compiler.compile_json_schema`.

    Returns
    -------
    str
    """
    sep = (",", ":") if whitespace == 0 else (", ", ": ")
    w = _Writer(schema, documents)
    return w.dump(value, [w.root], sep)


def has_undeclared_keys(value, schema, documents=None) -> bool:
    """Whether some object in ``value`` has a key that the schema neither declares
    (``properties``, ``required``) nor constrains (``patternProperties`` or
    ``additionalProperties``) in the alternative the object belongs to: such an instance needs
    ``allow_extra_keys=True``."""
    w = _Writer(schema, documents)
    return w.undeclared(value, [w.root])


class _Writer:
    def __init__(self, schema, documents):
        if isinstance(schema, (str, bytes)):
            schema = json.loads(schema)
        self.reg = Registry(schema, documents)
        self.root = self.reg.root
        self.old = self.reg.old_draft
        self._validator = None
        self.depth = 0

    # ------------------------------------------------------------------ validation (branches)
    def valid(self, schema, value) -> bool:
        if schema is True or schema == {}:
            return True
        if schema is False:
            return False
        if self._validator is None:
            self._validator = _make_validator(self.reg, self.root)
        try:
            return self._validator.evolve(schema=schema).is_valid(value)
        except Exception:  # a schema jsonschema cannot read: take the branch
            return True

    # ------------------------------------------------------------------ references
    def follow(self, schema):
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return True
        try:
            node, target = self.reg.resolve(ref, "")
        except Exception:
            return True
        return True if target is None else node

    def _only_ref(self, schema) -> bool:
        return set(schema) - _ANNOTATIONS == {"$ref"} or ("$ref" in schema and bool(self.old))

    # ------------------------------------------------------------------ one alternative
    def sides(self, schema, value, track=False) -> list:
        """The keyword dictionaries (no applicators) the compiler merges, in its order, for the
        alternative of ``schema`` that ``value`` belongs to."""
        if not isinstance(schema, dict):
            return []
        if self._only_ref(schema):
            return self._through_ref(schema, value, lambda n: self.sides(n, value, track))
        if "unevaluatedProperties" in schema and set(schema) & _IN_PLACE:
            track = True
        base = _normalize({k: v for k, v in schema.items() if k not in _APPLICATORS})
        if "unevaluatedProperties" in schema and set(schema) & _IN_PLACE:
            base.pop("additionalProperties", None)
            base["x-unevaluated"] = schema["unevaluatedProperties"]
        out = [base]
        if "$ref" in schema:
            out += self._through_ref(schema, value, lambda n: self.sides(n, value, track))
        for sub in _list(schema.get("allOf")):
            out += self.sides(sub, value, track)
        subs = _list(schema.get("anyOf"))
        if subs:
            if track and len(subs) <= 3:
                for s in subs:
                    out += self.sides(s, value, track) if self.valid(s, value) else self.neg(s, value)
            else:
                for s in subs:
                    if self.valid(s, value):
                        out += self.sides(s, value, track)
                        break
        subs = _list(schema.get("oneOf"))
        if subs:
            passing = [i for i, s in enumerate(subs) if self.valid(s, value)]
            if passing:
                i = passing[0]
                out += self.sides(subs[i], value, track)
                for j, o in enumerate(subs):
                    if j != i:
                        out += self.neg(o, value)
        if "not" in schema:
            out += self.neg(schema["not"], value)
        if "if" in schema:
            if self.valid(schema["if"], value):
                out += self.sides(schema["if"], value, track)
                out += self.sides(schema.get("then", True), value, track)
            else:
                out += self.neg(schema["if"], value)
                out += self.sides(schema.get("else", True), value, track)
        for k, dep in _dependencies(schema):
            if isinstance(value, dict) and k in value:
                out += self.sides(dep, value, track)
                out.append({"required": [k]})
        return out

    def _through_ref(self, schema, value, then):
        if self.depth > _MAX_REF_DEPTH:
            return []
        node = self.follow(schema)
        self.depth += 1
        try:
            return then(node)
        finally:
            self.depth -= 1

    def neg(self, schema, value) -> list:
        """The keyword dictionaries of the negation's alternative that ``value`` belongs to."""
        if not isinstance(schema, dict):
            return []
        if self._only_ref(schema):
            return self._through_ref(schema, value, lambda n: self.neg(n, value))
        if set(schema) & _APPLICATORS:
            base = {k: v for k, v in schema.items() if k not in _APPLICATORS}
            if set(base) - _ANNOTATIONS and not self.valid(base, value):
                return self.neg(base, value)
            if "$ref" in schema:
                ref = {k: schema[k] for k in ("$ref", "x-scope") if k in schema}
                if not self.valid(ref, value):
                    return self.neg(ref, value)
            for s in _list(schema.get("allOf")):
                if not self.valid(s, value):
                    return self.neg(s, value)
            subs = _list(schema.get("anyOf"))
            if subs and not any(self.valid(s, value) for s in subs):
                return [x for s in subs for x in self.neg(s, value)]
            subs = _list(schema.get("oneOf"))
            if subs:
                passing = [i for i, s in enumerate(subs) if self.valid(s, value)]
                if not passing:
                    return [x for s in subs for x in self.neg(s, value)]
                if len(passing) > 1:
                    return self.sides(subs[passing[0]], value) + self.sides(subs[passing[1]], value)
            if "not" in schema and self.valid(schema["not"], value):
                return self.sides(schema["not"], value)
            if "if" in schema:
                then, else_ = schema.get("then", True), schema.get("else", True)
                if self.valid(schema["if"], value):
                    if not self.valid(then, value):
                        return self.sides(schema["if"], value) + self.neg(then, value)
                elif not self.valid(else_, value):
                    return self.neg(schema["if"], value) + self.neg(else_, value)
            for k, dep in _dependencies(schema):
                if isinstance(value, dict) and k in value and not self.valid(dep, value):
                    return [{"required": [k]}] + self.neg(dep, value)
            return []
        base = _normalize(dict(schema))
        if not isinstance(value, dict):
            return []
        obj_kw = set(base) & _OBJECT_KEYWORDS
        enum = base.get("enum", [base["const"]] if "const" in base else None)
        t = base.get("type")
        if t is not None and "object" not in ([t] if isinstance(t, str) else t):
            return []
        if obj_kw - _STRUCTURAL or enum is not None or not obj_kw:
            return []
        for r in base.get("required", []) or []:
            if r not in value:
                return []
        lo, hi = base.get("minProperties", 0), base.get("maxProperties")
        if _num(lo) and len(value) < lo or _num(hi) and len(value) > hi:
            return []
        for name, sub in (base.get("properties") or {}).items():
            if sub is True or sub == {}:
                continue
            if name in value and not self.valid(sub, value[name]):
                return [{"properties": {name: {"not": sub}}, "required": [name], "x-negated": [name]}]
        return []

    # ------------------------------------------------------------------ merged view
    @staticmethod
    def order(sides) -> list:
        props: dict = {}
        req: dict = {}
        for s in sides:
            for n in s.get("properties") or {}:
                props.setdefault(n, None)
            for n in s.get("required") or []:
                req.setdefault(n, None)
        return list(props) + [r for r in req if r not in props]

    def member_schemas(self, sides, name) -> list:
        """What the merged alternative says about the value of member ``name``."""
        out = []
        for s in sides:
            props = s.get("properties") or {}
            if name in props:
                out.append(props[name])
                continue
            matched = False
            for pat, sub in (s.get("patternProperties") or {}).items():
                if _search(pat, name):
                    matched = True
                    out.append(sub)
            if not matched:
                for kw in ("additionalProperties", "x-unevaluated"):
                    if kw in s and (kw == "additionalProperties" or not self._evaluated(sides, name)):
                        out.append(s[kw])
        return [x for x in out if x is not True and x != {}]

    @staticmethod
    def _evaluated(sides, name) -> bool:
        return any(name in (s.get("properties") or {}) or
                   any(_search(p, name) for p in (s.get("patternProperties") or {}))
                   or "additionalProperties" in s for s in sides)

    def item_schemas(self, sides, i) -> list:
        out = []
        for s in sides:
            prefix = s.get("prefixItems")
            if isinstance(prefix, list) and i < len(prefix):
                out.append(prefix[i])
            elif "items" in s and not isinstance(s["items"], list):
                out.append(s["items"])
        return [x for x in out if x is not True and x != {}]

    # ------------------------------------------------------------------ writing
    def dump(self, value, schemas, sep) -> str:
        sides = [x for s in schemas for x in self.sides(s, value)] \
            if isinstance(value, (dict, list)) else []
        if isinstance(value, dict):
            order = [k for k in self.order(sides) if k in value]
            order += [k for k in value if k not in order]
            items = [json.dumps(k, ensure_ascii=False) + sep[1]
                     + self.dump(value[k], self.member_schemas(sides, k), sep) for k in order]
            return "{" + sep[0].join(items) + "}"
        if isinstance(value, list):
            out = [self.dump(v, self.item_schemas(sides, i), sep) for i, v in enumerate(value)]
            return "[" + sep[0].join(out) + "]"
        return json.dumps(value, ensure_ascii=False)

    def undeclared(self, value, schemas) -> bool:
        if not isinstance(value, (dict, list)):
            return False
        sides = [x for s in schemas for x in self.sides(s, value)]
        if isinstance(value, list):
            return any(self.undeclared(v, self.item_schemas(sides, i)) for i, v in enumerate(value))
        declared = set(self.order(sides))
        # a key only a negation names (the positive side declares properties, not this key) is
        # undeclared, as in rewrite.merge
        positive = {n for x in sides for n in (x.get("properties") or {})
                    if n not in x.get("x-negated", ())}
        if any("properties" in x and "x-negated" not in x for x in sides):
            declared = {n for n in declared if n in positive or not any(
                n in x.get("x-negated", ()) for x in sides)}
        loose = any("additionalProperties" in s or "x-unevaluated" in s for s in sides)
        patterns = [p for s in sides for p in (s.get("patternProperties") or {})]
        constrained = any(set(s) & _OBJECT_KEYWORDS for s in sides)
        for k, v in value.items():
            if constrained and k not in declared and not loose and \
                    not any(_search(p, k) for p in patterns):
                return True
            if self.undeclared(v, self.member_schemas(sides, k)):
                return True
        return False


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _search(pattern, name) -> bool:
    import re
    try:
        return re.search(pattern, name) is not None
    except (re.error, TypeError):
        return False


def _normalize(d: dict) -> dict:
    """Older drafts' spellings to 2020-12 (as the compiler reads them)."""
    if "unevaluatedProperties" in d:
        u = d.pop("unevaluatedProperties")
        d.setdefault("additionalProperties", u)
    if isinstance(d.get("items"), list):
        d["prefixItems"] = d.pop("items")
        if "additionalItems" in d:
            d["items"] = d.pop("additionalItems")
    return d


def _dependencies(schema) -> list:
    out = []
    for kw in ("dependentRequired", "dependentSchemas", "dependencies"):
        v = schema.get(kw)
        if not isinstance(v, dict):
            continue
        for k, dep in v.items():
            if isinstance(dep, list):
                out.append((k, {"required": dep} if dep else True))
            elif kw != "dependentRequired":
                out.append((k, dep))
    return out


def _make_validator(reg: Registry, root):
    """A jsonschema validator that resolves the registry's absolute references and reads the
    older drafts' keywords the compiler reads (``dependencies``, ``items`` as a list)."""
    import jsonschema
    from jsonschema import _keywords, _legacy_keywords
    from referencing import Registry as RefRegistry, Resource
    from referencing.jsonschema import DRAFT202012

    cls = jsonschema.validators.validator_for(root if isinstance(root, dict) else {},
                                              default=jsonschema.Draft202012Validator)

    own_items = cls.VALIDATORS.get("items", _keywords.items)

    def items(validator, items_, instance, schema):
        if isinstance(items_, list):
            yield from _legacy_keywords.items_draft6_draft7_draft201909(validator, items_, instance,
                                                                        schema)
        else:
            yield from own_items(validator, items_, instance, schema)

    extra = {"items": items}
    if "dependencies" not in cls.VALIDATORS:
        extra["dependencies"] = _legacy_keywords.dependencies_draft4_draft6_draft7
    if "additionalItems" not in cls.VALIDATORS:
        extra["additionalItems"] = _legacy_keywords.additionalItems
    cls = jsonschema.validators.extend(cls, extra)
    spec = DRAFT202012
    try:
        from referencing.jsonschema import specification_with
        spec = specification_with(root.get("$schema", ""), default=DRAFT202012) \
            if isinstance(root, dict) else DRAFT202012
    except Exception:
        pass
    pairs = [(uri, Resource(contents=node, specification=spec))
             for uri, (node, _) in reg.resources.items() if node is not None]
    registry = RefRegistry().with_resources(pairs)
    return cls(root, registry=registry)
