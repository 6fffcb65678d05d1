"""The research notebooks run from top to bottom, and the committed copies match their generator.

Each notebook is executed with nbclient on the ``python3`` kernel (a copy, so the committed outputs
stay as they are); any cell error fails the test. The sweeps are sized so that all of them together
take a few minutes on two cores.
"""

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
sys.path.insert(0, str(NOTEBOOKS_DIR))
import build_notebooks  # noqa: E402

KEYS = sorted(build_notebooks.NOTEBOOKS)


def _path(key):
    return NOTEBOOKS_DIR / build_notebooks.NOTEBOOKS[key][0]


@pytest.mark.parametrize("key", KEYS)
def test_committed_notebook_matches_generator_and_has_outputs(key):
    nb = nbformat.read(_path(key), as_version=4)
    generated = build_notebooks.NOTEBOOKS[key][1]()
    assert [c.source for c in nb.cells] == [c.source for c in generated], "rerun build_notebooks.py --execute"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code), "commit the notebook executed, with its outputs"
    assert not any(o.get("output_type") == "error" for c in code for o in c.outputs)
    images = sum("image/png" in o.get("data", {}) for c in code for o in c.outputs)
    assert images >= 1, "each notebook plots its measurements"


@pytest.mark.parametrize("key", KEYS)
def test_notebook_executes(key, tmp_path):
    nb = nbformat.read(_path(key), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert any("text/markdown" in o.get("data", {}) for o in last.outputs), "the findings cell shows its text"
