"""Blowup of each tool-call style: automaton sizes with and without string exclusions.

Run: ``python benchmarks/blowup_styles.py [--corpus PATH] [--limit N] [--names a,b]``.
For a few function-calling schemas (Glaive, from JSONSchemaBench; by default read from the shared
corpora folder next to the repository) it compiles one tool call in every style of
:mod:`tokenfsm.schema.toolcalls`, once without exclusions and once with the Kimi-K3 control
markers excluded, and prints live states and rule alternatives (``DFA.rule_count``, the unit
grammar blowup is counted in), the growth factor in rules, and the compile time.

Without exclusions the XML styles still exclude their own value terminator from raw values, so
the first column already pays for that; the second adds the three markers to every string.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import time
import warnings
from pathlib import Path

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "maskbench" / "Glaiveai2K.jsonl.gz"
DEFAULT_NAMES = ("generate_password", "send_email", "search_hotels", "create_invoice",
                 "schedule_meeting")
EXCLUDES = ("<|open|>", "<|close|>", "<|sep|>")


def load(corpus: Path, names: tuple[str, ...], limit: int) -> list[tuple[str, dict]]:
    """First schema of each wanted function name (``limit`` of them)."""
    out: dict[str, dict] = {}
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            base = re.sub(r"_[0-9a-f]{8}$", "", row["name"].split("---")[-1])
            if base in names and base not in out:
                out[base] = row["schema"]
    return [(n, out[n]) for n in names if n in out][:limit]


def measure(name: str, schema: dict, style: str, excludes) -> tuple[int, int, float] | str:
    from tokenfsm.automata import BudgetExceeded
    from tokenfsm.schema import SchemaError, compile_tool_calls

    t0 = time.perf_counter()
    try:
        c = compile_tool_calls([{"name": name, "parameters": schema}], style=style, excludes=excludes,
                               strict=False)
    except (SchemaError, BudgetExceeded) as e:
        return type(e).__name__
    return c.dfa.num_states, c.dfa.rule_count, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--names", default=",".join(DEFAULT_NAMES),
                    help="comma-separated Glaive function names")
    ap.add_argument("--limit", type=int, default=len(DEFAULT_NAMES))
    args = ap.parse_args()
    from tokenfsm.schema import STYLES

    warnings.simplefilter("ignore")
    rows = load(args.corpus, tuple(args.names.split(",")), args.limit)
    head = (f"{'schema':<18} {'style':<12} {'states':>7} {'rules':>7} {'states+x':>9} {'rules+x':>8} "
            f"{'x rules':>8} {'s':>6}")
    print(f"excludes = {list(EXCLUDES)}")
    print(head)
    print("-" * len(head))
    for name, schema in rows:
        for style in STYLES:
            plain = measure(name, schema, style, ())
            excl = measure(name, schema, style, EXCLUDES)
            if isinstance(plain, str) or isinstance(excl, str):
                print(f"{name:<18} {style:<12} {plain if isinstance(plain, str) else '':>7} "
                      f"{excl if isinstance(excl, str) else '':>9}")
                continue
            factor = excl[1] / plain[1]
            print(f"{name:<18} {style:<12} {plain[0]:>7} {plain[1]:>7} {excl[0]:>9} {excl[1]:>8} "
                  f"{factor:>7.2f}x {plain[2] + excl[2]:>6.2f}")


if __name__ == "__main__":
    main()
