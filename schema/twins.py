"""Definitions written alike: a content key per ``$ref`` target, so that one compiles for all.

Large API schemas repeat themselves. Kubernetes' carries each type once per API version
(``io.k8s.api.batch.v1.JobList`` and ``...v1beta1.JobList``, ...) and most of those copies differ
only in their descriptions, or in referring to other definitions that are themselves copies.
Such targets have the same language, and the compiler builds it once (see
``_Compiler.twin``).

The key of a target is a digest of its schema with what the compiler ignores left out (the
:data:`~.applicators.ANNOTATIONS` of each schema object: descriptions, titles, examples, ...) and
each ``$ref`` replaced by the key of the schema it names, recursively. Two targets with equal
keys are therefore equal as the compiler reads them, down to every schema they reach. A target
that reaches a cycle of references, a ``$dynamicRef`` or a document that is not known has no key
(its language depends on where it is entered).

Only schema positions lose their annotations: property names (``properties``,
``patternProperties``, ``dependentSchemas``, ``dependencies``) and data (``const``, ``enum``,
...) are kept as written, and so is the value of every keyword the walk does not know to hold
subschemas.
"""

from __future__ import annotations

import hashlib
import json

from .applicators import ANNOTATIONS
from .errors import SchemaError

__all__ = ["ContentKeys"]

# keywords whose value is one subschema, a list of them, or a map of names to them
_ONE = frozenset({"items", "additionalItems", "additionalProperties", "unevaluatedItems",
                  "unevaluatedProperties", "not", "if", "then", "else", "contains",
                  "propertyNames"})
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_MAP = frozenset({"properties", "patternProperties", "dependentSchemas", "dependencies"})
_IN_PROGRESS = object()


class ContentKeys:
    """Content keys of the targets of one :class:`~.refs.Registry` (memoised by location)."""

    def __init__(self, registry):
        self.registry = registry
        self.enabled = not registry.has_dynamic
        self._memo: dict[str, object] = {}

    def key(self, target: str, node) -> str | None:
        """The content key of the schema ``node`` found at location ``target``; None when it
        has none (see the module docstring)."""
        if not self.enabled or target is None:
            return None
        got = self._memo.get(target)
        if got is _IN_PROGRESS:
            return None                 # a cycle: the caller and this target are on it
        if got is not None or target in self._memo:
            return got
        self._memo[target] = _IN_PROGRESS
        try:
            skeleton = self._schema(node)
        except (_NoKey, RecursionError):
            skeleton = None
        if skeleton is None:
            key = None
        else:
            text = json.dumps(skeleton, sort_keys=True, separators=(",", ":"))
            key = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
        self._memo[target] = key
        return key

    # ------------------------------------------------------------------ the walk
    def _schema(self, node):
        if not isinstance(node, dict):
            if isinstance(node, list):
                raise _NoKey  # not a schema: let the compiler report it where it is
            return node
        out = {}
        for k, v in node.items():
            if k in ANNOTATIONS:
                continue
            if k == "$ref":
                out[k] = self._ref(v)
            elif k in ("$dynamicRef", "$recursiveRef"):
                raise _NoKey
            elif k in _MAP and isinstance(v, dict):
                out[k] = {name: self._schema(s) if isinstance(s, (dict, bool)) else s
                          for name, s in v.items()}
            elif k in _LIST and isinstance(v, list):
                out[k] = [self._schema(s) for s in v]
            elif k in _ONE and isinstance(v, (dict, bool)):
                out[k] = self._schema(v)
            else:
                out[k] = v          # data, or a keyword the walk does not read: as written
        return out

    def _ref(self, ref):
        if not isinstance(ref, str):
            raise _NoKey
        try:
            node, target = self.registry.resolve(ref, "")
        except SchemaError:
            raise _NoKey from None
        if target is None:
            raise _NoKey
        key = self.key(target, node)
        if key is None:
            raise _NoKey
        return {"$key": key}


class _NoKey(Exception):
    """The schema being keyed has no key."""
