"""The matcher: one sequence's position in a token index, and the bitmask helpers around it.

A :class:`Matcher` holds a configuration of a token index and a history for rollback: a state of a
flat :class:`~.index.TokenIndex` (every row precomputed), or a configuration of a lazy
:class:`~.pushdown.PushdownIndex` (rows computed on first use and kept by the index). It fills the
next-token bitmask (one row copy), advances by token id or by text, rolls back, and reports the
text forced from the current configuration for jump-forward decoding. Matchers are cheap; the index
they share is immutable (a lazy index's row cache is thread-safe). A matcher belongs to one
sequence (it is not thread-safe itself).

EOS is allowed exactly where the automaton accepts. After EOS the matcher is finished: its mask
allows only EOS (so a padded batch can keep sampling it) and advancing by EOS again is a no-op step.

Bitmasks use the xgrammar / vLLM layout: ``int32[batch, ceil(vocab / 32)]``, token ``i`` allowed iff
bit ``i % 32`` of word ``i // 32`` is set.

Example
-------
>>> m = Matcher(index)                                   # doctest: +SKIP
>>> bitmask = allocate_token_bitmask(1, index.vocab.size)  # doctest: +SKIP
>>> m.fill_next_token_bitmask(bitmask)                   # doctest: +SKIP
>>> apply_token_bitmask_inplace(logits, bitmask)         # doctest: +SKIP
>>> m.advance(int(logits.argmax()))                      # doctest: +SKIP

The API mirrors xgrammar's ``GrammarMatcher`` (fill / accept / rollback / jump-forward) and
llguidance's matcher, over an outlines-core style index.
"""

from __future__ import annotations

from collections import deque
from typing import Sequence

import numpy as np

from . import kernels
from .arguments import batch_rows, check_row_layout, row_number, step_count, utf8_text
from .errors import BitmaskError, RollbackError, TokenRejected
from .index import TokenIndex

__all__ = [
    "Matcher",
    "allocate_token_bitmask",
    "fill_next_token_bitmasks",
    "apply_token_bitmask_inplace",
    "unpack_bitmask",
]


_INT32 = np.dtype(np.int32)
#: torch dtypes whose CPU tensors NumPy can view in place
_NUMPY_FLOATS = ("torch.float16", "torch.float32", "torch.float64")


def _is_torch(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _bitmask_array(bitmask, n_words: int) -> np.ndarray:
    """Validate a bitmask and return a writable NumPy view of it (torch CPU tensors allowed)."""
    if _is_torch(bitmask):
        import torch

        if bitmask.dtype != torch.int32:
            raise BitmaskError(f"bitmask dtype must be int32, not {bitmask.dtype}")
        if bitmask.device.type != "cpu":
            raise BitmaskError("fill a CPU bitmask and copy it to the device (non-blocking)")
        bitmask = bitmask.numpy()
    if not isinstance(bitmask, np.ndarray):
        raise BitmaskError(f"bitmask must be a numpy array (or torch tensor), not {type(bitmask).__name__}")
    if bitmask.dtype != np.int32:
        raise BitmaskError(f"bitmask dtype must be int32, not {bitmask.dtype}")
    if bitmask.ndim != 2 or bitmask.shape[1] != n_words:
        raise BitmaskError(f"bitmask shape must be (batch, {n_words}), not {bitmask.shape}")
    if not bitmask.flags.writeable:
        raise BitmaskError("bitmask is read-only")
    check_row_layout(bitmask)
    return bitmask


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A bitmask for ``batch_size`` sequences with every token allowed.

    Parameters
    ----------
    batch_size : int
    vocab_size : int
        ``vocab.size`` (the logit count).

    Returns
    -------
    numpy.ndarray
        ``int32[batch_size, ceil(vocab_size / 32)]`` filled with -1 (all bits set).
    """
    if int(batch_size) < 0 or int(vocab_size) <= 0:
        raise BitmaskError(f"bad bitmask size ({batch_size}, {vocab_size})")
    return np.full((int(batch_size), (int(vocab_size) + 31) // 32), -1, dtype=np.int32)


def unpack_bitmask(bitmask: np.ndarray, vocab_size: int) -> np.ndarray:
    """Packed ``int32`` bitmask (1-D or 2-D) -> ``bool[..., vocab_size]``."""
    b = np.ascontiguousarray(bitmask).astype("<i4", copy=False).view(np.uint8)
    return np.unpackbits(b, axis=-1, bitorder="little")[..., :vocab_size].astype(bool)


class Matcher:
    """One sequence's position in a token index: a flat :class:`TokenIndex` or a lazy one.

    A position is a *configuration* of the index. For a :class:`TokenIndex` it is a state number
    and every row is precomputed (the special case: one row copy per mask, a few table lookups
    per token). For a lazy index (:class:`~.pushdown.PushdownIndex`: a stack automaton whose
    frames may hold counts and key sets) it is ``(top, stack)``, its row is computed on first
    use and kept by the index, shared with every matcher of that index.

    Parameters
    ----------
    index : TokenIndex or PushdownIndex
    max_rollback : int, optional
        Steps kept for :meth:`rollback` (unbounded by default).

    Notes
    -----
    A lazy index speaks the protocol ``start``, ``config_row(config)`` (a row entry whose
    ``entry[0]`` is ``(row or None, byte view, words or None, values or None)``: the view's bytes,
    or with words, ``write_row(entry[0], view, words)`` writes it into a bitmask row given as a
    byte view and as a ``uint32`` array; ``row_array(entry)`` makes it an array),
    ``config_after(config, token_id)`` and ``config_after_bytes(config, data)`` (the next
    configuration, or None), ``config_can_end(config)``, ``forced_bytes(config)`` and
    ``allowed_token_ids(config)``, plus ``vocab``, ``eos_ids``, ``n_words`` and
    ``finished_mask``.
    """

    __slots__ = ("_index", "_flat", "_state", "_finished", "_history", "_bm", "_bm_row",
                 "_bm_view", "_bm_words", "_rowv")

    def __init__(self, index, max_rollback: int | None = None):
        if isinstance(index, TokenIndex):
            self._flat = True
        elif callable(getattr(index, "config_row", None)):
            self._flat = False
        else:
            raise TypeError(f"Matcher needs a TokenIndex or a lazy index (PushdownIndex), not "
                            f"{type(index).__name__}")
        self._index = index
        self._state = index.start
        self._finished = False
        self._history: deque = deque(maxlen=max_rollback)
        self._bm = self._bm_row = self._bm_view = self._bm_words = None
        self._rowv = None

    # -- state ----------------------------------------------------------------------------------
    @property
    def index(self):
        return self._index

    @property
    def state(self):
        """The current configuration: a DFA state of a flat index (0 if the grammar's language is
        empty), ``(top, stack)`` of a lazy one."""
        return self._state

    def is_finished(self) -> bool:
        """Whether an EOS token has been accepted."""
        return self._finished

    def is_accepting(self) -> bool:
        """Whether the text so far is a complete match (always true once finished)."""
        if self._finished:
            return True
        if self._flat:
            return bool(self._index.accepting[self._state])
        return self._index.config_can_end(self._state)

    def _remember(self) -> None:
        """Push the position for :meth:`rollback`: ``(state, finished)`` on a flat index,
        ``(top, stack, finished)`` on a lazy one."""
        if self._flat:
            self._history.append((self._state, self._finished))
        else:
            self._history.append((self._state[0], self._state[1], self._finished))

    def _state_number(self) -> int:
        """The automaton state of the configuration (its top frame's state on a lazy index)."""
        return self._state if self._flat else self._state[0] & 0xFFFFFFFF

    def _row_id(self) -> int:
        ix = self._index
        return ix.finished_row if self._finished else ix._state_rows[self._state]

    def _write(self, view, words) -> None:
        """Write the current row into ``view``, a byte view of a bitmask row (``words``: the
        same row as a ``uint32`` array)."""
        ix = self._index
        if self._flat:
            view[:] = ix._row_views[ix.finished_row if self._finished
                                    else ix._state_rows[self._state]]
        elif self._finished:
            view[:] = ix._finished_view
        else:
            e = self._rowv
            if e is None:
                e = self._rowv = ix.config_row(self._state)
            parts = e[0]
            if parts[2] is None:
                view[:] = parts[1]
            else:                     # a row kept as its words over a shared or empty row
                ix.write_row(parts, view, words)

    def _mask_row(self) -> np.ndarray:
        """The current row as an int32 array (read-only)."""
        ix = self._index
        if self._flat:
            return ix.mask_rows[self._row_id()]
        if self._finished:
            return ix.finished_mask
        return ix.row_array(ix.config_row(self._state))

    def copy(self) -> "Matcher":
        """An independent matcher at the same position, with the same history."""
        m = object.__new__(Matcher)
        m._index = self._index
        m._flat = self._flat
        m._state = self._state
        m._finished = self._finished
        m._history = deque(self._history, maxlen=self._history.maxlen)
        m._bm = m._bm_row = m._bm_view = m._bm_words = None
        m._rowv = self._rowv
        return m

    def __repr__(self) -> str:
        return (f"Matcher(state={self._state}, finished={self._finished}, "
                f"accepting={self.is_accepting()}, steps={len(self._history)})")

    # -- masks ----------------------------------------------------------------------------------
    def fill_next_token_bitmask(self, bitmask, row: int = 0) -> None:
        """Write the allowed-token mask into ``bitmask[row]``.

        Parameters
        ----------
        bitmask : int32 array of shape (batch, ceil(vocab / 32))
            NumPy array or CPU torch tensor (see :func:`allocate_token_bitmask`).
        row : int
            Batch row to write.

        Raises
        ------
        BitmaskError
            Wrong type, dtype, shape, or row out of range; nothing is written.

        Notes
        -----
        The bitmask is validated on the first call with a given bitmask object and row; later calls
        with the same object and row copy the mask straight into a view kept from that check (one
        ``memcpy``). Reshaping or retyping that object in place afterwards is not detected.
        """
        if bitmask is self._bm and row is self._bm_row:
            if self._flat:
                ix = self._index
                self._bm_view[:] = ix._row_views[ix.finished_row if self._finished
                                                 else ix._state_rows[self._state]]
            else:
                self._write(self._bm_view, self._bm_words)
            return
        n_words = self._index.n_words
        if (type(bitmask) is np.ndarray and bitmask.dtype is _INT32 and type(row) is int
                and bitmask.ndim == 2 and bitmask.shape[1] == n_words
                and 0 <= row < bitmask.shape[0] and bitmask.flags.writeable
                and bitmask.flags.c_contiguous):
            target = bitmask[row]
        else:
            out = _bitmask_array(bitmask, n_words)
            target = out[row_number(row, out.shape[0])]
        # (a flat index copies whole rows: only a lazy one ors words into the row as an array)
        view, words = memoryview(target).cast("B"), None if self._flat else target.view(np.uint32)
        self._write(view, words)
        if type(row) is int:
            self._bm, self._bm_row, self._bm_view, self._bm_words = bitmask, row, view, words

    def allowed_token_ids(self) -> np.ndarray:
        """Allowed token ids (ascending int32), EOS included where the text may end."""
        if self._finished:
            return self._index.eos_ids.copy()
        return self._index.allowed_token_ids(self._state)

    # -- moving ---------------------------------------------------------------------------------
    def advance(self, token_id: int) -> None:
        """Consume ``token_id``.

        On a flat index the token must be set in the current state's mask row and its next state
        is its bytes walked through the byte DFA; on a lazy one its bytes are walked from the
        configuration (a few lookups per byte, no kernel call).

        Raises
        ------
        UnknownTokenError
            The id is not in the vocabulary.
        TokenRejected
            The token is not allowed here; the state is unchanged.
        """
        if type(token_id) is int and not self._finished:  # the common case
            if self._flat:
                rows, state_rows, n_words, tokens, trans, table, n_classes, size = self._index._fast
                s = self._state
                if 0 <= token_id < size:
                    if (rows[state_rows[s] * n_words + (token_id >> 5)] >> (token_id & 31)) & 1:
                        tok = tokens[token_id]
                        if tok is not None:
                            ns = s
                            for c in tok.translate(trans):
                                ns = table[ns * n_classes + c]
                            self._history.append((s, False))
                            self._state = ns
                            return
                    elif token_id not in self._index._eos_set:
                        raise TokenRejected(token_id, s)
            else:
                ix = self._index
                if 0 <= token_id < ix.vocab_size and token_id not in ix._eos_set:
                    cfg = self._state
                    ns = ix.config_after(cfg, token_id)
                    if ns is None:
                        raise TokenRejected(token_id, self._state_number())
                    self._history.append((cfg[0], cfg[1], False))
                    self._state = ns
                    self._rowv = None
                    return
        ix = self._index
        t = ix.vocab.check_token_id(token_id)
        if t in ix._eos_set:
            if not self.is_accepting():
                raise TokenRejected(t, self._state_number(), "EOS before the text is complete")
            self._remember()
            self._finished = True
            return
        if self._finished:
            raise TokenRejected(t, self._state_number(), "the sequence has ended")
        if self._flat:
            ns = ix.next_state(self._state, t)
            if ns == 0:
                raise TokenRejected(t, self._state)
        else:
            ns = ix.config_after(self._state, t)
            if ns is None:
                raise TokenRejected(t, self._state_number())
            self._rowv = None
        self._remember()
        self._state = ns

    def try_advance(self, token_id: int) -> bool:
        """Like :meth:`advance` but returns ``False`` instead of raising :class:`TokenRejected`."""
        try:
            self.advance(token_id)
        except TokenRejected:
            return False
        return True

    def accept_string(self, text: str | bytes) -> bool:
        """Advance by ``text`` (str as UTF-8, or bytes), however it would be tokenised.

        Counts as one step for :meth:`rollback`. Returns ``False`` and changes nothing if the text
        leads out of the language (or the sequence has ended).

        Raises
        ------
        TypeError
            ``text`` is neither str nor bytes-like.
        InvalidTextError
            ``text`` holds a lone surrogate (no UTF-8 encoding).
        """
        data = utf8_text(text)
        if self._finished:
            return False
        if not data:
            return True
        if self._flat:
            ns = self._index.walk_bytes(self._state, data)
            if ns == 0:
                return False
        else:
            ns = self._index.config_after_bytes(self._state, data)
            if ns is None:
                return False
            self._rowv = None
        self._remember()
        self._state = ns
        return True

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` steps (tokens, EOS, or :meth:`accept_string` calls).

        Raises
        ------
        RollbackError
            ``n`` is negative or more than the steps remembered; nothing is undone.
        TypeError
            ``n`` is not an int.
        """
        n = step_count(n)
        if n < 0 or n > len(self._history):
            raise RollbackError(f"cannot roll back {n} steps; {len(self._history)} remembered")
        if self._flat:
            for _ in range(n):
                self._state, self._finished = self._history.pop()
        elif n:
            for _ in range(n):
                q, stack, self._finished = self._history.pop()
            self._state = (q, stack)
            self._rowv = None

    def reset(self) -> None:
        """Back to the start with an empty history."""
        self._state = self._index.start
        self._finished = False
        self._history.clear()
        self._rowv = None

    def find_jump_forward_string(self) -> str:
        """The text forced from here, as complete UTF-8 characters (``""`` if none).

        A byte is forced when the text may not end here and exactly one byte keeps the
        configuration alive. The matcher does not move; feed the result to :meth:`accept_string`
        (or tokenise it and advance) to use it.
        """
        if self._finished:
            return ""
        out = self._index.forced_bytes(self._state)
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError as e:
            return bytes(out[: e.start]).decode("utf-8")


def fill_next_token_bitmasks(matchers: Sequence[Matcher | None], bitmask, rows: Sequence[int] | None = None) -> None:
    """Fill the masks of many matchers at once (one kernel call per distinct index).

    Parameters
    ----------
    matchers : sequence of Matcher or None
        ``None`` marks an unconstrained sequence: its row gets every bit set.
    bitmask : int32 array (batch, ceil(vocab / 32))
    rows : sequence of int, optional
        Row of each matcher (default ``0 .. len(matchers) - 1``).

    Raises
    ------
    BitmaskError
        Bad bitmask, rows, or matchers over vocabularies of different sizes; nothing is written.
    """
    if any(m is not None and not isinstance(m, Matcher) for m in matchers):
        bad = next(m for m in matchers if m is not None and not isinstance(m, Matcher))
        raise TypeError(f"matchers must be Matcher objects or None, not {type(bad).__name__}")
    present = [m for m in matchers if m is not None]
    if present:
        n_words = present[0].index.n_words
        if any(m.index.n_words != n_words for m in present):
            raise BitmaskError("matchers over vocabularies of different sizes cannot share a bitmask")
    else:
        n_words = bitmask.shape[1] if hasattr(bitmask, "shape") and len(bitmask.shape) == 2 else -1
    out = _bitmask_array(bitmask, n_words)
    if rows is not None:
        rows = batch_rows(rows, out.shape[0])
        if len(rows) != len(matchers):
            raise BitmaskError(f"{len(rows)} rows given for {len(matchers)} matchers")
    elif len(matchers) > out.shape[0]:
        raise BitmaskError(f"rows must lie in 0..{out.shape[0] - 1}")
    rows_arr = np.arange(len(matchers), dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    groups: dict[int, tuple[TokenIndex, list[int], list[int]]] = {}
    own = []
    for m, r in zip(matchers, rows_arr.tolist()):
        if m is not None and not m._flat:  # a lazy index's row, computed per configuration
            own.append((m._mask_row(), r))
            continue
        ix = m.index if m is not None else None
        g = groups.setdefault(id(ix), (ix, [], []))
        g[1].append(m._row_id() if m is not None else -1)
        g[2].append(r)
    empty = np.zeros((1, out.shape[1]), dtype=np.int32)
    for ix, row_ids, out_idx in groups.values():
        kernels.copy_rows(ix.mask_rows if ix is not None else empty,
                          np.asarray(row_ids, dtype=np.int64), np.asarray(out_idx, dtype=np.int64), out)
    for row, r in own:
        out[r] = row


def _vocab_limit(n_logits: int, n_words: int, vocab_size) -> int:
    """Columns that are token ids: ``vocab_size`` if given (checked), else what the bitmask covers."""
    covered = 32 * n_words
    if vocab_size is None:
        return covered
    if isinstance(vocab_size, bool) or not hasattr(vocab_size, "__index__"):
        raise BitmaskError(f"vocab_size must be an integer, not {vocab_size!r}")
    v = int(vocab_size)
    if not 0 < v <= covered:
        raise BitmaskError(f"vocab_size {v} is not covered by a bitmask of {n_words} words")
    if n_logits < v:
        raise BitmaskError(f"logits have {n_logits} columns, fewer than vocab_size {v}")
    return v


def apply_token_bitmask_inplace(logits, bitmask, vocab_size: int | None = None, indices=None) -> None:
    """Set the logits of disallowed tokens to ``-inf``, in place.

    Logits may be wider than the vocabulary (vLLM pads Qwen's 151,665 ids to 151,936 columns):
    columns from the vocabulary size on are padding, never a token, and are set to ``-inf``, as
    outlines-core and llguidance do (xgrammar leaves them untouched). Columns below it follow the
    bitmask.

    Parameters
    ----------
    logits : float array (batch, n) or (n,)
        NumPy array, or a torch tensor (any device) when torch is installed.
    bitmask : int32 array (batch, words) or (words,)
    vocab_size : int, optional
        Number of token ids. Default: what the bitmask covers, ``32 * words``. When given, it must
        be at most ``32 * words`` and at most ``n``.
    indices : sequence of int, optional
        Only these batch rows are masked (row ``i`` of logits with row ``i`` of the bitmask).

    Raises
    ------
    BitmaskError
        Wrong types or dtypes, batch sizes that differ, logits narrower than ``vocab_size``, a
        ``vocab_size`` the bitmask does not cover, or an index outside the batch.
    """
    if _is_torch(logits):
        if logits.device.type != "cpu" or str(logits.dtype) not in _NUMPY_FLOATS:
            _apply_torch(logits, bitmask, vocab_size, indices)
            return
        # a CPU tensor numpy can view: masked through the view, in one thread (torch's thread
        # pool is no faster here, and on a busy CPU an order of magnitude slower)
        logits = logits.detach().numpy()
    if _is_torch(bitmask):
        bitmask = bitmask.cpu().numpy()
    if not isinstance(logits, np.ndarray) or not np.issubdtype(logits.dtype, np.floating):
        raise BitmaskError("logits must be a floating-point numpy array (or torch tensor)")
    if not isinstance(bitmask, np.ndarray) or bitmask.dtype != np.int32:
        raise BitmaskError("bitmask must be an int32 numpy array")
    lg = logits[None, :] if logits.ndim == 1 else logits
    bm = bitmask[None, :] if bitmask.ndim == 1 else bitmask
    if lg.ndim != 2 or bm.ndim != 2 or bm.shape[0] != lg.shape[0]:
        raise BitmaskError(f"logits {logits.shape} and bitmask {bitmask.shape} do not match")
    n = lg.shape[1]
    limit = _vocab_limit(n, bm.shape[1], vocab_size)
    k = min(n, limit)
    rows = range(lg.shape[0]) if indices is None else batch_rows(indices, lg.shape[0])
    for i in rows:
        np.copyto(lg[i, :k], -np.inf, where=~unpack_bitmask(bm[i], k))
        lg[i, limit:] = -np.inf


def _apply_torch(logits, bitmask, vocab_size, indices) -> None:
    """Torch version of :func:`apply_token_bitmask_inplace` (any device)."""
    import torch

    if not _is_torch(bitmask):
        bitmask = torch.from_numpy(np.ascontiguousarray(bitmask))
    if bitmask.dtype != torch.int32:
        raise BitmaskError(f"bitmask dtype must be int32, not {bitmask.dtype}")
    if not torch.is_floating_point(logits):
        raise BitmaskError(f"logits must be floating point, not {logits.dtype}")
    lg = logits.unsqueeze(0) if logits.dim() == 1 else logits
    bm = bitmask.unsqueeze(0) if bitmask.dim() == 1 else bitmask
    if lg.dim() != 2 or bm.dim() != 2 or bm.shape[0] != lg.shape[0]:
        raise BitmaskError(f"logits {tuple(logits.shape)} and bitmask {tuple(bitmask.shape)} do not match")
    n = lg.shape[1]
    limit = _vocab_limit(n, bm.shape[1], vocab_size)
    k = min(n, limit)
    bm = bm.to(lg.device, non_blocking=True)
    # bit i of each word, as int32 (bit 31 is the sign): no widening copy of the bitmask
    bits = torch.tensor([1 << i for i in range(31)] + [-(1 << 31)], device=lg.device, dtype=torch.int32)
    allowed = (torch.bitwise_and(bm.unsqueeze(-1), bits) != 0).reshape(bm.shape[0], -1)[:, :k]
    if indices is None:
        lg[:, :k].masked_fill_(~allowed, float("-inf"))
        lg[:, limit:] = float("-inf")
        return
    idx_list = batch_rows(indices, lg.shape[0])
    idx = torch.as_tensor(idx_list, device=lg.device, dtype=torch.long)
    lg[idx, :k] = lg[idx, :k].masked_fill(~allowed[idx], float("-inf"))
    lg[idx, limit:] = float("-inf")
