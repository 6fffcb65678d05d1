"""Token vocabularies: token id -> the exact bytes the tokenizer emits for it.

A byte DFA can only judge a token by its bytes, so the vocabulary is a list of byte strings indexed
by token id, with ``None`` for ids that never stand for text (added and special tokens, padding,
unmappable entries). End-of-sequence ids are kept separately: they are allowed exactly where the
automaton accepts, and never match text.

Sources understood:

* HuggingFace ``tokenizer.json`` (:meth:`Vocabulary.from_tokenizer_file`), or the tokenizer object
  in memory (:meth:`Vocabulary.from_tokenizer`: a ``tokenizers.Tokenizer``, a transformers
  tokenizer, or a tiktoken ``Encoding``): byte-level BPE, where every
  character of a token stands for one byte through the GPT-2 byte map (GPT-2, Llama-3, Qwen), and
  SentencePiece-style vocabularies, where ``▁`` is a space and ``<0xNN>`` a single byte (byte
  fallback, as in Llama-2, Mistral and Gemma). Unigram and WordLevel models are read the same way.
* tiktoken rank files (``base64-token rank`` per line; cl100k, Qwen), plus their special tokens.
* A plain list of ``bytes`` / ``None``.

Tokens that are partial UTF-8 sequences are kept as they are: the automata run over bytes.

Example
-------
>>> from tokenfsm.masks import Vocabulary
>>> v = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
>>> v.size, v[2], v.eos_token_ids
(4, b'ab', (3,))

The byte map and the ``▁``/``<0xNN>`` conventions follow the tokenizers' own decoders (GPT-2's
``bytes_to_unicode``, SentencePiece's byte fallback); outlines-core and xgrammar read vocabularies
the same way.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterable, Mapping, Sequence

from .errors import UnknownTokenError, VocabularyError

__all__ = ["Vocabulary", "gpt2_bytes_to_unicode", "KNOWN_EOS_TOKENS", "TOKENIZER_KINDS", "TokenizerKind"]

#: Special-token spellings taken as end-of-sequence when no ids are given explicitly.
KNOWN_EOS_TOKENS = (
    "</s>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|im_end|>",
    "<eos>",
    "<|end|>",
    "<end_of_turn>",
)

_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def gpt2_bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from the 256 byte values to printable characters.

    Returns
    -------
    dict of int to str
        Byte value -> the single character byte-level BPE vocabularies write for it.
    """
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


_UNICODE_TO_BYTE = {c: b for b, c in gpt2_bytes_to_unicode().items()}


def _decode_byte_level(token: str) -> bytes | None:
    try:
        return bytes(_UNICODE_TO_BYTE[ch] for ch in token)
    except KeyError:
        return None


def _components(node) -> Iterable[dict]:
    """Every pre-tokenizer / decoder / normalizer dict inside ``node``, Sequences flattened."""
    if isinstance(node, dict):
        yield node
        for key in ("pretokenizers", "decoders", "normalizers"):
            for child in node.get(key) or ():
                yield from _components(child)
    elif isinstance(node, list):
        for child in node:
            yield from _components(child)


class Vocabulary:
    """Token id -> bytes, with the end-of-sequence ids.

    Parameters
    ----------
    tokens : sequence of bytes or None
        ``tokens[i]`` is what token ``i`` emits, or ``None`` if it never stands for text.
        ``str`` entries are encoded as UTF-8. Empty byte strings are treated as ``None``.
    eos_token_ids : iterable of int, optional
        Ids that end the sequence. They never match text, whatever their bytes.
    size : int, optional
        Vocabulary size as the model sees it (logit count); at least ``len(tokens)``. Extra ids are
        ``None`` (models often pad their embedding matrix).
    name : str, optional
        What to call the vocabulary in messages (``"qwen"``, a file or model name). Not part of
        the fingerprint: two vocabularies with the same tokens are the same whatever their names.

    Notes
    -----
    A vocabulary is immutable; its :attr:`fingerprint` (SHA-256 over size, EOS ids and every
    token's bytes) identifies it in saved indexes and caches.
    """

    def __init__(
        self,
        tokens: Sequence[bytes | str | None],
        eos_token_ids: Iterable[int] = (),
        size: int | None = None,
        name: str | None = None,
    ):
        toks: list[bytes | None] = []
        for i, t in enumerate(tokens):
            if t is None:
                toks.append(None)
            elif isinstance(t, str):
                toks.append(t.encode("utf-8") or None)
            elif isinstance(t, (bytes, bytearray, memoryview)):
                toks.append(bytes(t) or None)
            else:
                raise VocabularyError(f"token {i} is {type(t).__name__}, expected bytes, str or None")
        if size is None:
            size = len(toks)
        size = int(size)
        if size < len(toks):
            raise VocabularyError(f"size {size} is smaller than the {len(toks)} tokens given")
        if size == 0:
            raise VocabularyError("a vocabulary needs at least one token")
        toks.extend([None] * (size - len(toks)))
        eos = []
        for e in eos_token_ids:
            if isinstance(e, bool) or not isinstance(e, (int,)) and not hasattr(e, "__index__"):
                raise VocabularyError(f"EOS id {e!r} is not an integer")
            e = int(e)
            if not 0 <= e < size:
                raise VocabularyError(f"EOS id {e} is outside the vocabulary (size {size})")
            eos.append(e)
        self._eos = tuple(sorted(set(eos)))
        for e in self._eos:  # EOS never stands for text
            toks[e] = None
        self._tokens = tuple(toks)
        self._name = None if name is None else str(name)

    # -- basic access -----------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of token ids (the logit count)."""
        return len(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)

    def __getitem__(self, token_id: int) -> bytes | None:
        return self._tokens[self.check_token_id(token_id)]

    @property
    def name(self) -> str | None:
        """What the vocabulary is called in messages (``None`` if it was given no name)."""
        return self._name

    @property
    def tokens(self) -> tuple[bytes | None, ...]:
        """``tokens[i]``: the bytes of token ``i`` or ``None``."""
        return self._tokens

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        """Sorted end-of-sequence ids."""
        return self._eos

    def check_token_id(self, token_id) -> int:
        """Return ``token_id`` as an int, or raise :class:`UnknownTokenError`."""
        if isinstance(token_id, bool) or not hasattr(token_id, "__index__"):
            raise UnknownTokenError(token_id, self.size)
        t = int(token_id.__index__())
        if not 0 <= t < len(self._tokens):
            raise UnknownTokenError(token_id, self.size)
        return t

    @cached_property
    def fingerprint(self) -> str:
        """Hex SHA-256 identifying the vocabulary (size, EOS ids and all token bytes)."""
        h = hashlib.sha256()
        h.update(b"tokenfsm-vocabulary-v1\0")
        h.update(f"{self.size}:{','.join(map(str, self._eos))}\0".encode())
        parts = []
        for t in self._tokens:
            if t is None:
                parts.append(b"\xff")
            else:
                parts.append(len(t).to_bytes(4, "little"))
                parts.append(t)
        h.update(b"".join(parts))
        return h.hexdigest()

    @cached_property
    def flat_bytes(self) -> tuple:
        """Every token's bytes as two read-only arrays, for kernels that walk tokens by id.

        Returns
        -------
        flat : uint8[total]
            The tokens' bytes concatenated in id order.
        offsets : int64[size + 1]
            ``flat[offsets[t]:offsets[t + 1]]`` is token ``t`` (empty for ``None`` ids and EOS).
        """
        import numpy as np

        lens = np.fromiter((len(t) if t is not None else 0 for t in self._tokens), dtype=np.int64,
                           count=len(self._tokens))
        offsets = np.zeros(len(self._tokens) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.frombuffer(b"".join(t for t in self._tokens if t is not None), dtype=np.uint8)
        if flat.size == 0:
            flat = np.zeros(1, dtype=np.uint8)
        offsets.flags.writeable = False
        return flat, offsets

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocabulary) and other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        n_text = sum(t is not None for t in self._tokens)
        named = f"name={self._name!r}, " if self._name else ""
        return (
            f"Vocabulary({named}size={self.size}, text_tokens={n_text}, eos_token_ids={list(self._eos)}, "
            f"fingerprint={self.fingerprint[:12]})"
        )

    def decode(self, token_ids: Iterable[int]) -> bytes:
        """Concatenate the bytes of ``token_ids`` (EOS and special tokens contribute nothing)."""
        return b"".join(self[t] or b"" for t in token_ids)

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def from_tokenizer_file(cls, path, eos_token_ids=None, size: int | None = None,
                            name: str | None = None) -> "Vocabulary":
        """Read a HuggingFace ``tokenizer.json``.

        Parameters
        ----------
        path : str or os.PathLike
            The ``tokenizer.json`` file.
        eos_token_ids : iterable of int or str, optional
            EOS ids, or special-token spellings such as ``"<|im_end|>"``. When omitted, the added
            special tokens whose spelling is in :data:`KNOWN_EOS_TOKENS` are used.
        size : int, optional
            Pad the vocabulary to this many ids.
        name : str, optional
            Name for messages; by default the file's path.

        Returns
        -------
        Vocabulary
        """
        try:
            with open(os.fspath(path), "rb") as fh:
                data = json.loads(fh.read().decode("utf-8"))
        except (OSError, ValueError) as e:
            raise VocabularyError(f"cannot read tokenizer file {os.fspath(path)!r}: {e}") from e
        return cls.from_tokenizer_json(data, eos_token_ids=eos_token_ids, size=size,
                                       name=os.fspath(path) if name is None else name)

    @classmethod
    def from_file(cls, path, eos_token_ids=None, size: int | None = None,
                  name: str | None = None) -> "Vocabulary":
        """The former name of :meth:`from_tokenizer_file` (it reads only ``tokenizer.json``)."""
        return cls.from_tokenizer_file(path, eos_token_ids=eos_token_ids, size=size, name=name)

    @classmethod
    def from_tokenizer(cls, tokenizer, eos_token_ids=None, size: int | None = None,
                       name: str | None = None) -> "Vocabulary":
        """Read a tokenizer object: ``tokenizers.Tokenizer``, a transformers tokenizer, or a
        tiktoken ``Encoding``.

        Parameters
        ----------
        tokenizer : object
            One of the kinds in :data:`TOKENIZER_KINDS` (recognised by what they offer, so that
            none of those packages has to be installed to use the others).
        eos_token_ids : iterable of int or str, optional
            EOS ids or special-token spellings. By default the special tokens whose spelling is in
            :data:`KNOWN_EOS_TOKENS`, plus a transformers tokenizer's own ``eos_token_id``.
        size : int, optional
            Pad the vocabulary to this many ids (the model's logit count, if larger).
        name : str, optional
            Name for messages; by default the tokenizer's own (``name_or_path``, ``name``).

        Returns
        -------
        Vocabulary

        Raises
        ------
        VocabularyError
            The object is none of those kinds, or cannot be read.
        """
        for kind in TOKENIZER_KINDS:
            if kind.recognise(tokenizer):
                return kind.read(cls, tokenizer, eos_token_ids, size, name)
        kinds = ", ".join(k.name for k in TOKENIZER_KINDS)
        raise VocabularyError(f"cannot read a vocabulary from {type(tokenizer).__module__}."
                              f"{type(tokenizer).__qualname__}; expected one of: {kinds}")

    @classmethod
    def from_tokenizer_json(cls, data: Mapping, eos_token_ids=None, size: int | None = None,
                            name: str | None = None) -> "Vocabulary":
        """Build from the parsed contents of a ``tokenizer.json`` (parameters as in
        :meth:`from_tokenizer_file`)."""
        model = data.get("model") or {}
        mtype = model.get("type")
        vocab = model.get("vocab")
        if mtype == "Unigram" or (mtype is None and isinstance(vocab, list)):
            pieces = {entry[0]: i for i, entry in enumerate(vocab or [])}
        elif mtype in ("BPE", "WordLevel") or (mtype is None and isinstance(vocab, dict)):
            pieces = dict(vocab or {})
        else:
            raise VocabularyError(f"unsupported tokenizer model type {mtype!r}")
        comps = list(_components(data.get("pre_tokenizer"))) + list(_components(data.get("decoder")))
        byte_level = any(c.get("type") == "ByteLevel" for c in comps)
        byte_fallback = bool(model.get("byte_fallback")) or any(c.get("type") == "ByteFallback" for c in comps)
        replacements = []
        for c in _components(data.get("decoder")):
            if c.get("type") == "Replace":
                pat = c.get("pattern") or {}
                if "String" in pat:
                    replacements.append((pat["String"], c.get("content", "")))
            elif c.get("type") == "Metaspace":
                replacements.append((c.get("replacement", "▁"), " "))
        if not byte_level and not replacements:
            replacements = [("▁", " ")]

        added = {}
        for a in data.get("added_tokens") or ():
            added[a["content"]] = int(a["id"])
        n = max([*pieces.values(), *added.values(), -1]) + 1
        toks: list[bytes | None] = [None] * n
        for piece, i in pieces.items():
            if byte_level:
                toks[i] = _decode_byte_level(piece)
                continue
            m = _BYTE_FALLBACK.match(piece) if byte_fallback else None
            if m:
                toks[i] = bytes([int(m.group(1), 16)])
                continue
            text = piece
            for old, new in replacements:
                text = text.replace(old, new)
            toks[i] = text.encode("utf-8")
        for i in added.values():  # added and special tokens never stand for text
            toks[i] = None
        eos = cls._resolve_eos(eos_token_ids, added, data)
        return cls(toks, eos_token_ids=eos, size=size, name=name)

    @classmethod
    def from_tiktoken(
        cls,
        path,
        special_tokens: Mapping[str, int] | None = None,
        eos_token_ids=None,
        size: int | None = None,
        name: str | None = None,
    ) -> "Vocabulary":
        """Read a tiktoken rank file (one ``base64(token) rank`` per line).

        Parameters
        ----------
        path : str or os.PathLike
            The ``.tiktoken`` file.
        special_tokens : mapping of str to int, optional
            Special tokens and their ids; they never match text.
        eos_token_ids : iterable of int or str, optional
            EOS ids or special-token spellings; by default the special tokens whose spelling is in
            :data:`KNOWN_EOS_TOKENS`. An id past the ranks extends the vocabulary to hold it (a rank
            file lists no special tokens, so this is how its EOS is given).
        size : int, optional
            Pad the vocabulary to this many ids.
        name : str, optional
            Name for messages; by default the file's path.
        """
        special_tokens = dict(special_tokens or {})
        ranks: dict[int, bytes] = {}
        try:
            with open(os.fspath(path), "rb") as fh:
                for lineno, line in enumerate(fh, 1):
                    line = line.strip()
                    if not line:
                        continue
                    tok, rank = line.split()
                    ranks[int(rank)] = base64.b64decode(tok, validate=True)
        except (OSError, ValueError) as e:
            raise VocabularyError(f"cannot read tiktoken file {path!r}: {e}") from e
        return cls._from_ranks(ranks, special_tokens, eos_token_ids, size,
                               os.fspath(path) if name is None else name)

    @classmethod
    def _from_ranks(cls, ranks: Mapping[int, bytes], special_tokens: Mapping[str, int], eos_token_ids,
                    size, name) -> "Vocabulary":
        # an EOS id given as a number may lie past the ranks (a rank file lists no special tokens)
        given = [e for e in (eos_token_ids or ()) if not isinstance(e, (str, bool)) and hasattr(e, "__index__")]
        n = max([*ranks.keys(), *special_tokens.values(), *(int(e) for e in given), -1]) + 1
        toks: list[bytes | None] = [None] * n
        for r, b in ranks.items():
            toks[r] = b
        for i in special_tokens.values():
            toks[int(i)] = None
        eos = cls._resolve_eos(eos_token_ids, special_tokens, None)
        return cls(toks, eos_token_ids=eos, size=size, name=name)

    @staticmethod
    def _resolve_eos(eos_token_ids, specials: Mapping[str, int], data) -> list[int]:
        if eos_token_ids is None:
            return [specials[s] for s in KNOWN_EOS_TOKENS if s in specials]
        out = []
        for e in eos_token_ids:
            if isinstance(e, str):
                if e not in specials:
                    raise VocabularyError(f"EOS token {e!r} is not a special/added token")
                out.append(specials[e])
            else:
                out.append(e)
        return out


# ------------------------------------------------------------------------------------------------
# tokenizer objects Vocabulary.from_tokenizer reads: one entry per kind
# ------------------------------------------------------------------------------------------------
def _module_of(obj) -> str:
    return type(obj).__module__.split(".")[0]


def _specials_of_json(data: Mapping) -> dict[str, int]:
    return {a["content"]: int(a["id"]) for a in data.get("added_tokens") or ()}


def _serialised(tokenizer, what: str) -> dict:
    try:
        return json.loads(tokenizer.to_str())
    except Exception as e:  # noqa: BLE001 - any failure here means "cannot be read"
        raise VocabularyError(f"cannot serialise {what} {tokenizer!r}: {e}") from e


def _read_tokenizers(cls, tokenizer, eos_token_ids, size, name) -> Vocabulary:
    data = _serialised(tokenizer, "tokenizer")
    return cls.from_tokenizer_json(data, eos_token_ids=eos_token_ids, size=size, name=name)


def _read_transformers(cls, tokenizer, eos_token_ids, size, name) -> Vocabulary:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise VocabularyError(
            f"{type(tokenizer).__name__} has no tokenizers backend to read the vocabulary from; load "
            "the fast tokenizer (AutoTokenizer.from_pretrained(..., use_fast=True)) or pass its "
            "tokenizer.json to Vocabulary.from_tokenizer_file")
    data = _serialised(backend, "tokenizer")
    if eos_token_ids is None:
        specials = _specials_of_json(data)
        eos_token_ids = [specials[s] for s in KNOWN_EOS_TOKENS if s in specials]
        own = getattr(tokenizer, "eos_token_id", None)
        if isinstance(own, int) and not isinstance(own, bool):
            eos_token_ids.append(own)
    if name is None:
        name = getattr(tokenizer, "name_or_path", None) or None
    return cls.from_tokenizer_json(data, eos_token_ids=eos_token_ids, size=size, name=name)


def _read_tiktoken(cls, encoding, eos_token_ids, size, name) -> Vocabulary:
    specials = {s: int(encoding.encode_single_token(s)) for s in encoding.special_tokens_set}
    special_ids = set(specials.values())
    ranks: dict[int, bytes] = {}
    for i in range(int(encoding.n_vocab)):
        if i in special_ids:
            continue
        try:
            ranks[i] = encoding.decode_single_token_bytes(i)
        except KeyError:  # a gap in the ranks
            continue
    return cls._from_ranks(ranks, specials, eos_token_ids, size,
                           getattr(encoding, "name", None) if name is None else name)


@dataclass(frozen=True)
class TokenizerKind:
    """A kind of tokenizer object that :meth:`Vocabulary.from_tokenizer` reads.

    Attributes
    ----------
    name : str
        What the kind is called in messages.
    recognise : callable
        ``recognise(obj) -> bool``, by what the object offers (no import of its package).
    read : callable
        ``read(Vocabulary, obj, eos_token_ids, size, name) -> Vocabulary``.
    """

    name: str
    recognise: Callable[[object], bool]
    read: Callable[..., Vocabulary]


#: The tokenizer objects :meth:`Vocabulary.from_tokenizer` understands, tried in this order.
TOKENIZER_KINDS: tuple[TokenizerKind, ...] = (
    TokenizerKind("tokenizers.Tokenizer",
                  lambda t: _module_of(t) == "tokenizers" and hasattr(t, "to_str"), _read_tokenizers),
    TokenizerKind("a transformers tokenizer",
                  lambda t: _module_of(t) == "transformers" or hasattr(t, "backend_tokenizer"),
                  _read_transformers),
    TokenizerKind("a tiktoken Encoding",
                  lambda t: all(hasattr(t, a) for a in ("decode_single_token_bytes", "n_vocab",
                                                         "special_tokens_set")), _read_tiktoken),
)
