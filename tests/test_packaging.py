"""The distribution installs as ``tokenfsm.automata``, ``tokenfsm.schema`` and ``tokenfsm.masks``.

A wheel is built from this checkout and installed into a fresh virtual environment (which borrows
the runtime dependencies from the running interpreter, so nothing is downloaded); the three
packages must import from that environment's own site-packages, not from the checkout.
"""

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installs_and_imports(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(wheels)], check=True, cwd=tmp_path)
    (wheel,) = wheels.glob("tokenfsm-*.whl")
    py = _fresh_venv(tmp_path / "venv")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
                   check=True, cwd=tmp_path)
    code = (
        "import tokenfsm.automata, tokenfsm.schema, tokenfsm.masks, sys\n"
        "for m in (tokenfsm.automata, tokenfsm.schema, tokenfsm.masks):\n"
        "    assert m.__file__.startswith(sys.prefix), (m.__file__, sys.prefix)\n"
        "from tokenfsm.automata import DFA\n"
        "print(DFA.from_regex('a+b').accepts('aab'))\n"
    )
    out = subprocess.run([str(py), "-c", code], check=True, cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.strip() == "True"


def _fresh_venv(path: Path) -> Path:
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(path)
    return path / ("Scripts" if os.name == "nt" else "bin") / "python"


def test_editable_install_imports_from_checkout(tmp_path):
    py = _fresh_venv(tmp_path / "venv")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps",
                    "--no-build-isolation", "-q", "-e", str(ROOT)], check=True, cwd=tmp_path)
    code = (
        "import tokenfsm.automata, tokenfsm.schema, tokenfsm.masks\n"
        "print(tokenfsm.automata.__file__); print(tokenfsm.schema.__file__); print(tokenfsm.masks.__file__)\n"
    )
    out = subprocess.run([str(py), "-c", code], check=True, cwd=tmp_path, capture_output=True, text=True)
    files = [Path(line) for line in out.stdout.split()]
    assert [f.parent for f in files] == [ROOT / "automata", ROOT / "schema", ROOT / "masks"]
