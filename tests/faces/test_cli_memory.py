"""Files larger than memory: `cumdev screen` goes out of core, the other commands refuse up front.

The memory budget is set small through ``POLARS_CUMDEV_MEMORY`` (the same
number the command reads from the system, the process's limits and the
cgroup), so that a modest file counts as larger than memory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev
from polars_cumdev.cli import memory

ROOT = Path(polars_cumdev.__file__).resolve().parents[1]  # the copy under test


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(8)
    n = 200_000
    score = rng.normal(size=n).round(3)  # ties
    frame = pl.DataFrame(
        {
            "g": rng.integers(0, 6, n),
            "s": score,
            "r": (rng.uniform(size=n) < 1 / (1 + np.exp(-score))).astype(float),
            "w": rng.uniform(0.5, 2.0, n),
        }
    )
    path = tmp_path_factory.mktemp("memory") / "big.csv"
    frame.write_csv(path)
    return path


def _cli(*args: str, budget: float, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, POLARS_CUMDEV_MEMORY=str(budget))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "polars_cumdev.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_budget_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLARS_CUMDEV_MEMORY", "1e9")
    assert memory.budget() == 10**9
    monkeypatch.delenv("POLARS_CUMDEV_MEMORY")
    found = memory.budget()
    assert found is None or found > 0


@pytest.mark.slow
def test_screen_of_a_csv_larger_than_memory_goes_out_of_core(big_csv: Path) -> None:
    size = big_csv.stat().st_size
    budget = 2 * size  # the file is "larger than memory" (10x its size is needed)
    done = _cli(
        "screen", str(big_csv), "--by", "g", "--score", "s", "--response", "r", "--weight", "w",
        "--rows", "0", "--output", "table.parquet", "--progress", budget=budget,
        cwd=big_csv.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "range by range (out of core)" in done.stderr
    ranges = int(done.stderr.split(" score range(s)")[0].rsplit(" ", 1)[1])
    assert ranges > 1
    actual = pl.read_parquet(big_csv.parent / "table.parquet").sort("g")
    expected = pl.read_csv(big_csv).cumdev.screen("g", "s", "r", "w").sort("g")
    assert actual["n"].to_list() == expected["n"].to_list()
    for name in ("kuiper", "ks", "sigma", "kuiper_p"):
        np.testing.assert_allclose(actual[name], expected[name], rtol=1e-9)


@pytest.mark.parametrize(
    "command",
    [
        ["curve", "--score", "s", "--response", "r", "--subpop-column", "g", "--subpop-value", "1"],
        ["report", "--by", "g", "--score", "s", "--response", "r", "--out", "r.html"],
        ["calibration", "--score", "s", "--response", "r"],
        ["paired", "--score", "s", "--first", "r", "--second", "w"],
    ],
    ids=["curve", "report", "calibration", "paired"],
)
@pytest.mark.slow
def test_other_commands_refuse_up_front(big_csv: Path, command: list[str]) -> None:
    budget = 2 * big_csv.stat().st_size
    done = _cli(command[0], str(big_csv), *command[1:], budget=budget, cwd=big_csv.parent)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cumdev: error: cannot run")
    assert "MiB" in lines[0] and "range by range" in lines[0]


# --------------------------------------------------------------------------
# A real cap (issue 25, item 8): the command in a process whose address space
# for data is limited (RLIMIT_DATA, set before the interpreter starts), not a
# budget given through the environment.
# --------------------------------------------------------------------------

CAP = 1200 * 2**20  # bytes of RLIMIT_DATA: the interpreter, Polars and a range fit


@pytest.fixture(scope="module")
def larger_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2.5M rows, 74 MiB: the in-memory screen needs about 1.6 GiB (it aborted under CAP)."""
    rng = np.random.default_rng(8)
    n = 2_500_000
    score = rng.normal(size=n).round(3)
    frame = pl.DataFrame(
        {
            "g": rng.integers(0, 6, n),
            "s": score,
            "r": (rng.uniform(size=n) < 1 / (1 + np.exp(-score))).astype(float),
            "w": rng.uniform(0.5, 2.0, n),
        }
    )
    path = tmp_path_factory.mktemp("capped") / "larger.csv"
    frame.write_csv(path)
    return path


def _capped(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (CAP, CAP))

    env = {k: v for k, v in os.environ.items() if k != "POLARS_CUMDEV_MEMORY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["POLARS_MAX_THREADS"] = "2"  # thread stacks count against the cap: as on CI
    return subprocess.run(
        [sys.executable, "-m", "polars_cumdev.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        preexec_fn=limit,
    )


@pytest.mark.slow
def test_under_a_real_memory_cap(larger_csv: Path) -> None:
    # A command that needs every row refuses up front, in one line.
    done = _capped("calibration", str(larger_csv), "--score", "s", "--response", "r",
                   cwd=larger_csv.parent)  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.startswith("cumdev: error: cannot run `cumdev calibration` in memory")
    # The screen goes range by range and finishes (before: it ran in memory, aborted by Rust).
    done = _capped(
        "screen", str(larger_csv), "--by", "g", "--score", "s", "--response", "r", "--weight", "w",
        "--rows", "0", "--output", "table.parquet", "--progress", cwd=larger_csv.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "range by range (out of core)" in done.stderr and "Traceback" not in done.stderr
    actual = pl.read_parquet(larger_csv.parent / "table.parquet").sort("g")
    expected = pl.read_csv(larger_csv).cumdev.screen("g", "s", "r", "w").sort("g")
    assert actual["n"].to_list() == expected["n"].to_list()
    for name in ("kuiper", "ks", "sigma", "kuiper_p"):
        np.testing.assert_allclose(actual[name], expected[name], rtol=1e-9)
