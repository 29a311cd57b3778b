# SPDX-License-Identifier: MIT
"""assert_certified: the result when certified, else AssertionError whose
message is the diagnostic; strict mode and advisories; and the loader's
error when the library cannot be found."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import arenacert
from conftest import example_dict


def test_certified_returns_the_result() -> None:
    result = arenacert.assert_certified(example_dict("ex1"))
    assert result.verdict == 0


def test_failure_message_is_the_diagnostic() -> None:
    program = example_dict("ex3")
    with pytest.raises(AssertionError) as caught:
        arenacert.assert_certified(program)
    result = arenacert.certify(program)
    assert str(caught.value) == f"verdict 7: {result.explanation}"


def test_strict_counts_advisories() -> None:
    program = example_dict("ex1")
    program["globals"].append({"name": "far", "offset": "0x3000", "size": 64})
    arenacert.assert_certified(program)
    with pytest.raises(AssertionError) as caught:
        arenacert.assert_certified(program, strict=True)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("verdict 0: certified")
    assert lines[1].startswith("advisory tensor-outside-windows: global 'far'")
    assert lines[2] == "strict: fails (1 advisory)"


def test_malformed_is_not_an_assertion() -> None:
    with pytest.raises(arenacert.MalformedProgram):
        arenacert.assert_certified("{}")


def test_missing_library_says_how_to_fix() -> None:
    env = dict(os.environ, ARENACERT_LIBRARY="/nonexistent/libarenacert.so")
    run = subprocess.run([sys.executable, "-c", "import arenacert"], env=env,
                         capture_output=True, text=True, check=False)
    assert run.returncode != 0
    assert ("ImportError: arenacert: cannot load libarenacert from "
            "/nonexistent/libarenacert.so ($ARENACERT_LIBRARY)") in run.stderr
