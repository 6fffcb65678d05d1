"""Every docstring example in the three packages runs and prints what it says.

Examples marked ``# doctest: +SKIP`` (they need a downloaded tokenizer or a model) are the only
ones left out; every module is collected, so a new module's examples run without being listed.
"""

import doctest
import importlib
import pkgutil

import pytest

import tokenfsm.automata
import tokenfsm.masks
import tokenfsm.schema


def _modules() -> list[str]:
    names = []
    for pkg in (tokenfsm.automata, tokenfsm.schema, tokenfsm.masks):
        names.append(pkg.__name__)
        names += [f"{pkg.__name__}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)]
    return names


MODULES = _modules()


def test_every_package_module_is_collected():
    # a sanity check on the walk itself: the modules the layout names are all found
    for name in ("tokenfsm.automata.dfa", "tokenfsm.schema.compiler", "tokenfsm.masks.matcher"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in finder.find(module, name):
        if test.examples:
            runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
