"""How budgets hold under hostile inputs: time to a typed error, and a time budget's precision.

Two tables, each over several runs in fresh processes (timings on a shared machine are noisy, so
medians, p90 and p99 are printed):

* **default budgets**: for inputs that must end in ``BudgetExceeded`` (huge counts, subset
  blow-ups, long literals, many distinct characters), the seconds from the call to the error in
  the caller's hands, and the peak resident memory of the process;
* **max_seconds**: for constructions that run past it (a subset blow-up, a long NFA, a product, a
  schema of 400 patterned strings), ``reached / max_seconds`` as the error reports it and the
  caller's own ``elapsed / max_seconds``; the budget is honoured when both stay within 1.1.

Usage::

    python benchmarks/bench_budgets.py [--runs N] [--seconds S]

The ratio form follows the other scripts here; there is no peer to compare with (no peer
library bounds a construction's time).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
from tokenfsm.automata import DFA, Budget, BudgetExceeded, CharSet
from tokenfsm.schema import compile_json_schema
kind, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
ANY = DFA.from_charset(CharSet.any())
bounded = ANY.repeat(0, 20000)
bounded40 = ANY.repeat(0, 40000)
excl = DFA.excluding(["<|open|>", "</p>", "```", "ab", "ba"])
DFA.from_regex(r"[\s\S\w\d]")
hostile = {
    "a{1e9}": lambda b: DFA.from_regex("a{1000000000}", budget=b),
    "(a{1000}){1000}": lambda b: DFA.from_regex("(a{1000}){1000}", budget=b),
    "(a|b)*a(a|b){40}": lambda b: DFA.from_regex("(a|b)*a(a|b){40}", budget=b),
    "pattern a(a|b){30}$": lambda b: compile_json_schema(
        {"type": "string", "pattern": "a(a|b){30}$"}, budget=b),
    "5000 distinct chars": lambda b: DFA.from_regex(
        "".join(map(chr, range(0x4E00, 0x4E00 + 5000))), budget=b),
    "literal 1e7": lambda b: DFA.literal("a" * 10**7, budget=b),
    "repeat(0, 1e9)": lambda b: DFA.literal("ab").repeat(0, 10**9, budget=b),
    "[\\s\\S]{0,20000} & excl": lambda b: bounded.intersect(excl, budget=b),
}
timed = {
    "blow-up": lambda b: DFA.from_regex("(a|b)*a(a|b){22}", budget=b),
    "long NFA": lambda b: DFA.from_regex(r"[\s\S]{0,190000}", budget=b),
    "product": lambda b: bounded40.intersect(excl, budget=b),
    "schema": lambda b: compile_json_schema({"type": "object", "properties": {
        f"p{i}": {"type": "string", "pattern": f"^[a-z]{{1,{20 + i}}}x{i}(ab|cd)*$"}
        for i in range(400)}}, budget=b),
}
if kind == "hostile":
    make, budget = hostile[name], None
else:
    make = timed[name]
    budget = Budget(max_states=10**8, max_cells=10**10, max_visits=10**10, max_seconds=seconds)
t0 = time.perf_counter()
try:
    make(budget)
    out = {"error": None}
except BudgetExceeded as e:
    out = {"error": e.kind, "reached": e.reached}
out["elapsed"] = time.perf_counter() - t0
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

HOSTILE = ["a{1e9}", "(a{1000}){1000}", "(a|b)*a(a|b){40}", "pattern a(a|b){30}$",
           "5000 distinct chars", "literal 1e7", "repeat(0, 1e9)", "[\\s\\S]{0,20000} & excl"]
TIMED = ["blow-up", "long NFA", "product", "schema"]


def _run(kind, name, seconds):
    done = subprocess.run([sys.executable, "-c", CHILD, kind, name, str(seconds)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.splitlines()[-1])


def _q(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0, help="max_seconds of the second table")
    args = ap.parse_args(argv)

    print(f"default budgets: seconds to BudgetExceeded ({args.runs} runs each)")
    print(f"{'input':28} {'kind':12} {'median':>7} {'p90':>7} {'p99':>7} {'peak MB':>8}")
    for name in HOSTILE:
        runs = [_run("hostile", name, 0) for _ in range(args.runs)]
        t = [r["elapsed"] for r in runs]
        kinds = sorted({str(r["error"]) for r in runs})
        print(f"{name:28} {','.join(kinds):12} {statistics.median(t):7.2f} {_q(t, .9):7.2f} "
              f"{_q(t, .99):7.2f} {max(r['peak_mb'] for r in runs):8.0f}")

    print(f"\nmax_seconds={args.seconds:g}: reached/limit (as reported) and elapsed/limit "
          f"(the caller's), {args.runs} runs each")
    print(f"{'construction':14} {'reached med':>11} {'p90':>6} {'p99':>6} {'elapsed med':>11} "
          f"{'p90':>6} {'p99':>6}")
    for name in TIMED:
        runs = [_run("timed", name, args.seconds) for _ in range(args.runs)]
        if any(r["error"] != "seconds" for r in runs):
            print(f"{name:14} did not run past the time budget: {runs}")
            continue
        r = [x["reached"] / args.seconds for x in runs]
        e = [x["elapsed"] / args.seconds for x in runs]
        print(f"{name:14} {statistics.median(r):11.3f} {_q(r, .9):6.3f} {_q(r, .99):6.3f} "
              f"{statistics.median(e):11.3f} {_q(e, .9):6.3f} {_q(e, .99):6.3f}")


if __name__ == "__main__":
    main()
