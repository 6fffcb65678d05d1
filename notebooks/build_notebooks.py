"""Write (and optionally execute) the research notebooks in this folder.

The notebooks measure how constrained-decoding grammars grow: string exclusions against length
bounds, free key order, unbounded whitespace under a model that likes spaces, the cost of the
token index, and recursion unrolled against a stack automaton. Each one is kept here as a list of cells so that it can be reviewed as code and
regenerated; the ``.ipynb`` files are committed with their outputs.

Example
-------
Regenerate every notebook and run it in place (outputs included)::

    python notebooks/build_notebooks.py --execute

or only some of them::

    python notebooks/build_notebooks.py --execute 01 03

The cells use the public API only (``tokenfsm.automata``, ``tokenfsm.schema``, ``tokenfsm.masks``)
and size their sweeps so that all the notebooks run in a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

# Shared first code cell: imports and a compact plotting style.
SETUP = """\
import time, tracemalloc
import numpy as np
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

plt.rcParams.update({"figure.figsize": (10, 3.6), "axes.grid": True, "grid.alpha": 0.3})"""


def md(text: str):
    return new_markdown_cell(text.strip("\n"))


def code(text: str):
    return new_code_cell(text.strip("\n"))


# --------------------------------------------------------------------------------------------
# 01: exclusions against length bounds
# --------------------------------------------------------------------------------------------
def notebook_01() -> list:
    return [
        md(r"""
# String exclusions against length bounds

**Question.** A tool-calling grammar forbids some substrings inside string arguments (the chat
template's markers: `<|im_end|>`, `<tool_call>`, `</parameter>`), so that a model cannot close its
turn or open a new call from inside an argument. Schemas also carry `maxLength`. How big does the
automaton get when both hold, and how does that compare with dropping the length bound?

**Method.** For 1 to 3 markers and `maxLength` *n* from 8 to 256 we build
`[\s\S]{0,n}` ∩ `excluding(markers)` with `tokenfsm.automata`, and count live states and rules
(the alternatives of `to_rules()`, the unit in which grammar size is usually reported). Each point
is timed and its peak Python allocation is taken with `tracemalloc`. The baseline is the unbounded
filtered string, `excluding(markers)` alone. A second sweep repeats this for the real JSON string
automaton (`json_string(string_value(max_length=n), excludes=...)`), where every character may also
be written as an escape.
"""),
        code(SETUP + """
from tokenfsm.automata import DFA
from tokenfsm.schema.strings import json_string, string_value

MARKERS = ["<|im_end|>", "<tool_call>", "</parameter>"]
LENGTHS = [8, 16, 32, 64, 128, 256]"""),
        md("## Bounded value automaton ∩ exclusions"),
        code("""
def measure(build, memory=True):
    # build once for the time, once more under tracemalloc for the peak (tracing slows Python down)
    t0 = time.perf_counter()
    d = build()
    seconds = time.perf_counter() - t0
    out = dict(states=d.num_states, rules=d.rule_count, seconds=seconds)
    if memory:
        tracemalloc.start()
        build()
        out["peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return out

measure(lambda: DFA.from_regex(r"[\\s\\S]{0,4}") & DFA.excluding(["ab"]))  # warm-up: imports, caches

rows = []
for k in (1, 2, 3):
    excl = DFA.excluding(MARKERS[:k])
    base = dict(states=excl.num_states, rules=excl.rule_count)
    for n in LENGTHS:
        r = measure(lambda: DFA.from_regex(r"[\\s\\S]{0,%d}" % n).intersect(excl))
        rows.append(dict(k=k, n=n, unbounded_states=base["states"], unbounded_rules=base["rules"], **r))

print(f"{'markers':>7} {'maxLen':>6} {'states':>7} {'rules':>7} {'unbounded':>10} {'seconds':>8} {'peak MiB':>9}")
for r in rows:
    print(f"{r['k']:>7} {r['n']:>6} {r['states']:>7} {r['rules']:>7} "
          f"{r['unbounded_states']:>4} st/{r['unbounded_rules']:>3} r {r['seconds']:>8.3f} {r['peak_mib']:>9.1f}")"""),
        code("""
fig, axes = plt.subplots(1, 3)
for k in (1, 2, 3):
    pts = [r for r in rows if r["k"] == k]
    ns = [r["n"] for r in pts]
    axes[0].plot(ns, [r["states"] for r in pts], "o-", label=f"{k} marker(s), bounded")
    axes[0].axhline(pts[0]["unbounded_states"], ls="--", lw=1, color=f"C{k-1}")
    axes[1].plot(ns, [r["rules"] for r in pts], "o-", label=f"{k} marker(s)")
    axes[1].axhline(pts[0]["unbounded_rules"], ls="--", lw=1, color=f"C{k-1}")
    axes[2].plot(ns, [r["seconds"] for r in pts], "o-", label=f"{k} marker(s)")
axes[0].set(title="live states", xlabel="maxLength", yscale="log")
axes[1].set(title="rules (to_rules alternatives)", xlabel="maxLength", yscale="log")
axes[2].set(title="build time [s]", xlabel="maxLength")
axes[0].legend(fontsize=8)
fig.suptitle("[\\\\s\\\\S]{0,n} ∩ excluding(markers); dashed: excluding(markers) alone (no bound)")
fig.tight_layout()"""),
        code("""
fig, ax = plt.subplots(figsize=(5, 3.4))
for k in (1, 2, 3):
    pts = [r for r in rows if r["k"] == k]
    ax.plot([r["n"] for r in pts], [r["peak_mib"] for r in pts], "o-", label=f"{k} marker(s)")
ax.set(title="peak allocation while building (tracemalloc)", xlabel="maxLength", ylabel="MiB")
ax.legend(fontsize=8);"""),
        md(r"""
## The JSON string automaton

What the schema compiler really builds: the quoted JSON text whose decoded value has at most *n*
characters, with the markers excluded from the text between the quotes. Escapes (`\n`, `\uXXXX`,
surrogate pairs) make each character a small automaton of its own, so the bound multiplies a bigger
unit.
"""),
        code("""
json_rows = []
for k in (1, 2):
    for n in [None] + LENGTHS:
        r = measure(lambda: json_string(string_value(max_length=n), excludes=MARKERS[:k]), memory=False)
        json_rows.append(dict(k=k, n=n, **r))
print(f"{'markers':>7} {'maxLen':>6} {'states':>7} {'rules':>7} {'seconds':>8}")
for r in json_rows:
    print(f"{r['k']:>7} {str(r['n']):>6} {r['states']:>7} {r['rules']:>7} {r['seconds']:>8.3f}")

fig, ax = plt.subplots(figsize=(6, 3.4))
for k in (1, 2):
    pts = [r for r in json_rows if r["k"] == k and r["n"] is not None]
    free = next(r for r in json_rows if r["k"] == k and r["n"] is None)
    ax.plot([r["n"] for r in pts], [r["states"] for r in pts], "o-", label=f"{k} marker(s), maxLength n")
    ax.axhline(free["states"], ls="--", lw=1, color=f"C{k-1}", label=f"{k} marker(s), no maxLength")
ax.set(title="JSON string text: live states", xlabel="maxLength", yscale="log")
ax.legend(fontsize=8);"""),
        md("## What the numbers say"),
        code("""
def at(k, n, table=rows):
    return next(r for r in table if r["k"] == k and r["n"] == n)

big = at(3, 256)
slope = {k: (at(k, 256)["states"] - at(k, 128)["states"]) / 128 for k in (1, 2, 3)}
jb, jf = at(2, 256, json_rows), at(2, None, json_rows)
display(Markdown(f'''
* Without a bound the filtered string is tiny: {at(1, 8)["unbounded_states"]}, {at(2, 8)["unbounded_states"]} and
  {at(3, 8)["unbounded_states"]} states for 1, 2 and 3 markers, whatever the length.
* With `maxLength` the product is the bound times the marker automaton: each extra character costs about
  {slope[1]:.0f}, {slope[2]:.0f} and {slope[3]:.0f} states (1, 2, 3 markers). At `[\\\\s\\\\S]{{0,256}}` with 3 markers:
  **{big["states"]:,} states and {big["rules"]:,} rules**, {big["states"] / big["unbounded_states"]:.0f}× the unbounded
  filtered string, built in {big["seconds"]:.1f} s with a {big["peak_mib"]:.1f} MiB allocation peak.
* The JSON string text with 2 markers: {jf["states"]} states without a bound, **{jb["states"]:,}** with `maxLength` 256
  ({jb["states"] / jf["states"]:.0f}×).
'''))"""),
        md(r"""
**Why dropping the bound is the right default.** The exclusion is what keeps a constrained model
inside its turn: if it is lost, the model can close the chat template from inside a string argument.
The length bound protects nothing of the kind; it is a property of the value that a validator can
check after decoding, and that a `max_tokens` limit already caps in practice. Yet keeping it turns
an automaton of a few dozen states into one of thousands, growing linearly in `maxLength` with a
slope set by the marker automaton (roughly one copy of the marker automaton per allowed character),
and every one of those states is a row of the token index (see `04_token_index`). So the sensible
default is to keep exclusions exact in the grammar and leave large length bounds to the validator,
while small bounds (short codes, fixed-width identifiers) stay cheap enough to keep.
"""),
        md(r"""
## Counting instead of copying

Everything above is the *flat* construction: the count of characters is spelled out as states,
one copy of the marker automaton per allowed character. A lazy network (`tokenfsm.automata.network`)
keeps the count in the matcher's configuration instead: `tokenfsm.schema.lazy_json.string_piece`
is the JSON string body with the exclusions carried from character to character, a mark after
each character that ticks a count, and the bounds checked by the walk (a frame may move only while
some continuation still ends within `0..maxLength`). Its size no longer depends on `maxLength`.
The language is the same: where the flat automaton is small enough to build, the network's
expansion is checked equal to it below.
"""),
        code("""
from tokenfsm.automata.network import Network
from tokenfsm.schema.lazy_json import string_piece

lazy_rows = []
for k in (1, 2, 3):
    for n in LENGTHS + [5000, 10**9]:
        t0 = time.perf_counter()
        net = Network()
        lb = net.build(string_piece(net, 0, n, MARKERS[:k]))
        lazy_rows.append(dict(k=k, n=n, states=lb.num_states, seconds=time.perf_counter() - t0))
for k in (1, 2):                      # the same language as the flat automaton
    for n in (8, 32):
        net = Network()
        p = string_piece(net, 0, n, MARKERS[:k])
        assert net.to_dfa(p) == json_string(string_value(max_length=n), excludes=MARKERS[:k])
print(f"{'markers':>7} {'maxLen':>10} {'byte states':>11} {'seconds':>8}")
for r in lazy_rows:
    print(f"{r['k']:>7} {r['n']:>10} {r['states']:>11} {r['seconds']:>8.3f}")

fig, ax = plt.subplots(figsize=(6, 3.4))
for k in (1, 2):
    flat = [r for r in json_rows if r["k"] == k and r["n"] is not None]
    ax.plot([r["n"] for r in flat], [r["states"] for r in flat], "o-", color=f"C{k-1}",
            label=f"{k} marker(s), flat (code-point states)")
    lazy = [r for r in lazy_rows if r["k"] == k]
    ax.plot([r["n"] for r in lazy], [r["states"] for r in lazy], "s--", color=f"C{k-1}",
            label=f"{k} marker(s), counted (byte states)")
ax.set(title="JSON string text with maxLength n", xlabel="maxLength", xscale="log", yscale="log")
ax.legend(fontsize=8)
plt.show()
three = [r for r in lazy_rows if r["k"] == 3]
sizes = " or ".join(str(x) for x in sorted({r["states"] for r in three}))
display(Markdown(f'''
* Counted, the JSON string with 3 markers has **{sizes} byte states for every `maxLength` from 8
  to 10**9**, built in at most
  {max(r["seconds"] for r in three) * 1e3:.0f} ms; flat, 2 markers and `maxLength` 256 took
  {at(2, 256, json_rows)["states"]:,} code-point states.
'''))"""),
        md(r"""
## From the schema compiler

`compile_json_schema` now makes this choice per node: a string whose bounded product with the
exclusions is small (under `LAZY_STATES`) is built flat and exact; a larger one becomes a counted
piece called from the flat automaton around it (here, an object with one string property), and
`IndexCompiler.json_schema` indexes the network. (Where a product forces a string flat, the
bounds are kept while the product stays under `EXCLUDED_BOUNDS_STATES`.) Below: compile time, the route
taken, the first mask on Qwen's vocabulary, and sampled documents checked with `jsonschema` and
for the markers.
"""),
        code(r"""import json, warnings
import jsonschema
from tokenfsm.masks import IndexCompiler, Matcher, allocate_token_bitmask
from tokenfsm.masks.builtin_vocab import load_vocabulary
from tokenfsm.masks.sampling import sample_documents
from tokenfsm.schema import compile_json_schema
from tokenfsm.schema.lower_lazy import LAZY_STATES

vocab = load_vocabulary("qwen")
compiler = IndexCompiler(vocab)
Matcher(compiler.json_schema({"type": "string", "maxLength": 10**6}))   # warm-up: kernels
schema_rows = []
for n in (8, 64, 256, 5000, 65535, 10**9):
    schema = {"type": "object", "properties": {"note": {"type": "string", "minLength": 1,
                                                        "maxLength": n}}, "required": ["note"]}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cs = compile_json_schema(schema, excludes=MARKERS, whitespace=0)
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = compiler.json_schema(schema, excludes=MARKERS, whitespace=0)
    m, bm = Matcher(index), allocate_token_bitmask(1, vocab.size)
    m.fill_next_token_bitmask(bm, 0)
    t_first = time.perf_counter() - t0
    docs = [r.text for r in sample_documents(index, 3, seed=1, max_tokens=40) if r.finished]
    for d in docs:
        jsonschema.validate(json.loads(d), schema)
        assert not any(mk in json.loads(d)["note"] for mk in MARKERS)
    schema_rows.append(dict(n=n, route="counted" if cs.lazy is not None else "flat",
                            compile_ms=t_compile * 1e3, first_ms=t_first * 1e3,
                            warnings=len(cs.warnings), docs=len(docs)))
print(f"{'maxLength':>10} {'route':>8} {'compile ms':>10} {'index + 1st mask ms':>19} "
      f"{'warnings':>8} {'valid docs':>10}")
for r in schema_rows:
    print(f"{r['n']:>10} {r['route']:>8} {r['compile_ms']:>10.1f} {r['first_ms']:>19.1f} "
          f"{r['warnings']:>8} {r['docs']:>10}")
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.plot([r["n"] for r in schema_rows], [r["compile_ms"] for r in schema_rows], "o-",
        label="compile")
ax.plot([r["n"] for r in schema_rows], [r["first_ms"] for r in schema_rows], "s--",
        label="index + first mask")
ax.set(title="object with a string property, 3 markers", xlabel="maxLength", ylabel="ms",
       xscale="log", yscale="log")
ax.legend(fontsize=8)
plt.show()
flat_max = max(r["n"] for r in schema_rows if r["route"] == "flat")
n_warn = sum(r["warnings"] for r in schema_rows)
display(Markdown(
    f"* Bounds up to {flat_max:,} stay flat (product under {LAZY_STATES:,} states); "
    f"from there on the string is counted. No bound is dropped: **{n_warn} warnings** over the "
    f"six schemas, every sampled document valid and free of the markers.\n"
    f"* `maxLength` 10**9 compiles in {schema_rows[-1]['compile_ms']:.0f} ms and its first mask "
    f"is ready {schema_rows[-1]['first_ms']:.0f} ms later."))"""),
        md(r"""
**What changed.** The advice above (keep the exclusions exact, drop large length bounds and leave
them to the validator) came from the flat construction, where the bound multiplies
the marker automaton. With the count held in the configuration both are kept exactly: the string
piece has the same few dozen byte states for `maxLength` 8 or a billion, builds in milliseconds, and
its token masks need rows of their own only for counts within one token's length of a bound (a
token of *L* bytes moves the count by at most *L*; further away every count has the same row).
Dropping the bound is no longer a trade against the grammar's size; what remains is the cost of the
rows near the bound, paid only by the documents that get there. The schema compiler no longer drops
the bounds: small ones stay flat and exact, large ones are counted; only a string that a product
(`not`, `contains`) forces flat past the threshold still loses them, with a warning.
"""),
    ]


# --------------------------------------------------------------------------------------------
# 02: key order
# --------------------------------------------------------------------------------------------
def notebook_02() -> list:
    return [
        md(r"""
# Free key order against the schema's order

**Question.** JSON objects are unordered, so a grammar could let the model write the keys in any
order (`property_order="any"`) instead of the order the schema lists them (`"schema"`). What does
that freedom cost as the number of properties grows, for required and for optional properties,
and where does the construction budget stop it?

**Method.** Objects with *N* integer properties `p0 .. p(N-1)`, all required or all optional,
compact whitespace, compiled with `compile_json_schema` for both orders under a budget of 10,000
states per construction. We record live states, rules and compile time, and catch
`BudgetExceeded` to mark where the budget cuts the sweep.
"""),
        code(SETUP + """
from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.schema import compile_json_schema
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.tuning import Tuning

BUDGET = Budget(max_states=10_000, max_seconds=30)
FLAT = Tuning(lazy_states=None)   # the flat construction (the library counts large objects)

def compile_flat(schema, **options):
    return compile_tuned(schema, FLAT, **options)
N_MAX = 12

def object_schema(n, required):
    props = {f"p{i}": {"type": "integer"} for i in range(n)}
    return {"type": "object", "properties": props, "additionalProperties": False,
            "required": list(props) if required else []}"""),
        code("""
for required in (True, False):  # warm-up of every path timed below: imports, caches
    for order in ("schema", "any"):
        compile_flat(object_schema(2, required), whitespace=0, property_order=order)
rows, cuts = [], {}
for required in (True, False):
    for order in ("schema", "any"):
        for n in range(1, N_MAX + 1):
            times = []
            try:
                while len(times) < 5 and sum(times) < 1.0:  # the median of up to 5 runs, where cheap
                    t0 = time.perf_counter()
                    c = compile_flat(object_schema(n, required), whitespace=0,
                                     property_order=order, budget=BUDGET)
                    times.append(time.perf_counter() - t0)
            except BudgetExceeded as e:
                cuts[(required, order)] = dict(n=n, seconds=time.perf_counter() - t0, limit=e.limit,
                                               reached=e.reached, operation=e.operation, kind=e.kind)
                print(f"required={required!s:5} order={order:6} N={n:2}: stopped, {e}")
                break
            rows.append(dict(required=required, order=order, n=n, states=c.dfa.num_states,
                             rules=c.dfa.rule_count, seconds=float(np.median(times)), runs=len(times)))

# what the cut point would have cost without the budget
for (required, order), cut in cuts.items():
    t0 = time.perf_counter()
    c = compile_flat(object_schema(cut["n"], required), whitespace=0, property_order=order)
    cut.update(final_states=c.dfa.num_states, unbudgeted_seconds=time.perf_counter() - t0)

print(f"{'required':>8} {'order':>6} {'N':>3} {'states':>7} {'rules':>7} {'seconds':>8}")
for r in rows:
    print(f"{r['required']!s:>8} {r['order']:>6} {r['n']:>3} {r['states']:>7} {r['rules']:>7} {r['seconds']:>8.3f}")"""),
        code("""
fig, axes = plt.subplots(1, 3)
for i, (required, order) in enumerate([(True, "schema"), (True, "any"), (False, "schema"), (False, "any")]):
    pts = [r for r in rows if r["required"] == required and r["order"] == order]
    style = dict(marker="o" if required else "s", ls="-" if required else ":", color=f"C{i}",
                 label=f"{order} order, {'required' if required else 'optional'}")
    ns = [r["n"] for r in pts]
    axes[0].plot(ns, [r["states"] for r in pts], **style)
    axes[1].plot(ns, [r["rules"] for r in pts], **style)
    axes[2].plot(ns, [r["seconds"] for r in pts], **style)
    cut = cuts.get((required, order))
    if cut:
        for ax in axes[:2]:
            ax.axvline(cut["n"], color=f"C{i}", lw=1, ls="--")
        axes[0].plot([cut["n"]], [cut["limit"]], "x", ms=10, color=f"C{i}")
axes[0].axhline(BUDGET.max_states, color="k", lw=0.8, ls="--")
axes[0].text(1, BUDGET.max_states * 1.2, "budget", fontsize=8)
axes[0].set(title="live states", xlabel="properties N", yscale="log")
axes[1].set(title="rules", xlabel="properties N", yscale="log")
axes[2].set(title="compile time [s], median of up to 5 runs", xlabel="properties N", yscale="log")
for ax in axes:
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))  # N counts properties: whole ticks
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)  # below the panels
fig.suptitle("property_order='any' vs 'schema'; dashed verticals: where BudgetExceeded stopped the sweep")
fig.tight_layout(rect=(0, 0.08, 1, 1))"""),
        md("## What the numbers say"),
        code("""
def pick(required, order, n):
    return next((r for r in rows if r["required"] == required and r["order"] == order and r["n"] == n), None)

last_any = max(r["n"] for r in rows if r["order"] == "any" and r["required"])
a, s = pick(True, "any", last_any), pick(True, "schema", last_any)
ratios = [pick(True, "any", n)["states"] / pick(True, "any", n - 1)["states"] for n in range(3, last_any + 1)]
lin = [pick(True, "schema", n)["states"] - pick(True, "schema", n - 1)["states"] for n in range(2, N_MAX + 1)
       if pick(True, "schema", n)]
cut = cuts.get((True, "any"))
lines = [
    f"* In the schema's order an object is a sequence: {sorted(set(lin))} more state(s) per property, "
    f"{pick(True, 'schema', N_MAX)['states']} states at N = {N_MAX}, compiled in "
    f"{pick(True, 'schema', N_MAX)['seconds'] * 1e3:.0f} ms.",
    f"* In any order the automaton has to remember which keys it has seen: states grow by a factor "
    f"{min(ratios):.2f}–{max(ratios):.2f} per property (the 2^N subsets of keys). At N = {last_any}: "
    f"**{a['states']:,} states** against {s['states']} in schema order ({a['states'] / s['states']:.0f}×), "
    f"{a['seconds']:.1f} s against {s['seconds'] * 1e3:.0f} ms.",
]
o = pick(False, "any", last_any)
if o:
    lines.append(f"* Optional properties in any order: {o['states']:,} states at N = {last_any} "
                 f"(required: {a['states']:,}); the subset of keys seen is the state either way.")
if cut:
    lines.append(f"* The budget of {BUDGET.max_states:,} states stopped `any` order at **N = {cut['n']}** "
                 f"({cut['operation']} reached {cut['reached']:,} {cut['kind']} after {cut['seconds']:.1f} s), "
                 f"with a `BudgetExceeded` instead of a stalled process. Without the budget N = {cut['n']} compiles "
                 f"to {cut['final_states']:,} states in {cut['unbudgeted_seconds']:.1f} s: the construction passes "
                 f"through {cut['reached'] / cut['final_states']:.1f}× more states than the minimal result keeps.")
display(Markdown("\\n".join(lines)))"""),
        md(r"""
**Reading.** Free key order is exponential in the number of properties, whether they are required
or optional, because the automaton must remember the set of keys already written. A handful of
properties is affordable; a dozen is not, and a tool schema with twenty arguments would need
millions of states. Schema order is linear and is what models see in their prompts anyway, so it is
the right default; `"any"` is for small objects, and the budget turns the blowup into a clear error
that names the operation and how far it got.
"""),
        md(r"""
## Key sets

Everything above is the flat construction (`Tuning(lazy_states=None)`, the reference route). The
library's default now holds the keys already written as a set in the matcher's configuration (a
key-set piece, `schema/lower_lazy.py`) for objects of more than `KEY_SET_MIN` declared keys in
any order: each key at most once, the required ones before `}`, undeclared keys (with
`allow_extra_keys=True`) anywhere among them. Its size is that of one member, whatever *N*; the
same language as the flat automaton where that can be built (checked below for small *N*).
"""),
        code("""
from tokenfsm.masks import IndexCompiler, Matcher, allocate_token_bitmask
from tokenfsm.masks.builtin_vocab import load_vocabulary
from tokenfsm.schema.lower_lazy import KEY_SET_MIN

compiler = IndexCompiler(load_vocabulary("qwen"))
Matcher(compiler.json_schema(object_schema(KEY_SET_MIN + 1, True), property_order="any"))  # warm-up
key_rows = []
for n in (5, 8, 12, 20, 40, 80):
    for extra in (False, True):
        schema = object_schema(n, True)
        if extra:
            del schema["additionalProperties"]
        t0 = time.perf_counter()
        c = compile_json_schema(schema, whitespace=0, property_order="any", allow_extra_keys=extra)
        t_compile = time.perf_counter() - t0
        t0 = time.perf_counter()
        index = compiler.json_schema(schema, whitespace=0, property_order="any",
                                     allow_extra_keys=extra)
        m, bm = Matcher(index), allocate_token_bitmask(1, index.vocab.size)
        m.fill_next_token_bitmask(bm, 0)
        t_first = time.perf_counter() - t0
        doc = "{" + ",".join(f'"p{i}":{i}' for i in reversed(range(n))) + "}"
        assert c.accepts(doc) and not c.accepts(doc.replace('"p0":0', '"p1":0'))
        key_rows.append(dict(n=n, extra=extra, states=c.lazy.num_states,
                             compile_ms=t_compile * 1e3, first_ms=t_first * 1e3))
for n in (5, 6):        # the same language as the flat construction, where it can be built
    assert (compile_json_schema(object_schema(n, False), whitespace=0, property_order="any").dfa
            == compile_flat(object_schema(n, False), whitespace=0, property_order="any").dfa)
print(f"{'N':>3} {'extra keys':>10} {'byte states':>11} {'compile ms':>10} {'index + 1st mask ms':>19}")
for r in key_rows:
    print(f"{r['n']:>3} {r['extra']!s:>10} {r['states']:>11} {r['compile_ms']:>10.1f} {r['first_ms']:>19.1f}")
fig, ax = plt.subplots(figsize=(6, 3.4))
for extra, style in ((False, "o-"), (True, "s--")):
    pts = [r for r in key_rows if r["extra"] == extra]
    ax.plot([r["n"] for r in pts], [r["compile_ms"] for r in pts], style,
            label=f"key set, extra keys {extra}")
flat_any = [r for r in rows if r["order"] == "any" and r["required"]]
ax.plot([r["n"] for r in flat_any], [r["seconds"] * 1e3 for r in flat_any], "x:",
        label="flat, every subset a state")
ax.set(title="any key order: compile time", xlabel="properties N", ylabel="ms", yscale="log")
ax.legend(fontsize=8)
plt.show()
big = [r for r in key_rows if r["n"] == 80 and not r["extra"]][0]
display(Markdown(
    f"* 80 required keys in any order: **{big['states']} byte states**, compiled in "
    f"{big['compile_ms']:.0f} ms, first mask {big['first_ms']:.0f} ms later; the flat "
    f"construction stopped at N = {cut['n'] if cut else '?'} under its budget."))"""),
        md(r"""
**What changed.** The reading above holds for the flat construction, which the library now keeps for
objects of at most `KEY_SET_MIN` keys (their few subsets cost little and their mask rows are made
up front). Larger objects in any order are key sets: linear in *N* like schema order, so
`property_order="any"` with `allow_extra_keys=True` is no longer a choice against the grammar's
size. What it costs instead is mask rows made per set of keys written, when first needed.
"""),
        md(r"""
## Alternatives that differ in the keys they require

Real schemas say which keys go together: `anyOf: [{required: [a]}, {required: [b]}]` ("at least
one of"), `oneOf` of `required` lists, `if: {required: [a]}, then: {required: [b]}`,
`dependentRequired`. The rewriting makes each an alternative of the object, alike but for the keys
it requires and forbids. Flat, every alternative is an any-order object of its own and their
union is a product of subsets; the library keeps one key set whose *terms* are the alternatives'
(required, forbidden) pairs, and the object may close when one term holds. Below: *N* integer
properties under two such forms, undeclared keys allowed or not, both routes timed in the same
run (fresh property names per compile, so no cache answers), and the languages compared where the
flat one can be built.
"""),
        code("""
import warnings
# (undeclared members take any value, cut at max_depth as the library warns: expected here)
warnings.filterwarnings("ignore", message="values nested deeper")
FORMS = {
    "anyOf of required": lambda p: {"anyOf": [{"required": [p[0]]}, {"required": [p[1]]}]},
    "dependentRequired": lambda p: {"dependentRequired": {p[0]: [p[1], p[2]]}},
}
fresh = iter(range(10**6))

def presence_schema(n, form):
    tag = f"k{next(fresh)}_"
    props = {f"{tag}{i}": {"type": "integer"} for i in range(n)}
    return {"type": "object", "properties": props, **FORMS[form](list(props))}

term_rows, checked = [], []
for form in FORMS:
    for extra in (False, True):
        for n in (4, 6, 8, 12, 24):
            options = dict(whitespace=0, property_order="any", allow_extra_keys=extra)
            t0 = time.perf_counter()
            c = compile_json_schema(presence_schema(n, form), **options)
            t_terms = time.perf_counter() - t0
            t_flat = None
            if n <= 8:
                schema = presence_schema(n, form)
                t0 = time.perf_counter()
                try:
                    f = compile_flat(schema, budget=BUDGET, **options)
                    t_flat = time.perf_counter() - t0
                    if n <= 6:
                        assert f.dfa == compile_json_schema(schema, **options).dfa
                        checked.append((form, extra, n))
                except BudgetExceeded:
                    t_flat = float("inf")
            term_rows.append(dict(form=form, extra=extra, n=n, terms_ms=t_terms * 1e3,
                                  flat_ms=None if t_flat is None else t_flat * 1e3,
                                  terms=int(np.diff(c.lazy.piece_terms).max())))
print(f"{'form':18} {'extra keys':>10} {'N':>3} {'terms':>5} {'key set ms':>10} {'flat ms':>9}")
for r in term_rows:
    flat = "" if r["flat_ms"] is None else ("budget" if r["flat_ms"] == float("inf")
                                            else f"{r['flat_ms']:.0f}")
    print(f"{r['form']:18} {r['extra']!s:>10} {r['n']:>3} {r['terms']:>5} {r['terms_ms']:>10.1f} "
          f"{flat:>9}")
worst = max((r for r in term_rows if r["flat_ms"] not in (None, float("inf"))),
            key=lambda r: r["flat_ms"] / r["terms_ms"])
cut_n = min((r["n"] for r in term_rows if r["flat_ms"] == float("inf")), default=None)
display(Markdown("\\n".join([
    f"* One key set per object whatever the form: at N = 24 with undeclared keys, "
    f"{max(r['terms_ms'] for r in term_rows if r['n'] == 24):.0f} ms at most. Flat, the "
    f"alternatives' union cost up to {worst['flat_ms']:.0f} ms at N = {worst['n']} "
    f"({worst['form']}, extra keys {worst['extra']}: {worst['flat_ms'] / worst['terms_ms']:.0f}x), "
    f"and with undeclared keys it ran out of its budget of {BUDGET.max_states:,} states from "
    f"N = {cut_n}.",
    f"* The two routes accept the same texts wherever both were built for N <= 6 "
    f"({len(checked)} schemas)."])))"""),
        md(r"""
**Reading.** What made free key order expensive was never the order itself but remembering the
keys written, and alternatives that differ only in which keys must be there multiplied that
memory once more. Held as terms of one key set, they cost no more than the object alone. A name a
term reads is a member of every alternative, also where undeclared keys are allowed and an
alternative leaves it free: written at most once, in its shortest spelling, as declared names
are (the flat route builds the same language, one flat object per term).
"""),
        md(r"""
## Unions of tagged objects

The commonest union in real schemas is a `oneOf` of objects tagged by an enum (`"kind": "add"`
against `"kind": "remove"`), each with the members the others have and perhaps some of its own.
Flat, every branch is an any-order object of its own (with undeclared keys, the value of any key
copied into each subset of keys) and the union holds them all. The library lowers such a union as
one key set: a property whose values differ between branches is a member per class of values the
same branches allow (the tags' strings, written in place in the key set, the key written by a
call that reads the closing quote), and the terms are the combinations that meet some branch.
Below: *M* branches tagged by `kind`, four shared integer members, with or without a string member
of their own, undeclared keys allowed or not, both routes timed under the budget above, and the
languages compared where both were built for *M* <= 4.
"""),
        code("""
def tagged_union(m, n, own):
    tag = f"u{next(fresh)}_"
    shared = {f"{tag}{i}": {"type": "integer"} for i in range(n)}
    return {"type": "object", "oneOf": [
        {"properties": {"kind": {"enum": [f"variant{j}"]}, **shared,
                        **({f"{tag}own{j}": {"type": "string"}} if own else {})},
         "required": ["kind"]} for j in range(m)]}

def timed(compile_, schema, options):
    t0 = time.perf_counter()
    try:
        got = compile_(schema, budget=BUDGET, **options)
    except BudgetExceeded:
        return None, float("inf")
    return got, (time.perf_counter() - t0) * 1e3

union_rows, union_checked = [], []
for own in (False, True):
    for extra in (False, True):
        for m in (2, 4, 8):
            options = dict(whitespace=0, property_order="any", allow_extra_keys=extra)
            c, set_ms = timed(compile_json_schema, tagged_union(m, 4, own), options)
            schema = tagged_union(m, 4, own)
            f, flat_ms = timed(compile_flat, schema, options)
            if c is not None and f is not None and m <= 4:
                assert f.dfa == compile_json_schema(schema, **options).dfa
                union_checked.append((own, extra, m))
            union_rows.append(dict(own=own, extra=extra, m=m, set_ms=set_ms, flat_ms=flat_ms,
                                   terms=int(np.diff(c.lazy.piece_terms).max())
                                   if c is not None and c.lazy is not None else 0))
shown = lambda x: "budget" if x == float("inf") else f"{x:.0f}"
print(f"{'own member':>10} {'extra keys':>10} {'M':>2} {'terms':>5} {'key set ms':>10} "
      f"{'flat ms':>8}")
for r in union_rows:
    print(f"{r['own']!s:>10} {r['extra']!s:>10} {r['m']:>2} {r['terms']:>5} "
          f"{shown(r['set_ms']):>10} {shown(r['flat_ms']):>8}")
made = [r for r in union_rows if r["set_ms"] < float("inf")]
lost = [r for r in union_rows if r["set_ms"] == float("inf")]
display(Markdown("\\n".join([
    f"* One key set in {len(made)} of {len(union_rows)} shapes, each in "
    f"{max(r['set_ms'] for r in made):.0f} ms at most; flat, "
    f"{sum(r['flat_ms'] == float('inf') for r in union_rows)} of them ran out of the budget.",
    f"* The two routes accept the same texts wherever both were built for M <= 4 "
    f"({len(union_checked)} schemas).",
    "* Not one key set: " + ("; ".join(f"M = {r['m']} with a member of its own each and "
                                       f"undeclared keys" for r in lost) or "none") + "."])))"""),
        md(r"""
**Reading.** A tagged union costs about what one of its branches does: the tag is read once, in
place, and the branch it names is remembered as the member written, not as a copy of the object.
Where each branch has a member of its own and undeclared keys are allowed, every other branch
takes that member as an undeclared key of any value, so its values split in two classes per
branch and the combinations double with each branch: 64 terms at *M* = 4, still one key set;
2,048 at *M* = 8, past `UNION_TERMS` (256), and there the branches stay apart, flat, as before
(here over budget). That is the shape to look at next: a name written at most once whatever
member it is would make those combinations free.
"""),
    ]


# --------------------------------------------------------------------------------------------
# 03: runaway whitespace
# --------------------------------------------------------------------------------------------
def notebook_03() -> list:
    return [
        md(r"""
# Runaway whitespace

**Question.** JSON allows any amount of whitespace between tokens. A grammar that allows it too
(`whitespace=None`) lets a model that likes spaces (a known failure of small models under
constrained decoding) emit whitespace forever: every whitespace token is always allowed, so the
mask never forces it back to the document. How often does a document fail to end within a token
budget, with unbounded against bounded whitespace (`whitespace=2`)?

**Method.** A weather-query object (an enum, a bounded integer, a boolean; no free strings, so the
only unbounded part is whitespace) is compiled both ways and indexed for the Qwen vocabulary. A
simulated model draws Gaussian logits and adds a bias *b* to the 400-odd tokens made only of
whitespace (b > 0: a model that prefers spaces; b < 0, for contrast, one that avoids them); masked
logits, argmax, EOS where the text is complete. For each bias we sample 40
documents with a budget of 400 tokens and record the tokens used and whether the document ended.
"""),
        code(SETUP + """
import json, jsonschema, warnings
from tokenfsm.schema import compile_json_schema
from tokenfsm.masks import TokenIndex, Matcher, allocate_token_bitmask, apply_token_bitmask_inplace
from tokenfsm.masks.builtin_vocab import load_vocabulary

SCHEMA = {"type": "object", "additionalProperties": False,
          "properties": {"unit": {"enum": ["celsius", "fahrenheit"]},
                         "days": {"type": "integer", "minimum": 1, "maximum": 14},
                         "alerts": {"type": "boolean"}},
          "required": ["unit", "days", "alerts"]}
BIASES = [-8, -4, -2, -1, 0, 2, 4, 8]
SAMPLES, TOKEN_BUDGET = 40, 400

vocab = load_vocabulary("qwen")
is_ws = np.array([bool(t) and all(b in b" \\t\\n\\r" for b in t) for t in vocab.tokens])
indexes = {}
for name, ws in [("unbounded (None)", None), ("bounded (2)", 2)]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compile_json_schema(SCHEMA, whitespace=ws)
    indexes[name] = TokenIndex.build(c.dfa, vocab)
    print(f"{name:18} {c.dfa.num_states} states; warnings: {c.warnings}")
print(f"{is_ws.sum()} of {vocab.size:,} tokens are whitespace only")"""),
        md(r"""
The simulated model only needs the logits of the allowed tokens: masking i.i.d. logits over the
whole vocabulary and taking the argmax picks the same token as drawing logits for the allowed ones
only. The next cell checks that the allowed set is exactly what the bitmask lets through, then the
sampler draws over the allowed tokens (microseconds a step instead of milliseconds).
"""),
        code("""
ix = indexes["unbounded (None)"]
m = Matcher(ix)
bitmask = allocate_token_bitmask(1, vocab.size)
for tok in vocab.tokens.index(b"{"), vocab.tokens.index(b"  "):
    m.fill_next_token_bitmask(bitmask, 0)
    logits = np.zeros(vocab.size, dtype=np.float32)
    apply_token_bitmask_inplace(logits, bitmask[0])
    assert np.array_equal(np.flatnonzero(np.isfinite(logits)), m.allowed_token_ids())
    m.advance(tok)
print("allowed sets agree with the bitmask")

def sample(index, bias, rng):
    m, n, text = Matcher(index), 0, []
    eos = set(vocab.eos_token_ids)
    while n < TOKEN_BUDGET:
        allowed = m.allowed_token_ids()
        logits = rng.standard_normal(allowed.size) + bias * is_ws[allowed]
        tok = int(allowed[np.argmax(logits)])
        m.advance(tok)
        if tok in eos:
            return n, True, vocab.decode(text).decode()
        text.append(tok)
        n += 1
    return n, False, None

rng = np.random.default_rng(0)
results = []
t0 = time.perf_counter()
for name, index in indexes.items():
    for bias in BIASES:
        for _ in range(SAMPLES):
            n, ended, doc = sample(index, bias, rng)
            if ended:
                jsonschema.validate(json.loads(doc), SCHEMA)  # every finished document is valid
            results.append(dict(policy=name, bias=bias, tokens=n, ended=ended))
print(f"{len(results)} documents in {time.perf_counter() - t0:.1f} s")

print(f"{'whitespace':18} {'bias':>4} {'ended':>7} {'median tokens':>14} {'longest ended':>13}")
summary = {}
for name in indexes:
    for bias in BIASES:
        rs = [r for r in results if r["policy"] == name and r["bias"] == bias]
        done = [r["tokens"] for r in rs if r["ended"]]
        summary[(name, bias)] = dict(stuck=1 - len(done) / len(rs), median=np.median([r["tokens"] for r in rs]),
                                     max_done=max(done) if done else None)
        print(f"{name:18} {bias:>4} {len(done):>3}/{len(rs)} {np.median([r['tokens'] for r in rs]):>14.0f} "
              f"{max(done) if done else '-':>13}")"""),
        code("""
fig, axes = plt.subplots(1, 2)
for i, name in enumerate(indexes):
    axes[0].plot(BIASES, [100 * summary[(name, b)]["stuck"] for b in BIASES], "o-", label=name, color=f"C{i}")
    for j, b in enumerate(BIASES):
        toks = [r["tokens"] for r in results if r["policy"] == name and r["bias"] == b]
        axes[1].scatter(np.full(len(toks), j + (i - 0.5) * 0.3), toks, s=8, alpha=0.5, color=f"C{i}",
                        label=name if j == 0 else None)
axes[0].set(title=f"documents not ended within {TOKEN_BUDGET} tokens", xlabel="whitespace bias b",
            ylabel="% of samples", ylim=(-5, 105))
axes[1].axhline(TOKEN_BUDGET, color="k", lw=0.8, ls="--")
axes[1].set(title="tokens until EOS (or the budget)", xlabel="whitespace bias b", yscale="log",
            xticks=range(len(BIASES)), xticklabels=BIASES)
axes[0].legend(fontsize=8); axes[1].legend(fontsize=8)
fig.tight_layout()"""),
        md("## What the numbers say"),
        code("""
u, b = "unbounded (None)", "bounded (2)"
worst_bounded = max(r["tokens"] for r in results if r["policy"] == b)
all_ended_bounded = all(r["ended"] for r in results if r["policy"] == b)
display(Markdown(f'''
* With unbounded whitespace an unbiased random model (b = 0) fails to end {100 * summary[(u, 0)]["stuck"]:.0f}% of
  the time within {TOKEN_BUDGET} tokens (median {summary[(u, 0)]["median"]:.0f} tokens): {is_ws.sum()} whitespace tokens are allowed
  at every gap against a handful of structural ones. With b = 2 the share is
  {100 * summary[(u, 2)]["stuck"]:.0f}%, with b = {BIASES[-1]} it is {100 * summary[(u, BIASES[-1])]["stuck"]:.0f}%; only a model that avoids
  whitespace ends reliably ({", ".join(f"b = {x}: {100 * summary[(u, x)]['stuck']:.0f}%" for x in BIASES if x < 0)} not ended).
* With at most 2 whitespace characters per gap {"every" if all_ended_bounded else "not every"} document ended, whatever the bias:
  the longest took {worst_bounded} tokens; medians {", ".join(f"{summary[(b, x)]['median']:.0f}" for x in BIASES)} tokens for
  b = {", ".join(map(str, BIASES))}. The language is finite, so the mask itself guarantees termination.
* Every document that ended validated with `jsonschema`: unbounded whitespace is not wrong, it is unsafe.
'''))"""),
        md(r"""
**Reading.** The runaway is a property of the grammar, not only of the model: when whitespace is
unbounded, the mask offers hundreds of whitespace tokens at every gap, and any preference for them
(or plain numbers) keeps the document from ending. Bounding whitespace per gap costs a few states
and makes termination something the mask guarantees, which is why a small bound is the sensible
default and `whitespace=None` comes with a `SchemaWarning`.
"""),
    ]


# --------------------------------------------------------------------------------------------
# 04: token index cost
# --------------------------------------------------------------------------------------------
def notebook_04() -> list:
    return [
        md(r"""
# What a token index costs

**Question.** A token index stores, for every state of the byte automaton, a packed bitmask of
the allowed tokens; identical masks are stored once, and a token's next state is found by walking
its few bytes when it is chosen. How do its build time, its memory (`index.nbytes`)
and the mask density (the share of the vocabulary allowed in an average state) grow with the
number of automaton states and with the vocabulary (Qwen2.5 151k, Qwen3.6 248k, Llama-3 128k)?

**Method.** Two families of tool-argument schemas, compiled once: *integers*, objects of N integer
properties (narrow masks: keys, digits, punctuation), and *mixed*, N properties alternating
integers and free strings with `<|im_end|>` excluded (string bodies allow most of the
vocabulary). Each automaton is indexed for each vocabulary; the first index of a vocabulary also
builds its token trie and is timed apart.
"""),
        code(SETUP + """
from tokenfsm.automata import DFA
from tokenfsm.schema import compile_json_schema
from tokenfsm.masks import TokenIndex
from tokenfsm.masks.builtin_vocab import load_vocabulary

def schema(n, mixed):
    props = {f"p{i}": {"type": "string"} if mixed and i % 2 else {"type": "integer"} for i in range(n)}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

FAMILIES = {"integers": ([1, 4, 16, 48], False), "mixed": ([2, 4, 8, 12], True)}
automata = {}
for family, (sizes, mixed) in FAMILIES.items():
    for n in sizes:
        automata[(family, n)] = compile_json_schema(schema(n, mixed), whitespace=1, excludes=["<|im_end|>"]).dfa
print({k: d.num_states for k, d in automata.items()})"""),
        code("""
VOCABS = ["qwen", "qwen3.6", "llama3"]
rows, setup = [], {}
for name in VOCABS:
    try:
        t0 = time.perf_counter()
        vocab = load_vocabulary(name)
        t1 = time.perf_counter()
        TokenIndex.build(DFA.literal("{}"), vocab)  # builds the token trie (and loads the kernels)
        t2 = time.perf_counter()
    except Exception as e:  # llama3 needs the dev extra
        print(f"{name}: skipped ({e})")
        continue
    digits = sum(1 for t in vocab.tokens if t and t.isdigit())
    setup[name] = dict(size=vocab.size, load=t1 - t0, trie=t2 - t1, digit_tokens=digits)
    for family, (sizes, _) in FAMILIES.items():  # warm-up: one-off work of each kind of state
        TokenIndex.build(automata[(family, sizes[0])], vocab)
    for (family, n), dfa in automata.items():
        times = []
        while len(times) < 7 and sum(times) < 2.0:  # the median of up to seven builds
            t0 = time.perf_counter()
            ix = TokenIndex.build(dfa, vocab)
            times.append(time.perf_counter() - t0)
        seconds = float(np.median(times))
        live = ix.num_states - 1
        rows.append(dict(vocab=name, size=vocab.size, family=family, n=n, states=live, seconds=seconds,
                         mib=ix.nbytes / 2**20, density=ix.num_allowed_pairs / (live * vocab.size),
                         rows=ix.mask_rows.shape[0]))
        del ix

for name, s in setup.items():
    print(f"{name:8} {s['size']:>8,} ids: load {s['load']:.2f} s, token trie + first index {s['trie']:.2f} s")
print(f"\\n{'vocab':8} {'family':8} {'N':>3} {'states':>6} {'build s':>8} {'MiB':>8} {'density':>8} {'mask rows':>9}")
for r in rows:
    print(f"{r['vocab']:8} {r['family']:8} {r['n']:>3} {r['states']:>6} {r['seconds']:>8.3f} {r['mib']:>8.1f} "
          f"{r['density']:>8.1e} {r['rows']:>9}")"""),
        code("""
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

fig, axes = plt.subplots(1, 3)
for i, name in enumerate(setup):
    for family, marker, ls in (("integers", "o", "-"), ("mixed", "s", ":")):
        pts = [r for r in rows if r["vocab"] == name and r["family"] == family]
        kw = dict(marker=marker, ls=ls, color=f"C{i}", label=f"{name}, {family}")
        st = [r["states"] for r in pts]
        axes[0].plot(st, [r["seconds"] for r in pts], **kw)
        axes[1].plot(st, [r["mib"] for r in pts], **kw)
        axes[2].plot(st, [r["density"] for r in pts], **kw)
axes[0].set(title="index build time [s], median of up to 7", xlabel="byte-DFA states", xscale="log", yscale="log")
axes[1].set(title="index.nbytes [MiB]", xlabel="byte-DFA states", xscale="log", yscale="log")
axes[2].set(title="mask density (allowed / vocab, mean over states)", xlabel="byte-DFA states", xscale="log",
            yscale="log")
for ax in axes:  # ticks at 1, 2, 5 x 10^k: several on a range of a decade or two
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
axes[0].legend(fontsize=7)
fig.tight_layout()"""),
        md("## What the numbers say"),
        code("""
def get(vocab, family, n):
    return next(r for r in rows if r["vocab"] == vocab and r["family"] == family and r["n"] == n)

nI, nM = FAMILIES["integers"][0][-1], FAMILIES["mixed"][0][-1]
q = "qwen"
bi, bm = get(q, "integers", nI), get(q, "mixed", nM)
lines = [
    f"* Qwen2.5, integers, N = {nI}: {bi['states']} states, built in {bi['seconds'] * 1e3:.0f} ms, "
    f"{bi['mib']:.1f} MiB, density {bi['density']:.1e} ({bi['rows']} distinct masks).",
    f"* Qwen2.5, mixed, N = {nM}: {bm['states']} states, built in {bm['seconds']:.2f} s, "
    f"**{bm['mib']:.1f} MiB**, density {bm['density']:.2f}: string-body states allow most of the vocabulary, "
    f"yet only {bm['rows']} distinct masks are stored ({bm['mib'] * 1024 / bm['states']:.1f} KiB per state "
    f"against {bi['mib'] * 1024 / bi['states']:.1f} KiB for the integer family).",
]
for name in setup:
    if name != q:
        a = get(name, "mixed", nM)
        lines.append(f"* {name} ({setup[name]['size']:,} ids), mixed N = {nM}: {a['seconds'] / bm['seconds']:.2f}× the "
                     f"build time and {a['mib'] / bm['mib']:.2f}× the memory of Qwen2.5 "
                     f"(vocabulary ratio {setup[name]['size'] / setup[q]['size']:.2f}).")
dens = {n: get(n, "integers", nI)["density"] for n in setup}
lines.append("* Number-heavy states depend on how the vocabulary spells numbers: integer-family density "
             + ", ".join(f"{n} {d:.1e}" for n, d in dens.items()) + "; tokens made only of digits: "
             + ", ".join(f"{n} {s['digit_tokens']:,}" for n, s in setup.items()) + ".")
lines.append("* Token trie + first index, once per vocabulary and process: " + ", ".join(
    f"{n} {s['trie']:.1f} s" for n, s in setup.items()) + ".")
display(Markdown("\\n".join(lines)))"""),
        md(r"""
**Reading.** Because identical masks are stored once and next states are not stored at all,
memory is set by the number of *distinct* masks (each a vocabulary's worth of bits) plus a small
per-state cost, and it grows slowly with the number of states. Build time is the per-state walk of
the token trie: cheap for structured states (keys, numbers, punctuation), dearer for free-text
states where almost every token is allowed. A length bound on a string (notebook 01) multiplies
exactly those free-text states, which is where the build time goes; the masks themselves repeat.
"""),
    ]


# --------------------------------------------------------------------------------------------
# 05: recursion, unrolled against the stack
# --------------------------------------------------------------------------------------------
def notebook_05() -> list:
    return [
        md(r"""
# Recursion: unrolled against the stack

**Question.** A recursive schema (Kubernetes' `JSONSchemaProps`, a tree, an expression grammar) has
no finite automaton: it is cut at `max_depth`. Unrolled, every nesting level and every place a
definition is referenced from becomes a copy of it, so the flat DFA multiplies with the number of
recursive slots and with the depth. The stack route (`recursion="stack"`) keeps one automaton per
recursive definition and lets them call each other, walked with a stack bounded by the same
`max_depth`. How do the two grow, where does unrolling stop fitting a budget, and what does the
stack cost at decoding time, when token masks are computed per stack configuration instead of
being read from a table?

**Method.** A family shaped like `JSONSchemaProps`: an object definition with three scalar
properties (an enum `type`, a free-text `description`, a boolean `nullable`) and *k* properties
that hold the definition again, alternately directly (`r0`, `r2`, ...) and as array items (`r1`,
`r3`, ...), all optional, for *k* = 1..6 and `max_depth` 1..4. For each point we compile both
routes with `compile_json_schema`: the stack route's compile time, module states, byte states,
call edges and `expanded_states` (the unrolled tree before minimisation); the unrolled route's
compile time and minimal DFA states under a `Budget`, recording the points that go over it. Then
one mid-sized case that both routes can do is indexed for the Qwen2.5 vocabulary, as a flat
`TokenIndex` and as a `PushdownIndex` (what `IndexCompiler.json_schema` gives for each route, built
here directly so that compiling and indexing are timed apart), and a greedily tokenised valid
document is replayed through both with `Matcher`, timing every mask fill and checking that both
give the same mask at every step. Compilation peaks are taken with `tracemalloc`.
"""),
        code(SETUP + """
import json, warnings
import jsonschema
from tokenfsm.automata import Budget, BudgetExceeded
from tokenfsm.schema import compile_json_schema
from tokenfsm.schema.compiler import UNROLL_STATES

KS, DEPTHS = range(1, 7), range(1, 5)
BUDGET = Budget(max_states=20_000, max_seconds=2)
t_notebook = time.perf_counter()

def props_schema(k):
    # k recursive slots: r0, r2, ... hold the definition itself, r1, r3, ... an array of it
    props = {"type": {"enum": ["object", "array", "string", "integer", "boolean"]},
             "description": {"type": "string"}, "nullable": {"type": "boolean"}}
    for i in range(k):
        props[f"r{i}"] = ({"$ref": "#/$defs/node"} if i % 2 == 0 else
                          {"type": "array", "items": {"$ref": "#/$defs/node"}})
    return {"$defs": {"node": {"type": "object", "properties": props, "additionalProperties": False}},
            "$ref": "#/$defs/node"}

def compile_quiet(schema, **options):
    # the cut at max_depth is announced with a SchemaWarning on every compilation: expected here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile_json_schema(schema, **options)

print(json.dumps(props_schema(2), indent=1))"""),
        md("## Compiling both routes"),
        code("""
for route in ("stack", "unroll"):  # warm-up: imports and caches
    compile_quiet(props_schema(1), max_depth=1, recursion=route)

rows = []
t_sweep = time.perf_counter()
for k in KS:
    for d in DEPTHS:
        times = []
        for _ in range(3):  # cheap: the median of three runs
            t0 = time.perf_counter()
            c = compile_quiet(props_schema(k), max_depth=d, recursion="stack", budget=BUDGET)
            times.append(time.perf_counter() - t0)
        stack_s = float(np.median(times))
        rd = c.recursive
        pb = rd.to_bytes()  # built (and checked) during compilation; cached on the RecursiveDFA
        row = dict(k=k, d=d, stack_s=stack_s, modules=len(rd.modules),
                   module_states=sum(m.num_states for m in rd.modules), byte_states=pb.num_states,
                   calls=pb.num_calls, max_stack=pb.max_stack, expanded=rd.expanded_states(10**12))
        times = []
        while len(times) < 3 and sum(times) < 0.3:  # repeated (median) only where it is cheap
            t0 = time.perf_counter()
            try:
                u = compile_quiet(props_schema(k), max_depth=d, recursion="unroll", budget=BUDGET)
                row.update(unroll_states=u.dfa.num_states, over=None)
            except BudgetExceeded as e:
                reached = f"{e.reached:.2f} s" if e.kind == "seconds" else f"{e.reached:,} states"
                row.update(unroll_states=None, over=f"{e.operation} stopped at {reached}")
            times.append(time.perf_counter() - t0)
        row["unroll_s"] = float(np.median(times))
        # the route the default recursion="auto" takes
        row["auto"] = "stack" if compile_quiet(props_schema(k), max_depth=d).recursive is not None else "unroll"
        rows.append(row)
sweep_s = time.perf_counter() - t_sweep

print(f"{'k':>2} {'depth':>5} | {'stack s':>7} {'mod st':>6} {'bytes':>6} {'calls':>5} {'stack':>5} | "
      f"{'expanded':>10} {'auto':>6} | {'unroll s':>8} {'min DFA':>8}")
for r in rows:
    un = f"{r['unroll_states']:>8,}" if r["over"] is None else f"over budget ({r['over']})"
    print(f"{r['k']:>2} {r['d']:>5} | {r['stack_s']:>7.3f} {r['module_states']:>6} {r['byte_states']:>6} "
          f"{r['calls']:>5} {r['max_stack']:>5} | {r['expanded']:>10,} {r['auto']:>6} | {r['unroll_s']:>8.3f} {un}")
print(f"sweep: {sweep_s:.1f} s")"""),
        code("""
fig, axes = plt.subplots(1, 3, figsize=(12, 4))
for i, k in enumerate(KS):
    pts = [r for r in rows if r["k"] == k]
    fit = [r for r in pts if r["over"] is None]
    col = f"C{i}"
    axes[0].plot([r["d"] for r in fit], [r["unroll_states"] for r in fit], "o-", color=col, label=f"k = {k}")
    axes[0].plot([r["d"] for r in pts], [r["byte_states"] for r in pts], "s--", color=col, ms=4)
    over = [r for r in pts if r["over"] is not None]
    dodge = (i - (len(KS) - 1) / 2) * 0.07  # side by side: every k went over at the same height
    axes[0].plot([r["d"] + dodge for r in over], [BUDGET.max_states] * len(over), "x", color=col, ms=8)
    axes[1].plot([r["d"] for r in pts], [r["expanded"] for r in pts], "o-", color=col, label=f"k = {k}")
    axes[2].plot([r["d"] for r in fit], [r["unroll_s"] for r in fit], "o-", color=col, label=f"k = {k}")
    axes[2].plot([r["d"] + dodge for r in over], [r["unroll_s"] for r in over], "x", color=col, ms=8)
    axes[2].plot([r["d"] for r in pts], [r["stack_s"] for r in pts], "s--", color=col, ms=4)
for ax in axes[:2]:
    ax.axhline(BUDGET.max_states, color="k", lw=0.8, ls=":")
axes[1].axhline(UNROLL_STATES, color="grey", lw=0.8, ls="-.")
axes[1].text(1, UNROLL_STATES * 1.3, f'"auto" unrolls up to {UNROLL_STATES:,}', fontsize=7)
axes[0].set(title="states\\nunrolled minimal DFA (solid), stack bytes (dashed)", xlabel="max_depth", yscale="log")
axes[1].set(title="expanded_states\\n(the unrolled tree before minimising)", xlabel="max_depth", yscale="log")
axes[2].set(title="compile time [s]\\nunrolled (solid), stack (dashed)", xlabel="max_depth", yscale="log")
for ax in axes:
    ax.set_xticks(list(DEPTHS))
    ax.title.set_fontsize(9)
axes[0].legend(fontsize=7)
fig.suptitle(f"k recursive slots; x: unrolling went over Budget(max_states={BUDGET.max_states:,}, "
             f"max_seconds={BUDGET.max_seconds})", fontsize=9)
fig.tight_layout()"""),
        md(r"""
## Token masks: flat index against pushdown index

One mid-sized case both routes can do: the largest *k* whose unrolled automaton at depth 3 fits
the budget. Before timing, a non-recursive schema with the same scalar properties and a small
recursive one are indexed, so that the token trie, the kernels and the string-body walk (shared by
every index of a vocabulary) are ready for both routes alike. The pushdown index is built and
replayed first, so it finds no region walks left behind by the flat index.

The document is a valid instance nested exactly `max_depth` deep (one level more is still valid
for `jsonschema` but rejected by both automata: the cut is the grammar's, by design), tokenised
greedily (longest vocabulary token first). Each step fills the bitmask, times it, keeps a copy and advances.
"""),
        code("""
from tokenfsm.masks import Matcher, PushdownIndex, TokenIndex, allocate_token_bitmask
from tokenfsm.masks.builtin_vocab import load_vocabulary

D = 3
K = max(r["k"] for r in rows if r["d"] == D and r["over"] is None)
SCHEMA = props_schema(K)

def instance(k, depth):
    node = {"type": "object", "description": f"level {depth}, one node of the tree", "nullable": depth % 2 == 0}
    if depth > 1:
        for i in range(k):
            node[f"r{i}"] = instance(k, depth - 1) if i % 2 == 0 else [instance(k, depth - 1), {"type": "string"}]
    return node

DOC = json.dumps(instance(K, D))
too_deep = json.dumps(instance(K, D + 1))
jsonschema.validate(json.loads(DOC), SCHEMA)
jsonschema.validate(json.loads(too_deep), SCHEMA)
compiled, compile_s = {}, {}
for route, runs in (("stack", 3), ("unroll", 1)):  # the cheap one: the median of three runs
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        compiled[route] = compile_quiet(SCHEMA, max_depth=D, recursion=route)
        times.append(time.perf_counter() - t0)
    compile_s[route] = float(np.median(times))
    assert compiled[route].accepts(DOC) and not compiled[route].accepts(too_deep), route
assert compiled["stack"].recursive is not None

# peak allocation of each route's compilation (tracemalloc; traced code runs slower, so timed above)
peak_mib = {}
for route in ("stack", "unroll"):
    tracemalloc.start()
    compile_quiet(SCHEMA, max_depth=D, recursion=route)
    peak_mib[route] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()

vocab = load_vocabulary("qwen")
t0 = time.perf_counter()
scalars = {k: v for k, v in SCHEMA["$defs"]["node"]["properties"].items() if not k.startswith("r")}
TokenIndex.build(compile_quiet({"type": "object", "properties": scalars, "additionalProperties": False}).dfa, vocab)
tree = {"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"}
warm = Matcher(PushdownIndex(compile_quiet(tree, max_depth=2, recursion="stack").recursive, vocab))
warm.fill_next_token_bitmask(allocate_token_bitmask(1, vocab.size), 0)
warm_s = time.perf_counter() - t0

# IndexCompiler(vocab).json_schema(SCHEMA, ...) makes the same indexes in one call (compile + index);
# here the two parts are timed apart
t0 = time.perf_counter()
pdx = PushdownIndex(compiled["stack"].recursive, vocab)
pd_build_s = time.perf_counter() - t0

ids_of = {t: i for i, t in enumerate(vocab.tokens) if t}
longest = max(map(len, ids_of))
text, tokens, at = DOC.encode(), [], 0
while at < len(text):
    n = next(n for n in range(min(longest, len(text) - at), 0, -1) if text[at:at + n] in ids_of)
    tokens.append(ids_of[text[at:at + n]])
    at += n
tokens.append(vocab.eos_token_ids[0])

def replay(index, made=None):
    m, bm = Matcher(index), allocate_token_bitmask(1, vocab.size)
    fill, step, masks = [], [], []
    for t in tokens:
        before = index.stats["misses"] if made is not None else 0
        t0 = time.perf_counter()
        m.fill_next_token_bitmask(bm, 0)
        t1 = time.perf_counter()
        if made is not None:
            made.append(index.stats["misses"] - before)  # rows computed by this fill
        m.advance(t)
        step.append(time.perf_counter() - t1)
        fill.append(t1 - t0)
        masks.append(bm[0].copy())
    assert m.is_finished()
    return np.array(fill), np.array(step), masks

passes, rows_per_step = {}, []
passes["pushdown, first pass"] = replay(pdx, rows_per_step)
rows_made = sum(rows_per_step)
again = []
passes["pushdown, rows cached"] = replay(pdx, again)
assert sum(again) == 0  # the second pass computed no row

t0 = time.perf_counter()
flat = TokenIndex.build(compiled["unroll"].dfa, vocab)
flat_build_s = time.perf_counter() - t0
passes["flat"] = replay(flat)

reference = passes["flat"][2]
for name, (_, _, masks) in passes.items():
    assert len(masks) == len(reference)
    assert all(np.array_equal(a, b) for a, b in zip(masks, reference)), name
allowed = [int(np.unpackbits(m.view(np.uint8)).sum()) for m in reference]

print(f"k = {K}, max_depth = {D}: document of {len(DOC)} characters, {len(tokens)} tokens (EOS included)")
print(f"warm-up {warm_s:.2f} s; masks identical at all {len(reference)} steps "
      f"(allowed tokens per step: {min(allowed)} to {max(allowed):,})")
print(f"flat TokenIndex: {flat.num_states:,} byte states, compiled in {compile_s['unroll']:.2f} s, indexed in "
      f"{flat_build_s:.2f} s, {flat.nbytes / 2**20:.1f} MiB")
print(f"PushdownIndex: {pdx.num_states:,} byte states, {pdx.call_entry.shape[0]} call edges, compiled in "
      f"{compile_s['stack'] * 1e3:.0f} ms, indexed in {pd_build_s * 1e3:.1f} ms, {rows_made} rows computed on the first pass, "
      f"{pdx.num_cached_rows} kept ({pdx.num_cached_rows * pdx.n_words * 4 / 2**20:.1f} MiB)")
print(f"compile peak allocation: stack {peak_mib['stack']:.1f} MiB, unrolled {peak_mib['unroll']:.1f} MiB")
print(f"\\n{'':24} {'fill median':>12} {'fill p90':>9} {'fill max':>9} {'fills total':>12} {'advance median':>15}")
stats = {}
for name, (fill, step, _) in passes.items():
    stats[name] = dict(median=np.median(fill), p90=np.percentile(fill, 90), max=fill.max(), total=fill.sum(),
                       advance=np.median(step))
    s = stats[name]
    print(f"{name:24} {s['median'] * 1e6:>9.1f} µs {s['p90'] * 1e6:>6.1f} µs {s['max'] * 1e3:>6.2f} ms "
          f"{s['total'] * 1e3:>9.1f} ms {s['advance'] * 1e6:>12.1f} µs")"""),
        code("""
fig, axes = plt.subplots(1, 2, gridspec_kw=dict(width_ratios=[2, 1]))
for i, (name, (fill, _, _)) in enumerate(passes.items()):
    axes[0].plot(fill * 1e6, lw=0.8, color=f"C{i}", label=name)
axes[0].set(title=f"mask fill per step, k = {K}, max_depth = {D}", xlabel="decoding step", ylabel="µs",
            yscale="log")
axes[0].legend(fontsize=8)
parts = {"stack,\\n1st document": [compile_s["stack"], pd_build_s, stats["pushdown, first pass"]["total"]],
         "stack,\\n2nd document": [0, 0, stats["pushdown, rows cached"]["total"]],
         "unrolled": [compile_s["unroll"], flat_build_s, stats["flat"]["total"]]}
left = np.zeros(len(parts))
for j, (what, color) in enumerate([("compile", "0.6"), ("index", "C4"), ("mask fills", "C3")]):
    widths = np.array([p[j] for p in parts.values()])
    axes[1].barh(range(len(parts)), widths, left=left, color=color, label=what)
    left += widths
for y, total in enumerate(left):
    axes[1].text(total, y, f" {total * 1e3:.0f} ms", va="center", fontsize=8)
axes[1].set(title="time for one document [s]", yticks=range(len(parts)), yticklabels=list(parts),
            xlim=(0, left.max() * 1.35))
axes[1].invert_yaxis()
axes[1].legend(fontsize=7, loc="upper right")
fig.tight_layout()"""),
        md("## What the numbers say"),
        code("""
def at(k, d):
    return next(r for r in rows if r["k"] == k and r["d"] == d)

kmax, dmax = max(KS), max(DEPTHS)
over = [r for r in rows if r["over"] is not None]
fits = [r for r in rows if r["over"] is None]
big = max(fits, key=lambda r: r["unroll_states"])

def growth(k):  # the deepest step at which both unrolled automata fitted the budget
    ok = [r for r in fits if r["k"] == k]
    return ok[-2]["d"], ok[-1]["d"], ok[-1]["unroll_states"] / ok[-2]["unroll_states"]

per_level = {k: (at(k, dmax)["byte_states"] - at(k, 1)["byte_states"]) / (dmax - 1) for k in KS}
module_states = {k: at(k, 1)["module_states"] for k in KS}
flat_module = all(at(k, d)["module_states"] == module_states[k] for k in KS for d in DEPTHS)
ratio = {r["k"]: r["unroll_states"] / r["byte_states"] for r in fits if r["d"] == D}
auto_stack = [r for r in rows if r["auto"] == "stack"]
worst = at(kmax, dmax)
lines = [
    "* **Unrolled**, the factor by which one more level multiplies the minimal DFA grows with the number of "
    "recursive slots k: " + ", ".join("{:.1f}× at k = {}".format(growth(k)[2], k) for k in KS)
    + " (the deepest step that fitted the budget each time). `expanded_states`, the unrolled tree before "
    f"minimising, reaches {worst['expanded']:,} at k = {kmax}, depth {dmax}. The largest unrolled automaton "
    f"that fitted `Budget(max_states={BUDGET.max_states:,}, max_seconds={BUDGET.max_seconds})` has "
    f"{big['unroll_states']:,} states (k = {big['k']}, depth {big['d']}, {big['unroll_s']:.2f} s); "
    f"{len(over)} of {len(rows)} points went over it"
    + (" (" + ", ".join(f"k = {r['k']} at depth {r['d']}" for r in over) + ")" if over else "") + ".",
    f"* **Stack**: one module per recursive definition ({worst['modules'] - 1} here) plus the top, "
    f"{min(module_states.values())} to {max(module_states.values())} module states for k = {min(KS)}..{kmax}, "
    + ("the same at every depth" if flat_module else "varying with the depth")
    + f". The byte table holds one variant of the definition per depth level: about "
    f"{min(per_level.values()):.0f} to {max(per_level.values()):.0f} byte states more per level, added, not "
    f"multiplied. At k = {kmax}, depth {dmax}: {worst['byte_states']:,} byte states, {worst['calls']} call edges, "
    f"a stack of at most {worst['max_stack']}, where unrolling "
    + ("went over the budget." if worst["over"] else f"needs {worst['unroll_states']:,} states.")
    + f" At depth {D} the unrolled DFA has {min(ratio.values()):.1f}× (k = {min(ratio, key=ratio.get)}) to "
    f"{max(ratio.values()):.1f}× (k = {max(ratio, key=ratio.get)}) the stack's byte states.",
    f"* Compile time: the stack route took {np.median([r['stack_s'] for r in rows]) * 1e3:.0f} ms in the median, "
    f"{max(r['stack_s'] for r in rows) * 1e3:.0f} ms at most, whatever k and the depth; unrolling up to "
    f"{max(r['unroll_s'] for r in fits):.2f} s for the points that fitted. The default " + '`recursion="auto"`'
    + f" took the stack route at {len(auto_stack)} of {len(rows)} points (`expanded_states` above "
    f"{UNROLL_STATES:,})" + (": " + ", ".join(f"k = {r['k']} at depth {r['d']}" for r in auto_stack)
                              if auto_stack else "") + ".",
]
s1, s2, sf = stats["pushdown, first pass"], stats["pushdown, rows cached"], stats["flat"]
made_at = np.flatnonzero(rows_per_step)
computing = passes["pushdown, first pass"][0][made_at]
lines += [
    f"* **Token masks**, k = {K}, depth {D}, Qwen2.5 ({vocab.size:,} ids), a document of {len(tokens)} tokens: "
    f"the flat `TokenIndex` ({flat.num_states:,} byte states) took **{flat_build_s:.2f} s** to build (after "
    f"{compile_s['unroll']:.2f} s of unrolled compilation) and holds {flat.nbytes / 2**20:.1f} MiB; the "
    f"`PushdownIndex` ({pdx.num_states:,} byte states) took {pd_build_s * 1e3:.1f} ms (after "
    f"{compile_s['stack'] * 1e3:.0f} ms of compilation), and the whole first pass then computed {rows_made} rows "
    f"in **{s1['total'] * 1e3:.0f} ms** of fills ({pdx.num_cached_rows * pdx.n_words * 4 / 2**20:.1f} MiB of rows "
    f"kept). From schema to the first document's last mask: "
    f"{(compile_s['stack'] + pd_build_s + s1['total']) * 1e3:.0f} ms on the stack route against "
    f"{(compile_s['unroll'] + flat_build_s + sf['total']) * 1e3:.0f} ms unrolled.",
    f"* Rows were computed at {made_at.size} of {len(tokens)} steps, spread over the document (steps "
    f"{made_at.min()} to {made_at.max()}): a new stack configuration can turn up wherever the document opens "
    f"a nested node. Those steps took {np.median(computing) * 1e6:.0f} µs in the median, "
    f"{computing.max() * 1e3:.1f} ms at most.",
    f"* Mask fill per step, median / p90: flat {sf['median'] * 1e6:.1f} / {sf['p90'] * 1e6:.1f} µs; pushdown "
    f"first pass {s1['median'] * 1e6:.1f} / {s1['p90'] * 1e6:.1f} µs; pushdown with its rows cached "
    f"{s2['median'] * 1e6:.1f} / {s2['p90'] * 1e6:.1f} µs ({s2['median'] / sf['median']:.1f}× the flat median). "
    f"Advancing by a token: median {sf['advance'] * 1e6:.1f} µs flat, {s2['advance'] * 1e6:.1f} µs with the stack.",
    f"* Both indexes gave the same mask at all {len(reference)} steps (asserted), "
    f"{min(allowed)} to {max(allowed):,} allowed tokens per step.",
    f"* Peak allocation while compiling this case (tracemalloc): {peak_mib['stack']:.1f} MiB on the stack route, "
    f"{peak_mib['unroll']:.1f} MiB unrolled. The notebook ran in {time.perf_counter() - t_notebook:.0f} s "
    f"up to this cell (the sweep {sweep_s:.0f} s).",
]
display(Markdown("\\n".join(lines)))"""),
        md(r"""
**Reading.** Unrolling pays for recursion in states: every level holds a copy of the definition
for each recursive slot, and minimisation cannot merge copies that sit at different depths (each
knows how much nesting is still allowed), so the automaton multiplies with *k* from level to level
and its flat index has a state, and a row walk at build time, for every copy. The stack route keeps
one copy of the definition per depth level and moves the rest of the cost to decoding: the mask of
a stack configuration is computed the first time it is met and cached, keyed by the stack entries
it depends on, so it costs on the first documents what the flat index spends up front on every
state, reachable by the document or not. Where the unrolled automaton is small, the flat index is
the simplest thing to serve, which is why `"auto"` unrolls up to `UNROLL_STATES`; past it, the
stack route is what keeps a deeply recursive schema buildable.
"""),
        md(r"""
## Shared definitions: copied into every place, or called

**Question.** A recursive definition usually names other definitions that are not recursive
(Kubernetes' `JSONSchemaProps` names `ExternalDocumentation`, a pod names `ObjectMeta` and
`Container`). Copied in place, such a definition is paid once per place that names it *and* once per
depth variant of the recursive definition around it. On the stack route a non-recursive definition
of at least `SHARE_STATES` states is compiled once and called instead. What does that save?

**Method.** The family above with *k* = 3 recursive slots at `max_depth` 3, plus a non-recursive
`meta` definition (an object of six properties: a pattern, an enum, bounded integers, a map of
bounded strings, a bounded array, a `uuid`) named from *m* = 1..6 properties of the node. Each point
is compiled on the stack route twice: as the library does it (shared) and with the fast path's
reference, no definition shared (copied); compile time (median of three), automata, byte states and call
edges. Both must mean the same: their expansions at `max_depth` 1 are compared as minimal DFAs.
"""),
        code("""
from tokenfsm.schema.compiler import compile_tuned
from tokenfsm.schema.tuning import DEFAULT_TUNING, SHARE_STATES

META = {"type": "object", "properties": {
    "name": {"type": "string", "pattern": "^[a-z][a-z0-9-]{0,30}$"},
    "kind": {"enum": ["Pod", "Service", "Deployment", "Job"]},
    "replicas": {"type": "integer", "minimum": 0, "maximum": 1000},
    "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 20}},
    "ports": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 65535}, "maxItems": 4},
    "uid": {"type": "string", "format": "uuid"}}, "required": ["name"], "additionalProperties": False}

def shared_schema(m, k=3):
    schema = props_schema(k)
    for j in range(m):
        schema["$defs"]["node"]["properties"][f"meta{j}"] = {"$ref": "#/$defs/meta"}
    schema["$defs"]["meta"] = META
    return schema

SHARE_DEFAULT = SHARE_STATES

def compile_shared(schema, tuning, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile_tuned(schema, tuning, **options)

share_rows = []
for m in range(1, 7):
    row = {"m": m}
    # the library's setting, and its reference: no definition shared (every one copied)
    for label, tuning in (("shared", DEFAULT_TUNING),
                          ("copied", DEFAULT_TUNING.with_reference("share_states"))):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            c = compile_shared(shared_schema(m), tuning, max_depth=3, recursion="stack")
            times.append(time.perf_counter() - t0)
        pb = c.recursive.to_bytes()
        row[label] = dict(s=float(np.median(times)), automata=len(c.recursive.modules),
                          bytes=pb.num_states, calls=pb.num_calls,
                          dfa1=compile_shared(shared_schema(m), tuning, max_depth=1,
                                              recursion="stack").dfa)
    assert row["shared"]["dfa1"] == row["copied"]["dfa1"]   # the same language
    share_rows.append(row)

print(f"{'m':>2} | {'shared: ms':>10} {'automata':>8} {'bytes':>6} {'calls':>5} | "
      f"{'copied: ms':>10} {'automata':>8} {'bytes':>6} {'calls':>5}")
for r in share_rows:
    a, b = r["shared"], r["copied"]
    print(f"{r['m']:>2} | {a['s'] * 1e3:>10.0f} {a['automata']:>8} {a['bytes']:>6,} {a['calls']:>5} | "
          f"{b['s'] * 1e3:>10.0f} {b['automata']:>8} {b['bytes']:>6,} {b['calls']:>5}")

fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
ms = [r["m"] for r in share_rows]
for label, style in (("shared", "o-"), ("copied", "s--")):
    axes[0].plot(ms, [r[label]["bytes"] for r in share_rows], style, label=label)
    axes[1].plot(ms, [r[label]["s"] * 1e3 for r in share_rows], style, label=label)
axes[0].set(title="byte states of the stack route", xlabel="places naming meta (m)")
axes[1].set(title="compile time [ms]", xlabel="places naming meta (m)")
axes[0].legend(fontsize=8)
fig.tight_layout()
first, last = share_rows[0], share_rows[-1]
per_place = {lab: (last[lab]["bytes"] - first[lab]["bytes"]) / (last["m"] - first["m"])
             for lab in ("shared", "copied")}
display(Markdown(
    f"* Each further place that names `meta` adds **{per_place['copied']:,.0f} byte states** when `meta` is "
    f"copied (one copy per place and per depth variant of the node) and **{per_place['shared']:,.0f}** when "
    f"it is called (the key of one more property and its call). At m = {last['m']}: {last['copied']['bytes']:,} "
    f"against {last['shared']['bytes']:,} byte states ({last['copied']['bytes'] / last['shared']['bytes']:.1f}×), "
    f"compiled in {last['copied']['s'] * 1e3:.0f} ms against {last['shared']['s'] * 1e3:.0f} ms.\\n"
    f"* Shared, the route has {last['shared']['automata']} automata (the top, the node, `meta`) and "
    f"{last['shared']['calls']} call edges instead of {last['copied']['calls']}: a call costs a push and a pop "
    f"when decoding, and a mask row per new stack configuration, which is why only definitions of at least "
    f"`SHARE_STATES` = {SHARE_DEFAULT} states are shared.\\n"
    f"* The expansions at `max_depth` 1 were the same minimal DFA for every m (asserted)."))"""),
    ]


NOTEBOOKS = {
    "01": ("01_exclusions_vs_length_bounds.ipynb", notebook_01),
    "02": ("02_key_order.ipynb", notebook_02),
    "03": ("03_runaway_whitespace.ipynb", notebook_03),
    "04": ("04_token_index.ipynb", notebook_04),
    "05": ("05_recursion.ipynb", notebook_05),
}


def build(key: str) -> Path:
    """Write notebook ``key`` (without outputs) and return its path."""
    name, cells = NOTEBOOKS[key]
    nb = new_notebook(cells=cells())
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path = HERE / name
    nbformat.write(nb, path)
    return path


def execute(path: Path, timeout: int = 600) -> float:
    """Run a notebook in place with nbclient, keeping its outputs; return the seconds taken."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    nbformat.write(nb, path)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", help="notebook numbers (default: all)", default=list(NOTEBOOKS))
    parser.add_argument("--execute", action="store_true", help="run them and keep the outputs")
    args = parser.parse_args(argv)
    for key in args.which:
        path = build(key)
        if args.execute:
            print(f"{path.name}: {execute(path):.1f} s", file=sys.stderr)
        else:
            print(path.name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
