"""The distribution installs as ``tokenfsm.automata``, ``tokenfsm.schema`` and ``tokenfsm.masks``.

A wheel is built from this checkout and installed into a fresh virtual environment; the three
packages must import from that environment's own site-packages, not from the checkout.

The fresh environment borrows the runtime dependencies from the environment running the tests
(a ``.pth`` file lists its site-packages directories), so nothing is downloaded and the tests pass
wherever ``pip install -e ".[dev]"`` was run: in a virtual environment of its own, whatever the base
interpreter has installed. (A path listed in a ``.pth`` file is searched after the environment's own
site-packages, and the ``.pth`` files inside it are not run: the running environment's own install
of tokenfsm, an editable finder, stays out.)
"""

import os
import site
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
    """A new virtual environment that sees the running environment's packages but none of its
    ``.pth`` hooks."""
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(path)
    py = path / ("Scripts" if os.name == "nt" else "bin") / "python"
    own = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    borrowed = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    lines = [p for p in dict.fromkeys(borrowed) if os.path.isdir(p)]
    Path(own, "_borrowed_site_packages.pth").write_text("".join(f"{p}\n" for p in lines))
    return py


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
