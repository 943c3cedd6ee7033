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
#: How a report failed here begins (the summary finds them by it).
_PREFIX = "CI=true: this test was skipped"


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
    report.outcome = "failed"
    report.longrepr = (
        f"{_PREFIX} ({reason}); CI must provide what it needs (.ci/run installs Java and Chromium)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    _fail_if_missing_service(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Any:
    outcome = yield
    _fail_if_missing_service(outcome.get_result())


def _turned(terminalreporter: Any) -> list[str]:
    """The reports this module failed, read from the run's statistics.

    Read there rather than from this process' list, so that the summary is
    right when pytest-xdist runs the tests in worker processes (their reports
    reach the controller, their lists do not).
    """
    found = []
    for key in ("failed", "error"):
        for report in terminalreporter.stats.get(key, []):
            text = str(getattr(report, "longrepr", ""))
            if text.startswith(_PREFIX):
                found.append(f"{report.nodeid}: {text[len(_PREFIX) :].split(';')[0].strip()}")
    return found


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _in_ci():
        return
    failed = _turned(terminalreporter)
    if failed:
        terminalreporter.write_line(
            f"CI=true: {len(failed)} skip(s) for a missing service turned into failures:",
            red=True,
        )
        for line in failed:
            terminalreporter.write_line(f"  {line}")
    else:
        terminalreporter.write_line("CI=true: no test was skipped for a missing service")
