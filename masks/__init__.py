"""Token masks for constrained decoding: vocabularies, the token index, the matcher.

A byte DFA (from :mod:`tokenfsm.automata` or :mod:`tokenfsm.schema`) and a :class:`Vocabulary`
make a :class:`TokenIndex`: for every automaton state, the tokens that keep the text viable and the
state each leads to, with packed bitmask rows. A :class:`Matcher` walks one sequence through it.
A recursive grammar kept as a stack automaton, or a lazy network whose configurations hold counts
and key sets, gets a :class:`PushdownIndex` instead (rows per configuration, computed on demand),
and a schema compiled branch by branch a :class:`UnionIndex` of its branches' indexes; one
:class:`Matcher` class drives every kind of index.

Example
-------
>>> from tokenfsm.masks import Vocabulary, IndexCompiler, Matcher, allocate_token_bitmask
>>> vocab = Vocabulary.from_tokenizer_file("tokenizer.json")    # doctest: +SKIP
>>> index = IndexCompiler(vocab).regex(r"[a-z]+@[a-z]+\\.com")   # doctest: +SKIP
>>> m = Matcher(index); bitmask = allocate_token_bitmask(1, vocab.size)   # doctest: +SKIP
>>> m.fill_next_token_bitmask(bitmask, row=0)                   # doctest: +SKIP

Where the ideas come from: outlines-core's index (per-state token walk), llguidance's token trie
(subtree skipping), xgrammar's adaptive token mask cache (shared mask rows, bitmask layout).
"""

from tokenfsm.automata.errors import OptionError, TokenfsmError

from .compiler import IndexCompiler
from .errors import (
    BitmaskError,
    BitmaskTypeError,
    CorruptIndexError,
    InvalidTextError,
    MaskError,
    ProcessorError,
    RollbackError,
    TokenRejected,
    UnknownTokenError,
    VocabularyError,
    VocabularyMismatch,
)
from .index import FORMAT_VERSION, TokenIndex
from .matcher import (
    Matcher,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    fill_next_token_bitmasks,
    unpack_bitmask,
)
from .pushdown import PushdownIndex
from .trie import TokenTrie, token_trie
from .union import UnionIndex
from .vocab import Vocabulary

__all__ = [
    "Vocabulary",
    "TokenTrie",
    "token_trie",
    "TokenIndex",
    "FORMAT_VERSION",
    "Matcher",
    "PushdownIndex",
    "UnionIndex",
    "IndexCompiler",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "fill_next_token_bitmasks",
    "unpack_bitmask",
    "MaskError",
    "TokenRejected",
    "UnknownTokenError",
    "BitmaskError",
    "BitmaskTypeError",
    "InvalidTextError",
    "VocabularyError",
    "VocabularyMismatch",
    "CorruptIndexError",
    "RollbackError",
    "ProcessorError",
    "TokenfsmError",
    "OptionError",
]


def __getattr__(name: str):
    if name == "PushdownMatcher":  # deprecated: Matcher drives every index
        from . import pushdown

        return pushdown.PushdownMatcher
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
