"""Serialise a JSON value the way the compiled automata write it: keys in schema order.

Used to check completeness (a valid instance, written under the same whitespace policy and key
order as the automaton, must be accepted) in tests and benchmarks.

The compiler rewrites a schema into alternatives of merged assertions (:mod:`.algebra`); an
object of one alternative has its declared keys in merge order (the names of every member group,
then the ``required`` names among none, then the undeclared keys). The merge concatenates, first
occurrence first, in the order of the intermediate form (:mod:`.ir`, :mod:`.resolve`): a schema's
own keywords, its ``$ref`` target, each ``allOf`` subschema, the ``anyOf`` branch, the ``oneOf``
branch (and the negations of the other branches), ``not``, ``if`` with ``then`` (or the negation
of ``if`` with ``else``), then each dependency whose key is present (the schema it depends on,
then the key). A negation adds the property whose value violates its schema. This module follows
the same rules on the *value*, over the same intermediate form: the branches an instance takes
are decided by validating it (:mod:`jsonschema`, a test dependency, imported only for schemas
with conditional applicators), never by looking at the automaton.

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
import re

from . import ir
from .resolve import resolve

__all__ = ["dumps_in_schema_order", "has_undeclared_keys"]

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
    return w.dump(value, [w.ir.root], sep)


def has_undeclared_keys(value, schema, documents=None) -> bool:
    """Whether some object in ``value`` has a key that the schema neither declares
    (``properties``, ``required``) nor constrains (``patternProperties`` or
    ``additionalProperties``) in the alternative the object belongs to: such an instance needs
    ``allow_extra_keys=True``."""
    w = _Writer(schema, documents)
    return w.undeclared(value, [w.ir.root])


class _Unevaluated:
    """``unevaluatedProperties`` of a schema on the alternative taken: applies to keys no side
    evaluates."""

    def __init__(self, schema):
        self.schema = schema


class _Writer:
    def __init__(self, schema, documents):
        if isinstance(schema, (str, bytes)):
            schema = json.loads(schema)
        self.ir = resolve(schema, documents)
        self.reg = self.ir.registry
        self._validator = None
        self.depth = 0

    # ------------------------------------------------------------------ validation (branches)
    def _uri(self, loc: str) -> str | None:
        """The absolute URI of the schema at location ``loc`` (its resource and the pointer
        inside it), None for a location the registry does not hold."""
        place = self.reg.places.get(loc)
        if place is None:
            return None
        base = place.base.partition("#")[0]
        root = self.reg.resources.get(base)
        if root is None or not loc.startswith(root):
            return None
        return base + "#" + loc[len(root):]

    def valid(self, node, value) -> bool:
        """Whether ``value`` passes ``node`` (composites by their parts, located schemas by
        jsonschema)."""
        if isinstance(node, ir.Always):
            return True
        if isinstance(node, ir.Never):
            return False
        if isinstance(node, ir.Ref):
            if node.target is None or self.depth > _MAX_REF_DEPTH:
                return True
            return self._valid_at(self.ir.locations[node.target], value)
        if isinstance(node, ir.AllOf):
            return all(self.valid(p, value) for p in node.parts)
        if isinstance(node, ir.AnyOf):
            return any(self.valid(p, value) for p in node.parts)
        if isinstance(node, ir.OneOf):
            return sum(self.valid(p, value) for p in node.parts) == 1
        if isinstance(node, ir.Not):
            return not self.valid(node.part, value)
        if isinstance(node, ir.IfThenElse):
            return self.valid(node.then if self.valid(node.cond, value) else node.else_, value)
        if isinstance(node, ir.Dependent):
            return not isinstance(value, dict) or node.name not in value or \
                self.valid(node.schema, value)
        if isinstance(node, ir.Assertions):  # a dependency's list of names
            obj = node.object
            return not isinstance(value, dict) or obj is None or all(r in value
                                                                      for r in obj.required)
        return self._valid_at(node.ptr, value)

    def _valid_at(self, loc: str, value) -> bool:
        uri = self._uri(loc)
        if uri is None:
            return True
        if self._validator is None:
            self._validator = _make_validator(self.reg)
        try:
            return self._validator.evolve(schema={"$ref": uri}).is_valid(value)
        except Exception:  # a schema jsonschema cannot read: take the branch
            return True

    # ------------------------------------------------------------------ one alternative
    def sides(self, node, value, track=False) -> list:
        """The assertions the compiler merges, in its order, for the alternative of ``node``
        that ``value`` belongs to."""
        if isinstance(node, (ir.Always, ir.Never)):
            return []
        if isinstance(node, ir.Ref):
            return self._through(node, lambda n: self.sides(n, value, track))
        if isinstance(node, ir.Assertions):
            return [node]
        if isinstance(node, ir.Schema):
            uneval = node.unevaluated_properties
            track = track or uneval is not None or node.unevaluated_items is not None
            out = [node.assertions] + ([_Unevaluated(uneval)] if uneval is not None else [])
            for a in node.applicators:
                out += self.sides(a, value, track)
            return out
        if isinstance(node, ir.AllOf):
            return [x for p in node.parts for x in self.sides(p, value, track)]
        if isinstance(node, ir.AnyOf):
            if track and len(node.parts) <= 3:
                return [x for p in node.parts for x in (
                    self.sides(p, value, track) if self.valid(p, value) else self.neg(p, value))]
            for p in node.parts:
                if self.valid(p, value):
                    return self.sides(p, value, track)
            return []
        if isinstance(node, ir.OneOf):
            passing = [i for i, p in enumerate(node.parts) if self.valid(p, value)]
            if not passing:
                return []
            i = passing[0]
            out = self.sides(node.parts[i], value, track)
            for j, o in enumerate(node.parts):
                if j != i:
                    out += self.neg(o, value)
            return out
        if isinstance(node, ir.Not):
            return self.neg(node.part, value)
        if isinstance(node, ir.IfThenElse):
            if self.valid(node.cond, value):
                return self.sides(node.cond, value, track) + self.sides(node.then, value, track)
            return self.neg(node.cond, value) + self.sides(node.else_, value, track)
        if isinstance(node, ir.Dependent):
            if isinstance(value, dict) and node.name in value:
                return self.sides(node.schema, value, track) + [_required(node.ptr, node.name)]
            return []
        return []

    def _through(self, ref: ir.Ref, then):
        if ref.target is None or self.depth > _MAX_REF_DEPTH:
            return []
        self.depth += 1
        try:
            return then(self.ir.definitions[ref.target])
        finally:
            self.depth -= 1

    def neg(self, node, value) -> list:
        """The assertions of the negation's alternative that ``value`` belongs to."""
        if isinstance(node, (ir.Always, ir.Never)):
            return []
        if isinstance(node, ir.Ref):
            return self._through(node, lambda n: self.neg(n, value))
        if isinstance(node, ir.Schema) and node.applicators:
            fails = [a for a in node.applicators if not self.valid(a, value)]
            if not fails:  # the schema's own assertions fail
                return self.neg(node.assertions, value)
            return self.neg(fails[0], value)
        if isinstance(node, ir.Schema):
            return self.neg(node.assertions, value)
        if isinstance(node, ir.AllOf):
            for p in node.parts:
                if not self.valid(p, value):
                    return self.neg(p, value)
            return []
        if isinstance(node, ir.AnyOf):
            if not any(self.valid(p, value) for p in node.parts):
                return [x for p in node.parts for x in self.neg(p, value)]
            return []
        if isinstance(node, ir.OneOf):
            passing = [i for i, p in enumerate(node.parts) if self.valid(p, value)]
            if not passing:
                return [x for p in node.parts for x in self.neg(p, value)]
            if len(passing) > 1:
                return self.sides(node.parts[passing[0]], value) + \
                    self.sides(node.parts[passing[1]], value)
            return []
        if isinstance(node, ir.Not):
            return self.sides(node.part, value) if self.valid(node.part, value) else []
        if isinstance(node, ir.IfThenElse):
            if self.valid(node.cond, value):
                if not self.valid(node.then, value):
                    return self.sides(node.cond, value) + self.neg(node.then, value)
            elif not self.valid(node.else_, value):
                return self.neg(node.cond, value) + self.neg(node.else_, value)
            return []
        if isinstance(node, ir.Dependent):
            if isinstance(value, dict) and node.name in value and \
                    not self.valid(node.schema, value):
                return [_required(node.ptr, node.name)] + self.neg(node.schema, value)
            return []
        if isinstance(node, ir.Assertions):
            return self._neg_assertions(node, value)
        return []

    def _neg_assertions(self, a: ir.Assertions, value) -> list:
        """A declared member whose value violates its schema (the structural negation the
        compiler writes for objects); nothing for the other alternatives."""
        obj = a.object
        if not isinstance(value, dict) or obj is None or a.values is not None:
            return []
        if a.types is not None and "object" not in a.types:
            return []
        if obj.witnesses or obj.forbidden or len(obj.members) > 1:
            return []
        if any(r not in value for r in obj.required):
            return []
        lo, hi = obj.min_properties, obj.max_properties
        if len(value) < lo or (hi is not None and len(value) > hi):
            return []
        for g in obj.members:
            for name, sub in g.properties or ():
                if isinstance(sub, ir.Always):
                    continue
                if name in value and not self.valid(sub, value[name]):
                    at = sub.ptr
                    group = ir.Members(((name, ir.Not(at, sub)),), (), None, at, negated=True)
                    return [ir.Assertions(at, frozenset({"object"}), object=ir.ObjectNode(
                        at, members=(group,), required=(name,)))]
        return []

    # ------------------------------------------------------------------ merged view
    @staticmethod
    def _groups(sides):
        for s in sides:
            if isinstance(s, ir.Assertions) and s.object is not None:
                yield from s.object.members

    def order(self, sides) -> list:
        props: dict = {}
        req: dict = {}
        for g in self._groups(sides):
            for n in g.names():
                props.setdefault(n, None)
        for s in sides:
            if isinstance(s, ir.Assertions) and s.object is not None:
                for n in s.object.required:
                    req.setdefault(n, None)
        return list(props) + [r for r in req if r not in props]

    def member_schemas(self, sides, name) -> list:
        """What the merged alternative says about the value of member ``name``."""
        out = []
        groups = list(self._groups(sides))
        for g in groups:
            own = [s for n, s in g.properties or () if n == name]
            matched = [s for p, s in g.patterns if _search(p, name)]
            out += own + matched
            if not own and not matched and g.additional is not None:
                out.append(g.additional)
        if not any(name in g.names() or any(_search(p, name) for p, _ in g.patterns)
                   or g.additional is not None for g in groups):
            out += [s.schema for s in sides if isinstance(s, _Unevaluated)]
        return [x for x in out if not isinstance(x, ir.Always)]

    @staticmethod
    def item_schemas(sides, i) -> list:
        out = []
        for s in sides:
            if isinstance(s, ir.Assertions) and s.array is not None:
                for g in s.array.items:
                    if i < len(g.prefix):
                        out.append(g.prefix[i])
                    elif g.rest is not None:
                        out.append(g.rest)
        return [x for x in out if not isinstance(x, ir.Always)]

    # ------------------------------------------------------------------ writing
    def dump(self, value, nodes, sep) -> str:
        sides = [x for n in nodes for x in self.sides(n, value)] \
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

    def undeclared(self, value, nodes) -> bool:
        if not isinstance(value, (dict, list)):
            return False
        sides = [x for n in nodes for x in self.sides(n, value)]
        if isinstance(value, list):
            return any(self.undeclared(v, self.item_schemas(sides, i)) for i, v in enumerate(value))
        groups = list(self._groups(sides))
        declared = set(self.order(sides))
        # a key only a negation names (the positive side declares properties, not this key) is
        # undeclared, as the compiler reads it
        positive = {n for g in groups if not g.negated for n in g.names()}
        if any(g.properties is not None and not g.negated for g in groups):
            negated = {n for g in groups if g.negated for n in g.names()}
            declared = {n for n in declared if n in positive or n not in negated}
        loose = any(g.additional is not None for g in groups) or \
            any(isinstance(s, _Unevaluated) for s in sides)
        patterns = [p for g in groups for p, _ in g.patterns]
        constrained = any(isinstance(s, ir.Assertions) and s.object is not None for s in sides)
        for k, v in value.items():
            if constrained and k not in declared and not loose and \
                    not any(_search(p, k) for p in patterns):
                return True
            if self.undeclared(v, self.member_schemas(sides, k)):
                return True
        return False


def _required(ptr: str, name: str) -> ir.Assertions:
    return ir.Assertions(ptr, frozenset({"object"}), object=ir.ObjectNode(ptr, required=(name,)))


def _search(pattern, name) -> bool:
    try:
        return re.search(pattern, name) is not None
    except (re.error, TypeError):
        return False


def _make_validator(reg):
    """A jsonschema validator that knows the registry's resources and reads the older drafts'
    keywords the compiler reads (``dependencies``, ``items`` as a list)."""
    import jsonschema
    from jsonschema import _keywords, _legacy_keywords
    from referencing import Registry as RefRegistry, Resource
    from referencing.jsonschema import DRAFT202012

    root = reg.root
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
    pairs = [(uri, Resource(contents=reg.places[loc].node, specification=spec))
             for uri, loc in reg.resources.items() if loc in reg.places]
    registry = RefRegistry().with_resources(pairs)
    return cls(root, registry=registry)
