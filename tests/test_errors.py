"""One error hierarchy: every exception tokenfsm raises on purpose is a ``TokenfsmError``, and the
public ones live in their package's ``errors`` module."""

import importlib
import inspect
import pickle

import pytest

from tokenfsm.automata import TokenfsmError
from test_docstrings import MODULES

PACKAGES = ("tokenfsm.automata", "tokenfsm.schema", "tokenfsm.masks")
#: The command's own error: ``main`` prints it as one line; it never reaches a library caller.
COMMAND_ONLY = {"tokenfsm.masks.cli.CommandError"}


def _public_exceptions():
    seen = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException)
                    and not issubclass(obj, Warning) and obj.__module__.startswith("tokenfsm.")
                    and not attr.startswith("_")):
                seen[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return {k: v for k, v in seen.items() if k not in COMMAND_ONLY}


EXCEPTIONS = _public_exceptions()


def test_the_walk_finds_the_known_errors():
    for name in ("tokenfsm.automata.errors.BudgetExceeded", "tokenfsm.schema.errors.SchemaError",
                 "tokenfsm.masks.errors.TokenRejected"):
        assert name in EXCEPTIONS


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_every_public_error_is_a_tokenfsm_error(name):
    assert issubclass(EXCEPTIONS[name], TokenfsmError)


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_public_errors_live_in_their_packages_errors_module(name):
    assert EXCEPTIONS[name].__module__.rsplit(".", 1)[-1] == "errors"


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_exports_the_base(package):
    from tokenfsm.automata.errors import OptionError
    assert importlib.import_module(package).TokenfsmError is TokenfsmError
    assert importlib.import_module(package).OptionError is OptionError


def test_one_except_catches_every_layer():
    from tokenfsm.automata import DFA, Budget
    from tokenfsm.schema import compile_json_schema, compile_template

    bad = [lambda: DFA.from_regex("(?<=a)b"),
           lambda: DFA.from_regex("[a-z]{0,300}").intersect(DFA.excluding(["ab"]),
                                                             budget=Budget(max_states=20)),
           lambda: compile_json_schema({"type": "strnig"}),
           lambda: compile_template(["a"]).parse("b")]
    for f in bad:
        with pytest.raises(TokenfsmError):
            f()


def test_errors_pickle_with_their_facts():
    from tokenfsm.automata.errors import BudgetExceeded, NondeterministicCall

    e = pickle.loads(pickle.dumps(NondeterministicCall("two meanings", 1, (1, 0), 7, 0x22)))
    assert (e.module, e.frames, e.state, e.byte) == (1, (1, 0), 7, 0x22)
    b = pickle.loads(pickle.dumps(BudgetExceeded(10, 11, "intersect", pointer="/a")))
    assert (b.limit, b.reached, b.operation, b.pointer) == (10, 11, "intersect", "/a")
