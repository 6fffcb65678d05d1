"""Compile every schema of the corpora and check the automaton against the instances.

For each subset (the JSON Schema Test Suite, each maskbench subset) prints how many schemas
compiled, were unsupported, went over budget or failed, how many valid instances (serialised in
schema key order under the whitespace policy, or in their own key order) the automaton accepts,
how many invalid ones it rejects (both orders must be rejected), and the median / p90 compile time.
A schema that is unsatisfiable compiles to the empty language (it rejects every instance).
The schema key order is the compiler's (:func:`tokenfsm.schema.serialize.dumps_in_schema_order`:
merge order of the alternative the instance takes), and a schema is compiled with
``allow_extra_keys`` when some valid instance has keys its alternative does not declare
(:func:`~tokenfsm.schema.serialize.has_undeclared_keys`).

On the test suite it also prints the number of passing tests: the schema compiled in strict mode
and the automaton's verdict on the instance is the suite's (llguidance's published figure on the
same suite is 934 passing with no invalid instance accepted). The suite runs per draft and part:
``suite`` is draft 2020-12's required files (from ``--corpora``), ``suite-optional`` and
``suite-format`` its ``optional/`` and ``optional/format/`` files; ``draft2019-09``, ``draft7``,
``draft6`` and ``draft4`` (with the same ``-optional`` and ``-format`` suffixes) come from
``tests/data/json-schema-test-suite-drafts``. A schema of a draft other than 2020-12 is compiled
with that draft's ``$schema`` when it names none (the suite says the draft by the folder).
``--any-order`` compiles every schema with ``allow_extra_keys=True`` and
``property_order="any"`` (instances in their own key order then need no serialiser).

After the table comes, per subset, the keywords the schemas use that the keyword table
(:mod:`tokenfsm.schema.keywords`) does not know: ignored, as JSON Schema says.

The biggest unsupported and error categories are listed after the table. Schemas run in worker
processes, each with a wall-clock budget (``Budget.max_seconds`` for the compilation, and a hard
alarm a little later); a schema over it counts as "over budget".

Usage::

    python benchmarks/schema_corpus_report.py [--corpora /work/shared/corpora] [--limit N]
        [--seconds 5] [--jobs 2] [--subsets suite,Handwritten] [--failures] [--any-order]

``--failures`` lists, per file (suite) or subset, every group that does not fully pass and why:
unsupported (the keyword and message), over budget, error, invalid accepted (with the test's
description when the suite has one), valid rejected (with the text tried, in schema key order).

``--explain-depth`` compiles each schema again for each valid instance it rejects, with
``max_depth`` raised to the instance's nesting depth (recursive ``$ref`` and unconstrained values
both nest that deep then), and counts the instances accepted so: rejected only because they nest
deeper than ``max_depth`` lets them, which the compiler warns about.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import multiprocessing
import re
import signal
import statistics
import sys
import time
import warnings
from pathlib import Path

from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.schema.compiler import compile_json_schema
from tokenfsm.schema.errors import SchemaError, UnsupportedSchema
from tokenfsm.schema.keywords import KEYWORDS, subschemas
from tokenfsm.schema.serialize import dumps_in_schema_order, has_undeclared_keys

WHITESPACE = 1
EXPLAIN_DEPTH = False  # set by --explain-depth (read in the worker processes)
ANY_ORDER = False  # set by --any-order (read in the worker processes)
MAX_EXPLAIN_DEPTH = 12
DATA = Path(__file__).resolve().parent.parent / "tests/data"
# the suite's remote documents, served at http://localhost:1234/ by the suite's own harness
REMOTES = {"2020-12": DATA / "json-schema-test-suite/remotes",
           "older": DATA / "json-schema-test-suite-drafts/remotes"}
DRAFTS = {"draft2019-09": "https://json-schema.org/draft/2019-09/schema",
          "draft7": "http://json-schema.org/draft-07/schema#",
          "draft6": "http://json-schema.org/draft-06/schema#",
          "draft4": "http://json-schema.org/draft-04/schema#"}
_remotes: dict = {}


def suite_documents(subset: str = "suite") -> dict:
    """The suite's ``remotes/`` as documents by URI (``http://localhost:1234/<path>``)."""
    which = "2020-12" if subset.startswith("suite") else "older"
    if which not in _remotes:
        root = REMOTES[which]
        _remotes[which] = {"http://localhost:1234/" + p.relative_to(root).as_posix():
                           json.loads(p.read_text()) for p in sorted(root.rglob("*.json"))}
    return _remotes[which]


def is_suite(subset: str) -> bool:
    return subset.startswith("suite") or subset.split("-")[0] in ("draft2019", "draft7", "draft6",
                                                                   "draft4")


def suite_groups(root: Path, subset: str = "suite", dialect: str | None = None):
    for f in sorted(root.glob("*.json")):
        for group in json.loads(f.read_text()):
            schema = group["schema"]
            if dialect is not None and isinstance(schema, dict) and "$schema" not in schema:
                schema = {"$schema": dialect, **schema}
            yield (subset, f"{f.stem}: {group['description']}", schema,
                   [(t["data"], t["valid"], t.get("description", "")) for t in group["tests"]])


def suite_subsets(corpora: Path) -> dict:
    """Every suite subset: name -> (folder, dialect to add)."""
    out = {}
    for draft, dialect in [("suite", None)] + list(DRAFTS.items()):
        base = corpora / "json-schema-test-suite" if draft == "suite" else \
            DATA / "json-schema-test-suite-drafts" / draft
        out[draft] = (base, dialect)
        out[draft + "-optional"] = (base / "optional", dialect)
        out[draft + "-format"] = (base / "optional" / "format", dialect)
    return out


def unknown_keywords(schema) -> collections.Counter:
    """Keywords a schema uses (at schema positions) that the keyword table does not know."""
    got: collections.Counter = collections.Counter()
    todo = [schema]
    while todo:
        node = todo.pop()
        if not isinstance(node, dict):
            continue
        for k, v in node.items():
            if k not in KEYWORDS:
                got[k] += 1
            todo.extend(sub for _, sub in subschemas(k, v))
    return got


def maskbench_groups(path: Path, limit: int | None):
    name = path.name.split(".")[0]
    with gzip.open(path, "rt") as fh:
        for i, line in enumerate(fh):
            if limit is not None and i >= limit:
                break
            row = json.loads(line)
            yield name, row.get("name", str(i)), row["schema"], [
                (t["data"], t["valid"], t.get("description", "")) for t in row["tests"]]


class _Alarm(BaseException):
    """The hard per-schema limit (a BaseException, so that no ``except Exception`` swallows it)."""


_armed = False


def _on_alarm(signum, frame):
    if _armed:
        raise _Alarm()


def _texts(data, schema, documents=None) -> list:
    """The instance in schema key order (first) and in its own key order."""
    own = json.dumps(data, ensure_ascii=False, separators=(", ", ": "))
    try:
        return list(dict.fromkeys([dumps_in_schema_order(data, schema, WHITESPACE, documents), own]))
    except (SchemaError, RecursionError, ValueError, TypeError, KeyError):
        return [own]  # a schema the compiler rejects as well


def check(job) -> dict:
    """Compile one schema and judge its instances: a plain dict of outcomes."""
    subset, name, schema, tests, seconds = job
    out = {"subset": subset, "name": name, "status": "compiled", "why": "", "time": None,
           "verdicts": []}
    documents = suite_documents(subset) if is_suite(subset) else None
    extra = ANY_ORDER or any(valid and _has_undeclared(schema, data, documents)
                             for data, valid, _ in tests)
    global _armed
    signal.signal(signal.SIGALRM, _on_alarm)
    _armed = True
    signal.setitimer(signal.ITIMER_REAL, seconds * 1.5 + 1, 0.5)  # repeats until cleared
    t0 = time.perf_counter()
    cs = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs = compile_json_schema(schema, whitespace=WHITESPACE, allow_extra_keys=extra,
                                     budget=Budget(max_states=50_000, max_seconds=seconds),
                                     documents=documents,
                                     property_order="any" if ANY_ORDER else "schema")
    except UnsupportedSchema as e:
        out["status"], out["why"] = "unsupported", f"{e.keyword}: {_shape(e.msg)}"
    except (BudgetExceeded, _Alarm):
        out["status"] = "over_budget"
    except SchemaError as e:
        if "unsatisfiable" in e.msg:
            out["status"] = "empty"  # compiled: the empty language
        else:
            out["status"], out["why"] = "error", f"SchemaError: {_shape(e.msg)}"
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as e:
        out["status"], out["why"] = "error", f"{type(e).__name__}: {_shape(str(e))}"
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
    if out["status"] in ("compiled", "empty"):
        out["time"] = time.perf_counter() - t0
        for data, valid, _ in tests:
            texts = _texts(data, schema, documents)
            ok = cs is not None and any(cs.accepts(t) for t in texts)
            out["verdicts"].append((valid, ok))
            if valid and not ok:
                out.setdefault("texts", {})[len(out["verdicts"]) - 1] = texts[0]
                if EXPLAIN_DEPTH:
                    out.setdefault("deeper", {})[len(out["verdicts"]) - 1] = _accepted_deeper(
                        schema, data, texts, extra, seconds, documents)
    return out


def _nesting(v) -> int:
    if isinstance(v, dict):
        return 1 + max(map(_nesting, v.values()), default=0)
    if isinstance(v, list):
        return 1 + max(map(_nesting, v), default=0)
    return 0


def _accepted_deeper(schema, data, texts, extra, seconds, documents) -> str:
    """"yes" if the schema compiled with ``max_depth`` at the instance's nesting depth accepts
    it, "no" if not, "over budget" if that compilation does not finish in time."""
    depth = _nesting(data)
    if depth > MAX_EXPLAIN_DEPTH:
        return "over budget"
    global _armed
    _armed = True
    signal.setitimer(signal.ITIMER_REAL, 4 * seconds + 1, 0.5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs = compile_json_schema(schema, whitespace=WHITESPACE, allow_extra_keys=extra,
                                     max_depth=max(3, depth), documents=documents,
                                     budget=Budget(max_states=400_000, max_seconds=4 * seconds))
        return "yes" if any(cs.accepts(t) for t in texts) else "no"
    except (BudgetExceeded, _Alarm):
        return "over budget"
    except (UnsupportedSchema, SchemaError):
        return "no"
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)


def _shape(msg: str) -> str:
    """An error message with its particulars (quoted names, numbers) blanked, for grouping."""
    msg = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", msg)
    return re.sub(r"\d+", "N", msg.split(" (at ")[0])[:90]


def _has_undeclared(schema, data, documents=None) -> bool:
    """Whether the instance has keys the schema does not declare (the compiler then needs
    ``allow_extra_keys``), in the alternative of the schema the instance takes."""
    try:
        return has_undeclared_keys(data, schema, documents)
    except (SchemaError, RecursionError, ValueError, TypeError, KeyError):
        return False


def summarise(rows: list) -> dict:
    s = collections.Counter(r["status"] for r in rows)
    times = sorted(r["time"] for r in rows if r["time"] is not None) or [0.0]
    verdicts = [v for r in rows for v in r["verdicts"]]
    return {
        "schemas": len(rows), "compiled": s["compiled"] + s["empty"], "unsupported": s["unsupported"],
        "over_budget": s["over_budget"], "errors": s["error"],
        "valid": sum(valid for valid, _ in verdicts),
        "valid_accepted": sum(valid and ok for valid, ok in verdicts),
        "invalid": sum(not valid for valid, _ in verdicts),
        "invalid_rejected": sum(not valid and not ok for valid, ok in verdicts),
        "passing": sum(valid == ok for valid, ok in verdicts),
        "tests": sum(len(r["tests"]) for r in rows),
        "median": statistics.median(times), "p90": times[min(len(times) - 1, int(0.9 * len(times)))],
    }


def print_failures(rows: list) -> None:
    """Every group that does not fully pass, by subset, with the reason and the tests lost."""
    print("\nfailing groups (tests lost: reason):")
    for subset in dict.fromkeys(r["subset"] for r in rows):
        for r in rows:
            if r["subset"] != subset:
                continue
            n = len(r["tests"])
            if r["status"] not in ("compiled", "empty"):
                why = r["status"] + (f" {r['why']}" if r["why"] else "")
                print(f"  {subset}/{r['name']}  [{n}]: {why}")
                continue
            bad = [(i, t, ok) for i, (t, (valid, ok)) in enumerate(zip(r["tests"], r["verdicts"]))
                   if valid != ok]
            if not bad:
                continue
            print(f"  {subset}/{r['name']}  [{len(bad)}]:")
            for i, (data, valid, desc), ok in bad:
                kind = "INVALID ACCEPTED" if ok else "valid rejected"
                text = r.get("texts", {}).get(i) or json.dumps(data, ensure_ascii=False)
                print(f"      {kind}: {desc} {text[:160]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="/work/shared/corpora")
    ap.add_argument("--limit", type=int, default=None, help="schemas per maskbench subset")
    ap.add_argument("--seconds", type=float, default=5.0, help="compile budget per schema")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--categories", type=int, default=8, help="unsupported/error categories shown")
    ap.add_argument("--subsets", default=None,
                    help="comma-separated subsets to run (suite, Handwritten, ...); default all")
    ap.add_argument("--failures", action="store_true",
                    help="list every group that does not fully pass, and why")
    ap.add_argument("--explain-depth", action="store_true",
                    help="recompile with max_depth at each rejected valid instance's nesting depth")
    ap.add_argument("--any-order", action="store_true",
                    help="compile with allow_extra_keys=True and property_order='any'")
    args = ap.parse_args(argv)
    global EXPLAIN_DEPTH, ANY_ORDER
    EXPLAIN_DEPTH = args.explain_depth
    ANY_ORDER = args.any_order
    root = Path(args.corpora)
    wanted = None if args.subsets is None else set(args.subsets.split(","))
    jobs = []
    for name, (folder, dialect) in suite_subsets(root).items():
        if (wanted is None and name == "suite") or (wanted is not None and name in wanted):
            jobs += list(suite_groups(folder, name, dialect))
    for p in sorted((root / "maskbench").glob("*.jsonl.gz")):
        if wanted is None or p.name.split(".")[0] in wanted:
            jobs += list(maskbench_groups(p, args.limit))
    order = list(dict.fromkeys(j[0] for j in jobs))
    t0 = time.perf_counter()
    with multiprocessing.Pool(args.jobs, maxtasksperchild=200) as pool:
        rows = []
        for row in pool.imap(check, [(*j, args.seconds) for j in jobs], chunksize=4):
            rows.append(row)
            if len(rows) % 500 == 0:
                print(f"{len(rows)} schemas, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    for row, job in zip(rows, jobs):
        row["tests"] = job[3]
    print(f"{'subset':24} {'schemas':>7} {'compiled':>8} {'unsupp':>6} {'budget':>6} {'errors':>6} "
          f"{'valid acc':>12} {'invalid rej':>12} {'median ms':>9} {'p90 ms':>8}")
    for name in order:
        s = summarise([r for r in rows if r["subset"] == name])
        label = "JSON-Schema-Test-Suite" if name == "suite" else name
        if is_suite(name) and name != "suite":
            label = "suite " + name.replace("suite-", "2020-12-")
        print(f"{label:24} {s['schemas']:7} {s['compiled']:8} {s['unsupported']:6} {s['over_budget']:6} "
              f"{s['errors']:6} {s['valid_accepted']:5}/{s['valid']:<6} "
              f"{s['invalid_rejected']:5}/{s['invalid']:<6} {1000 * s['median']:9.1f} {1000 * s['p90']:8.1f}")
    for name in order:
        if not is_suite(name):
            continue
        suite = summarise([r for r in rows if r["subset"] == name])
        label = "JSON Schema Test Suite" if name == "suite" else f"suite {name}"
        print(f"\n{label}: {suite['passing']} of {suite['tests']} tests pass "
              f"(compiled in strict mode, verdict right); invalid accepted: "
              f"{suite['invalid'] - suite['invalid_rejected']}; valid rejected: "
              f"{suite['valid'] - suite['valid_accepted']}"
              + (" (llguidance: 934 passing, 0 invalid accepted)" if name == "suite" else ""))
    unknown = collections.defaultdict(collections.Counter)
    for job in jobs:
        unknown[job[0]].update(unknown_keywords(job[2]))
    print("\nkeywords the keyword table does not know (ignored), by subset:")
    for name in order:
        if unknown[name]:
            top = ", ".join(f"{k} ({n})" for k, n in unknown[name].most_common(args.categories))
            print(f"  {name:22} {top}")
    if args.explain_depth:
        print("\nvalid instances rejected, compiled again with max_depth at the instance's nesting "
              "depth: accepted then / still rejected / over budget")
        for name in order:
            got = collections.Counter(v for r in rows if r["subset"] == name
                                      for v in r.get("deeper", {}).values())
            if got:
                print(f"  {name:22} {got['yes']:5} / {got['no']:5} / {got['over budget']:5}")
        for r in rows:
            for i, v in r.get("deeper", {}).items():
                if v == "no" and args.failures:
                    print(f"    still rejected: {r['subset']}/{r['name']} #{i}: {r['texts'][i][:150]}")
    wrong = [(r["subset"], r["name"]) for r in rows if any(not v and ok for v, ok in r["verdicts"])]
    if wrong:
        print("schemas accepting an invalid instance:", ", ".join(f"{a}/{b}" for a, b in wrong))
    if args.failures:
        print_failures(rows)
    for status in ("unsupported", "error"):
        cats = collections.Counter(r["why"] for r in rows if r["status"] == status)
        if cats:
            print(f"\n{status} (top {args.categories}):")
            for why, n in cats.most_common(args.categories):
                print(f"  {n:5}  {why}")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s over {len(rows)} schemas")


if __name__ == "__main__":
    sys.exit(main())
