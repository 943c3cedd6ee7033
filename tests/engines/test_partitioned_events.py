"""The range engines count each group's effective events as the in-process walk does.

The compiled range step adds its cells' interior terms and keeps the sums of W^3 and
W^4 of each cell's first and last points; the combination adds those two points'
terms once their bins' means are known (:mod:`polars_cumdev.engines.partitioned.events`).
Checked: the count against the naive transcription (tests/references/reference_events.py)
on 1, 3 and 7 ranges, continuous and tied scores, unit and log-normal weights, within
1e-12 relative (calibration's, with the scores as the null probabilities, too);
unknown (NaN) where the Polars range step ran; and the screen's and calibration's tables
equal with and without the set-aside, which drops candidates, while setting aside from
E = 50 on changes them.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from reference_events import naive_events, threshold_groups

pytest.importorskip("numba")

import polars_cumdev.engines.partitioned.calibration_drivers as calibration_drivers
import polars_cumdev.engines.partitioned.drivers as drivers
from polars_cumdev.engines.partitioned import finite as pf
from polars_cumdev.engines.partitioned import range_step, screen_partitioned
from polars_cumdev.engines.partitioned.calibration_drivers import calibration_partitioned
from polars_cumdev.method import finite_groups as fg
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.summary_columns import EVENTS


def _frame(seed: int, scores: str, weights: str, rows: int = 6000) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    share = 1.0 / np.arange(1, 13)
    g = rng.choice(12, size=rows, p=share / share.sum())
    s = rng.beta(1.0, 6.0, rows)
    if scores == "tied":
        s = np.round(s, 2)
    y = (rng.random(rows) < s + 0.05 * (g % 2)).astype(np.float64)
    w = np.ones(rows) if weights == "unit" else rng.lognormal(0.0, 1.0, rows)
    return pl.DataFrame({"g": g, "s": s, "y": y, "w": w})


def _counted(frame: pl.DataFrame, ranges: int, compiled: bool, monkeypatch) -> np.ndarray:
    """The EVENTS column the engine's finite step reads, per group 0 .. 11."""
    seen = []
    real = pf.chosen

    def spy(plan, stats):
        seen.append(stats.sort("g"))
        return real(plan, stats)

    monkeypatch.setattr(pf, "chosen", spy)
    if not compiled:  # (the driver runs the compiled step wherever Numba is)
        step = lambda *args, **options: range_step(*args, **{**options, "compiled": False})  # noqa: E731
        monkeypatch.setattr(drivers, "range_step", step)
    screen_partitioned(frame, "g", "s", "y", "w", ranges=ranges)
    assert seen[-1]["g"].to_list() == list(range(12))
    return seen[-1][EVENTS].to_numpy()


@pytest.mark.parametrize("ranges", [1, 3, 7])
@pytest.mark.parametrize("scores", ["continuous", "tied"])
@pytest.mark.parametrize("weights", ["unit", "log-normal"])
def test_counted_by_ranges_as_naively(ranges, scores, weights, monkeypatch) -> None:
    frame = _frame(5, scores, weights)
    got = _counted(frame, ranges, True, monkeypatch)
    columns = (frame[c].to_numpy() for c in ("g", "s", "y", "w"))
    want = naive_events(*columns, 12)
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_polars_range_step_does_not_count(monkeypatch) -> None:
    frame = _frame(6, "tied", "log-normal")
    assert np.isnan(_counted(frame, 3, False, monkeypatch)).all()


def test_the_set_aside_changes_no_table(monkeypatch) -> None:
    frame = threshold_groups(7)
    picked: list[int] = []  # groups whose rows the finite step gathers, with and without
    real = pf.chosen

    def spy(plan, stats):
        found = real(plan, stats)
        picked.append(0 if found is None else found.height)
        return found

    monkeypatch.setattr(pf, "chosen", spy)
    walked = screen_partitioned(frame, "g", "s", "y", "w", ranges=5)
    monkeypatch.setattr(fs, "set_aside", lambda events: pl.lit(False))
    every = screen_partitioned(frame, "g", "s", "y", "w", ranges=5)
    assert picked[0] < picked[1], picked
    assert walked.equals(every)
    assert (every["p_method"] == "simulated").any()
    monkeypatch.undo()
    monkeypatch.setattr(fs, "WALK_MARGIN", 0.25)  # E >= 50 set aside: some simulated group
    assert not screen_partitioned(frame, "g", "s", "y", "w", ranges=5).equals(every)


def _calibration_counted(frame: pl.DataFrame, ranges: int, monkeypatch) -> np.ndarray:
    """The EVENTS column calibration's finite step reads, per group 0 .. 11."""
    seen = []
    real = calibration_drivers.calibration_simulated

    def spy(stats, *args, **options):
        seen.append(stats.sort("g"))
        return real(stats, *args, **options)

    monkeypatch.setattr(calibration_drivers, "calibration_simulated", spy)
    calibration_partitioned(frame, "s", "y", "w", by="g", ranges=ranges)
    assert seen[-1]["g"].to_list() == list(range(12))
    return seen[-1][EVENTS].to_numpy()


@pytest.mark.parametrize("ranges", [1, 4])
@pytest.mark.parametrize("scores", ["continuous", "tied"])
def test_calibration_counted_by_ranges_as_naively(ranges, scores, monkeypatch) -> None:
    frame = _frame(8, scores, "log-normal")
    got = _calibration_counted(frame, ranges, monkeypatch)
    columns = (frame[c].to_numpy() for c in ("g", "s", "y", "w"))
    np.testing.assert_allclose(got, naive_events(*columns, 12, screen=False), rtol=1e-12)


def test_calibration_set_aside_changes_no_table(monkeypatch) -> None:
    frame = threshold_groups(7)
    seen = []
    real = calibration_drivers.calibration_simulated

    def spy(stats, keys, level, *args, **options):
        candidates = stats.filter(fg.candidate(level, False))
        seen.append(candidates.filter(fs.set_aside(pl.col(EVENTS))).height)
        return real(stats, keys, level, *args, **options)

    monkeypatch.setattr(calibration_drivers, "calibration_simulated", spy)
    walked = calibration_partitioned(frame, "s", "y", "w", by="g", ranges=5)
    assert seen[0] > 0  # (not vacuous: candidates set aside before their rows are read)
    monkeypatch.setattr(fs, "set_aside", lambda events: pl.lit(False))
    every = calibration_partitioned(frame, "s", "y", "w", by="g", ranges=5)
    assert walked.equals(every)
    assert (every["p_method"] == "simulated").any()
    monkeypatch.setattr(fs, "set_aside", lambda events: events >= 50.0)  # too much
    assert not calibration_partitioned(frame, "s", "y", "w", by="g", ranges=5).equals(every)
