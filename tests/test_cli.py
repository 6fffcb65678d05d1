"""The ``tokenfsm`` command, driven as a subprocess the way a user runs it.

Most tests use a small byte-level ``tokenizer.json`` written here (every byte, a few merges, an EOS
token), so that building a token index is instant; the demo runs on the built-in Qwen vocabulary as
the README promises. Every error case must be one line on stderr and a non-zero exit status, never
a traceback; sampled documents are checked with ``jsonschema`` and ``re.fullmatch``, not with the
automaton that produced them.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import unicodedata
from pathlib import Path

import jsonschema
import pytest

from tokenfsm.masks.vocab import gpt2_bytes_to_unicode

ROOT = Path(__file__).resolve().parents[1]

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city", "unit", "days"],
    "additionalProperties": False,
}

MERGES = ['{"', '":', '",', '"}', '"', "city", "unit", "days", "celsius", "fahrenheit", "Paris",
          " ", ", ", "<|im_end|>", "ab", "abc", "12", "-"]


def run(*args, env=None, check_rc=None):
    """Run ``python -m tokenfsm.masks.cli ARGS``; returns the CompletedProcess."""
    proc = subprocess.run([sys.executable, "-m", "tokenfsm.masks.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    if check_rc is not None:
        assert proc.returncode == check_rc, (proc.returncode, proc.stdout, proc.stderr)
    return proc


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A schema file and two small tokenizer.json files (with and without an EOS token)."""
    d = tmp_path_factory.mktemp("cli")
    enc = gpt2_bytes_to_unicode()
    pieces = [enc[b] for b in range(256)]
    pieces += ["".join(enc[b] for b in m.encode()) for m in MERGES if len(m.encode()) > 1]
    vocab = {p: i for i, p in enumerate(dict.fromkeys(pieces))}
    tok = {
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
        "pre_tokenizer": {"type": "ByteLevel"},
        "decoder": {"type": "ByteLevel"},
        "added_tokens": [{"id": len(vocab), "content": "<|endoftext|>", "special": True}],
    }
    (d / "tokenizer.json").write_text(json.dumps(tok))
    tok_no_eos = dict(tok, added_tokens=[])
    (d / "no_eos.json").write_text(json.dumps(tok_no_eos))
    (d / "schema.json").write_text(json.dumps(SCHEMA))
    (d / "typo.json").write_text(json.dumps({"type": "strnig"}))
    (d / "broken.json").write_text('{"type": "object",')
    return d


def columns(line: str) -> int:
    """Terminal columns the line takes (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def env80():
    return dict(os.environ, COLUMNS="80")


def assert_fits_80(*texts):
    for text in texts:
        for line in text.splitlines():
            assert columns(line) <= 80, (columns(line), line)


def assert_one_line_error(proc, *needles):
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("tokenfsm: error: "), lines[0]
    for n in needles:
        assert n in lines[0], (n, lines[0])


# ------------------------------------------------------------------------------------------ help
def test_help_lists_commands_vocabularies_and_examples():
    proc = run("--help", env=env80(), check_rc=0)
    assert_fits_80(proc.stdout)
    for word in ("demo", "compile", "sample", "inspect", "qwen3.6", "llama3", "cl100k", "examples:"):
        assert word in proc.stdout


@pytest.mark.parametrize("command", ["demo", "compile", "sample", "inspect"])
def test_subcommand_help_has_an_example(command):
    proc = run(command, "--help", env=env80(), check_rc=0)
    assert_fits_80(proc.stdout)
    assert proc.stdout.startswith(f"usage: tokenfsm {command}")
    assert "example" in proc.stdout


def test_no_command_prints_help_and_fails():
    proc = run()
    assert proc.returncode == 2
    assert "usage: tokenfsm" in proc.stdout


def test_installed_script_runs():
    script = shutil.which("tokenfsm") or os.path.join(sysconfig.get_path("scripts"), "tokenfsm")
    if not os.path.exists(script):
        pytest.skip("the tokenfsm script is not installed (pip install -e .)")
    proc = subprocess.run([script, "inspect", "--regex", "a+b"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "states" in proc.stdout and '"ab"' in proc.stdout


# ------------------------------------------------------------------------------------------ demo
def test_demo_on_the_builtin_vocabulary():
    proc = run("demo", "-n", "4", "--seed", "3", env=env80(), check_rc=0)
    assert_fits_80(proc.stdout, proc.stderr)  # the table, the documents and the progress lines
    out = proc.stdout
    for row in ("load vocabulary", "token trie + first index build", "compile schema",
                "build token index", "mask per token: fill bitmask", "validate with jsonschema"):
        assert row in out, row
    assert "valid 4/4" in out
    assert "151,851 ids" in out
    assert out.count("[valid]") == 4
    # the documents are shown whole (folded at the width), each valid for the example's schema
    from tokenfsm.masks.examples import get_weather

    shown = out.split("one a line):\n", 1)[1].split("  [valid] ")[1:]
    for doc in shown:
        jsonschema.validate(json.loads("".join(line.strip() for line in doc.splitlines())),
                            get_weather().schema)
    assert "Traceback" not in proc.stderr
    assert "6/6 done" in proc.stderr  # the progress bar ends complete


# ----------------------------------------------------------------------------- compile / inspect
def test_compile_schema_prints_sizes_and_saves_the_index(files, tmp_path):
    from tokenfsm.masks import TokenIndex, Vocabulary

    target = tmp_path / "index.npz"
    proc = run("compile", files / "schema.json", "--vocab", files / "tokenizer.json",
               "--exclude", "<|im_end|>", "--save", target, check_rc=0)
    out = proc.stdout
    for word in ("automaton", "states", "rules", "token index", "build time", "distinct mask rows",
                 "memory", "warnings: 0", f"saved index to {target}"):
        assert word in out, word
    index = TokenIndex.load(target, Vocabulary.from_file(files / "tokenizer.json"))
    assert index.num_states > 10


def test_compile_regex(files):
    proc = run("compile", "--regex", r"[0-9]{3}-[0-9]{4}", "--vocab", files / "tokenizer.json", check_rc=0)
    assert "states             9" in proc.stdout


def test_compile_reports_warnings(files):
    proc = run("compile", files / "schema.json", "--vocab", files / "tokenizer.json",
               "--whitespace", "none", check_rc=0)
    assert "warnings: 0" not in proc.stdout
    assert "whitespace" in proc.stdout


def test_inspect_sizes_rules_and_dot(files):
    sizes = run("inspect", files / "schema.json", check_rc=0).stdout
    assert "states" in sizes and "shortest" in sizes
    shortest = json.loads(json.loads(sizes.split("shortest", 1)[1].splitlines()[0].strip()))
    jsonschema.validate(shortest, SCHEMA)
    rules = run("inspect", "--regex", r"[a-z]+@[a-z]+\.com", "--rules", check_rc=0).stdout
    assert rules.splitlines()[0] == "S1 ::= [a-z] S2"
    dot = run("inspect", "--regex", "ab|c", "--dot", check_rc=0).stdout
    assert dot.startswith("digraph DFA {") and dot.rstrip().endswith("}")


# ---------------------------------------------------------------------------------------- sample
def test_sample_prints_valid_documents_one_a_line(files):
    args = ("sample", files / "schema.json", "-n", "6", "--seed", "5", "--vocab", files / "tokenizer.json")
    proc = run(*args, "--exclude", "<|im_end|>", check_rc=0)
    lines = proc.stdout.splitlines()
    assert len(lines) == 6
    for line in lines:
        doc = json.loads(line)
        jsonschema.validate(doc, SCHEMA)
        assert "<|im_end|>" not in line
    assert "valid by jsonschema: 6/6" in proc.stderr
    again = run(*args, "--exclude", "<|im_end|>", check_rc=0)
    assert again.stdout == proc.stdout  # the seed fixes the documents


@pytest.mark.parametrize("extra", [False, True])
def test_sample_in_any_order_writes_the_required_keys(tmp_path, extra):
    # keys in any order are a key set held in the configuration: the sampler's pull counts the
    # required keys not written yet, so that a value does not go on instead of the next member
    # (with undeclared keys among them, which this schema does not forbid)
    schema = {"type": "object", "required": ["z", "s"], "properties": {
        "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"},
        "d": {"type": "integer"}, "s": {"enum": [1, 2]},
        "z": {"type": "object", "required": ["w", "h"],
              "properties": {k: {"type": "integer"} for k in "whdra"}}}}
    path = tmp_path / "any.json"
    path.write_text(json.dumps(schema))
    proc = run("sample", path, "--property-order", "any", "-n", "6", "--seed", "0",
               *(["--allow-extra-keys"] if extra else []), check_rc=0)
    lines = proc.stdout.splitlines()
    assert len(lines) == 6 and "valid by jsonschema: 6/6" in proc.stderr, proc.stderr
    docs = [json.loads(line) for line in lines]
    for doc in docs:
        jsonschema.validate(doc, schema)
    undeclared = {k for doc in docs for k in doc} - set(schema["properties"])
    assert bool(undeclared) == extra, undeclared


def test_sample_with_whitespace_keeps_one_document_per_line(files):
    proc = run("sample", files / "schema.json", "-n", "4", "--seed", "1", "--whitespace", "2",
               "--vocab", files / "tokenizer.json", "-q", check_rc=0)
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 and proc.stderr == ""
    for line in lines:
        jsonschema.validate(json.loads(line), SCHEMA)


def test_sample_regex(files):
    pattern = r"[a-c]{2,5}-[0-9]{2}"
    proc = run("sample", "--regex", pattern, "-n", "5", "--vocab", files / "tokenizer.json", check_rc=0)
    lines = proc.stdout.splitlines()
    assert len(lines) == 5
    assert all(re.fullmatch(pattern, line) for line in lines)


# ----------------------------------------------------------------------- recursive: stack route
TREE = {"$defs": {"node": {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 6},
    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
    "required": ["name"], "additionalProperties": False}}, "$ref": "#/$defs/node"}


@pytest.fixture(scope="module")
def tree(files):
    (files / "tree.json").write_text(json.dumps(TREE))
    return files / "tree.json"


def test_stack_route_compile_inspect_and_sample(files, tree):
    tok = files / "tokenizer.json"
    out = run("compile", tree, "--vocab", tok, "--recursion", "stack", check_rc=0).stdout
    for word in ("route", "stack: 1 definition(s) as automata", "call edges", "first row", "warnings: 1"):
        assert word in out, word
    sizes = run("inspect", tree, "--recursion", "stack", check_rc=0).stdout
    assert "states over bytes" in sizes and "call edges" in sizes
    assert_one_line_error(run("inspect", tree, "--recursion", "stack", "--rules"), "--recursion unroll")
    proc = run("sample", tree, "-n", "4", "--seed", "3", "--vocab", tok, "--recursion", "stack",
               "--max-tokens", "400", check_rc=0)
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 and "valid by jsonschema: 4/4" in proc.stderr
    for line in lines:
        jsonschema.validate(json.loads(line), TREE)


def test_stack_route_index_cannot_be_saved(files, tree, tmp_path):
    assert_one_line_error(run("compile", tree, "--vocab", files / "tokenizer.json", "--recursion",
                              "stack", "--save", tmp_path / "x.npz"), "no file format")


# ------------------------------------------------------------------------------ counted pieces
COUNTED = {"type": "array", "items": {"type": "string", "maxLength": 10**6}, "minItems": 1,
           "maxItems": 10**9}


def test_counted_schema_and_regex_compile_inspect_and_sample(files):
    (files / "counted.json").write_text(json.dumps(COUNTED))
    tok = files / "tokenizer.json"
    out = run("compile", files / "counted.json", "--vocab", tok, check_rc=0).stdout
    for word in ("route", "counted: 2 plain, 2 counted", "first row", "warnings: 0"):
        assert word in out, word
    sizes = run("inspect", "--regex", r"[\s\S]{0,100000000}", check_rc=0).stdout
    assert "counted: 0 plain, 1 counted" in sizes
    assert_one_line_error(run("inspect", files / "counted.json", "--rules"), "no single automaton")
    assert_one_line_error(run("compile", files / "counted.json", "--vocab", tok, "--save",
                              files / "x.npz"), "no file format")
    proc = run("sample", files / "counted.json", "-n", "4", "--seed", "1", "--vocab", tok,
               "--max-tokens", "200", "--exclude", "ab", check_rc=0)
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 and "valid by jsonschema: 4/4" in proc.stderr
    for line in lines:
        value = json.loads(line)
        jsonschema.validate(value, COUNTED)
        assert not any("ab" in v for v in value)


#: A tagged oneOf whose one automaton passes --max-states 60 and its branches do not.
TAGGED = {"type": "object", "oneOf": [
    {"type": "object", "required": ["kind"],
     "properties": {"kind": {"const": "a"}, "x": {"type": "boolean"}}},
    {"type": "object", "required": ["kind"],
     "properties": {"kind": {"enum": ["b", 1]}, "x": {"type": "null"}}}]}


def test_a_union_compiled_branch_by_branch_compile_inspect_and_sample(files):
    (files / "tagged.json").write_text(json.dumps(TAGGED))
    tok = files / "tokenizer.json"
    tight = ("--max-states", "60", "--property-order", "any", "--whitespace", "0")
    out = run("compile", files / "tagged.json", "--vocab", tok, *tight, check_rc=0).stdout
    for word in ("union: the root's 2 branches", "branch 2", "first row", "warnings: 0"):
        assert word in out, word
    assert "branch 1" in run("inspect", files / "tagged.json", *tight, check_rc=0).stdout
    assert_one_line_error(run("inspect", files / "tagged.json", *tight, "--dot"),
                          "no single automaton")
    assert_one_line_error(run("compile", files / "tagged.json", "--vocab", tok, *tight,
                              "--save", files / "x.npz"), "no file format")
    proc = run("sample", files / "tagged.json", "-n", "4", "--seed", "2", "--vocab", tok, *tight,
               check_rc=0)
    assert "valid by jsonschema: 4/4" in proc.stderr
    for line in proc.stdout.splitlines():
        jsonschema.validate(json.loads(line), TAGGED)


# ---------------------------------------------------------------------------------------- errors
def test_error_bad_schema(files):
    assert_one_line_error(run("inspect", files / "typo.json"), "/type")


def test_error_schema_not_json(files):
    assert_one_line_error(run("compile", files / "broken.json", "--vocab", files / "tokenizer.json"),
                          "not valid JSON")


def test_error_missing_schema_file(files):
    assert_one_line_error(run("sample", files / "nope.json"), "not found", "nope.json")


def test_error_bad_regex():
    assert_one_line_error(run("inspect", "--regex", r"(a)\1"), "back-reference", "cannot recall")
    assert_one_line_error(run("inspect", "--regex", "a(b"), "position")


def test_error_budget_exceeded():
    proc = run("inspect", "--regex", r"[\s\S]{0,300}", "--exclude", "<|im_end|>", "--max-states", "200")
    assert_one_line_error(proc, "budget of 200 states")


def test_error_unknown_vocabulary(files):
    assert_one_line_error(run("compile", files / "schema.json", "--vocab", "gpt9"), "gpt9")


def test_error_missing_vocabulary_file(files):
    assert_one_line_error(run("compile", "--regex", "a", "--vocab", files / "missing.json"), "missing.json")


def test_error_vocabulary_without_eos(files):
    assert_one_line_error(run("sample", "--regex", "ab", "--vocab", files / "no_eos.json"), "end-of-sequence")


def test_error_usage_is_one_line():
    assert_one_line_error(run("compile"), "--regex")
    assert_one_line_error(run("sample", "--regex", "a", "-n", "0"), "positive")
    assert run("compile").returncode == 2


def test_error_schema_and_regex_together(files):
    assert_one_line_error(run("inspect", files / "schema.json", "--regex", "a"), "not allowed")


def test_empty_regex_language_is_an_error():
    assert_one_line_error(run("inspect", "--regex", "ab", "--exclude", "a"), "accepts no string")


def test_sample_into_a_closed_pipe_is_quiet(files):
    cmd = (f"{sys.executable} -m tokenfsm.masks.cli sample --regex '[a-c]{{2,4}}' -n 300 -q "
           f"--vocab {files / 'tokenizer.json'} | head -1; exit ${{PIPESTATUS[0]}}")
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"[a-c]{2,4}\n", proc.stdout)
    assert proc.stderr == ""


# ------------------------------------------------------------------- one default, files, plain text
def states_reported(proc) -> int:
    return int(re.search(r"^  states +([0-9,]+)", proc.stdout, flags=re.M).group(1).replace(",", ""))


def test_one_whitespace_default_the_librarys(files):
    from tokenfsm.schema import compile_json_schema

    want = compile_json_schema(SCHEMA).dfa.num_states  # the library's default
    compiled = run("compile", files / "schema.json", "--vocab", files / "tokenizer.json", check_rc=0)
    inspected = run("inspect", files / "schema.json", check_rc=0)
    assert states_reported(compiled) == states_reported(inspected) == want
    assert want != compile_json_schema(SCHEMA, whitespace=0).dfa.num_states  # the test can tell
    for command in ("compile", "sample", "inspect", "demo"):
        assert "default 2, as in compile_json_schema" in " ".join(run(command, "--help").stdout.split())


def test_save_needs_an_existing_folder_and_a_file_name(files, tmp_path):
    args = ("compile", "--regex", "ab", "--vocab", files / "tokenizer.json", "--save")
    assert_one_line_error(run(*args, tmp_path / "missing" / "ix.npz"), "does not exist", "missing")
    assert not (tmp_path / "missing").exists()
    assert_one_line_error(run(*args, tmp_path), "is a folder")
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind either


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_saved_index_mode_follows_the_umask(files, tmp_path, umask):
    target = tmp_path / "ix.npz"
    cmd = (f"umask {umask:03o}; {sys.executable} -m tokenfsm.masks.cli compile --regex ab "
           f"--vocab {files / 'tokenizer.json'} --save {target}")
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_tiktoken_file_sample_with_eos(tmp_path):
    import base64

    ranks = [bytes([b]) for b in range(256)] + [b"ab", b"12"]
    path = tmp_path / "tiny.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(ranks)))
    assert_one_line_error(run("sample", "--regex", "(ab)+", "--vocab", path), "end-of-sequence", "give its id")
    proc = run("sample", "--regex", "(ab)+", "--vocab", path, "--eos", "300", "-n", "3", check_rc=0)
    assert all(re.fullmatch("(ab)+", line) for line in proc.stdout.splitlines())


def test_sample_writes_the_plain_spelling(files):
    proc = run("sample", files / "schema.json", "-n", "8", "--seed", "2", "--vocab", files / "tokenizer.json",
               check_rc=0)
    for line in proc.stdout.splitlines():
        doc = json.loads(line)
        jsonschema.validate(doc, SCHEMA)
        assert line == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        assert type(doc["days"]) is int
    indented = run("sample", files / "schema.json", "-n", "2", "--seed", "2", "--indent", "2",
                   "--vocab", files / "tokenizer.json", check_rc=0).stdout
    assert indented.startswith("{\n  ") and indented.count("\n}") == 2


def test_readme_commands_run_at_80_columns(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("### The command", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert len(commands) >= 4 and all(c.startswith("tokenfsm ") for c in commands)
    for command in commands:
        shell = command.replace("tokenfsm ", f"{sys.executable} -m tokenfsm.masks.cli ", 1)
        proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, cwd=tmp_path,
                              env=env80(), timeout=600)
        assert proc.returncode == 0, (command, proc.stderr)
        assert_fits_80(proc.stdout, proc.stderr)
