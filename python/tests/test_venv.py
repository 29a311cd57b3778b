# SPDX-License-Identifier: MIT
"""The package as a planner's developer installs it (pyproject.toml,
meson-python), offline with Debian's tools: pip installs the checkout into
a venv made with --system-site-packages (where Debian's meson-python and
build are), `python -m build` makes a wheel that pip installs into a plain
venv; each venv's own interpreter, in a directory outside the checkout and
with no ARENACERT_* variable, imports the installed package, which loads
the libarenacert it carries, certifies the specification's examples and
writes a report with the arena-certify pip installed.  The pytest plugin
is loaded by its entry point.  pip never asks an index (--no-index).

meson-python's build directory is BUILD/python/pip-build (kept: a second
run rebuilds nothing), shared by the two builds."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import zipfile
from typing import Dict, Iterator, List

import pytest

from conftest import required_path, spec_examples

SOURCE = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = SOURCE / "examples" / "python"

# Run by the venv's interpreter: prints the package's, library's and
# arena-certify's paths, then "name verdict" per example, then the report's
# first bytes.
CHECK = """
import pathlib, sys
import arenacert
from arenacert import _native
print(arenacert.__file__)
print(arenacert.LIBRARY_PATH)
print(_native.cli_path())
for path in sys.argv[2:]:
    print(pathlib.Path(path).stem, arenacert.certify(pathlib.Path(path)).verdict)
out = pathlib.Path(sys.argv[1])
arenacert.certify(pathlib.Path(sys.argv[-1])).html(out)
print(out.read_text()[:15])
"""


def clean_env() -> Dict[str, str]:
    """The environment without the build tree's package and library, and
    without this machine's pip configuration (a fresh Debian's pip: no
    index, no extra wheel directory)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ARENACERT_", "PIP_"))
           and k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def sh(*args: str, cwd: pathlib.Path = SOURCE) -> str:
    """Runs a command; its output, or the test fails showing it."""
    run = subprocess.run(list(args), cwd=cwd, env=clean_env(),
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, (f"{' '.join(args)}: status {run.returncode}\n"
                                 f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    return run.stdout


def builddir() -> str:
    """meson-python's build directory (config setting builddir)."""
    return str(required_path("ARENACERT_BUILD") / "python" / "pip-build")


def check_installed(python: pathlib.Path, venv: pathlib.Path,
                    tmp: pathlib.Path) -> None:
    """The venv's interpreter imports the venv's arenacert, which loads the
    library beside it, finds the venv's arena-certify (the venv is not on
    $PATH) and certifies every example as its .expect says."""
    examples = spec_examples()
    report = tmp / "report.html"
    lines = sh(str(python), "-c", CHECK, str(report),
               *map(str, examples), cwd=tmp).splitlines()
    package = pathlib.Path(lines[0]).parent
    assert package.is_relative_to(venv), lines[0]
    assert pathlib.Path(lines[1]) == package / "libarenacert.so.0"
    assert pathlib.Path(lines[2]) == venv / "bin" / "arena-certify"
    got = dict(line.split() for line in lines[3:-1])
    want = {p.stem: p.with_suffix(".expect").read_text().split()[0]
            for p in examples}
    assert got == want
    assert lines[-1] == "<!DOCTYPE html>"


@pytest.fixture(scope="module")
def system_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pathlib.Path]:
    """A venv seeing Debian's site-packages (meson-python, build, pytest),
    with the checkout pip-installed into it."""
    venv = tmp_path_factory.mktemp("venv") / "system"
    sh(sys.executable, "-m", "venv", "--system-site-packages", str(venv))
    sh(str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index",
       "--no-build-isolation", f"--config-settings=builddir={builddir()}", ".")
    yield venv


def test_pip_install_from_checkout(system_venv: pathlib.Path,
                                   tmp_path: pathlib.Path) -> None:
    check_installed(system_venv / "bin" / "python", system_venv, tmp_path)
    assert (system_venv / "bin" / "arena-certify").exists()


def test_wheel_into_plain_venv(system_venv: pathlib.Path,
                               tmp_path: pathlib.Path) -> None:
    dist = tmp_path / "dist"
    sh(str(system_venv / "bin" / "python"), "-m", "build", "--wheel",
       "--no-isolation", f"--config-setting=builddir={builddir()}",
       "--outdir", str(dist), ".")
    wheels: List[pathlib.Path] = sorted(dist.glob("*.whl"))
    assert [w.name for w in wheels] == [
        f"arenacert-{version()}-py3-none-linux_x86_64.whl"]
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(n.endswith("/arenacert/libarenacert.so.0") for n in names), names
    assert any(n.endswith("/scripts/arena-certify") for n in names), names
    venv = tmp_path / "plain"
    sh(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    sh(str(python), "-m", "pip", "install", "--no-index", str(wheels[0]))
    run = subprocess.run([str(python), "-c", "import pytest"], cwd=tmp_path,
                         env=clean_env(), capture_output=True, check=False)
    assert run.returncode != 0  # plain: nothing of Debian's site-packages
    check_installed(python, venv, tmp_path)


def test_plugin_by_entry_point(system_venv: pathlib.Path,
                               tmp_path: pathlib.Path) -> None:
    """pytest loads the plugin by its entry point; naming it with -p as
    well (as after meson install) loads it once, not an error."""
    (tmp_path / "test_buggy.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(EXAMPLES)!r})\n"
        "from test_my_planner import mlp_block, plan_buggy\n"
        "from arenacert import assert_certified\n\n"
        "def test_buggy():\n"
        "    assert_certified(plan_buggy(*mlp_block(64)))\n")
    for extra in ([], ["-p", "arenacert.pytest_plugin"]):
        out = tmp_path / f"reports{len(extra)}"
        run = subprocess.run(
            [str(system_venv / "bin" / "python"), "-m", "pytest", "-q",
             "-p", "no:cacheprovider", *extra, "--arenacert-report", str(out),
             "test_buggy.py"],
            cwd=tmp_path, env=clean_env(), capture_output=True, text=True,
            check=False)
        report = out / "test_buggy.py_test_buggy.html"
        assert run.returncode == 1, run.stdout + run.stderr
        assert f"report: {report}" in run.stdout, run.stdout
        assert "arena-certify report" in report.read_text()


def version() -> str:
    """meson.build's project version (the package's)."""
    for line in (SOURCE / "meson.build").read_text().splitlines():
        if line.strip().startswith("version :"):
            return line.split("'")[1]
    raise AssertionError("no version in meson.build")
