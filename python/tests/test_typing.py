# SPDX-License-Identifier: MIT
"""The package's type hints hold: mypy --strict (Debian's mypy) over
python/arenacert, the pytest plugin included, with the _config.py meson
wrote for this build tree (the source tree has only its template)."""
from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

from conftest import required_path

SOURCE = pathlib.Path(__file__).resolve().parents[2]


def test_mypy_strict(tmp_path: pathlib.Path) -> None:
    build = required_path("ARENACERT_BUILD")
    package = tmp_path / "arenacert"
    shutil.copytree(SOURCE / "python" / "arenacert", package,
                    ignore=shutil.ignore_patterns("*.in", "__pycache__"))
    shutil.copy(build / "python" / "_config.py", package)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir",
         str(build / "python" / "mypy-cache"), "-p", "arenacert"],
        cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("Success: no issues found")
