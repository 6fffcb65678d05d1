"""Compile coverage of tokenfsm, llguidance, xgrammar and outlines-core on the maskbench subsets.

For every schema of every maskbench subset, each engine compiles the schema in its own worker
process under one wall-clock limit (``--seconds``, the same for every engine). The outcome is one of

* ``compiled``: done within the limit. A schema an engine reports as unsatisfiable (tokenfsm's
  ``SchemaError`` "unsatisfiable", xgrammar's "cannot accept any value") counts as compiled, to the
  empty language (it rejects every instance); the count is shown under the table;
* ``unsupported``: the engine refuses a keyword or format it does not implement (tokenfsm's
  :class:`UnsupportedSchema`; a peer's error message naming an unsupported / unimplemented feature);
* ``over budget``: the measured compile time went over the limit, tokenfsm's
  :class:`BudgetExceeded`, or the worker was killed at the hard limit (``--seconds`` + 1 s);
* ``error``: any other failure (invalid schema, resource limit, crash of the worker).

What "compile" means per engine (``--seconds`` applies to exactly this):

* ``tokenfsm``: ``compile_json_schema(schema, whitespace=1, budget=Budget(max_seconds=S))``, strict
  (unsupported keywords raise); ``tokenfsm-lenient`` is the same with ``strict=False``
  (unsupported keywords become warnings). No token index: the text automaton only. Where the strict
  compile succeeded nothing was unsupported, so the lenient one would build the same automaton:
  it is not run again, the strict outcome (and time, and verdicts) is reused. ``tokenfsm-any`` is
  the lenient one with ``property_order="any", allow_extra_keys=True``: keys in any order,
  undeclared keys anywhere (the report says which schemas it misses that the lenient one
  compiles).
* ``llguidance``: ``LLMatcher(tokenizer, LLMatcher.grammar_from_json_schema(schema))`` and not
  ``is_error()``: the matcher construction the maskbench harness times as llguidance's compile step.
  Its JSON options are left at their defaults, among them ``lenient: false``: unimplemented keywords
  and formats are errors. ``llguidance-lenient`` sets ``lenient: true`` (unsupported keywords and
  formats ignored; implies ``coerce_one_of``). llguidance builds its lexer lazily; a first token
  mask that fails is counted under the table ("first mask failed") but not taken off "compiled";
  the first mask is computed before the outcome is reported, so it falls under the hard limit.
* ``xgrammar``: ``GrammarCompiler(tokenizer_info, max_threads=1, cache_enabled=False)
  .compile_json_schema(schema)`` with its defaults (``any_whitespace=True``, ``strict_mode=True``).
  It prints a warning and ignores what it does not support; such compilations are counted under
  the table ("compiled with ignored keywords").
* ``outlines-core``: ``build_regex_from_schema(json.dumps(schema))`` then ``Index(regex,
  vocabulary)`` (the token index is part of its compile step).

tokenfsm is measured at one commit (``--rev``, default ``HEAD``: its packages are extracted to a
temporary directory that the workers import first), so that uncommitted edits in the working tree
do not leak into a long run. The peers take the Llama 3 tokenizer (the one the maskbench harness uses). Every engine's workers are
restarted after a hard timeout or a crash; ``--mem-gb`` caps each worker's address space.

Soundness (``--no-tests`` turns it off): for each compiled schema, each test instance is written
as JSON in two ways (keys in schema order and in the instance's own order, ``", "`` and ``": "``
separators) and the engine accepts the instance if it accepts either text: tokenfsm through
``CompiledSchema.accepts``, llguidance by consuming the tokenised text and asking ``is_accepting()``,
xgrammar by ``accept_string`` and ``is_completed()``, outlines-core by walking its index over the
token ids. The table under the coverage table gives valid instances accepted and invalid instances
accepted (the second number should be 0), and "passing" schemas (compiled and every test right),
maskbench's own headline figure.

Usage::

    /work/benchenv/venv/bin/python benchmarks/maskbench_coverage.py [--limit N] [--seconds 3]
        [--jobs 1] [--engines tokenfsm,tokenfsm-lenient,llguidance,...] [--records out.jsonl]
        [--from-records a.jsonl,b.jsonl] [--rev HEAD|worktree|<commit>] [--start N]

``--records`` writes one JSON line per (engine, schema); ``--from-records`` prints the tables from
such files (for instance runs of different engines) without compiling anything.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import queue
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import _peers  # (beside this script)
from _peers import snapshot

ALL_ENGINES = ("tokenfsm", "tokenfsm-lenient", "tokenfsm-any", "llguidance",
               "llguidance-lenient", "xgrammar", "outlines-core")
#: the options of each of our engines (beside ``whitespace=1`` and the time budget)
OUR_OPTIONS = {
    "tokenfsm": dict(strict=True),
    "tokenfsm-lenient": dict(strict=False),
    "tokenfsm-any": dict(strict=False, property_order="any", allow_extra_keys=True),
}
STATUSES = ("compiled", "unsupported", "over_budget", "error")
_UNSUPPORTED = re.compile(r"unsupported|not supported|unimplemented|not implemented|unknown format"
                          r"|unrecognized format|is not yet supported", re.IGNORECASE)
#: a peer's explicit verdict that no JSON value satisfies the schema: counted as compiled (to the
#: empty language), as tokenfsm's unsatisfiable schemas are
_EMPTY = re.compile(r"unsatisfiable|cannot accept any value", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# corpus
# ---------------------------------------------------------------------------------------------
def load_subsets(root: Path, names, limit, start=0):
    """[(subset, name, schema, [(texts, valid), ...])], texts: the instance's JSON writings;
    schemas ``start`` to ``start + limit`` of each subset."""
    from tokenfsm.schema.serialize import dumps_in_schema_order

    out = []
    for path in sorted(root.glob("*.jsonl.gz")):
        subset = path.name.split(".")[0]
        if names and subset not in names:
            continue
        with gzip.open(path, "rt") as fh:
            for i, line in enumerate(fh):
                if i < start:
                    continue
                if limit is not None and i >= start + limit:
                    break
                row = json.loads(line)
                tests = []
                for t in row.get("tests") or []:
                    texts = [json.dumps(t["data"], ensure_ascii=False, separators=(", ", ": "))]
                    try:
                        s = dumps_in_schema_order(t["data"], row["schema"], 1)
                        if s not in texts:
                            texts.insert(0, s)
                    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
                        pass
                    tests.append((texts, bool(t["valid"])))
                out.append((subset, row.get("name", str(i)), row["schema"], tests))
    return out


def _shape(msg: str) -> str:
    """An error message with its particulars (quoted names, numbers) blanked, for grouping."""
    msg = str(msg).strip().splitlines()[0] if str(msg).strip() else "(no message)"
    msg = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", msg)
    return re.sub(r"\d+", "N", msg.split(" (at ")[0])[:100]


# ---------------------------------------------------------------------------------------------
# engines (each runs inside its worker process)
# ---------------------------------------------------------------------------------------------
class _Stderr:
    """fd 2 redirected to a file, so that native warnings printed during one compile are seen."""

    def __init__(self):
        self.f = tempfile.TemporaryFile()  # noqa: SIM115 - open for the worker's life
        os.dup2(self.f.fileno(), 2)
        self.pos = 0

    def new_text(self) -> str:
        sys.stderr.flush()
        end = self.f.seek(0, 2)
        self.f.seek(self.pos)
        text = self.f.read(end - self.pos).decode("utf-8", "replace")
        self.pos = end
        return text


class Ours:
    def __init__(self, options: dict, seconds: float):
        import tokenfsm.automata
        import tokenfsm.schema  # noqa: F401 - imported before the first timed compile

        self.options = options
        self.seconds = seconds
        self.compile({"type": "object", "properties": {"a": {"type": "string"}}})  # warm up

    def compile(self, schema):
        import warnings

        from tokenfsm.automata import Budget, BudgetExceeded
        from tokenfsm.schema import compile_json_schema
        from tokenfsm.schema.errors import SchemaError, UnsupportedSchema

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cs = compile_json_schema(schema, whitespace=1, **self.options,
                                         budget=Budget(max_seconds=self.seconds))
        except UnsupportedSchema as e:
            return "unsupported", f"{e.keyword}: {_shape(e.msg)}", None, False
        except BudgetExceeded:
            return "over_budget", "", None, False
        except SchemaError as e:
            if "unsatisfiable" in e.msg:
                return "compiled", "empty language", _Empty(), False
            return "error", f"SchemaError: {_shape(e.msg)}", None, False
        except Exception as e:  # noqa: BLE001 - any other failure is this schema's error
            return "error", f"{type(e).__name__}: {_shape(str(e))}", None, False
        return "compiled", "", cs, bool(cs.warnings)

    def accepts(self, cs, text):
        return cs.accepts(text)


class _Empty:
    def accepts(self, text):
        return False


def _failure(msg: str):
    """A peer's compile failure as (status, why, handle, warned)."""
    if _EMPTY.search(msg):
        return "compiled", "empty language", _Empty(), False
    return ("unsupported" if _UNSUPPORTED.search(msg) else "error"), _shape(msg), None, False


def _llama3_path():
    from tokenfsm.masks.builtin_vocab import builtin_path

    return builtin_path("llama3")


class LLG:
    def __init__(self, lenient: bool):
        import llguidance

        self.llg = llguidance
        with open(_llama3_path()) as fh:
            self.tok = llguidance.LLTokenizer(fh.read())
        self.overrides = {"lenient": True} if lenient else None
        self.bits = None

    def compile(self, schema):
        llg = self.llg
        try:
            grammar = llg.LLMatcher.grammar_from_json_schema(schema, overrides=self.overrides)
        except Exception as e:  # noqa: BLE001 - the engine's own verdict on the schema
            return _failure(str(e))
        m = llg.LLMatcher(self.tok, grammar, log_level=0)
        if m.is_error():
            return _failure(m.get_error())
        return "compiled", "", m, bool(m.get_grammar_warnings())

    def first_mask_ok(self, m) -> bool:
        mm = m.deep_copy()
        mm.compute_bitmask()
        return not mm.is_error()

    def accepts(self, m, text):
        mm = m.deep_copy()
        toks = self.tok.tokenize_str(text)
        return mm.try_consume_tokens(toks) == len(toks) and not mm.is_error() and mm.is_accepting()


class XGR:
    def __init__(self):
        import transformers
        import xgrammar as xgr

        self.xgr = xgr
        hf = transformers.PreTrainedTokenizerFast(tokenizer_file=_llama3_path())
        info = xgr.TokenizerInfo.from_huggingface(hf)
        self.compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)

    def compile(self, schema):
        try:
            g = self.compiler.compile_json_schema(json.dumps(schema))
        except Exception as e:  # noqa: BLE001
            return _failure(str(e))
        return "compiled", "", g, None  # warnings: read from fd 2 by the worker

    def accepts(self, g, text):
        m = self.xgr.GrammarMatcher(g)
        return bool(m.accept_string(text)) and bool(m.is_completed())


class Outlines:
    def __init__(self):
        import outlines_core
        import tokenizers
        from tokenfsm.masks.builtin_vocab import load_vocabulary

        self.oc = outlines_core
        v = load_vocabulary("llama3")
        mapping: dict = {}
        for i, b in enumerate(v.tokens):
            if b is not None:
                mapping.setdefault(b, []).append(i)
        eos = min(v.eos_token_ids)  # outlines-core takes one EOS id
        mapping = {b: ids for b, ids in mapping.items() if eos not in ids}
        self.vocab = outlines_core.Vocabulary(eos, mapping)
        self.hf = tokenizers.Tokenizer.from_file(_llama3_path())

    def compile(self, schema):
        from outlines_core.json_schema import build_regex_from_schema

        try:
            regex = build_regex_from_schema(json.dumps(schema))
            index = self.oc.Index(regex, self.vocab)
        except Exception as e:  # noqa: BLE001
            return _failure(str(e))
        return "compiled", "", index, False

    def accepts(self, index, text):
        state = index.get_initial_state()
        for t in self.hf.encode(text, add_special_tokens=False).ids:
            state = index.get_next_state(state, t)
            if state is None:
                return False
        return bool(index.is_final_state(state))


def make_engine(name: str, seconds: float):
    if name in OUR_OPTIONS:
        return Ours(OUR_OPTIONS[name], seconds)
    if name == "llguidance":
        return LLG(False)
    if name == "llguidance-lenient":
        return LLG(True)
    if name == "xgrammar":
        return XGR()
    if name == "outlines-core":
        return Outlines()
    raise ValueError(f"unknown engine {name!r}; one of {', '.join(ALL_ENGINES)}")


def worker_main(name: str, conn, seconds: float, mem_gb: float, code_dir=None) -> None:
    """Serve (schema, tests) jobs: send the compile outcome, then the test verdicts."""
    import resource

    if code_dir:
        sys.path.insert(0, code_dir)

    if mem_gb:
        cap = int(mem_gb * 2 ** 30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    err = _Stderr()
    try:
        engine = make_engine(name, seconds)
    except Exception as e:  # noqa: BLE001
        conn.send(("setup_failed", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready", None))
    while True:
        job = conn.recv()
        if job is None:
            return
        schema, tests = job
        err.new_text()
        t0 = time.perf_counter()
        try:
            status, why, handle, warned = engine.compile(schema)
        except MemoryError:
            status, why, handle, warned = "error", "MemoryError", None, False
        elapsed = time.perf_counter() - t0
        if warned is None:
            warned = "Warning" in err.new_text()
        if status == "compiled" and elapsed > seconds:
            status, why, handle = "over_budget", "", None
        note = ""
        if (status == "compiled" and isinstance(engine, LLG) and not isinstance(handle, _Empty)
                and not engine.first_mask_ok(handle)):
            note = "first mask failed"
        conn.send(("compiled", (status, why, elapsed, bool(warned), note)))
        if status == "compiled" and tests:
            verdicts = []
            for texts, valid in tests:
                try:
                    ok = not isinstance(handle, _Empty) and any(engine.accepts(handle, t) for t in texts)
                except Exception:  # noqa: BLE001 - an engine failing on a text rejects it
                    ok = False
                verdicts.append((valid, ok))
            conn.send(("verdicts", verdicts))


# ---------------------------------------------------------------------------------------------
# parent side: one worker per (thread, engine), restarted after a timeout or a crash
# ---------------------------------------------------------------------------------------------
class Worker(_peers.WorkerProcess):

    def __init__(self, name: str, seconds: float, mem_gb: float, test_seconds: float, code_dir=None):
        self.name, self.seconds, self.mem_gb, self.test_seconds = name, seconds, mem_gb, test_seconds
        self.code_dir = code_dir
        self.proc = None
        self.setup_error = None

    def _start(self):
        self._spawn(worker_main,
                    lambda child: (self.name, child, self.seconds, self.mem_gb, self.code_dir))
        if not self.conn.poll(300):
            self._kill()
            raise RuntimeError(f"{self.name}: worker did not start")
        kind, msg = self.conn.recv()
        if kind == "setup_failed":
            self._kill()
            raise RuntimeError(f"{self.name}: {msg}")

    def run(self, schema, tests) -> dict:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        out = {"status": "error", "why": "", "time": None, "warned": False, "note": "", "verdicts": None}
        try:
            self.conn.send((schema, tests))
        except (OSError, BrokenPipeError):
            self._kill()
            out["why"] = "worker died"
            return out
        got = self._recv(self.seconds + 1.0)
        if got in ("timeout", "crash"):
            code = self.proc.exitcode if self.proc is not None else None
            self._kill()
            if got == "timeout":
                out.update(status="over_budget", why="killed at the hard limit",
                           time=self.seconds + 1.0)
            else:
                out["why"] = f"worker crashed (exit code {code})"
            return out
        status, why, elapsed, warned, note = got[1]
        out.update(status=status, why=why, time=elapsed, warned=warned, note=note)
        if status == "compiled" and tests:
            got = self._recv(self.test_seconds)
            if got in ("timeout", "crash"):
                self._kill()
                out["note"] = (out["note"] + "; " if out["note"] else "") + f"tests: {got}"
            else:
                out["verdicts"] = got[1]
        return out


def run(rows, engines, args):
    records = []
    lock = threading.Lock()
    todo: queue.Queue = queue.Queue()
    for i in range(len(rows)):
        todo.put(i)
    sink = open(args.records, "w") if args.records else None  # noqa: SIM115 - closed below
    t0 = time.perf_counter()
    broken: dict = {}
    done = [0]

    def thread_main():
        workers = {e: Worker(e, args.seconds, args.mem_gb, args.test_seconds, args.code_dir)
                   for e in engines}
        try:
            while True:
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                subset, name, schema, tests = rows[i]
                strict = None
                for e in engines:
                    if e in broken:
                        continue
                    if e == "tokenfsm-lenient" and strict is not None and strict["status"] == "compiled":
                        # strict compiled: nothing was unsupported, so lenient mode builds the same
                        # automaton; its outcome and verdicts are the strict ones
                        r = dict(strict, note="same as strict")
                    else:
                        try:
                            r = workers[e].run(schema, tests if not args.no_tests else [])
                        except RuntimeError as err:
                            with lock:
                                broken[e] = str(err)
                            continue
                    if e == "tokenfsm":
                        strict = r
                    r.update(engine=e, subset=subset, name=name, tests=len(tests), limit=args.seconds,
                             rev=args.commit)
                    with lock:
                        records.append(r)
                        if sink:
                            sink.write(json.dumps(r) + "\n")
                            sink.flush()
                with lock:
                    done[0] += 1
                    n = done[0]
                if n % 100 == 0:
                    print(f"{n}/{len(rows)} schemas, {time.perf_counter() - t0:.0f} s",
                          file=sys.stderr, flush=True)
        finally:
            for w in workers.values():
                w.close()

    threads = [threading.Thread(target=thread_main) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if sink:
        sink.close()
    for e, why in broken.items():
        print(f"engine {e} unavailable: {why}", file=sys.stderr)
    return records


# ---------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------
def report(records, args, elapsed=None) -> None:
    engines = [e for e in ALL_ENGINES if any(r["engine"] == e for r in records)]
    subsets = sorted({r["subset"] for r in records})
    by = collections.defaultdict(list)
    for r in records:
        by[(r["engine"], r["subset"])].append(r)
    nschemas = {s: max(len(by[(e, s)]) for e in engines) for s in subsets}

    def pct(a, b):
        return f"{a} {100.0 * a / b:5.1f}%" if b else f"{a}    -  "

    width = 15
    limits = sorted({r.get("limit", args.seconds) for r in records})
    revs = sorted({r.get("rev", "?") for r in records})
    print(f"tokenfsm code: {', '.join(revs)}")
    print(f"compile coverage, per-schema limit {'/'.join(f'{x:g}' for x in limits)} s (hard kill at +1 s), "
          f"whitespace/strictness as in the module docstring")
    print(f"{'subset':16} {'schemas':>7} " + " ".join(f"{e:>{width}}" for e in engines))
    tot = collections.Counter()
    for s in subsets:
        cells = []
        for e in engines:
            c = sum(r["status"] == "compiled" for r in by[(e, s)])
            tot[e] += c
            cells.append(f"{pct(c, len(by[(e, s)])):>{width}}")
        print(f"{s:16} {nschemas[s]:7} " + " ".join(cells))
    total = sum(nschemas.values())
    print(f"{'overall':16} {total:7} " + " ".join(f"{pct(tot[e], total):>{width}}" for e in engines))

    print("\noutcomes per engine (all subsets): compiled / unsupported / over budget / error;"
          " median and p90 compile ms of the compiled")
    for e in engines:
        rs = [r for r in records if r["engine"] == e]
        st = collections.Counter(r["status"] for r in rs)
        times = sorted(r["time"] for r in rs if r["status"] == "compiled")
        med = times[len(times) // 2] * 1000 if times else 0.0
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))] * 1000 if times else 0.0
        warned = sum(r["warned"] for r in rs if r["status"] == "compiled")
        first = sum("first mask failed" in (r.get("note") or "") for r in rs)
        empty = sum(r["why"] == "empty language" for r in rs if r["status"] == "compiled")
        extra = f"; of which empty language (unsatisfiable): {empty}" if empty else ""
        extra += f"; compiled with warnings / ignored keywords: {warned}" if warned else ""
        extra += f"; first mask failed: {first}" if first else ""
        print(f"  {e:20} " + " / ".join(f"{st[k]}" for k in STATUSES)
              + f"   median {med:.1f} ms, p90 {p90:.1f} ms{extra}")

    if any(r.get("verdicts") for r in records):
        print("\nsoundness on the compiled schemas' tests: valid accepted / valid, invalid accepted / "
              "invalid (should be 0), schemas with an invalid instance accepted; passing = compiled"
              " and every test right (schemas with tests)")
        for e in engines:
            rs = [r for r in records if r["engine"] == e]
            v = [x for r in rs for x in (r.get("verdicts") or [])]
            va = sum(1 for valid, ok in v if valid and ok)
            vn = sum(1 for valid, _ in v if valid)
            ia = sum(1 for valid, ok in v if not valid and ok)
            inn = sum(1 for valid, _ in v if not valid)
            bad = sum(1 for r in rs if any(not valid and ok for valid, ok in (r.get("verdicts") or [])))
            with_tests = [r for r in rs if r["tests"]]
            passing = sum(1 for r in with_tests if r["status"] == "compiled" and r.get("verdicts")
                          and all(valid == ok for valid, ok in r["verdicts"]))
            print(f"  {e:20} valid {va}/{vn}, invalid accepted {ia}/{inn}, schemas unsound {bad}, "
                  f"passing {passing}/{len(with_tests)}")

    for e in engines:
        cats = collections.Counter(f"{r['status']}: {r['why']}" for r in records
                                   if r["engine"] == e and r["status"] in ("unsupported", "error"))
        if cats:
            print(f"\n{e}: top unsupported / error reasons")
            for why, n in cats.most_common(args.categories):
                print(f"  {n:5}  {why}")

    print()
    for ours, theirs in (("tokenfsm", "llguidance"), ("tokenfsm-lenient", "llguidance"),
                         ("tokenfsm-lenient", "llguidance-lenient")):
        if ours in engines and theirs in engines:
            missed = []
            for s in subsets:
                a = sum(r["status"] == "compiled" for r in by[(ours, s)])
                b = sum(r["status"] == "compiled" for r in by[(theirs, s)])
                if a < b:
                    missed.append(f"{s} {a}<{b}")
            verdict = "MET" if not missed else "MISSED (" + ", ".join(missed) + ")"
            print(f"goal: ours >= llguidance coverage per subset ({ours} vs {theirs}): {verdict}")
    if "tokenfsm-lenient" in engines and "tokenfsm-any" in engines:
        compiled = {e: {r["name"] for r in records if r["engine"] == e
                        and r["status"] == "compiled"} for e in ("tokenfsm-lenient", "tokenfsm-any")}
        why = {r["name"]: f"{r['status']}{': ' + r['why'] if r['why'] else ''}"
               for r in records if r["engine"] == "tokenfsm-any"}
        missed = sorted(compiled["tokenfsm-lenient"] - compiled["tokenfsm-any"])
        print(f"goal: any order compiles every schema schema order compiles (tokenfsm-any vs "
              f"tokenfsm-lenient): {'MET' if not missed else f'MISSED ({len(missed)})'}")
        for name in missed[:args.categories * 5]:
            print(f"  {name}: {why.get(name, 'not run')}")
    if elapsed is not None:
        print(f"\ntotal {elapsed:.0f} s, {total} schemas, engines: {', '.join(engines)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="/work/shared/corpora/maskbench")
    ap.add_argument("--subsets", default="", help="comma-separated subset names (default: all)")
    ap.add_argument("--limit", type=int, default=None, help="schemas per subset")
    ap.add_argument("--start", type=int, default=0,
                    help="schemas skipped at the start of each subset (to split a run)")
    ap.add_argument("--seconds", type=float, default=3.0, help="compile limit per schema, every engine")
    ap.add_argument("--test-seconds", type=float, default=30.0,
                    help="limit for judging one schema's test instances")
    ap.add_argument("--jobs", type=int, default=1, help="schemas compiled at once")
    ap.add_argument("--engines", default=",".join(ALL_ENGINES))
    ap.add_argument("--mem-gb", type=float, default=8.0, help="address-space cap per worker (0: none)")
    ap.add_argument("--no-tests", action="store_true", help="coverage only, no soundness check")
    ap.add_argument("--records", default="", help="write one JSON line per (engine, schema)")
    ap.add_argument("--from-records", default="", help="comma-separated record files: tables only")
    ap.add_argument("--categories", type=int, default=6, help="reasons shown per engine")
    ap.add_argument("--rev", default="HEAD",
                    help="git revision of tokenfsm to measure ('worktree': the live working tree)")
    args = ap.parse_args(argv)
    if args.from_records:
        records = []
        for p in args.from_records.split(","):
            with open(p) as fh:
                records += [json.loads(line) for line in fh if line.strip()]
        report(records, args)
        return 0
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in ALL_ENGINES:
            ap.error(f"unknown engine {e!r}; one of {', '.join(ALL_ENGINES)}")
    engines.sort(key=ALL_ENGINES.index)
    args.code_dir, args.commit = snapshot(args.rev)
    if args.code_dir:
        sys.path.insert(0, args.code_dir)
    names = {s for s in args.subsets.split(",") if s}
    rows = load_subsets(Path(args.corpora), names, args.limit, args.start)
    t0 = time.perf_counter()
    records = run(rows, engines, args)
    report(records, args, time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
