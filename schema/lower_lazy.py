"""Schemas whose values are counted: strings and arrays as pieces of a lazy network.

The flat lowering copies what a schema counts: ``{"type": "string", "maxLength": 5000}`` is 5,000
copies of a character's spellings, ``"minItems": 10**6`` a million copies of an item. Here the
intermediate form decides, per node, whether a node is **inlined** (its flat automaton, lowered as
always, becomes a plain piece) or becomes a **counted piece** of a
:class:`~tokenfsm.automata.network.Network` (:mod:`.lazy_json`): one copy of the string body or
of the item, and a count bounded by the node's limits held in the walk's configuration. A node is
counted when its estimated size (:attr:`.ir.Node.size`) passes :data:`LAZY_STATES` and its shape
is one a piece holds (:func:`counted_shape`); its children are decided the same way, so an array
of long strings is a counted piece calling a counted piece.

A string's length bounds under ``excludes`` multiply: the flat route builds their product with
the exclusions up to :data:`.lower_scalars.EXCLUDED_BOUNDS_STATES` states and drops the bounds
past it, with a warning; a counted string keeps them at any size (the size the decision reads is
that product's, :func:`flat_size`).

Example
-------
>>> from tokenfsm.schema import compile_json_schema
>>> cs = compile_json_schema({"type": "string", "maxLength": 10**9})
>>> cs.lazy is not None, cs.accepts('"' + "x" * 5000 + '"')
(True, True)
>>> cs = compile_json_schema({"type": "array", "items": {"type": "integer"}, "minItems": 3})
>>> cs.lazy is None                                     # small: the flat automaton
True

Counting instead of copying is the idea of counting automata (Turonova et al., OOPSLA 2020).
"""

from __future__ import annotations

from tokenfsm.automata.errors import NondeterministicCall
from tokenfsm.automata.network import Network

from . import ir
from .lazy_json import array_piece, string_piece, value_piece
from .lower_scalars import exclusion_states

__all__ = ["LAZY_STATES", "counted_shape", "flat_size", "lazy_form"]

#: A node whose estimated flat size (:attr:`.ir.Node.size`) passes this many states, and whose
#: shape a counted piece holds, is counted rather than copied. The regex route's threshold
#: (:data:`tokenfsm.automata.lazy_regex.LAZY_REPEAT_STATES`), measured there: below it the flat
#: index fills masks fastest and builds fast enough; above it its build time grows with the copies.
LAZY_STATES = 500


def _plain(node) -> ir.Assertions | None:
    """The assertions of a schema object with nothing but assertions (no applicators, no
    ``unevaluated*``, no ``const``/``enum``), else None."""
    if not isinstance(node, ir.Schema) or node.applicators:
        return None
    if node.unevaluated_items is not None or node.unevaluated_properties is not None:
        return None
    a = node.assertions
    if a.values is not None or a.unsupported:
        return None
    return a


def counted_shape(node) -> str | None:
    """``"string"`` or ``"array"`` when ``node`` is a value a counted piece holds exactly, else
    None: a string with only length bounds, or an array of items (leading ones of their own) with
    only item counts, each a schema of that one type with nothing else."""
    a = _plain(node)
    if a is None or a.types is None or len(a.types) != 1:
        return None
    (t,) = a.types
    if t == "string" and a.array is None and a.object is None and a.number is None:
        s = a.string
        if s is None or not (s.patterns or s.formats):
            return "string"
    if t == "array" and a.string is None and a.object is None and a.number is None:
        arr = a.array
        if arr is None or (len(arr.items) <= 1 and not arr.contains and not arr.unique):
            return "array"
    return None


def flat_size(node, excludes) -> int:
    """The estimated flat size of a node of a counted shape: :attr:`.ir.Node.size`, times the
    exclusion automaton's states for a bounded string under ``excludes`` (the product)."""
    size = node.size
    s = node.assertions.string if isinstance(node, ir.Schema) else None
    if excludes and s is not None and (s.min_length or s.max_length is not None):
        size *= exclusion_states(excludes)
    return size


def lazy_form(lw, root, threshold: int | None = LAZY_STATES):
    """The :class:`~tokenfsm.automata.lazy_bytes.LazyBytes` of ``root`` when it is counted
    (see the module docstring), or None: the flat route then lowers it (a threshold of None
    never counts). Nodes inlined in it are lowered by ``lw`` (a
    :class:`~.lower.Lowering`), as the flat route would."""
    if threshold is None or counted_shape(root) is None or flat_size(root, lw.excludes) <= threshold:
        return None
    net = Network(lw.budget)
    memo: dict = {}

    def piece_of(node) -> int:
        got = memo.get(id(node))
        if got is not None:
            return got[1]
        shape = counted_shape(node)
        if shape is None or flat_size(node, lw.excludes) <= threshold:
            # inlined: the flat route's automaton of this value, as one plain piece
            p = value_piece(net, lw.lower(node).to_dfa(lw.budget).minimize())
        elif shape == "string":
            s = node.assertions.string
            lo, hi = (0, None) if s is None else (s.min_length, s.max_length)
            p = string_piece(net, lo, hi, excludes=lw.excludes)
        else:
            arr = node.assertions.array or ir.ArrayNode(node.ptr)
            group = arr.items[0] if arr.items else ir.Items((), None, node.ptr)
            prefix = [piece_of(x) for x in group.prefix]
            rest = ir.ALWAYS if group.rest is None else group.rest
            items = None if isinstance(rest, ir.Never) else piece_of(rest)
            p = array_piece(net, prefix, items, lw.ws, arr.min_items, arr.max_items)
        memo[id(node)] = (node, p)
        return p

    top = piece_of(root)
    try:
        return net.build(top)
    except NondeterministicCall:
        return None
