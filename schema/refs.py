"""``$ref`` resolution: base URIs, ``$id`` resources, anchors and a registry of documents.

Before compiling, every document (the root schema and the documents a caller supplies, each under
the URI it was retrieved from) is walked once, over the positions where the keyword table
(:mod:`.keywords`) says subschemas are, with its base URI (RFC 3986 resolution against each
identifier on the way): every identifier becomes a resource, every ``$anchor`` and
``$dynamicAnchor`` an anchor of its resource. Nothing is copied or rewritten: the registry records
where each schema is (its *location*), its base URI and its draft, and :mod:`.resolve` resolves
each reference against the base in effect where it is written.

A location is a JSON pointer (``""`` is the root) in the root document, or
``"<retrieval URI>#<pointer>"`` in a supplied document. Locations name definitions (a ``$ref``
back to a location already being compiled is recursion) and error messages.

Keywords the table does not know are not walked: an ``$id`` inside one is not an identifier
(the test suite's ``unknownKeyword``). A pointer may still lead into one (``refOfUnknownKeyword``):
such a target is read where it is, with the base of the resource around it.

Example
-------
>>> reg = Registry({"$id": "http://x.test/a/root.json", "$defs": {"b": {"$id": "b.json",
...                 "$defs": {"c": {"type": "null"}}}}})
>>> reg.resolve("http://x.test/a/b.json#/$defs/c", "")[1]
'/$defs/b/$defs/c'
>>> reg.base("/$defs/b/$defs/c")
'http://x.test/a/b.json'

Resolution follows JSON Schema 2020-12 (section 8.2: base URI, anchors and dereferencing) and,
for drafts 4 to 7, ignores the identifier of a schema with ``$ref`` and reads ``$id: "#name"``
(``id`` in draft 4) as an anchor.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple
from urllib.parse import unquote, urljoin, urlsplit

from .errors import SchemaError
from .keywords import draft_of, subschemas

__all__ = ["Registry", "join_uri", "DEFAULT_BASE", "shown", "pointer", "MAX_NESTING"]

DEFAULT_BASE = "tokenfsm:root"  # the base URI of a root schema without an absolute $id

#: Schemas nest at most this many subschemas deep (``{"items": {"items": ...}}``): deeper ones
#: are a :class:`SchemaError` before any work (every pass over a schema recurses on its
#: nesting, and this keeps each well inside Python's recursion limit).
MAX_NESTING = 64


def pointer(base: str, *parts) -> str:
    """``base`` extended by JSON pointer tokens (escaped)."""
    for p in parts:
        p = str(p)
        if "~" in p or "/" in p:
            p = p.replace("~", "~0").replace("/", "~1")
        base = base + "/" + p
    return base


def shown(ref) -> str:
    """A resolved reference as messages show it (relative to a root without ``$id``)."""
    if isinstance(ref, str) and ref.startswith(DEFAULT_BASE + "#"):
        return ref[len(DEFAULT_BASE):]
    return ref


def _split(uri: str) -> tuple[str, str]:
    base, _, frag = uri.partition("#")
    return base, frag


def join_uri(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` (RFC 3986), also for ``urn:`` and other opaque bases,
    against which only fragment references are relative."""
    if ref.startswith("#"):
        return _split(base)[0] + ref
    if urlsplit(ref).scheme:
        return ref
    b = urlsplit(base)
    if b.scheme in ("http", "https", "file", "ftp") or (b.scheme and b.netloc):
        return urljoin(base, ref)
    if not b.scheme:
        return urljoin(base, ref) if base else ref
    return ref  # relative to an opaque base (urn:...): taken as written, then not found


class Place(NamedTuple):
    """Where a schema is: the schema itself, the base URI in effect there, its draft (None: the
    document names none) and how deep it nests."""

    node: Any
    base: str
    draft: int | None
    depth: int


def identifier_keyword(draft: int | None) -> str:
    """``id`` in drafts 3 and 4, ``$id`` from draft 6 on (and when no draft is named)."""
    return "id" if draft in (3, 4) else "$id"


class Registry:
    """The resources and anchors of a root schema and of supplied documents.

    Parameters
    ----------
    root : dict or bool
        The schema being compiled (read, never modified).
    documents : mapping of str to dict or bool, optional
        Other schema documents by the absolute URI they are retrieved from (``$ref`` to these is
        resolved; to anything else it is not local).

    Attributes
    ----------
    root : dict or bool
        The root schema, as given.
    draft : int or None
        The draft the root declares (3, 4, 6, 7, 2019, 2020), None when it names none.
    has_dynamic : bool
        Whether some ``$dynamicRef`` or ``$recursiveRef`` occurs (the dynamic scope matters).

    Raises
    ------
    SchemaError
        A schema nested deeper than :data:`MAX_NESTING`, a ``$schema`` that is not a string, a
        supplied document that is not a schema.
    """

    def __init__(self, root, documents: Mapping[str, Any] | None = None):
        self.root = root
        self.resources: dict[str, str] = {}     # URI -> location of the resource's root
        self.anchors: dict[str, str] = {}       # URI#name -> location
        self.dynamic: set[str] = set()          # anchors declared with $dynamicAnchor
        self.recursive_anchors: set[str] = set()  # resources whose root has $recursiveAnchor
        self.places: dict[str, Place] = {}
        self.has_dynamic = False
        self.draft = _declared(root, None, "")
        self._walk(root, DEFAULT_BASE, "", self.draft)
        for uri, doc in (documents or {}).items():
            if not isinstance(uri, str) or not urlsplit(uri).scheme:
                raise ValueError(f"document URIs must be absolute, got {uri!r}")
            base = _split(uri)[0]
            if not isinstance(doc, (dict, bool)):
                raise SchemaError(f"the document {uri!r} is not a schema (an object or a "
                                  "boolean)", base + "#")
            if base in self.resources:
                continue
            # a document that names no draft is read in the root's
            self._walk(doc, base, base + "#", _declared(doc, self.draft, base + "#"))

    # ------------------------------------------------------------------ the walk
    def _walk(self, doc, base: str, loc: str, draft, register: bool = True, depth: int = 0):
        """Record the place of every schema in ``doc`` (found at ``loc``); with ``register``,
        its identifiers and anchors too (not for a schema a pointer found inside an unknown
        keyword: its identifiers are not real ones)."""
        if register:
            self.resources.setdefault(base, loc)
        todo = [(doc, loc, base, draft, depth, True)]
        while todo:
            node, loc, base, draft, depth, top = todo.pop()
            if depth > MAX_NESTING:
                raise SchemaError(f"the schema nests deeper than {MAX_NESTING} subschemas", loc)
            if not isinstance(node, dict):
                self.places.setdefault(loc, Place(node, base, draft, depth))
                continue
            if top or isinstance(node.get("$id"), str) or isinstance(node.get("id"), str):
                draft = _declared(node, draft, loc)   # a resource may name its own draft
            ident = node.get(identifier_keyword(draft))
            ignore_siblings = draft is not None and draft <= 7 and "$ref" in node
            if isinstance(ident, str) and not ignore_siblings:
                if ident.startswith("#"):
                    if len(ident) > 1 and register:
                        self.anchors.setdefault(_split(base)[0] + ident, loc)
                else:
                    absolute, frag = _split(join_uri(base, ident))
                    base = absolute
                    if register:
                        self.resources[base] = loc
                        if frag and not frag.startswith("/"):
                            self.anchors[base + "#" + frag] = loc
            if register and not ignore_siblings:
                for kw in ("$anchor", "$dynamicAnchor"):
                    a = node.get(kw)
                    if isinstance(a, str):
                        self.anchors.setdefault(_split(base)[0] + "#" + a, loc)
                        if kw == "$dynamicAnchor":
                            self.dynamic.add(_split(base)[0] + "#" + a)
                if node.get("$recursiveAnchor") is True:
                    self.recursive_anchors.add(_split(base)[0])
            if "$dynamicRef" in node or "$recursiveRef" in node:
                self.has_dynamic = True
            self.places[loc] = Place(node, base, draft, depth)
            for k, v in node.items():
                for path, sub in subschemas(k, v, draft):
                    todo.append((sub, pointer(loc, k, *path), base, draft, depth + 1, False))

    # ------------------------------------------------------------------ lookups
    def place(self, loc: str) -> Place:
        """Where the schema at location ``loc`` is (see :class:`Place`)."""
        return self.places[loc]

    def base(self, loc: str) -> str:
        """The base URI in effect at location ``loc``."""
        return self.places[loc].base

    def resource_of(self, loc: str) -> str:
        """The URI of the innermost resource holding location ``loc``."""
        return _split(self.places[loc].base)[0]

    def resolve(self, ref, ptr: str):
        """The schema an absolute ``ref`` names and its location.

        Returns
        -------
        (schema, location), or (None, None) when the document is not known (not local).

        Raises
        ------
        SchemaError
            A ``$ref`` that is not a string, or that names a missing anchor or pointer in a
            known document, or a value that is not a schema.
        """
        if not isinstance(ref, str):
            raise SchemaError(f"$ref must be a string, got {ref!r}", ptr)
        uri, frag = _split(ref)
        if frag and not frag.startswith("/"):
            loc = self.anchors.get(uri + "#" + unquote(frag)) or self.anchors.get(ref)
            if loc is not None:
                return self.places[loc].node, loc
            if uri in self.resources:
                raise SchemaError(f"$ref {shown(ref)!r}: no such anchor", ptr)
            return None, None
        if uri not in self.resources:
            return None, None
        target = self.resources[uri]
        place = self.places[target]
        node = place.node
        for tok in frag.split("/")[1:] if frag else []:
            tok = unquote(tok).replace("~1", "/").replace("~0", "~")
            target = pointer(target, tok)
            if isinstance(node, dict) and tok in node:
                node = node[tok]
            elif isinstance(node, list) and tok.isdigit() and int(tok) < len(node):
                node = node[int(tok)]
            else:
                raise SchemaError(f"$ref {shown(ref)!r} does not resolve", ptr)
            known = self.places.get(target)
            if known is not None and known.node is node:
                place = known
        if not isinstance(node, (dict, bool)):
            raise SchemaError(f"$ref {shown(ref)!r} does not point to a schema", ptr)
        if target not in self.places or self.places[target].node is not node:
            # a schema at a position no known keyword holds (inside an unknown keyword): read
            # where it is, with the base of the resource around it, its subschemas walked
            self._walk(node, place.base, target, place.draft, register=False,
                       depth=place.depth)
        return node, target

    def dynamic_target(self, ref: str, scope: tuple) -> str:
        """Where ``$dynamicRef: ref`` leads in ``scope`` (resource URIs, outermost first; JSON
        Schema 2020-12, 8.2.3.2): when it first resolves to a ``$dynamicAnchor`` of its
        fragment's name, to that anchor in the outermost resource of the scope that declares
        it; otherwise where ``$ref`` would."""
        uri, frag = _split(ref)
        if not frag or frag.startswith("/") or ref not in self.dynamic:
            return ref
        for resource in scope:
            if resource + "#" + frag in self.dynamic:
                return resource + "#" + frag
        return ref

    def recursive_target(self, base: str, scope: tuple) -> str:
        """Where ``$recursiveRef: "#"`` leads from a schema with base ``base`` in ``scope``
        (JSON Schema 2019-09, 8.2.4.2): the root of the current resource, unless that root has
        ``$recursiveAnchor: true``; then the outermost resource of the unbroken run of such
        resources that ends with the current one in the dynamic scope."""
        here = _split(base)[0]
        if here not in self.recursive_anchors:
            return here + "#"
        out = here
        for resource in reversed(scope):
            if resource == here:
                continue
            if resource not in self.recursive_anchors:
                break
            out = resource
        return out + "#"


def _declared(node, inherited, loc: str):
    """The draft ``node`` declares with ``$schema``, else ``inherited``."""
    if isinstance(node, dict) and "$schema" in node:
        s = node["$schema"]
        if not isinstance(s, str):
            raise SchemaError(f"$schema must be a URI string, got {s!r}", pointer(loc, "$schema"))
        d = draft_of(s)
        return d if d is not None else inherited
    return inherited
