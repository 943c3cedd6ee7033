"""Under CI=true no test may skip for a missing service (issue 37, item 14).

The hooks of ``tests/references/ci_skips.py`` run in a child pytest on a
small test file: with ``CI=true`` a skip for a missing tool (in a test, by a
``skipif`` mark, or at collection) fails the run and the summary lists it;
a skip that is part of a test's design still passes; without ``CI`` every
skip stays a skip. The read-only directories of :mod:`read_only` are checked
with each method root can use.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from read_only import METHODS, read_only, writable

REFERENCES = Path(__file__).parent / "references"

MISSING = """
import shutil
import pytest

def test_browser():
    pytest.skip("no Chromium on this machine")

@pytest.mark.skipif(True, reason="Spark needs Java")
def test_spark():
    pass
"""
AT_COLLECTION = """
import pytest
pytest.importorskip("a_module_nobody_has", reason="the spark extra is not installed")

def test_never():
    pass
"""
INTENDED = """
import pytest

def test_readme():
    pytest.skip("not run from the test suite: pip install .")
"""


def _pytest(
    tmp_path: Path, source: str, ci: str | None, *extra: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_case.py").write_text(source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REFERENCES), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ci_skips", "-p", "no:cacheprovider", "-q",
         "-rs", *extra, "--rootdir", str(tmp_path), str(tmp_path / "test_case.py")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
def test_a_skip_for_a_missing_service_fails_under_ci(tmp_path: Path) -> None:
    run = _pytest(tmp_path, MISSING, "true")
    assert run.returncode == 1, run.stdout
    assert "1 failed, 1 error" in run.stdout  # the skipif mark skips in setup: an error
    assert "2 skip(s) for a missing service turned into failures" in run.stdout
    assert "Chromium" in run.stdout and "Java" in run.stdout


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
def test_the_summary_counts_the_skips_of_worker_processes(tmp_path: Path) -> None:
    """The suite runs on pytest-xdist's workers: their failed skips reach the summary."""
    pytest.importorskip("xdist", reason="the test extra is not installed (pytest-xdist)")
    run = _pytest(tmp_path, MISSING, "true", "-n", "2")
    assert run.returncode == 1, run.stdout
    assert "2 skip(s) for a missing service turned into failures" in run.stdout, run.stdout
    assert "no test was skipped" not in run.stdout


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
def test_a_collection_skip_fails_under_ci(tmp_path: Path) -> None:
    run = _pytest(tmp_path, AT_COLLECTION, "true")
    assert run.returncode != 0, run.stdout
    assert "spark extra is not installed" in run.stdout


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
def test_intended_skips_and_runs_outside_ci_stay_skips(tmp_path: Path) -> None:
    run = _pytest(tmp_path, INTENDED, "true")
    assert run.returncode == 0 and "1 skipped" in run.stdout, run.stdout
    assert "no test was skipped for a missing service" in run.stdout
    run = _pytest(tmp_path, MISSING, None)
    assert run.returncode == 0 and "2 skipped" in run.stdout, run.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="only as root: chattr and mount need root")
@pytest.mark.parametrize("method", METHODS)
def test_root_can_make_a_directory_read_only(tmp_path: Path, method: str) -> None:
    folder = tmp_path / "locked"
    (folder / "inner").mkdir(parents=True)
    with read_only([folder], methods=[method]) as used:
        assert used == method
        assert not writable(folder) and not writable(folder / "inner")
    assert writable(folder) and writable(folder / "inner")


def test_ci_run_fails_without_chromium_or_java(tmp_path: Path) -> None:
    """``.ci/run`` with neither browser, Java nor apt-get on the PATH stops at once."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("bash", "dirname"):
        (tools / name).symlink_to(shutil.which(name) or name)
    script = Path(__file__).parents[1] / ".ci" / "run"
    env = {"PATH": str(tools), "HOME": str(tmp_path)}
    run = subprocess.run(
        [str(tools / "bash"), str(script)], capture_output=True, text=True, env=env,
        timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "chromium is missing" in run.stderr and "CI=true runs every test" in run.stderr
