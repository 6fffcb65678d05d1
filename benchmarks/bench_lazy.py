"""Lazy constructions next to xgrammar and llguidance: build, first mask, fill over whole replays.

Run (the peers live in their own environment; ``--rev`` extracts tokenfsm at a git revision so that
interpreter runs this checkout's code)::

    python benchmarks/bench_lazy.py --python /work/benchenv/venv/bin/python --rev HEAD
                                    [--vocab qwen|llama3] [--replays 3] [--kube 8] [--quick]
                                    [--cases kb_191,string] [--eager 1000000]

Cases, the same text through every engine, tokenised by the vocabulary's real tokenizer:

* ``regex [\\s\\S]{0,10**8}``: ours :func:`~tokenfsm.automata.lazy_regex.regex_automaton` (a lazy
  network: the count in the configuration); the peers get the regex;
* ``string maxLength 10**9`` and ``string maxLength 5000, 3 exclusions``: ours
  :func:`~tokenfsm.schema.lazy_json.string_piece`; the peers get ``{"type": "string",
  "maxLength": ...}`` (no JSON Schema keyword says "never contains", so the peers do not enforce
  the exclusions: ours does more work there);
* ``array minItems 10**6`` of integers: ours :func:`~tokenfsm.schema.lazy_json.array_piece`; the
  replay is a 2,000-item prefix (the document cannot end before a million items);
* ``kube/kb_*``: the recursive Kubernetes schemas of ``bench_peers.py --recursive``, which ours
  compiles on the stack route (``compile_json_schema(whitespace=0)`` + ``PushdownIndex``).

Per case and engine, each replay starts from a fresh build, so every mask row ours needs is made on
demand during the replay and counted: **build** (to a ready index; llguidance's includes its first
mask, as in ``bench_peers.py``), **first mask** (the first fill of a fresh matcher), and **cold**
fill p50 / p90 / p99 over all tokens of all replays (fill only; advance is timed apart). A **warm**
replay (the last build again, a new matcher: ours keeps its rows) is reported beside. For ours the
index's counters give, per cold replay, the rows made (**miss/rep**), and per row made the walk
time (**us/miss**, the kernel and its Python around it) and the trie nodes visited
(**nodes/miss**), medians over the replays. Every engine runs in a subprocess of its own, one
case at a time, with a time limit; medians and percentiles, the machine may be noisy.
``--cases`` picks cases by name; ``--eager N`` builds the schemas' indexes with
``eager_states=N`` (rows made up front).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _peers  # noqa: E402  (beside this script)

ENGINES = ("tokenfsm", "xgrammar", "llguidance")
EXCLUDES = ["<|im_end|>", "</s>", "```"]
INTEGER = r"-?(?:0|[1-9][0-9]*)"

PARAGRAPH = (
    "Regular expressions, JSON Schemas and slot templates as finite automata, with Numba-jitted "
    "token masks for constrained decoding. Zürich, São Paulo, 東京 and Москва appear here, "
    "as do tabs\tand quotes \"like these\" and a backslash \\ or two. The rows of a lazy index "
    "are made when a configuration is first met and kept: a count of a billion needs no more rows "
    "than a count of ten. ")


def cases(n_kube: int, log) -> list[dict]:
    text = (PARAGRAPH * 4)[:1200]
    out = [
        dict(name="regex [\\s\\S]{0,10**8}",
             ours=dict(kind="regex", pattern=r"[\s\S]{0,100000000}"),
             peer=dict(regex=r"[\s\S]{0,100000000}"), doc=text, complete=True),
        dict(name="string maxLength 10**9", ours=dict(kind="string", lo=0, hi=10**9, excludes=[]),
             peer=dict(schema={"type": "string", "maxLength": 10**9}),
             doc=json.dumps(text, ensure_ascii=False), complete=True),
        dict(name="string maxLength 5000 x3 excl", ours=dict(kind="string", lo=0, hi=5000,
                                                           excludes=EXCLUDES),
             peer=dict(schema={"type": "string", "maxLength": 5000}),
             doc=json.dumps(text, ensure_ascii=False), complete=True, note="peers: no exclusions"),
        dict(name="array minItems 10**6", ours=dict(kind="array", lo=10**6, hi=None),
             peer=dict(schema={"type": "array", "items": {"type": "integer"}, "minItems": 10**6}),
             doc="[" + ",".join(str(i * 7919 % 100003) for i in range(2000)), complete=False),
    ]
    if n_kube:
        import bench_peers

        for s in bench_peers.select_recursive(log, limit=n_kube):
            out.append(dict(name=s["name"], ours=dict(kind="schema", schema=s["schema"]),
                            peer=dict(schema=s["schema"]), doc=s["doc"], complete=True))
    return out


# -- the worker: one engine, one case -------------------------------------------------------------

def _ours_build(eng, spec):
    kind = spec["kind"]
    if kind == "schema":          # (also runs on revisions without lazy networks: --rev)
        if spec.get("eager") is None:
            return eng.build(spec["schema"])
        from tokenfsm.masks import PushdownIndex

        compiled = eng.compile(spec["schema"])
        if compiled.recursive is None:
            return eng.index(compiled)
        return PushdownIndex(compiled.recursive.to_bytes(), eng.vocab, eager_states=spec["eager"])
    from tokenfsm.automata.dfa import DFA
    from tokenfsm.automata.lazy_regex import regex_automaton
    from tokenfsm.automata.network import Network
    from tokenfsm.masks import PushdownIndex, TokenIndex
    from tokenfsm.schema.jsontext import whitespace_dfa
    from tokenfsm.schema.lazy_json import array_piece, string_piece, value_piece

    if kind == "regex":
        a = regex_automaton(spec["pattern"])
    elif kind == "string":
        net = Network()
        a = net.build(string_piece(net, spec["lo"], spec["hi"], spec["excludes"]))
    else:
        net = Network()
        item = value_piece(net, DFA.from_regex(INTEGER))
        a = net.build(array_piece(net, [], item, whitespace_dfa(0), spec["lo"], spec["hi"]))
    if isinstance(a, DFA):
        return TokenIndex.build(a, eng.vocab)
    return PushdownIndex(a, eng.vocab)


def _peer_build(eng, name, spec):
    if "regex" in spec:
        if name == "xgrammar":
            return eng.compiler.compile_regex(spec["regex"])
        m = eng.llg.LLMatcher(eng.tok, eng.llg.LLMatcher.grammar_from_regex(spec["regex"]),
                              log_level=0)
        if m.is_error():
            raise RuntimeError(m.get_error())
        eng.llg.numpy.fill_next_token_bitmask(m, eng.bm, 0)
        return m
    return eng.build(spec["schema"])


def worker(engine_name: str, job_path: str) -> None:

    with open(job_path) as fh:
        job = json.load(fh)
    case = job["case"]
    try:
        eng = _peers.make_engine(engine_name)
        eng.setup(job["vocab"])
    except _peers.EngineUnavailable as e:
        print(json.dumps(dict(unavailable=str(e))))
        return
    ours = engine_name == "tokenfsm"

    def build():
        if ours:
            return _ours_build(eng, case["ours"])
        return _peer_build(eng, engine_name, case["peer"])

    # warm-up (kernels, lazy initialisation): a small case of the same kind, not timed
    warm = dict(case)
    if case["ours"]["kind"] == "regex":
        warm["ours"] = dict(kind="regex", pattern=r"[\s\S]{0,10000}")
        warm["peer"] = dict(regex=r"[a-z]{0,30}")
    elif case["ours"]["kind"] == "schema":
        warm["ours"] = dict(kind="schema", schema={"type": "object", "properties": {
            "c": {"type": "array", "items": {"$ref": "#"}}, "v": {"type": "integer"}}},
            eager=case["ours"].get("eager"))
        warm["peer"] = dict(schema=warm["ours"]["schema"])
    else:
        warm["ours"] = dict(case["ours"], lo=0, hi=3)
        warm["peer"] = dict(schema={"type": "string", "maxLength": 3})
    try:
        h = _ours_build(eng, warm["ours"]) if ours else _peer_build(eng, engine_name, warm["peer"])
        m = eng.matcher(h)
        bm = _peers.new_bitmask(m, eng.size)
        m.fill(bm)
    except Exception:  # noqa: BLE001 - the warm-up is best effort
        pass
    tokens = job["tokens"]
    pc = time.perf_counter_ns
    builds, firsts, fills, advances, warm_fills = [], [], [], [], []
    misses, walk_s, visited = [], [], []
    rejected_at, rows = None, None
    for r in range(job["replays"]):
        a = pc()
        h = build()
        builds.append(pc() - a)
        m = eng.matcher(h)
        bm = _peers.new_bitmask(m, eng.size)
        a = pc()
        m.fill(bm)
        firsts.append(pc() - a)
        fill, advance = m.fill, m.advance
        for k, tok in enumerate(tokens):
            a = pc()
            fill(bm)
            b = pc()
            ok = advance(tok)
            advances.append(pc() - b)
            fills.append(b - a)
            if not ok:
                rejected_at = k
                break
        stats = getattr(h, "stats", None)
        if ours and isinstance(stats, dict) and "misses" in stats:
            # what the cold replay cost the lazy index (a fresh build: its counters start at 0)
            misses.append(int(stats["misses"]))
            walk_s.append(float(stats.get("walk_s", 0.0)))
            visited.append(int(stats.get("visited", 0)))
        if r == job["replays"] - 1:
            m = eng.matcher(h)          # the same index again: rows kept
            fill, advance = m.fill, m.advance
            for tok in tokens:
                a = pc()
                fill(bm)
                warm_fills.append(pc() - a)
                if not advance(tok):
                    break
            if hasattr(h, "num_cached_rows"):
                rows = dict(rows=int(h.num_cached_rows), made=int(h.stats["misses"]),
                            states=int(h.num_states))
    print(json.dumps(dict(builds=builds, firsts=firsts, fills=fills, advances=advances,
                          warm_fills=warm_fills, rejected_at=rejected_at, rows=rows,
                          misses=misses, walk_s=walk_s, visited=visited, n_tokens=len(tokens))))


# -- the parent ----------------------------------------------------------------------------------

def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def _fmt_us(ns):
    return f"{ns / 1e3:8.2f}" if ns == ns else "       -"


def run(args) -> int:

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    print(f"bench_lazy: {_peers.env_summary()}; python {sys.version.split()[0]}; "
          f"vocab={args.vocab} replays={args.replays} timeout={args.timeout:.0f}s")
    chosen = cases(0 if args.quick else args.kube, log)
    if args.cases:
        chosen = [c for c in chosen if any(k in c["name"] for k in args.cases.split(","))]
    if args.eager is not None:
        for c in chosen:
            if c["ours"]["kind"] == "schema":
                c["ours"]["eager"] = args.eager
    encode = _peers.tokenizer(args.vocab)
    vocab = _peers.vocabulary(args.vocab)
    eos = list(vocab.eos_token_ids)[:1]
    engines = [e for e in ENGINES if e in args.engines.split(",")]
    summary: dict = {e: {} for e in engines}
    print(f"{'case':30s} {'engine':10s} {'build ms':>8s} {'1st ms':>7s} | {'cold p50':>8s} "
          f"{'p90':>7s} {'p99':>8s} | {'warm p50':>8s} {'p90':>7s} {'p99':>7s} | "
          f"{'miss/rep':>8s} {'us/miss':>7s} {'nodes/miss':>10s}  notes")
    for case in chosen:
        tokens = list(encode(case["doc"])) + (eos if case["complete"] else [])
        for e in engines:
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
                json.dump(dict(case=case, tokens=tokens, vocab=args.vocab,
                               replays=args.replays), fh)
                job = fh.name
            try:
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", e,
                                      "--job", job], capture_output=True, text=True,
                                     timeout=args.timeout, env=os.environ.copy())
                if out.returncode != 0:
                    res = dict(error=out.stderr.strip().splitlines()[-1][:120] if out.stderr
                               else "?")
                else:
                    res = json.loads(out.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                res = dict(error=f"timeout after {args.timeout:.0f}s")
            finally:
                os.unlink(job)
            if "unavailable" in res or "error" in res:
                print(f"{case['name'][:30]:30s} {e:10s} "
                      f"{res.get('unavailable') or res.get('error')}", flush=True)
                continue
            notes = []
            if res["rejected_at"] is not None:
                notes.append(f"rejected token {res['rejected_at']}/{res['n_tokens']}")
            if res["rows"]:
                notes.append(f"{res['rows']['rows']} rows for {res['rows']['states']} states")
            if case.get("note") and e != "tokenfsm":
                notes.append(case["note"])
            b, f, fl, w = res["builds"], res["firsts"], res["fills"], res["warm_fills"]
            row = dict(build=statistics.median(b), first=statistics.median(f), p50=_pct(fl, .5),
                       p90=_pct(fl, .9), p99=_pct(fl, .99), warm50=_pct(w, .5))
            summary[e][case["name"]] = row
            ms = res.get("misses") or []
            if ms:
                # medians over the replays (the first may include kernels compiled on first use)
                per = [(w / k * 1e6, v / k)
                       for k, w, v in zip(ms, res["walk_s"], res["visited"]) if k]
                lazy = (f"{statistics.median(ms):8.0f} {statistics.median(p[0] for p in per):7.1f} "
                        f"{statistics.median(p[1] for p in per):10.0f}" if per
                        else f"{0:8d} {'-':>7s} {'-':>10s}")
            else:
                lazy = f"{'-':>8s} {'-':>7s} {'-':>10s}"
            print(f"{case['name'][:30]:30s} {e:10s} {row['build'] / 1e6:8.2f} "
                  f"{row['first'] / 1e6:7.2f} | "
                  f"{_fmt_us(row['p50'])} {_fmt_us(row['p90'])[1:]} {_fmt_us(row['p99'])} | "
                  f"{_fmt_us(_pct(w, .5))} {_fmt_us(_pct(w, .9))[1:]} "
                  f"{_fmt_us(_pct(w, .99))[1:]} | "
                  f"{lazy}  {'; '.join(notes)}", flush=True)
    # ratios, ours over each peer, on the cases both ran
    print("\nours / peer (medians over the cases both engines ran; < 1: ours is faster)")
    for peer in engines[1:]:
        both = [c for c in summary["tokenfsm"] if c in summary[peer]]
        if not both:
            continue
        parts = []
        for key in ("build", "first", "p50", "p99", "warm50"):
            ratios = [summary["tokenfsm"][c][key] / summary[peer][c][key] for c in both
                      if summary[peer][c][key] > 0]
            parts.append(f"{key} {statistics.median(ratios):.2f}")
        print(f"  vs {peer:10s} ({len(both)} cases): " + ", ".join(parts))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", choices=("qwen", "llama3"), default="qwen")
    ap.add_argument("--replays", type=int, default=3, help="fresh builds replayed per case")
    ap.add_argument("--kube", type=int, default=8, help="recursive Kubernetes schemas (0: none)")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per case and engine")
    ap.add_argument("--quick", action="store_true", help="the constructions only, no Kubernetes")
    ap.add_argument("--cases", default="",
                    help="comma-separated substrings of the case names to run")
    ap.add_argument("--eager", type=int, default=None,
                    help="schemas: PushdownIndex(eager_states=N), rows made up front")
    ap.add_argument("--python", default=None, help="interpreter with the peers installed")
    ap.add_argument("--rev", default=None, help="run tokenfsm as of this git revision")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--job", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.job)
        return 0
    if args.rev or args.python:
        return _peers.rerun_at_revision(__file__, argv, args.rev, args.python)
    try:
        return run(args)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
