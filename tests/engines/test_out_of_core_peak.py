"""A smaller memory budget never costs more memory (issue 37, item 13).

``POLARS_CUMDEV_MEMORY`` plans the out-of-core screen (whether to go out of
core, and the rows a score range holds); it is not a cap on the process
(:mod:`polars_cumdev.cli.memory` says what it cannot hold: the libraries and
Polars' streaming passes). A tiny budget used to cut the file into ranges of
10,000 rows: a scan of the file each, so that the peak rose above that of a
larger budget (and above the in-memory run's, in the issue's measurements)
while the time tripled. Ranges now hold at least ``ROWS_FLOOR`` rows. Measured
as the peak resident memory (VmHWM) of fresh processes running the command on
1e6 rows with budgets of 8 MB and 64 MB; the 8 MB run must not peak higher
(10% allowed for the allocator's noise).
"""

from __future__ import annotations

import json
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

CHILD = r"""
import json, sys
from polars_cumdev.cli import main
code = main(sys.argv[1:])
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec (the forking parent's peak)
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"code": code, "peak_mib": peak / 1024}))
"""


def _peak(path: Path, budget: int) -> float:
    env = dict(os.environ, POLARS_CUMDEV_MEMORY=str(budget))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    argv = ["screen", str(path), "--by", "g", "--score", "s", "--response", "r", "--rows", "1"]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *argv, "--no-progress"],
        capture_output=True, text=True, env=env, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    return result["peak_mib"]


def test_a_tiny_budget_still_plans_ranges_worth_a_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLARS_CUMDEV_MEMORY", str(8_000_000))
    assert memory.range_count(2_000_000) == 2_000_000 // memory.ROWS_FLOOR == 40


@pytest.mark.slow  # three fresh processes screening 1e6 rows out of core: about 60 s
def test_a_smaller_budget_does_not_peak_higher(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    n = 1_000_000
    path = tmp_path / "data.parquet"
    pl.DataFrame(
        {
            "g": rng.integers(0, 50, n).astype(np.int32),
            "s": rng.normal(size=n),
            "r": rng.uniform(size=n),
        }
    ).write_parquet(path)
    _peak(path, 64_000_000)  # untimed: a first run may compile the kernel (a peak of its own)
    small, larger = _peak(path, 8_000_000), _peak(path, 64_000_000)
    assert small <= 1.1 * larger, (small, larger)
