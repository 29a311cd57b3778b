# SPDX-License-Identifier: MIT
"""A pytest helper: the certificate as an assertion in a planner's tests.

::

    from arenacert import assert_certified

    def test_every_plan_is_certified():
        for model in MODELS:
            assert_certified(my_planner.plan(model))

A failing plan fails the test with the library's diagnostic as the
message (what failed and where, by name and index).  With the pytest
plugin's ``--arenacert-report DIR`` (``pytest_plugin.py``, which calls
``report_into`` and ``report_test``), the failing plan's HTML report is
written into DIR too and the message names it.
"""
from __future__ import annotations

import pathlib
import re
from typing import TYPE_CHECKING, Optional, Set

if TYPE_CHECKING:  # pragma: no cover
    from . import Program
    from ._result import Result


class _Reports:
    """Where failing plans' reports go in this session: the directory,
    the running test's id (a report's name), and the names given so far
    (a second failure in one test gets "-2", never overwrites)."""

    def __init__(self, directory: pathlib.Path) -> None:
        self.directory = directory
        self.test: Optional[str] = None
        self.taken: Set[str] = set()

    def write(self, result: "Result") -> str:
        """Writes result's report; returns the line that names it (or says
        why it could not be written: the assertion fails either way)."""
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.test or "plan").strip("_.")
        stem = stem[:150] or "plan"
        name, n = stem, 1
        while name in self.taken:
            n += 1
            name = f"{stem}-{n}"
        self.taken.add(name)
        path = self.directory / f"{name}.html"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            result.html(path, name=name)
        except Exception as e:  # noqa: BLE001 - never hides the plan's failure
            return f"report: not written to {path}: {type(e).__name__}: {e}"
        return f"report: {path}"


_reports: Optional[_Reports] = None


def report_into(directory: Optional[pathlib.Path]) -> None:
    """Failing plans' reports go into directory from now on (None: no
    reports).  Called by the pytest plugin (``--arenacert-report``)."""
    global _reports
    _reports = _Reports(directory) if directory is not None else None


def report_test(test: Optional[str]) -> None:
    """The id of the running test, which names its reports (None between
    tests)."""
    if _reports is not None:
        _reports.test = test


def assert_certified(program: "Program", strict: bool = False) -> "Result":
    """Certifies program and returns its Result when its verdict is 0 (and,
    with ``strict``, it has no advisory); else raises AssertionError whose
    message is the diagnostic: ``"verdict N: <explanation>"``, then one
    line per advisory, then (under ``--arenacert-report``) ``"report:
    PATH"``, the HTML report written for it.  A malformed program raises
    MalformedProgram, as ``certify`` does."""
    __tracebackhide__ = True  # pytest shows the caller's line
    from . import certify
    result = certify(program)
    if result.verdict != 0 or (strict and result.advisories):
        lines = [f"verdict {result.verdict}: {result.explanation}"]
        lines += [f"advisory {a.explanation}" for a in result.advisories]
        if strict and result.advisories and result.verdict == 0:
            n = len(result.advisories)
            lines.append(f"strict: fails ({n} advisor{'y' if n == 1 else 'ies'})")
        if _reports is not None:
            lines.append(_reports.write(result))
        raise AssertionError("\n".join(lines))
    return result
