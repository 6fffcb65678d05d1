"""Module caches are bounded in bytes: a long-running process that compiles many distinct schemas
levels off instead of growing with every schema, and ``clear_caches`` empties them all.

The process is a fresh interpreter (so nothing another test kept counts); its resident memory is
read after a garbage collection and ``malloc_trim`` at checkpoints. Before the caches were bounded
in bytes this workload grew by about 55 MB between its 200th and 300th schema, and 250 MB in all.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from tokenfsm.automata.cache import ByteLRU, BoundedMemo, byte_lru_cache, cache_info, clear_caches

SCRIPT = textwrap.dedent(r"""
    import ctypes, gc, json, sys, warnings
    warnings.simplefilter("ignore")
    from tokenfsm.automata.cache import cache_info, clear_caches
    from tokenfsm.schema import compile_json_schema

    def rss_mb():
        gc.collect()
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / (1 << 20)

    def schema(i):
        return {"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string", "pattern": f"^[a-z]{{{i % 7 + 1}}}-{i}[0-9]+$"},
            "b": {"type": "string", "maxLength": 40 + i},
            "c": {"enum": [f"v{i}_{k}" for k in range(5)]},
            "d": {"type": "integer", "minimum": i, "maximum": 1000 + 7 * i},
            "e": {"type": "string", "format": ["date", "email", "ipv4", "uuid"][i % 4]},
            "f": {"type": "string", "pattern": f"\\p{{L}}{{{i % 5 + 1}}}x{i}"},
            "g": {"type": "string", "minLength": 1 + i % 9, "maxLength": 64 + i},
            "h": {"type": "string", "pattern": f"^(ab|c[d-z]){{{1 + i % 4},{12 + i % 20}}}x{i}$"},
        }}

    out = {"base": rss_mb(), "rss": {}, "over": []}
    for i in range(300):
        compile_json_schema(schema(i), excludes=[f"<|end{i % 50}|>"], whitespace=i % 3)
        if (i + 1) % 50 == 0:
            out["rss"][i + 1] = rss_mb()
            info = cache_info()
            out["over"] += [name for name, c in info.items() if c.nbytes > c.max_bytes]
            out["estimated"] = sum(c.nbytes for c in info.values()) / (1 << 20)
    clear_caches()
    out["cleared"] = rss_mb()
    out["left"] = {name: c.entries for name, c in cache_info().items() if c.entries}
    print(json.dumps(out))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_retained_memory_levels_off_over_300_distinct_schemas(capsys):
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.splitlines()[-1])
    rss = {int(k): v for k, v in out["rss"].items()}
    with capsys.disabled():          # the curve, printed with -s
        print("\nretained MB after n schemas:", {n: round(v - out["base"]) for n, v in rss.items()},
              f"caches estimate {out['estimated']:.0f} MB, after clear_caches "
              f"{out['cleared'] - out['base']:.0f} MB")
    assert not out["over"]                       # no cache ever held more than its bound
    assert rss[300] - rss[200] < 16, rss         # levelled off (55 MB when unbounded)
    assert not out["left"]                       # clear_caches emptied every registered cache
    # the estimate is honest: what clearing gives back is not much more than was estimated
    assert rss[300] - out["cleared"] < 2 * out["estimated"] + 8, (out, rss)


def test_byte_lru_drops_least_recently_used_past_its_bytes():
    c = ByteLRU(None, max_bytes=100, size_of=lambda v: v)
    for k, v in [("a", 40), ("b", 40), ("c", 10)]:
        assert c.put(k, v, nbytes=v)
    assert c.get("a") == 40                      # "a" is now the most recently used
    assert c.put("d", 30, nbytes=30)             # 120 > 100: "b", the least recent, goes
    assert "b" not in c and all(k in c for k in "acd") and c.nbytes == 80
    assert not c.put("huge", 0, nbytes=101)      # larger than the whole cache: not kept
    assert "huge" not in c and c.nbytes == 80
    assert c.put("a", 5, nbytes=5) and c.nbytes == 45   # replaced, charged anew


def test_bounded_memo_empties_itself_when_full_and_reads_like_a_dict():
    m = BoundedMemo(None, max_bytes=100)
    m.put(1, "x", 60)
    assert m.get(1) == "x" and m[1] == "x" and len(m) == 1
    m.put(2, "y", 60)                            # 120 > 100: emptied, then kept
    assert dict(m) == {2: "y"} and m.nbytes == 60
    m.put(3, "z", 500)                           # larger than the memo: not kept
    assert 3 not in m
    m.clear()
    assert not m and m.nbytes == 0


def test_byte_lru_cache_memoises_and_registers():
    calls = []

    @byte_lru_cache("tests.retained_memory.square", max_bytes=1 << 16)
    def square(x, scale=1):
        calls.append(x)
        return [x * x * scale]

    assert square(3) is square(3) and calls == [3]
    assert square(3, scale=2) == [18] and calls == [3, 3]
    info = cache_info()["tests.retained_memory.square"]
    assert (info.entries, info.hits, info.misses) == (2, 1, 2)
    clear_caches()
    assert cache_info()["tests.retained_memory.square"].entries == 0
    square(3)
    assert calls == [3, 3, 3]


def test_every_module_cache_is_registered():
    """Import every module, then check each registered cache has a byte bound and that nothing
    the modules keep at module level in an ``lru_cache`` with arguments escapes the registry."""
    import functools
    import importlib
    import inspect

    from test_docstrings import MODULES

    unbounded = []
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if isinstance(obj, functools._lru_cache_wrapper) and obj.__module__ == name:
                params = inspect.signature(obj.__wrapped__).parameters
                if params:                       # a constant (no arguments) is one entry
                    unbounded.append(f"{name}.{attr}")
    assert not unbounded
    info = cache_info()
    assert {"schema.lower_scalars.string_text", "schema.lower_scalars.number_text", "schema.ecma.pattern_dfa", "schema.ecma.property",
            "automata.nfa.partitions", "masks.trie"} <= set(info)
    assert all(0 < c.max_bytes <= 1 << 30 for c in info.values())
