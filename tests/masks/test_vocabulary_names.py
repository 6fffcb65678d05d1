"""A saved index names the vocabulary it was built for, and loading it with another says which.

The oracle is the two vocabularies themselves: the error must carry their names and sizes as given
at construction, and the fingerprints that actually differ.
"""

import json
import zipfile

import numpy as np
import pytest

from tokenfsm.automata import DFA
from tokenfsm.masks import TokenIndex, Vocabulary, VocabularyMismatch
from tokenfsm.masks.builtin_vocab import load_vocabulary


def small(name, extra=()):
    return Vocabulary([b"a", b"b", b"ab", *extra, None], eos_token_ids=[3 + len(extra)], name=name)


def test_mismatch_names_both_vocabularies_and_their_sizes(tmp_path):
    built, other = small("tiny-a"), small("tiny-b", extra=[b"ba"])
    path = tmp_path / "ix.npz"
    TokenIndex.build(DFA.from_regex("(ab)+"), built).save(path)
    with pytest.raises(VocabularyMismatch) as e:
        TokenIndex.load(path, other)
    err = e.value
    assert (err.expected_name, err.expected_size) == ("tiny-a", 4)
    assert (err.actual_name, err.actual_size) == ("tiny-b", 5)
    assert (err.expected, err.actual) == (built.fingerprint, other.fingerprint)
    msg = str(err)
    assert "'tiny-a' (4 ids" in msg and "'tiny-b' (5 ids" in msg
    assert built.fingerprint[:12] in msg and other.fingerprint[:12] in msg
    # the same tokens under another name are the same vocabulary
    assert TokenIndex.load(path, small("renamed")).num_states > 1


def test_an_index_saved_without_a_name_still_reports_sizes(tmp_path):
    path = tmp_path / "ix.npz"
    TokenIndex.build(DFA.from_regex("a+"), Vocabulary([b"a", None], eos_token_ids=[1])).save(path)
    with zipfile.ZipFile(path) as z:
        meta = json.loads(bytes(np.load(z.open("meta.npy"))).decode())
    assert meta["vocab_name"] is None and meta["vocab_size"] == 2
    with pytest.raises(VocabularyMismatch) as e:
        TokenIndex.load(path, small("tiny-a"))
    assert "(2 ids" in str(e.value) and "'tiny-a' (4 ids" in str(e.value)


def test_builtin_vocabularies_carry_their_short_names():
    v = load_vocabulary("qwen")
    assert v.name == "qwen" and load_vocabulary("llama3").name == "llama3"
    assert "name='qwen'" in repr(v)


@pytest.mark.parametrize("package, resource", [("tokenfsm_no_such_package", "v.json"),
                                               ("tokenfsm.masks", "data/no_such_vocabulary.tiktoken")])
def test_missing_builtin_vocabulary_names_the_distribution(monkeypatch, package, resource):
    # the second case is cl100k's: an importable package (tiktoken installs a tiktoken_ext too)
    # that lacks the file, because the distribution that ships it is not installed
    from tokenfsm.masks import VocabularyError
    from tokenfsm.masks import builtin_vocab

    spec = builtin_vocab.BuiltinVocabulary("fake", "a test", package, resource, "fake-vocab-dist")
    monkeypatch.setitem(builtin_vocab.BUILTIN_VOCABULARIES, "fake", spec)
    with pytest.raises(VocabularyError) as e:
        load_vocabulary("fake")
    assert "pip install fake-vocab-dist" in str(e.value) and "tokenfsm[vocabs]" in str(e.value)
