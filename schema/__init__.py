# --- slot templates and tool-call formats (schema/template.py, schema/toolcalls.py) ---
from .template import Slot, Template, TemplateError, compile_template  # noqa: E402,F401
# --- end slot templates and tool-call formats ---
