"""Saved index files that were damaged or crafted: never a crash, never a wrong mask.

A campaign makes variants of saved indexes, the way a broken disk or someone who can write the
cache directory would:

* ``flip``: random bits flipped anywhere in the file (checksum left as it was);
* ``meta``: a metadata field edited (start, finished row, version, sizes, key...), not re-signed;
* ``crafted``: a structural fault written on purpose and the checksum recomputed: bits past the
  last token id, bits for tokens never emitted, EOS where the state does not accept, states,
  rows and classes out of range, shapes that disagree, another dtype, the forced bytes edited;
* ``resigned``: random bits flipped in the arrays and the checksum recomputed;
* ``signed``: any of those on a file saved with a secret, re-signed without it.

The oracle is the original index. Each variant must raise ``CorruptIndexError`` or load an
index whose every mask row, next state and flag equals the original's; ``flip``, ``meta``,
``crafted`` and ``signed`` must never load with a change. ``resigned`` variants are loaded with
``verify=True`` (rebuilt from the saved automaton); without it they must still never crash the
kernels (every loaded index is driven through them). The default run makes 80 variants; the
``slow`` run 400.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

from tokenfsm.automata import DFA
from tokenfsm.masks import CorruptIndexError, IndexCompiler, Matcher, TokenIndex, Vocabulary
from tokenfsm.masks import index_file
from tokenfsm.masks.index_file import ARRAY_DTYPES, remove_stale_temporaries
from tokenfsm.schema import compile_json_schema

TOKENS = [b"{", b"}", b'"', b":", b",", b"a", b"b", b"1", b"2", b"ab", b'{"', b'":', b" ", b"[", b"]",
          b"true", b"null", b"\xc3", b"\xa9", "é".encode()] + [b"x%d" % i for i in range(23)]
# 43 text tokens, two never emitted (specials), EOS: 46 ids, so the last word has padding bits
VOCAB = Vocabulary(TOKENS + [None, None, None], eos_token_ids=[len(TOKENS) + 2])
SECRET = b"campaign secret"


def _bases():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": ["ab", "é"]}},
              "required": ["a"]}
    return [TokenIndex.build(compile_json_schema(schema, whitespace=1), VOCAB),
            TokenIndex.build(DFA.from_regex(r"(ab|1)+[é2]?"), VOCAB)]


BASES = _bases()


def _read(path):
    with np.load(path) as z:
        arrays = {k: np.array(z[k]) for k in z.files}
    return json.loads(bytes(arrays.pop("meta")).decode()), arrays


def _write(path, meta, arrays, secret=None, resign=True):
    """Write a file the way the format does, the checksum recomputed (with ``secret``) or kept."""
    if resign:
        meta = dict(meta)
        meta["checksum"] = index_file._checksum(meta, arrays, secret)
    with open(path, "wb") as fh:
        np.savez(fh, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)


def same_index(a: TokenIndex, b: TokenIndex) -> bool:
    """Same masks, next states and flags in every state, and the same start and finished row."""
    if (a.start, a.num_states) != (b.start, b.num_states):
        return False
    if not np.array_equal(a.mask_rows[a.finished_row], b.mask_rows[b.finished_row]):
        return False
    for s in range(a.num_states):
        if (not np.array_equal(a.mask_row(s), b.mask_row(s)) or a.is_accepting(s) != b.is_accepting(s)
                or a.forced_byte[s] != b.forced_byte[s]):
            return False
        for t in a.allowed_token_ids(s, include_eos=False).tolist():
            if a.next_state(s, t) != b.next_state(s, t):
                return False
    return True


def drive(index: TokenIndex, rng: random.Random) -> None:
    """Exercise every kernel and matcher path on a loaded index (a crash would end the run)."""
    index.csr_tok
    for s in range(index.num_states):
        index.transitions(s)
        index.walk_bytes(s, b'{"a":1}')
    bm = np.zeros((2, index.n_words), dtype=np.int32)
    m = Matcher(index)
    for _ in range(20):
        m.fill_next_token_bitmask(bm, 1)
        m.find_jump_forward_string()
        ids = m.allowed_token_ids()
        if not len(ids):
            break
        m.advance(int(rng.choice(ids.tolist())))
        if m.is_finished():
            break


# -- variants ----------------------------------------------------------------------------------

def _flip(raw: bytes, rng, n_bits) -> bytes:
    data = bytearray(raw)
    for _ in range(n_bits):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    return bytes(data)


def _meta_edit(meta, rng):
    m = dict(meta)
    key = rng.choice(["start", "finished_row", "vocab_size", "version", "build_info", "cache_key",
                      "vocab_fingerprint", "signed", "magic"])
    m[key] = {"start": m["start"] + rng.choice([-1, 1, 2]), "finished_row": m["finished_row"] - 1,
              "vocab_size": m["vocab_size"] + 1, "version": 2, "build_info": {"walks": 0},
              "cache_key": "another", "vocab_fingerprint": "0" * 64, "signed": True,
              "magic": "other"}[key]
    return m


def _crafted(meta, arrays, rng):
    """A structural fault, named, with the checksum to be recomputed."""
    a = {k: v.copy() for k, v in arrays.items()}
    m = dict(meta)
    n, c = a["table"].shape
    kind = rng.choice(["padding", "never", "eos", "table_range", "table_negative", "dead_row",
                       "classes", "state_row", "finished_row", "start", "shape", "dtype",
                       "forced", "eos_ids", "dead_state_allows", "accepting0"])
    rows = a["mask_rows"].view(np.uint32)
    r = rng.randrange(rows.shape[0])
    if kind == "padding":            # unused bits past the last token id (was a segfault)
        rows[r, -1] |= np.uint32(1 << (VOCAB.size % 32 + rng.randrange(32 - VOCAB.size % 32)))
    elif kind == "never":            # a special token that never matches text
        t = len(TOKENS) + rng.randrange(2)
        rows[r, t // 32] |= np.uint32(1 << (t % 32))
    elif kind == "eos":              # EOS in a state that does not accept
        s = next(s for s in range(1, n) if not a["accepting"][s])
        t = VOCAB.eos_token_ids[0]
        row = a["state_row"][s]
        rows[row, t // 32] |= np.uint32(1 << (t % 32))
    elif kind == "table_range":
        a["table"][rng.randrange(1, n), rng.randrange(c)] = n + rng.randrange(1 << 20)
    elif kind == "table_negative":
        a["table"][rng.randrange(1, n), rng.randrange(c)] = -rng.randrange(1, 1 << 30)
    elif kind == "dead_row":
        a["table"][0, rng.randrange(c)] = 1
    elif kind == "classes":
        a["byte_classes"][rng.randrange(256)] = c + rng.randrange(256 - c) if c < 256 else 0
    elif kind == "state_row":
        a["state_row"][rng.randrange(n)] = rows.shape[0] + rng.randrange(100)
    elif kind == "finished_row":
        m["finished_row"] = int(a["state_row"][1])       # a row that allows text tokens
    elif kind == "start":
        m["start"] = n + rng.randrange(5)
    elif kind == "shape":
        name = rng.choice(["accepting", "state_row", "forced_byte"])
        a[name] = a[name][:-1]
    elif kind == "dtype":
        name = rng.choice(["table", "mask_rows", "state_row"])
        a[name] = a[name].astype(np.int64)
    elif kind == "forced":
        s = rng.randrange(1, n)
        a["forced_byte"][s] = (int(a["forced_byte"][s]) + 1 + rng.randrange(200)) % 256
    elif kind == "eos_ids":
        a["eos_ids"] = np.array([0], dtype=np.int32)
    elif kind == "dead_state_allows":
        rows[a["state_row"][0], 0] |= np.uint32(1)
    elif kind == "accepting0":
        a["accepting"][0] = True
    return kind, m, a


def campaign(tmp_path, count: int, seed: int = 0):
    """Make ``count`` variants; return the outcomes as (class, detail, outcome) triples."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        base = BASES[i % len(BASES)]
        cls = ["flip", "meta", "crafted", "resigned", "signed"][i % 5]
        signed = cls == "signed"
        orig = tmp_path / f"orig{i}.npz"
        base.save(orig, secret=SECRET if signed else None)
        meta, arrays = _read(orig)
        path = tmp_path / f"v{i}.npz"
        detail = cls
        if cls == "flip":
            path.write_bytes(_flip(orig.read_bytes(), rng, rng.choice([1, 1, 2, 8])))
        elif cls == "meta":
            m = _meta_edit(meta, rng)
            detail = next(k for k in m if m[k] != meta.get(k))
            _write(path, m, arrays, resign=False)
        elif cls == "crafted":
            detail, m, a = _crafted(meta, arrays, rng)
            _write(path, m, a)
        elif cls == "resigned":
            name = rng.choice(list(ARRAY_DTYPES))
            a = dict(arrays)
            flat = bytearray(a[name].tobytes())
            if flat:
                for _ in range(rng.choice([1, 2, 4])):
                    j = rng.randrange(len(flat))
                    flat[j] ^= 1 << rng.randrange(8)
            a[name] = np.frombuffer(bytes(flat), dtype=a[name].dtype).reshape(a[name].shape).copy()
            detail = name
            _write(path, meta, a)
        else:                                            # signed: edited, then re-signed without it
            sub = rng.choice(["meta", "crafted", "flip"])
            if sub == "meta":
                _write(path, _meta_edit(meta, rng), arrays, secret=b"guess")
            elif sub == "crafted":
                _, m, a = _crafted(meta, arrays, rng)
                _write(path, m, a, secret=None)
            else:
                path.write_bytes(_flip(orig.read_bytes(), rng, 1))
            detail = sub
        verify = cls == "resigned"
        try:
            got = TokenIndex.load(path, VOCAB, secret=SECRET if signed else None, verify=verify)
        except CorruptIndexError:
            outcome = "refused"
        else:
            drive(got, rng)
            outcome = "same" if same_index(got, base) else "WRONG"
        if cls == "resigned":                            # without verify: no crash, whatever loads
            try:
                drive(TokenIndex.load(path, VOCAB), rng)
            except CorruptIndexError:
                pass
        out.append((cls, detail, outcome))
    return out


def _check(results):
    wrong = [r for r in results if r[2] == "WRONG"]
    assert not wrong, wrong
    # an edit (not a flip of some byte the zip format does not check) is never loaded
    loaded_edited = [r for r in results if r[2] != "refused" and (
        r[0] in ("meta", "crafted") or (r[0] == "signed" and r[1] != "flip"))]
    assert not loaded_edited, loaded_edited
    # the campaign exercised what it says: most damage is refused, and every crafted kind came up
    assert sum(r[2] == "refused" for r in results) >= 0.8 * len(results)


def test_corrupted_and_crafted_index_files(tmp_path):
    _check(campaign(tmp_path, 80))


@pytest.mark.slow
def test_corrupted_and_crafted_index_files_400(tmp_path, capsys):
    results = campaign(tmp_path, 400, seed=1)
    with capsys.disabled():          # the campaign's figures, printed with -s
        from collections import Counter
        print("\nindex-file campaign:", dict(Counter((c, o) for c, _, o in results)))
    _check(results)
    crafted = {d for c, d, _ in results if c == "crafted"}
    assert len(crafted) == 16


# -- one fault at a time -----------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(16))
def test_every_crafted_fault_is_refused_by_structure(tmp_path, seed):
    """Each kind of structural fault, with a valid checksum: refused by the checks themselves."""
    rng = random.Random(seed)
    BASES[0].save(tmp_path / "o.npz")
    meta, arrays = _read(tmp_path / "o.npz")
    kinds = set()
    while len(kinds) < 1:
        kind, m, a = _crafted(meta, arrays, rng)
        kinds.add(kind)
    _write(tmp_path / "c.npz", m, a)
    with pytest.raises(CorruptIndexError, match="inconsistent|expected|range|does not allow") as e:
        TokenIndex.load(tmp_path / "c.npz", VOCAB)
    assert "checksum" not in str(e.value)      # the structure found it, not the checksum


def test_meta_is_covered_by_the_checksum(tmp_path):
    BASES[1].save(tmp_path / "o.npz")
    meta, arrays = _read(tmp_path / "o.npz")
    for field, value in [("start", 0), ("finished_row", 0), ("build_info", {}), ("cache_key", "k")]:
        _write(tmp_path / "e.npz", dict(meta, **{field: value}), arrays, resign=False)
        with pytest.raises(CorruptIndexError, match="checksum mismatch"):
            TokenIndex.load(tmp_path / "e.npz", VOCAB)


def test_a_secret_is_needed_both_ways(tmp_path):
    BASES[0].save(tmp_path / "s.npz", secret=SECRET)
    BASES[0].save(tmp_path / "u.npz")
    assert same_index(TokenIndex.load(tmp_path / "s.npz", VOCAB, secret=SECRET), BASES[0])
    assert same_index(TokenIndex.load(tmp_path / "s.npz", VOCAB, secret=SECRET.decode()), BASES[0])
    with pytest.raises(CorruptIndexError, match="pass it"):
        TokenIndex.load(tmp_path / "s.npz", VOCAB)
    with pytest.raises(CorruptIndexError, match="not saved with a secret"):
        TokenIndex.load(tmp_path / "u.npz", VOCAB, secret=SECRET)
    with pytest.raises(CorruptIndexError, match="checksum"):
        TokenIndex.load(tmp_path / "s.npz", VOCAB, secret=b"other")
    with pytest.raises(TypeError):
        BASES[0].save(tmp_path / "x.npz", secret=5)


def test_verify_finds_resigned_damage_the_structure_cannot(tmp_path):
    BASES[1].save(tmp_path / "o.npz")
    meta, arrays = _read(tmp_path / "o.npz")
    rows = arrays["mask_rows"].view(np.uint32)
    s = next(s for s in range(1, BASES[1].num_states) if BASES[1].allowed_token_ids(s, False).size)
    t = int(BASES[1].allowed_token_ids(s, False)[0])
    rows[arrays["state_row"][s], t // 32] ^= np.uint32(1 << (t % 32))     # forbid an allowed token
    _write(tmp_path / "r.npz", meta, arrays)
    assert not same_index(TokenIndex.load(tmp_path / "r.npz", VOCAB), BASES[1])
    with pytest.raises(CorruptIndexError, match="masks differ"):
        TokenIndex.load(tmp_path / "r.npz", VOCAB, verify=True)
    assert same_index(TokenIndex.load(tmp_path / "o.npz", VOCAB, verify=True), BASES[1])


# -- sizes are checked before memory is taken --------------------------------------------------

def _npy(shape, dtype, data: bytes) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                               "shape": shape})
    return buf.getvalue() + data


def _zip(path, members: dict, compress=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression=compress) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def _members_of(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _refused_within(path, peak_bytes, match, **kw):
    tracemalloc.start()
    try:
        with pytest.raises(CorruptIndexError, match=match):
            TokenIndex.load(path, VOCAB, **kw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < peak_bytes, peak


def test_a_header_declaring_a_huge_array_is_refused_before_allocation(tmp_path):
    BASES[0].save(tmp_path / "o.npz")
    members = _members_of(tmp_path / "o.npz")
    members["mask_rows.npy"] = _npy((10**9, 2), np.int32, b"\0" * 64)
    _zip(tmp_path / "h.npz", members)
    _refused_within(tmp_path / "h.npz", 8 << 20, "does not allow")


def test_a_zip_bomb_is_refused_by_its_declared_size(tmp_path):
    BASES[0].save(tmp_path / "o.npz")
    members = _members_of(tmp_path / "o.npz")
    members["mask_rows.npy"] = _npy((50 << 20, 2), np.int32, bytes(400 << 20))   # 400 MB of zeros
    _zip(tmp_path / "b.npz", members, compress=zipfile.ZIP_DEFLATED)
    assert os.path.getsize(tmp_path / "b.npz") < 1 << 20
    _refused_within(tmp_path / "b.npz", 8 << 20, "over the limit", max_bytes=16 << 20)


def test_a_file_larger_than_the_limit_is_not_opened(tmp_path):
    BASES[0].save(tmp_path / "o.npz")
    _refused_within(tmp_path / "o.npz", 1 << 20, "over the limit", max_bytes=1000)


def test_a_zip_directory_of_many_entries_is_refused_before_it_is_read(tmp_path):
    BASES[0].save(tmp_path / "o.npz")
    members = _members_of(tmp_path / "o.npz")
    members.update({f"x{i}.npy": b"" for i in range(5000)})
    _zip(tmp_path / "d.npz", members)
    _refused_within(tmp_path / "d.npz", 4 << 20, "zip directory")


@pytest.mark.parametrize("damage", ["truncated", "empty", "not a zip", "no meta", "extra member",
                                    "object dtype", "fortran", "deep json", "big meta"])
def test_malformed_archives_are_refused(tmp_path, damage):
    BASES[0].save(tmp_path / "o.npz")
    raw = (tmp_path / "o.npz").read_bytes()
    members = _members_of(tmp_path / "o.npz")
    p = tmp_path / "m.npz"
    if damage == "truncated":
        p.write_bytes(raw[: len(raw) // 2])
    elif damage == "empty":
        p.write_bytes(b"")
    elif damage == "not a zip":
        p.write_bytes(b"\x93NUMPY" + raw[6:200])
    else:
        if damage == "no meta":
            del members["meta.npy"]
        elif damage == "extra member":
            members["csr_tok.npy"] = _npy((0,), np.int32, b"")
        elif damage == "object dtype":
            members["table.npy"] = _npy((1, 1), object, b"\0" * 8)
        elif damage == "fortran":
            t = BASES[0].table
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asfortranarray(t))
            members["table.npy"] = buf.getvalue()
        elif damage == "deep json":
            deep = ("[" * 100000 + "]" * 100000).encode()
            members["meta.npy"] = _npy((len(deep),), np.uint8, deep)
        elif damage == "big meta":
            members["meta.npy"] = _npy((2 << 20,), np.uint8, b" " * (2 << 20))
        _zip(p, members)
    with pytest.raises(CorruptIndexError):
        TokenIndex.load(p, VOCAB)


def test_earlier_format_versions_are_refused_with_a_hint(tmp_path):
    BASES[0].save(tmp_path / "o.npz")
    meta, arrays = _read(tmp_path / "o.npz")
    _write(tmp_path / "v2.npz", dict(meta, version=2), arrays)
    with pytest.raises(CorruptIndexError, match="version 2.*rebuild"):
        TokenIndex.load(tmp_path / "v2.npz", VOCAB)


# -- the compile cache ------------------------------------------------------------------------

def test_a_cache_entry_copied_under_another_key_is_not_served(tmp_path):
    c = IndexCompiler(VOCAB, cache_dir=tmp_path)
    a = c.regex(r"(ab)+")
    b = c.regex(r"(12)+")
    key_a, key_b = c.cache_key("regex", r"(ab)+", _opts(r"(ab)+")), c.cache_key("regex", r"(12)+", _opts(r"(12)+"))
    os.replace(c._path(key_a), c._path(key_b))        # a's file now sits under b's key
    fresh = IndexCompiler(VOCAB, cache_dir=tmp_path)
    with pytest.warns(RuntimeWarning, match="another key|cache key"):
        got = fresh.regex(r"(12)+")
    assert same_index(got, b) and not same_index(got, a)
    assert fresh.stats["disk_errors"] == 1 and fresh.stats["builds"] == 1


def _opts(pattern):
    from tokenfsm.automata.lazy_regex import regex_automaton
    from tokenfsm.masks.compiler import _bound_options
    return _bound_options(regex_automaton, pattern, {})


def test_a_signed_cache_loads_only_its_own_files(tmp_path):
    c = IndexCompiler(VOCAB, cache_dir=tmp_path, secret=SECRET)
    a = c.regex(r"(ab)+")
    again = IndexCompiler(VOCAB, cache_dir=tmp_path, secret=SECRET)
    assert same_index(again.regex(r"(ab)+"), a) and again.stats["disk_hits"] == 1
    stranger = IndexCompiler(VOCAB, cache_dir=tmp_path)
    with pytest.warns(RuntimeWarning, match="secret"):
        stranger.regex(r"(ab)+")
    assert stranger.stats["builds"] == 1


def test_pydantic_models_are_keyed_by_their_schema(tmp_path):
    pydantic = pytest.importorskip("pydantic")
    c = IndexCompiler(VOCAB, cache_dir=tmp_path)

    def model(field_type):
        return pydantic.create_model("M", a=(field_type, ...))

    first = c.json_schema(model(int), whitespace=0)
    second = c.json_schema(model(bool), whitespace=0)      # same name and repr, other field
    assert not same_index(first, second)
    m = Matcher(second)
    assert m.accept_string('{"a":true}') and not Matcher(second).accept_string('{"a":1')
    assert same_index(IndexCompiler(VOCAB, cache_dir=tmp_path).json_schema(model(bool), whitespace=0),
                      second)


def test_options_that_cannot_be_keyed_are_refused():
    c = IndexCompiler(VOCAB)

    class Opaque:
        pass

    with pytest.raises(TypeError, match="cache key"):
        c.json_schema({"type": "integer"}, documents={"https://x/a.json": Opaque()})


def test_killed_writers_leave_no_temporaries_behind(tmp_path):
    import socket
    import subprocess
    import sys
    import time

    host = socket.gethostname()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".tmp-{host}-{dead}-abc.npz"             # its process has ended
    old = tmp_path / ".tmp-otherhost-1-def.npz"                   # another host's, an hour old
    live = tmp_path / f".tmp-{host}-{os.getpid()}-ghi.npz"        # being written right now
    recent = tmp_path / ".tmp-otherhost-2-jkl.npz"                # another host's, just now
    for p in (stale, old, live, recent):
        p.write_bytes(b"partial")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    IndexCompiler(VOCAB, cache_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, recent.name])
    assert remove_stale_temporaries(tmp_path, max_age=0) == 1      # its own live one stays
    assert [p.name for p in tmp_path.iterdir()] == [live.name]


def test_the_memory_cache_is_bounded_in_bytes():
    c = IndexCompiler(VOCAB, max_bytes=3 * BASES[1].nbytes)
    for k in range(1, 8):
        c.regex(r"(ab|1){%d}" % k)
    assert 0 < len(c) and sum(c._memory_bytes.values()) <= c.max_bytes
    with pytest.raises(TypeError):
        IndexCompiler(VOCAB, max_bytes="1GB")
