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
    $ tokenfsm demo --print-schema > tool.json
    $ tokenfsm compile tool.json --exclude "<|im_end|>" --save tool.npz
    $ tokenfsm sample tool.json -n 5 --seed 1 | jq .
    $ tokenfsm inspect --regex '[a-z]+@[a-z]+\\.com' --rules

The command parses and prints; what it shows is computed in the library: the stand-in model that
samples (:mod:`tokenfsm.masks.sampling`), the demo's schema (:mod:`tokenfsm.masks.examples`), the
vocabularies known by name (:mod:`tokenfsm.masks.builtin_vocab`). Output fits the terminal's width
(``COLUMNS``, 80 when not a terminal); sampled documents on stdout are data and stay whole.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .terminal import Progress, columns, cut, fmt_bytes, fmt_seconds, folded, table, wrapped

__all__ = ["main", "build_parser"]

PROG = "tokenfsm"

EXAMPLES = """\
examples:
  tokenfsm demo                       compile, index, sample and validate
  tokenfsm demo --print-schema > tool.json
  tokenfsm compile tool.json --exclude "<|im_end|>" --save tool.npz
  tokenfsm compile --regex '[0-9]{3}-[0-9]{4}' --vocab llama3
  tokenfsm sample tool.json -n 5 --seed 1       one JSON document a line
  tokenfsm inspect --regex '[a-z]+@[a-z]+\\.com' --rules
  tokenfsm inspect tool.json --dot | dot -Tsvg > tool.svg

Errors are one line on stderr ("tokenfsm: error: ...") and a non-zero exit
status."""


def _epilog() -> str:
    """The vocabularies (from the table of built-in ones) and the examples."""
    from .builtin_vocab import BUILTIN_VOCABULARIES

    lines = ["vocabularies (--vocab):"]
    for v in BUILTIN_VOCABULARIES.values():
        lines.append(f"  {v.name:<9} {v.description}" + (" (default)" if v.name == "qwen" else ""))
    lines.append("  FILE      a HuggingFace tokenizer.json or a tiktoken rank file")
    lines.append("            (.tiktoken; give its end-of-sequence id with --eos)")
    return "\n".join(lines) + "\n\n" + EXAMPLES


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
    #: A counted schema or regex (``dfa`` is then None): a LazyBytes (tokenfsm.automata.network)
    lazy: object = None
    #: A schema compiled branch by branch (``dfa`` is then None): a Grammar per branch
    branches: tuple = ()

    def index(self, vocab):
        """The token index: a flat :class:`TokenIndex`, a :class:`PushdownIndex` (rows made on
        demand) for a schema on the stack route or a counted grammar, or a :class:`UnionIndex`
        of its branches' indexes."""
        if self.branches:
            from .union import UnionIndex

            return UnionIndex([b.index(vocab) for b in self.branches])
        if self.recursive is not None or self.lazy is not None:
            from .pushdown import PushdownIndex

            return PushdownIndex(self.lazy or self.recursive.to_bytes(), vocab)
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
        from tokenfsm.automata.lazy_regex import regex_automaton

        dfa = regex_automaton(args.regex, budget=budget) if not excludes else None
        if dfa is not None and not isinstance(dfa, DFA):   # a large count, held as a count
            return Grammar(None, "regex", f"regex {args.regex!r}", pattern=args.regex,
                           seconds=time.perf_counter() - t0, lazy=dfa)
        if dfa is None:
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
        spacing = {} if args.whitespace is LIBRARY_DEFAULT else {"whitespace": args.whitespace}
        compiled = compile_json_schema(
            schema, **spacing, excludes=excludes, strict=not args.lenient,
            property_order=args.property_order, budget=budget,
            allow_extra_keys=getattr(args, "allow_extra_keys", False),
            recursion=getattr(args, "recursion", "auto"))
    seconds = time.perf_counter() - t0
    found = list(compiled.warnings)
    for w in caught:  # anything else the compiler or its helpers warned about
        text = str(w.message)
        if text not in found:
            found.append(text)
    return _grammar_of(compiled, source or "schema", found, seconds)


def _grammar_of(compiled, source: str, found: list, seconds: float) -> Grammar:
    """The Grammar of a compiled schema (one DFA only where it has one, or where asked)."""
    if compiled.branches:
        return Grammar(None, "schema", source, schema=compiled.schema, warnings=found,
                       seconds=seconds, branches=tuple(_grammar_of(b, source, [], 0.0)
                                                       for b in compiled.branches))
    if compiled.recursive is not None or compiled.lazy is not None:
        return Grammar(None, "schema", source, schema=compiled.schema, warnings=found,
                       seconds=seconds, recursive=compiled.recursive, lazy=compiled.lazy)
    return Grammar(compiled.dfa, "schema", source, schema=compiled.schema, warnings=found,
                   seconds=seconds)


def load_vocab(args):
    """The ``--vocab`` named by ``args`` (see :mod:`tokenfsm.masks.builtin_vocab`), with the
    ``--eos`` ids or spellings given."""
    from .builtin_vocab import load_vocabulary

    return load_vocabulary(args.vocab, eos_token_ids=getattr(args, "eos", None) or None)


def _check_save_target(path: str) -> None:
    """``--save`` must name a file in a folder that exists (nothing is created on the way)."""
    p = Path(path)
    if p.is_dir():
        raise CommandError(f"--save {path}: is a folder; give a file name, e.g. {p / 'index.npz'}")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise CommandError(f"--save {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise CommandError(f"--save {path}: the folder {folder} is not writable")


def _follow_umask(path: str) -> None:
    """Give a written file the mode a new file gets here (the index is written to a private
    temporary file first, which is created readable by its owner only)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


# ------------------------------------------------------------------------------------------------
# checking what was sampled
# ------------------------------------------------------------------------------------------------
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
        ("states over bytes", f"{int(b.table.shape[0]) - 1:,} (the same over UTF-8 bytes; + 1 dead state)"),
        ("byte groups", f"{int(b.table.shape[1]):,} (bytes that always lead to the same state)"),
    ]


def _print_pairs(pairs, out=None) -> None:
    width = max(len(k) for k, _ in pairs)
    for k, v in pairs:
        print(f"  {k:<{width}}  {wrapped(v, columns() - 1, width + 4)}", file=out or sys.stdout)


def _network_sizes(lb) -> list[tuple[str, str]]:
    kinds = np.bincount(np.asarray(lb.piece_kind), minlength=3).tolist()
    return [
        ("route", f"counted: {kinds[0]} plain, {kinds[1]} counted and {kinds[2]} key-set "
                  "piece(s); counts and key sets held in the configuration, not copied"),
        ("states over bytes", f"{lb.num_states - 1:,} (+ 1 dead state)"),
        ("byte groups", f"{lb.num_byte_classes:,} (bytes that always lead to the same state)"),
        ("call edges", f"{lb.num_calls:,}"),
    ]


def _sizes(g) -> list[tuple[str, str]]:
    """The sizes of a grammar with no single automaton (stack route, counted, or branches)."""
    if g.branches:
        out = [("route", f"union: the root's {len(g.branches)} branches compiled apart, "
                         "walked side by side")]
        for i, b in enumerate(g.branches, start=1):
            what = (f"{b.dfa.num_states:,} states" if b.dfa is not None else
                    f"counted network, {b.lazy.num_states - 1:,} states over bytes"
                    if b.lazy is not None else
                    f"stack route, {len(b.recursive.modules)} automata")
            out.append((f"branch {i}", what))
        return out
    return _network_sizes(g.lazy) if g.lazy is not None else _stack_sizes(g.recursive)


def _stack_sizes(rd) -> list[tuple[str, str]]:
    pd = rd.to_bytes()
    return [
        ("route", f"stack: {len(rd.modules) - 1} definition(s) as automata calling each other, "
                  f"recursion at most {rd.max_depth} deep"),
        ("automata", ", ".join(f"{m.num_states:,}" for m in rd.modules) + " states (top first)"),
        ("states over bytes", f"{pd.num_states - 1:,} (+ 1 dead state; one copy per recursion depth)"),
        ("byte groups", f"{pd.num_byte_classes:,} (bytes that always lead to the same state)"),
        ("call edges", f"{pd.num_calls:,} (stack at most {pd.max_stack} deep)"),
    ]


def cmd_inspect(args) -> int:
    g = compile_grammar(args)
    if g.dfa is None:
        if g.branches and (args.rules or args.dot):
            raise CommandError("this schema's root union was compiled branch by branch: no "
                               "single automaton to print")
        if g.lazy is not None and (args.rules or args.dot):
            raise CommandError("this grammar holds a large count as a count: no single automaton "
                               "to print")
        if args.rules or args.dot:
            raise CommandError("this recursive schema took the stack route: no single automaton to "
                               "print (--recursion unroll builds one)")
        print(f"automata of {g.source} (compiled in {fmt_seconds(g.seconds)})")
        _print_pairs(_sizes(g))
        for w in g.warnings:
            _err(w, "warning")
        return 0
    if args.rules:
        print(g.dfa.to_rules())
        return 0
    if args.dot:
        print(g.dfa.to_dot())
        return 0
    print(f"automaton of {g.source} (compiled in {fmt_seconds(g.seconds)})")
    _print_pairs(_automaton_sizes(g.dfa) + [("finite language", "yes" if g.dfa.is_finite() else "no")])
    shortest = g.dfa.shortest()
    print(f"  shortest    {json.dumps(shortest, ensure_ascii=False)}")
    for i, ex in enumerate(g.dfa.examples(3)):
        print(cut(f"  example {i + 1}   {json.dumps(ex, ensure_ascii=False)}"))
    for w in g.warnings:
        _err(w, "warning")
    return 0


def cmd_compile(args) -> int:
    from .index import TokenIndex
    from .trie import token_trie

    if args.save:
        _check_save_target(args.save)
    g = compile_grammar(args)
    t0 = time.perf_counter()
    vocab = load_vocab(args)
    t_vocab = time.perf_counter() - t0
    t0 = time.perf_counter()
    trie = token_trie(vocab)
    t_trie = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = g.index(vocab)
    t_index = time.perf_counter() - t0
    if g.dfa is None:
        return _compile_stack_report(args, g, vocab, trie, index, t_vocab, t_trie, t_index)
    print(f"{g.source}")
    print("automaton")
    _print_pairs([("compile time", fmt_seconds(g.seconds))] + _automaton_sizes(g.dfa))
    print(f"token index ({args.vocab}: {vocab.size:,} tokens, loaded in {fmt_seconds(t_vocab)})")
    info = index.build_info
    _print_pairs([
        ("token trie", f"{trie.num_nodes:,} nodes, built in {fmt_seconds(t_trie)}"),
        ("build time", f"{fmt_seconds(t_index)} (walk {fmt_seconds(info.get('walk_s', 0.0))}, "
                       f"strategy {info.get('strategy', '?')})"),
        ("states", f"{index.num_states - 1:,} (+ dead state)"),
        ("allowed (state, token) pairs", f"{index.num_allowed_pairs:,}"),
        ("distinct mask rows", f"{index.mask_rows.shape[0]:,}"),
        ("memory", fmt_bytes(index.nbytes)),
    ])
    if args.save:
        index.save(args.save)
        _follow_umask(args.save)
        print(f"saved index to {args.save}")
    print(f"warnings: {len(g.warnings)}")
    for w in g.warnings:
        print(f"  - {w}")
    return 0


def _compile_stack_report(args, g, vocab, trie, index, t_vocab, t_trie, t_index) -> int:
    if args.save:
        if g.branches:
            raise CommandError("an index of a union's branches makes its mask rows on demand and "
                               "has no file format")
        if g.lazy is not None:
            raise CommandError("an index of counted pieces makes its mask rows on demand and has "
                               "no file format")
        raise CommandError("a stack-route index makes its mask rows on demand and has no file "
                           "format (--recursion unroll gives a flat index that can be saved)")
    from .matcher import Matcher, allocate_token_bitmask

    m, bitmask = Matcher(index), allocate_token_bitmask(1, vocab.size)
    t0 = time.perf_counter()
    m.fill_next_token_bitmask(bitmask, 0)
    t_first = time.perf_counter() - t0
    print(f"{g.source}")
    print("automata")
    _print_pairs([("compile time", fmt_seconds(g.seconds))] + _sizes(g))
    print(f"token index ({args.vocab}: {vocab.size:,} tokens, loaded in {fmt_seconds(t_vocab)})")
    _print_pairs([
        ("token trie", f"{trie.num_nodes:,} nodes, built in {fmt_seconds(t_trie)}"),
        ("build time", f"{fmt_seconds(t_index)}; mask rows are made per configuration "
                       f"when first needed (first row {fmt_seconds(t_first)})"),
    ])
    print(f"warnings: {len(g.warnings)}")
    for w in g.warnings:
        print(f"  - {w}")
    return 0


def cmd_sample(args) -> int:
    from .sampling import sample_documents

    g = compile_grammar(args)
    vocab = load_vocab(args)
    index = g.index(vocab)
    for w in g.warnings:
        if not args.quiet:
            _err(w, "warning")
    t0 = time.perf_counter()
    runs = sample_documents(index, args.n, seed=args.seed, max_tokens=args.max_tokens, pull=args.pull,
                            plain_json=g.kind == "schema")
    unfinished = invalid = 0
    for run in runs:
        if not run.finished:
            unfinished += 1
            continue
        if validate(g, run.text) is not None:
            invalid += 1
        if args.indent is not None and g.kind == "schema":
            print(json.dumps(json.loads(run.text), indent=args.indent, ensure_ascii=False), flush=True)
        else:
            print(_one_line_document(g, run.text), flush=True)
    if not args.quiet:
        check = "jsonschema" if g.kind == "schema" else "re.fullmatch"
        print(f"{PROG}: sampled {len(runs) - unfinished}/{len(runs)} documents in "
              f"{fmt_seconds(time.perf_counter() - t0)}; valid by {check}: "
              f"{len(runs) - unfinished - invalid}/{len(runs) - unfinished}", file=sys.stderr)
    if unfinished:
        raise CommandError(f"{unfinished} of {len(runs)} samples did not finish within "
                           f"{args.max_tokens} tokens (raise --max-tokens or --pull)")
    if invalid:
        raise CommandError(f"{invalid} sampled documents failed validation")
    return 0


def cmd_demo(args) -> int:
    from tokenfsm.automata import DFA

    from .examples import get_weather
    from .index import TokenIndex
    from .sampling import sample_documents

    example = get_weather()
    if args.print_schema:
        print(json.dumps(example.schema, indent=2))
        return 0
    progress = Progress(6, enabled=not args.quiet)
    rows = []

    progress.step(f"loading vocabulary {args.vocab}")
    t0 = time.perf_counter()
    vocab = load_vocab(args)
    rows.append(("load vocabulary", time.perf_counter() - t0,
                 f"{args.vocab}: {vocab.size:,} ids, EOS {list(vocab.eos_token_ids)}"))

    progress.step("loading or compiling kernels")
    t0 = time.perf_counter()
    for strategy in ("bytes", "classes"):  # both walks, so that every kernel is compiled here
        TokenIndex.build(DFA.literal("{}"), vocab, strategy=strategy)
    rows.append(("token trie + first index build", time.perf_counter() - t0,
                 "numba kernels: compiled on the very first run, then loaded from the disk cache"))

    progress.step("compiling schema")
    args.exclude = list(example.excludes)
    g = compile_grammar(args, schema=example.schema, source=example.name)
    rows.append(("compile schema", g.seconds,
                 f"{g.dfa.num_states:,} states, {g.dfa.rule_count:,} rules, excludes "
                 f"{' '.join(example.excludes)}, {len(g.warnings)} warnings"))

    progress.step("building token index")
    t0 = time.perf_counter()
    index = TokenIndex.build(g.dfa, vocab)
    rows.append(("build token index", time.perf_counter() - t0,
                 f"{index.num_states - 1:,} states over bytes, {index.mask_rows.shape[0]:,} distinct "
                 f"masks, {fmt_bytes(index.nbytes)}"))

    progress.step(f"sampling {args.n} documents")
    t0 = time.perf_counter()
    runs = sample_documents(index, args.n, seed=args.seed, max_tokens=args.max_tokens, pull=args.pull,
                            plain_json=True)
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
                 f"mean over {n_tokens} tokens (median {fmt_seconds(float(np.median(fills)))})"))
    rows.append(("mask per token: apply to logits", float(np.mean(applies)),
                 f"numpy, {vocab.size:,} logits"))
    rows.append(("sample documents", t_sample, f"{len(runs)} documents, random logits, seed {args.seed}"))
    rows.append(("validate with jsonschema", t_valid,
                 f"valid {n_valid}/{len(runs)} (importing jsonschema took {fmt_seconds(t_import)})"))

    print(wrapped(f"tokenfsm demo: a get_weather function call, constrained for the {args.vocab} "
                   "vocabulary", columns() - 1, 0) + "\n")
    print(table([(a, fmt_seconds(b), c) for a, b, c in rows]))
    print("\nsampled documents (emitted text, one a line):")
    for r, v in zip(runs, verdicts):
        print(folded(f"  [{'valid' if v is None else 'INVALID: ' + v}] {_one_line_document(g, r.text)}", 4))
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
            description = textwrap.fill(description, width=min(columns(), 100) - 2)
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


def _eos(text: str):
    """An end-of-sequence id, or a special token's spelling."""
    return int(text) if text.strip().lstrip("-").isdigit() else text


#: ``--whitespace`` not given: the library's own default applies, so that the command and
#: ``compile_json_schema`` build the same automaton for the same schema.
LIBRARY_DEFAULT = object()  # not a string: argparse would run it through the option's type


def _library_whitespace() -> str:
    """``compile_json_schema``'s default whitespace, for the help text."""
    import inspect

    from tokenfsm.schema import compiler

    param = inspect.signature(compiler.compile_json_schema).parameters.get("whitespace")
    if param is None or param.default is inspect.Parameter.empty:
        return "as compile_json_schema"
    return f"{param.default}, as in compile_json_schema"


def _add_whitespace_arg(p) -> None:
    p.add_argument("--whitespace", type=_whitespace, default=LIBRARY_DEFAULT, metavar="N",
                   help="most whitespace characters between JSON tokens, or 'none' for "
                        f"unbounded (default {_library_whitespace()})")


def _add_grammar_args(p) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("schema", nargs="?", metavar="SCHEMA.json", help="a JSON Schema file")
    src.add_argument("--regex", metavar="PATTERN",
                     help="a regular expression (Python re dialect) instead")
    p.add_argument("--exclude", action="append", metavar="S", default=[],
                   help="a substring that string values (for --regex: matches) may not contain; "
                        "repeatable")
    _add_whitespace_arg(p)
    p.add_argument("--property-order", choices=("schema", "any"), default="schema",
                   help="object keys in the schema's order, or in any order (default schema)")
    p.add_argument("--allow-extra-keys", action="store_true",
                   help="where a schema says nothing of undeclared keys, write them too, with "
                        "any value (with --property-order any: anywhere among the declared ones)")
    p.add_argument("--lenient", action="store_true",
                   help="warn about unsupported keywords instead of failing")
    p.add_argument("--max-states", type=_positive, metavar="N",
                   help="budget: most states any automaton construction may create "
                        "(default 200000)")
    p.add_argument("--recursion", choices=("auto", "unroll", "stack"), default="auto",
                   help="recursive $ref: unrolled into one automaton, or automata calling each "
                        "other walked with a stack (default auto: unrolled unless that is large)")


def _add_vocab_args(p) -> None:
    p.add_argument("--vocab", default="qwen", metavar="NAME|FILE",
                   help="qwen (default), qwen3.6, llama3, cl100k, or a tokenizer.json or "
                        ".tiktoken file")
    p.add_argument("--eos", action="append", type=_eos, metavar="ID|TOKEN",
                   help="end-of-sequence token id (or special token) instead of the known "
                        "ones; repeatable. A .tiktoken file needs it to end a sample")


def _add_sampling_args(p, n_default: int) -> None:
    p.add_argument("-n", type=_positive, default=n_default, metavar="N",
                   help=f"number of documents (default {n_default})")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--max-tokens", type=_positive, default=256, metavar="N",
                   help="tokens per document before giving up (default 256)")
    p.add_argument("--pull", type=float, default=0.05, metavar="X",
                   help="the stand-in model writes random tokens; each token it has written "
                        "makes it X more eager to finish the document (default 0.05; 0: never "
                        "eager, documents rarely end)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tokenfsm`` command."""
    parser = _Parser(
        prog=PROG,
        description="Compile regular expressions and JSON Schemas to automata, index them for an "
                    "LLM vocabulary, and sample under the resulting token masks.",
        epilog=_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    excludes = " and ".join(_example_excludes())
    p = sub.add_parser(
        "demo", help="compile, index, sample and validate a built-in function-calling example",
        description="Compile a get_weather function-call schema whose string arguments exclude "
                    f"{excludes}, build its token index for a built-in vocabulary, sample "
                    "documents with random logits under the masks, validate them with jsonschema, "
                    "and show how long each step took.",
        epilog="examples:\n  tokenfsm demo -n 5 --seed 1 --vocab qwen3.6\n"
               "  tokenfsm demo --print-schema > tool.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_vocab_args(p)
    _add_sampling_args(p, n_default=5)
    _add_whitespace_arg(p)
    p.add_argument("--print-schema", action="store_true",
                   help="print the example's JSON Schema and stop")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_demo, lenient=False, property_order="schema", max_states=None, regex=None)

    p = sub.add_parser(
        "compile", help="automaton and token-index sizes, build times and warnings",
        description="Compile a JSON Schema or a regex, build its token index for a vocabulary, and "
                    "print sizes, build times and warnings.",
        epilog="examples:\n  tokenfsm compile tool.json --exclude '<|im_end|>' --save tool.npz\n"
               "  tokenfsm compile --regex '[0-9]{3}-[0-9]{4}' --vocab llama3",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_grammar_args(p)
    _add_vocab_args(p)
    p.add_argument("--save", metavar="INDEX.npz",
                   help="write the token index to this file (its folder must exist)")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser(
        "sample", help="sample documents under the masks (one per line on stdout)",
        description="Sample documents with random logits under the token masks and print each on "
                    "one line, so they pipe into other tools. JSON is written the plain way "
                    "(no escapes, no whitespace, integers without a fraction) wherever the "
                    "grammar allows it. A summary with the jsonschema (or re.fullmatch) verdict "
                    "goes to stderr.",
        epilog="examples:\n  tokenfsm sample tool.json -n 5 --seed 1 | jq .\n"
               "  tokenfsm sample --regex '[a-z]{3,8}@example\\.com' -n 3",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_grammar_args(p)
    _add_vocab_args(p)
    _add_sampling_args(p, n_default=5)
    p.add_argument("--indent", type=_whitespace, metavar="N",
                   help="print each JSON document parsed and indented by N, over several lines")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary or warnings on stderr")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser(
        "inspect", help="the automaton for people: sizes, examples, rules or Graphviz",
        description="Compile a JSON Schema or a regex and show its automaton: sizes and examples "
                    "(default), the rules (--rules) or a Graphviz graph (--dot).",
        epilog="examples:\n  tokenfsm inspect --regex '[a-z]+@[a-z]+\\.com' --rules\n"
               "  tokenfsm inspect tool.json --dot | dot -Tsvg > tool.svg",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_grammar_args(p)
    view = p.add_mutually_exclusive_group()
    view.add_argument("--rules", action="store_true", help="print the rules, one per state")
    view.add_argument("--dot", action="store_true", help="print a Graphviz digraph")
    p.set_defaults(func=cmd_inspect)
    return parser


def _example_excludes() -> tuple:
    from .examples import get_weather

    return get_weather().excludes


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
            msg = _one_line(e)
            if "not regular" in msg:  # the word is exact; say what it means
                msg += (" (tokenfsm builds finite automata, which read text once, left to right, "
                        "and cannot recall what a group matched or look ahead)")
            _err(msg)
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
