"""Issue 37, item 10: exact zeros where nothing deviates, and notes that say why.

A response that is one value everywhere deviates nowhere: every statistic is 0
exactly (not rounding noise of 1e-17) and sigma is 0 because the responses do
not vary (not "lost in rounding" nor "a dominant weight"). A multicalibration
family with no testable segment has no critical z (null, not NaN, nor the
bootstrap's 0).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.method.statistics import SIGMA_ZERO
from polars_cumdev.partitioned import screen_parquet

VALUES = [0.3, 0.7, 12345.678]


def _frame(value: float, n: int = 600, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "g": rng.integers(0, 3, n),
            "s": rng.random(n).round(2),  # ties too
            "r": np.full(n, value),
            "w": rng.uniform(0.1, 3.0, n),
        }
    )


@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("engine", ["polars", "kernel"])
@pytest.mark.parametrize("value", VALUES)
def test_constant_response_screens_to_exact_zero(value, engine, weight):
    """On main, 0.3 gave kuiper 1.1e-17 and a note blaming rounding (or, weighted,
    a weight outweighing its bin by 1e16); 0.7 gave 0 but sigma "not resolved"."""
    out = _frame(value).cumdev.screen("g", "s", "r", weight, engine=engine)
    assert out.height == 3
    for name in ("kuiper", "ks", "delta", "sigma"):
        assert out.get_column(name).to_list() == [0.0] * 3, name
    assert out.get_column("note").to_list() == [SIGMA_ZERO] * 3
    curve = _frame(value).cumdev.curve(pl.col("g") == 1, "s", "r", weight, engine=engine)
    assert (curve.get_column("cumdiff") == 0.0).all()


def test_constant_response_out_of_core(tmp_path):
    """The partitioned screen centres on the constant too (its plan reads each
    cell's smallest and largest response)."""
    path = tmp_path / "constant.parquet"
    _frame(0.3).write_parquet(path)
    out = screen_parquet(path, "g", "s", "r", "w", ranges=3)
    assert out.get_column("kuiper").to_list() == [0.0] * 3
    assert out.get_column("sigma").to_list() == [0.0] * 3
    assert out.get_column("note").to_list() == [SIGMA_ZERO] * 3


@pytest.mark.slow
@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("value", [0.3, 0.7])
def test_constant_response_compares_to_exact_zero(value, weight):
    """On main: sigma "not resolved in double precision" for two subpopulations
    whose responses are all 0.3."""
    frame = _frame(value)
    out = frame.cumdev.compare(pl.col("g") == 0, pl.col("g") == 1, "s", "r", weight, ties="dither")
    assert out.get_column("kuiper").to_list() == [0.0]
    assert out.get_column("sigma").to_list() == [0.0]
    assert "resolved" not in out.get_column("note")[0]
    every = frame.cumdev.compare_all("g", 0, "s", "r", weight, ties="dither")
    assert every.get_column("sigma").to_list() == [0.0] * every.height


def _zero_one_scores(n: int = 240) -> pl.DataFrame:
    rng = np.random.default_rng(2)
    p = rng.integers(0, 2, n).astype(float)
    return pl.DataFrame({"a": rng.integers(0, 3, n), "p": p, "y": p})


@pytest.mark.parametrize("method", ["holm", "bootstrap", "stepdown"])
def test_untestable_family_has_no_critical_z(method):
    """Scores of 0 and 1 only: sigma (50) is 0 in every segment, so no z; on main
    critical_z was NaN (Holm) or 0.0 (the bootstraps)."""
    family = pc.segments(categorical=["a"], depth=1, min_rows=1)
    out = _zero_one_scores().cumdev.multicalibration("p", "y", segments=family, method=method)
    assert out.get_column("tests").to_list() == [0] * out.height
    assert out.get_column("critical_z").null_count() == out.height
    notes = out.get_column("note").unique().to_list()
    assert len(notes) == 1 and "every score is 0 or 1" in notes[0]


def test_calibration_sigma_zero_names_the_scores():
    """Calibration has no bins: its sigma is 0 when every score is 0 or 1, and the
    note says so (on main it spoke of the spread of responses within bins)."""
    out = _zero_one_scores().cumdev.calibration("p", "y", by="a")
    assert out.get_column("sigma").to_list() == [0.0] * out.height
    for note in out.get_column("note"):
        assert "every score is 0 or 1" in note and "bins" not in note
