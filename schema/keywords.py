"""The keyword table: every JSON Schema keyword the compiler knows, in one place.

Each keyword is one :class:`Keyword` entry of :data:`KEYWORDS`, which says

* ``types``: the JSON types whose values it constrains (a ``minLength`` says nothing about a
  number); empty for applicators, which constrain through their subschemas;
* ``shape``: the shape of its value (a schema, a list of schemas, a map of names to schemas, a
  count, a number, a regex, ...): :mod:`.resolve` checks and reads values by it, and
  :func:`subschemas` walks the subschemas of any keyword by it (``$id``/anchor registration,
  the schema walks of :mod:`.serialize` and the corpus report);
* ``merge``: how two of it combine under ``allOf`` (the larger minimum, the smaller maximum,
  the union of required names, the intersection of enums, or "both kept": each value stays a
  conjunct that the lowering intersects). Keywords that only mean something together (``items``
  with ``prefixItems``; ``properties`` with ``patternProperties`` and ``additionalProperties``;
  ``contains`` with ``minContains``/``maxContains``) name their ``group``: a group is merged as a
  unit;
* ``negate``: how its negation is written (:mod:`.algebra`): a text complement within the types
  it constrains, the other types, a missing required name, the opposite count, a member whose
  value violates its schema, a member that witnesses a violation, an item that violates its
  schema (``contains`` its negation), or De Morgan for applicators;
* ``lower``: which lowering reads it (:mod:`.lower`: ``"string"``, ``"number"``, ``"array"``,
  ``"object"``, ``"types"``, ``"values"``), or what else it is (``"applicator"``, ``"reference"``,
  ``"unevaluated"``, ``"identifier"``, ``"annotation"``, ``"unsupported"``: an assertion the
  compiler does not enforce, refused in strict mode), and the ``field`` of the intermediate-form
  node (:mod:`.ir`) its value lands in.

A keyword the table does not list is unknown and ignored everywhere: it never changes the
language, and no ``$id`` or anchor inside it is registered. The table is read in every draft
(a draft-04 schema's ``const`` is enforced, a 2020-12 schema's ``dependencies`` too), with the
exceptions the drafts disagree on and the test suite checks: the identifier is ``id`` in drafts 3
and 4 and ``$id`` from draft 6 on, in drafts up to 7 the siblings of ``$ref`` are ignored, and
in draft 7 the content keywords assert (:data:`DRAFT_VARIANTS`).

Adding a keyword is one entry here, the field it fills in :mod:`.ir`, the lines of the lowering
it names, and its tests.

Example
-------
>>> KEYWORDS["minLength"].types, KEYWORDS["minLength"].merge, KEYWORDS["minLength"].lower
(frozenset({'string'}), 'max', 'string')
>>> [path for path, _ in subschemas("properties", {"a": {}, "b": True})]
[('a',), ('b',)]
>>> keyword("$id", 4) is None, keyword("id", 4).lower
(True, 'identifier')

The vocabulary split follows JSON Schema 2020-12 (core, applicator, validation, unevaluated,
format, content, meta-data); the per-keyword merge and negation rules are the ones xgrammar's and
llguidance's converters apply when they flatten ``allOf``, written down once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

__all__ = ["Keyword", "KEYWORDS", "DRAFT_VARIANTS", "keyword", "subschemas", "ALL_TYPES", "ANNOTATIONS",
           "APPLICATORS", "IN_PLACE", "OBJECT_KEYWORDS", "ARRAY_KEYWORDS", "draft_of"]

ALL_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})

# ---------------------------------------------------------------- value shapes
SCHEMA = "schema"                 # one subschema
SCHEMAS = "schemas"               # a non-empty list of subschemas
SCHEMA_LIST = "schema list"       # a list of subschemas, possibly empty (allOf, prefixItems)
SCHEMA_MAP = "schema map"         # names to subschemas
REGEX_MAP = "regex map"           # regexes to subschemas (patternProperties)
ITEMS = "items"                   # a subschema, or (drafts before 2020-12) a list of them
DEPENDENCIES = "dependencies"     # names to a subschema or a list of names
NAME_LISTS = "name lists"         # names to lists of names (dependentRequired)
COUNT = "count"                   # a non-negative integer (2.0 counts)
NUMBER = "number"
BOUND = "bound"                   # a number, or (drafts 3-4) a boolean for exclusive*
POSITIVE = "positive number"
BOOLEAN = "boolean"
STRING = "string"
REGEX = "regex"
NAMES = "names"                   # a list of strings
TYPES = "types"                   # a type name or a non-empty list of them
VALUE = "value"                   # any JSON value
VALUES = "values"                 # a list of JSON values
URI = "uri"                       # a URI reference
ANY = "any"                       # anything (annotations)

_SUBSCHEMA_SHAPES = {SCHEMA, SCHEMAS, SCHEMA_LIST, SCHEMA_MAP, REGEX_MAP, ITEMS, DEPENDENCIES}


@dataclass(frozen=True)
class Keyword:
    """One keyword: what it constrains, the shape of its value, how it merges, negates, lowers.

    Attributes
    ----------
    name : str
    types : frozenset of str
        JSON types it constrains (empty: applicators and annotations).
    shape : str
        Shape of its value (one of the module's shape constants).
    merge : str
        ``"min"``, ``"max"``, ``"union"``, ``"intersect"``, ``"both"`` (every value kept, as a
        conjunction), ``"group"`` (merged with its group as a unit), ``"applicator"`` (rewritten
        by :mod:`.algebra`, not merged) or ``"ignore"``.
    negate : str
        ``"complement"``, ``"other-types"``, ``"forbid"``, ``"flip-count"``, ``"member"``,
        ``"some-item"``, ``"witness"``, ``"de-morgan"`` or ``"none"``.
    lower : str
        The lowering that reads it, or its role (see the module docstring).
    field : str or None
        The field of the :mod:`.ir` node its value fills.
    group : str or None
        Keywords merged as a unit share a group name.
    drafts : frozenset of int or None
        The drafts it exists in (None: every draft).
    """

    name: str
    types: frozenset
    shape: str
    merge: str
    negate: str
    lower: str
    field: str | None = None
    group: str | None = None
    drafts: frozenset | None = None


def _k(name, types, shape, merge, negate, lower, field=None, group=None, drafts=None) -> Keyword:
    t = frozenset(types.split()) if isinstance(types, str) else frozenset(types)
    return Keyword(name, t, shape, merge, negate, lower, field, group,
                   None if drafts is None else frozenset(drafts))


_S, _N, _A, _O = "string", "number integer", "array", "object"

_TABLE = [
    # ------------------------------------------------------------ any type
    _k("type", ALL_TYPES, TYPES, "intersect", "other-types", "types", "types"),
    _k("enum", ALL_TYPES, VALUES, "intersect", "complement", "values", "values"),
    _k("const", ALL_TYPES, VALUE, "intersect", "complement", "values", "values"),
    # ------------------------------------------------------------ strings
    _k("minLength", _S, COUNT, "max", "complement", "string", "min_length"),
    _k("maxLength", _S, COUNT, "min", "complement", "string", "max_length"),
    _k("pattern", _S, REGEX, "both", "complement", "string", "patterns"),
    _k("format", _S, STRING, "both", "complement", "string", "formats"),
    # ------------------------------------------------------------ numbers
    _k("minimum", _N, NUMBER, "max", "complement", "number", "minimum"),
    _k("maximum", _N, NUMBER, "min", "complement", "number", "maximum"),
    _k("exclusiveMinimum", _N, BOUND, "max", "complement", "number", "exclusive_minimum"),
    _k("exclusiveMaximum", _N, BOUND, "min", "complement", "number", "exclusive_maximum"),
    _k("multipleOf", _N, POSITIVE, "both", "complement", "number", "multiple_of"),
    # ------------------------------------------------------------ arrays
    _k("items", _A, ITEMS, "group", "some-item", "array", "items", "items"),
    _k("prefixItems", _A, SCHEMA_LIST, "group", "some-item", "array", "items", "items"),
    _k("additionalItems", _A, SCHEMA, "group", "some-item", "array", "items", "items"),
    _k("minItems", _A, COUNT, "max", "flip-count", "array", "min_items"),
    _k("maxItems", _A, COUNT, "min", "flip-count", "array", "max_items"),
    _k("contains", _A, SCHEMA, "group", "complement", "array", "contains", "contains"),
    _k("minContains", _A, COUNT, "group", "complement", "array", "contains", "contains"),
    _k("maxContains", _A, COUNT, "group", "complement", "array", "contains", "contains"),
    _k("uniqueItems", _A, BOOLEAN, "max", "complement", "array", "unique"),
    # ------------------------------------------------------------ objects
    _k("properties", _O, SCHEMA_MAP, "group", "member", "object", "members", "members"),
    _k("patternProperties", _O, REGEX_MAP, "group", "witness", "object", "members", "members"),
    _k("additionalProperties", _O, SCHEMA, "group", "witness", "object", "members", "members"),
    _k("required", _O, NAMES, "union", "forbid", "object", "required"),
    _k("propertyNames", _O, SCHEMA, "both", "witness", "object", "names"),
    _k("minProperties", _O, COUNT, "max", "flip-count", "object", "min_properties"),
    _k("maxProperties", _O, COUNT, "min", "flip-count", "object", "max_properties"),
    # ------------------------------------------------------------ applicators
    _k("allOf", (), SCHEMA_LIST, "applicator", "de-morgan", "applicator"),
    _k("anyOf", (), SCHEMAS, "applicator", "de-morgan", "applicator"),
    _k("oneOf", (), SCHEMAS, "applicator", "de-morgan", "applicator"),
    _k("not", (), SCHEMA, "applicator", "de-morgan", "applicator"),
    _k("if", (), SCHEMA, "applicator", "de-morgan", "applicator"),
    _k("then", (), SCHEMA, "applicator", "de-morgan", "applicator"),
    _k("else", (), SCHEMA, "applicator", "de-morgan", "applicator"),
    _k("dependentSchemas", _O, SCHEMA_MAP, "applicator", "de-morgan", "applicator"),
    _k("dependentRequired", _O, NAME_LISTS, "applicator", "de-morgan", "applicator"),
    _k("dependencies", _O, DEPENDENCIES, "applicator", "de-morgan", "applicator"),
    _k("unevaluatedProperties", _O, SCHEMA, "applicator", "de-morgan", "unevaluated"),
    _k("unevaluatedItems", _A, SCHEMA, "applicator", "de-morgan", "unevaluated"),
    # ------------------------------------------------------------ references and identifiers
    _k("$ref", (), URI, "applicator", "de-morgan", "reference"),
    _k("$dynamicRef", (), URI, "applicator", "de-morgan", "reference"),
    _k("$recursiveRef", (), URI, "applicator", "de-morgan", "reference"),
    _k("$id", (), URI, "ignore", "none", "identifier", drafts=(6, 7, 2019, 2020)),
    _k("id", (), URI, "ignore", "none", "identifier", drafts=(3, 4)),
    _k("$anchor", (), STRING, "ignore", "none", "identifier"),
    _k("$dynamicAnchor", (), STRING, "ignore", "none", "identifier"),
    _k("$recursiveAnchor", (), BOOLEAN, "ignore", "none", "identifier"),
    _k("$schema", (), URI, "ignore", "none", "dialect"),
    _k("$vocabulary", (), ANY, "ignore", "none", "dialect"),
    _k("$defs", (), SCHEMA_MAP, "ignore", "none", "definitions"),
    _k("definitions", (), SCHEMA_MAP, "ignore", "none", "definitions"),
    # ------------------------------------------------------------ annotations
    *(_k(name, (), ANY, "ignore", "none", "annotation")
      for name in ("title", "description", "default", "examples", "$comment", "deprecated",
                   "readOnly", "writeOnly", "contentMediaType", "contentEncoding", "example",
                   "discriminator", "nullable")),
    # in 2019-09 and later the content keywords only annotate; contentSchema holds a schema
    _k("contentSchema", (), SCHEMA, "ignore", "none", "annotation"),
]

#: Every keyword the compiler knows, by name.
KEYWORDS: Mapping[str, Keyword] = {k.name: k for k in _TABLE}

#: Keywords whose role in some draft differs from the entry above, by (name, draft): in draft 7
#: the content keywords assert what a string holds (optional to enforce; the compiler does not,
#: so strict mode refuses them); later drafts made them annotations.
DRAFT_VARIANTS: Mapping[tuple, Keyword] = {
    (name, 7): _k(name, _S, STRING, "union", "complement", "unsupported", "unsupported",
                  drafts=(7,))
    for name in ("contentMediaType", "contentEncoding")
}

#: Keywords that neither constrain nor apply subschemas: identifiers, the dialect, definitions
#: and annotations.
ANNOTATIONS = frozenset(k.name for k in _TABLE if k.lower in ("identifier", "dialect",
                                                              "definitions", "annotation"))
#: Keywords whose subschemas apply to the instance (or, for the dependency keywords, to it when
#: a property is present); rewritten by :mod:`.algebra` rather than merged.
APPLICATORS = frozenset(k.name for k in _TABLE if k.merge == "applicator")
#: Applicators that evaluate properties of the instance itself (what ``unevaluated*`` sees).
IN_PLACE = APPLICATORS - {"dependentRequired", "unevaluatedProperties", "unevaluatedItems"}
#: Keywords that constrain objects only / arrays only (other types pass them).
OBJECT_KEYWORDS = frozenset(k.name for k in _TABLE if k.types == {"object"})
ARRAY_KEYWORDS = frozenset(k.name for k in _TABLE if k.types == {"array"})


def draft_of(schema_uri: Any) -> int | None:
    """The draft a ``$schema`` URI names (3, 4, 6, 7, 2019 or 2020), or None when it names
    none the compiler knows."""
    if not isinstance(schema_uri, str):
        return None
    for marker, draft in (("draft-03", 3), ("draft-04", 4), ("draft-06", 6), ("draft-07", 7),
                          ("2019-09", 2019), ("2020-12", 2020), ("draft/next", 2020)):
        if marker in schema_uri:
            return draft
    return None


def keyword(name: str, draft: int | None = None) -> Keyword | None:
    """The entry of ``name`` in ``draft`` (None: a schema that names no draft), or None when the
    keyword is unknown there."""
    k = DRAFT_VARIANTS.get((name, draft)) or KEYWORDS.get(name)
    if k is None or k.drafts is None:
        return k
    if draft is None:
        draft = 2020
    return k if draft in k.drafts else None


def subschemas(name: str, value: Any, draft: int | None = None) -> Iterator[tuple[tuple, Any]]:
    """The subschemas inside the value of keyword ``name``: ``(path, schema)`` pairs, ``path``
    the pointer tokens below the keyword. Values of the wrong shape hold none (they are reported
    where they are read); unknown keywords hold none."""
    k = keyword(name, draft)
    if k is None or k.shape not in _SUBSCHEMA_SHAPES:
        return
    shape = k.shape
    if shape == SCHEMA or (shape == ITEMS and not isinstance(value, list)):
        if isinstance(value, (dict, bool)):
            yield (), value
    elif shape in (SCHEMAS, SCHEMA_LIST, ITEMS):
        if isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, (dict, bool)):
                    yield (i,), v
    elif isinstance(value, dict):  # maps
        for n, v in value.items():
            if isinstance(v, (dict, bool)):
                yield (n,), v
