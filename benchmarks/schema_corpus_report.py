"""Compile every schema of the corpora and check the automaton against the instances.

For each subset (the JSON Schema Test Suite files, each maskbench subset) prints how many schemas
compiled, were unsupported, went over budget or failed, how many valid instances (serialised in
schema key order under the whitespace policy) the automaton accepts, how many invalid ones it
rejects, and the median / p90 compile time.

Usage::

    python benchmarks/schema_corpus_report.py [--corpora /work/shared/corpora] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.schema.compiler import compile_json_schema
from tokenfsm.schema.errors import SchemaError, UnsupportedSchema
from tokenfsm.schema.serialize import dumps_in_schema_order


def suite_groups(root: Path):
    for f in sorted(root.glob("*.json")):
        for group in json.loads(f.read_text()):
            yield f.stem, group["schema"], [(t["data"], t["valid"]) for t in group["tests"]]


def maskbench_groups(path: Path, limit: int | None):
    with gzip.open(path, "rt") as fh:
        for i, line in enumerate(fh):
            if limit is not None and i >= limit:
                break
            row = json.loads(line)
            yield path.name.split(".")[0], row["schema"], [(t["data"], t["valid"]) for t in row["tests"]]


def run(groups, whitespace=1, budget=Budget(max_states=50_000, max_seconds=10.0)):
    stats = {"schemas": 0, "compiled": 0, "unsupported": 0, "over_budget": 0, "errors": 0,
             "valid": 0, "valid_accepted": 0, "invalid": 0, "invalid_rejected": 0, "times": []}
    for _, schema, tests in groups:
        stats["schemas"] += 1
        extra = any(valid and _has_undeclared(schema, data) for data, valid in tests)
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cs = compile_json_schema(schema, whitespace=whitespace, allow_extra_keys=extra,
                                         budget=budget)
        except UnsupportedSchema:
            stats["unsupported"] += 1
            continue
        except BudgetExceeded:
            stats["over_budget"] += 1
            continue
        except (SchemaError, RecursionError, ValueError, TypeError):
            stats["errors"] += 1
            continue
        stats["times"].append(time.perf_counter() - t0)
        stats["compiled"] += 1
        for data, valid in tests:
            text = dumps_in_schema_order(data, schema, whitespace)
            ok = cs.accepts(text)
            if valid:
                stats["valid"] += 1
                stats["valid_accepted"] += ok
            else:
                stats["invalid"] += 1
                stats["invalid_rejected"] += not ok
    return stats


def _has_undeclared(schema, data) -> bool:
    if not isinstance(schema, dict) or not isinstance(data, dict):
        return False
    props = schema.get("properties") or {}
    return any(k not in props for k in data) or any(
        _has_undeclared(props.get(k), v) for k, v in data.items())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="/work/shared/corpora")
    ap.add_argument("--limit", type=int, default=None, help="schemas per maskbench subset")
    args = ap.parse_args(argv)
    root = Path(args.corpora)
    subsets = [("JSON-Schema-Test-Suite", suite_groups(root / "json-schema-test-suite"))]
    for p in sorted((root / "maskbench").glob("*.jsonl.gz")):
        subsets.append((p.name.split(".")[0], maskbench_groups(p, args.limit)))
    print(f"{'subset':24} {'schemas':>7} {'compiled':>8} {'unsupp':>6} {'budget':>6} {'errors':>6} "
          f"{'valid acc':>12} {'invalid rej':>12} {'median ms':>9} {'p90 ms':>8}")
    for name, groups in subsets:
        s = run(groups)
        ts = sorted(s["times"]) or [0.0]
        p90 = ts[min(len(ts) - 1, int(0.9 * len(ts)))]
        print(f"{name:24} {s['schemas']:7} {s['compiled']:8} {s['unsupported']:6} {s['over_budget']:6} "
              f"{s['errors']:6} {s['valid_accepted']:5}/{s['valid']:<6} {s['invalid_rejected']:5}/{s['invalid']:<6} "
              f"{1000 * statistics.median(ts):9.1f} {1000 * p90:8.1f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
