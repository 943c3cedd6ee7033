"""Rows without a time are refused by calibration_drift (issue 37, item 5).

With disjoint windows the null times formed a "null" window that was tested
and counted in the family (13 windows instead of 12); with rolling windows
they were dropped unsaid. Either way they are now refused, naming the column
and the count, in the library and in ``cumdev calibration --by-time``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev
from polars_cumdev.cli import main
from polars_cumdev.drift import calibration_drift


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    n = 2400
    s = rng.uniform(size=n)
    times = pl.datetime_range(pl.datetime(2024, 1, 1), pl.datetime(2024, 3, 31), "50m", eager=True)[
        :n
    ]
    return pl.DataFrame(
        {"s": s, "r": (rng.uniform(size=n) < s).astype(np.float64), "ts": times}
    ).with_columns(
        g=pl.int_range(pl.len()) % 2,
        ts=pl.when(pl.int_range(pl.len()) % 97 == 3).then(None).otherwise("ts"),
    )


@pytest.mark.slow
@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("options", [{}, {"period": "2w"}, {"by": "g"}])
def test_null_times_are_refused_naming_the_column_and_count(
    frame: pl.DataFrame, options: dict, lazy: bool
) -> None:
    data = frame.lazy() if lazy else frame
    with pytest.raises(polars_cumdev.InvalidValuesError, match=r"'ts' has 25 null value"):
        result = calibration_drift(data, "s", "r", time="ts", **options)
        if lazy:
            result.collect()
    with pytest.raises(polars_cumdev.InvalidValuesError, match=r"'ts' has 25 null value"):
        frame.cumdev.calibration_drift("s", "r", time="ts", **options)


def test_without_the_nulls_the_windows_are_those_of_the_timed_rows(frame: pl.DataFrame) -> None:
    timed = frame.filter(pl.col("ts").is_not_null())
    table = calibration_drift(timed, "s", "r", time="ts", every="1w")
    assert table["ts"].null_count() == 0
    assert table.height == timed["ts"].dt.truncate("1w").n_unique() == table["windows"][0]


def test_the_command_refuses_them_too(
    frame: pl.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame.write_csv(tmp_path / "d.csv")
    argv = ["calibration", str(tmp_path / "d.csv"), "--score", "s", "--response", "r"]
    assert main([*argv, "--by-time", "ts", "--every", "1w"]) == 2
    err = capsys.readouterr().err
    assert "'ts' has 25 null value" in err and err.count("\n") == 1
