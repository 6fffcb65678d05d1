"""The intermediate form: a resolved JSON Schema as immutable dataclasses.

:mod:`.resolve` turns the user's schema (any draft, references resolved) into these nodes once;
nothing downstream reads the user's dicts again, and nothing is ever written into them. Each
node carries the JSON pointer (location) it came from and a size estimate (:attr:`Node.size`,
states of its automaton: cheap, and monotone enough to decide whether a piece is inlined or
called).

Assertions, one node per JSON type (other types pass them):

* :class:`StringNode`, :class:`NumberNode`, :class:`ArrayNode`, :class:`ObjectNode`;
* :class:`Assertions`: the assertions of one schema object (``type``, ``const``/``enum`` values,
  and one node per type), which is also the merged conjunction :mod:`.algebra` builds.

Combinators: :class:`Schema` (one schema object: its assertions and its applicators, in order),
:class:`AllOf`, :class:`AnyOf`, :class:`OneOf`, :class:`Not`, :class:`IfThenElse`,
:class:`Dependent` (``dependentSchemas``/``dependentRequired``) and :class:`Ref` (a named definition, for recursion and sharing; :class:`~.resolve.SchemaIR` maps
names to nodes). ``True`` and ``False`` are :data:`ALWAYS` and :data:`NEVER`.

What the rewriting needs to know about an alternative (names that must be absent, properties
only a negation names, members that witness a violation, what passing subschemas evaluate) is a
typed field of these nodes (:class:`Members`, :class:`Witness`, ...) or of the alternatives
:mod:`.algebra` builds, never a keyword.

Example
-------
>>> s = StringNode("/properties/a", min_length=2, max_length=4)
>>> s.size, s.ptr
(6, '/properties/a')
>>> json_equal(1, 1.0), json_equal(True, 1), json_equal({"a": [1]}, {"a": [1.0]})
(True, False, True)
>>> json_type(True), json_type(2.5), json_type({})
('boolean', 'number', 'object')

Node types per JSON type and combinator follow the shape of xgrammar's and llguidance's schema
converters; frozen dataclasses as an intermediate form are the usual compiler practice (an AST
after name resolution).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

__all__ = ["Node", "Always", "Never", "ALWAYS", "NEVER", "StringNode", "NumberNode", "Items",
           "Contains", "ArrayNode", "Members", "Witness", "ObjectNode", "Assertions", "Schema", "AllOf", "AnyOf",
           "OneOf", "Not", "IfThenElse", "Dependent", "Ref", "Spelled", "canonical",
           "json_equal", "json_type", "replace"]


@dataclass(frozen=True)
class Spelled:
    """A number of a listed value in some of its spellings only: those of an integer (``2``)
    when ``integer``, else the others (``2.0``). Where ``1.0`` is no integer, whether a value
    passes may depend on how its integral numbers are spelled; :func:`.listed.passing` then
    keeps the spellings that pass. Equal to its number, as JSON values are."""

    value: int | float
    integer: bool


def canonical(v) -> Any:
    """A hashable form of a JSON value under JSON Schema equality (``1 == 1.0``, ``True != 1``,
    objects regardless of key order)."""
    if isinstance(v, bool) or v is None:
        return ("lit", v)
    if isinstance(v, Spelled):
        v = v.value
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isfinite(v) and v == int(v):
            v = int(v)
        return ("num", v)
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, list):
        return ("arr", tuple(canonical(x) for x in v))
    if isinstance(v, dict):
        return ("obj", tuple(sorted((k, canonical(x)) for k, x in v.items())))
    return ("other", repr(v))


def json_type(v) -> str:
    """The JSON type of a value: ``null``, ``boolean``, ``number`` (integers too), ``string``,
    ``array`` or ``object``."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float, Spelled)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def json_equal(a, b) -> bool:
    """JSON Schema equality of two values."""
    return canonical(a) == canonical(b)


@dataclass(frozen=True, eq=False)
class Node:
    """A node of the intermediate form (identity equality: nodes are built once and shared).

    Attributes
    ----------
    ptr : str
        The location it came from: a JSON pointer in the root schema (``""`` is the root), or
        ``"<uri>#<pointer>"`` in a supplied document.
    """

    ptr: str

    @cached_property
    def size(self) -> int:
        """Estimated states of this node's automaton."""
        return 1 + sum(_size_of(getattr(self, f.name)) for f in fields(self) if f.name != "ptr")

    def children(self) -> list:
        """The nodes directly below this one."""
        out: list = []
        for name in field_names(type(self)):
            _nodes_in(getattr(self, name), out)
        return out


def field_names(cls) -> tuple:
    """The names of the fields of a node or part class, in order (read once per class: the
    walks over a schema's nodes ask for them at every node)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


_FIELD_NAMES: dict = {}     # (one entry per class of this module)


def _nodes_in(v, out: list) -> None:
    if isinstance(v, Node):
        out.append(v)
    elif isinstance(v, tuple):
        for x in v:
            _nodes_in(x, out)
    elif isinstance(v, _Part):
        for name in field_names(type(v)):
            _nodes_in(getattr(v, name), out)


def _size_of(v) -> int:
    if isinstance(v, Node):
        return v.size
    if isinstance(v, tuple):
        return sum(_size_of(x) for x in v)
    if isinstance(v, _Part):
        return sum(_size_of(getattr(v, f.name)) for f in fields(v) if f.name != "ptr")
    return 0


class _Part:
    """A typed field value that holds nodes (walked by :meth:`Node.children`)."""


#: Fields that hold ``(value, pointer)`` pairs (the pointer says where each value was written).
WITH_POINTERS = frozenset({"patterns", "formats", "multiple_of"})


# ---------------------------------------------------------------- true and false

@dataclass(frozen=True, eq=False)
class Always(Node):
    """``true`` (or ``{}``): every value."""

    @cached_property
    def size(self) -> int:
        return 64


@dataclass(frozen=True, eq=False)
class Never(Node):
    """``false``: no value."""

    @cached_property
    def size(self) -> int:
        return 1


ALWAYS = Always("")
NEVER = Never("")


# ---------------------------------------------------------------- one node per JSON type

@dataclass(frozen=True, eq=False)
class StringNode(Node):
    """String assertions (other types pass). ``patterns``/``formats``: ``(value, pointer)``
    pairs, every one of which must hold."""

    min_length: int = 0
    max_length: int | None = None
    patterns: tuple = ()
    formats: tuple = ()

    @cached_property
    def size(self) -> int:
        bound = self.max_length if self.max_length is not None else self.min_length
        return (2 + max(bound, self.min_length) + sum(len(p) for p, _ in self.patterns)
                + 32 * len(self.formats))


@dataclass(frozen=True, eq=False)
class NumberNode(Node):
    """Number assertions (other types pass; whether integers only is the ``type``'s say).
    ``multiple_of``: every value must hold."""

    minimum: Any = None
    maximum: Any = None
    exclusive_minimum: Any = None
    exclusive_maximum: Any = None
    multiple_of: tuple = ()

    @cached_property
    def size(self) -> int:
        return 8 + 8 * len(self.multiple_of)


@dataclass(frozen=True, eq=False)
class Items(_Part):
    """``prefixItems`` and ``items`` of one schema object: item ``i`` is in ``prefix[i]``, items
    past the prefix in ``rest`` (None: any)."""

    prefix: tuple
    rest: Node | None
    ptr: str


@dataclass(frozen=True, eq=False)
class Contains(_Part):
    """``contains`` with its counts: between ``min`` and ``max`` items are in ``schema``."""

    schema: Node
    min: int
    max: int | None
    ptr: str


@dataclass(frozen=True, eq=False)
class ArrayNode(Node):
    """Array assertions (other types pass). ``items``/``contains``: every group must hold."""

    items: tuple = ()
    contains: tuple = ()
    min_items: int = 0
    max_items: int | None = None
    unique: bool = False

    @cached_property
    def size(self) -> int:
        per_item = sum(_size_of(g) for g in self.items) or 64
        copies = 1 + max([len(g.prefix) for g in self.items] + [0])
        if self.max_items is not None:
            copies = max(copies, min(self.max_items, 1 << 16))
        copies = max(copies, min(self.min_items, 1 << 16))
        return 2 + copies * per_item + sum(_size_of(c) for c in self.contains)


@dataclass(frozen=True, eq=False)
class Members(_Part):
    """``properties``, ``patternProperties`` and ``additionalProperties`` of one schema object.

    ``properties`` is None when the keyword is absent (an empty tuple when it is ``{}``).
    ``negated``: written by a negation (a member whose value violates its schema), so its names
    are not declared by the schema's positive side."""

    properties: tuple | None
    patterns: tuple
    additional: Node | None
    ptr: str
    negated: bool = False

    def names(self) -> tuple:
        return tuple(n for n, _ in self.properties or ())


@dataclass(frozen=True, eq=False)
class Witness(_Part):
    """Some member has a key in ``keys`` and a value in ``value`` (how a negated
    ``patternProperties``, ``additionalProperties`` or ``propertyNames`` is written).

    ``keys`` is ``("pattern", regex)``, ``("undeclared", names, regexes)`` (keys neither named
    nor matched) or ``("names-not", node)`` (names the node rejects)."""

    keys: tuple
    value: Node
    ptr: str


@dataclass(frozen=True, eq=False)
class ObjectNode(Node):
    """Object assertions (other types pass).

    ``members``: every group must hold (see :class:`Members`); ``required`` in order;
    ``forbidden``: names that must be absent; ``names``: ``propertyNames`` schemas, every one
    must hold; ``witnesses``: see :class:`Witness`."""

    members: tuple = ()
    required: tuple = ()
    forbidden: tuple = ()
    names: tuple = ()
    min_properties: int = 0
    max_properties: int | None = None
    witnesses: tuple = ()

    @cached_property
    def size(self) -> int:
        n = 2
        for g in self.members:
            for name, v in g.properties or ():
                n += len(name) + 4 + v.size
            n += sum(len(p) + v.size for p, v in g.patterns)
            n += _size_of(g.additional)
        return n + sum(len(r) + 4 for r in self.required) + sum(_size_of(w) for w in self.witnesses)


@dataclass(frozen=True, eq=False)
class Assertions(Node):
    """The assertions of one schema object, or a merged conjunction of several.

    ``types`` is None (any type) or a frozenset of type names (``number`` implies
    ``integer``); ``values`` None or a tuple of JSON values (``const``/``enum``, found at
    ``values_ptr``); one node per type, None where nothing constrains that type;
    ``unsupported``: ``(keyword, pointer)`` of string assertions the compiler does not enforce
    (refused in strict mode where strings are lowered)."""

    types: frozenset | None = None
    values: tuple | None = None
    string: StringNode | None = None
    number: NumberNode | None = None
    array: ArrayNode | None = None
    object: ObjectNode | None = None
    values_ptr: str = ""
    unsupported: tuple = ()

    @cached_property
    def size(self) -> int:
        if self.values is not None:
            return 1 + sum(len(repr(v)) for v in self.values)
        return 1 + sum(_size_of(x) for x in (self.string, self.number, self.array, self.object))

    def is_empty(self) -> bool:
        """Whether no value can pass (no type left, or no value listed)."""
        return (self.types is not None and not self.types) or self.values == ()


# ---------------------------------------------------------------- combinators

@dataclass(frozen=True, eq=False)
class Schema(Node):
    """One schema object: its assertions, then its applicators in the order the rewriting
    merges them (``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``, dependencies),
    and its ``unevaluatedProperties``/``unevaluatedItems`` (None: absent)."""

    assertions: Assertions
    applicators: tuple = ()
    unevaluated_properties: Node | None = None
    unevaluated_items: Node | None = None


@dataclass(frozen=True, eq=False)
class AllOf(Node):
    parts: tuple


@dataclass(frozen=True, eq=False)
class AnyOf(Node):
    parts: tuple


@dataclass(frozen=True, eq=False)
class OneOf(Node):
    parts: tuple


@dataclass(frozen=True, eq=False)
class Not(Node):
    part: Node


@dataclass(frozen=True, eq=False)
class IfThenElse(Node):
    cond: Node
    then: Node
    else_: Node


@dataclass(frozen=True, eq=False)
class Dependent(Node):
    """An object with property ``name`` must satisfy ``schema`` (``dependentSchemas``,
    ``dependentRequired``, ``dependencies``)."""

    name: str
    schema: Node


@dataclass(frozen=True, eq=False)
class Ref(Node):
    """A reference to the definition named ``target`` (a location, with the dynamic scope it is
    entered in when that matters); ``shown`` is the reference as messages show it."""

    target: str
    shown: str = ""

    @cached_property
    def size(self) -> int:
        return 8
