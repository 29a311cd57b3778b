# SPDX-License-Identifier: MIT
"""Shared helpers of the binding's tests (run by build/python/run-tests,
which sets ARENACERT_LIBRARY, ARENACERT_CLI, ARENACERT_WORKLOAD and
ARENACERT_SPEC to the build tree's and the specification's)."""
from __future__ import annotations

import copy
import json
import os
import pathlib
import subprocess
from typing import Any, Dict, List, Optional

import pytest


def required_path(variable: str) -> pathlib.Path:
    """The path an environment variable names; the test fails (it is not
    skipped) when it is unset or missing."""
    value = os.environ.get(variable)
    if not value or not os.path.exists(value):
        pytest.fail(f"{variable} must name an existing path (run the tests "
                    f"with build/python/run-tests); it is {value!r}")
    return pathlib.Path(value)


def spec_examples() -> List[pathlib.Path]:
    """The specification's worked examples (ex*.json), in name order."""
    spec = os.environ.get("ARENACERT_SPEC",
                          str(pathlib.Path(__file__).parents[2] / ".." /
                              "shared" / "spec"))
    found = sorted(pathlib.Path(spec, "examples").glob("*.json"))
    assert found, f"no worked examples under {spec}/examples"
    return found


def cli_objects(*args: str, stdin: Optional[bytes] = None) -> List[Dict[str, Any]]:
    """arena-certify --json ARGS...: one parsed object per input, each
    without its "file" key (what arenacert's Result.fields holds)."""
    cli = required_path("ARENACERT_CLI")
    run = subprocess.run([str(cli), "--json", *args], input=stdin,
                         capture_output=True, check=False)
    assert run.returncode in (0, 1, 2), run.stderr
    objects = [json.loads(line) for line in run.stdout.splitlines()]
    for o in objects:
        del o["file"]
    return objects


def example_dict(name: str = "ex1") -> Dict[str, Any]:
    """A worked example as a dict, to edit into other programs."""
    for path in spec_examples():
        if path.stem == name:
            return copy.deepcopy(json.loads(path.read_text()))
    raise KeyError(name)
