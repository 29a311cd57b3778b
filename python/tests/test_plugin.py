# SPDX-License-Identifier: MIT
"""The pytest plugin (arenacert/pytest_plugin.py): --arenacert-report DIR
writes the HTML report of each plan that fails assert_certified and names
it in the failure message; strict mode fails on advisories; without the
option nothing is written.  Each case runs pytest in a subprocess (the
build tree's package, the plugin loaded with -p as pip's entry point
would), on a test file written here; the buggy planner is the example's
(examples/python/test_my_planner.py)."""
from __future__ import annotations

import os
import pathlib
import re
from typing import List

import pytest

pytest_plugins = ["pytester"]

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"

BUGGY = f"""
import sys
sys.path.insert(0, {str(EXAMPLES)!r})
from test_my_planner import mlp_block, plan_buggy
from arenacert import assert_certified

def test_buggy_plan():
    assert_certified(plan_buggy(*mlp_block(64)))
"""


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    """pytest with the plugin on a test file holding source."""
    pytester.makepyfile(test_plans=source)
    return pytester.runpytest_subprocess("-p", "arenacert.pytest_plugin",
                                         "-p", "no:cacheprovider", *args)


def reports_named(output: List[str]) -> List[pathlib.Path]:
    """The report paths the failure messages name: in the tracebacks'
    E lines only (under CI=true pytest does not cut the short summary,
    which says each message again)."""
    found = []
    for line in output:
        m = re.match(r"E\s+report: (\S+\.html)$", line)
        if m:
            found.append(pathlib.Path(m.group(1)))
    return found


def is_report_of(path: pathlib.Path, name: str) -> bool:
    """path is an arena-certify report of the program saved as name."""
    return f"<title>{name}.json: arena-certify report" in path.read_text()


def test_buggy_planner_report_written_and_named(pytester: pytest.Pytester,
                                                tmp_path: pathlib.Path) -> None:
    out = tmp_path / "reports"
    result = run(pytester, BUGGY, "--arenacert-report", str(out))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: verdict *(D) fails*"])
    named = reports_named(result.stdout.lines)
    want = out / "test_plans.py_test_buggy_plan.html"
    assert named == [want], result.stdout.str()
    assert is_report_of(want, "test_plans.py_test_buggy_plan")
    assert sorted(out.iterdir()) == [want]


def test_no_option_no_report(pytester: pytest.Pytester) -> None:
    result = run(pytester, BUGGY)
    result.assert_outcomes(failed=1)
    assert reports_named(result.stdout.lines) == []
    assert "report:" not in result.stdout.str()


def test_strict_fails_on_advisories_with_a_report(pytester: pytest.Pytester,
                                                  tmp_path: pathlib.Path) -> None:
    spec = os.environ.get("ARENACERT_SPEC", str(EXAMPLES.parents[1] / ".." /
                                                "shared" / "spec"))
    source = f"""
import json, pathlib
from arenacert import assert_certified

def plan():
    p = json.loads(pathlib.Path({spec!r}, "examples", "ex1.json").read_text())
    p["globals"].append({{"name": "far", "offset": "0x3000", "size": 64}})
    return p

def test_lenient():
    assert_certified(plan())

def test_strict():
    assert_certified(plan(), strict=True)
"""
    out = tmp_path / "r"
    result = run(pytester, source, "--arenacert-report", str(out))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*strict: fails (1 advisory)*"])
    assert reports_named(result.stdout.lines) == [
        out / "test_plans.py_test_strict.html"]
    assert is_report_of(out / "test_plans.py_test_strict.html",
                        "test_plans.py_test_strict")


def test_two_failures_in_one_test_two_reports(pytester: pytest.Pytester,
                                              tmp_path: pathlib.Path) -> None:
    source = BUGGY + """
def test_twice():
    try:
        assert_certified(plan_buggy(*mlp_block(64)))
    except AssertionError:
        pass
    assert_certified(plan_buggy(*mlp_block(256)))
"""
    out = tmp_path / "r"
    result = run(pytester, source, "--arenacert-report", str(out), "-k", "twice")
    result.assert_outcomes(failed=1)
    first = out / "test_plans.py_test_twice.html"
    second = out / "test_plans.py_test_twice-2.html"
    assert reports_named(result.stdout.lines) == [second]
    assert is_report_of(first, "test_plans.py_test_twice")
    assert is_report_of(second, "test_plans.py_test_twice-2")


def test_report_not_written_says_why(pytester: pytest.Pytester,
                                     tmp_path: pathlib.Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENACERT_CLI", "/nonexistent/arena-certify")
    out = tmp_path / "r"
    result = run(pytester, BUGGY, "--arenacert-report", str(out))
    result.assert_outcomes(failed=1)  # the plan's failure, not the report's
    result.stdout.fnmatch_lines([
        f"*report: not written to {out}/test_plans.py_test_buggy_plan.html: "
        "*/nonexistent/arena-certify*"])


def test_any_report_error_keeps_the_plans_failure(
        pytester: pytest.Pytester, tmp_path: pathlib.Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An arena-certify that prints what is not UTF-8 (another program):
    Result.html raises UnicodeDecodeError, which the message names; the
    test fails for its plan, with its diagnostic."""
    cli = tmp_path / "not-arena-certify"
    cli.write_text("#!/bin/sh\nprintf '\\377\\n'\n")
    cli.chmod(0o755)
    monkeypatch.setenv("ARENACERT_CLI", str(cli))
    out = tmp_path / "r"
    result = run(pytester, BUGGY, "--arenacert-report", str(out))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: verdict *(D) fails*",
        f"*report: not written to {out}/test_plans.py_test_buggy_plan.html: "
        "UnicodeDecodeError: *"])


def test_relative_dir_is_the_invocation_s(pytester: pytest.Pytester,
                                          tmp_path: pathlib.Path) -> None:
    """A test that changes directory before it fails still reports into the
    DIR the command line meant."""
    source = BUGGY.replace("def test_buggy_plan():\n", f"""def test_buggy_plan():
    import os
    os.chdir({str(tmp_path)!r})
""")
    result = run(pytester, source, "--arenacert-report", "reports")
    result.assert_outcomes(failed=1)
    want = pytester.path / "reports" / "test_plans.py_test_buggy_plan.html"
    assert reports_named(result.stdout.lines) == [want], result.stdout.str()
    assert is_report_of(want, "test_plans.py_test_buggy_plan")
    assert not (tmp_path / "reports").exists()
