"""Definitions written alike: a content key per definition, so that one compiles for all.

Large API schemas repeat themselves. Kubernetes' carries each type once per API version
(``io.k8s.api.batch.v1.JobList`` and ``...v1beta1.JobList``, ...) and most of those copies differ
only in their descriptions, or in referring to other definitions that are themselves copies.
Such definitions have the same language, and the compiler builds it once (see
:meth:`.lower.Lowering.twin`).

The key of a definition is a digest of its node in the intermediate form (:mod:`.ir`, which
holds no annotations: descriptions, titles and examples are gone), with its pointers left out
and each :class:`~.ir.Ref` replaced by the key of the definition it names, recursively. Two
definitions with equal keys are therefore equal as the compiler reads them, down to every
definition they reach. A definition that reaches a cycle of references or a document that is
not known has no key (nor does one that leads into such), and neither has any when the schema
holds a ``$dynamicRef`` (what a definition means then depends on where it is entered).

Example
-------
>>> from tokenfsm.schema.resolve import resolve
>>> ir = resolve({"$defs": {"a": {"type": "integer", "description": "one"},
...                         "b": {"type": "integer", "title": "two"},
...                         "c": {"type": "string"}},
...               "anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}, {"$ref": "#/$defs/c"}]})
>>> keys = ContentKeys(ir)
>>> keys.key("/$defs/a") == keys.key("/$defs/b"), keys.key("/$defs/a") == keys.key("/$defs/c")
(True, False)
"""

from __future__ import annotations

import hashlib
import json

from . import ir

__all__ = ["ContentKeys"]

class ContentKeys:
    """Content keys of the definitions of one :class:`~.resolve.SchemaIR` (memoised).

    Parameters
    ----------
    schema_ir : SchemaIR
    enabled : bool
        False: no definition has a key (every one is compiled where it is named).
    """

    def __init__(self, schema_ir, enabled: bool = True):
        self.ir = schema_ir
        self.enabled = enabled and not schema_ir.registry.has_dynamic
        self._memo: dict[str, object] = {}

    def key(self, target: str) -> str | None:
        """The content key of the definition ``target``; None when it has none."""
        if not self.enabled or target is None:
            return None
        if target not in self._memo:
            self._compute(target)
        return self._memo[target]

    def _compute(self, start: str) -> None:
        """Keys of ``start`` and of every definition it reaches first (post-order, without
        recursion: a chain of references may be long)."""
        todo = [start]
        below: dict = {}       # (a definition met again once its own are keyed: not walked twice)
        while todo:
            t = todo[-1]
            if t in self._memo:
                todo.pop()
                continue
            if t is None or self.ir.recursive(t):
                self._memo[t] = None  # a cycle (or what leads into one): no key
                todo.pop()
                continue
            targets = below.get(t)
            if targets is None:
                targets = below[t] = _targets_below(self.ir.definitions[t])
            deps = [d for d in targets if d not in self._memo]
            if deps:
                todo.extend(deps)
                continue
            todo.pop()
            try:
                text = json.dumps(self._skeleton(self.ir.definitions[t]), separators=(",", ":"))
                self._memo[t] = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
            except _NoKey:
                self._memo[t] = None

    def _skeleton(self, v):
        if isinstance(v, ir.Ref):
            key = self._memo.get(v.target) if v.target is not None else None
            if key is None:
                raise _NoKey
            return ["$key", key]
        if isinstance(v, (ir.Node, ir._Part)):
            out = [type(v).__name__]
            for name in ir.field_names(type(v)):
                if name in ("ptr", "values_ptr"):
                    continue
                x = getattr(v, name)
                if name in ir.WITH_POINTERS:  # (value, pointer) pairs: the values only
                    x = tuple(value for value, _ in x)
                out.append(self._skeleton(x))
            return out
        if isinstance(v, tuple):
            return [self._skeleton(x) for x in v]
        if isinstance(v, frozenset):
            return sorted(v)
        return ["=", v]  # data (const/enum values, names, bounds) as written


def _targets_below(node) -> list:
    """The definitions the references inside ``node`` name (not followed further)."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ir.Ref):
            out.append(n.target)
        else:
            todo.extend(n.children())
    return out


class _NoKey(Exception):
    """The definition being keyed has no key."""
