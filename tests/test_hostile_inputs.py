"""Nothing a caller sends takes the process down: every hostile input ends in a result or a typed
error, within 5 s and 2 GiB, never a raw exception, an out-of-memory, a crash or a hang.

The fixed cases are data (:mod:`hostile_cases`); hypothesis adds random schemas, regexes and option
values. Every input runs in a worker process (:mod:`hostile_worker`) limited to 2 GiB of address
space, one input at a time with a 20 s timeout: a crash or a hang ends that worker only, is
recorded against the input it was running, and a fresh worker takes the rest. Two workers share
the fixed cases.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostile_cases import CASES

WORKER = Path(__file__).with_name("hostile_worker.py")
TIMEOUT = 20.0          # seconds before an input counts as a hang
ERROR_SECONDS = 5.0     # a typed error must come within this
START_TIMEOUT = 120.0   # a fresh worker imports numpy and numba


class Worker:
    """One worker process; :meth:`run` sends an expression and classifies what comes back."""

    def __init__(self, tmp: str):
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   NUMBA_NUM_THREADS="1", TMPDIR=tmp, PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env, bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        self.stderr_tail: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        first = self._next(START_TIMEOUT)
        if first is None or not json.loads(first).get("ready"):
            raise RuntimeError(f"hostile worker did not start: {''.join(self.stderr_tail)[-2000:]}")

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_tail = (self.stderr_tail + [line])[-40:]

    def _next(self, timeout):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def run(self, code: str) -> dict:
        """The worker's answer, or ``{"outcome": "hang" | "crash", ...}`` (the worker is then
        dead and must be replaced)."""
        t0 = time.perf_counter()
        try:
            self.proc.stdin.write(json.dumps({"id": 0, "code": code}) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return {"outcome": "crash", "message": "worker gone", "seconds": 0.0}
        line = self._next(TIMEOUT)
        if line is None:
            alive = self.proc.poll() is None
            self.kill()
            rc = self.proc.returncode
            if alive:
                return {"outcome": "hang", "seconds": time.perf_counter() - t0}
            return {"outcome": "oom" if _is_oom(rc, self.stderr_tail) else "crash", "returncode": rc,
                    "message": "".join(self.stderr_tail)[-1500:], "seconds": time.perf_counter() - t0}
        return json.loads(line)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()


def _is_oom(returncode, stderr_tail) -> bool:
    text = "".join(stderr_tail)
    return "MemoryError" in text or "std::bad_alloc" in text or "Cannot allocate memory" in text


def verdict(case, answer: dict) -> str | None:
    """None if ``answer`` is what ``case`` allows, else why not."""
    outcome = answer["outcome"]
    if outcome == "ok":
        return None if case.ok else f"returned {answer.get('value')!r}; expected an error"
    if outcome == "error":
        if not set(answer["bases"]) & set(case.errors):
            return f"raw {answer['type']}: {answer['message']}"
        if answer["seconds"] > ERROR_SECONDS:
            return f"typed error after {answer['seconds']:.1f} s (over {ERROR_SECONDS:g} s)"
        return None
    return f"{outcome}: {answer.get('message', '')}"[:600]


class Pool:
    """Workers that run inputs one at a time, replaced when they crash or hang."""

    def __init__(self, tmp: str):
        self.tmp = tmp
        self.worker: Worker | None = None

    def run(self, code: str) -> dict:
        if self.worker is None or not self.worker.alive:
            self.worker = Worker(self.tmp)
        answer = self.worker.run(code)
        if answer["outcome"] in ("hang", "crash", "oom") and not self.worker.alive:
            self.worker = None
        return answer

    def close(self):
        if self.worker is not None:
            self.worker.close()


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """Every fixed case's answer, from two workers running half the table each."""
    tmp = str(tmp_path_factory.mktemp("hostile"))
    todo: queue.Queue = queue.Queue()
    for case in CASES:
        todo.put(case)
    out: dict[str, dict] = {}

    def serve():
        pool = Pool(tmp)
        try:
            while True:
                try:
                    case = todo.get_nowait()
                except queue.Empty:
                    return
                out[case.name] = pool.run(case.code)
        finally:
            pool.close()

    threads = [threading.Thread(target=serve) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(answers, case):
    problem = verdict(case, answers[case.name])
    assert problem is None, problem


def test_summary(answers, capsys):
    """The campaign's figures, printed with ``-s``: outcomes and the slowest typed error."""
    counts = Counter()
    for case in CASES:
        a = answers[case.name]
        kind = ("pass" if verdict(case, a) is None else a["outcome"] if a["outcome"] != "error"
                else "raw exception" if not set(a["bases"]) & set(case.errors) else "slow error")
        counts[kind] += 1
    slowest = max((a["seconds"] for a in answers.values() if a["outcome"] == "error"), default=0.0)
    with capsys.disabled():
        print(f"\nhostile inputs: {len(CASES)} cases, {dict(counts)}, slowest error {slowest:.2f} s")
    assert sum(counts.values()) == len(CASES)


# -- generated inputs -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    p = Pool(str(tmp_path_factory.mktemp("hostile-gen")))
    yield p
    p.close()


_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                          st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6))
_KEYWORDS = ["type", "properties", "items", "enum", "const", "minLength", "maxLength", "pattern",
             "minimum", "maximum", "multipleOf", "required", "additionalProperties", "anyOf",
             "allOf", "oneOf", "not", "$ref", "$defs", "minItems", "maxItems", "format",
             "contains", "minContains", "uniqueItems", "prefixItems", "if", "then", "else",
             "dependentRequired", "propertyNames", "patternProperties", "$schema"]
_TYPES = st.sampled_from(["string", "integer", "number", "object", "array", "boolean", "null", "x"])


def _schemas():
    values = st.recursive(
        _json_scalars | _TYPES,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
            st.sampled_from(_KEYWORDS) | st.text(max_size=3), inner, max_size=4),
        max_leaves=12)
    return st.dictionaries(st.sampled_from(_KEYWORDS), values, max_size=5)


def _regexes():
    atoms = st.sampled_from(["a", "b", ".", r"\w", r"\s", "[a-c]", "[^x]", "é", r"\d", "(?:ab|c)",
                             "^", "$", r"\b", "(", ")", "[", "|", "*", "+", "?", "{2,3}", "{1000}",
                             "{0,100000}", r"\1", "(?<=a)", "(?=b)", "(?i)", r"\p{L}", "\\"])
    return st.lists(atoms, max_size=10).map("".join)


def _check_generated(pool, code, ok_errors=("TokenfsmError",)):
    from hostile_cases import Case

    case = Case("generated", code, ok_errors, ok=True)
    answer = pool.run(code)
    problem = verdict(case, answer)
    assert problem is None, f"{code}\n{problem}"


@settings(max_examples=40)
@given(schema=_schemas())
def test_generated_schemas(pool, schema):
    _check_generated(pool, f"compile_json_schema({schema!r})")


@settings(max_examples=40)
@given(pattern=_regexes(), flags=st.sampled_from([0, 2, 16, 64]))
def test_generated_regexes(pool, pattern, flags):
    _check_generated(pool, f"DFA.from_regex({pattern!r}, {flags})")


@settings(max_examples=40)
@given(pattern=_regexes())
def test_generated_ecma_patterns(pool, pattern):
    _check_generated(pool, f'compile_json_schema({{"type": "string", "pattern": {pattern!r}}})')


_option_values = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**10), st.floats(),
                           st.text(max_size=4), st.lists(st.text(max_size=3), max_size=3),
                           st.just("Budget(max_states=50)"))


@settings(max_examples=40)
@given(option=st.sampled_from(["whitespace", "excludes", "strict", "allow_extra_keys",
                               "property_order", "max_depth", "budget", "recursion"]),
       value=_option_values)
def test_generated_option_values(pool, option, value):
    shown = value if value == "Budget(max_states=50)" else repr(value)
    _check_generated(pool, f'compile_json_schema({{"type": "object", "properties": {{"a": '
                           f'{{"type": "string"}}}}}}, {option}={shown})',
                     ("TokenfsmError", "TypeError", "ValueError"))


@settings(max_examples=30)
@given(parts=st.lists(st.one_of(st.text(max_size=5), _regexes().map(lambda r: f"Slot({r!r})")),
                      max_size=4),
       forbidden=st.one_of(st.text(max_size=4), st.lists(st.text(max_size=4), max_size=3)))
def test_generated_templates(pool, parts, forbidden):
    shown = "[" + ", ".join(p if p.startswith("Slot(") else repr(p) for p in parts) + "]"
    _check_generated(pool, f"compile_template({shown}, forbidden={forbidden!r})",
                     ("TokenfsmError", "TypeError"))
