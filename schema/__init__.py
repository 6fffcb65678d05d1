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
from .errors import OptionError, SchemaError, SchemaWarning, TokenfsmError, UnsupportedSchema

__all__ = ["compile_json_schema", "CompiledSchema", "SchemaError", "UnsupportedSchema",
           "SchemaWarning", "TokenfsmError", "OptionError"]

# --- slot templates and tool-call formats (schema/template.py, schema/toolcalls.py) ---
from .template import Slot, Template, TemplateError, compile_template  # noqa: E402
from .toolcalls import (  # noqa: E402
    STYLES,
    CompiledArguments,
    CompiledToolCalls,
    compile_arguments,
    compile_tool_calls,
    format_tool_call,
)

__all__ += ["Slot", "Template", "TemplateError", "compile_template", "STYLES", "CompiledArguments",
            "CompiledToolCalls", "compile_arguments", "compile_tool_calls", "format_tool_call"]
# --- end slot templates and tool-call formats ---
