"""Under ``CI=true`` a test skipped for a missing service fails (issue 37, item 14).

CI must prove it ran everything: Java for Spark, Chromium for the browser
tests, the extras, a way to make a directory read-only as root
(:mod:`read_only`). A skip whose reason is not one of :data:`INTENDED` (a
skip that is part of a test's design) becomes a failure there, collection
skips included, and the terminal summary says how many skips were turned
into failures or that none was needed. Outside CI nothing changes. The
suite's ``conftest.py`` imports these hooks.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

__all__ = [
    "INTENDED",
    "pytest_make_collect_report",
    "pytest_runtest_makereport",
    "pytest_terminal_summary",
]

#: Reasons of skips that are part of a test's design, not a missing service.
INTENDED = (
    "not run from the test suite",  # test_readme: the install commands run in CI itself
    "too many bits",  # test_ranking: a drawn case outside the test's domain
    "only as root",  # root's ways to make a directory read-only, tested when CI runs as root
)
_FAILED: list[str] = []


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_if_missing_service(report: Any) -> None:
    if not (_in_ci() and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = _reason(report)
    if any(intended in reason for intended in INTENDED):
        return
    _FAILED.append(f"{report.nodeid}: {reason}")
    report.outcome = "failed"
    report.longrepr = (
        f"CI=true: this test was skipped ({reason}); CI must provide what it needs "
        "(.ci/run installs Java and Chromium)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    _fail_if_missing_service(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Any:
    outcome = yield
    _fail_if_missing_service(outcome.get_result())


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _in_ci():
        return
    if _FAILED:
        terminalreporter.write_line(
            f"CI=true: {len(_FAILED)} skip(s) for a missing service turned into failures:",
            red=True,
        )
        for line in _FAILED:
            terminalreporter.write_line(f"  {line}")
    else:
        terminalreporter.write_line("CI=true: no test was skipped for a missing service")
