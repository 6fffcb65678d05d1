"""``$ref`` resolution: base URIs, ``$id`` resources, anchors and a registry of documents.

Before compiling, every document (the root schema and the documents a caller supplies, each under
the URI it was retrieved from) is walked once with its base URI (RFC 3986 resolution against each
``$id`` on the way): every ``$id`` becomes a resource, every ``$anchor`` and ``$dynamicAnchor`` an
anchor of its resource, and every ``$ref`` and ``$dynamicRef`` is rewritten to the absolute URI it
means. The compiler then resolves absolute URIs only, wherever a subschema ends up after rewriting
(a ``$ref`` copied into a merged ``allOf`` keeps its meaning).

Each schema location is named by a *location* string: a JSON pointer (``""`` is the root) in the
root document, ``"<retrieval URI>#<pointer>"`` in a supplied document. Locations name recursion
(a ``$ref`` back to a location already being compiled) and error messages.

Example
-------
>>> reg = Registry({"$id": "http://x.test/a/root.json", "$defs": {"b": {"$id": "b.json",
...                 "$defs": {"c": {"type": "null"}}, "$ref": "#/$defs/c"}}})
>>> reg.root["$defs"]["b"]["$ref"]
'http://x.test/a/b.json#/$defs/c'
>>> reg.resolve('http://x.test/a/b.json#/$defs/c', "")[1]
'/$defs/b/$defs/c'

Resolution follows JSON Schema 2020-12 (section 8.2: base URI, anchors and dereferencing) and,
for drafts 4 to 7, ignores the siblings of ``$ref`` (including ``$id``) and reads ``$id: "#name"``
(``id`` in draft 4) as an anchor.
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import unquote, urljoin, urlsplit

from .errors import SchemaError

__all__ = ["Registry", "join_uri", "DEFAULT_BASE", "shown"]

DEFAULT_BASE = "tokenfsm:root"  # the base URI of a root schema without an absolute $id
# values that hold JSON data rather than schemas
_DATA = frozenset({"const", "enum", "default", "examples", "example"})
# keywords whose value maps names to schemas (the map itself is not a schema)
_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
                   "dependencies"})
_OLD = ("draft-03", "draft-04", "draft-06", "draft-07")


def _ptr(base: str, *parts) -> str:
    return base + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def shown(ref) -> str:
    """A rewritten reference as messages show it (relative to a root without ``$id``)."""
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


def _old_draft(doc, inherited):
    """False (2019-09 and later), True (drafts 6 and 7) or "id" (drafts 3 and 4, whose
    identifier keyword is ``id``), from the document's ``$schema``."""
    if isinstance(doc, dict) and isinstance(doc.get("$schema"), str):
        s = doc["$schema"]
        if "draft-03" in s or "draft-04" in s:
            return "id"
        return any(d in s for d in _OLD)
    return inherited


class Registry:
    """The resources and anchors of a root schema and of supplied documents.

    Parameters
    ----------
    root : dict or bool
        The schema being compiled.
    documents : mapping of str to dict or bool, optional
        Other schema documents by the absolute URI they are retrieved from (``$ref`` to these is
        resolved; to anything else it is not local).

    Attributes
    ----------
    root : dict or bool
        A copy of ``root`` with every ``$ref`` / ``$dynamicRef`` absolute.
    root_base : str
        The base URI of the root.
    old_draft : bool
        Whether the root declares draft 7 or earlier.
    """

    def __init__(self, root, documents: Mapping[str, Any] | None = None):
        self.resources: dict[str, tuple[Any, str]] = {}
        self.anchors: dict[str, tuple[Any, str]] = {}
        self.dynamic: set[str] = set()  # anchors declared with $dynamicAnchor
        self.resource_of: dict[int, str] = {}  # id of a resource's root node -> its URI
        self.has_dynamic = False  # whether any $dynamicRef occurs
        self._specialized: dict = {}
        self.old_draft = bool(_old_draft(root, False))
        # drafts 6 and later (declared) count 1.0 as an integer; drafts 3 and 4 do not, and a
        # schema that names no draft may be read by either
        declared = root.get("$schema") if isinstance(root, dict) else None
        self.float_integers = isinstance(declared, str) and any(
            d in declared for d in ("draft-06", "draft-07", "2019-09", "2020-12", "draft/next"))
        self.root_base = DEFAULT_BASE
        self.root = self._document(root, DEFAULT_BASE, "", _old_draft(root, False))
        for uri, doc in (documents or {}).items():
            if not isinstance(uri, str) or not urlsplit(uri).scheme:
                raise ValueError(f"document URIs must be absolute, got {uri!r}")
            base = _split(uri)[0]
            if base in self.resources:
                continue
            self._document(doc, base, base + "#", _old_draft(doc, False))
        if self.has_dynamic:
            # $dynamicRef depends on the resources entered on the way (the dynamic scope): the
            # root starts it, and every $ref carries the scope it is followed in (x-scope)
            self.root = self._specialize(self.root, ())

    def _document(self, doc, base: str, loc: str, old):
        self.resources.setdefault(base, (None, loc))  # placeholder, replaced by the copy
        out = self._walk(doc, base, loc, old, top=True)
        if self.resources[base][0] is None:
            self.resources[base] = (out, loc)
        if isinstance(out, dict):
            self.resource_of.setdefault(id(out), base)
        return out

    def _walk(self, node, base: str, loc: str, old, top: bool = False):
        if isinstance(node, list):
            return [self._walk(v, base, _ptr(loc, i), old) for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        old = _old_draft(node, old) if top or "$id" in node else old
        out: dict = {}
        ident = node.get("$id")
        if ident is None and old == "id":
            ident = node.get("id")  # draft 3 and 4
        ignore_siblings = old and "$ref" in node
        if isinstance(ident, str) and not ignore_siblings:
            if ident.startswith("#"):
                if len(ident) > 1:
                    self.anchors[join_uri(base, ident)] = (out, loc)
            else:
                absolute, frag = _split(join_uri(base, ident))
                base = absolute
                self.resources[base] = (out, loc)
                self.resource_of[id(out)] = base
                if frag and not frag.startswith("/"):
                    self.anchors[base + "#" + frag] = (out, loc)
        for kw in ("$anchor", "$dynamicAnchor"):
            a = node.get(kw)
            if isinstance(a, str) and not ignore_siblings:
                self.anchors.setdefault(_split(base)[0] + "#" + a, (out, loc))
                if kw == "$dynamicAnchor":
                    self.dynamic.add(_split(base)[0] + "#" + a)
        for k, v in node.items():
            if k in ("$ref", "$dynamicRef") and isinstance(v, str):
                out[k] = join_uri(base, v)
                self.has_dynamic = self.has_dynamic or k == "$dynamicRef"
            elif k in _DATA:
                out[k] = v
            elif k in _MAPS and isinstance(v, dict):
                out[k] = {name: self._walk(s, base, _ptr(loc, k, name), old)
                          for name, s in v.items()}
            else:
                out[k] = self._walk(v, base, _ptr(loc, k), old)
        return out

    def resolve(self, ref, ptr: str):
        """The schema an absolute ``ref`` names and its location.

        Returns
        -------
        (schema, location), or (None, None) when the document is not known (not local).

        Raises
        ------
        SchemaError
            A ``$ref`` that is not a string, or that names a missing anchor or pointer in a
            known document.
        """
        if not isinstance(ref, str):
            raise SchemaError(f"$ref must be a string, got {ref!r}", ptr)
        uri, frag = _split(ref)
        if frag and not frag.startswith("/"):
            hit = self.anchors.get(uri + "#" + unquote(frag)) or self.anchors.get(ref)
            if hit is not None:
                return hit
            if uri in self.resources:
                raise SchemaError(f"$ref {shown(ref)!r}: no such anchor", ptr)
            return None, None
        if uri not in self.resources:
            return None, None
        node, target = self.resources[uri]
        for tok in frag.split("/")[1:] if frag else []:
            tok = unquote(tok).replace("~1", "/").replace("~0", "~")
            target = _ptr(target, tok)
            if isinstance(node, dict) and tok in node:
                node = node[tok]
            elif isinstance(node, list) and tok.isdigit() and int(tok) < len(node):
                node = node[int(tok)]
            else:
                raise SchemaError(f"$ref {shown(ref)!r} does not resolve", ptr)
        if not isinstance(node, (dict, bool)):
            raise SchemaError(f"$ref {shown(ref)!r} does not point to a schema", ptr)
        return node, target

    # ------------------------------------------------------------------ dynamic scope
    def specialize(self, node, ref: str, scope: tuple):
        """``node`` (the target of ``ref``, followed in dynamic ``scope``) with its
        ``$dynamicRef`` resolved: the scope gains the resource of ``ref``."""
        if not self.has_dynamic:
            return node
        resource = _split(ref)[0]
        if resource not in scope:
            scope = scope + (resource,)
        return self._specialize(node, scope)

    def _specialize(self, node, scope: tuple):
        key = (id(node), scope)
        hit = self._specialized.get(key)
        if hit is None:
            hit = self._specialized[key] = (node, self._spec(node, scope))
        return hit[1]

    def _spec(self, node, scope: tuple):
        if isinstance(node, list):
            return [self._spec(v, scope) for v in node]
        if not isinstance(node, dict):
            return node
        uri = self.resource_of.get(id(node))
        if uri is not None and uri not in scope:
            scope = scope + (uri,)
        out: dict = {}
        for k, v in node.items():
            if k == "$dynamicRef" and isinstance(v, str):
                ref = {"$ref": self.dynamic_target(v, scope), "x-scope": scope}
                if "$ref" in node:  # both: the dynamic one as a conjunct
                    out["allOf"] = list(out.get("allOf", [])) + [ref]
                else:
                    out.update(ref)
            elif k == "$ref" and isinstance(v, str):
                out[k] = v
                out["x-scope"] = scope
            elif k == "allOf" and isinstance(v, list):
                out[k] = [self._spec(x, scope) for x in v] + list(out.get("allOf", []))
            elif k in _DATA:
                out[k] = v
            elif k in _MAPS and isinstance(v, dict):
                out[k] = {name: self._spec(x, scope) for name, x in v.items()}
            else:
                out[k] = self._spec(v, scope)
        return out

    def dynamic_target(self, ref: str, scope: tuple) -> str:
        """Where ``$dynamicRef: ref`` leads in ``scope`` (JSON Schema 2020-12, 8.2.3.2): when
        it first resolves to a ``$dynamicAnchor`` of its fragment's name, to that anchor in the
        outermost resource of the scope that declares it; otherwise where ``$ref`` would."""
        uri, frag = _split(ref)
        if not frag or frag.startswith("/") or ref not in self.dynamic:
            return ref
        for resource in scope:
            if resource + "#" + frag in self.dynamic:
                return resource + "#" + frag
        return ref
