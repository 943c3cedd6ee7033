"""Calibration over time (issue 24, item 4): windows by expression, family-wise flags.

The family-wise adjustment is checked against a naive transcription of Holm's
and Bonferroni's rules (a loop over the sorted p-values) and the critical z
against the mpmath Kuiper tail of tests/references; the monitoring data plant
drift in a known week, which must be the one flagged, and leave every week
calibrated otherwise, where the family-wise error rate must hold
(tests/analyses/test_drift_null.py).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
import reference as ref
from numpy.testing import assert_allclose

import polars_cumdev
from polars_cumdev.calibration import calibration
from polars_cumdev.datasets import weekly_predictions
from polars_cumdev.drift import calibration_drift, critical_z, family_wise, rolling_windows
from polars_cumdev.method.pvalues import kuiper_critical


def naive_holm(p: list[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values, transcribed: sort, multiply, running max."""
    tests = sorted((v, i) for i, v in enumerate(p) if v is not None)
    m = len(tests)
    out: list[float | None] = [None] * len(p)
    running = 0.0
    for j, (v, i) in enumerate(tests, start=1):
        running = max(running, min(1.0, (m - j + 1) * v))
        out[i] = running
    return out


def naive_holm_levels(p: list[float | None], alpha: float) -> list[float | None]:
    tests = sorted((v, i) for i, v in enumerate(p) if v is not None)
    m = len(tests)
    out: list[float | None] = [None] * len(p)
    for j, (_, i) in enumerate(tests, start=1):
        out[i] = alpha / (m - j + 1)
    return out


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("adjustment", ["holm", "bonferroni"])
@pytest.mark.slow
def test_family_wise_matches_naive_transcription(seed: int, adjustment: str) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 30))
    p = [float(v) for v in rng.uniform(0, 1, size=m) ** 3]  # some small ones
    p = [None if rng.uniform() < 0.15 else v for v in p]
    alpha = float(rng.choice([0.01, 0.05, 0.1]))
    got = family_wise(
        pl.DataFrame({"ecce_r_p": p}, schema={"ecce_r_p": pl.Float64}),
        alpha=alpha,
        adjustment=adjustment,
    )
    tests = [v for v in p if v is not None]
    if adjustment == "holm":
        want = naive_holm(p)
        levels = naive_holm_levels(p, alpha)
    else:
        want = [None if v is None else min(1.0, len(tests) * v) for v in p]
        levels = [None if v is None else alpha / len(tests) for v in p]
    fw = got["fw_p"].to_list()
    assert [v is None for v in fw] == [v is None for v in want]
    assert_allclose(
        [v for v in fw if v is not None], [v for v in want if v is not None], rtol=1e-12
    )
    assert got["flagged"].to_list() == [v is not None and v <= alpha for v in want]
    assert set(got["windows"].to_list()) == {len(tests)}
    crit = got["critical_z"].to_list()
    for c, level in zip(crit, levels, strict=True):
        if level is None:
            assert c is None
        else:  # the z where the mpmath Kuiper tail equals the level
            assert_allclose(ref.kuiper_pvalue_naive(c), level, rtol=1e-9)


@pytest.mark.slow
def test_critical_z_agrees_with_brent_and_flags_agree_with_z() -> None:
    levels = np.array([0.5, 0.05, 0.05 / 12, 1e-6, 1e-40])
    assert_allclose(critical_z(levels), [kuiper_critical(a) for a in levels], rtol=1e-12)
    # Bonferroni: flagged exactly when z exceeds the critical line.
    table = calibration_drift(
        weekly_predictions(), "score", "response", time="ts", adjustment="bonferroni"
    )
    assert (table["flagged"] == (table["ecce_r_z"] > table["critical_z"])).all()


def test_window_by_expression_equals_window_column() -> None:
    frame = weekly_predictions(weeks=4, per_week=300, drift_week=2, seed=3)
    by_expr = calibration(frame, "score", "response", by=pl.col("ts").dt.truncate("1w"))
    by_name = calibration(
        frame.with_columns(pl.col("ts").dt.truncate("1w")), "score", "response", by="ts"
    )
    assert by_expr.sort("ts").equals(by_name.sort("ts"))  # DataFrames: a DataFrame in
    screened = polars_cumdev.screen(
        frame, by=pl.col("ts").dt.truncate("1w").alias("week"), score="score", response="response"
    )
    named = polars_cumdev.screen(
        frame.with_columns(week=pl.col("ts").dt.truncate("1w")),
        by="week",
        score="score",
        response="response",
    )
    assert screened.sort("week").equals(named.sort("week"))
    assert sorted(screened["week"].to_list()) == [
        dt.datetime(2024, 1, 1) + dt.timedelta(weeks=k) for k in range(4)
    ]


@pytest.mark.slow
def test_the_planted_week_is_the_one_flagged() -> None:
    frame = weekly_predictions(seed=0)  # drift planted in week 8
    for adjustment in ("holm", "bonferroni"):
        table = calibration_drift(frame, "score", "response", time="ts", adjustment=adjustment)
        assert table.height == 12
        flagged = table.filter("flagged")["ts"].to_list()
        assert flagged == [dt.datetime(2024, 1, 1) + dt.timedelta(weeks=8)]


@pytest.mark.slow
def test_no_drift_flags_no_window() -> None:
    frame = weekly_predictions(drift_week=None, seed=0)
    table = calibration_drift(frame, "score", "response", time="ts")
    assert table.height == 12
    assert not table["flagged"].any()


def test_drift_per_group_counts_every_group_window_as_a_test() -> None:
    frame = weekly_predictions(weeks=3, per_week=400, drift_week=None, seed=1).with_columns(
        region=pl.when(pl.col("score") > 0.4).then(pl.lit("high")).otherwise(pl.lit("low"))
    )
    table = calibration_drift(frame, "score", "response", time="ts", by="region")
    assert table.height == 6
    assert set(table["windows"].to_list()) == {6}
    assert table.select("region", "ts").equals(table.select("region", "ts").sort("region", "ts"))


def test_bad_arguments_are_refused_clearly() -> None:
    frame = weekly_predictions(weeks=2, per_week=50, drift_week=None)
    with pytest.raises(polars_cumdev.CumdevError, match="`every`"):
        calibration_drift(frame, "score", "response", time="ts", every="weekly")
    with pytest.raises(polars_cumdev.CumdevError, match="Date or Datetime"):
        calibration_drift(frame, "score", "response", time="score")
    with pytest.raises(polars_cumdev.ColumnNotFoundError, match="'when'"):
        calibration_drift(frame, "score", "response", time="when")
    with pytest.raises(polars_cumdev.CumdevError, match="adjustment"):
        calibration_drift(frame, "score", "response", time="ts", adjustment="bh")
    with pytest.raises(polars_cumdev.CumdevError, match="alpha"):
        family_wise(pl.DataFrame({"ecce_r_p": [0.1]}), alpha=1.5)


def test_weekly_predictions_is_deterministic_and_planted_where_said() -> None:
    one, two = weekly_predictions(seed=5), weekly_predictions(seed=5)
    assert one.equals(two)
    drifted = one.filter(pl.col("expected") != pl.col("score"))["week"].unique().to_list()
    assert drifted == [8]
    assert (
        one.filter(
            pl.col("ts").dt.truncate("1w")
            != dt.datetime(2024, 1, 1) + pl.duration(weeks=pl.col("week"))
        ).height
        == 0
    )


@pytest.mark.slow
def test_rolling_windows_hold_exactly_the_rows_of_each_span() -> None:
    frame = weekly_predictions(weeks=6, per_week=200, drift_week=None, seed=2)
    rolled = rolling_windows(frame, "ts", every="1w", period="3w")
    got = calibration_drift(frame, "score", "response", time="ts", period="3w")
    first = dt.datetime(2024, 1, 1)
    starts = [first + dt.timedelta(weeks=k) for k in range(4)]  # complete 3-week windows
    assert sorted(rolled["ts"].unique().to_list()) == starts == got["ts"].to_list()
    for start in starts:
        # The plain definition: the rows with start <= ts < start + 3 weeks, by a filter.
        span = frame.filter(
            (pl.col("ts") >= start) & (pl.col("ts") < start + dt.timedelta(weeks=3))
        )
        window = rolled.filter(pl.col("ts") == start).drop("ts")
        assert window.sort("score").equals(span.drop("ts").sort("score"))
        row = got.filter(pl.col("ts") == start).row(0, named=True)
        alone = calibration(span, "score", "response").row(0, named=True)
        assert row["ecce_r"] == pytest.approx(alone["ecce_r"], rel=1e-12)
        assert row["n"] == span.height
    assert set(got["windows"].to_list()) == {4}


def test_rolling_windows_refuse_incommensurate_periods() -> None:
    frame = weekly_predictions(weeks=3, per_week=20, drift_week=None)
    for period in ("10d", "5d", "1.5w", "w"):
        with pytest.raises(polars_cumdev.CumdevError, match="period"):
            rolling_windows(frame, "ts", every="1w", period=period)


@pytest.mark.slow
def test_the_planted_week_is_found_whatever_the_seed() -> None:
    planted = dt.datetime(2024, 1, 1) + dt.timedelta(weeks=8)
    for seed in range(1, 6):
        table = calibration_drift(weekly_predictions(seed=seed), "score", "response", time="ts")
        assert table.filter("flagged")["ts"].to_list() == [planted], seed


def test_a_screen_by_week_takes_the_same_adjustment() -> None:
    # Each week against all weeks (the outcome given the score): Kuiper's p per week.
    frame = weekly_predictions(seed=0)
    weekly = polars_cumdev.screen(
        frame, by=pl.col("ts").dt.truncate("1w"), score="score", response="response"
    )
    table = family_wise(weekly, p="kuiper_p")
    assert table.height == 12 and set(table["windows"].to_list()) == {12}
    want = naive_holm(table["kuiper_p"].to_list())
    assert_allclose(table["fw_p"].to_numpy(), want, rtol=1e-12)
    assert table.filter("flagged")["ts"].to_list() == [dt.datetime(2024, 2, 26)]


@pytest.mark.slow
def test_pandas_input_gives_a_polars_table() -> None:
    frame = weekly_predictions(weeks=3, per_week=300, drift_week=None, seed=4)
    got = calibration_drift(frame.to_pandas(), "score", "response", time="ts")
    assert isinstance(got, pl.DataFrame)
    assert got.equals(calibration_drift(frame, "score", "response", time="ts"))
