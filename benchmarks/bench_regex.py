"""Regex compilation speed: tokenfsm's DFA.from_regex against interegular.

For each pattern, prints our minimal DFA's live states and compile time (``DFA.from_regex``,
parsing, subset construction and minimisation included), interegular's state counts and times for
``parse_pattern(p).to_fsm()`` and for the same plus ``.reduce()`` (its minimisation, which outlines
applies before use), and the ratio of our time to each. Times are medians of several runs in the
same process; every pattern is compiled once before timing.

Usage::

    python benchmarks/bench_regex.py [--repeat N] [--only NAME] [--check]

``--check`` also converts interegular's FSM with ``DFA.from_interegular`` and reports whether both
libraries agree on the language.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import interegular

from tokenfsm.automata import DFA

# ------------------------------------------------------------------------------------------------
# JSON-Schema-style building blocks, as outlines' build_regex_from_schema writes them.
WS = r"[ ]?"
STRING_INNER = r'([^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})'
STRING = f'"{STRING_INNER}*"'
INTEGER = r"(-)?(0|[1-9][0-9]*)"
NUMBER = r"((-)?(0|[1-9][0-9]*))(\.[0-9]+)?([eE][+-][0-9]+)?"
BOOLEAN = r"(true|false)"
NULL = r"null"
DATE = r'"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"'
DATE_TIME = (r'"(-?([1-9][0-9]*)?[0-9]{4})-(1[0-2]|0[1-9])-(3[01]|0[1-9]|[12][0-9])'
             r'T(2[0-3]|[01][0-9]):([0-5][0-9]):([0-5][0-9])(\.[0-9]{3})?(Z|[+-](2[0-3]|[01][0-9]):[0-5][0-9])?"')
UUID = r'"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"'
EMAIL_STR = r'"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}"'


def bounded_string(lo: int, hi: int) -> str:
    return f'"{STRING_INNER}{{{lo},{hi}}}"'


def array_of(item: str, max_items: int | None = None) -> str:
    more = f"({WS},{WS}{item})" + ("*" if max_items is None else f"{{0,{max_items - 1}}}")
    return rf"\[{WS}(({item}){more})?{WS}\]"


def enum(*values: str) -> str:
    return "(" + "|".join(f'"{v}"' for v in values) + ")"


def obj(required: list[tuple[str, str]], optional: list[tuple[str, str]] = ()) -> str:
    """An object with required properties in order, then optional ones each present or not."""
    parts = [f'{WS}"{name}"{WS}:{WS}{value}' for name, value in required]
    body = f"{WS},".join(parts)
    for name, value in optional:
        body += f'({WS},{WS}"{name}"{WS}:{WS}{value})?'
    return rf"\{{{body}{WS}\}}"


def json_object_pattern() -> str:
    address = obj([("street", bounded_string(1, 80)), ("city", STRING), ("zip", r'"[0-9]{5}(-[0-9]{4})?"')],
                  [("country", enum("US", "CA", "GB", "DE", "FR", "JP"))])
    return obj(
        [("id", INTEGER), ("uuid", UUID), ("name", bounded_string(1, 50)), ("email", EMAIL_STR),
         ("age", INTEGER), ("score", NUMBER), ("active", BOOLEAN),
         ("status", enum("draft", "pending", "approved", "rejected", "archived")),
         ("tags", array_of(STRING, 5)), ("address", address), ("created", DATE_TIME),
         ("birthday", DATE), ("phone", r'"\+?[0-9]{1,3}[ -]?[0-9]{3}[ -]?[0-9]{3}[ -]?[0-9]{4}"'),
         ("priority", "(1|2|3|4|5)")],
        [("nickname", f"({STRING}|{NULL})"), ("ratings", array_of(NUMBER)), ("updated", DATE_TIME),
         ("website", r'"https?://[a-zA-Z0-9.-]+(/[a-zA-Z0-9._~%-]*)*"')],
    )


CASES = {
    "json_string": r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"',
    "iso_date": r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])",
    "iso_datetime": DATE_TIME[1:-1],
    "email": r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}",
    "url": (r"https?://([a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}(:[0-9]{1,5})?"
            r"(/[a-zA-Z0-9._~%!$&'()*+,;=:@-]*)*(\?[a-zA-Z0-9._~%!$&'()*+,;=:@/?-]*)?(#[a-zA-Z0-9._~%!$&'()*+,;=:@/?-]*)?"),
    "any_0_256": r"[\s\S]{0,256}",
    "json_object": json_object_pattern(),
}


def median_ms(fn, repeat: int, budget_s: float = 20.0) -> float:
    times = []
    start = time.perf_counter()
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
        if time.perf_counter() - start > budget_s and len(times) >= 3:
            break
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", action="append")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    names = args.only or list(CASES)
    header = (f"{'case':<14}{'len':>6}{'states':>8}{'ms':>10}{'ig states':>11}{'ig reduced':>12}"
              f"{'ig ms':>10}{'ig+red ms':>11}{'ratio':>8}{'ratio+red':>11}")
    if args.check:
        header += "  same"
    print(header)
    print("-" * len(header))
    for name in names:
        p = CASES[name]
        ours = DFA.from_regex(p)
        fsm = interegular.parse_pattern(p).to_fsm()
        reduced = fsm.reduce()
        ms = median_ms(lambda: DFA.from_regex(p), args.repeat)
        ig_ms = median_ms(lambda: interegular.parse_pattern(p).to_fsm(), args.repeat)
        ig_red_ms = median_ms(lambda: interegular.parse_pattern(p).to_fsm().reduce(), args.repeat)
        line = (f"{name:<14}{len(p):>6}{ours.num_states:>8}{ms:>10.2f}{len(fsm.states):>11}"
                f"{len(reduced.states):>12}{ig_ms:>10.2f}{ig_red_ms:>11.2f}{ms / ig_ms:>8.2f}"
                f"{ms / ig_red_ms:>11.2f}")
        if args.check:
            line += f"  {DFA.from_interegular(reduced) == ours}"
        print(line, flush=True)
    print("\nstates: live states of our minimal DFA (no dead state); ig states / ig reduced: "
          "len(fsm.states) after to_fsm() / after .reduce(); ratio: our ms / interegular ms "
          "(< 1 means we are faster).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
