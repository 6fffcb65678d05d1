"""From the user's schema to the intermediate form (:mod:`.ir`), once, for every draft.

:func:`resolve` checks that the input is JSON (string keys, finite numbers, bounded nesting),
registers its resources and anchors (:class:`~.refs.Registry`), then builds the node of the root
and of every definition a reference reaches, each once. It reads keywords through the keyword
table (:mod:`.keywords`): an unknown keyword is skipped, a known one's value is checked against
its shape (a :class:`SchemaError` naming the pointer of the value at fault) and lands in the field
of the node the table names.

Drafts are normalised here and nowhere else: ``items`` as a list (drafts before 2020-12) is
``prefixItems`` with ``additionalItems`` as ``items``; boolean ``exclusiveMinimum`` /
``exclusiveMaximum`` (drafts 3 and 4) move the bound; ``dependencies`` is
``dependentRequired``/``dependentSchemas``; in drafts up to 7 a schema with ``$ref`` is that
reference alone; ``unevaluatedProperties`` beside no in-place applicator is
``additionalProperties``.

References become :class:`~.ir.Ref` nodes naming a definition (its location). ``$dynamicRef``
and ``$recursiveRef`` depend on the dynamic scope (the resources entered on the way, outermost
first): when the registry holds any, each definition is built once per scope it is entered in,
and the dynamic reference is bound then (following a ``$ref`` into a resource by a JSON pointer
enters that resource too).

Example
-------
>>> ir = resolve({"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}},
...               "$defs": {"n": {"type": "integer", "minimum": 0}}})
>>> member = ir.root.assertions.object.members[0].properties[0]
>>> member[0], type(member[1]).__name__, ir.definitions[member[1].target].assertions.number.minimum
('a', 'Ref', 0)

The dynamic scope follows JSON Schema 2020-12 (section 7.1 and 8.2.3.2) and 2019-09's
``$recursiveRef`` (8.2.4.2), as python-jsonschema's ``referencing`` resolves them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from . import ir
from .ecma import counted_class
from .errors import SchemaError
from .keywords import ALL_TYPES, IN_PLACE, keyword
from .refs import MAX_NESTING, Registry, join_uri, pointer, shown

__all__ = ["resolve", "SchemaIR", "check_json", "MAX_JSON_DEPTH"]

#: JSON values (a schema, or the data in ``const``/``enum``) nest at most this deep.
MAX_JSON_DEPTH = 2 * MAX_NESTING

_JSON_SCALARS = (str, int, float, bool, type(None))


def check_json(value, where: str = "") -> None:
    """Raise :class:`SchemaError` unless ``value`` is a JSON value: objects with string keys,
    arrays, strings, finite numbers, booleans, null, nested at most :data:`MAX_JSON_DEPTH`
    deep (walked without recursion)."""
    # paths are (parent path, token) pairs, written out as pointers only for an error
    def where_of(path) -> str:
        tokens = []
        while path is not None:
            path, tok = path
            tokens.append(tok)
        return pointer(where, *reversed(tokens))

    todo = [(value, None, 0)]
    while todo:
        v, path, depth = todo.pop()
        if depth > MAX_JSON_DEPTH:
            raise SchemaError(f"the schema nests deeper than {MAX_JSON_DEPTH} levels",
                              where_of(path))
        if isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    raise SchemaError(f"object keys must be strings, got {k!r}", where_of(path))
                if isinstance(x, (dict, list, float)) or not isinstance(x, _JSON_SCALARS):
                    todo.append((x, (path, k), depth + 1))
        elif isinstance(v, list):
            todo.extend((x, (path, i), depth + 1) for i, x in enumerate(v)
                        if isinstance(x, (dict, list, float)) or not isinstance(x, _JSON_SCALARS))
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise SchemaError(f"{v!r} is not a JSON number", where_of(path))
        elif not isinstance(v, _JSON_SCALARS):
            raise SchemaError(f"not a JSON value: {type(v).__name__}", where_of(path))


@dataclass
class SchemaIR:
    """A schema in the intermediate form.

    Attributes
    ----------
    root : Node
    definitions : dict
        Every definition a :class:`~.ir.Ref` names, by its ``target``.
    locations : dict
        The location (JSON pointer) of each definition (its ``target`` with the dynamic scope
        left out).
    registry : Registry
    draft : int or None
        The draft the root declares.
    float_integers : bool
        Whether ``1.0`` is an integer (drafts 6 and later, when declared).
    targets : frozenset
        The definitions some reference names.
    """

    root: ir.Node
    definitions: dict
    locations: dict
    registry: Registry
    draft: int | None
    float_integers: bool
    _recursive: dict = field(default_factory=dict)
    targets: frozenset = frozenset()
    _builder: object = None

    def recursive(self, target: str) -> bool:
        """Whether the definition ``target`` reaches itself through references."""
        return target in self._recursive

    def cycle(self, target: str) -> frozenset:
        """The definitions that ``target`` reaches and that reach it through references (its
        strongly connected component; empty when ``target`` is not recursive)."""
        return self._recursive.get(target, frozenset())

    def define(self, location: str) -> str:
        """The name of the definition at ``location`` (a schema no reference names yet is
        built now, with what it reaches)."""
        b = self._builder
        key = b.key(location, b._entered((), self.registry.place(location).base))
        if key not in self.definitions:
            b.definition(location, ())
            self._recursive = _cycles(self.definitions, b.edges)
        return key

    @property
    def has_recursion(self) -> bool:
        return bool(self._recursive)

    def inlined_copies(self, limit: int) -> int:
        """How many definitions, the root included, inlining every reference would copy, counted
        up to ``limit`` (reached at once when a definition recurs): a schema naming a large
        definition from many places copies it as many times.

        >>> resolve({"$defs": {"a": {"type": "integer"}, "b": {"properties": {
        ...     "x": {"$ref": "#/$defs/a"}, "y": {"$ref": "#/$defs/a"}}}},
        ...     "items": [{"$ref": "#/$defs/b"}, {"$ref": "#/$defs/b"}]}).inlined_copies(100)
        7
        """
        if self._recursive:
            return limit
        edges = self._builder.edges
        copies: dict[str, int] = {}
        work = [""]
        while work:   # post-order over the (acyclic) references, each definition counted once
            k = work[-1]
            todo = [t for t in edges.get(k, ()) if t not in copies]
            if todo:
                work.extend(todo)
                continue
            work.pop()
            if k not in copies:
                copies[k] = min(limit, 1 + sum(copies[t] for t in edges.get(k, ())))
        return copies[""]


def resolve(schema, documents: Mapping[str, Any] | None = None) -> SchemaIR:
    """The intermediate form of ``schema`` (see the module docstring).

    Parameters
    ----------
    schema : dict or bool
    documents : mapping of str to dict or bool, optional
        Other schema documents by the absolute URI they are retrieved from.

    Returns
    -------
    SchemaIR

    Raises
    ------
    SchemaError
        Not JSON, nested too deeply, or a keyword value of the wrong shape (with its pointer).
    """
    check_json(schema)
    for uri, doc in (documents or {}).items():
        check_json(doc, f"{uri}#" if isinstance(uri, str) else "")
    registry = Registry(schema, documents)
    b = _Builder(registry)
    root = b.definition("", ())
    b.finish()
    declared = registry.draft
    out = SchemaIR(root, b.definitions, b.locations, registry, declared,
                   declared is not None and declared >= 6)
    out._recursive = _cycles(b.definitions, b.edges)
    out.targets = frozenset(t for ts in b.edges.values() for t in ts)
    out._builder = b
    return out


def _cycles(definitions: dict, edges: dict) -> dict:
    """The definitions on a cycle of references, each to its cycle: the definitions it reaches
    and that reach it (Tarjan's strongly connected components, without recursion)."""
    index, low, on, stack, out = {}, {}, set(), [], {}
    counter = 0
    for start in definitions:
        if start in index:
            continue
        work = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in edges.get(v, ()):
                    out.update(dict.fromkeys(comp, frozenset(comp)))
    return out


def _count(v, ptr: str, k: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or not float(v).is_integer():
        raise SchemaError(f"{k} must be a non-negative integer", ptr)
    return int(v)


def _number(v, ptr: str, k: str):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SchemaError(f"{k} must be a number", ptr)
    return v


def _schema_list(v, ptr: str, k: str, empty_ok: bool) -> list:
    if not isinstance(v, list) or (not v and not empty_ok):
        raise SchemaError(f"{k} must be a non-empty array of schemas", ptr)
    return v


def _names(v, ptr: str, k: str) -> tuple:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise SchemaError(f"{k} must be an array of strings", ptr)
    return tuple(dict.fromkeys(v))


def _map(v, ptr: str, k: str) -> dict:
    if not isinstance(v, dict):
        raise SchemaError(f"{k} must be an object", ptr)
    return v


def _types(v, ptr: str) -> frozenset:
    ts = [v] if isinstance(v, str) else v
    if not isinstance(ts, list) or not ts:
        raise SchemaError(f"type must be a string or a non-empty array, got {v!r}", ptr)
    for t in ts:
        if not isinstance(t, str) or t not in ALL_TYPES:
            raise SchemaError(f"unknown type {t!r}", ptr)
    out = frozenset(ts)
    return out | {"integer"} if "number" in out else out


class _Builder:
    def __init__(self, registry: Registry):
        self.reg = registry
        self.dynamic = registry.has_dynamic
        self.definitions: dict[str, ir.Node] = {}
        self.locations: dict[str, str] = {}
        self.edges: dict[str, list] = {}
        self._keys: dict[tuple, str] = {}
        self._pending: list = []
        self._refs: list | None = None  # Ref targets met while building one definition

    # ------------------------------------------------------------------ definitions
    def key(self, loc: str, scope: tuple) -> str:
        """The name of the definition at ``loc`` entered in ``scope``."""
        k = self._keys.get((loc, scope))
        if k is None:
            k = loc if not self._keys or not self.dynamic else f"{loc} (in {' > '.join(scope)})"
            if k in self.locations:
                k = f"{loc} (in {' > '.join(scope)})"
            self._keys[(loc, scope)] = k
            self.locations[k] = loc
        return k

    def definition(self, loc: str, scope: tuple) -> ir.Node:
        place = self.reg.place(loc)
        scope = self._entered(scope, place.base)
        key = self.key(loc, scope)
        if key not in self.definitions:
            self._pending.append((key, loc, scope))
            self.definitions[key] = None  # being built
            self.finish()
        return self.definitions[key]

    def finish(self) -> None:
        while self._pending:
            key, loc, scope = self._pending.pop()
            place = self.reg.place(loc)
            outer, self._refs = self._refs, []
            try:
                self.definitions[key] = self.schema(place.node, loc, place.base, place.draft,
                                                    scope, place.depth)
                self.edges[key] = self._refs
            finally:
                self._refs = outer

    def _entered(self, scope: tuple, base: str) -> tuple:
        if not self.dynamic:
            return ()
        resource = base.partition("#")[0]
        return scope if resource in scope else scope + (resource,)

    def ref(self, kind: str, value, ptr: str, base: str, scope: tuple, at: str) -> ir.Ref:
        """A ``$ref`` / ``$dynamicRef`` / ``$recursiveRef`` written at ``at`` (keyword pointer
        ``ptr``), resolved against ``base`` in ``scope``."""
        if not isinstance(value, str):
            raise SchemaError(f"{kind} must be a string, got {value!r}", ptr)
        if kind == "$recursiveRef":
            uri = self.reg.recursive_target(base, scope)
        else:
            uri = join_uri(base, value)
            if kind == "$dynamicRef" and self.dynamic:
                uri = self.reg.dynamic_target(uri, scope)
        node, loc = self.reg.resolve(uri, ptr)
        if loc is None:
            return ir.Ref(at, None, shown(uri))
        target_scope = self._entered(scope, self.reg.place(loc).base)
        key = self.key(loc, target_scope)
        if key not in self.definitions:
            self.definitions[key] = None
            self._pending.append((key, loc, target_scope))
        self._refs.append(key)
        return ir.Ref(at, key, shown(uri))

    # ------------------------------------------------------------------ one schema
    def schema(self, raw, loc: str, base: str, draft, scope: tuple, depth: int) -> ir.Node:
        if depth > MAX_NESTING:
            raise SchemaError(f"the schema nests deeper than {MAX_NESTING} subschemas", loc)
        if raw is True:
            return ir.Always(loc)
        if raw is False:
            return ir.Never(loc)
        if not isinstance(raw, dict):
            text = repr(raw)[:60]
            raise SchemaError(f"a schema must be an object or a boolean, got {text}", loc)
        place = self.reg.places.get(loc)
        if place is not None and place.node is raw:
            base, draft = place.base, place.draft
        scope = self._entered(scope, base)
        if draft is not None and draft <= 7 and "$ref" in raw:
            return self.ref("$ref", raw["$ref"], pointer(loc, "$ref"), base, scope, loc)

        def sub(value, *path) -> ir.Node:
            return self.schema(value, pointer(loc, *path), base, draft, scope, depth + 1)

        types = values = None
        values_ptr = ""
        unsupported: list = []
        s: dict = {}
        n: dict = {}
        a: dict = {}
        o: dict = {}
        app: dict = {}
        for k, v in raw.items():
            entry = keyword(k, draft)
            if entry is None:
                continue  # unknown: ignored, never walked
            p = pointer(loc, k)
            role = entry.lower
            if role == "types":
                types = _types(v, p)
            elif role == "values":
                if k == "const":
                    vals = (v,)
                elif isinstance(v, list):
                    vals = tuple(v)
                else:
                    raise SchemaError("enum must be an array", p)
                if values is not None:  # both const and enum: the values in both
                    keep = {ir.canonical(x) for x in vals}
                    vals = tuple(x for x in values if ir.canonical(x) in keep)
                values, values_ptr = vals, p
            elif role == "string":
                if k in ("minLength", "maxLength"):
                    s[k] = _count(v, p, k)
                elif not isinstance(v, str):
                    raise SchemaError(f"{k} must be a string", p)
                else:
                    s[k] = (v, p)
            elif role == "number":
                if k == "multipleOf":
                    if _number(v, p, k) <= 0:
                        raise SchemaError("multipleOf must be positive", p)
                    n[k] = (v, p)
                elif k.startswith("exclusive") and isinstance(v, bool):
                    n[k] = v
                else:
                    n[k] = _number(v, p, k)
            elif role == "array":
                if k in ("minItems", "maxItems", "minContains", "maxContains"):
                    a[k] = _count(v, p, k)
                elif k == "uniqueItems":
                    if not isinstance(v, bool):
                        raise SchemaError("uniqueItems must be a boolean", p)
                    a[k] = v
                elif k == "prefixItems" or (k == "items" and isinstance(v, list)):
                    a[k] = tuple(sub(x, k, i) for i, x in
                                 enumerate(_schema_list(v, p, k, True)))
                else:
                    a[k] = sub(v, k)
            elif role == "object":
                if k in ("minProperties", "maxProperties"):
                    o[k] = _count(v, p, k)
                elif k == "required":
                    o[k] = _names(v, p, k)
                elif k in ("properties", "patternProperties"):
                    o[k] = tuple((name, sub(x, k, name)) for name, x in _map(v, p, k).items())
                else:
                    o[k] = sub(v, k)
            elif role in ("applicator", "reference", "unevaluated"):
                app[k] = (v, p)
            elif role == "unsupported":
                unsupported.append((k, p))
            elif k == "$schema" and not isinstance(v, str):
                raise SchemaError(f"$schema must be a URI string, got {v!r}", p)
        applicators = self.applicators(app, loc, base, scope, sub)
        in_place = bool(set(app) & IN_PLACE)
        unevaluated_properties = unevaluated_items = None
        if "unevaluatedProperties" in app:
            u = sub(app["unevaluatedProperties"][0], "unevaluatedProperties")
            if in_place:
                unevaluated_properties = u
            elif "additionalProperties" not in o:
                o["additionalProperties"] = u  # nothing else evaluates: the same thing
        if "unevaluatedItems" in app:
            unevaluated_items = sub(app["unevaluatedItems"][0], "unevaluatedItems")
        assertions = ir.Assertions(loc, types, values, self.string(s, loc), self.number(n, loc),
                                   self.array(a, loc), self.object(o, loc), values_ptr,
                                   tuple(unsupported))
        plain = assertions.types is None and assertions.values is None and not any(
            (assertions.string, assertions.number, assertions.array, assertions.object,
             assertions.unsupported))
        if plain and unevaluated_properties is None and unevaluated_items is None:
            if not applicators:
                return ir.Always(loc)
            if len(applicators) == 1 and isinstance(applicators[0], ir.Ref):
                return applicators[0]
        return ir.Schema(loc, assertions, tuple(applicators), unevaluated_properties,
                         unevaluated_items)

    # ------------------------------------------------------------------ per type
    @staticmethod
    def string(s: dict, loc: str) -> ir.StringNode | None:
        if not s:
            return None
        lo, hi = s.get("minLength", 0), s.get("maxLength")
        pattern = s.get("pattern")      # (value, pointer)
        counted = counted_class(pattern[0]) if pattern is not None else None
        if counted is not None:
            # ^C{m,n}$: the class repeated, m..n characters long (a length the lowering counts)
            rewritten, m, n = counted
            pattern = (rewritten, pattern[1])
            lo = max(lo, m)
            hi = n if hi is None else hi if n is None else min(hi, n)
        return ir.StringNode(loc, lo, hi, (pattern,) if pattern is not None else (),
                             (s["format"],) if "format" in s else ())

    @staticmethod
    def number(n: dict, loc: str) -> ir.NumberNode | None:
        for side in ("Minimum", "Maximum"):  # drafts 3 and 4: a boolean moves the bound
            ex = n.get("exclusive" + side)
            if isinstance(ex, bool):
                del n["exclusive" + side]
                if ex and side.lower() in n:
                    n["exclusive" + side] = n.pop(side.lower())
        if not n:
            return None
        return ir.NumberNode(loc, n.get("minimum"), n.get("maximum"), n.get("exclusiveMinimum"),
                             n.get("exclusiveMaximum"),
                             (n["multipleOf"],) if "multipleOf" in n else ())

    @staticmethod
    def array(a: dict, loc: str) -> ir.ArrayNode | None:
        if not a:
            return None
        items = a.get("items")
        if isinstance(items, tuple):  # drafts before 2020-12: items as a list
            prefix, rest = items, a.get("additionalItems")
            rest_kw = "additionalItems"
        else:
            prefix, rest = a.get("prefixItems", ()), items
            rest_kw = "items"
        groups = ()
        if prefix or rest is not None:
            groups = (ir.Items(prefix, rest, pointer(loc, rest_kw) if rest is not None else loc),)
        contains = ()
        if "contains" in a:
            contains = (ir.Contains(a["contains"], a.get("minContains", 1), a.get("maxContains"),
                                    pointer(loc, "contains")),)
        if not groups and not contains and not set(a) & {"minItems", "maxItems", "uniqueItems"}:
            return None
        return ir.ArrayNode(loc, groups, contains, a.get("minItems", 0), a.get("maxItems"),
                            a.get("uniqueItems", False))

    @staticmethod
    def object(o: dict, loc: str) -> ir.ObjectNode | None:
        if not o:
            return None
        members = ()
        if set(o) & {"properties", "patternProperties", "additionalProperties"}:
            members = (ir.Members(o.get("properties"), o.get("patternProperties", ()),
                                  o.get("additionalProperties"), loc),)
        names = (o["propertyNames"],) if "propertyNames" in o else ()
        return ir.ObjectNode(loc, members, o.get("required", ()), (), names,
                             o.get("minProperties", 0), o.get("maxProperties"))

    # ------------------------------------------------------------------ applicators
    def applicators(self, app: dict, loc: str, base: str, scope: tuple, sub) -> list:
        """The applicators of one schema object, in the order the rewriting merges them."""
        out = []
        for kind in ("$ref", "$dynamicRef", "$recursiveRef"):
            if kind in app:
                v, p = app[kind]
                out.append(self.ref(kind, v, p, base, scope, loc))
        if "allOf" in app:
            v, p = app["allOf"]
            parts = tuple(sub(x, "allOf", i) for i, x in enumerate(_schema_list(v, p, "allOf", True)))
            if parts:
                out.append(ir.AllOf(loc, parts))
        for kind, cls in (("anyOf", ir.AnyOf), ("oneOf", ir.OneOf)):
            if kind in app:
                v, p = app[kind]
                out.append(cls(loc, tuple(sub(x, kind, i) for i, x in
                                          enumerate(_schema_list(v, p, kind, False)))))
        if "not" in app:
            out.append(ir.Not(pointer(loc, "not"), sub(app["not"][0], "not")))
        if "if" in app:
            then = sub(app["then"][0], "then") if "then" in app else ir.Always(pointer(loc, "then"))
            else_ = sub(app["else"][0], "else") if "else" in app else ir.Always(pointer(loc, "else"))
            out.append(ir.IfThenElse(loc, sub(app["if"][0], "if"), then, else_))
        for kind in ("dependentRequired", "dependentSchemas", "dependencies"):
            if kind not in app:
                continue
            v, p = app[kind]
            for name, dep in _map(v, p, kind).items():
                dp = pointer(p, name)
                if isinstance(dep, list):
                    if kind == "dependentSchemas":
                        raise SchemaError(f"{kind}/{name} must be a schema", dp)
                    required = _names(dep, dp, f"{kind}/{name}")
                    node = ir.Assertions(loc, object=ir.ObjectNode(loc, required=required)) \
                        if required else ir.Always(loc)
                elif kind == "dependentRequired":
                    raise SchemaError(f"dependentRequired/{name} must be an array", dp)
                else:
                    node = sub(dep, kind, name)
                out.append(ir.Dependent(loc, name, node))
        return out
