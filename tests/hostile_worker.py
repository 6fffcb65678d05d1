"""The process that runs hostile inputs for :mod:`test_hostile_inputs`, one at a time.

It limits its own address space (``RLIMIT_AS``, 2 GiB by default), then reads one JSON request per
line on stdin -- ``{"id": ..., "code": <a Python expression>}`` -- and answers each with one JSON
line on stdout, *before* reading the next:

    {"id": ..., "outcome": "ok" | "error" | "oom", "type": <exception class path>,
     "bases": [<its classes>], "message": ..., "seconds": ..., "value": <repr of the result>}

A crash or a hang shows as no answer: the runner, which knows which request was running, kills
and replaces the process. The expression is evaluated in :data:`NAMESPACE`: the public entry points
and the helpers of :mod:`hostile_helpers` (``nan`` and ``inf`` stand for the floats).
"""

import gc
import json
import os
import resource
import sys
import time
import traceback
import warnings

LIMIT = int(os.environ.get("TOKENFSM_HOSTILE_AS_BYTES", 2 << 30))


def _limit_memory():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = LIMIT if hard == resource.RLIM_INFINITY else min(LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def main():
    _limit_memory()
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(1000)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hostile_helpers

    namespace = dict(vars(hostile_helpers))
    out = sys.stdout
    print(json.dumps({"ready": True}), file=out, flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        gc.collect()
        t0 = time.perf_counter()
        answer = {"id": req["id"]}
        value = None
        try:
            value = eval(req["code"], namespace)  # noqa: S307 - the test's own case table
            answer.update(outcome="ok", value=repr(value)[:200])
        except MemoryError as e:
            answer.update(outcome="oom", type="MemoryError", bases=["MemoryError"], message=str(e)[:300])
        except BaseException as e:  # noqa: BLE001 - classified by the runner
            answer.update(outcome="error", type=f"{type(e).__module__}.{type(e).__qualname__}",
                          bases=[c.__name__ for c in type(e).__mro__],
                          message=str(e)[:300],
                          where="".join(traceback.format_tb(e.__traceback__, limit=-2))[-600:])
        answer["seconds"] = time.perf_counter() - t0
        value = None
        print(json.dumps(answer), file=out, flush=True)


if __name__ == "__main__":
    main()
