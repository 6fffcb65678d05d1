"""UTF-8 encoding of code-point ranges as sequences of byte ranges.

A code-point automaton becomes a byte automaton by replacing each transition on a range of code
points with the byte paths of their UTF-8 encodings. :func:`utf8_sequences` splits a range into
the minimal list of sequences of byte ranges, each sequence matching a contiguous block of code
points with one lead-byte shape, with no overlong forms and no surrogates.

Example
-------
>>> [[(hex(a), hex(b)) for a, b in seq] for seq in utf8_sequences(0x7F, 0x800)]
[[('0x7f', '0x7f')], [('0xc2', '0xdf'), ('0x80', '0xbf')], [('0xe0', '0xe0'), ('0xa0', '0xa0'), ('0x80', '0x80')]]

This is regex-syntax's ``Utf8Sequences`` (rust-lang/regex, ``utf8.rs``), itself after Russ Cox's
RE2 and the "Utf8Ranges" trick in Lucene.
"""

from __future__ import annotations

__all__ = ["utf8_sequences", "encode_length", "MAX_BY_LENGTH"]

MAX_BY_LENGTH = (0x7F, 0x7FF, 0xFFFF, 0x10FFFF)


def encode_length(cp: int) -> int:
    """Bytes in the UTF-8 encoding of ``cp``."""
    if cp <= 0x7F:
        return 1
    if cp <= 0x7FF:
        return 2
    if cp <= 0xFFFF:
        return 3
    return 4


def _encode(cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


def utf8_sequences(lo: int, hi: int) -> list[list[tuple[int, int]]]:
    """Byte-range sequences matching exactly the UTF-8 encodings of scalar values in ``lo..hi``.

    Surrogates inside the range are skipped.

    Parameters
    ----------
    lo, hi : int
        Inclusive code-point bounds.

    Returns
    -------
    list of list of (int, int)
        Each inner list is one sequence of inclusive byte ranges.
    """
    out: list[list[tuple[int, int]]] = []
    stack = [(lo, hi)]
    while stack:
        a, b = stack.pop()
        if a > b:
            continue
        # remove surrogates
        if a <= 0xDFFF and b >= 0xD800:
            stack.append((0xE000, b))
            stack.append((a, 0xD7FF))
            continue
        # split at encoding-length boundaries
        split = False
        for m in MAX_BY_LENGTH[:-1]:
            if a <= m < b:
                stack.append((m + 1, b))
                stack.append((a, m))
                split = True
                break
        if split:
            continue
        if b <= 0x7F:
            out.append([(a, b)])
            continue
        n = encode_length(a)
        # split until every continuation position is either fully free or fixed
        for i in range(1, n):
            mask = (1 << (6 * i)) - 1
            if (a & ~mask) != (b & ~mask):
                if (a & mask) != 0:
                    stack.append(((a | mask) + 1, b))
                    stack.append((a, a | mask))
                    split = True
                    break
                if (b & mask) != mask:
                    stack.append((b & ~mask, b))
                    stack.append((a, (b & ~mask) - 1))
                    split = True
                    break
        if split:
            continue
        ea, eb = _encode(a), _encode(b)
        out.append([(ea[k], eb[k]) for k in range(n)])
    out.sort()
    return out
