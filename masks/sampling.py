"""A stand-in model for trying grammars without one: random logits under the token masks.

:func:`sample_documents` draws Gaussian logits over the whole vocabulary, masks them with the
matcher's bitmask and takes the argmax, so every document it returns is in the grammar's language.
Two preferences make the documents look like something a model would write:

* a **pull toward finishing** that grows with the tokens emitted: a token that brings the text
  closer to acceptance (fewer bytes still needed, by :func:`distance_to_accept`) gains, one that
  leads away loses. Without it, random logits over a 150k vocabulary almost never pick one of the
  few tokens that close a string.
* **plain spelling** (for JSON): the language of a schema also holds ``"get\\u005fweather"`` for
  ``"get_weather"``, ``7.0`` for the integer ``7`` and whitespace between tokens; the stand-in
  prefers the plain spelling (:data:`PLAIN_JSON`), as a model would. The language itself stays
  exact: a spelling that is the only way on is still taken.

:func:`distance_to_accept` is the bytes still needed from every state, for a flat
:class:`~.index.TokenIndex` and for a stack automaton's :class:`~.pushdown.PushdownIndex` alike
(there a state's distance is to the end of its definition, and a configuration adds the distances
of the return states on its stack: :func:`bytes_to_accept`). On a lazy network an object's frame
also counts the required keys it has not written yet (:class:`_LazyGuide`): in any order, a
required key may come last, after undeclared ones.

Example
-------
>>> from tokenfsm.automata import DFA
>>> from tokenfsm.masks import TokenIndex, Vocabulary
>>> vocab = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
>>> index = TokenIndex.build(DFA.from_regex("(ab)+"), vocab)
>>> int(bytes_to_accept(distance_to_accept(index), index.start))
2
>>> [run.text for run in sample_documents(index, 2, seed=0)]
['ababab', 'ab']

The shortest distances are Knuth's generalisation of Dijkstra's algorithm to grammars ("A
generalization of Dijkstra's algorithm", 1977): a call's cost is its callee's shortest text plus the
shortest text after the return.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from tokenfsm.automata.lazy_bytes import KEY_SET, STATE_MASK

from .errors import VocabularyError

_LOW32 = (1 << 32) - 1

__all__ = ["distance_to_accept", "bytes_to_accept", "sample_documents", "SampleRun", "PLAIN_JSON",
           "FAR"]

#: The distance of states that cannot reach acceptance (the dead state).
FAR = 1 << 40


# ------------------------------------------------------------------------------------------------
# bytes still needed
# ------------------------------------------------------------------------------------------------
def _reverse_moves(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct byte moves ``s -> t`` (neither dead) as CSR by target: ``sources[ptr[t]:ptr[t+1]]``."""
    n, c = table.shape
    src = np.repeat(np.arange(n, dtype=np.int64), c)
    dst = table.reshape(-1).astype(np.int64)
    keep = (src != 0) & (dst != 0)
    pairs = np.unique(dst[keep] * n + src[keep])
    dst, src = pairs // n, pairs % n
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(ptr, dst + 1, 1)
    return np.cumsum(ptr), src


def distance_to_accept(index) -> np.ndarray:
    """Bytes still needed from each state to reach acceptance, calls included.

    Parameters
    ----------
    index : TokenIndex or PushdownIndex
        Anything with a byte ``table`` and ``accepting`` flags; a stack automaton's call arrays
        (``call_ptr``, ``call_entry``, ``call_return``) are followed where present.

    Returns
    -------
    numpy.ndarray
        ``int64[num_states]``. For a stack automaton, a state's distance is to the end of the
        definition it belongs to. States that cannot get there (the dead state) get :data:`FAR`.
        A lazy network's counts are not read: from a state of a counted piece, the distance is
        the shortest way out were its count already within its bounds (a lower bound).
    """
    table = np.asarray(index.table) & STATE_MASK   # (a lazy network's moves carry tick bits)
    n = table.shape[0]
    ptr, sources = _reverse_moves(table)
    calls = []  # (caller, entry, return)
    if getattr(index, "call_ptr", None) is not None:
        cp = np.asarray(index.call_ptr, dtype=np.int64)
        callers = np.repeat(np.arange(n), np.diff(cp))
        calls = list(zip(callers.tolist(), np.asarray(index.call_entry).tolist(),
                         np.asarray(index.call_return).tolist()))
    waiting: dict[int, list[int]] = {}
    missing = []
    for k, (_, entry, ret) in enumerate(calls):
        for s in {entry, ret}:
            waiting.setdefault(s, []).append(k)
        missing.append(len({entry, ret}))
    dist = np.full(n, FAR, dtype=np.int64)
    best = dist.copy()
    accepting = np.flatnonzero(np.asarray(index.accepting, dtype=bool))
    heap = [(0, int(s)) for s in accepting if s != 0]
    best[[s for _, s in heap]] = 0
    heapq.heapify(heap)
    settled = np.zeros(n, dtype=bool)
    settled[0] = True
    while heap:
        d, t = heapq.heappop(heap)
        if settled[t]:
            continue
        settled[t] = True
        dist[t] = d
        for s in sources[ptr[t]:ptr[t + 1]].tolist():
            if d + 1 < best[s]:
                best[s] = d + 1
                heapq.heappush(heap, (d + 1, s))
        for k in waiting.get(t, ()):
            missing[k] -= 1
            if missing[k] == 0:
                q, entry, ret = calls[k]
                cost = int(dist[entry] + dist[ret])
                if not settled[q] and cost < best[q]:
                    best[q] = cost
                    heapq.heappush(heap, (cost, q))
    return dist


def bytes_to_accept(dist: np.ndarray, state) -> int:
    """Bytes still needed from a matcher state: an ``int``, or a stack configuration
    ``(state, return_states)`` whose distance adds those of its return states."""
    if isinstance(state, tuple):
        # a lazy network's frames pack a count and a key set above the state's 32 bits
        q, stack = state
        return min(FAR, int(dist[q & _LOW32]) + sum(int(dist[r & _LOW32]) for r in stack))
    return int(dist[state])


# ------------------------------------------------------------------------------------------------
# plain spelling
# ------------------------------------------------------------------------------------------------
#: How a writer of JSON spells things, as the token traits the stand-in model avoids. Outside a
#: string (a state that does not allow a backslash), whitespace is formatting, and a ``.`` or an
#: exponent belongs to a number's long form (``7.0``, ``7e0`` for ``7``); anywhere, a backslash
#: starts an escape (``\u005f`` for ``_``). ``escape``: bytes that make a token an escape;
#: ``whitespace``: formatting when the token starts or ends outside a string; ``fraction``: a
#: number's long form when the token starts outside a string; ``exponent``: the same when the token
#: also holds a digit, or starts with one and leads away from the end.
PLAIN_JSON = {
    "escape": b"\\",
    "whitespace": b" \t\n\r",
    "fraction": b".",
    "exponent": b"eE",
}


class _PlainJson:
    """Per-token traits from :data:`PLAIN_JSON` and per-state "inside a string" flags."""

    def __init__(self, index):
        vocab = index.vocab
        traits = np.zeros((5, vocab.size), dtype=bool)
        digits = set(b"0123456789")
        escape, space, frac, expo = (set(PLAIN_JSON[k]) for k in ("escape", "whitespace", "fraction",
                                                                   "exponent"))
        for i, t in enumerate(vocab.tokens):
            if t is None:
                continue
            has = set(t)
            traits[:, i] = (bool(has & escape), bool(has & space), bool(has & frac),
                            bool(has & expo) and bool(has & digits), t[0] in expo)
        self.escape, self.space, self.fraction, self.exponent, self.leads_exponent = traits
        table, classes = np.asarray(index.table), np.asarray(index.byte_classes)
        self.in_string = table[:, classes[next(iter(escape))]] != 0

    def long_way(self, allowed, q_from: int, q_to: np.ndarray, gain: np.ndarray) -> np.ndarray:
        """Which ``allowed`` tokens (leading from state ``q_from`` to ``q_to``) spell JSON the
        long way."""
        start_in, end_in = self.in_string[q_from], self.in_string[q_to]
        out = self.escape[allowed] | (self.space[allowed] & ~(start_in & end_in))
        if not start_in:
            out |= self.fraction[allowed] | self.exponent[allowed] | (self.leads_exponent[allowed] & (gain < 0))
        return out


class _LazyGuide:
    """Bytes still needed from a lazy index's configurations, for the sampler's pull.

    :func:`bytes_to_accept` adds the distances of the frames' states, which do not read their key
    sets: an object with required keys missing looks as if it could close at once, so the pull
    keeps a value going rather than start the next member (a ``,`` leads away from a ``}`` that
    is not allowed). Here a key-set frame also needs, for one of its piece's terms that no key
    written breaks, each required key still missing as a member of its own (a comma, then the
    member's shortest text); where the member being written may still become one of them, the
    bytes that finish it as that key count instead (:meth:`frame`). With no key missing it is
    the state's distance, as there. Member texts are measured on the network: per declared key,
    the bytes from each state of its name (the states whose key mask holds it) to the end of
    its shortest value, a member's own from where a comma leads. Where the counts are taken
    the result is no more than the bytes of the shortest completion (a lower bound, as the
    state's distance is).
    """

    def __init__(self, index, dist: np.ndarray):
        self.dist = dist
        self.table = np.asarray(index.table) & STATE_MASK     # (moves carry tick bits)
        classes = np.asarray(index.byte_classes)
        first = np.array([t[0] if t else 0 for t in index.vocab.tokens], dtype=np.int64)
        self.first_class = classes[first]
        self.class_byte = [0] * self.table.shape[1]     # (a byte of each class)
        for b in range(255, -1, -1):
            self.class_byte[classes[b]] = b
        self.token_of = {t: i for i, t in enumerate(index.vocab.tokens) if t}
        self.fa = fa = getattr(index, "_frames", None)
        # per (piece, key): state -> bytes that finish the member as that key, then the bytes
        # from its value's return; the member's own bytes from where it starts
        self.finish: dict = {}
        self.after: dict = {}
        self.member: dict = {}
        if fa is None or KEY_SET not in fa._kind:
            return
        lb = fa.lb
        piece, kind, kmask = fa._piece, fa._kind, fa._kmask
        entry, ret = lb.call_entry.tolist(), lb.call_return.tolist()
        caller = np.repeat(np.arange(lb.num_states), np.diff(lb.call_ptr)).tolist()
        heads: dict = {}            # (piece, key) -> [(bytes, state)] where its value starts
        for e, j in enumerate(lb.call_commit.tolist()):
            q = caller[e]
            if j >= 0 and kind[piece[q]] == KEY_SET:
                key = (piece[q], j)
                heads.setdefault(key, []).append((int(dist[entry[e]]), q))
                self.after[key] = min(self.after.get(key, FAR), int(dist[ret[e]]))
        if not heads:
            return
        ptr, sources = _reverse_moves(self.table)
        # where a member after the first starts: a comma's move from where the object may close
        comma = self.table[:, classes[ord(",")]]
        starts = {int(comma[t]) for t in range(1, len(piece)) if fa._close[t] and comma[t]}
        for (p, j), todo in heads.items():
            bit = 1 << j
            best: dict = {}
            heapq.heapify(todo)
            while todo:
                d, t = heapq.heappop(todo)
                if t in best:
                    continue
                best[t] = d
                for s in sources[ptr[t]:ptr[t + 1]].tolist():
                    if s not in best and piece[s] == p and kmask[s] & bit:
                        heapq.heappush(todo, (d + 1, s))
            self.finish[p, j] = best
            self.member[p, j] = min((best[t] for t in starts if t in best),
                                    default=max(best.values()))

    def frame(self, x: int) -> int:
        """Bytes a frame still needs to end its piece (see the class docstring)."""
        return self._frame(x)[0]

    def _frame(self, x: int) -> tuple[int, int]:
        """``(bytes, key)``: :meth:`frame`, and the missing key that the member being written
        finishes as on the way counted (-1: none, the state's own distance counted)."""
        q = x & _LOW32
        d = int(self.dist[q])
        fa = self.fa
        if not self.member:
            return d, -1
        p = fa._piece[q]
        if fa._kind[p] != KEY_SET:
            return d, -1
        k = x >> 96
        best, via = FAR, -1
        for req, forb in fa._terms[p]:
            if forb & k:
                continue
            missing = req & ~k
            if not missing:
                return d, -1
            keys = [j for j in range(missing.bit_length()) if missing >> j & 1]
            total = sum(1 + self.member.get((p, j), 0) for j in keys)
            if d + total < best:
                best, via = d + total, -1
            now = fa._kmask[q] & missing
            for j in keys:
                f = self.finish.get((p, j), {}).get(q) if now >> j & 1 else None
                if f is not None and f + total - 1 - self.member[p, j] + self.after[p, j] < best:
                    best, via = f + total - 1 - self.member[p, j] + self.after[p, j], j
        return (d, -1) if best == FAR else (best, via)

    def distance(self, state) -> int:
        """Bytes still needed from a configuration ``(top, stack)``: its frames' sum."""
        q, stack = state
        return min(FAR, self.frame(q) + sum(self.frame(r) for r in stack))

    def toward(self, state, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of ``tokens`` (ascending), those that may lead toward the end from ``state``, in two
        parts: those whose first byte calls or returns from the top frame (not followed here),
        and those that spell the start of the shortest way on within it (:meth:`lead`: a
        missing key's name, the closing quote of a string)."""
        x = state[0]
        lead = self.lead(x)
        ids = [self.token_of.get(lead[:i], -1) for i in range(1, len(lead) + 1)]
        return (tokens[self.table[x & _LOW32, self.first_class[tokens]] == 0],
                tokens[np.isin(tokens, ids)])

    def lead(self, x: int, most: int = 32) -> bytes:
        """The shortest way on from frame ``x`` by the table, at most ``most`` bytes: a byte at a
        time to a state nearer by :meth:`frame` (a required key's name, where one is missing),
        until none is."""
        rest = x & ~_LOW32
        q = x & _LOW32
        out = bytearray()
        while len(out) < most:
            d, j = self._frame(q | rest)
            row = self.table[q].tolist()
            if j >= 0:
                goal = self.finish[self.fa._piece[q], j]
                step = next((c for c, t in enumerate(row) if t and goal.get(t) == goal[q] - 1),
                            None)
            elif d == int(self.dist[q]):
                step = next((c for c, t in enumerate(row) if t and self.dist[t] == d - 1), None)
            else:           # (between members, a key missing: the byte that starts one)
                near = {t: self.frame(t | rest) for t in set(row) if t}
                step = min((c for c, t in enumerate(row) if t and near[t] < d),
                           key=lambda c: near[row[c]], default=None)
            if step is None:
                break
            out.append(self.class_byte[step])
            q = row[step]
        return bytes(out)


# ------------------------------------------------------------------------------------------------
# the sampler
# ------------------------------------------------------------------------------------------------
#: Tokens a lazy index's step follows to weigh the pull, by the noise: as many among all the
#: allowed tokens as among those that call or return first (see :meth:`_LazyGuide.toward`).
CANDIDATES = 64


@dataclass
class SampleRun:
    """One sampled sequence.

    Attributes
    ----------
    token_ids : list of int
        Tokens emitted, EOS not included.
    text : str
        Their bytes, decoded as UTF-8.
    finished : bool
        Whether EOS was reached within the token limit.
    mask_seconds, apply_seconds : list of float
        Per step: filling the bitmask, and applying it to the logits.
    """

    token_ids: list
    text: str
    finished: bool
    mask_seconds: list
    apply_seconds: list


def sample_documents(index, n: int, seed: int = 0, max_tokens: int = 256, pull: float = 0.05,
                     plain_json: bool = False, spelling: float = 4.0) -> list[SampleRun]:
    """Sample ``n`` sequences under the index's masks with random logits.

    Each step draws Gaussian logits over the whole vocabulary and adds ``pull * step * gain``,
    where ``gain`` is +1 for a token that leads closer to acceptance (fewer bytes still needed), -1
    for one that leads away and 0 otherwise (EOS counts +1 where the text is complete); with
    ``plain_json``, tokens that spell JSON the long way (:data:`PLAIN_JSON`) lose ``spelling``.
    Then the logits are masked with the matcher's bitmask and the argmax is taken. Only the
    direction counts in the pull: rewarding the bytes gained would favour tokens such as ``""``
    that close a string as they open it.

    Parameters
    ----------
    index : TokenIndex, PushdownIndex or UnionIndex
        A union index's sequences each come from one branch, drawn at random.
    n : int
        Number of sequences.
    seed : int
        Seed of the NumPy generator.
    max_tokens : int
        Steps before a sequence is abandoned as unfinished.
    pull : float
        Strength of the pull toward finishing (0: pure noise; such samples rarely end).
    plain_json : bool
        Prefer JSON's plain spelling (for a schema's index).
    spelling : float
        How much a long spelling loses (the noise has standard deviation 1).

    Returns
    -------
    list of SampleRun

    Raises
    ------
    VocabularyError
        The vocabulary has no end-of-sequence id, so no sample could end.
    """
    from .matcher import Matcher, allocate_token_bitmask, apply_token_bitmask_inplace

    rng = np.random.default_rng(seed)
    vocab = index.vocab
    size = vocab.size
    eos = np.asarray(vocab.eos_token_ids, dtype=np.int64)
    if eos.size == 0:
        raise VocabularyError("the vocabulary has no end-of-sequence token, so a sample cannot end "
                              "(give its id)")
    eos_set = set(eos.tolist())
    branches = getattr(index, "branches", None) or (index,)
    guides: dict = {}      # per branch: its distances, whether it is flat, its plain spelling
    bitmask = allocate_token_bitmask(1, size)
    runs = []
    for _ in range(n):
        index = branches[int(rng.integers(len(branches)))] if len(branches) > 1 else branches[0]
        if id(index) not in guides:
            # (a TokenIndex lists each state's (token, next) pairs)
            flat = hasattr(index, "transitions")
            dist = distance_to_accept(index)
            guides[id(index)] = (dist, flat, _PlainJson(index) if plain_json else None,
                                 None if flat else _LazyGuide(index, dist))
        dist, flat, plain, lazy = guides[id(index)]
        m = Matcher(index)
        toks, fills, applies = [], [], []
        finished = False
        for step in range(max_tokens + 1):
            state = m.state
            logits = rng.standard_normal(size, dtype=np.float32)
            weight = pull * step
            if weight or plain_json:
                if flat:
                    allowed, nexts = index.transitions(state)   # this state's pairs only
                    gain = np.sign(dist[state] - dist[nexts]).astype(np.float32)
                else:
                    # candidates (following every allowed token through the stack would cost a
                    # walk each): those the noise favours, as many of those that call or return,
                    # and those that spell the shortest way on (few, among 100k that do not)
                    allowed = m.allowed_token_ids()
                    allowed = allowed[~np.isin(allowed, eos)]
                    hops, lead = lazy.toward(state, allowed)
                    allowed = np.union1d(np.union1d(
                        allowed[np.argsort(logits[allowed])[-CANDIDATES:]],
                        hops[np.argsort(logits[hops])[-CANDIDATES:]]), lead)
                    here = lazy.distance(state)
                    configs = [index.next_state(state, int(t)) for t in allowed]
                    gain = np.array([np.sign(here - lazy.distance(c)) for c in configs],
                                    dtype=np.float32)
                logits[allowed] += weight * gain
                if plain:
                    if flat:
                        q, q_to = state, nexts
                    else:
                        q = state[0] & _LOW32   # (the state of a packed frame)
                        q_to = np.array([c[0] & _LOW32 for c in configs], dtype=np.int64)
                    logits[allowed] -= spelling * plain.long_way(allowed, q, q_to, gain)
                if weight and m.is_accepting():
                    logits[eos] += weight
            t0 = time.perf_counter()
            m.fill_next_token_bitmask(bitmask, 0)
            t1 = time.perf_counter()
            apply_token_bitmask_inplace(logits, bitmask[0], vocab_size=size)
            t2 = time.perf_counter()
            fills.append(t1 - t0)
            applies.append(t2 - t1)
            tok = int(np.argmax(logits))
            if not np.isfinite(logits[tok]):
                break  # nothing allowed: the grammar's language is empty here
            m.advance(tok)
            if tok in eos_set:
                finished = True
                break
            if step == max_tokens:
                break
            toks.append(tok)
        text = vocab.decode(toks).decode("utf-8", errors="replace")
        runs.append(SampleRun(toks, text, finished, fills, applies))
    return runs
