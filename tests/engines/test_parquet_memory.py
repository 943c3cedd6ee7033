"""The checks of the Parquet screen run in bounded memory, with weights.

The in-process verdict compares each weight with the largest of the whole
column, which made Polars hold the weight column in memory during the first
pass of :func:`polars_cumdev.partitioned.screen_parquet` (issue 25: 284 MB at
1e7 rows). Its streaming validation aggregates counts and the smallest and
largest weight only. Measured here as the peak resident memory (VmHWM) of
fresh processes validating a small and a large file: the difference must stay well
below the size of the large file's weight column.
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
from polars_cumdev.errors import InvalidValuesError
from polars_cumdev.partitioned import screen_parquet

ROOT = Path(polars_cumdev.__file__).resolve().parents[1]  # the copy under test

CHILD = r"""
import json, sys
import polars as pl
from polars_cumdev.subpopulation import prepare_screen

prepared = prepare_screen(pl.scan_parquet(sys.argv[1]), "g", "s", "r", "w", "auto")
try:
    from polars_cumdev.engines.partitioned.drivers import validate
except ImportError:  # before the streaming validation: the pass screen_parquet ran
    probe = pl.LazyFrame({"_cd_probe": [True]})
    prepared.guarded(probe).collect(engine="streaming")
else:
    validate(prepared, "streaming")
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec (the forking parent's peak)
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"peak_mib": peak / 1024}))
"""


def _write(path: Path, rows: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    pl.DataFrame(
        {
            "g": rng.integers(0, 20, rows).astype(np.int32),
            "s": rng.normal(size=rows),
            "r": rng.uniform(size=rows),
            "w": rng.uniform(0.5, 2.0, rows),
        }
    ).write_parquet(path, row_group_size=250_000)


def _peak(path: Path) -> float:
    env = dict(os.environ, POLARS_MAX_THREADS="2")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        env=env,
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return float(json.loads(done.stdout.strip().splitlines()[-1])["peak_mib"])


@pytest.mark.slow
def test_weighted_validation_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    small, large = tmp_path / "small.parquet", tmp_path / "large.parquet"
    rows = 12_000_000
    _write(small, 200_000)
    _write(large, rows)
    weight_mib = rows * 8 / 2**20  # the weight column the old check held: 92 MiB
    growth = _peak(large) - _peak(small)
    assert growth < weight_mib, f"peak grew by {growth:.0f} MiB"  # before: +283 MiB


def test_spread_of_the_weights_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "spread.parquet"
    pl.DataFrame(
        {"g": ["a", "b"] * 50, "s": np.arange(100.0), "r": [0.0, 1.0] * 50, "w": [1.0] * 100}
    ).with_columns(
        pl.when(pl.int_range(pl.len()) < 3).then(1e-200).otherwise(pl.col("w")).alias("w")
    ).write_parquet(path)
    with pytest.raises(InvalidValuesError, match="has 3 value"):
        screen_parquet(path, "g", "s", "r", "w", ranges=2)
    in_memory = pl.read_parquet(path)
    with pytest.raises(InvalidValuesError, match="has 3 value"):
        in_memory.cumdev.screen("g", "s", "r", "w")
