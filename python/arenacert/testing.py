# SPDX-License-Identifier: MIT
"""A pytest helper: the certificate as an assertion in a planner's tests.

::

    from arenacert import assert_certified

    def test_every_plan_is_certified():
        for model in MODELS:
            assert_certified(my_planner.plan(model))

A failing plan fails the test with the library's diagnostic as the
message (what failed and where, by name and index).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from . import Program
    from ._result import Result


def assert_certified(program: "Program", strict: bool = False) -> "Result":
    """Certifies program and returns its Result when its verdict is 0 (and,
    with ``strict``, it has no advisory); else raises AssertionError whose
    message is the diagnostic: ``"verdict N: <explanation>"``, then one
    line per advisory.  A malformed program raises MalformedProgram, as
    ``certify`` does."""
    __tracebackhide__ = True  # pytest shows the caller's line
    from . import certify
    result = certify(program)
    if result.verdict != 0 or (strict and result.advisories):
        lines = [f"verdict {result.verdict}: {result.explanation}"]
        lines += [f"advisory {a.explanation}" for a in result.advisories]
        if strict and result.advisories and result.verdict == 0:
            n = len(result.advisories)
            lines.append(f"strict: fails ({n} advisor{'y' if n == 1 else 'ies'})")
        raise AssertionError("\n".join(lines))
    return result
