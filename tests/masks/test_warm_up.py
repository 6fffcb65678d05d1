"""IndexCompiler.warm_up: every kernel the routes call is ready before the first request.

The oracle is a workload the warm-up table does not contain: the dev corpora's sample, compiled
in schema order and in any key order with undeclared keys, every valid document filled along
character by character, in a fresh process after a warm-up. It must load no kernel and import
no module (an import on the way of a request, such as the metadata parser that reading the
package's version takes, costs that request milliseconds).
"""

import json
import os
import subprocess
import sys
import warnings

import pytest

from tokenfsm.masks import IndexCompiler, Matcher, allocate_token_bitmask
from tokenfsm.masks.warmup import WARM_UPS, loaded_kernels

from mask_helpers import qwen_vocab

JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")


def test_every_route_is_taken_and_a_second_warm_up_loads_nothing():
    compiler = IndexCompiler(qwen_vocab(), max_entries=4)
    first = compiler.warm_up()
    assert first["routes"] == len(WARM_UPS) and first["seconds"] > 0
    assert compiler.warm_up()["kernels"] == 0
    assert len(compiler) == 0          # nothing kept in the compiler's cache
    assert loaded_kernels() >= first["kernels"] >= 0


def test_each_warm_up_text_is_a_document_of_its_grammar():
    # (warm_up raises where a text is refused; the texts are also what a user's schema writes)
    from tokenfsm.schema import compile_json_schema

    for w in WARM_UPS:
        if w.schema is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs = compile_json_schema(w.schema, **w.options)
        assert cs.accepts(w.text), w.route


_WORKLOAD = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[2])
from mask_helpers import qwen_vocab
from tokenfsm.masks import IndexCompiler, Matcher, allocate_token_bitmask
from tokenfsm.masks.warmup import kernel_signatures

compiler = IndexCompiler(qwen_vocab(), max_entries=0)
compiler.warm_up()
before = kernel_signatures()
modules = set(sys.modules)
rows = json.load(open(sys.argv[1]))
bm = allocate_token_bitmask(1, compiler.vocab.size)
for options in ({}, {"property_order": "any", "allow_extra_keys": True}):
    for row in rows:
        index = compiler.json_schema(row["schema"], whitespace=0, strict=False, **options)
        for t in row["tests"]:
            if not t["valid"]:
                continue
            m = Matcher(index)
            for ch in json.dumps(t["data"], ensure_ascii=False, separators=(",", ":")):
                m.fill_next_token_bitmask(bm, 0)
                if not m.accept_string(ch):
                    break
after = kernel_signatures()
print(json.dumps({"kernels": sorted(k for k in after if after[k] != before[k]),
                  "modules": sorted(set(sys.modules) - modules)}))
"""


@pytest.mark.skipif(not JIT, reason="kernels are plain functions without Numba's JIT")
def test_after_a_warm_up_the_corpus_sample_loads_no_kernel_nor_module(tmp_path):
    here = os.path.dirname(__file__)
    sample = os.path.join(here, "..", "data", "schema", "maskbench_sample.json")
    script = tmp_path / "workload.py"
    script.write_text(_WORKLOAD)
    out = subprocess.run([sys.executable, str(script), sample, here], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"kernels": [], "modules": []}


def test_a_matcher_after_a_warm_up_fills_as_before():
    compiler = IndexCompiler(qwen_vocab(), max_entries=0)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    bm_cold = allocate_token_bitmask(1, compiler.vocab.size)
    Matcher(compiler.json_schema(schema)).fill_next_token_bitmask(bm_cold, 0)
    compiler.warm_up()
    bm = allocate_token_bitmask(1, compiler.vocab.size)
    Matcher(compiler.json_schema(schema)).fill_next_token_bitmask(bm, 0)
    assert (bm == bm_cold).all()
