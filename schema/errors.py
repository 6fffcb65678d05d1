"""Errors and warnings raised while lowering a JSON Schema to an automaton.

Every error names the JSON pointer of the subschema it is about, so that a user of a large schema
(Kubernetes manifests, OpenAPI components) can find the keyword at fault.

Example
-------
>>> from tokenfsm.schema import compile_json_schema, SchemaError
>>> try:
...     compile_json_schema({"type": "strnig"})
... except SchemaError as e:
...     print(e.pointer)
/type
"""

from __future__ import annotations

from tokenfsm.automata.errors import OptionError, TokenfsmError

__all__ = ["SchemaError", "UnsupportedSchema", "SchemaWarning", "TemplateError"]


class SchemaError(TokenfsmError, ValueError):
    """An invalid or unsatisfiable schema.

    Attributes
    ----------
    pointer : str
        JSON pointer (``""`` is the root) of the subschema at fault.
    msg : str
        What is wrong.
    """

    def __init__(self, msg: str, pointer: str = ""):
        self.msg = msg
        self.pointer = pointer
        super().__init__(f"{msg} (at {pointer or '/'})")


class UnsupportedSchema(SchemaError):
    """A keyword or value the automaton cannot enforce (raised in strict mode).

    Attributes
    ----------
    keyword : str or None
        The keyword, e.g. ``"uniqueItems"``.
    """

    def __init__(self, msg: str, pointer: str = "", keyword: str | None = None):
        self.keyword = keyword
        super().__init__(msg, pointer)


class SchemaWarning(UserWarning):
    """Something the automaton does not enforce exactly (lenient mode, unbounded whitespace,
    length bounds dropped under exclusions, recursion cut at the depth limit)."""


class TemplateError(SchemaError):
    """A template that cannot be compiled, or a text that :meth:`Template.parse` rejects.

    A :class:`SchemaError` (so a ``ValueError``) without a JSON pointer.

    Attributes
    ----------
    msg : str
        What is wrong.
    position : int or None
        For a rejected text, the offset where it stops fitting the template, when known.
    """

    def __init__(self, msg: str, position: int | None = None):
        self.msg = msg
        self.pointer = ""
        self.position = position
        ValueError.__init__(self, msg if position is None else f"{msg} (at offset {position})")
