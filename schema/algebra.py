"""One algebra over the intermediate form: conjunction, disjunction and negation of schemas.

Intersecting the *texts* of two object schemas is wrong whenever they declare different keys
(each writes its own keys only), so a schema is first rewritten into a disjunction of
:class:`Alternative`\\ s (a disjunctive normal form): each holds one merged
:class:`~.ir.Assertions` (every object keyword of every conjunct, so that one object automaton
has all their keys) and *residual* conjuncts that stay text operations (a reference whose target
is being compiled, intersected; a complement of scalar or array texts, subtracted).

* Conjunction merges assertions keyword by keyword as the keyword table (:mod:`.keywords`)
  says: the larger minimum, the smaller maximum, the union of required names, the intersection
  of enums and types; a group (``properties`` with ``patternProperties`` and
  ``additionalProperties``; ``items`` with ``prefixItems``; ``contains`` with its counts) is
  kept whole beside the other conjuncts' groups, and the lowering applies every group to every
  member (so a key one conjunct declares also meets the other's ``additionalProperties``).
* Negation is De Morgan on applicators and, on assertions, the table's rule per keyword: the
  other types, a text complement of scalars (exact: those texts hold every spelling of their
  values), structurally on objects (a missing required name, the opposite property count, a
  declared member whose value violates its schema, a member that *witnesses* a violated
  ``patternProperties``/``additionalProperties``/``propertyNames``) and on arrays (an item that
  violates its schema, ``contains`` its negation; the opposite item count), or a text
  complement of arrays where a keyword has no such rule (``contains``, ``uniqueItems``) or the
  compiler is lenient (quicker, exact where the items' texts hold every spelling).
* ``unevaluatedProperties``/``unevaluatedItems`` see what the passing subschemas of each
  alternative evaluate (:class:`Evaluated`, tracked while rewriting; ``anyOf`` with tracking
  spells out which branches pass).

Alternatives that cannot hold a value (no type left, an enum emptied, a required name that must
be absent or whose declared values contradict each other) are dropped as they appear, which keeps
discriminated ``oneOf``\\ s small (a branch is disjoint from another whose discriminator differs,
so its negation need not be taken). When a rewriting would still pass
:data:`MAX_ALTERNATIVES`, :meth:`Rewriter.alternatives` returns None and the lowering takes set
operations on texts instead, exact or refused (:mod:`.lower`).

Example
-------
>>> from tokenfsm.schema.resolve import resolve
>>> ir = resolve({"allOf": [{"properties": {"a": {}}, "required": ["a"]},
...                         {"properties": {"b": {}}}]})
>>> [alt] = Rewriter(ir).alternatives(ir.root)
>>> obj = alt.assertions.object
>>> [g.names() for g in obj.members], obj.required
([('a',), ('b',)], ('a',))

The rewriting is the disjunctive normal form of the keyword semantics of JSON Schema 2020-12,
the way xgrammar's and llguidance's converters flatten ``allOf``; structural negation is the
De Morgan reading of the same semantics.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from itertools import product
from typing import Callable

from . import ir
from .errors import UnsupportedSchema
from .keywords import ALL_TYPES, KEYWORDS
from .refs import pointer

__all__ = ["Alternative", "Evaluated", "Rewriter", "conjoin", "MAX_ALTERNATIVES", "TOP"]

#: A rewriting into more alternatives than this is left to set operations on texts.
MAX_ALTERNATIVES = 128
#: ``oneOf`` with more branches than this is not negated structurally (its negation holds every
#: pair of branches).
MAX_NEGATED_ONE_OF = 6

NON_OBJECT = frozenset(ALL_TYPES - {"object"})
SCALAR = frozenset(NON_OBJECT - {"array"})
TOP = ir.Assertions("")


# ---------------------------------------------------------------- what passing subschemas evaluate

@dataclass(frozen=True)
class Evaluated:
    """Properties and items the passing subschemas of an alternative evaluate.

    ``contains``: the ``contains`` schemas (items they match are evaluated)."""

    names: tuple = ()
    patterns: tuple = ()
    all_properties: bool = False
    prefix: int = 0
    all_items: bool = False
    contains: tuple = ()

    def __and__(self, other: "Evaluated") -> "Evaluated":
        return Evaluated(_union(self.names, other.names), _union(self.patterns, other.patterns),
                         self.all_properties or other.all_properties,
                         max(self.prefix, other.prefix), self.all_items or other.all_items,
                         _union(self.contains, other.contains))


NOTHING_EVALUATED = Evaluated()


def _own_evaluation(a: ir.Assertions) -> Evaluated:
    names, patterns, all_p, prefix, all_i, contains = (), (), False, 0, False, ()
    if a.object is not None:
        for g in a.object.members:
            names = _union(names, g.names())
            patterns = _union(patterns, tuple(p for p, _ in g.patterns))
            all_p = all_p or g.additional is not None
    if a.array is not None:
        for g in a.array.items:
            prefix = max(prefix, len(g.prefix))
            all_i = all_i or g.rest is not None
        contains = tuple(c.schema for c in a.array.contains)
    return Evaluated(names, patterns, all_p, prefix, all_i, contains)


@dataclass(frozen=True, eq=False)
class Alternative:
    """One disjunct of a rewritten schema.

    Attributes
    ----------
    assertions : Assertions
        Every assertion of the conjuncts, merged.
    residual : tuple
        ``(kind, node)`` pairs: ``"schema"`` (intersect with the node's texts) or
        ``"complement"`` (subtract them).
    ptr : str
        Where the alternative comes from (warnings name it).
    evaluated : Evaluated or None
        What its passing subschemas evaluate (only while some ``unevaluated*`` needs it).
    """

    assertions: ir.Assertions
    residual: tuple = ()
    ptr: str = ""
    evaluated: Evaluated | None = None


# ---------------------------------------------------------------- merging assertions

def _union(a: tuple, b: tuple) -> tuple:
    if not a:
        return b
    if not b:
        return a
    seen = set(map(_key, a))
    return a + tuple(x for x in b if _key(x) not in seen)


def _key(x):
    """Identity for nodes and parts; for names and ``(value, pointer)`` pairs the value, under
    JSON Schema equality (``multipleOf: 2`` and ``2.0`` are one)."""
    if isinstance(x, (ir.Node, ir._Part)):
        return id(x)
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], (str, int, float)):
        return ir.canonical(x[0])
    return ir.canonical(x)


def _lower_bound(a, b):
    return b if a is None else a if b is None else max(a, b)


def _upper_bound(a, b):
    return b if a is None else a if b is None else min(a, b)


_MERGE: dict[str, Callable] = {
    "max": _lower_bound,
    "min": _upper_bound,
    "union": _union,
    "both": _union,
    "group": _union,
}

#: How the internal fields (facts no keyword writes) merge.
_INTERNAL_MERGE = {"forbidden": "union", "witnesses": "both"}


def _field_merges() -> dict:
    """Per node class, each field's merge rule, from the keyword table."""
    out: dict = {}
    for cls, lower in ((ir.StringNode, "string"), (ir.NumberNode, "number"),
                       (ir.ArrayNode, "array"), (ir.ObjectNode, "object")):
        rules = {}
        for k in KEYWORDS.values():
            if k.lower == lower and k.field is not None:
                rules[k.field] = k.merge
        for f in fields(cls):
            if f.name != "ptr":
                rules.setdefault(f.name, _INTERNAL_MERGE.get(f.name, "both"))
        out[cls] = {f: _MERGE[m] for f, m in rules.items()}
    return out


_FIELD_MERGES = _field_merges()


def _merge_node(x, y):
    if x is None:
        return y
    if y is None or x is y:
        return x
    rules = _FIELD_MERGES[type(x)]
    return type(x)(x.ptr, **{f: rule(getattr(x, f), getattr(y, f)) for f, rule in rules.items()})


def _intersect_types(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _intersect_values(a, b):
    if a is None:
        return b
    if b is None:
        return a
    keep = {ir.canonical(x) for x in b}
    return tuple(x for x in a if ir.canonical(x) in keep)


def trivial(a: ir.Assertions) -> bool:
    """Whether ``a`` asserts nothing."""
    return a.types is None and a.values is None and not any(
        (a.string, a.number, a.array, a.object, a.unsupported))


def conjoin(a: ir.Assertions, b: ir.Assertions) -> ir.Assertions:
    """The conjunction of two sets of assertions, merged as the keyword table says."""
    if a is TOP or trivial(a):
        return b
    if b is TOP or a is b or trivial(b):
        return a
    types = _intersect_types(a.types, b.types)
    obj = _merge_node(a.object, b.object)
    if obj is not None and set(obj.required) & set(obj.forbidden):
        # an object that must both have and lack a key cannot exist
        types = (types if types is not None else ALL_TYPES) - {"object"}
    return ir.Assertions(a.ptr or b.ptr, types, _intersect_values(a.values, b.values),
                         _merge_node(a.string, b.string), _merge_node(a.number, b.number),
                         _merge_node(a.array, b.array), obj, a.values_ptr or b.values_ptr,
                         _union(a.unsupported, b.unsupported))


def _value_type(v) -> str:
    t = ir.json_type(v)
    return "integer" if t == "number" and float(v).is_integer() else t


def _allows(types, v) -> bool:
    t = _value_type(v)
    return types is None or t in types or (t == "integer" and "number" in types)


# ---------------------------------------------------------------- the rewriter

class Rewriter:
    """Rewrites nodes of one :class:`~.resolve.SchemaIR` into alternatives.

    Parameters
    ----------
    schema_ir : SchemaIR
    kept_as_text : callable, optional
        ``kept_as_text(target)``: whether a reference to ``target`` stays a residual (a
        recursive target being compiled: the lowering follows it and counts the depth) rather
        than being expanded in place. Default: never for targets not on a cycle.
    unsupported : callable, optional
        ``unsupported(msg, ptr, keyword)``: report what cannot be enforced (raise or warn).
    scalar_alternatives : int or None
        See :meth:`alternatives`.
    item_negations : bool
        Negate array keywords structurally (an item outside its schema is a ``contains`` of its
        negation): exact where the items' texts miss spellings of their values (objects), at the
        cost of lowering those negations. False: the negation of arrays is a complement of their
        texts, as of scalars (quicker; inexact there, which the lenient compiler warns of).
    """

    def __init__(self, schema_ir, kept_as_text=None, unsupported=None,
                 scalar_alternatives: int | None = None, item_negations: bool = True):
        self.ir = schema_ir
        self.scalar_alternatives = scalar_alternatives
        self.item_negations = item_negations
        self.kept_as_text = kept_as_text or (lambda target: False)
        self.unsupported = unsupported or _raise_unsupported
        #: targets expanded in place since the caller last looked (they count as entered while
        #: the alternatives, which hold their subschemas, are lowered)
        self.inlined: list[str] = []

    # ------------------------------------------------------------------ entry
    def alternatives(self, node: ir.Node) -> list[Alternative] | None:
        """``node`` as a disjunction of alternatives; None: more than :data:`MAX_ALTERNATIVES`,
        or more than ``scalar_alternatives`` of which none constrains objects or arrays (see
        :data:`~.tuning.SCALAR_ALTERNATIVES`)."""
        alts = self._dnf(node, frozenset(), False)
        if alts is not None and self.scalar_alternatives is not None and \
                len(alts) > self.scalar_alternatives and \
                all(a.assertions.object is None and a.assertions.array is None for a in alts):
            return None
        return alts

    # ------------------------------------------------------------------ positive
    def _dnf(self, node, expanding: frozenset, track: bool):
        if isinstance(node, ir.Always):
            return [Alternative(TOP, (), node.ptr, NOTHING_EVALUATED if track else None)]
        if isinstance(node, ir.Never):
            return []
        if isinstance(node, ir.Assertions):
            return [Alternative(node, (), node.ptr, _own_evaluation(node) if track else None)]
        if isinstance(node, ir.Ref):
            inline = self._inline(node, expanding)
            if inline is None:
                return [Alternative(TOP, (("schema", node),), node.ptr,
                                    NOTHING_EVALUATED if track else None)]
            return self._dnf(inline, expanding | {node.target}, track)
        if isinstance(node, ir.Schema):
            return self._schema(node, expanding, track)
        if isinstance(node, ir.AllOf):
            return self._conjunction([self._dnf(p, expanding, track) for p in node.parts])
        if isinstance(node, ir.AnyOf):
            subs = node.parts
            if track and len(subs) <= 3:
                # every passing branch evaluates: one alternative per set of passing branches
                return self._disjunction([
                    self._conjunction([self._dnf(s, expanding, track) if mask >> i & 1
                                       else self._negate(s, expanding) for i, s in enumerate(subs)])
                    for mask in range(1, 1 << len(subs))])
            # with tracking, an alternative then ignores what other passing branches evaluate:
            # unevaluatedProperties is applied to more keys (sound)
            return self._disjunction([self._dnf(s, expanding, track) for s in subs])
        if isinstance(node, ir.OneOf):
            return self._one_of(node, expanding, track)
        if isinstance(node, ir.Not):
            return self._negate(node.part, expanding)
        if isinstance(node, ir.IfThenElse):
            return self._disjunction([
                self._conjunction([self._dnf(node.cond, expanding, track),
                                   self._dnf(node.then, expanding, track)]),
                self._conjunction([self._negate(node.cond, expanding),
                                   self._dnf(node.else_, expanding, track)])])
        if isinstance(node, ir.Dependent):
            # other types pass; an object lacks the key, or has it and meets the schema (the
            # keys it depends on are written before it)
            lacks = ir.Assertions(node.ptr, object=ir.ObjectNode(node.ptr, forbidden=(node.name,)))
            has = ir.Assertions(node.ptr, object=ir.ObjectNode(node.ptr, required=(node.name,)))
            return self._disjunction([
                [Alternative(lacks, (), node.ptr)],
                self._conjunction([self._dnf(node.schema, expanding, track),
                                   [Alternative(has, (), node.ptr)]])])
        raise TypeError(f"not a node: {node!r}")  # pragma: no cover

    def _inline(self, ref: ir.Ref, expanding: frozenset):
        """The definition a reference is expanded into in place, or None to keep it as text."""
        if ref.target is None:
            self.unsupported(f"$ref {ref.shown!r} is not local", ref.ptr, "$ref")
            return ir.Always(ref.ptr)
        if ref.target in expanding or (self.ir.recursive(ref.target)
                                       and self.kept_as_text(ref.target)):
            return None
        if ref.target not in self.inlined:  # one level of depth however often it is inlined
            self.inlined.append(ref.target)
        return self.ir.definitions[ref.target]

    def _schema(self, node: ir.Schema, expanding, track):
        uneval_p, uneval_i = node.unevaluated_properties, node.unevaluated_items
        track = track or uneval_p is not None or uneval_i is not None
        own = Alternative(node.assertions, (), node.ptr,
                          _own_evaluation(node.assertions) if track else None)
        # (a oneOf beside the schema's own keywords: its branches disjoint within them, such as
        # objects tagged by an enum under "type": "object", need not negate one another)
        out = self._conjunction([[own]] + [
            self._one_of(a, expanding, track, node.assertions) if isinstance(a, ir.OneOf)
            else self._dnf(a, expanding, track) for a in node.applicators])
        if out is None:
            return None
        if uneval_p is not None:
            at = pointer(node.ptr, "unevaluatedProperties")
            out = [self._unevaluated_properties(a, uneval_p, at) for a in out]
        if uneval_i is not None:
            at = pointer(node.ptr, "unevaluatedItems")
            out = [self._unevaluated_items(a, uneval_i, at) for a in out]
        return out

    def _one_of(self, node: ir.OneOf, expanding, track, context: ir.Assertions = TOP):
        """The branches of ``node``, each with the negations of those it may meet; ``context``:
        assertions that hold wherever the oneOf is read (its schema's own), within which two
        branches may be disjoint."""
        subs = node.parts
        positive = [self._dnf(s, expanding, track) for s in subs]
        branches = []
        for i, s in enumerate(subs):
            parts = [positive[i]]
            for j, o in enumerate(subs):
                if j != i and not self._disjoint(positive[i], positive[j], context):
                    parts.append(self._negate(o, expanding))
            branches.append(self._conjunction(parts))
        return self._disjunction(branches)

    def _disjoint(self, a, b, context: ir.Assertions = TOP) -> bool:
        """Whether no alternative of ``a`` meets one of ``b`` where ``context`` holds (then
        ``a`` implies ``not b`` there)."""
        if a is None or b is None or len(a) * len(b) > MAX_ALTERNATIVES:
            return False
        for x, y in product(a, b):
            if x.residual or y.residual or not _empty(
                    conjoin(conjoin(context, x.assertions), y.assertions), self):
                return False
        return True

    # ------------------------------------------------------------------ negative
    def _negate(self, node, expanding: frozenset):
        if isinstance(node, ir.Always):
            return []
        if isinstance(node, ir.Never):
            return [Alternative(TOP, (), node.ptr)]
        if isinstance(node, ir.Assertions):
            return self._negate_assertions(node, None)
        if isinstance(node, ir.Ref):
            if node.target is None:
                self.unsupported(f"$ref {node.shown!r} is not local", node.ptr, "$ref")
                return []
            inline = self._inline(node, expanding)
            if inline is None:
                return [Alternative(TOP, (("complement", node),), node.ptr)]
            return self._negate(inline, expanding | {node.target})
        if isinstance(node, ir.Schema):
            if node.unevaluated_properties is not None or (
                    node.unevaluated_items is not None and node.applicators):
                kw = "unevaluatedProperties" if node.unevaluated_properties is not None \
                    else "unevaluatedItems"
                self.unsupported(f"{kw} next to in-place applicators under not, oneOf or if, "
                                 "or among too many alternatives", pointer(node.ptr, kw), kw)
            if not node.applicators:
                return self._negate_assertions(node.assertions, node)
            # not (A and B and ...) = not A or not B or ...
            parts = []
            if not trivial(node.assertions):
                parts.append(self._negate_assertions(node.assertions, None))
            parts += [self._negate(a, expanding) for a in node.applicators]
            return self._disjunction(parts)
        if isinstance(node, ir.AllOf):
            return self._disjunction([self._negate(p, expanding) for p in node.parts])
        if isinstance(node, ir.AnyOf):
            return self._conjunction([self._negate(p, expanding) for p in node.parts])
        if isinstance(node, ir.OneOf):
            # none passes, or two (or more) pass
            subs = node.parts
            parts = [self._conjunction([self._negate(s, expanding) for s in subs])]
            if len(subs) > MAX_NEGATED_ONE_OF:
                return None
            for i in range(len(subs)):
                for j in range(i + 1, len(subs)):
                    parts.append(self._conjunction([self._dnf(subs[i], expanding, False),
                                                    self._dnf(subs[j], expanding, False)]))
            return self._disjunction(parts)
        if isinstance(node, ir.Not):
            return self._dnf(node.part, expanding, False)
        if isinstance(node, ir.IfThenElse):
            return self._disjunction([
                self._conjunction([self._dnf(node.cond, expanding, False),
                                   self._negate(node.then, expanding)]),
                self._conjunction([self._negate(node.cond, expanding),
                                   self._negate(node.else_, expanding)])])
        if isinstance(node, ir.Dependent):
            # the key is present and what it depends on fails
            return self._conjunction([
                [Alternative(_object(node.ptr, required=(node.name,)), (), node.ptr)],
                self._negate(node.schema, expanding)])
        raise TypeError(f"not a node: {node!r}")  # pragma: no cover

    def _negate_assertions(self, a: ir.Assertions, whole) -> list[Alternative] | None:
        """``not a``: values of other types, texts of scalars not in ``a`` (a text complement,
        exact: see :mod:`.jsontext`), arrays and objects that violate ``a`` structurally (arrays
        also by a text complement where a keyword has no structural negation).
        ``whole``: the node the complement is taken of when it is more than ``a``."""
        ptr = a.ptr
        whole = whole if whole is not None else a
        types = a.types if a.types is not None else ALL_TYPES
        arrays = _negate_array(a, types, whole) if self.item_negations else None
        alts = [Alternative(ir.Assertions(ptr, NON_OBJECT if arrays is None else SCALAR),
                            (("complement", whole),), ptr)] + (arrays or [])
        if "object" not in types:
            alts.append(Alternative(ir.Assertions(ptr, frozenset({"object"})), (), ptr))
            return alts
        obj = a.object
        if a.values is not None:
            if any(isinstance(v, dict) for v in a.values):
                alts.append(Alternative(_object(ptr), (("complement", whole),), ptr))
            else:
                alts.append(Alternative(_object(ptr), (), ptr))  # no object is in the enum
            return alts
        if obj is None:
            return alts  # every object is valid
        if obj.witnesses or obj.forbidden or len(obj.members) > 1:
            alts.append(Alternative(_object(ptr), (("complement", whole),), ptr))
            return alts
        for name, rule in _object_keywords(obj):
            alts += _NEGATIONS[KEYWORDS[name].negate](obj, name, ptr)
        return alts if len(alts) <= MAX_ALTERNATIVES else None

    # ------------------------------------------------------------------ products and sums
    def _conjunction(self, parts: list):
        if any(p is None for p in parts):
            return None  # too many alternatives somewhere: the caller takes texts
        alts = parts[0]
        for p in parts[1:]:
            if len(alts) * len(p) > MAX_ALTERNATIVES:
                return None
            nxt = []
            for x in alts:
                for y in p:
                    merged = conjoin(x.assertions, y.assertions)
                    if _empty(merged, self):
                        continue
                    ev = x.evaluated if y.evaluated is None else \
                        y.evaluated if x.evaluated is None else x.evaluated & y.evaluated
                    nxt.append(Alternative(merged, x.residual + y.residual, x.ptr, ev))
            alts = nxt
        return alts

    @staticmethod
    def _disjunction(parts: list):
        if any(p is None for p in parts):
            return None
        out = [a for p in parts for a in p]
        return out if len(out) <= MAX_ALTERNATIVES else None

    # ------------------------------------------------------------------ unevaluated*
    def _evaluated(self, alt: Alternative, keyword: str, ptr: str) -> Evaluated:
        """What the passing subschemas of ``alt`` evaluate, with what its residual subschemas
        evaluate statically; a residual whose evaluation depends on the instance makes
        ``keyword`` unsupported."""
        ev = alt.evaluated or NOTHING_EVALUATED
        whole = "all_properties" if keyword == "unevaluatedProperties" else "all_items"
        for kind, r in alt.residual:
            if kind == "schema" and not getattr(ev, whole):
                more = self._static_evaluation(r, set())
                if more is None:
                    self.unsupported(f"{keyword} next to a subschema kept as text "
                                     "(a recursive $ref) with conditional applicators", ptr,
                                     keyword)
                    continue
                ev = ev & more
        return ev

    def _static_evaluation(self, node, seen: set) -> Evaluated | None:
        """What ``node`` evaluates when that does not depend on the instance (its in-place
        applicators are only ``allOf`` and ``$ref``, followed, recursion included)."""
        if isinstance(node, (ir.Always, ir.Never)):
            return NOTHING_EVALUATED
        if isinstance(node, ir.Assertions):
            return _own_evaluation(node)
        if isinstance(node, ir.Ref):
            if node.target is None:
                return None
            if node.target in seen:
                return NOTHING_EVALUATED
            seen.add(node.target)
            return self._static_evaluation(self.ir.definitions[node.target], seen)
        if isinstance(node, ir.AllOf):
            out = NOTHING_EVALUATED
            for p in node.parts:
                more = self._static_evaluation(p, seen)
                if more is None:
                    return None
                out = out & more
            return out
        if isinstance(node, ir.Schema):
            out = _own_evaluation(node.assertions)
            if node.unevaluated_properties is not None:
                out = out & Evaluated(all_properties=True)
            if node.unevaluated_items is not None:
                out = out & Evaluated(all_items=True)
            for a in node.applicators:
                more = self._static_evaluation(a, seen) \
                    if isinstance(a, (ir.AllOf, ir.Ref)) else None
                if more is None:
                    return None
                out = out & more
            return out
        return None

    def _unevaluated_properties(self, alt: Alternative, schema: ir.Node, ptr: str):
        """Members of ``alt`` that its passing subschemas do not evaluate must have values in
        ``schema``: one more member group, which names what is evaluated and leaves the rest to
        ``schema``."""
        ev = self._evaluated(alt, "unevaluatedProperties", ptr)
        if ev.all_properties:
            return alt
        group = ir.Members(tuple((n, ir.Always(ptr)) for n in ev.names),
                           tuple((p, ir.Always(ptr)) for p in ev.patterns), schema, ptr)
        a = conjoin(alt.assertions, ir.Assertions(ptr, object=ir.ObjectNode(ptr, members=(group,))))
        done = Evaluated(ev.names, ev.patterns, True, ev.prefix, ev.all_items, ev.contains)
        return Alternative(a, alt.residual, alt.ptr, done)

    def _unevaluated_items(self, alt: Alternative, schema: ir.Node, ptr: str):
        """Items of ``alt`` past what its passing subschemas evaluate (the longest prefix, unless
        some ``items`` takes them all) must match one of their ``contains`` or ``schema``."""
        ev = self._evaluated(alt, "unevaluatedItems", ptr)
        if ev.all_items:
            return alt
        allowed = schema if not ev.contains else ir.AnyOf(ptr, (schema,) + tuple(ev.contains))
        group = ir.Items(tuple(ir.Always(ptr) for _ in range(ev.prefix)), allowed, ptr)
        a = conjoin(alt.assertions, ir.Assertions(ptr, array=ir.ArrayNode(ptr, items=(group,))))
        done = Evaluated(ev.names, ev.patterns, ev.all_properties, ev.prefix, True, ev.contains)
        return Alternative(a, alt.residual, alt.ptr, done)


def _raise_unsupported(msg, ptr, keyword=None):
    raise UnsupportedSchema(msg, ptr, keyword)


def _object(ptr: str, **kw) -> ir.Assertions:
    return ir.Assertions(ptr, frozenset({"object"}), object=ir.ObjectNode(ptr, **kw))


def _array(ptr: str, **kw) -> ir.Assertions:
    return ir.Assertions(ptr, frozenset({"array"}), array=ir.ArrayNode(ptr, **kw))


def _empty(a: ir.Assertions, rw: Rewriter | None = None) -> bool:
    """Whether no value can meet ``a``, as far as cheap checks tell (types, listed values, a
    required property that must be absent, that some schema object allows no value of
    (``additionalProperties: false`` without a pattern, the name not declared), or whose
    declared values contradict each other)."""
    if a.is_empty():
        return True
    if a.values is not None and not any(_allows(a.types, v) for v in a.values):
        return True
    obj = a.object
    if obj is None or a.types is None or a.types - {"object"} or rw is None or \
            not obj.required:
        return False
    if set(obj.required) & set(obj.forbidden):
        return True
    closed = [set(g.names()) for g in obj.members if not g.negated and not g.patterns
              and g.additional is not None and _never(g.additional, rw)]
    for name in obj.required:
        if any(name not in names for names in closed):
            return True
        merged = TOP
        for g in obj.members:
            for n, s in g.properties or ():
                if n == name:
                    flat = _flat(s, rw)
                    if flat is None:
                        break
                    merged = conjoin(merged, flat)
        if merged.is_empty() or (merged.values is not None and not any(
                _allows(merged.types, v) for v in merged.values)):
            return True
    return False


def _never(node, rw: Rewriter) -> bool:
    """Whether ``node`` is known to allow no value (``false``, or assertions of no type)."""
    flat = _flat(node, rw)
    return flat is not None and flat.is_empty()


def _flat(node, rw: Rewriter):
    """The assertions of a node that is nothing more (following references), or None."""
    for _ in range(8):
        if isinstance(node, ir.Ref) and node.target is not None:
            node = rw.ir.definitions[node.target]
        else:
            break
    if isinstance(node, ir.Never):
        return ir.Assertions(node.ptr, frozenset())
    if isinstance(node, ir.Assertions):
        return node
    if isinstance(node, ir.Schema) and not node.applicators and \
            node.unevaluated_properties is None and node.unevaluated_items is None:
        return node.assertions
    return None


# -------------------------------------------------- structural negation of objects and arrays

def _object_keywords(obj: ir.ObjectNode):
    """The object keywords an (unmerged) object node holds, with their values."""
    if obj.required:
        yield "required", obj.required
    if obj.min_properties:
        yield "minProperties", obj.min_properties
    if obj.max_properties is not None:
        yield "maxProperties", obj.max_properties
    for g in obj.members:
        if g.properties:
            yield "properties", g
        if g.patterns:
            yield "patternProperties", g
        if g.additional is not None:
            yield "additionalProperties", g
    if obj.names:
        yield "propertyNames", obj.names


def _array_keywords(arr: ir.ArrayNode):
    """The array keywords an (unmerged) array node holds, with their values."""
    if arr.items:
        yield "items", arr.items
    if arr.min_items:
        yield "minItems", arr.min_items
    if arr.max_items is not None:
        yield "maxItems", arr.max_items
    if arr.contains:
        yield "contains", arr.contains
    if arr.unique:
        yield "uniqueItems", arr.unique


def _negate_array(a: ir.Assertions, types, whole) -> list[Alternative] | None:
    """``not a`` on arrays, structurally: the arrays that break one of ``a``'s array keywords
    (as :data:`_NEGATIONS` says: an item outside its schema, too few or too many items). None
    where ``a`` allows no array (the complement of texts that hold none is every array, exact),
    or where some keyword's negation is a text complement (``contains``, ``uniqueItems``,
    ``items`` after ``prefixItems``; listed values; an ``unevaluatedItems`` beside): the caller
    takes the complement of the arrays' texts."""
    ptr = a.ptr
    if "array" not in types or a.values is not None or \
            getattr(whole, "unevaluated_items", None) is not None:
        return None
    out: list = []
    for name, _ in _array_keywords(a.array) if a.array is not None else ():
        negate = _NEGATIONS.get(KEYWORDS[name].negate)
        got = negate(a.array, name, ptr) if negate is not None else None
        if got is None:
            return None
        out += got
    return out


def _negate_items(arr, name, ptr):
    """Some item is outside its schema: at an index of ``prefixItems``, that item's negation;
    past them, where there are none, ``contains`` the negation of ``items``. None where
    ``items`` follows ``prefixItems`` (an item past the prefix is not what ``contains``
    reads)."""
    out = []
    for g in arr.items:
        rest = None if isinstance(g.rest, ir.Always) else g.rest
        if g.prefix and rest is not None:
            return None
        for i, p in enumerate(g.prefix):
            if not isinstance(p, ir.Always):
                at = pointer(g.ptr, "prefixItems", i)
                first = tuple(ir.Always(at) for _ in range(i)) + (ir.Not(at, p),)
                out.append(Alternative(_array(at, items=(ir.Items(first, None, at),),
                                              min_items=i + 1), (), at))
        if rest is not None:
            at = pointer(g.ptr, "items")
            out.append(Alternative(_array(at, contains=(ir.Contains(ir.Not(at, rest), 1, None,
                                                                    at),)), (), at))
    return out


def _negate_required(obj, name, ptr):
    return [Alternative(_object(ptr, forbidden=(r,)), (), ptr) for r in obj.required]


def _negate_count(node, name, ptr):
    """Too few or too many members or items."""
    make, field, flipped, shift = _FLIPPED_COUNTS[name]
    return [Alternative(make(ptr, **{flipped: getattr(node, field) + shift}), (), ptr)]


#: A count keyword: the node it bounds, its field, the field of its negation, and the shift
_FLIPPED_COUNTS = {
    "minProperties": (_object, "min_properties", "max_properties", -1),
    "maxProperties": (_object, "max_properties", "min_properties", 1),
    "minItems": (_array, "min_items", "max_items", -1),
    "maxItems": (_array, "max_items", "min_items", 1),
}


def _negate_member(obj, name, ptr):
    """Some declared member is present with a value its schema rejects."""
    out = []
    for g in obj.members:
        for n, s in g.properties or ():
            if isinstance(s, ir.Always):
                continue
            at = pointer(ptr, "properties", n)
            group = ir.Members(((n, ir.Not(at, s)),), (), None, at, negated=True)
            out.append(Alternative(_object(at, required=(n,), members=(group,)), (), at))
    return out


def _negate_by_witness(obj, name, ptr):
    """Some member violates ``patternProperties``, ``additionalProperties`` or
    ``propertyNames``: a witness member."""
    out = []
    if name == "patternProperties":
        for g in obj.members:
            for pat, s in g.patterns:
                if not isinstance(s, ir.Always):
                    at = pointer(ptr, "patternProperties", pat)
                    out.append(_witness(("pattern", pat), ir.Not(at, s), at))
    elif name == "additionalProperties":
        for g in obj.members:
            if g.additional is not None and not isinstance(g.additional, ir.Always):
                at = pointer(ptr, "additionalProperties")
                keys = ("undeclared", g.names(), tuple(p for p, _ in g.patterns))
                out.append(_witness(keys, ir.Not(at, g.additional), at))
    else:
        for s in obj.names:
            if not isinstance(s, ir.Always):
                at = pointer(ptr, "propertyNames")
                out.append(_witness(("names-not", s), ir.Always(at), at))
    return out


def _witness(keys: tuple, value: ir.Node, ptr: str) -> Alternative:
    return Alternative(_object(ptr, witnesses=(ir.Witness(keys, value, ptr),)), (), ptr)


#: The structural negation of each object and array keyword, by the rule its table entry names
#: (``"complement"``: none, the texts' complement is taken).
_NEGATIONS = {
    "forbid": _negate_required,
    "flip-count": _negate_count,
    "member": _negate_member,
    "witness": _negate_by_witness,
    "some-item": _negate_items,
}
