"""The saved token-index format: written atomically, read within limits, validated in full before
any kernel sees it.

A saved index is an ``.npz`` archive (a zip of ``.npy`` members, stored uncompressed): a ``meta``
member (JSON as bytes: format version, vocabulary fingerprint, start state, finished row, how it was
built, an optional cache key, and a checksum) and the index's seven arrays. Whoever can write the
file can make it say anything, so reading trusts nothing in it:

* **limits before memory**: the file's size, the zip directory (at most 16 entries, 64 KiB), each
  member's declared size and its ``.npy`` header (dtype, shape) are checked against ``max_bytes``
  before an array is allocated; a member decompresses to no more than it declares;
* **one checksum over everything**: SHA-256 of the metadata (all of it but the checksum) and of
  every array's name, dtype, shape and bytes; with a ``secret``, an HMAC-SHA256 that someone without
  the secret cannot recompute after editing the file;
* **structure**: every state, row, class and token id in range, the dead state dead, no bit set
  past the last token id or for a token that can never be emitted, EOS allowed exactly in accepting
  states, the finished row allowing EOS alone, the forced bytes those of the automaton.

A file that fails any of this is a :class:`CorruptIndexError` (or :class:`VocabularyMismatch`), never
a crash or a wrong mask. What structure cannot tell is a file rewritten *consistently* by someone who
can write it and recompute an unkeyed checksum: the index of another grammar. Against that, keep the
directory private or pass a ``secret``.

Example
-------
>>> import os, tempfile
>>> from tokenfsm.automata import DFA
>>> from tokenfsm.masks import Vocabulary, TokenIndex
>>> vocab = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
>>> index = TokenIndex.build(DFA.from_regex("(ab)+"), vocab)
>>> path = os.path.join(tempfile.mkdtemp(), "ab.npz")
>>> index.save(path, secret=b"server key")
>>> TokenIndex.load(path, vocab, secret=b"server key").allowed_token_ids(index.start).tolist()
[0, 2]
>>> TokenIndex.load(path, vocab, secret=b"another key")
Traceback (most recent call last):
...
tokenfsm.masks.errors.CorruptIndexError: ...: checksum mismatch (file altered or damaged, or another secret)

Reading a zip within declared sizes follows the advice of the zip-bomb literature (check the central
directory and the declared sizes first; Fifield, *A better zip bomb*, 2019); checking every field
before use is what NumPy's ``allow_pickle=False`` starts.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import struct
import tempfile
import time
import zipfile

import numpy as np

from .errors import CorruptIndexError, VocabularyMismatch
from .vocab import Vocabulary

__all__ = ["FORMAT_VERSION", "MAX_INDEX_BYTES", "ARRAY_DTYPES", "write_index_file", "read_index_file",
           "remove_stale_temporaries", "TEMP_PREFIX"]

#: Version of the saved index format; bumped on any incompatible change.
#: 1: CSR of every allowed (state, token) pair saved with the rows. 2: rows only.
#: 3: one checksum over the metadata too (optionally keyed), the cache key kept inside.
FORMAT_VERSION = 3
MAGIC = "tokenfsm-token-index"
#: Most bytes an index file may hold once read (its arrays and metadata); ``max_bytes`` of
#: :meth:`.TokenIndex.load` overrides it.
MAX_INDEX_BYTES = 1 << 30
#: Most bytes of the metadata member.
MAX_META_BYTES = 1 << 20
#: The arrays of a saved index, in checksum order, with the one dtype and number of dimensions
#: each must have.
ARRAY_DTYPES = {
    "byte_classes": (np.dtype(np.uint8), 1),
    "table": (np.dtype(np.int32), 2),
    "accepting": (np.dtype(np.bool_), 1),
    "mask_rows": (np.dtype(np.int32), 2),
    "state_row": (np.dtype(np.int32), 1),
    "forced_byte": (np.dtype(np.int16), 1),
    "eos_ids": (np.dtype(np.int32), 1),
}
_MEMBERS = {"meta.npy"} | {f"{name}.npy" for name in ARRAY_DTYPES}
#: Temporary files are named ``TEMP_PREFIX + host-pid-random`` while written; one whose writer is
#: gone (this host, process ended), or another host's older than :data:`STALE_TEMP_SECONDS`, is
#: removed by :func:`remove_stale_temporaries`.
TEMP_PREFIX = ".tmp-"
STALE_TEMP_SECONDS = 3600
_EOCD = b"PK\x05\x06"


# -- writing -------------------------------------------------------------------------------------

def _checksum(meta: dict, arrays: dict, secret: bytes | None) -> str:
    """SHA-256 (HMAC-SHA256 with ``secret``) of ``meta`` without its checksum and of every array."""
    h = hmac.new(secret, digestmod=hashlib.sha256) if secret is not None else hashlib.sha256()
    h.update(b"tokenfsm-token-index-v3\0")
    body = {k: v for k, v in meta.items() if k != "checksum"}
    h.update(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    h.update(b"\0")
    for name in ARRAY_DTYPES:
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}\0".encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def _check_secret(secret) -> bytes | None:
    if secret is None:
        return None
    if isinstance(secret, str):
        return secret.encode()
    if isinstance(secret, (bytes, bytearray)) and secret:
        return bytes(secret)
    raise TypeError(f"secret must be non-empty bytes or str, or None, not {type(secret).__name__}")


def _temp_name() -> str:
    return f"{TEMP_PREFIX}{socket.gethostname()}-{os.getpid()}-"


def write_index_file(path, arrays: dict, meta: dict, secret=None) -> None:
    """Write ``arrays`` and ``meta`` (the caller's fields; magic, version and checksum are added)
    to ``path`` atomically: a temporary file in the same directory, renamed over ``path``."""
    secret = _check_secret(secret)
    meta = dict(meta, magic=MAGIC, version=FORMAT_VERSION, signed=secret is not None)
    meta["checksum"] = _checksum(meta, arrays, secret)
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=_temp_name(), suffix=".npz", dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                     **{name: np.ascontiguousarray(arrays[name]) for name in ARRAY_DTYPES})
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove_stale_temporaries(directory, max_age: float = STALE_TEMP_SECONDS) -> int:
    """Remove the temporary files that writers killed mid-write left in ``directory``: those of a
    process of this host that has ended, and those of other hosts (or named otherwise) older than
    ``max_age`` seconds. Returns how many were removed (one that cannot be is left alone)."""
    host = socket.gethostname()
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    now = time.time()
    for name in names:
        if not name.startswith(TEMP_PREFIX):
            continue
        path = os.path.join(directory, name)
        parts = name[len(TEMP_PREFIX):].rsplit("-", 2)
        ours = len(parts) == 3 and parts[0] == host and parts[1].isdigit()
        try:
            if (not _process_alive(int(parts[1])) if ours
                    else now - os.stat(path).st_mtime > max_age):
                os.unlink(path)
                removed += 1
        except OSError:
            pass
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


# -- reading -------------------------------------------------------------------------------------

def _corrupt(path: str, what: str) -> CorruptIndexError:
    return CorruptIndexError(f"{path}: {what}")


def _check_zip_directory(fh, path: str, size: int) -> None:
    """The end-of-central-directory record: one disk, at most 16 entries, a directory of at most
    64 KiB (read before :mod:`zipfile` builds an object per entry)."""
    tail_len = min(size, 22 + 0xFFFF)
    fh.seek(size - tail_len)
    tail = fh.read(tail_len)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        raise _corrupt(path, "not a zip archive (no end-of-directory record)")
    disk, cd_disk, here, total, cd_size, _ = struct.unpack("<HHHHII", tail[at + 4:at + 20])
    if disk or cd_disk or here != total or total > 16 or cd_size > 1 << 16:
        raise _corrupt(path, f"unexpected zip directory ({total} entries, {cd_size} bytes)")


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: np.dtype, ndim: int,
                 budget: int, path: str, shape_ok=None) -> np.ndarray:
    """One ``.npy`` member as an array of exactly ``dtype`` and ``ndim``, refused before it is
    allocated when it would pass ``budget`` bytes, its header disagrees with its size, or its
    shape fails ``shape_ok``."""
    name = info.filename
    if info.file_size > budget:
        raise _corrupt(path, f"{name} declares {info.file_size:,} bytes, over the limit of {budget:,}")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or info.flag_bits & 1:
        raise _corrupt(path, f"{name} is compressed or encrypted in an unsupported way")
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, got = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, got = np.lib.format.read_array_header_2_0(f)
        else:
            raise _corrupt(path, f"{name} has .npy format version {version}")
        if got != dtype or fortran or len(shape) != ndim:
            raise _corrupt(path, f"{name} is {got} {'F-ordered ' if fortran else ''}{shape}, "
                                 f"expected {dtype} with {ndim} dimensions")
        if shape_ok is not None and not shape_ok(shape):
            raise _corrupt(path, f"{name} has shape {shape}, which the table's does not allow")
        count = 1
        for k in shape:
            count *= int(k)
        nbytes = count * dtype.itemsize
        if nbytes != info.file_size - f.tell():
            raise _corrupt(path, f"{name}: its header says {nbytes:,} bytes of data, the member "
                                 f"holds {info.file_size - f.tell():,}")
        out = np.empty(shape, dtype=dtype)
        view = memoryview(out).cast("B") if nbytes else memoryview(b"")
        done = 0
        while done < nbytes:
            n = f.readinto(view[done:])
            if not n:
                raise _corrupt(path, f"{name} is truncated")
            done += n
    return out


def _meta_fields(meta, path: str) -> dict:
    if not isinstance(meta, dict) or meta.get("magic") != MAGIC:
        raise _corrupt(path, "not a token index")
    version = meta.get("version")
    if version != FORMAT_VERSION:
        hint = {1: " (the per-pair CSR layout of earlier releases; rebuild the index)",
                2: " (its checksum left the metadata out; rebuild the index)"}.get(version, "")
        raise _corrupt(path, f"format version {version!r}, expected {FORMAT_VERSION}{hint}")
    for key in ("start", "finished_row", "vocab_size"):
        v = meta.get(key)
        if isinstance(v, bool) or not isinstance(v, int):
            raise _corrupt(path, f"metadata field {key!r} is {v!r}, not an int")
    for key in ("vocab_fingerprint", "checksum"):
        if not isinstance(meta.get(key), str):
            raise _corrupt(path, f"metadata field {key!r} is missing")
    if not isinstance(meta.get("signed"), bool) or not isinstance(meta.get("build_info", {}), dict):
        raise _corrupt(path, "metadata fields 'signed' or 'build_info' are malformed")
    for key in ("cache_key", "vocab_name"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise _corrupt(path, f"metadata field {key!r} is malformed")
    return meta


def read_index_file(path, vocab: Vocabulary, *, cache_key: str | None = None, secret=None,
                    max_bytes: int = MAX_INDEX_BYTES) -> tuple[dict, dict]:
    """Read and check a file written by :func:`write_index_file`; returns ``(arrays, meta)``.

    Parameters
    ----------
    path : str or os.PathLike
    vocab : Vocabulary
        The vocabulary the index must have been built for.
    cache_key : str, optional
        The key the file must have been saved under (see :class:`.IndexCompiler`).
    secret : bytes or str, optional
        The secret it was saved with; a file saved with one cannot be read without it, and a file
        saved without one is refused when one is given.
    max_bytes : int
        Most bytes the file may hold once read (checked before anything is allocated).

    Raises
    ------
    CorruptIndexError
        Unreadable, oversized, truncated, altered, of another format version or key, or
        inconsistent in any way.
    VocabularyMismatch
        An intact index built for another vocabulary.
    FileNotFoundError
    """
    secret = _check_secret(secret)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise TypeError(f"max_bytes must be a positive int, not {max_bytes!r}")
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes + (1 << 16):
                raise _corrupt(path, f"{size:,} bytes, over the limit of {max_bytes:,}")
            _check_zip_directory(fh, path, size)
            fh.seek(0)
            with zipfile.ZipFile(fh) as zf:
                infos = zf.infolist()
                names = [i.filename for i in infos]
                by_name = {i.filename: i for i in infos}
                info = by_name.get("meta.npy")
                if info is None or len(by_name) != len(names):
                    raise _corrupt(path, "no metadata, or members named twice")
                raw = _read_member(zf, info, np.dtype(np.uint8), 1, MAX_META_BYTES, path)
                meta = _meta_fields(json.loads(raw.tobytes().decode("utf-8")), path)
                if set(names) != _MEMBERS:
                    raise _corrupt(path, f"unexpected members {sorted(set(names) ^ _MEMBERS)}")
                budget = max_bytes - info.file_size
                arrays = {}
                # the table first: its shape bounds every other array's before it is allocated
                words = (vocab.size + 31) // 32
                n_eos = len(vocab.eos_token_ids)
                expect = {
                    "table": lambda s: s[0] >= 1 and 1 <= s[1] <= 256,
                    "byte_classes": lambda s: s == (256,),
                    "accepting": lambda s: s == (n,), "state_row": lambda s: s == (n,),
                    "forced_byte": lambda s: s == (n,),
                    "mask_rows": lambda s: 1 <= s[0] <= n + 1 and s[1] == words,
                    "eos_ids": lambda s: s == (n_eos,),
                }
                n = 0
                for name in ["table", *[k for k in ARRAY_DTYPES if k != "table"]]:
                    dtype, ndim = ARRAY_DTYPES[name]
                    a = _read_member(zf, by_name[f"{name}.npy"], dtype, ndim, budget, path,
                                     expect[name])
                    budget -= a.nbytes
                    arrays[name] = a
                    n = arrays["table"].shape[0]
                arrays = {name: arrays[name] for name in ARRAY_DTYPES}
    except (CorruptIndexError, FileNotFoundError):
        raise
    except Exception as e:  # noqa: BLE001 - zip, npy, JSON and I/O errors all mean "corrupt"
        raise _corrupt(path, f"cannot read index ({type(e).__name__}: {e})") from e
    if meta["signed"] != (secret is not None):
        raise _corrupt(path, "saved with a secret; pass it to load" if meta["signed"]
                       else "not saved with a secret, but one was given")
    if not hmac.compare_digest(_checksum(meta, arrays, secret), meta["checksum"]):
        raise _corrupt(path, "checksum mismatch (file altered or damaged, or another secret)")
    if meta["vocab_fingerprint"] != vocab.fingerprint:
        raise VocabularyMismatch(meta["vocab_fingerprint"], vocab.fingerprint,
                                 expected_name=meta.get("vocab_name"),
                                 expected_size=meta["vocab_size"],
                                 actual_name=vocab.name, actual_size=vocab.size)
    if cache_key is not None and meta.get("cache_key") != cache_key:
        raise _corrupt(path, f"saved under cache key {str(meta.get('cache_key'))[:16]}..., "
                             f"not {cache_key[:16]}... (copied or renamed)")
    try:
        check_index_arrays(arrays, vocab, meta["start"], meta["finished_row"])
    except ValueError as e:
        raise _corrupt(path, f"inconsistent index ({e})") from None
    return arrays, meta


# -- structure -----------------------------------------------------------------------------------

def _packed(ids, vocab_size: int) -> np.ndarray:
    """The ``int32`` bitmask row with the bits of ``ids`` set."""
    bits = np.zeros(((vocab_size + 31) // 32) * 32, dtype=np.uint8)
    bits[np.asarray(list(ids), dtype=np.int64)] = 1
    return np.packbits(bits, bitorder="little").view(np.int32)


def check_index_arrays(a: dict, vocab: Vocabulary, start: int, finished_row: int) -> None:
    """``ValueError`` naming the first thing wrong with an index's arrays (dtypes and dimensions
    already checked): see the module docstring for what is checked."""
    from . import kernels

    table, classes, accepting = a["table"], a["byte_classes"], a["accepting"]
    rows, state_row = a["mask_rows"], a["state_row"]
    n, c = table.shape
    words = (vocab.size + 31) // 32
    if n < 1 or not 1 <= c <= 256:
        raise ValueError(f"a table of {n} states and {c} byte classes")
    if classes.shape != (256,) or int(classes.max()) >= c:
        raise ValueError(f"byte_classes of shape {classes.shape} name classes past {c - 1}")
    if table.size and (int(table.min()) < 0 or int(table.max()) >= n):
        raise ValueError(f"the table names states outside 0..{n - 1}")
    if table[0].any() or accepting.shape != (n,) or accepting[0]:
        raise ValueError("state 0 is not dead, or accepting is not one flag per state")
    if rows.shape[0] < 1 or rows.shape[1] != words:
        raise ValueError(f"mask_rows of shape {rows.shape}, expected (rows, {words})")
    if state_row.shape != (n,) or int(state_row.min()) < 0 or int(state_row.max()) >= rows.shape[0]:
        raise ValueError(f"state_row is not one row in 0..{rows.shape[0] - 1} per state")
    if not 0 <= start < n or not 0 <= finished_row < rows.shape[0]:
        raise ValueError(f"start {start} or finished row {finished_row} out of range")
    if tuple(a["eos_ids"].tolist()) != vocab.eos_token_ids:
        raise ValueError("EOS ids differ from the vocabulary's")
    # no bit past the last token id, nor for a token that can never be emitted (no bytes, no
    # EOS): checked in the words where some bit is not allowed (no copy of the rows)
    eos = set(vocab.eos_token_ids)
    never = [t for t, tok in enumerate(vocab.tokens) if tok is None and t not in eos]
    allowed = _packed(range(vocab.size), vocab.size) & ~_packed(never, vocab.size)
    cols = np.flatnonzero(allowed != -1)
    if (rows[:, cols] & ~allowed[cols]).any():
        raise ValueError("bits set past the last token id or for tokens that are never emitted")
    # EOS exactly in accepting states; the dead state allows nothing; the finished row EOS alone
    eos_row = _packed(eos, vocab.size)
    if rows[state_row[0]].any():
        raise ValueError("the dead state allows tokens")
    if not np.array_equal(rows[finished_row], eos_row):
        raise ValueError("the finished row does not allow EOS alone")
    if eos:
        cols = np.flatnonzero(eos_row)
        got = rows[:, cols] & eos_row[cols]
        no_eos, all_eos = ~got.any(axis=1), (got == eos_row[cols]).all(axis=1)
        live = accepting[1:]
        if (no_eos[state_row[1:]] == live).any() or not all_eos[state_row[1:]][live].all():
            raise ValueError("EOS is allowed in some state that does not accept, or not in one that does")
    forced = kernels.forced_bytes(np.ascontiguousarray(table), np.ascontiguousarray(classes),
                                  np.ascontiguousarray(accepting))
    if not np.array_equal(forced, a["forced_byte"]):
        raise ValueError("forced_byte differs from the bytes the automaton forces")
