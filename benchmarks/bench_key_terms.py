"""Objects in any order whose alternatives differ only in the keys they require and forbid.

Run::

    python benchmarks/bench_key_terms.py [--repeats 5] [--props 6]

Per form (``anyOf``/``oneOf`` of ``required`` lists, ``if``/``then``, ``dependentRequired``,
``not: {required}``) and with undeclared keys allowed or not, an object of ``--props`` string
properties is compiled with ``property_order="any"`` and ``whitespace=0`` two ways in the same
run: the default route (one key set, a term per alternative: :mod:`tokenfsm.schema.lower_lazy`)
and the flat route (``Tuning(lazy_states=None)``: each alternative an object of its own, then
their union). Every compile uses property names not seen before in the process, so no cache of
an earlier compile answers it; medians over ``--repeats`` and the ratio flat / key set.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
import warnings

FORMS = {
    "anyOf required": lambda p: {"anyOf": [{"required": [p[0]]}, {"required": [p[1]]}]},
    "oneOf required": lambda p: {"oneOf": [{"required": [p[0]]}, {"required": [p[1]]}]},
    "if/then": lambda p: {"if": {"required": [p[0]]}, "then": {"required": [p[1]]}},
    "dependentRequired": lambda p: {"dependentRequired": {p[0]: [p[1], p[2]]}},
    "not required": lambda p: {"not": {"required": [p[0], p[1]]}},
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--props", type=int, default=6)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    from tokenfsm.schema.compiler import compile_tuned
    from tokenfsm.schema.tuning import DEFAULT_TUNING, Tuning

    fresh = itertools.count()

    def seconds(form, tuning, extra_keys: bool) -> float:
        tag = f"n{next(fresh)}_"
        names = [f"{tag}{i}" for i in range(args.props)]
        schema = {"type": "object", "properties": {n: {"type": "string"} for n in names},
                  **FORMS[form](names)}
        t = time.perf_counter()
        compile_tuned(schema, tuning, whitespace=0, property_order="any",
                      allow_extra_keys=extra_keys)
        return time.perf_counter() - t

    seconds("anyOf required", DEFAULT_TUNING, True)        # imports and shared pieces
    seconds("anyOf required", Tuning(lazy_states=None), True)
    print(f"{'form':20s} {'extra keys':>10s} {'key set ms':>11s} {'flat ms':>9s} {'ratio':>7s}")
    for form in FORMS:
        for extra_keys in (True, False):
            lazy = statistics.median(seconds(form, DEFAULT_TUNING, extra_keys)
                                     for _ in range(args.repeats))
            flat = statistics.median(seconds(form, Tuning(lazy_states=None), extra_keys)
                                     for _ in range(args.repeats))
            print(f"{form:20s} {str(extra_keys):>10s} {lazy * 1e3:11.1f} {flat * 1e3:9.1f} "
                  f"{flat / lazy:7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
