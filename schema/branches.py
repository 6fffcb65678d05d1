"""A root union as schemas of its own: the branches a compilation falls back to.

A schema whose root is an ``anyOf`` of objects is one automaton, or one network, for all its
branches: the walk must tell at each byte which branches a text is still in. In any order that
is a product of the branches' key sets wherever a member's values differ between them (a tagged
union whose tag may come last); past the budget, the compiler takes the branches apart instead
(:func:`~.compiler.compile_json_schema`), and the index walks them side by side
(:class:`~tokenfsm.masks.union.UnionIndex`: a configuration per live branch, a mask the union of
theirs). The language is the same: the union of the branches'.

:func:`root_branches` makes branch ``i`` the root with every other branch ``false``, so that a
pointer into it (in a warning or an error) is the one the schema has. A ``oneOf`` is taken apart
only where no value meets two branches (:func:`disjoint_branches`): then exactly one is the same
as at least one.

Example
-------
>>> tagged = {"type": "object", "required": ["kind"], "oneOf": [
...     {"properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}},
...     {"properties": {"kind": {"enum": ["b", "c"]}, "y": {"type": "string"}}}]}
>>> [b["oneOf"][:] for b in root_branches(tagged)] == [
...     [tagged["oneOf"][0], False], [False, tagged["oneOf"][1]]]
True
>>> root_branches({"oneOf": [{"minimum": 0}, {"maximum": 9}]}) is None   # 5 meets both
True
"""

from __future__ import annotations

__all__ = ["root_branches", "disjoint_branches"]

#: Keywords that name a place a reference may land on: a branch holding one is not replaced
#: by ``false`` (what referred there would change).
_NAMING = ("$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor")
#: Root keywords that read what the branches evaluated: the union of the branches taken apart
#: is not the schema's language there.
_READS_BRANCHES = ("unevaluatedProperties", "unevaluatedItems", "$ref", "$dynamicRef",
                   "$recursiveRef")


def root_branches(schema) -> list | None:
    """The branches of ``schema``'s root ``anyOf`` (or, without one, of its ``oneOf`` where
    :func:`disjoint_branches` holds), each the root with every other branch ``false``; None
    where the root is no union of two branches or more, or where taking it apart could change
    what a keyword reads: the root reads what its branches evaluated, a reference names a
    place inside a branch, or a branch names a place (``$id``, ``$anchor``)."""
    if not isinstance(schema, dict) or any(k in schema for k in _READS_BRANCHES):
        return None
    kw = "anyOf" if isinstance(schema.get("anyOf"), list) else "oneOf"
    alts = schema.get(kw)
    if not isinstance(alts, list) or sum(a is not False for a in alts) < 2:
        return None
    if kw == "oneOf" and not disjoint_branches(schema, alts):
        return None
    if any(_names_a_place(a) for a in alts) or _refers_into(schema, kw):
        return None
    return [dict(schema, **{kw: [a if j == i else False for j, a in enumerate(alts)]})
            for i, a in enumerate(alts) if a is not False]


def disjoint_branches(schema: dict, alts: list) -> bool:
    """Whether no value meets two of ``alts`` beside ``schema``: every value is an object
    (``type: object`` at the root or in each branch) and some name is required in every branch
    (by the root or the branch) with a ``const`` or ``enum`` of scalars in each branch's
    ``properties``, no value in two of them (a tag). A sufficient condition, read from the
    keywords as written (what else the branches say only narrows those values)."""
    live = [a for a in alts if a is not False]
    if not all(isinstance(a, dict) for a in live):
        return False
    if not (_objects_only(schema) or all(_objects_only(a) for a in live)):
        return False
    root_required = schema.get("required", [])
    if not isinstance(root_required, list):
        return False
    names = None
    for a in live:
        required = a.get("required", [])
        if not isinstance(required, list):
            return False
        here = {n for n in set(root_required) | set(required) if isinstance(n, str)}
        names = here if names is None else names & here
    for name in sorted(names or ()):
        seen: set = set()
        for a in live:
            values = _tag_values(a, name)
            if values is None or values & seen:
                break
            seen |= values
        else:
            return True
    return False


def _objects_only(s: dict) -> bool:
    t = s.get("type")
    return t == "object" or t == ["object"]


def _tag_values(branch: dict, name: str) -> set | None:
    """The scalars a branch's ``properties[name]`` allows by its ``const`` or ``enum`` (keyed
    so that ``1`` and ``1.0`` meet and ``true`` and ``1`` do not), or None."""
    props = branch.get("properties")
    sub = props.get(name) if isinstance(props, dict) else None
    if not isinstance(sub, dict):
        return None
    if "const" in sub:
        values = [sub["const"]]
    elif isinstance(sub.get("enum"), list):
        values = sub["enum"]
    else:
        return None
    out = set()
    for v in values:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            out.add((type(v).__name__, v))
        elif isinstance(v, (int, float)):
            out.add(("number", v))
        else:
            return None         # (arrays and objects: equality is not worth reading here)
    return out


def _names_a_place(node) -> bool:
    """Whether ``node`` holds a keyword that a reference may name (anywhere inside)."""
    todo = [node]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            if any(isinstance(x.get(k), str) for k in _NAMING):
                return True
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
    return False


def _refers_into(schema: dict, kw: str) -> bool:
    """Whether a reference anywhere in ``schema`` may land inside its root ``kw`` branches."""
    todo = [schema]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("$ref", "$dynamicRef", "$recursiveRef") and isinstance(v, str) \
                        and kw in v:
                    return True
                todo.append(v)
        elif isinstance(x, list):
            todo.extend(x)
    return False
