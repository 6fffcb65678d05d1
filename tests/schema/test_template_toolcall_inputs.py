"""Tool names, argument keys and template options a caller may get wrong or craft.

Oracle for tool names: a call the compiled automaton accepts (the one ``format_tool_call`` writes)
must be split by a parser at the right place: the style's end markers occur in it exactly where
the style puts them, so a name can never close a call early. A name that would break that must be
refused with a ``SchemaError``.
"""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokenfsm.schema import SchemaError, Slot, compile_template, compile_tool_calls
from tokenfsm.schema.toolcalls import STYLES, XML_STYLES, format_tool_call

PARAMS = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
NAME_ALPHABET = list("ab_-.:=<>/|\"&' \n") + ["</tool_call>", "<tool_call>", "</parameter>",
                                                "<|close|>", "</function>", "\ud800", "é"]


def _end_markers(style):
    if style == "json":
        return ["</tool_call>"]
    s = XML_STYLES[style]
    return [m for m in (s.block_end, s.call_end) if m]


@pytest.mark.parametrize("style", STYLES)
@given(name=st.lists(st.sampled_from(NAME_ALPHABET), min_size=1, max_size=4).map("".join))
def test_a_tool_name_never_closes_its_call_early(style, name):
    try:
        calls = compile_tool_calls([{"name": name, "parameters": PARAMS}], style)
    except SchemaError as e:
        assert "tool name" in str(e)
        return
    text = format_tool_call(name, {"a": 1}, style, PARAMS)
    assert calls.accepts(text)
    for marker in _end_markers(style):
        # each end marker once, where the style writes it: after the arguments
        assert text.count(marker) == 1, (name, marker, text)
        assert text.index(marker) > text.index('"a"' if style == "json" else "1")


@pytest.mark.parametrize("style", STYLES)
def test_the_closing_marker_as_a_name_is_refused_or_escaped(style):
    for name in ["</tool_call>", "x</tool_call>y", _end_markers(style)[-1]]:
        try:
            compile_tool_calls([{"name": name, "parameters": PARAMS}], style)
        except SchemaError:
            continue
        text = format_tool_call(name, {"a": 1}, style, PARAMS)
        assert all(text.count(m) == 1 for m in _end_markers(style))


@pytest.mark.parametrize("style", ["qwen_xml", "glm_xml"])
def test_unquoted_styles_refuse_required_keys_with_markup(style):
    with pytest.raises(SchemaError, match="markup"):
        compile_tool_calls([{"name": "f", "parameters": {
            "type": "object", "properties": {"a>b": {"type": "integer"}}, "required": ["a>b"]}}], style)
    # an optional one is left out (never written), the rest still works
    calls = compile_tool_calls([{"name": "f", "parameters": {
        "type": "object", "properties": {"a>b": {"type": "integer"}, "c": {"type": "integer"}}}}],
        style, whitespace=0)
    assert calls.accepts(format_tool_call("f", {"c": 2}, style, {"properties": {"c": {"type": "integer"}}}))
    assert not re.search("a>b", calls.dfa.shortest() or "")


@pytest.mark.parametrize("bad, error", [
    (dict(tools="abc"), TypeError), (dict(tools={"name": "f"}), TypeError),
    (dict(max_calls="3", parallel=True), TypeError), (dict(max_calls=True, parallel=True), TypeError),
    (dict(max_calls=0, parallel=True), SchemaError), (dict(excludes="abc"), TypeError),
    (dict(budget="x"), TypeError),
])
def test_tool_call_options_of_the_wrong_type(bad, error):
    kw = dict(tools=[{"name": "f", "parameters": PARAMS}], style="json")
    kw.update(bad)
    with pytest.raises(error):
        compile_tool_calls(kw.pop("tools"), **kw)


def test_huge_max_calls_is_charged_before_the_calls_are_built():
    import time

    from tokenfsm.automata import BudgetExceeded

    for style in ("kimi_k3_xml", "json", "qwen_xml"):
        t0 = time.perf_counter()
        with pytest.raises(BudgetExceeded):
            compile_tool_calls([{"name": "f", "parameters": PARAMS}], style, parallel=True,
                               max_calls=10**8)
        assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("bad, error", [
    (dict(forbidden="abc"), TypeError), (dict(forbidden=5), TypeError),
    (dict(forbidden=[5]), TypeError), (dict(forbidden=[""]), SchemaError),
    (dict(open_tag=5), TypeError), (dict(close_tag=None), TypeError), (dict(budget="x"), TypeError),
])
def test_template_options_of_the_wrong_type(bad, error):
    with pytest.raises(error):
        compile_template(["a ", Slot("[a-z]+")], **bad)


def test_forbidden_agrees_with_excludes():
    from tokenfsm.schema import compile_json_schema

    for f in (lambda x: compile_template(["a", Slot("[a-z]+")], forbidden=x),
              lambda x: compile_json_schema({"type": "string"}, excludes=x)):
        with pytest.raises(TypeError, match="not one string"):
            f("abc")


def test_template_parts_and_values_of_the_wrong_type():
    with pytest.raises(TypeError, match="one string"):
        compile_template("The capital is")
    with pytest.raises(TypeError):
        compile_template([Slot(5)])
    t = compile_template(["The capital is ", Slot(r"[A-Z][a-z]+", name="city"), "."])
    with pytest.raises(TypeError):
        t.render({"city": 5})
    with pytest.raises(TypeError):
        t.render(["city"])
    assert t.render({"city": "Paris"}) == 'The capital is <|MASKED id="city"|>Paris<|/MASKED|>.'
