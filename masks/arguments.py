"""Checks of what a caller hands the matcher API: step counts, texts, bitmask rows and layouts.

A serving loop passes numbers and strings it got from elsewhere; a float where a count belongs, a
string of digits, or text with a lone surrogate must be refused with a clear error before anything
moves, not truncated (``int(1.7)``), parsed (``int("1")``) or expanded (``bytes(5)`` is five zero
bytes). The matcher classes call these at their entry points, so every kind of matcher refuses the
same things in the same words.

Example
-------
>>> step_count(2), utf8_text("é"), batch_rows([3, 0], 4)
(2, b'\\xc3\\xa9', [3, 0])
>>> step_count(1.7)
Traceback (most recent call last):
...
TypeError: a step count must be an int, not 1.7

The checks follow NumPy's ``operator.index`` rule for what counts as an integer: ``bool`` and
``float`` do not, NumPy integers do.
"""

from __future__ import annotations

import operator

import numpy as np

from .errors import BitmaskError, BitmaskTypeError, InvalidTextError

__all__ = ["step_count", "utf8_text", "row_number", "batch_rows", "check_row_layout"]


def _is_int(x) -> bool:
    return not isinstance(x, bool) and hasattr(type(x), "__index__")


def step_count(n) -> int:
    """``n`` as an int (``TypeError`` unless it is one: bools and floats are not)."""
    if not _is_int(n):
        raise TypeError(f"a step count must be an int, not {n!r}")
    return operator.index(n)


def utf8_text(text) -> bytes:
    """The UTF-8 bytes of ``text`` (a str, or bytes-like taken as they are).

    Raises
    ------
    TypeError
        Anything else (an int would otherwise become that many zero bytes).
    InvalidTextError
        A str holding a lone surrogate, which has no UTF-8 encoding; its index is given.
    """
    if isinstance(text, str):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidTextError(
                f"text holds a lone surrogate U+{ord(text[e.start]):04X} at index {e.start}, "
                "which UTF-8 cannot encode", e.start) from None
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"text must be str or bytes, not {type(text).__name__}")


def row_number(row, n_rows: int) -> int:
    """A bitmask row index: an int (else :class:`BitmaskTypeError`) in ``0 .. n_rows - 1`` (else
    :class:`BitmaskError`)."""
    if not _is_int(row):
        raise BitmaskTypeError(f"a bitmask row must be an int, not {row!r}")
    r = operator.index(row)
    if not 0 <= r < n_rows:
        raise BitmaskError(f"row {r} is outside a bitmask of {n_rows} rows")
    return r


def batch_rows(rows, n_rows: int) -> list[int]:
    """Rows of a batch, each checked by :func:`row_number`."""
    return [row_number(r, n_rows) for r in rows]


def check_row_layout(bitmask: np.ndarray) -> None:
    """:class:`BitmaskError` unless each row of the 2-D ``bitmask`` is contiguous (a row is
    written with one copy): a Fortran-ordered batch interleaves its rows."""
    if bitmask.shape[0] > 1 and bitmask.shape[1] > 1 and bitmask.strides[1] != bitmask.itemsize:
        raise BitmaskError("bitmask rows must be contiguous (C order, as allocate_token_bitmask "
                           f"makes them), not strides {bitmask.strides}")
