"""Saved indexes (versioned, fingerprinted, checked) and the compiler's caches."""

import json
import threading
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from mask_helpers import random_byte_dfas, small_vocabs

import tokenfsm.schema
from tokenfsm.automata import DFA, RegexError
from tokenfsm.masks import (
    FORMAT_VERSION,
    CorruptIndexError,
    IndexCompiler,
    Matcher,
    TokenIndex,
    Vocabulary,
    VocabularyMismatch,
)

VOCAB = Vocabulary([b"a", b"b", b"ab", b"{", b"}", b'"', b":", b" ", b"1", b"x", None], eos_token_ids=[10])


@pytest.fixture
def saved(tmp_path):
    index = TokenIndex.build(DFA.from_regex(r"(ab|a)+b?"), VOCAB)
    path = tmp_path / "index.npz"
    index.save(path)
    return index, path


def test_load_with_other_vocabulary(saved):
    _, path = saved
    other = Vocabulary([b"a", b"b", b"ab", b"{", b"}", b'"', b":", b" ", b"1", b"y", None], eos_token_ids=[10])
    with pytest.raises(VocabularyMismatch):
        TokenIndex.load(path, other)


def test_truncated_and_altered_files(saved, tmp_path):
    index, path = saved
    raw = path.read_bytes()
    for i, bad in enumerate([raw[: len(raw) // 2], raw[:10], b"", b"garbage" * 100]):
        p = tmp_path / f"bad{i}.npz"
        p.write_bytes(bad)
        with pytest.raises(CorruptIndexError):
            TokenIndex.load(p, VOCAB)
    # rewrite one array with a flipped bit (valid zip, valid npy): the checksum catches it
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["mask_rows"] = arrays["mask_rows"].copy()
    arrays["mask_rows"][-1, 0] ^= 1
    p = tmp_path / "flipped.npz"
    np.savez(p, **arrays)
    with pytest.raises(CorruptIndexError, match="checksum"):
        TokenIndex.load(p, VOCAB)


def test_format_version_is_checked(saved, tmp_path):
    _, path = saved
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    assert meta["version"] == FORMAT_VERSION and meta["vocab_fingerprint"] == VOCAB.fingerprint
    meta["version"] = FORMAT_VERSION + 1
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    p = tmp_path / "future.npz"
    np.savez(p, **arrays)
    with pytest.raises(CorruptIndexError, match="version"):
        TokenIndex.load(p, VOCAB)
    assert zipfile.is_zipfile(path)


def test_loaded_index_behaves_the_same(saved):
    index, path = saved
    back = TokenIndex.load(path, VOCAB)
    a, b = Matcher(index), Matcher(back)
    for t in [0, 2, 0, 1, 10]:
        a.advance(t)
        b.advance(t)
        assert a.state == b.state and a.allowed_token_ids().tolist() == b.allowed_token_ids().tolist()


def test_regex_cache_hits_and_option_keys():
    c = IndexCompiler(VOCAB, max_entries=2)
    i1 = c.regex("a+")
    assert c.regex("a+") is i1 and c.stats == dict(hits=1, disk_hits=0, builds=1, disk_errors=0)
    # explicit defaults share the key; any differing option does not
    assert c.regex("a+", flags=0) is i1
    i2 = c.regex("a+", flags=2)  # re.IGNORECASE
    assert i2 is not i1
    c.regex("b+")
    c.regex("ab")
    assert len(c) == 2  # LRU bound
    with pytest.raises(RegexError):
        c.regex("(")


def test_keys_cover_vocabulary_and_grammar():
    c1, c2 = IndexCompiler(VOCAB), IndexCompiler(Vocabulary(list(VOCAB.tokens), eos_token_ids=[]))
    assert c1.cache_key("regex", "a", {}) != c2.cache_key("regex", "a", {})
    assert c1.cache_key("regex", "a", {}) != c1.cache_key("regex", "b", {})
    assert c1.cache_key("regex", "a", {}) != c1.cache_key("json_schema", "a", {})
    # JSON Schema key order is part of the grammar (property order may follow it)
    s1 = {"properties": {"a": {}, "b": {}}}
    s2 = {"properties": {"b": {}, "a": {}}}
    assert c1.cache_key("json_schema", s1, {}) != c1.cache_key("json_schema", s2, {})
    assert c1.cache_key("json_schema", s1, {"whitespace": 0}) != c1.cache_key("json_schema", s1, {"whitespace": 2})


def test_disk_cache_survives_restart_and_detects_corruption(tmp_path):
    c = IndexCompiler(VOCAB, cache_dir=tmp_path)
    i1 = c.regex("(ab)+")
    files = list(tmp_path.glob("*.npz"))
    assert len(files) == 1
    c2 = IndexCompiler(VOCAB, cache_dir=tmp_path)
    i2 = c2.regex("(ab)+")
    assert c2.stats["disk_hits"] == 1 and c2.stats["builds"] == 0
    assert np.array_equal(i1.mask_rows, i2.mask_rows)
    files[0].write_bytes(files[0].read_bytes()[:100])
    c3 = IndexCompiler(VOCAB, cache_dir=tmp_path)
    with pytest.warns(RuntimeWarning, match="discarding"):
        i3 = c3.regex("(ab)+")
    assert c3.stats["disk_errors"] == 1 and c3.stats["builds"] == 1
    assert np.array_equal(i1.csr_tok, i3.csr_tok)
    assert TokenIndex.load(files[0], VOCAB) is not None  # rewritten whole


def test_concurrent_requests_build_once():
    c = IndexCompiler(VOCAB)
    out = []
    threads = [threading.Thread(target=lambda: out.append(c.regex("[ab]{0,30}"))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.stats["builds"] == 1 and all(o is out[0] for o in out)


def test_dfa_entry_point():
    c = IndexCompiler(VOCAB)
    b = DFA.from_regex("x1").to_bytes()
    assert c.dfa(b) is c.dfa(DFA.from_regex("x1"))


@pytest.mark.xfail(not hasattr(tokenfsm.schema, "compile_json_schema"),
                   reason="waits on tokenfsm.schema.compile_json_schema", strict=False)
def test_json_schema_index_and_option_keys():
    c = IndexCompiler(VOCAB)
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    i1 = c.json_schema(schema)
    assert c.json_schema(json.dumps(schema)) is i1
    i2 = c.json_schema(schema, whitespace=0)
    assert i2 is not i1
    m = Matcher(i2)
    assert m.find_jump_forward_string().startswith("{")
    assert m.find_jump_forward_string() == '{"a":"'
    assert m.accept_string('{"a":"ab"}') and m.is_accepting()


@given(random_byte_dfas(), small_vocabs())
@settings(max_examples=60, deadline=None)
def test_large_flat_automata_get_lazy_rows_equal_to_the_eager_index(d, vocab):
    # past lazy_states the compiler gives a lazy index over the automaton without calls; every
    # configuration it reaches allows the tokens the eager index allows, and moves alike
    from tokenfsm.masks.pushdown import PushdownIndex

    eager = IndexCompiler(vocab, lazy_states=None).dfa(d)
    lazy = IndexCompiler(vocab, lazy_states=0).dfa(d)
    assert isinstance(eager, TokenIndex) and isinstance(lazy, PushdownIndex)
    seen, todo = set(), [(Matcher(eager), Matcher(lazy))]
    while todo:
        e, z = todo.pop()
        if e.state in seen:
            continue
        seen.add(e.state)
        allowed = e.allowed_token_ids().tolist()
        assert z.allowed_token_ids().tolist() == allowed
        assert z.is_accepting() == e.is_accepting()
        for t in allowed:
            if t in vocab.eos_token_ids:
                continue
            e2, z2 = e.copy(), z.copy()
            e2.advance(t)
            z2.advance(t)
            todo.append((e2, z2))


def test_lazy_states_is_checked():
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(TypeError, match="lazy_states"):
            IndexCompiler(VOCAB, lazy_states=bad)
