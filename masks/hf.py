"""A transformers ``LogitsProcessor``: constrained decoding inside ``model.generate``.

``generate`` calls its logits processors once per step with the sequences so far and the next
token's scores. This processor keeps one :class:`~.matcher.Matcher` per batch row: on the first call
of a generation it starts them (the prompt is not theirs to read), on each later call it advances
every row by the token just sampled, then fills the rows' bitmasks in one call and sets the scores
of disallowed tokens to ``-inf``. A row whose document is complete allows only EOS, so it stays
finished while the others go on. Because it recognises a new generation by its input (not the
continuation of the previous step's sequences), one processor serves any number of ``generate``
calls; beam search's reordering of rows is followed too.

Example
-------
>>> from transformers import AutoModelForCausalLM, AutoTokenizer         # doctest: +SKIP
>>> from tokenfsm.masks.hf import LogitsProcessor
>>> tok = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")     # doctest: +SKIP
>>> model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")  # doctest: +SKIP
>>> schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
>>> proc = LogitsProcessor(tok, schema=schema, whitespace=0)              # doctest: +SKIP
>>> out = model.generate(**tok("Weather in Paris?", return_tensors="pt"),
...                      logits_processor=[proc], max_new_tokens=64)      # doctest: +SKIP

xgrammar (``xgrammar.contrib.hf``), outlines and llguidance ship processors of the same shape;
this one also takes a list of grammars (one per prompt, spread over ``num_return_sequences``) and
survives reuse.
"""

from __future__ import annotations

from typing import Sequence

try:
    import torch
    import transformers
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("tokenfsm.masks.hf needs transformers and torch: pip install \"tokenfsm[hf]\"") from e

import numpy as np

from .compiler import IndexCompiler
from .errors import ProcessorError, TokenRejected, VocabularyMismatch
from .index import TokenIndex
from .matcher import Matcher, allocate_token_bitmask, apply_token_bitmask_inplace, fill_next_token_bitmasks
from .pushdown import PushdownIndex
from .vocab import Vocabulary

__all__ = ["LogitsProcessor"]


def _as_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


class LogitsProcessor(transformers.LogitsProcessor):
    """Mask ``generate``'s scores so that every row writes text of its grammar, then EOS.

    Parameters
    ----------
    tokenizer : transformers tokenizer or Vocabulary
        The model's tokenizer (read with :meth:`Vocabulary.from_tokenizer`), or a vocabulary.
        May be ``None`` when ``index`` is given: the index knows its vocabulary.
    schema : dict or str, or a list of them
        A JSON Schema; a list gives each prompt its own (its length must divide the batch: with
        ``num_return_sequences=n`` the rows of prompt ``i`` are ``i*n .. i*n+n-1``).
    regex : str, or a list of them
        A regular expression (Python ``re`` dialect, full match) instead.
    index : TokenIndex or PushdownIndex, or a list of them
        Any prebuilt index instead (slot templates, tool calls, ...).
    **compile_options
        Passed to :func:`tokenfsm.schema.compile_json_schema` (``whitespace``, ``excludes``, ...)
        or to ``DFA.from_regex``.

    Raises
    ------
    ProcessorError
        Not exactly one of ``schema``, ``regex``, ``index``; later, a batch whose size the grammars
        cannot be spread over, or rows that continue no sequence of the previous step.
    VocabularyMismatch
        An index built for another vocabulary than the tokenizer's.
    TokenRejected
        A row's sampled token is not allowed (something changed the scores after this processor).

    Notes
    -----
    Indexes are compiled once per distinct grammar and kept (an :class:`IndexCompiler` per
    processor). The vocabulary's EOS ids are the ones the grammar ends with: give ``generate`` the
    same ids as ``eos_token_id`` (:attr:`eos_token_ids`) so that it stops rows there.

    A call continues the generation when its sequences are the previous call's (rows possibly
    reordered) plus one token each; any other input starts a new one. Assisted (speculative)
    generation, which calls processors on drafted tokens and then steps back, is therefore not
    supported: its rows would be taken for a new generation.
    """

    def __init__(self, tokenizer, schema=None, *, regex=None, index=None, **compile_options):
        given = [name for name, v in (("schema", schema), ("regex", regex), ("index", index)) if v is not None]
        if len(given) != 1:
            raise ProcessorError(f"give exactly one of schema=, regex= or index= (got {given or 'none'})")
        if tokenizer is None and index is None:
            raise ProcessorError("a tokenizer (or a Vocabulary) is needed to compile a schema or regex")
        vocab = None
        if tokenizer is not None:
            vocab = tokenizer if isinstance(tokenizer, Vocabulary) else Vocabulary.from_tokenizer(tokenizer)
        if index is not None:
            if compile_options:
                raise ProcessorError(f"options {sorted(compile_options)} have no effect on a prebuilt index")
            indexes = _as_list(index)
            for ix in indexes:
                if not isinstance(ix, (TokenIndex, PushdownIndex)):
                    raise ProcessorError(f"index must be a TokenIndex or PushdownIndex, not {type(ix).__name__}")
                if vocab is not None and ix.vocab.fingerprint != vocab.fingerprint:
                    raise VocabularyMismatch(ix.vocab.fingerprint, vocab.fingerprint, "index",
                                             expected_name=ix.vocab.name, expected_size=ix.vocab.size,
                                             actual_name=vocab.name, actual_size=vocab.size)
            vocab = indexes[0].vocab if vocab is None else vocab
        else:
            compiler = IndexCompiler(vocab)
            make = compiler.json_schema if schema is not None else compiler.regex
            indexes = [make(g, **compile_options) for g in _as_list(schema if schema is not None else regex)]
        if not indexes:
            raise ProcessorError("an empty list of grammars")
        if any(ix.vocab.size != vocab.size for ix in indexes):
            raise ProcessorError("indexes over vocabularies of different sizes cannot share a batch")
        self.vocab: Vocabulary = vocab
        self.indexes: list = indexes
        self._matchers: list | None = None
        self._previous = None  # the sequences of the last call
        self._bitmask: np.ndarray | None = None

    # -- generation bookkeeping -----------------------------------------------------------------
    def reset(self) -> None:
        """Forget the current generation (the next call starts a new one). Never required: a new
        ``generate`` call is recognised by itself."""
        self._matchers = self._previous = self._bitmask = None

    def _start(self, rows: int) -> None:
        k = len(self.indexes)
        if rows % k:
            raise ProcessorError(f"{k} grammars cannot be spread over a batch of {rows} rows "
                                 "(give one grammar, or one per prompt)")
        per = rows // k
        self._matchers = [Matcher(self.indexes[r // per]) for r in range(rows)]
        self._bitmask = allocate_token_bitmask(rows, self.vocab.size)

    def _follow(self, input_ids) -> bool:
        """Advance the matchers by the newest tokens if ``input_ids`` continues the previous
        step's sequences (rows possibly reordered, as beam search does); False if it does not."""
        prev = self._previous
        if prev is None or input_ids.shape != (prev.shape[0], prev.shape[1] + 1):
            return False
        head = input_ids[:, :-1]
        same = (head == prev).all(dim=1)
        if bool(same.all()):
            sources = list(range(input_ids.shape[0]))
        else:  # rows taken from other rows of the previous step
            match = (head[:, None, :] == prev[None, :, :]).all(dim=2)
            if not bool(match.any(dim=1).all()):
                if bool(match.any()):
                    bad = int((~match.any(dim=1)).nonzero()[0])
                    raise ProcessorError(f"batch row {bad} continues no sequence of the previous step "
                                         "(call reset() between generations)")
                return False
            sources = match.to(torch.int8).argmax(dim=1).tolist()
        old = self._matchers
        taken: set = set()
        matchers = []
        for s in sources:  # a source used twice is copied, so that rows never share a matcher
            matchers.append(old[s] if s not in taken else old[s].copy())
            taken.add(s)
        for row, (m, token) in enumerate(zip(matchers, input_ids[:, -1].tolist())):
            if m.is_finished():
                continue  # generate pads finished rows with pad_token_id
            try:
                m.advance(int(token))
            except TokenRejected as e:
                raise TokenRejected(e.token_id, e.state, f"batch row {row}") from None
        self._matchers = matchers
        return True

    # -- the processor ----------------------------------------------------------------------------
    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        """Advance each row by its newest token, then mask ``scores`` in place (and return them)."""
        if input_ids.dim() != 2 or scores.dim() != 2 or input_ids.shape[0] != scores.shape[0]:
            raise ProcessorError(f"input_ids {tuple(input_ids.shape)} and scores {tuple(scores.shape)} "
                                 "are not one batch")
        if not self._follow(input_ids):
            self._start(input_ids.shape[0])
        fill_next_token_bitmasks(self._matchers, self._bitmask)
        apply_token_bitmask_inplace(scores, torch.from_numpy(self._bitmask), vocab_size=self.vocab.size)
        self._previous = input_ids.clone()
        return scores

    @property
    def eos_token_ids(self) -> list[int]:
        """The ids the grammars end with, to pass to ``generate(eos_token_id=...)``."""
        return list(self.vocab.eos_token_ids)

    @property
    def matchers(self) -> Sequence[Matcher]:
        """The current generation's matchers, one per row (empty before the first call)."""
        return tuple(self._matchers or ())
