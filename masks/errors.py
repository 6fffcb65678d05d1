"""Error types raised by the token-mask layer.

Every failure a caller can provoke (an id outside the vocabulary, a token the grammar forbids, a
bitmask of the wrong shape, an index saved for another vocabulary or damaged on disk) is a distinct
type carrying the facts needed to act on it. Operations that raise leave the matcher's state and the
caller's arrays untouched.

Example
-------
>>> from tokenfsm.masks import TokenRejected
>>> try:
...     matcher.advance(13)            # doctest: +SKIP
... except TokenRejected as e:
...     print(e.token_id, e.state)
"""

from __future__ import annotations

from tokenfsm.automata.errors import OptionError, TokenfsmError

__all__ = [
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
]


class MaskError(TokenfsmError):
    """Base class of every error raised by ``tokenfsm.masks``."""


class TokenRejected(MaskError):
    """A token id that the grammar does not allow in the matcher's current state.

    Attributes
    ----------
    token_id : int
        The rejected id.
    state : int
        The automaton state the matcher was (and still is) in.
    """

    def __init__(self, token_id: int, state: int, reason: str | None = None):
        self.token_id = int(token_id)
        self.state = int(state)
        msg = f"token {self.token_id} is not allowed in state {self.state}"
        if reason:
            msg += f" ({reason})"
        super().__init__(msg)


class UnknownTokenError(MaskError, IndexError):
    """A token id outside ``0 .. vocab.size - 1`` (or not an integer)."""

    def __init__(self, token_id, vocab_size: int):
        self.token_id = token_id
        self.vocab_size = int(vocab_size)
        super().__init__(f"token id {token_id!r} is not in a vocabulary of size {self.vocab_size}")


class BitmaskError(MaskError, ValueError):
    """A bitmask (or logits array) with the wrong type, dtype, shape or row index."""


class BitmaskTypeError(BitmaskError, TypeError):
    """A bitmask row given as something other than an int (``0.9``, ``"1"``, ``True``): a
    :class:`BitmaskError` that is also a ``TypeError``."""


class InvalidTextError(MaskError, ValueError):
    """Text that has no UTF-8 encoding (a lone surrogate), given to :meth:`.Matcher.accept_string`.

    Attributes
    ----------
    index : int
        Where in the text the offending character is.
    """

    def __init__(self, msg: str, index: int):
        self.index = int(index)
        super().__init__(msg)

    def __reduce__(self):
        return (type(self), (self.args[0], self.index))


class VocabularyError(MaskError, ValueError):
    """A vocabulary that cannot be built from what was given (unknown format, bad ids)."""


class VocabularyMismatch(MaskError, ValueError):
    """An index used or loaded with a vocabulary other than the one it was built for.

    Attributes
    ----------
    expected : str
        Fingerprint of the vocabulary the index was built for.
    actual : str
        Fingerprint of the vocabulary given.
    expected_name, actual_name : str or None
        The two vocabularies' names, where known (an index saved by an older release has none).
    expected_size, actual_size : int or None
        Their sizes (token ids), where known.
    """

    def __init__(self, expected: str, actual: str, what: str = "index", *,
                 expected_name: str | None = None, expected_size: int | None = None,
                 actual_name: str | None = None, actual_size: int | None = None):
        self.expected = expected
        self.actual = actual
        self.expected_name, self.actual_name = expected_name, actual_name
        self.expected_size = None if expected_size is None else int(expected_size)
        self.actual_size = None if actual_size is None else int(actual_size)
        super().__init__(
            f"{what} was built for vocabulary {_described(expected, expected_name, self.expected_size)}, "
            f"not {_described(actual, actual_name, self.actual_size)}"
        )


def _described(fingerprint: str, name: str | None, size: int | None) -> str:
    """``'qwen' (151,851 ids, fingerprint 3f2a...)``, with what is known."""
    facts = ([f"{size:,} ids"] if size is not None else []) + [f"fingerprint {str(fingerprint)[:12]}..."]
    return (f"{name!r} " if name else "") + f"({', '.join(facts)})"


class CorruptIndexError(MaskError, ValueError):
    """A saved index that cannot be read: truncated, altered, or of an unknown format version."""


class RollbackError(MaskError, ValueError):
    """``rollback(n)`` asked to undo more steps than the matcher has taken (or a negative count)."""


class ProcessorError(MaskError, ValueError):
    """A logits processor given conflicting grammars, or a batch it cannot follow (the number of
    rows, or rows that continue no sequence of the previous step)."""
