"""JSON Schema compile time: ``compile_json_schema`` medians over a fixed set of schemas.

Two modes::

    python benchmarks/bench_schema_compile.py [--repeats 5] [--sample 8] [--save out.json]
                                              [--compare before.json]
    python benchmarks/bench_schema_compile.py --kubernetes [--seconds 3] [--jobs 1] [--limit N]

The default mode times ``compile_json_schema(schema, whitespace=0)`` (the setting of
``bench_peers.py``) on a fixed set: the function-calling schemas and the maskbench picks of
``bench_peers.py`` (Kubernetes rows 1-3, Glaiveai2K rows 0-2, Github_easy rows 0, 1, 3), then
``--sample`` more rows of each of Glaiveai2K, Github_easy and Kubernetes (every k-th row, spread
over the file, deterministic), each under ``Budget(max_seconds=--seconds)``. Per schema it prints
the first compile in the process (``cold``: the shared caches of generic pieces, such as the
any-value automaton, are warmed beforehand by compiling a small unrelated schema) and the median
of ``--repeats`` compiles, wall-clock and CPU time of the process (the CPU time is the steadier figure on a shared machine). A schema over the
budget (``--seconds``) is reported as such and not repeated. ``--save`` writes the numbers as JSON;
``--compare`` prints them next to a saved run with the CPU-time ratio, and the geometric means of
the ratios.

``--kubernetes`` compiles every row of ``maskbench/Kubernetes.jsonl.gz`` the way
``schema_corpus_report.py`` does (its ``check``: whitespace 1, ``Budget(max_states=50_000,
max_seconds=--seconds)``, a hard alarm, worker processes) and prints how many went over the
budget, with the compile-time median and p90 of the others.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

CORPORA = Path(os.environ.get("TOKENFSM_CORPORA", "/work/shared/corpora"))
#: The maskbench rows bench_peers.py picks with its default 12 schemas.
PEER_PICKS = {"Kubernetes": (1, 2, 3), "Glaiveai2K": (0, 1, 2), "Github_easy": (0, 1, 3)}
SHORT = {"Kubernetes": "kube", "Glaiveai2K": "glai", "Github_easy": "gith"}


def _rows(subset: str) -> list[dict]:
    with gzip.open(CORPORA / "maskbench" / f"{subset}.jsonl.gz", "rt") as fh:
        return [json.loads(line) for line in fh]


def fixed_set(sample: int) -> list[tuple[str, object]]:
    """(name, schema) pairs: the bench_peers schemas, then ``sample`` spread rows per subset."""
    from bench_peers import FUNCTION_CALLING
    out = [(name, schema) for name, schema, _ in FUNCTION_CALLING]
    for subset, picks in PEER_PICKS.items():
        rows = _rows(subset)
        out += [(f"{SHORT[subset]}/{i}", rows[i]["schema"]) for i in picks]
    for subset in PEER_PICKS:
        rows = _rows(subset)
        if sample <= 0:
            continue
        step = max(1, len(rows) // sample)
        idx = [i for i in range(step // 2, len(rows), step) if i not in PEER_PICKS[subset]][:sample]
        out += [(f"{SHORT[subset]}/{i}", rows[i]["schema"]) for i in idx]
    return out


def _compile(schema, seconds: float):
    from tokenfsm.automata import Budget
    from tokenfsm.schema import compile_json_schema
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile_json_schema(schema, whitespace=0,
                                   budget=Budget(max_seconds=seconds))


def time_one(schema, repeats: int, seconds: float) -> dict:
    from tokenfsm.automata import BudgetExceeded
    times, cpu = [], []
    states = None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            cs = _compile(schema, seconds)
        except BudgetExceeded:
            if times:
                break       # a repeat went over (a loaded machine): keep the runs that finished
            return {"status": "over_budget", "times": times, "cpu": cpu}
        except Exception as e:  # noqa: BLE001 - unsupported and invalid schemas are reported
            return {"status": f"{type(e).__name__}", "times": times, "cpu": cpu}
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        states = cs.dfa.num_states
        if times[-1] > 1.0 and len(times) >= 2:
            break       # slow schemas: two runs are enough
    return {"status": "ok", "times": times, "cpu": cpu, "states": states}


def run_fixed(args) -> None:
    schemas = fixed_set(args.sample)
    # warm the shared generic pieces (any-value automaton, escape images) once
    _compile({"type": "object", "properties": {"w": {"type": "string"}, "v": {}}}, 60)
    before = {}
    if args.compare:
        before = {r["name"]: r for r in json.loads(Path(args.compare).read_text())["rows"]}
    rows = []
    hdr = f"{'schema':20} {'status':>11} {'states':>7} {'cold ms':>9} {'wall ms':>9} {'cpu ms':>9}"
    if before:
        hdr += f" {'before wall':>11} {'before cpu':>10} {'cpu ratio':>9}"
    print(hdr)
    for name, schema in schemas:
        r = time_one(schema, args.repeats, args.seconds)
        r["name"] = name
        r["cold"] = r["times"][0] if r["times"] else None
        r["median"] = statistics.median(r["times"]) if r["times"] else None
        r["cpu_median"] = statistics.median(r["cpu"]) if r["cpu"] else None
        rows.append(r)
        line = (f"{name:20} {r['status']:>11} {r.get('states') or '':>7} "
                f"{_ms(r['cold']):>9} {_ms(r['median']):>9} {_ms(r['cpu_median']):>9}")
        b = before.get(name)
        if b is not None:
            ratio = (r["cpu_median"] / b["cpu_median"]) if r["cpu_median"] and b.get("cpu_median") else None
            line += (f" {_ms(b.get('median')):>11} {_ms(b.get('cpu_median')):>10} "
                     f"{'' if ratio is None else f'{ratio:9.2f}'}")
        print(line, flush=True)
    ok = [r for r in rows if r["median"] is not None]
    print(f"\n{len(ok)} of {len(rows)} compiled; median of medians: wall "
          f"{_ms(statistics.median(r['median'] for r in ok))} ms, cpu "
          f"{_ms(statistics.median(r['cpu_median'] for r in ok))} ms; sum of medians: wall "
          f"{_ms(sum(r['median'] for r in ok))} ms, cpu {_ms(sum(r['cpu_median'] for r in ok))} ms; "
          f"over budget: {sum(r['status'] == 'over_budget' for r in rows)}")
    peers = [r for r in ok if not any(r["name"].startswith(p) for p in ("kube/", "glai/", "gith/"))
             or int(r["name"].split("/")[1]) in PEER_PICKS[_subset(r["name"])]]
    if peers:
        print(f"bench_peers set ({len(peers)} compiled): wall median "
              f"{_ms(statistics.median(r['median'] for r in peers))} ms, max "
              f"{_ms(max(r['median'] for r in peers))} ms; cpu median "
              f"{_ms(statistics.median(r['cpu_median'] for r in peers))} ms, max "
              f"{_ms(max(r['cpu_median'] for r in peers))} ms")
    if before:
        for key, label in (("cpu_median", "cpu"), ("median", "wall")):
            ratios = [r[key] / before[r["name"]][key] for r in ok
                      if r["name"] in before and before[r["name"]].get(key)]
            if ratios:
                gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
                print(f"geometric mean ratio now / before ({label}) over {len(ratios)} schemas "
                      f"compiled by both: {gm:.3f}")
    if args.save:
        Path(args.save).write_text(json.dumps({"rows": rows}, indent=1))


def _subset(name: str) -> str:
    return {v: k for k, v in SHORT.items()}[name.split("/")[0]]


def _ms(x) -> str:
    return "-" if x is None else f"{1000 * x:.1f}"


def run_kubernetes(args) -> None:
    import multiprocessing

    import schema_corpus_report as rep
    path = CORPORA / "maskbench" / "Kubernetes.jsonl.gz"
    jobs = [(*j, args.seconds) for j in rep.maskbench_groups(path, args.limit)]
    t0 = time.perf_counter()
    with multiprocessing.Pool(args.jobs, maxtasksperchild=200) as pool:
        rows = []
        for row in pool.imap(rep.check, jobs, chunksize=4):
            rows.append(row)
            if len(rows) % 100 == 0:
                print(f"{len(rows)} schemas, {time.perf_counter() - t0:.0f} s", file=sys.stderr,
                      flush=True)
    counts: dict = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    times = sorted(r["time"] for r in rows if r["time"] is not None) or [0.0]
    print(f"Kubernetes: {len(rows)} schemas, budget {args.seconds} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"compile time of the compiled: median {1000 * statistics.median(times):.1f} ms, "
          f"p90 {1000 * times[min(len(times) - 1, int(0.9 * len(times)))]:.1f} ms")
    wrong = [r["name"] for r in rows if any(not v and ok for v, ok in r["verdicts"])]
    lost = sum(v and not ok for r in rows for v, ok in r["verdicts"])
    print(f"invalid instances accepted: {len(wrong)} schemas; valid instances rejected: {lost}")
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.save:
        Path(args.save).write_text(json.dumps(
            [{k: r[k] for k in ("name", "status", "time")} for r in rows], indent=0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sample", type=int, default=8, help="extra rows per maskbench subset")
    ap.add_argument("--seconds", type=float, default=3.0, help="compile budget per schema")
    ap.add_argument("--save", default=None, help="write the numbers to this JSON file")
    ap.add_argument("--compare", default=None, help="a file written by --save to compare with")
    ap.add_argument("--kubernetes", action="store_true", help="over-budget count on Kubernetes")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    if args.kubernetes:
        run_kubernetes(args)
    else:
        run_fixed(args)


if __name__ == "__main__":
    sys.exit(main())
