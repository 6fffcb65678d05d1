"""JSON Schema to automata of the JSON text a model may emit.

Example
-------
>>> from tokenfsm.schema import compile_json_schema
>>> cs = compile_json_schema({"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2},
...                          whitespace=0)
>>> cs.accepts('["a","b"]'), cs.accepts('["c"]')
(True, False)
"""

from .compiler import CompiledSchema, compile_json_schema
from .errors import SchemaError, SchemaWarning, UnsupportedSchema

__all__ = ["compile_json_schema", "CompiledSchema", "SchemaError", "UnsupportedSchema",
           "SchemaWarning"]
