"""Serialise a JSON value the way the compiled automata write it: keys in schema order.

Used to check completeness (a valid instance, written under the same whitespace policy and key
order as the automaton, must be accepted) in tests and benchmarks.

Example
-------
>>> dumps_in_schema_order({"b": 1, "a": [1, 2]}, {"properties": {"a": {}, "b": {}}}, 0)
'{"a":[1,2],"b":1}'
"""

from __future__ import annotations

import json

__all__ = ["dumps_in_schema_order"]


def dumps_in_schema_order(value, schema, whitespace: int | None = 0) -> str:
    """JSON text of ``value`` with object keys ordered as ``schema``'s ``properties`` (then the
    others in their own order), one space after ``:`` and ``,`` when ``whitespace`` allows it.

    Parameters
    ----------
    value : JSON value
    schema : dict or bool
        Only ``properties``, ``items``/``prefixItems`` and local ``$ref`` are followed.
    whitespace : int or None

    Returns
    -------
    str
    """
    sep = (",", ":") if whitespace == 0 else (", ", ": ")
    return _dump(value, schema, schema, sep)


def _follow(schema, root):
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 20:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            break
        node = root
        for tok in ref[2:].split("/"):
            tok = tok.replace("~1", "/").replace("~0", "~")
            node = node.get(tok) if isinstance(node, dict) else None
        if node is None:
            break
        schema = node
        seen += 1
    return schema if isinstance(schema, dict) else {}


def _declared(schema, root) -> list:
    schema = _follow(schema, root)
    names = list((schema.get("properties") or {}))
    for kw in ("allOf",):
        for sub in schema.get(kw, []) or []:
            names += [n for n in _declared(sub, root) if n not in names]
    for r in schema.get("required", []) or []:
        if r not in names:
            names.append(r)
    return names


def _dump(value, schema, root, sep) -> str:
    schema = _follow(schema, root)
    if isinstance(value, dict):
        order = [k for k in _declared(schema, root) if k in value]
        order += [k for k in value if k not in order]
        props = schema.get("properties") or {}
        items = [json.dumps(k, ensure_ascii=False) + sep[1] + _dump(value[k], props.get(k, {}), root, sep)
                 for k in order]
        return "{" + sep[0].join(items) + "}"
    if isinstance(value, list):
        prefix = schema.get("prefixItems") or (schema.get("items") if isinstance(schema.get("items"), list) else [])
        rest = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        out = [_dump(v, prefix[i] if i < len(prefix) else rest, root, sep) for i, v in enumerate(value)]
        return "[" + sep[0].join(out) + "]"
    return json.dumps(value, ensure_ascii=False)
