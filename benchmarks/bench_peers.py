"""tokenfsm next to outlines-core, xgrammar and llguidance: same schemas, same vocabulary, one run.

Run in an environment that has the peers (the ``bench`` extra)::

    python benchmarks/bench_peers.py [--quick] [--schemas N] [--vocab qwen|llama3|both]
                                     [--cross-check] [--bitmask-layout] [--no-compile-cost]
                                     [--recursive]

What it measures, per schema and overall (medians of repeated runs; the machine may be noisy):

* build: schema to a ready index. Ours is ``compile_json_schema(whitespace=0)`` plus
  ``TokenIndex.build`` with the vocabulary's token trie already built; the one-off per-vocabulary
  work (our vocabulary and trie, the peers' tokenizer objects) is reported on its own line.
* mask: per token of a replayed document (the schema's first valid corpus instance, compact, keys in
  schema order, tokenised by the real tokenizer: tiktoken for Qwen, ``tokenizers`` for Llama-3),
  the time of fill-bitmask + advance; median and p90.
* memory: the index's bytes where the engine reports them, and the peak RSS of each engine's own
  process after setup, after the builds and after the replays (every engine runs in a subprocess).
* Numba: the first index build in a fresh process with an empty cache, then with the cache warm.
* ``--cross-check``: the same documents through ours and each peer, the masks compared at every
  step; each difference is classified by completing the text with the engine that allows the token
  and validating the result with ``jsonschema`` (see :func:`classify`). The cross-check runs the
  peers in this process, with no timeout: ``--cross-skip`` names (peer, schema) pairs left out
  (default ``outlines-core:fc/create_event``, whose index build runs for tens of minutes).
* ``--bitmask-layout``: our bitmask applied with xgrammar's (and outlines-core's, llguidance's)
  ``apply_token_bitmask_inplace`` and with ours, on the same logits; the results must be identical.

``--recursive`` replaces the schema selection with recursive Kubernetes schemas (``JSONSchemaProps``)
that ours compiles on the stack route (``CompiledSchema.recursive`` set; a ``PushdownIndex`` whose
rows are made per stack configuration on first need and cached): ours' replays are reported as the
first one (rows cold) and the later ones (rows warm); "build" for ours is compile + byte form +
``PushdownIndex`` construction (no row yet), its memory the automaton's arrays, and the rows cached
after the replays are reported beside.

Peers that are missing are skipped with the reason. Engines are run one at a time in subprocesses
with a per-schema time limit; a schema that goes over it is reported as a timeout for that engine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _peers  # noqa: E402

CORPORA = os.environ.get("TOKENFSM_CORPORA", "/work/shared/corpora")

#: Hand-written function-calling schemas with one argument document each.
FUNCTION_CALLING = [
    ("fc/get_weather", {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and country, e.g. Paris, France"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
        },
        "required": ["location", "unit"],
        "additionalProperties": False,
    }, {"location": "San Francisco, CA", "unit": "fahrenheit", "days": 3}),
    ("fc/search_flights", {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "date": {"type": "string", "format": "date"},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
            "cabin": {"enum": ["economy", "premium", "business", "first"]},
            "nonstop": {"type": "boolean"},
            "max_price": {"type": "number", "minimum": 0},
        },
        "required": ["origin", "destination", "date"],
        "additionalProperties": False,
    }, {"origin": "SFO", "destination": "JFK", "date": "2025-07-14", "passengers": 2,
        "cabin": "economy", "nonstop": True, "max_price": 450.5}),
    ("fc/create_event", {
        "type": "object",
        "properties": {
            "name": {"const": "create_event"},
            "arguments": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "minLength": 1, "maxLength": 80},
                    "start": {"type": "string", "format": "date-time"},
                    "duration_minutes": {"type": "integer", "minimum": 5, "maximum": 480},
                    "attendees": {"type": "array", "items": {"type": "string", "format": "email"},
                                  "maxItems": 8},
                    "location": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "reminders": {"type": "array", "items": {
                        "type": "object",
                        "properties": {"method": {"enum": ["email", "popup"]},
                                       "minutes": {"type": "integer", "minimum": 0}},
                        "required": ["method", "minutes"], "additionalProperties": False}},
                },
                "required": ["title", "start"],
                "additionalProperties": False,
            },
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }, {"name": "create_event", "arguments": {
        "title": "Quarterly planning", "start": "2025-03-04T09:30:00Z", "duration_minutes": 90,
        "attendees": ["ana@example.com", "bo@example.org"], "location": None,
        "reminders": [{"method": "popup", "minutes": 10}]}}),
]


# =============================================================================================
# schema selection (a fixed, deterministic set)
# =============================================================================================
def _has_undeclared(schema, data) -> bool:
    if not isinstance(schema, dict):
        return False
    if isinstance(data, dict):
        props = schema.get("properties") or {}
        return any(k not in props for k in data) or any(
            _has_undeclared(props.get(k), v) for k, v in data.items())
    if isinstance(data, list) and isinstance(schema.get("items"), dict):
        return any(_has_undeclared(schema["items"], v) for v in data)
    return False


def _document(cs, schema, data) -> str | None:
    if _has_undeclared(schema, data):
        return None
    text = _peers.dumps_compact(data, schema)
    return text if cs.accepts(text) else None


#: maskbench Kubernetes rows whose schemas recurse through ``JSONSchemaProps`` (unrolled: 210k-333k
#: states); ours takes the stack route on them.
RECURSIVE_KUBERNETES = (190, 191, 192, 197, 202, 203, 209, 210, 494, 496)


def _has_undeclared_ref(schema, data, root) -> bool:
    """:func:`_has_undeclared` through ``$ref`` (and ``allOf``; keys an ``additionalProperties``
    schema admits count as declared; under ``anyOf``/``oneOf``, undeclared for every branch)."""
    schema = _peers._follow(schema, root)
    alts = (schema.get("anyOf") or []) + (schema.get("oneOf") or [])
    if alts and all(_has_undeclared_ref(a, data, root) for a in alts):
        return True
    if isinstance(data, dict):
        props = dict(schema.get("properties") or {})
        for sub in schema.get("allOf") or []:
            props.update(_peers._follow(sub, root).get("properties") or {})
        extra = schema.get("additionalProperties")
        for k, v in data.items():
            if k in props:
                if _has_undeclared_ref(props[k], v, root):
                    return True
            elif isinstance(extra, dict):
                if _has_undeclared_ref(extra, v, root):
                    return True
            elif not alts:
                return True
        return False
    if isinstance(data, list) and isinstance(schema.get("items"), dict):
        return any(_has_undeclared_ref(schema["items"], v, root) for v in data)
    return False


def select_recursive(log, limit: int = 8) -> list[dict]:
    """The :data:`RECURSIVE_KUBERNETES` rows, in that order, that ours compiles on the stack route
    and whose first valid instance (compact, keys in schema order, no undeclared key) it accepts;
    at most ``limit``."""
    import re

    from tokenfsm.schema import compile_json_schema

    path = os.path.join(CORPORA, "maskbench", "Kubernetes.jsonl.gz")
    if not os.path.exists(path):
        log(f"# Kubernetes: {path} missing, no recursive schemas")
        return []
    rows = {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            row = json.loads(line)
            m = re.fullmatch(r"Kubernetes---kb_(\d+)_Normalized", str(row.get("name")))
            if m and int(m.group(1)) in RECURSIVE_KUBERNETES:
                rows[int(m.group(1))] = row
    picked = []
    for kb in RECURSIVE_KUBERNETES:
        if len(picked) >= limit:
            break
        row = rows.get(kb)
        if row is None:
            log(f"# kb_{kb}: not in the corpus")
            continue
        schema = row["schema"]
        first = next((t["data"] for t in row["tests"] if t["valid"]), None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs = compile_json_schema(schema, whitespace=0)
        if cs.recursive is None:
            log(f"# kb_{kb}: not on the stack route, skipped")
            continue
        if first is None or _has_undeclared_ref(schema, first, schema):
            log(f"# kb_{kb}: first valid instance has undeclared keys, skipped")
            continue
        doc = _peers.dumps_compact(first, schema)
        if not cs.accepts(doc):
            log(f"# kb_{kb}: ours rejects the first valid instance, skipped")
            continue
        picked.append(dict(name=f"kube/kb_{kb}", schema=schema, doc=doc))
    return picked


#: a small recursive schema compiled on the stack route to load the stack kernels before timing
_PUSHDOWN_WARMUP = {"type": "object", "properties": {
    "c": {"type": "array", "items": {"$ref": "#"}}, "v": {"type": "integer"}}, "required": ["v"]}


def select_schemas(n: int, quick: bool, log) -> list[dict]:
    """Function-calling schemas first, then maskbench samples (Kubernetes, Glaive, Github_easy) that
    ours compiles within a budget and whose first usable valid instance it accepts."""
    from tokenfsm.automata import Budget
    from tokenfsm.schema import compile_json_schema

    budget = Budget(max_states=50_000, max_seconds=4.0)
    picked = []
    for name, schema, data in FUNCTION_CALLING[: 1 if quick else 3]:
        cs = compile_json_schema(schema, whitespace=0)
        doc = _document(cs, schema, data)
        assert doc is not None, name
        picked.append(dict(name=name, schema=schema, doc=doc))
    rest = max(0, n - len(picked))
    subsets = ["Kubernetes", "Glaiveai2K", "Github_easy"]
    want = {s: rest // 3 + (1 if i < rest % 3 else 0) for i, s in enumerate(subsets)}
    if quick:
        want = {"Kubernetes": 1, "Glaiveai2K": 1, "Github_easy": 0}
    for subset in subsets:
        path = os.path.join(CORPORA, "maskbench", f"{subset}.jsonl.gz")
        if not want[subset]:
            continue
        if not os.path.exists(path):
            log(f"# {subset}: {path} missing, skipped")
            continue
        got = 0
        with gzip.open(path, "rt") as fh:
            for row_no, line in enumerate(fh):
                if got >= want[subset] or row_no >= 60:
                    break
                row = json.loads(line)
                schema = row["schema"]
                if len(json.dumps(schema)) > 30_000:
                    continue
                # every engine must be able to read the schema; keep to the common keyword core
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        cs = compile_json_schema(schema, whitespace=0, budget=budget)
                except Exception:  # noqa: BLE001 - unsupported / over budget: not this one
                    continue
                doc = None
                for t in row["tests"]:
                    if t["valid"]:
                        doc = _document(cs, schema, t["data"])
                        if doc is not None and len(doc) >= 20:
                            break
                        doc = None
                if doc is None:
                    continue
                picked.append(dict(name=f"{subset[:4].lower()}/{row_no}", schema=schema, doc=doc))
                got += 1
    return picked


# =============================================================================================
# worker: one engine, one vocabulary, in its own process
# =============================================================================================
def _emit(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def worker(engine_name: str, job_path: str, skip: set[int]) -> None:
    with open(job_path) as fh:
        job = json.load(fh)
    repeats, replays = job["repeats"], job["replays"]
    rss0 = _peers.peak_rss_mb()
    t0 = time.perf_counter()
    try:
        eng = _peers.make_engine(engine_name)
        eng.setup(job["vocab"])
    except _peers.EngineUnavailable as e:
        _emit(dict(event="unavailable", reason=str(e)))
        return
    setup_s = time.perf_counter() - t0
    # warm-up on a trivial schema: JIT / lazy initialisation is not part of any build time
    for _ in range(2):
        h = eng.build({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})
        m = eng.matcher(h)
        bm = _peers.new_bitmask(m, eng.size)
        m.fill(bm)
    if job.get("recursive") and engine_name == "tokenfsm":
        from tokenfsm.schema import compile_json_schema

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs = compile_json_schema(_PUSHDOWN_WARMUP, whitespace=0, recursion="stack")
        m = eng.matcher(eng.index(cs))
        bm = _peers.new_bitmask(m, eng.size)
        for ch in '{"c":[{"v":1}],"v":2}':
            m.fill(bm)
            m.m.accept_string(ch)
        m.fill(bm)
    _emit(dict(event="setup", setup_s=setup_s, rss_start=rss0, rss_setup=_peers.peak_rss_mb()))
    handles = {}
    for i, item in enumerate(job["schemas"]):
        if i in skip:
            continue
        _emit(dict(event="start", phase="build", i=i))
        times, parts = [], []
        try:
            for r in range(repeats):
                if engine_name == "tokenfsm":
                    a = time.perf_counter()
                    cs = eng.compile(item["schema"])
                    b = time.perf_counter()
                    h = eng.index(cs)
                    c = time.perf_counter()
                    parts.append((b - a, c - b))
                    times.append(c - a)
                else:
                    a = time.perf_counter()
                    h = eng.build(item["schema"])
                    times.append(time.perf_counter() - a)
                if times[-1] > 2.0:  # slow builds are not repeated
                    break
            handles[i] = h
            out = dict(event="build", i=i, times=times, memory=eng.memory(h))
            if parts:
                out["compile_s"] = [p[0] for p in parts]
                out["index_s"] = [p[1] for p in parts]
                out["states"] = int(h.num_states)
                if _peers.is_pushdown(h):
                    out["rows"] = int(h.num_cached_rows)
                    out["pushdown"] = True
                else:
                    out["rows"] = int(h.mask_rows.shape[0])
            _emit(out)
        except Exception as e:  # noqa: BLE001 - reported per schema
            _emit(dict(event="build", i=i, error=f"{type(e).__name__}: {str(e)[:200]}"))
    _emit(dict(event="phase", rss_build=_peers.peak_rss_mb()))
    for i, item in enumerate(job["schemas"]):
        if i not in handles:
            continue
        _emit(dict(event="start", phase="replay", i=i))
        tokens = item["tokens"]
        steps: list[int] = []
        runs: list[int] = []
        rejected_at = None
        eos_ok = None
        try:
            for r in range(replays):
                m = eng.matcher(handles[i])
                bm = _peers.new_bitmask(m, eng.size)
                fill, advance = m.fill, m.advance
                pc = time.perf_counter_ns
                run = []
                for k, tok in enumerate(tokens):
                    a = pc()
                    fill(bm)
                    ok = advance(tok)
                    run.append(pc() - a)
                    if not ok:
                        rejected_at = k
                        break
                fill(bm)
                words = _peers.as_numpy(bm)[0]
                eos_ok = all((int(words[e // 32]) >> (e % 32)) & 1 for e in eng.eos) if rejected_at is None else False
                steps.extend(run)
                runs.append(len(run))
                if rejected_at is not None:
                    break
            out = dict(event="replay", i=i, steps_ns=steps, rejected_at=rejected_at, eos_ok=eos_ok,
                       n_tokens=len(tokens))
            if job.get("recursive"):
                out["runs"] = runs  # steps per replay, in order: the first one is the cold one
                if engine_name == "tokenfsm" and _peers.is_pushdown(handles[i]):
                    out["pushdown"] = _peers.pushdown_rows(handles[i])
            _emit(out)
        except Exception as e:  # noqa: BLE001
            _emit(dict(event="replay", i=i, error=f"{type(e).__name__}: {str(e)[:200]}"))
    _emit(dict(event="done", rss_replay=_peers.peak_rss_mb()))


def run_engine(engine: str, job_path: str, n_schemas: int, timeout: float, log) -> dict:
    """Run one engine's worker, restarting it past any schema that goes over ``timeout``."""
    import queue
    import threading

    res = dict(builds={}, replays={}, timeouts=set())
    skip: set[int] = set()
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", engine, "--job", job_path,
               "--skip", ",".join(map(str, sorted(skip)))]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        q: "queue.Queue" = queue.Queue()

        def pump():
            for line in p.stdout:
                q.put(line)
            q.put(None)

        threading.Thread(target=pump, daemon=True).start()
        current = None
        limit = timeout * 3 + 120  # setup (tokenizers) may take a while
        finished = False
        while True:
            try:
                line = q.get(timeout=limit)
            except queue.Empty:
                p.kill()
                p.wait()
                break
            if line is None:
                finished = True
                break
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            kind = ev["event"]
            limit = timeout
            if kind == "unavailable":
                res["unavailable"] = ev["reason"]
            elif kind == "setup":
                res.setdefault("setup", ev)
            elif kind == "start":
                current = (ev["phase"], ev["i"])
            elif kind == "build":
                res["builds"][ev["i"]] = ev
                current = None
            elif kind == "replay":
                res["replays"][ev["i"]] = ev
                current = None
            elif kind == "phase":
                res["rss_build"] = max(res.get("rss_build", 0), ev["rss_build"])
            elif kind == "done":
                res["rss_replay"] = max(res.get("rss_replay", 0), ev["rss_replay"])
        p.wait()
        if finished and current is None:
            if p.returncode not in (0, None) and "setup" not in res and "unavailable" not in res:
                res["unavailable"] = f"worker failed: {p.stderr.read()[-300:]}"
            break
        if current is None:  # died or hung outside a schema
            res.setdefault("unavailable", f"worker stopped (rc={p.returncode}): {p.stderr.read()[-300:]}")
            break
        phase, i = current
        log(f"#   {engine}: schema {i} {'timed out' if not finished else 'crashed'} in {phase}")
        res["timeouts"].add(i)
        skip.add(i)
        if len(skip) >= n_schemas:
            break
    return res


# =============================================================================================
# report
# =============================================================================================
def _med(xs):
    return statistics.median(xs) if xs else float("nan")


def _p90(xs):
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(math.ceil(0.9 * len(s))) - 1)]


def _fmt_ms(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x * 1e3:.1f}" if x < 10 else f"{x:.1f}s"


def _fmt_us(x):
    return "-" if x is None or math.isnan(x) else f"{x / 1e3:.2f}"


def _fmt_bytes(x):
    if x is None:
        return "n/a"
    return f"{x / 1e6:.2f}MB" if x >= 1e5 else f"{x / 1e3:.1f}kB"


def report(vocab: str, schemas: list[dict], results: dict, engines: list[str],
           recursive: bool = False) -> dict:
    print(f"\n=== vocabulary {vocab} ===")
    avail = [e for e in engines if "unavailable" not in results[e]]
    for e in engines:
        r = results[e]
        if "unavailable" in r:
            print(f"  {e}: skipped ({r['unavailable']})")
        elif "setup" in r:
            s = r["setup"]
            print(f"  {e}: one-off vocabulary/tokenizer setup {s['setup_s']:.2f}s; peak RSS "
                  f"setup {s['rss_setup']:.0f}MB, after builds {r.get('rss_build', float('nan')):.0f}MB, "
                  f"after replays {r.get('rss_replay', float('nan')):.0f}MB")
    # --- build table
    print("\nbuild, schema -> ready index (median ms; ours split compile+index; 'T/O' timeout, "
          "'ERR' unsupported/failed)")
    head = f"{'schema':18} {'toks':>5} {'ours':>8} {'=comp':>7} {'+index':>7} {'states':>6}"
    for e in avail[1:]:
        head += f" {e[:12]:>12}"
    print(head)
    summary = {e: dict(build=[], steps=[], mem=[]) for e in avail}
    ratio_oc, ratio_xg = [], []

    def cell(e, i, kind):
        r = results[e]
        if i in r["timeouts"]:
            return "T/O"
        d = r[kind].get(i)
        if d is None:
            return "-"
        if "error" in d:
            return "ERR"
        return None

    for i, item in enumerate(schemas):
        line = f"{item['name'][:18]:18} {len(item['tokens']):5}"
        ours_t = None
        if "tokenfsm" in avail:
            c = cell("tokenfsm", i, "builds")
            if c:
                line += f" {c:>8} {'':>7} {'':>7} {'':>6}"
            else:
                d = results["tokenfsm"]["builds"][i]
                ours_t = _med(d["times"])
                summary["tokenfsm"]["build"].append(ours_t)
                summary["tokenfsm"]["mem"].append(d["memory"])
                line += (f" {_fmt_ms(ours_t):>8} {_fmt_ms(_med(d['compile_s'])):>7} "
                         f"{_fmt_ms(_med(d['index_s'])):>7} {d['states']:6}")
        for e in avail[1:]:
            c = cell(e, i, "builds")
            if c:
                line += f" {c:>12}"
                continue
            t = _med(results[e]["builds"][i]["times"])
            summary[e]["build"].append(t)
            summary[e]["mem"].append(results[e]["builds"][i]["memory"])
            line += f" {_fmt_ms(t):>12}"
            if ours_t is not None and e == "outlines-core":
                ratio_oc.append(ours_t / t)
            if ours_t is not None and e == "xgrammar":
                ratio_xg.append(ours_t / t)
        print(line)
    line = f"{'median':18} {'':5}"
    for e in avail:
        line += f" {_fmt_ms(_med(summary[e]['build'])):>{8 if e == 'tokenfsm' else 12}}"
        if e == "tokenfsm":
            line += f" {'':>7} {'':>7} {'':>6}"
    print(line)
    if recursive:
        errors = {}
        for e in avail:
            for i in sorted(results[e]["builds"]):
                d = results[e]["builds"][i]
                if "error" in d:
                    errors.setdefault((e, d["error"][:160]), []).append(schemas[i]["name"])
        for (e, msg), names in errors.items():
            print(f"  ERR {e} on {', '.join(names)}: {msg}")
        _recursive_masks(schemas, results, avail, summary, cell)
    else:
        # --- mask table
        print("\nper-token fill bitmask + advance over the replayed document (us: median / p90; "
              "'rej@k' = the engine rejected document token k)")
        head = f"{'schema':18} {'toks':>5}" + "".join(f" {e[:15]:>15}" for e in avail)
        print(head)
        for i, item in enumerate(schemas):
            line = f"{item['name'][:18]:18} {len(item['tokens']):5}"
            for e in avail:
                c = cell(e, i, "replays")
                if c:
                    line += f" {c:>15}"
                    continue
                d = results[e]["replays"][i]
                summary[e]["steps"].extend(d["steps_ns"])
                txt = f"{_fmt_us(_med(d['steps_ns']))}/{_fmt_us(_p90(d['steps_ns']))}"
                if d["rejected_at"] is not None:
                    txt = f"rej@{d['rejected_at']} " + txt
                elif not d["eos_ok"]:
                    txt = "noEOS " + txt
                line += f" {txt:>15}"
            print(line)
        line = f"{'all steps':18} {'':5}"
        for e in avail:
            s = summary[e]["steps"]
            line += f" {_fmt_us(_med(s)) + '/' + _fmt_us(_p90(s)):>15}"
        print(line)
        # --- memory
        print("\nindex memory (median over schemas; ours index.nbytes, xgrammar memory_size_bytes; "
              "others do not report it)")
        print("  " + "  ".join(f"{e}={_fmt_bytes(_med([m for m in summary[e]['mem'] if m is not None]) if any(m is not None for m in summary[e]['mem']) else None)}" for e in avail))
    # --- goals
    print("\ngoals")
    if ratio_oc:
        r = _med(ratio_oc)
        print(f"  build <= 1/10 of outlines-core: ours/outlines median ratio {r:.3f} "
              f"(max {max(ratio_oc):.3f}) over {len(ratio_oc)} schemas -> {'MET' if r <= 0.1 else 'MISSED'}")
    if ratio_xg:
        r = _med(ratio_xg)
        print(f"  build below xgrammar compile: ours/xgrammar median ratio {r:.3f} over {len(ratio_xg)} "
              f"schemas ({sum(x < 1 for x in ratio_xg)} below) -> {'MET' if r < 1 else 'MISSED'}")
    if "tokenfsm" in avail and summary["tokenfsm"]["steps"]:
        ours = _med(summary["tokenfsm"]["steps"])
        if recursive:
            print(f"  (ours: warm replays; the first, cold replay's median is "
                  f"{_fmt_us(_med(summary['tokenfsm']['cold']))}us)")
        peers = {e: _med(summary[e]["steps"]) for e in avail[1:] if summary[e]["steps"]}
        below = all(ours < v for v in peers.values())
        print(f"  mask median <= 2us and below every peer: ours {ours / 1e3:.2f}us; "
              + ", ".join(f"{e} {v / 1e3:.2f}us" for e, v in peers.items())
              + f" -> {'MET' if ours <= 2000 and below else 'MISSED'}")
    return summary


def _recursive_masks(schemas, results, avail, summary, cell) -> None:
    """The mask and memory tables of ``--recursive``: ours' first replay (rows made as the
    configurations are met) apart from the later ones (rows from the cache); peers over all."""
    print("\nper-token fill bitmask + advance over the replayed document (us: median / p90; "
          "'rej@k' = the engine rejected document token k)")
    print("  ours cold = first replay on a fresh PushdownIndex (rows made on first need; the "
          "vocabulary's shared string-body walks may be warm from earlier schemas in this process);\n"
          "  ours warm = the later replays (rows cached); 'cold ms' = the whole first replay; "
          "'rows' = rows cached after the replays / made")
    head = (f"{'schema':18} {'toks':>5} {'ours cold':>15} {'cold ms':>8} {'ours warm':>15} {'rows':>9}"
            + "".join(f" {e[:15]:>15}" for e in avail if e != "tokenfsm"))
    print(head)
    summary.setdefault("tokenfsm", {}).setdefault("cold", [])
    rows_bytes = []

    def mark(d, txt):
        if d["rejected_at"] is not None:
            return f"rej@{d['rejected_at']} " + txt
        if not d["eos_ok"]:
            return "noEOS " + txt
        return txt

    for i, item in enumerate(schemas):
        line = f"{item['name'][:18]:18} {len(item['tokens']):5}"
        for e in avail:
            c = cell(e, i, "replays")
            if e == "tokenfsm":
                if c:
                    line += f" {c:>15} {'':>8} {'':>15} {'':>9}"
                    continue
                d = results[e]["replays"][i]
                runs = d.get("runs") or [len(d["steps_ns"])]
                cold, warm = d["steps_ns"][: runs[0]], d["steps_ns"][runs[0]:]
                summary[e]["cold"].extend(cold)
                summary[e]["steps"].extend(warm)
                pd = d.get("pushdown") or {}
                if pd:
                    rows_bytes.append(pd["row_bytes"])
                line += (f" {mark(d, _fmt_us(_med(cold)) + '/' + _fmt_us(_p90(cold))):>15}"
                         f" {sum(cold) / 1e6:8.1f}"
                         f" {_fmt_us(_med(warm)) + '/' + _fmt_us(_p90(warm)) if warm else '-':>15}"
                         f" {str(pd.get('rows', '-')) + '/' + str(pd.get('made', '-')):>9}")
                continue
            if c:
                line += f" {c:>15}"
                continue
            d = results[e]["replays"][i]
            summary[e]["steps"].extend(d["steps_ns"])
            line += f" {mark(d, _fmt_us(_med(d['steps_ns'])) + '/' + _fmt_us(_p90(d['steps_ns']))):>15}"
        print(line)
    line = f"{'1st replay / rest':18} {'':5}"
    for e in avail:  # every engine's first replay apart from its later ones, medians
        if e == "tokenfsm":
            line += f" {'':>15} {'':>8} {'':>15} {'':>9}"
            continue
        firsts, rest = [], []
        for i in range(len(schemas)):
            d = results[e]["replays"].get(i)
            if d is None or "error" in d or i in results[e]["timeouts"]:
                continue
            k = (d.get("runs") or [len(d["steps_ns"])])[0]
            firsts += d["steps_ns"][:k]
            rest += d["steps_ns"][k:]
        line += f" {_fmt_us(_med(firsts)) + '/' + _fmt_us(_med(rest)):>15}"
    all_line = line
    line = f"{'all steps':18} {'':5}"
    for e in avail:
        if e == "tokenfsm":
            c, w = summary[e]["cold"], summary[e]["steps"]
            line += (f" {_fmt_us(_med(c)) + '/' + _fmt_us(_p90(c)):>15} {sum(c) / 1e6:8.1f}"
                     f" {_fmt_us(_med(w)) + '/' + _fmt_us(_p90(w)):>15} {'':>9}")
        else:
            s = summary[e]["steps"]
            line += f" {_fmt_us(_med(s)) + '/' + _fmt_us(_p90(s)):>15}"
    print(line)
    print(all_line + "   (peers: median of the first replay / of the later ones)")
    print("\nindex memory (median over schemas). ours: a PushdownIndex has no precomputed rows "
          "(no index.nbytes): its automaton's arrays\n  (byte table + call edges) at build, and "
          "the mask rows it has cached after the replays; xgrammar memory_size_bytes; others do "
          "not report it")
    parts = []
    for e in avail:
        mems = [m for m in summary[e]["mem"] if m is not None]
        txt = _fmt_bytes(_med(mems)) if mems else _fmt_bytes(None)
        if e == "tokenfsm":
            txt = f"automaton {txt}, rows cached {_fmt_bytes(_med(rows_bytes)) if rows_bytes else 'n/a'}"
        parts.append(f"{e}={txt}")
    print("  " + "  ".join(parts))


# =============================================================================================
# numba compile cost
# =============================================================================================
def compile_cost() -> None:
    code = (
        "import time; t0=time.perf_counter();"
        "from tokenfsm.masks import Vocabulary, TokenIndex, Matcher, allocate_token_bitmask;"
        "from tokenfsm.schema import compile_json_schema;"
        "v=Vocabulary([b'{',b'}',b'\"a\"',b':',b'1',b'2',b'\"',b'a',None], eos_token_ids=[8]);"
        "cs=compile_json_schema({'type':'object','properties':{'a':{'type':'integer'}},'required':['a']}, whitespace=0);"
        "t1=time.perf_counter();"
        "ix=TokenIndex.build(cs, v, strategy='bytes'); TokenIndex.build(cs, v, strategy='classes');"
        "m=Matcher(ix); bm=allocate_token_bitmask(1, v.size); m.fill_next_token_bitmask(bm); m.accept_string('{');"
        "print(f'{t1-t0:.2f} {time.perf_counter()-t1:.2f}')"
    )
    print("\nNumba first-call cost (tiny vocabulary; imports+schema compile, then first builds+fill)")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        for label in ("cold, empty NUMBA_CACHE_DIR", "cache warm"):
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            if out.returncode:
                print(f"  {label}: failed: {out.stderr[-300:]}")
                continue
            imp, first = out.stdout.split()
            print(f"  {label:28}: imports+compile {imp}s, first index builds + fill {first}s")


# =============================================================================================
# bitmask layout
# =============================================================================================
def bitmask_layout(vocab_name: str, schema_item: dict) -> None:
    print(f"\nbitmask layout ({vocab_name}): our bitmask applied by each engine's kernel, same logits")
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print(f"  SKIP: torch missing ({e})")
        return
    from tokenfsm.masks import Matcher, apply_token_bitmask_inplace, unpack_bitmask

    ours = _peers.make_engine("tokenfsm")
    ours.setup(vocab_name)
    index = ours.build(schema_item["schema"])
    V = ours.size
    m = Matcher(index)
    masks = []
    for tok in schema_item["tokens"][:40]:
        bm = np.zeros((1, (V + 31) // 32), dtype=np.int32)
        m.fill_next_token_bitmask(bm, 0)
        masks.append(bm)
        m.advance(tok)
    rng = np.random.default_rng(0)
    results = {}
    for width, label in ((V, f"logits width {V}"), (((V + 127) // 128) * 128 + 64, "padded logits")):
        base = torch.from_numpy(rng.standard_normal((len(masks), width)).astype(np.float32))
        bitmask = torch.from_numpy(np.concatenate(masks))
        expect_allowed = torch.from_numpy(unpack_bitmask(bitmask.numpy(), V))
        ref = base.clone()
        ref[:, :V][~expect_allowed] = float("-inf")
        ref[:, V:] = float("-inf")
        def attempt(name, fn, numpy_in=False, pad=False):
            try:
                a = base.numpy().copy() if numpy_in else base.clone()
                fn(a)
                if pad and width > V:
                    a[:, V:] = -np.inf  # this kernel has no vocab_size: the padding is masked here
                cands[name] = torch.from_numpy(a) if numpy_in else a
            except Exception as e:  # noqa: BLE001
                cands[name] = e

        cands = {}
        attempt("tokenfsm (torch)", lambda a: apply_token_bitmask_inplace(a, bitmask, vocab_size=V))
        attempt("tokenfsm (numpy)", lambda a: apply_token_bitmask_inplace(a, bitmask.numpy(), vocab_size=V),
                numpy_in=True)
        try:
            import xgrammar as xgr

            for backend in ("cpu", "torch_native"):
                attempt(f"xgrammar ({backend})", lambda a, b=backend: xgr.apply_token_bitmask_inplace(
                    a, bitmask, vocab_size=V, backend=b))
        except Exception as e:  # noqa: BLE001
            cands["xgrammar"] = e
        try:
            from outlines_core.kernels import numpy as ocn

            attempt("outlines-core (numpy)", lambda a: ocn.apply_token_bitmask_inplace(a, bitmask.numpy().copy()),
                    numpy_in=True, pad=True)
        except Exception as e:  # noqa: BLE001
            cands["outlines-core (numpy)"] = e
        try:
            import llguidance.numpy as lln

            attempt("llguidance (numpy)", lambda a: lln.apply_token_bitmask_inplace(a, bitmask.numpy().copy()),
                    numpy_in=True, pad=True)
        except Exception as e:  # noqa: BLE001
            cands["llguidance (numpy)"] = e
        for name, got in cands.items():
            if isinstance(got, Exception):
                status = f"ERROR ({type(got).__name__}: {str(got)[:110]})"
            else:
                status = "OK" if torch.equal(got[:, :V], ref[:, :V]) else "FAIL"
                if width > V:  # columns past the vocabulary: a policy, reported, not judged
                    tail = got[:, V:]
                    pad = ("masked" if bool(torch.isneginf(tail).all()) else
                           "untouched" if torch.equal(tail, base[:, V:]) else "mixed")
                    status += f" (padding columns {pad})"
            results[(label, name)] = status
            print(f"  {label:20} {name:24} {status}")
    fails = [k for k, v in results.items() if not v.startswith("OK")]
    print(f"  bitmask layout: {'OK' if not fails else 'FAIL ' + str(fails)} "
          f"({len(masks)} masks of a replay of {schema_item['name']})")


# =============================================================================================
# cross-check
# =============================================================================================
def _shortest_completion(index, state: int) -> bytes | None:
    """Shortest byte string leading from ``state`` to acceptance in our byte DFA (BFS)."""
    table, acc, classes = index.table, index.accepting, index.byte_classes
    rep = {}
    for b in list(range(0x61, 0x7B)) + list(range(0x30, 0x3A)) + list(range(256)):
        rep.setdefault(int(classes[b]), b)
    prev = {state: None}
    frontier = [state]
    while frontier:
        nxt = []
        for s in frontier:
            if acc[s]:
                out = bytearray()
                while prev[s] is not None:
                    s, b = prev[s]
                    out.append(b)
                return bytes(reversed(out))
            for c, b in rep.items():
                t = int(table[s, c])
                if t and t not in prev:
                    prev[t] = (s, b)
                    nxt.append(t)
        frontier = nxt
    return None


def _shortest_completion_pd(index, config) -> bytes | None:
    """:func:`_shortest_completion` for a ``PushdownIndex``: BFS over configurations (state,
    stack), one byte per class of bytes that the table and every call edge treat alike."""
    reps = getattr(index, "_bench_reps", None)
    if reps is None:
        keys = {}
        first = np.asarray(index.call_first)
        order = list(range(0x61, 0x7B)) + list(range(0x30, 0x3A)) + list(range(256))
        for b in order:
            keys.setdefault((int(index.byte_classes[b]), first[:, b].tobytes()), b)
        reps = index._bench_reps = sorted(set(keys.values()), key=order.index)
    q0, st0 = config
    if not q0:
        return None
    prev = {(q0, tuple(st0)): None}
    frontier = [(q0, tuple(st0))]
    while frontier:
        nxt = []
        for c in frontier:
            if index.is_accepting(c):
                out = bytearray()
                while prev[c] is not None:
                    c, b = prev[c]
                    out.append(b)
                return bytes(reversed(out))
            for b in reps:
                st = list(c[1])
                t = index.step(c[0], st, b)
                if t:
                    d = (t, tuple(st))
                    if d not in prev:
                        prev[d] = (c, b)
                        nxt.append(d)
        frontier = nxt
    return None


_PREFERRED = [b'"', b"}", b"]", b"0", b"1", b",", b":", b"null", b"true", b"a", b"e", b" ", b"-", b"."]


def _peer_completion(peer_m, size: int, eos: list[int], vocab, max_steps: int = 300) -> tuple[bytes, bool, int]:
    """Greedy walk with the peer's own masks until it allows EOS: (bytes, finished, steps)."""
    from tokenfsm.masks import unpack_bitmask

    pref_ids = []
    lookup = {b: i for i, b in enumerate(vocab.tokens) if b is not None and len(b) <= 4}
    for p in _PREFERRED:
        if p in lookup:
            pref_ids.append(lookup[p])
    out = bytearray()
    steps = 0
    bm = _peers.new_bitmask(peer_m, size)
    for _ in range(max_steps):
        peer_m.fill(bm)
        allowed = unpack_bitmask(_peers.as_numpy(bm)[0], size)
        if any(allowed[e] for e in eos):
            return bytes(out), True, steps
        choice = next((t for t in pref_ids if allowed[t]), None)
        if choice is None:
            ids = np.flatnonzero(allowed)
            ids = [t for t in ids.tolist() if vocab.tokens[t] is not None]
            if not ids:
                return bytes(out), False, steps
            choice = min(ids, key=lambda t: (len(vocab.tokens[t]), t))
        if not peer_m.advance(int(choice)):
            return bytes(out), False, steps
        steps += 1
        out += vocab.tokens[choice]
    return bytes(out), False, steps


def _validate(text: bytes, schema) -> tuple[bool, str]:
    import jsonschema

    try:
        value = json.loads(text.decode("utf-8"))
    except Exception as e:  # noqa: BLE001
        return False, f"not JSON ({type(e).__name__})"
    try:
        cls = jsonschema.validators.validator_for(schema)
        v = cls(schema, format_checker=cls.FORMAT_CHECKER)
        err = jsonschema.exceptions.best_match(v.iter_errors(value))
    except Exception as e:  # noqa: BLE001
        return True, f"validator failed ({type(e).__name__})"
    return (err is None), ("" if err is None else err.message[:100])


def _deeper(ctx: dict):
    """The schema compiled on the stack route with recursion cut deeper than ours was (two, else
    one level more), made once per schema; ``None`` if over budget."""
    if "deeper" not in ctx:
        from tokenfsm.automata import Budget
        from tokenfsm.schema import compile_json_schema

        ctx["deeper"] = None
        rec = ctx["compiled"].recursive
        base = rec.max_depth if rec is not None else 3
        for extra in (2, 1):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ctx["deeper"] = compile_json_schema(
                        ctx["schema"], whitespace=0, max_depth=base + extra, recursion="stack",
                        budget=Budget(max_seconds=60.0))
                break
            except Exception:  # noqa: BLE001 - over budget: try one level less
                continue
    return ctx["deeper"]


def classify(direction: str, prefix: bytes, tok: int, ctx: dict) -> tuple[str, str]:
    """Classify one token on which ours and a peer disagree.

    ``direction`` is ``"ours-only"`` (ours allows, the peer does not) or ``"peer-only"``.
    Returns ``(verdict, evidence)`` where the verdict is one of ``ours: bug``, ``peer: bug``,
    ``policy: ...`` or ``undetermined``.
    """
    vocab, schema, index = ctx["vocab"], ctx["schema"], ctx["index"]
    tb = vocab.tokens[tok]
    if tb is None:  # EOS / special
        return ("policy: end of sequence" if direction == "peer-only" else "undetermined"), "EOS"
    if direction == "ours-only":
        if _peers.is_pushdown(index):
            tail = _shortest_completion_pd(index, index.walk_bytes(index.start, prefix + tb))
        else:
            s = index.walk_bytes(index.start, prefix + tb)
            tail = _shortest_completion(index, s) if s else None
        if tail is None:
            return "ours: bug", "our DFA has no completion"
        text = prefix + tb + tail
        ok, why = _validate(text, schema)
        if not ok:
            return "ours: bug", f"completion {text[-60:]!r} invalid: {why}"
        if ctx.get("recursive") and (b"\\" in tb or b"\x7f" in tb):
            return "policy: string spelling (escapes, raw DEL)", f"valid completion {text[-70:]!r}"
        peer_allowed = ctx["peer_allowed"]
        for u in np.flatnonzero(peer_allowed).tolist():
            ub = vocab.tokens[u]
            if ub and ub != tb and (ub.startswith(tb) or tb.startswith(ub)):
                return ("policy: peer allows only some splits of forced/lexeme text",
                        f"peer allows {ub!r} but not {tb!r}")
        return "peer: bug (rejects valid text)", f"valid completion {text[-70:]!r}"
    # peer-only: complete with the peer, then validate
    pm = ctx["peer_matcher"]
    if not pm.advance(tok):
        return "undetermined", "peer allowed but refused to advance"
    tail, finished, steps = _peer_completion(pm, ctx["size"], ctx["eos"], vocab)
    pm.rollback(steps + 1)
    text = prefix + tb + tail
    if not finished:
        return "undetermined", f"no completion found: {text[-60:]!r}"
    ok, why = _validate(text, schema)
    if not ok:
        return "peer: bug (allows invalid)", f"{text[-80:]!r}: {why}"
    # valid JSON under the schema that ours does not produce: policy or our incompleteness
    value = json.loads(text.decode("utf-8"))
    canon = _peers.dumps_compact(value, schema)
    undeclared = (_has_undeclared_ref(schema, value, schema) if ctx.get("recursive")
                  else _has_undeclared(schema, value))
    if undeclared:
        return "policy: undeclared keys (additionalProperties absent)", f"{text[-70:]!r}"
    if ctx["accepts"](canon):
        if any(c in tb for c in b" \n\t\r"):
            return "policy: whitespace", f"{text[-70:]!r}"
        if any(c in tb for c in b"eE.") and any(ch.isdigit() for ch in tb.decode("latin-1")):
            return "policy: number spelling", f"{text[-70:]!r}"
        if b"\\" in tb:
            return "policy: string escape spelling", f"{text[-70:]!r}"
        return "policy: spelling/key order (canonical form accepted by ours)", f"{text[-70:]!r}"
    if isinstance(value, (int, float)) or b"." in tb or b"e" in tb.lower():
        pass
    deeper = _deeper(ctx) if ctx.get("recursive") else None
    if deeper is not None and deeper.accepts(canon):
        return (f"policy: recursion depth cut (accepted at max_depth={deeper.recursive.max_depth})",
                f"{text[-90:]!r}")
    return "ours: rejects valid (check: depth cut, number/format policy, or our bug)", f"{text[-90:]!r}"


def cross_check(vocab_name: str, schemas: list[dict], peers: list[str], per_step: int, log,
                skip: set = frozenset(), recursive: bool = False) -> None:
    from tokenfsm.masks import unpack_bitmask

    print(f"\n=== cross-check on {vocab_name}: masks compared at every step of each document ===")
    ours = _peers.make_engine("tokenfsm")
    ours.setup(vocab_name)
    vocab = ours.vocab
    V = ours.size
    for peer in peers:
        eng = _peers.make_engine(peer)
        try:
            eng.setup(vocab_name)
        except _peers.EngineUnavailable as e:
            print(f"-- {peer}: skipped ({e})")
            continue
        print(f"\n-- ours vs {peer}")
        totals: dict = {}
        for item in schemas:
            schema, tokens = item["schema"], item["tokens"]
            if (peer, item["name"]) in skip:
                print(f"  {item['name']}: skipped (--cross-skip)")
                continue
            try:
                cs = ours.compile(schema)
                index = ours.index(cs)
                handle = eng.build(schema)
            except Exception as e:  # noqa: BLE001
                print(f"  {item['name']}: build failed ({type(e).__name__}: {str(e)[:100]})")
                continue
            om = ours.matcher(index)
            pm = eng.matcher(handle)
            obm = _peers.new_bitmask(om, V)
            pbm = _peers.new_bitmask(pm, V)
            ctx = dict(vocab=vocab, schema=schema, index=index, size=V, eos=ours.eos,
                       peer_matcher=pm, accepts=cs.accepts)
            if recursive:
                ctx.update(recursive=True, compiled=cs)
            prefix = b""
            diff_steps, n_only_ours, n_only_peer = 0, 0, 0
            verdicts: dict = {}
            examples = []
            stop_note = ""
            for k in range(len(tokens) + 1):
                om.fill(obm)
                pm.fill(pbm)
                a = unpack_bitmask(_peers.as_numpy(obm)[0], V)
                b = unpack_bitmask(_peers.as_numpy(pbm)[0], V)
                only_ours = np.flatnonzero(a & ~b)
                only_peer = np.flatnonzero(b & ~a)
                if only_ours.size or only_peer.size:
                    diff_steps += 1
                    n_only_ours += only_ours.size
                    n_only_peer += only_peer.size
                    ctx["peer_allowed"] = b
                    for direction, ids in (("ours-only", only_ours), ("peer-only", only_peer)):
                        # classify a few per step: the shortest tokens first, then spread out
                        pick = sorted(ids.tolist(), key=lambda t: (len(vocab.tokens[t] or b""), t))[:per_step]
                        for t in pick:
                            v, ev = classify(direction, prefix, int(t), ctx)
                            verdicts[(direction, v)] = verdicts.get((direction, v), 0) + 1
                            if len(examples) < 6 and (v.startswith("ours") or v.startswith("peer")
                                                      or len(examples) < 3):
                                examples.append(f"step {k} after {prefix[-30:]!r}: {direction} "
                                                f"{vocab.tokens[t]!r} (id {t}) -> {v}; {ev}")
                if k == len(tokens):
                    break
                tok = tokens[k]
                ok1, ok2 = om.advance(tok), pm.advance(tok)
                if not ok1 or not ok2:
                    stop_note = (f" stopped at token {k} {vocab.tokens[tok]!r}: "
                                 f"{'ours' if not ok1 else ''}{' and ' if not ok1 and not ok2 else ''}"
                                 f"{peer if not ok2 else ''} rejected it")
                    break
                prefix += vocab.tokens[tok] or b""
            print(f"  {item['name']}: {len(tokens)} tokens, {diff_steps} steps differ, "
                  f"{n_only_ours} ids ours-only, {n_only_peer} ids {peer}-only{stop_note}")
            for (d, v), n in sorted(verdicts.items()):
                print(f"      {d:9} {v}: {n}")
                totals[(d, v)] = totals.get((d, v), 0) + n
            for ex in examples:
                print(f"      e.g. {ex}")
        print(f"  totals over schemas (classified samples, up to {per_step} per step and direction):")
        for (d, v), n in sorted(totals.items()):
            print(f"      {d:9} {v}: {n}")


# =============================================================================================
# main
# =============================================================================================
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3-schema smoke run, fewer repeats")
    ap.add_argument("--schemas", type=int, default=12, help="number of schemas (default 12)")
    ap.add_argument("--vocab", choices=("qwen", "llama3", "both"), default="qwen")
    ap.add_argument("--engines", default=",".join(_peers.ENGINES),
                    help="comma-separated subset of " + ",".join(_peers.ENGINES))
    ap.add_argument("--repeats", type=int, default=None, help="builds per schema (default 5, quick 2)")
    ap.add_argument("--replays", type=int, default=None, help="replays per document (default 5, quick 2)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per schema and engine")
    ap.add_argument("--cross-check", nargs="?", const="outlines-core,xgrammar,llguidance", default=None,
                    metavar="PEERS", help="compare masks step by step with these peers")
    ap.add_argument("--per-step", type=int, default=2, help="differing tokens classified per step")
    ap.add_argument("--cross-skip", default="outlines-core:fc/create_event", metavar="PEER:SCHEMA,...",
                    help="(peer, schema) pairs the cross-check leaves out")
    ap.add_argument("--bitmask-layout", action="store_true")
    ap.add_argument("--no-bench", action="store_true", help="skip the timing tables")
    ap.add_argument("--no-compile-cost", action="store_true")
    ap.add_argument("--recursive", action="store_true",
                    help="instead of the default selection: recursive Kubernetes schemas that ours "
                         "runs on the stack route (PushdownIndex; cold and warm replays apart)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--job", help=argparse.SUPPRESS)
    ap.add_argument("--skip", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.job, {int(x) for x in args.skip.split(",") if x})
        return 0

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    repeats = args.repeats or (2 if args.quick else 5)
    replays = args.replays or (2 if args.quick else 5)
    n = 3 if args.quick else args.schemas
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if "tokenfsm" not in engines:
        engines.insert(0, "tokenfsm")
    engines = [e for e in _peers.ENGINES if e in engines]
    print(f"bench_peers: {_peers.env_summary()}; python {sys.version.split()[0]}; "
          f"repeats={repeats} replays={replays} timeout={args.timeout:.0f}s")
    t0 = time.perf_counter()
    schemas = select_recursive(log) if args.recursive else select_schemas(n, args.quick, log)
    print(f"schemas ({len(schemas)}, selected in {time.perf_counter() - t0:.1f}s): "
          + ", ".join(s["name"] for s in schemas))
    for e in engines:
        eng = _peers.make_engine(e)
        if e != "tokenfsm":
            print(f"  {e} build = {eng.build_note}")
        else:
            print(f"  ours build = {eng.build_note}")
            if args.recursive:
                print("  ours build (--recursive) = compile_json_schema(whitespace=0), stack route "
                      "(its byte form, recursive.to_bytes(), is made and checked inside the compile) "
                      "+ PushdownIndex (rows made later, on first need)")
    vocabs = ["qwen", "llama3"] if args.vocab == "both" else [args.vocab]
    for vocab in vocabs:
        encode = _peers.tokenizer(vocab)
        items = [dict(s, tokens=list(encode(s["doc"]))) for s in schemas]
        if not args.no_bench:
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
                job_spec = dict(vocab=vocab, repeats=repeats, replays=replays, schemas=items)
                if args.recursive:
                    job_spec["recursive"] = True
                json.dump(job_spec, fh)
                job = fh.name
            try:
                results = {}
                for e in engines:
                    t = time.perf_counter()
                    log(f"# {vocab}: running {e} ...")
                    results[e] = run_engine(e, job, len(items), args.timeout, log)
                    log(f"# {vocab}: {e} done in {time.perf_counter() - t:.0f}s")
                if args.recursive:
                    report(vocab, items, results, engines, recursive=True)
                else:
                    report(vocab, items, results, engines)
            finally:
                os.unlink(job)
        if args.bitmask_layout:
            try:
                bitmask_layout(vocab, items[-1])
            except Exception:  # noqa: BLE001
                print("  bitmask layout: FAIL (exception)\n" + traceback.format_exc())
        if args.cross_check:
            peers = [p.strip() for p in args.cross_check.split(",") if p.strip() and p.strip() != "tokenfsm"]
            skip = {tuple(x.split(":", 1)) for x in args.cross_skip.split(",") if ":" in x}
            if args.recursive:
                cross_check(vocab, items, peers, args.per_step, log, skip, recursive=True)
            else:
                cross_check(vocab, items, peers, args.per_step, log, skip)
    if not args.no_compile_cost and not args.no_bench:
        compile_cost()
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
