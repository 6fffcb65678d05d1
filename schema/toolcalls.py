"""Tool calls in the formats models are trained on: JSON, Qwen / MiniMax / GLM XML, Kimi-K3 markers.

Chat templates write a tool call's arguments in different syntaxes. The same JSON Schema for the
arguments must hold in each of them, and a value must never run into the syntax around it:

=============== ===================================================================================
``json``        ``<tool_call>\\n{"name": "NAME", "arguments": ARGS}\\n</tool_call>`` (Hermes / Qwen2.5),
                ``ARGS`` a JSON object
``qwen_xml``    ``<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n…</function>\\n</tool_call>``
``minimax_xml`` ``<minimax:tool_call>\\n<invoke name="NAME">\\n<parameter name="KEY">VALUE</parameter>\\n…</invoke>\\n</minimax:tool_call>``
``glm_xml``     ``<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…</tool_call>``
``kimi_k3_xml`` ``<|open|>call tool="NAME" index="N"<|sep|>`` then per argument
                ``<|open|>argument key="KEY" type="TYPE"<|sep|>VALUE<|close|>argument<|sep|>``, then
                ``<|close|>call<|sep|>``; ``TYPE`` is the JSON type of the value
=============== ===================================================================================

In the XML styles a property whose values are all strings is written as raw text (no quotes, no
escapes); any other value is JSON text, compiled from the property's subschema by the JSON Schema
compiler. The schema's keywords hold in every style: required keys are present, undeclared keys
appear only when allowed, and every value is constrained by its subschema (raw text values are the
decoded strings the subschema accepts, exactly).

Exclusions (``excludes``) apply in every style. In raw text they forbid the substring in the text
as written; in JSON values they apply as the JSON compiler applies them (to string contents as
written). Because raw text is delimited by the formatting around it, an exclusion that starts or
ends with whitespace is ambiguous there and rejected with :class:`SchemaError`. **Raw text and JSON
values in the XML styles never contain the style's own value terminator** (``</parameter>``,
``</arg_value>``, ``<|close|>``), even when no exclusions are given: otherwise a value could swallow
its terminator and everything after it.

Example
-------
>>> tools = [{"name": "get_weather", "parameters": {
...     "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
>>> calls = compile_tool_calls(tools, style="qwen_xml")
>>> calls.accepts("<tool_call>\\n<function=get_weather>\\n<parameter=city>\\nParis\\n"
...               "</parameter>\\n</function>\\n</tool_call>")
True
>>> format_tool_call("get_weather", {"city": "Paris"}, "kimi_k3_xml", tools[0]["parameters"])[:44]
'<|open|>call tool="get_weather" index="0"<|s'


Where the formats come from: the models' chat templates (Qwen3-Coder, MiniMax-M2, GLM-4.5,
Kimi) as xgrammar's structural tags and vLLM's tool parsers write them. Making a value's language
exclude its terminator is the same "contains none of" intersection the slot templates use
(:mod:`.template`).
"""

from __future__ import annotations

import json
import warnings as _warnings
from dataclasses import dataclass, field
from collections.abc import Iterable, Mapping
from typing import Any, Sequence

from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import Budget, BudgetExceeded, as_budget

from .errors import SchemaError, SchemaWarning, UnsupportedSchema
from .keywords import ANNOTATIONS

__all__ = ["STYLES", "compile_tool_calls", "compile_arguments", "CompiledArguments",
           "CompiledToolCalls", "format_arguments", "format_tool_call", "raw_string_dfa"]

STYLES = ("json", "qwen_xml", "minimax_xml", "glm_xml", "kimi_k3_xml")
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")

# keywords of the top-level arguments object that the XML styles enforce, or that say nothing
# (the keyword table's annotations, identifiers and definitions; "strict" is OpenAI's flag)
_OBJECT_KEYWORDS = {"type", "properties", "required", "additionalProperties", "strict"} | ANNOTATIONS


# ---------------------------------------------------------------------------- styles

def _xml_attr(s: str) -> str:
    return s.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


@dataclass(frozen=True)
class _Style:
    """The spelling of one XML style: argument wrappers, call wrappers, the value terminator."""

    name: str
    arg_begin: str      # with {key} and, for Kimi, {type}
    arg_end: str
    call_begin: str     # with {name} and, for Kimi, {index}
    call_end: str
    block_begin: str    # around all calls of one turn
    block_end: str
    call_sep: str       # between parallel calls
    terminator: str     # a value must never contain it
    key_chars: CharSet  # characters an undeclared key may use
    attr_quoted: bool   # keys and names are XML attribute values

    def key(self, k: str) -> str:
        return _xml_attr(k) if self.attr_quoted else k

    def arg_open(self, key: str, typ: str = "") -> str:
        return self.arg_begin.replace("{key}", self.key(key)).replace("{type}", typ)

    def call_open(self, name: str, index: str = "0") -> str:
        return self.call_begin.replace("{name}", self.key(name)).replace("{index}", index)


_NOT_MARKUP = ~CharSet.of("<", ">", "\n", "\r", '"', "&", "=")
XML_STYLES: dict[str, _Style] = {
    "qwen_xml": _Style("qwen_xml", "<parameter={key}>\n", "\n</parameter>\n",
                       "<function={name}>\n", "</function>\n", "<tool_call>\n", "</tool_call>",
                       "\n", "</parameter>", _NOT_MARKUP, False),
    "minimax_xml": _Style("minimax_xml", '<parameter name="{key}">', "</parameter>\n",
                          '<invoke name="{name}">\n', "</invoke>\n", "<minimax:tool_call>\n",
                          "</minimax:tool_call>", "", "</parameter>", _NOT_MARKUP, True),
    "glm_xml": _Style("glm_xml", "<arg_key>{key}</arg_key><arg_value>", "</arg_value>",
                      "<tool_call>{name}", "</tool_call>", "", "", "\n", "</arg_value>",
                      _NOT_MARKUP, False),
    "kimi_k3_xml": _Style("kimi_k3_xml", '<|open|>argument key="{key}" type="{type}"<|sep|>',
                          "<|close|>argument<|sep|>", '<|open|>call tool="{name}" index="{index}"<|sep|>',
                          "<|close|>call<|sep|>", "", "", "", "<|close|>", _NOT_MARKUP, True),
}

# JSON texts by type (the first character tells the type of a JSON value written without padding)
_ANY = DFA.universal()
_TYPE_PREFIX = {
    "string": DFA.concat_all([DFA.literal('"'), _ANY]),
    "object": DFA.concat_all([DFA.literal("{"), _ANY]),
    "array": DFA.concat_all([DFA.literal("["), _ANY]),
    "number": DFA.concat_all([DFA.from_charset(CharSet.of("-", *"0123456789")), _ANY]),
    "boolean": DFA.literal("true") | DFA.literal("false"),
    "null": DFA.literal("null"),
}
_INTEGER_TEXT = DFA.from_regex(r"-?(0|[1-9][0-9]*)")


# ---------------------------------------------------------------------------- raw strings

def raw_string_dfa(json_text: DFA) -> DFA:
    """The decoded strings whose shortest JSON spelling is in ``json_text``.

    The inverse image of ``json_text`` under the canonical encoding (``json.dumps`` with
    ``ensure_ascii=False``): every character stands for itself except ``"``, ``\\`` and the
    control characters, which stand for their escapes. Exact for any language that holds the
    canonical spelling of each of its strings (the JSON compiler's string languages hold all
    spellings).

    Parameters
    ----------
    json_text : DFA
        Quoted JSON string texts (texts of other types are ignored).

    Returns
    -------
    DFA
        Over decoded characters: what a raw-text value may be.
    """
    d = json_text.minimize()
    if d.start == 0:
        return DFA.empty()
    special = CharSet.of('"', "\\") | CharSet.range(0, 0x1F)
    classes = [c - special for c in d.classes if c - special]
    spelled = [chr(x) for lo, hi in special.ranges for x in range(lo, hi + 1)]
    classes += [CharSet.of(ch) for ch in spelled]
    reps = [c.min() for c in classes]

    def walk(s: int, text: str) -> int:
        for ch in text:
            s = d.delta[s][d.class_of(ch)]
            if s == 0:
                break
        return s

    delta = []
    for s in range(len(d.delta)):
        row = []
        for k, rep in enumerate(reps):
            ch = chr(rep)
            row.append(d.delta[s][d.class_of(ch)] if k < len(reps) - len(spelled)
                       else walk(s, json.dumps(ch)[1:-1]))
        delta.append(row)
    start = walk(d.start, '"')
    accepting = [s for s in range(1, len(d.delta)) if walk(s, '"') in d.accepting]
    return DFA.from_parts(classes, delta, accepting, start).minimize()


# ---------------------------------------------------------------------------- results

@dataclass
class CompiledArguments:
    """The automaton of one arguments object written in one style.

    Attributes
    ----------
    dfa : DFA
    style : str
    warnings : list of SchemaWarning
        What the automaton does not enforce exactly (lenient mode), from this module and from
        the JSON compiler.
    raw_keys : tuple of str
        Properties written as raw text (XML styles).
    """

    dfa: DFA
    style: str
    warnings: list = field(default_factory=list)
    raw_keys: tuple = ()

    def accepts(self, text: str) -> bool:
        return self.dfa.accepts(text)


@dataclass
class CompiledToolCalls:
    """The automaton of a model's tool-call output in one style.

    Attributes
    ----------
    dfa : DFA
    style : str
    tools : tuple of str
        Tool names, in the order given.
    arguments : dict of str to CompiledArguments
    warnings : list of SchemaWarning
    """

    dfa: DFA
    style: str
    tools: tuple
    arguments: dict
    warnings: list = field(default_factory=list)

    def accepts(self, text: str) -> bool:
        return self.dfa.accepts(text)


# ---------------------------------------------------------------------------- arguments

def _json_compiler():
    from .compiler import compile_json_schema as compile_json
    return compile_json


def _check_excludes(excludes: Sequence[str], style: str) -> list[str]:
    out = []
    for x in excludes:
        if not isinstance(x, str) or not x:
            raise SchemaError(f"excludes must be non-empty strings, got {x!r}")
        if style != "json" and (x[0].isspace() or x[-1].isspace()):
            raise SchemaError(f"exclusion {x!r} starts or ends with whitespace: in the {style} style "
                              f"raw values are padded by formatting whitespace, so it cannot be "
                              f"told apart from the padding")
        out.append(x)
    return out


def _with_defs(sub: Any, root: Mapping) -> Any:
    """``sub`` with the root's ``$defs``/``definitions`` so that its local ``$ref``\\ s resolve."""
    if not isinstance(sub, Mapping):
        return sub
    out = dict(sub)
    for k in ("$defs", "definitions"):
        if k in root:
            out[k] = {**root[k], **(sub.get(k) or {})}
    return out


def _resolve_root(schema: Any) -> Mapping:
    """The arguments schema with a top-level local ``$ref`` followed."""
    seen = set()
    while isinstance(schema, Mapping) and "$ref" in schema and len(schema) <= 3:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
            break
        seen.add(ref)
        node: Any = schema
        for part in ref[2:].split("/"):
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, Mapping) else None
        if node is None:
            raise SchemaError(f"unresolvable $ref {ref!r}", "/$ref")
        schema = _with_defs(node, schema)
    return schema


def _declared_type(sub: Any) -> set[str] | None:
    t = sub.get("type") if isinstance(sub, Mapping) else None
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return set(t)
    return None


@dataclass
class _Member:
    key: str
    body: DFA          # the whole written argument: wrapper, value, terminator
    required: bool


def compile_arguments(schema: Any, style: str = "json", *, excludes: Iterable[str] = (),
                      whitespace: int | None = 2, strict: bool = True, allow_extra_keys: bool = False,
                      property_order: str = "schema", max_depth: int = 3,
                      budget: Budget | None = None) -> CompiledArguments:
    """One arguments object in ``style``: JSON text, or the XML style's argument sequence.

    Parameters
    ----------
    schema : dict
        JSON Schema of the arguments; in the XML styles an object schema (``type``,
        ``properties``, ``required``, ``additionalProperties``; a top-level local ``$ref``).
    style : str
        One of :data:`STYLES`.
    excludes : iterable of str
        Substrings no string value may contain (raw text: as written). XML styles reject an
        exclusion that starts or ends with whitespace. Values in XML styles never contain the
        style's value terminator, with or without ``excludes``.
    whitespace, strict, max_depth, budget
        Passed to the JSON compiler for JSON values (see ``compile_json_schema``).
    allow_extra_keys : bool
        Write undeclared keys where the schema allows them (after the declared ones).
    property_order : {"schema", "any"}
        Declared keys in schema order, or in any order (exponential in the number of keys, under
        ``budget``).

    Returns
    -------
    CompiledArguments

    Raises
    ------
    SchemaError
        Unknown style, a bad exclusion, an unsatisfiable required property.
    UnsupportedSchema
        (strict) Top-level keywords the XML styles cannot enforce, or a non-object schema.
    BudgetExceeded
    """
    if style not in STYLES:
        raise SchemaError(f"unknown style {style!r}; expected one of {', '.join(STYLES)}")
    excludes = _check_excludes(list(excludes), style)
    compile_json = _json_compiler()
    if property_order not in ("schema", "any"):
        raise SchemaError(f"property_order must be 'schema' or 'any', not {property_order!r}")
    if style == "json":
        c = compile_json(schema, whitespace=whitespace, excludes=excludes, strict=strict,
                         allow_extra_keys=allow_extra_keys, property_order=property_order,
                         max_depth=max_depth, budget=budget)
        return CompiledArguments(c.dfa, style, list(c.warnings))

    st = XML_STYLES[style]
    warns: list = []

    def unsupported(msg: str, pointer: str, keyword: str | None = None):
        if strict:
            raise UnsupportedSchema(msg, pointer, keyword)
        w = SchemaWarning(f"{msg} (at {pointer or '/'}); not enforced")
        warns.append(w)
        _warnings.warn(w, stacklevel=3)

    root = _resolve_root(schema if schema is not None else {})
    if root is True or root == {}:
        root = {"type": "object"}
    if not isinstance(root, Mapping):
        raise SchemaError(f"the {style} style needs an object schema for the arguments")
    types = _declared_type(root)
    if types is not None and "object" not in types:
        raise SchemaError(f"the {style} style writes an object; the schema's type is {sorted(types)}",
                          "/type")
    if types is not None and types != {"object"}:
        unsupported(f"non-object alternatives {sorted(types - {'object'})} cannot be written in "
                    f"the {style} style", "/type", "type")
    for kw in root:
        if kw not in _OBJECT_KEYWORDS:
            unsupported(f"keyword {kw!r} is not enforced on the {style} arguments object",
                        f"/{kw}", kw)

    props: Mapping = root.get("properties") or {}
    required = list(root.get("required") or [])
    for r in required:
        if r not in props:
            unsupported(f"required key {r!r} is not declared in properties", "/required", "required")
    forbidden = list(dict.fromkeys([*excludes, st.terminator]))
    no_forbidden = DFA.excluding(forbidden, budget=budget)

    members: list[_Member] = []
    raw_keys = []
    for key, sub in props.items():
        pointer = f"/properties/{key.replace('~', '~0').replace('/', '~1')}"
        is_required = key in required
        key_text = st.key(key)
        unwritable = not st.attr_quoted and any(ch not in st.key_chars for ch in key)
        if any(x in key_text for x in excludes) or st.terminator in key_text or unwritable:
            if is_required:
                raise SchemaError(f"required key {key[:80]!r} contains "
                                  + (f"markup the {style} style writes unquoted" if unwritable
                                     else "an excluded string"), pointer)
            continue
        try:
            body, raw = _argument_dfa(st, key, _with_defs(sub, root), compile_json, no_forbidden,
                                      excludes, whitespace, strict, max_depth, budget, warns)
        except BudgetExceeded as e:
            raise e.with_pointer(pointer) from None
        except SchemaError as e:
            raise type(e)(e.msg, pointer + (e.pointer or "")) if type(e) is SchemaError else e
        if body.is_empty():
            if is_required:
                raise SchemaError(f"no value of required key {key!r} can be written", pointer)
            continue
        if raw:
            raw_keys.append(key)
        members.append(_Member(key, body, is_required))

    extra = None
    addl = root.get("additionalProperties", True)
    if allow_extra_keys and addl is not False:
        key_dfa = DFA.from_charset(st.key_chars).plus().intersect(no_forbidden, budget=budget)
        declared = DFA.union_all([DFA.literal(st.key(k)) for k in props]) if props else DFA.empty()
        key_dfa = key_dfa - declared
        sub = {} if addl is True else addl
        extra = _argument_dfa(st, None, _with_defs(sub, root), compile_json, no_forbidden, excludes,
                              whitespace, strict, max_depth, budget, warns, key_dfa=key_dfa)[0]
    dfa = _sequence(members, extra, property_order == "any", budget)
    return CompiledArguments(dfa, style, warns, tuple(raw_keys))


def _argument_dfa(st: _Style, key: str | None, sub: Any, compile_json, no_forbidden: DFA,
                  excludes: list[str], whitespace, strict, max_depth, budget, warns,
                  key_dfa: DFA | None = None) -> tuple[DFA, bool]:
    """The written argument (opening, value, closing) for one property; (dfa, written raw)."""
    if sub is False:
        return DFA.empty(), False
    # raw strings: compiled without exclusions (so that lengths stay exact), the exclusions are
    # then applied to the raw text; other values: the JSON compiler applies them to strings inside
    c = compile_json(True if sub == {} else sub, whitespace=whitespace, strict=strict,
                     max_depth=max_depth, budget=budget)
    strings = c.dfa.intersect(_TYPE_PREFIX["string"], budget=budget)
    value = c.dfa.difference(_TYPE_PREFIX["string"], budget=budget)
    if not value.is_empty() and excludes:
        c = compile_json(True if sub == {} else sub, whitespace=whitespace, excludes=excludes,
                         strict=strict, max_depth=max_depth, budget=budget)
    warns.extend(c.warnings)
    if not value.is_empty():
        value = c.dfa  # every type, strings spelled as JSON
    others = value.difference(_TYPE_PREFIX["string"], budget=budget)
    declared = _declared_type(sub)

    def raw() -> DFA:
        return raw_string_dfa(strings).intersect(no_forbidden, budget=budget)

    def as_json(d: DFA) -> DFA:
        return d.intersect(no_forbidden, budget=budget)

    def wrap(value_dfa: DFA, typ: str = "") -> DFA:
        if key_dfa is not None:
            pre, post = st.arg_begin.split("{key}")
            begin = DFA.concat_all([DFA.literal(pre), key_dfa, DFA.literal(post.replace("{type}", typ))])
        else:
            begin = DFA.literal(st.arg_open(key, typ))
        return DFA.concat_all([begin, value_dfa, DFA.literal(st.arg_end)], budget=budget)

    if st.name == "kimi_k3_xml":
        parts = []
        for typ in ("string", "object", "array", "number", "boolean", "null"):
            if typ == "string":
                part = raw() if not strings.is_empty() else DFA.empty()
            else:
                part = as_json(value.intersect(_TYPE_PREFIX[typ], budget=budget))
            if part.is_empty():
                continue
            if typ == "number":
                ints = part.intersect(_INTEGER_TEXT, budget=budget)
                if declared and "integer" in declared and "number" not in declared:
                    parts.append(wrap(part, "integer"))
                    continue
                if declared and "integer" in declared and not ints.is_empty():
                    parts.append(wrap(ints, "integer"))
                    part = part - _INTEGER_TEXT
                    if part.is_empty():
                        continue
            parts.append(wrap(part, typ))
        return (DFA.union_all(parts, budget=budget) if parts else DFA.empty()), (
            not strings.is_empty() and others.is_empty())
    if others.is_empty() and not strings.is_empty():
        return wrap(raw()), True
    return wrap(as_json(value)), False


def _sequence(members: Sequence[_Member], extra: DFA | None, any_order: bool,
              budget: Budget | None) -> DFA:
    """Members in order (optional ones skippable) or in any order, then any number of extras."""
    tail = extra.star(budget=budget) if extra is not None else DFA.epsilon()
    if not any_order:
        parts = [m.body if m.required else m.body.optional(budget=budget) for m in members]
        return DFA.concat_all([*parts, tail], budget=budget)
    from tokenfsm.automata.nfa import NFA

    from .jsontext import embed, nfa_to_dfa

    meter = (budget or Budget()).meter("arguments")
    nfa = NFA(budget, "arguments")
    final = nfa.new_state()
    tail_entry = embed(nfa, tail, final)
    required = frozenset(i for i, m in enumerate(members) if m.required)
    node: dict = {}
    todo = []

    def node_of(used: frozenset) -> int:
        if used not in node:
            node[used] = nfa.new_state()
            meter.add()
            todo.append(used)
        return node[used]

    start = node_of(frozenset())
    while todo:
        used = todo.pop()
        q = node[used]
        if required <= used and tail_entry is not None:
            nfa.eps[q].append(tail_entry)
        for i, m in enumerate(members):
            if i not in used:
                entry = embed(nfa, m.body, node_of(used | {i}))
                meter.add(m.body.num_states)
                if entry is not None:
                    nfa.eps[q].append(entry)
    nfa.start = start
    nfa.accepting = {final}
    return nfa_to_dfa(nfa, budget, "arguments")


# ---------------------------------------------------------------------------- tool calls

#: What each style writes around calls, and a tool name may therefore not contain (the XML styles
#: that write names unquoted also refuse every character outside their ``key_chars``).
_CALL_MARKERS = {"json": ("<tool_call>", "</tool_call>"),
                 **{name: tuple(dict.fromkeys(
                     p for s in (st.block_begin, st.block_end, st.call_end, st.terminator,
                                 st.call_begin.split("{")[0], st.arg_begin.split("{")[0])
                     for p in [s.strip()] if p)) for name, st in XML_STYLES.items()}}


def _tool_name(tool: Mapping) -> str:
    f = tool.get("function", tool) if isinstance(tool, Mapping) else None
    if not isinstance(f, Mapping) or not isinstance(f.get("name"), str) or not f["name"]:
        raise SchemaError("each tool needs a non-empty 'name' (or 'function': {'name': ...})")
    return f["name"]


def _check_tool_name(name: str, style: str, excludes: Sequence[str]) -> None:
    """A name the style can write so that a parser finds the call's end: no marker of the style,
    no excluded string, valid Unicode; in the styles that write it unquoted, no markup character."""
    where = f"tool name {name[:80]!r}"
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in name):
        raise SchemaError(f"{where} holds a lone surrogate, which no text can contain")
    for marker in (*_CALL_MARKERS[style], *excludes):
        if marker in name:
            raise SchemaError(f"{where} contains {marker!r}: the call could not be told apart "
                              f"from the text around it")
    st = XML_STYLES.get(style)
    if st is not None and not st.attr_quoted:
        bad = [ch for ch in name if ch not in st.key_chars]
        if bad:
            raise SchemaError(f"{where} contains {bad[0]!r}, which the {style} style writes unquoted "
                              f"inside its markup")


def _tool_parameters(tool: Mapping) -> Any:
    f = tool.get("function", tool)
    return f.get("parameters", {"type": "object"})


def compile_tool_calls(tools: Sequence[Mapping], style: str = "json", *, excludes: Iterable[str] = (),
                       whitespace: int | None = 2, parallel: bool = False,
                       max_calls: int | None = None, strict: bool = True,
                       allow_extra_keys: bool = False, property_order: str = "schema",
                       max_depth: int = 3, budget: Budget | None = None) -> CompiledToolCalls:
    """The automaton of a tool-call turn: one call (or several) to the given tools, in ``style``.

    Parameters
    ----------
    tools : sequence of dict
        ``{"name": ..., "parameters": <JSON Schema>}`` (or OpenAI's ``{"type": "function",
        "function": {...}}``).
    style : str
        One of :data:`STYLES`; the module docstring shows each.
    excludes : iterable of str
        Substrings no string value may contain (see :func:`compile_arguments`).
    whitespace : int or None
        Whitespace allowed between JSON tokens inside JSON values (the call wrappers are fixed).
    parallel : bool
        Allow one or more calls (in the style's way of writing several) instead of exactly one.
    max_calls : int, optional
        With ``parallel``, at most this many calls. In the Kimi-K3 style it also makes ``index``
        count exactly ``0, 1, ...``; without it the index of each parallel call is any decimal
        number (an automaton cannot count without a bound).
    strict, allow_extra_keys, property_order, max_depth, budget
        As in :func:`compile_arguments`.

    Returns
    -------
    CompiledToolCalls

    Notes
    -----
    In the ``json`` style the arguments' JSON text never contains ``</tool_call>`` and in the XML
    styles no value contains the value terminator, so a parser that splits on the markers always
    finds the right end.
    """
    if style not in STYLES:
        raise SchemaError(f"unknown style {style!r}; expected one of {', '.join(STYLES)}")
    budget = as_budget(budget)
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise TypeError(f"tools must be a sequence of tool dicts, not {type(tools).__name__}")
    tools = list(tools)
    if not tools:
        raise SchemaError("compile_tool_calls needs at least one tool")
    if max_calls is not None and (isinstance(max_calls, bool) or not isinstance(max_calls, int)):
        raise TypeError(f"max_calls must be an int or None, not {max_calls!r}")
    if max_calls is not None and max_calls < 1:
        raise SchemaError(f"max_calls must be at least 1, got {max_calls}")
    if isinstance(excludes, str):
        raise TypeError("excludes must be a collection of strings, not one string")
    excludes = list(excludes)
    names = [_tool_name(t) for t in tools]
    if len(set(names)) != len(names):
        raise SchemaError(f"duplicate tool names in {names}")
    for name in names:
        _check_tool_name(name, style, _check_excludes(excludes, style))
    args: dict[str, CompiledArguments] = {}
    warns: list = []
    for tool, name in zip(tools, names):
        a = compile_arguments(_tool_parameters(tool), style, excludes=excludes, whitespace=whitespace,
                              strict=strict, allow_extra_keys=allow_extra_keys,
                              property_order=property_order, max_depth=max_depth, budget=budget)
        args[name] = a
        warns.extend(a.warnings)

    count_max = max_calls if parallel else 1
    if style == "json":
        no_end = DFA.excluding(["</tool_call>"], budget=budget)
        calls = [DFA.concat_all([DFA.literal('<tool_call>\n{"name": ' + json.dumps(n, ensure_ascii=False)
                                             + ', "arguments": '),
                                 args[n].dfa.intersect(no_end, budget=budget),
                                 DFA.literal("}\n</tool_call>")], budget=budget) for n in names]
        one = DFA.union_all(calls, budget=budget)
        dfa = _repeat_with(one, DFA.literal("\n"), count_max, budget)
        return CompiledToolCalls(dfa, style, tuple(names), args, warns)

    st = XML_STYLES[style]

    def call(index: DFA) -> DFA:
        """One call to any of the tools, ``index`` the language of its Kimi-K3 index."""
        alts = []
        for n in names:
            pre, _, post = st.call_begin.replace("{name}", st.key(n)).partition("{index}")
            begin = DFA.concat_all([DFA.literal(pre), index if _ else DFA.epsilon(), DFA.literal(post)])
            alts.append(DFA.concat_all([begin, args[n].dfa, DFA.literal(st.call_end)], budget=budget))
        return DFA.union_all(alts, budget=budget)

    if style == "qwen_xml":
        # every call is its own <tool_call> block, blocks separated by a newline
        one_block = DFA.concat_all([DFA.literal(st.block_begin), call(DFA.epsilon()),
                                    DFA.literal(st.block_end)], budget=budget)
        dfa = _repeat_with(one_block, DFA.literal(st.call_sep), count_max, budget)
    elif style == "kimi_k3_xml" and count_max is not None:
        # calls numbered 0..k-1 in order: c0 (c1 (c2 ...)?)?; each call's states are charged
        # before the calls are made
        first = call(DFA.literal("0"))
        need = count_max * (first.num_states - 1)
        if need > budget.max_states:
            raise BudgetExceeded(budget.max_states, need, "tool calls")
        seq = [first] + [call(DFA.literal(str(i))) for i in range(1, count_max)]
        tail = DFA.epsilon()
        for c in reversed(seq[1:]):
            tail = DFA.concat_all([c, tail], budget=budget).optional(budget=budget)
        dfa = DFA.concat_all([seq[0], tail], budget=budget)
    else:
        index = DFA.from_regex(r"0|[1-9][0-9]*") if parallel else DFA.literal("0")
        body = _repeat_with(call(index), DFA.literal(st.call_sep), count_max, budget)
        dfa = DFA.concat_all([DFA.literal(st.block_begin), body, DFA.literal(st.block_end)],
                             budget=budget)
    return CompiledToolCalls(dfa, style, tuple(names), args, warns)


def _repeat_with(one: DFA, sep: DFA, max_count: int | None, budget: Budget | None) -> DFA:
    """``one (sep one){0, max_count-1}`` (unbounded when ``max_count`` is None)."""
    if max_count == 1:
        return one
    more = DFA.concat_all([sep, one], budget=budget)
    tail = more.star(budget=budget) if max_count is None else more.repeat(0, max_count - 1, budget=budget)
    return DFA.concat_all([one, tail], budget=budget)


# ---------------------------------------------------------------------------- writing calls

def _kimi_type(value: Any, sub: Any) -> str:
    declared = _declared_type(sub) or set()
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, int) and "integer" in declared:
        return "integer"
    if isinstance(value, (int, float)):
        return "number"
    return "array" if isinstance(value, list) else "object"


def format_arguments(arguments: Mapping[str, Any], style: str, schema: Any = None) -> str:
    """Write an arguments dict the way ``style`` does (the inverse of what the automaton reads).

    String values of properties whose schema is string-only (and in Kimi-K3 every string) are
    written raw; other values as compact JSON (``json.dumps`` with ``ensure_ascii=False``).

    Parameters
    ----------
    arguments : dict
    style : str
    schema : dict, optional
        The arguments schema; tells which properties are raw text.
    """
    if style == "json":
        return json.dumps(dict(arguments), ensure_ascii=False)
    st = XML_STYLES[style]
    props = (_resolve_root(schema) or {}).get("properties", {}) if isinstance(schema, Mapping) else {}
    out = []
    for k, v in arguments.items():
        sub = props.get(k, {})
        typ = _kimi_type(v, sub) if style == "kimi_k3_xml" else ""
        declared = _declared_type(sub)
        string_only = declared == {"string"} or (
            isinstance(sub, Mapping) and declared is None and "enum" in sub
            and all(isinstance(e, str) for e in sub["enum"])) or (
            isinstance(sub, Mapping) and declared is None and isinstance(sub.get("const"), str))
        raw = isinstance(v, str) and (style == "kimi_k3_xml" or string_only)
        text = v if raw else json.dumps(v, ensure_ascii=False)
        out.append(st.arg_open(k, typ) + text + st.arg_end)
    return "".join(out)


def format_tool_call(name: str, arguments: Mapping[str, Any], style: str, schema: Any = None,
                     index: int = 0) -> str:
    """One complete call (with its block markers) as ``style`` writes it.

    >>> format_tool_call("f", {"a": "x"}, "glm_xml", {"properties": {"a": {"type": "string"}}})
    '<tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value></tool_call>'
    """
    args = format_arguments(arguments, style, schema)
    if style == "json":
        return ('<tool_call>\n{"name": ' + json.dumps(name, ensure_ascii=False) + ', "arguments": '
                + args + "}\n</tool_call>")
    st = XML_STYLES[style]
    return st.block_begin + st.call_open(name, str(index)) + args + st.call_end + st.block_end
