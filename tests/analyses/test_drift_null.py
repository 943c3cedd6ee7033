"""Drift monitoring's family-wise error rate under no drift, with the power to fail (issue 36).

``RUNS`` = 1,800 calibrated runs of 8 weekly windows of 400 predictions
(the law of :func:`polars_cumdev.datasets.weekly_predictions` without
drift), all calibrated in one query (``by=`` run and week, the compiled
path, about 10 s); the flags
of each run are Holm's adjustment of its 8 windows, the expression
``calibration_drift`` uses (checked equal to it on a few runs). A run with
any flagged window is a false alarm. The check (:mod:`null_level`): at most
120 alarms (6.67%). A monitor whose true family-wise rate is 5% fails it
with probability 0.0008, one at 7.5% with probability 0.904. Replacing the
test of 300-400 runs with a bound of 8.8-7.2%, which a true 8% passed about
70% of the time; the adjustment at twice its level (Holm's p halved) passed
that one and fails this one (shown below). Measured on this seed: 73 alarms
(4.1%) with Holm, 136 (7.6%) with Holm's p halved.
"""

from __future__ import annotations

import datetime as dt
import functools

import null_level
import numpy as np
import polars as pl
import pytest

from polars_cumdev import drift
from polars_cumdev.calibration import calibration

RUNS, WEEKS, PER_WEEK, LEVEL = 1800, 8, 400, 0.05


def _runs(seed: int = 36) -> pl.DataFrame:
    """RUNS runs of weekly_predictions' law, no drift: Beta(2, 3) scores, Bernoulli responses."""
    rng = np.random.default_rng(seed)
    n = RUNS * WEEKS * PER_WEEK
    score = rng.beta(2.0, 3.0, n)
    week = np.tile(np.repeat(np.arange(WEEKS), PER_WEEK), RUNS)
    return pl.DataFrame(
        {
            "run": np.repeat(np.arange(RUNS), WEEKS * PER_WEEK).astype(np.int32),
            "week": week.astype(np.int8),
            "score": score,
            "response": (rng.uniform(size=n) < score).astype(np.int8),
        }
    )


@functools.cache
def _windows() -> tuple[pl.DataFrame, pl.DataFrame]:
    frame = _runs()
    table = calibration(frame, "score", "response", by=["run", "week"])
    assert table.height == RUNS * WEEKS and table["ecce_r_p"].null_count() == 0
    return frame, table


def _alarms(table: pl.DataFrame) -> pl.DataFrame:
    """Per run: whether any window is flagged, by the adjustment drift.family_wise uses."""
    fw = drift.holm(pl.col("ecce_r_p")).over("run")
    flagged = table.with_columns((fw <= LEVEL).fill_null(False).alias("flagged"))
    return flagged.group_by("run").agg(pl.col("flagged").any()).sort("run")


def _agrees_with_calibration_drift(frame: pl.DataFrame, alarms: pl.DataFrame) -> None:
    # The batched flags are calibration_drift's, run by run (false alarms among them).
    runs = [*alarms.filter(pl.col("flagged"))["run"].head(2).to_list(), 0, 1]
    start = dt.datetime(2024, 1, 1)
    for run in runs:
        rows = frame.filter(pl.col("run") == run).with_columns(
            ts=pl.lit(start) + pl.duration(weeks=pl.col("week"), seconds=pl.int_range(pl.len()))
        )
        alone = drift.calibration_drift(rows, "score", "response", time="ts")
        assert alone.height == WEEKS
        assert alone["flagged"].any() == alarms.filter(pl.col("run") == run)["flagged"].item()


@pytest.mark.slow
def test_family_wise_error_rate_holds_without_drift() -> None:
    frame, table = _windows()
    alarms = _alarms(table)
    _agrees_with_calibration_drift(frame, alarms)
    null_level.check(int(alarms["flagged"].sum()), RUNS, LEVEL)
    assert alarms["flagged"].sum() > 0  # not vacuous


@pytest.mark.slow
def test_the_check_catches_the_adjustment_at_twice_its_level(monkeypatch) -> None:
    # Holm's p halved: a family-wise level of 10%, 7.6% of runs alarmed here
    # (Holm is conservative for 8 windows; 136 alarms, above the bound 120); a
    # true rate of 7.6% fails the check with probability 0.92 (null_level.power).
    assert null_level.power(RUNS, LEVEL, 0.076) > 0.9
    holm = drift.holm
    monkeypatch.setattr(drift, "holm", lambda p: holm(p) / 2.0)
    frame, table = _windows()
    alarms = _alarms(table)
    _agrees_with_calibration_drift(frame, alarms)
    assert null_level.rejects(int(alarms["flagged"].sum()), RUNS, LEVEL)
