# SPDX-License-Identifier: MIT
"""The pytest plugin (entry point ``pytest11``: pip's install loads it;
elsewhere ``pytest -p arenacert.pytest_plugin``).

``--arenacert-report DIR``: each plan that fails ``assert_certified``
also gets its HTML report (``Result.html``), written into DIR under the
failing test's name, and the failure message names the file.  The
option only adds reports: without it, ``assert_certified`` is unchanged.
"""
from __future__ import annotations

from typing import Optional

import pytest

from . import testing


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declares --arenacert-report."""
    group = parser.getgroup("arenacert", "the device-arena certificate")
    group.addoption(
        "--arenacert-report", metavar="DIR", default=None,
        help="write the HTML report of each plan that fails "
             "assert_certified into DIR (made if missing), named in the "
             "failure message")


def pytest_configure(config: pytest.Config) -> None:
    """Starts the reports of this session when the option is given.  A
    relative DIR is taken from where pytest was started, once: a test that
    changes directory does not move its reports."""
    directory: Optional[str] = config.getoption("arenacert_report")
    if directory is not None:
        testing.report_into(config.invocation_params.dir / directory)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Ends them (an in-process pytest run must not leak them)."""
    if config.getoption("arenacert_report") is not None:
        testing.report_into(None)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The running test's id names its reports."""
    testing.report_test(item.nodeid)


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """No test's name outlives it."""
    testing.report_test(None)
