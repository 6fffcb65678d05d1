"""Listed values (``const``, ``enum``) checked against the rest of their schema one by one.

A schema that lists its values and also asserts something of them (``{"enum": [[1], [1, 2]],
"minItems": 2}``, an ``anyOf`` of enums under an ``if``) needs no product of automata: each value
either passes the other assertions or not, and the texts of the passing ones are the answer.
:func:`passing` decides that per value, from the intermediate form (:mod:`.ir`), and says
"cannot tell" (None) wherever the verdict could depend on what the automata decide rather than
the values (``pattern``, ``format``, the assertions the compiler does not enforce,
``unevaluated*``, witnesses of negated members), or on which keys an object's automaton allows
and in which order (see :func:`holds`): the lowering then builds the product as before.

Where ``1.0`` is not an integer, a verdict may also depend on how the value's integral numbers
are spelled (``{"bar": 2}`` meets ``{"bar": {"type": "integer"}}`` written ``{"bar":2}``, not
``{"bar":2.0}``). Up to :data:`SPELLED_MAX` such numbers, the value is checked once per way of
spelling them, integer or not, and the ways that pass are kept as values whose numbers are
:class:`~.ir.Spelled`.

Example
-------
>>> from tokenfsm.schema.resolve import resolve
>>> sir = resolve({"enum": [[1], [1, 2], "ab", 3.5], "minItems": 2, "maxLength": 1})
>>> passing(sir.root.assertions, sir)
([1, 2], 3.5)
>>> sir = resolve({"enum": ["a1", "b"], "pattern": "[0-9]"})
>>> passing(sir.root.assertions, sir) is None      # patterns are the automata's to decide
True
>>> sir = resolve({"enum": [[2], [2.5]], "items": {"type": "integer"}})
>>> passing(sir.root.assertions, sir)        # no draft declared: [2] passes, [2.0] does not
([Spelled(value=2, integer=True)],)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from . import ir
from .numbers import _to_fraction

__all__ = ["passing", "holds", "SPELLED_MAX"]

#: Most integral numbers of one listed value whose spellings are told apart (where ``1.0`` is
#: no integer): the value is checked ``2 ** n`` times, once per way of spelling them.
SPELLED_MAX = 3

#: References followed into definitions before the verdict is given up (a definition that
#: refers to itself without descending into the value would otherwise never end).
MAX_REF_DEPTH = 64


def passing(a: ir.Assertions, schema_ir, free_objects: bool = False,
            residual: tuple = ()) -> tuple | None:
    """The values ``a`` lists that meet ``a``'s other assertions, in order; None when that of
    some value cannot be told from the value alone (see the module and :func:`holds`).

    ``residual``: ``(kind, node)`` pairs of an alternative (:class:`.algebra.Alternative`) that
    the values must also meet (``"schema"``) or fail (``"complement"``)."""
    cx = _Context(schema_ir, free_objects)
    rest = ir.replace(a, values=None)

    def verdict(v) -> bool | None:
        return _all([_holds(rest, v, cx, 0)] + [
            _holds(node, v, cx, 0) if kind == "schema" else _not_of(_holds(node, v, cx, 0))
            for kind, node in residual])

    kept = []
    for v in a.values:
        ok = verdict(v)
        if ok is None:
            # (where 1.0 is no integer, the verdict may hang on how v's numbers are spelled)
            got = None if schema_ir.float_integers else _by_spelling(v, verdict)
            if got is None:
                return None
            kept += got
        elif ok:
            kept.append(v)
    return tuple(kept)


def _by_spelling(v, verdict) -> list | None:
    """The ways of spelling ``v``'s integral numbers (integer or not, as :class:`~.ir.Spelled`)
    that pass ``verdict``: ``[v]`` if all do; None if one cannot be told, or ``v`` has none
    or more than :data:`SPELLED_MAX` such numbers."""
    n = _integral_count(v)
    if not 0 < n <= SPELLED_MAX:
        return None
    ways = [_spelled(v, iter(bits)) for bits in itertools.product((True, False), repeat=n)]
    oks = [verdict(w) for w in ways]
    if None in oks:
        return None
    return [v] if all(oks) else [w for w, ok in zip(ways, oks) if ok]


def _integral(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and \
        _to_fraction(v).denominator == 1


def _integral_count(v) -> int:
    if isinstance(v, list):
        return sum(map(_integral_count, v))
    if isinstance(v, dict):
        return sum(map(_integral_count, v.values()))
    return int(_integral(v))


def _spelled(v, bits):
    """``v`` with its integral numbers, in order, spelled as ``bits`` says (a Spelled each)."""
    if isinstance(v, list):
        return [_spelled(x, bits) for x in v]
    if isinstance(v, dict):
        return {k: _spelled(x, bits) for k, x in v.items()}
    return ir.Spelled(v, next(bits)) if _integral(v) else v


def _not_of(ok: bool | None) -> bool | None:
    return None if ok is None else not ok


def holds(node: ir.Node, value, schema_ir, free_objects: bool = False) -> bool | None:
    """Whether the JSON value ``value`` meets ``node`` (True or False), or None when that cannot
    be told from the value alone.

    ``free_objects``: the automata write an object's keys in any order and allow undeclared
    ones (``property_order="any"`` with ``allow_extra_keys=True``), so that every spelling of a
    passing object is theirs too. Otherwise an object with keys that an object schema declares
    (``properties``, ``required``, a dependency's name) is left to the automata: which keys
    they allow, and in which order, is their policy, not the value's."""
    return _holds(node, value, _Context(schema_ir, free_objects), 0)


@dataclass(frozen=True)
class _Context:
    sir: object
    free_objects: bool


def _holds(node, v, cx: _Context, depth: int) -> bool | None:
    check = _CHECKS.get(type(node))
    return None if check is None else check(node, v, cx, depth)


def _decided(verdicts, winner: bool) -> bool | None:
    """``winner`` if some verdict is, else None if some cannot be told, else ``not winner``:
    an and over the verdicts (``winner`` False) or an or (True)."""
    out: bool | None = not winner
    for ok in verdicts:
        if ok is winner:
            return winner
        if ok is None:
            out = None
    return out


def _all(verdicts) -> bool | None:
    return _decided(verdicts, False)


def _any(verdicts) -> bool | None:
    return _decided(verdicts, True)


def _assertions(a: ir.Assertions, v, cx, depth) -> bool | None:
    if a.unsupported:
        return None
    t = ir.json_type(v)
    if a.types is not None and t not in a.types:
        if t != "number" or "integer" not in a.types:
            return False
        if isinstance(v, ir.Spelled):
            if not v.integer:
                return False
        elif _to_fraction(v).denominator != 1:
            return False
        elif not cx.sir.float_integers:
            return None     # 1 is an integer, 1.0 not: the verdict depends on the spelling
    if a.values is not None and not any(ir.json_equal(v, x) for x in a.values):
        return False
    node = {"string": a.string, "number": a.number, "array": a.array, "object": a.object}.get(t)
    return True if node is None else _holds(node, v, cx, depth)


def _string(s: ir.StringNode, v, cx, depth) -> bool | None:
    if not isinstance(v, str):
        return True
    if s.patterns or s.formats:
        return None
    return s.min_length <= len(v) and (s.max_length is None or len(v) <= s.max_length)


def _number(n: ir.NumberNode, v, cx, depth) -> bool | None:
    if ir.json_type(v) != "number":
        return True
    x = _to_fraction(v.value if isinstance(v, ir.Spelled) else v)
    bounds = ((n.minimum, lambda b: x >= b), (n.maximum, lambda b: x <= b),
              (n.exclusive_minimum, lambda b: x > b), (n.exclusive_maximum, lambda b: x < b))
    if any(isinstance(b, bool) for b, _ in bounds):
        return None
    if any(b is not None and not ok(_to_fraction(b)) for b, ok in bounds):
        return False
    return all((x / _to_fraction(m)).denominator == 1 for m, _ in n.multiple_of)


def _array(node: ir.ArrayNode, v, cx, depth) -> bool | None:
    if not isinstance(v, list):
        return True
    if len(v) < node.min_items or (node.max_items is not None and len(v) > node.max_items):
        return False
    if node.unique and len({ir.canonical(x) for x in v}) < len(v):
        return False
    checks = []
    for g in node.items:
        for i, x in enumerate(v):
            item = g.prefix[i] if i < len(g.prefix) else g.rest
            if item is not None:
                checks.append(_holds(item, x, cx, depth))
    for c in node.contains:
        found = [_holds(c.schema, x, cx, depth) for x in v]
        if None in found:
            checks.append(None)
            continue
        n = sum(found)
        checks.append(c.min <= n and (c.max is None or n <= c.max))
    return _all(checks)


def _object(node: ir.ObjectNode, v, cx, depth) -> bool | None:
    if not isinstance(v, dict):
        return True
    if node.witnesses or (v and (node.members or node.required) and not cx.free_objects):
        return None
    if len(v) < node.min_properties or (node.max_properties is not None
                                        and len(v) > node.max_properties):
        return False
    if any(r not in v for r in node.required) or any(f in v for f in node.forbidden):
        return False
    checks = [_holds(n, k, cx, depth) for n in node.names for k in v]
    for g in node.members:
        if g.patterns or g.negated:
            return None
        declared = dict(g.properties or ())
        for k, x in v.items():
            sub = declared.get(k, g.additional)
            if sub is not None:
                checks.append(_holds(sub, x, cx, depth))
    return _all(checks)


def _schema(s: ir.Schema, v, cx, depth) -> bool | None:
    if s.unevaluated_properties is not None or s.unevaluated_items is not None:
        return None
    return _all([_holds(s.assertions, v, cx, depth)]
                + [_holds(p, v, cx, depth) for p in s.applicators])


def _one_of(n: ir.OneOf, v, cx, depth) -> bool | None:
    got = [_holds(p, v, cx, depth) for p in n.parts]
    if got.count(True) > 1:
        return False
    return None if None in got else got.count(True) == 1


def _not(n: ir.Not, v, cx, depth) -> bool | None:
    return _not_of(_holds(n.part, v, cx, depth))


def _if(n: ir.IfThenElse, v, cx, depth) -> bool | None:
    cond = _holds(n.cond, v, cx, depth)
    if cond is None:
        return None
    return _holds(n.then if cond else n.else_, v, cx, depth)


def _dependent(n: ir.Dependent, v, cx, depth) -> bool | None:
    if not isinstance(v, dict) or n.name not in v:
        return True
    if not cx.free_objects:
        return None     # the name is then a key the automaton writes: see _object
    return _holds(n.schema, v, cx, depth)


def _ref(r: ir.Ref, v, cx, depth) -> bool | None:
    node = cx.sir.definitions.get(r.target) if r.target is not None else None
    if node is None or depth >= MAX_REF_DEPTH:
        return None
    return _holds(node, v, cx, depth + 1)


#: How each kind of node is checked against a value; a kind not listed cannot be told.
_CHECKS = {
    ir.Always: lambda n, v, cx, depth: True,
    ir.Never: lambda n, v, cx, depth: False,
    ir.Assertions: _assertions,
    ir.StringNode: _string,
    ir.NumberNode: _number,
    ir.ArrayNode: _array,
    ir.ObjectNode: _object,
    ir.Schema: _schema,
    ir.AllOf: lambda n, v, cx, depth: _all(_holds(p, v, cx, depth) for p in n.parts),
    ir.AnyOf: lambda n, v, cx, depth: _any(_holds(p, v, cx, depth) for p in n.parts),
    ir.OneOf: _one_of,
    ir.Not: _not,
    ir.IfThenElse: _if,
    ir.Dependent: _dependent,
    ir.Ref: _ref,
}
