"""``recalibrate(segments=None)``: no segment features, the full population alone is audited.

The documented default failed on the code before: ``segments()`` refuses a
family with no feature (issue 37), and a hand-made featureless family failed
inside the multicalibration audit with a raw Polars ``OutOfBoundsError``.
Now the default audits the full population (the same ``p_family`` as the
depth-0 row of any multicalibration audit), fits at most the global step,
and the audit itself refuses a featureless family with a ``CumdevError``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.errors import CumdevError
from polars_cumdev.multicalibration import Segments, multicalibration
from polars_cumdev.multicalibration.screens import screen_segments
from polars_cumdev.recalibration import Recalibration, evaluate, recalibrate


def shrunk(n: int, seed: int, *, slope: float = 0.6, offset: float = 0.3) -> pl.DataFrame:
    """Scores whose log-odds t are too spread: the truth is ``slope * t + offset``.

    ``slope=1, offset=0``: calibrated. A constant feature ``a`` (three levels,
    no effect) lets the same rows be audited with a feature.
    """
    rng = np.random.default_rng(seed)
    t = 1.5 * rng.normal(size=n)
    truth = slope * t + offset
    y = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(np.float64)
    a = rng.integers(0, 3, n)
    return pl.DataFrame({"p": 1 / (1 + np.exp(-t)), "y": y, "a": a})


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def brier(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((p - y) ** 2))


@pytest.fixture(scope="module")
def fix() -> Recalibration:
    return shrunk(6000, 1).cumdev.recalibrate("p", "y")


def test_default_fits_the_global_map_only_and_it_holds_out(fix: Recalibration):
    """Miscalibrated everywhere: one monotone map, no segment; held out, better and calibrated."""
    assert fix.monotone is not None and fix.corrections == ()
    assert fix.features == () and fix.columns == ("p",)
    test = shrunk(6000, 2)
    q = test.select(fix.expr()).to_series().to_numpy()
    p, y = test["p"].to_numpy(), test["y"].to_numpy()
    assert log_loss(q, y) < log_loss(p, y) and brier(q, y) < brier(p, y)
    held = pc.calibration(test.with_columns(pl.Series("q", q)), "q", "y")
    raw = pc.calibration(test, "p", "y")
    assert raw["ecce_r_p"][0] < 1e-6 and held["ecce_r_p"][0] > 0.01


def test_the_audit_is_the_full_population_row_of_any_family(fix: Recalibration):
    """The decision rests on the p_family the audit gives the full population (depth 0)."""
    rows = shrunk(6000, 1)
    table = multicalibration(rows, "p", "y", segments=pc.segments(["a"], depth=1))
    full = table.filter(pl.col("depth") == 0)
    facts = dict(fix.fitting)
    assert facts["global_z"] == pytest.approx(full["ecce_r_z"][0], rel=1e-12)
    # one test: its family-wise p is its own p (the one-feature family's is Holm over 4)
    alone = pc.calibration(rows, "p", "y")
    assert facts["global_p_family"] == pytest.approx(alone["ecce_r_p"][0], rel=1e-9, abs=1e-300)
    assert facts["segments"]["categorical"] == [] and facts["segments"]["numerical"] == []


@pytest.mark.slow
def test_every_face_of_the_default(fix: Recalibration):
    """The namespace (eager and lazy), the function, the JSON, the held-out evaluation."""
    rows = shrunk(6000, 1)
    lazy = rows.lazy().cumdev.recalibrate("p", "y")
    plain = recalibrate(rows, "p", "y", segments=None)
    assert lazy.to_json() == fix.to_json() == plain.to_json()
    back = Recalibration.from_json(fix.to_json())
    test = shrunk(500, 3)
    bits = [test.select(f.expr()).to_series().to_numpy().tobytes() for f in (fix, back)]
    assert bits[0] == bits[1]
    table = evaluate(fix, test.lazy())
    q = test.select(fix.expr()).to_series().to_numpy()
    y, p = test["y"].to_numpy(), test["p"].to_numpy()
    # unweighted: the mean over the rows (it was their sum)
    assert table["brier"].to_list() == pytest.approx([brier(p, y), brier(q, y)], rel=1e-12)
    assert table["log_loss"][0] == pytest.approx(log_loss(p, y), rel=1e-12)


def test_calibrated_scores_are_left_alone():
    rows = shrunk(6000, 4, slope=1.0, offset=0.0)
    fix = rows.cumdev.recalibrate("p", "y")
    assert fix.monotone is None and fix.corrections == ()
    out = rows.select(fix.expr()).to_series().to_numpy()
    np.testing.assert_allclose(out, rows["p"].to_numpy(), rtol=1e-12)


def test_predicted_means_by_default():
    rng = np.random.default_rng(5)
    m = rng.normal(size=4000)
    rows = pl.DataFrame({"m": m, "y": 0.5 * m + 1.0 + rng.normal(size=4000)})
    fix = rows.cumdev.recalibrate("m", "y", target="mean")
    assert fix.target == "mean" and fix.monotone is not None and fix.corrections == ()
    q = rows.select(fix.expr()).to_series().to_numpy()
    y = rows["y"].to_numpy()
    assert np.mean((q - y) ** 2) < np.mean((m - y) ** 2)


@pytest.mark.parametrize("method", ["holm", "stepdown"])
def test_the_audit_refuses_a_family_without_features(method: str):
    """A hand-made featureless family: a CumdevError, never Polars' OutOfBoundsError."""
    rows = shrunk(300, 6)
    for depth in (0, 2):
        empty = Segments(categorical=(), numerical=(), depth=depth, levels=None, min_rows=10)
        with pytest.raises(CumdevError, match="names no feature"):
            multicalibration(rows, "p", "y", segments=empty, method=method)
        with pytest.raises(CumdevError, match="names no feature"):
            screen_segments(rows, empty, "p", "y").collect()
