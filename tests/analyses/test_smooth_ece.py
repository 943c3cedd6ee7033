"""Smooth ECE (issue 40, item 6) against the authors' package, relplot.

relplot is a test-only dependency (the ``test`` extra): ``smECE`` with its
automatic bandwidth and ``smECE_sigma`` at a fixed one must equal
:func:`polars_cumdev.binned.smooth_ece` to 1e-6 on random data (sizes from 40
to 20,000, miscalibrated and calibrated, with ties).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev
from polars_cumdev import charts
from polars_cumdev.binned import smooth_ece, smooth_ece_at

relplot = pytest.importorskip("relplot")


def _data(seed: int, n: int, power: float, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = rng.uniform(size=n)
    if ties:
        f = np.round(f, 2)
    y = (rng.uniform(size=n) < f**power).astype(np.float64)
    return f, y


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seed", "n", "power", "ties"),
    [(0, 40, 1.0, False), (1, 500, 1.5, True), (2, 3000, 0.7, False), (3, 20000, 1.0, True)],
)
def test_equals_relplot(seed: int, n: int, power: float, ties: bool) -> None:
    f, y = _data(seed, n, power, ties)
    got = smooth_ece(pl.DataFrame({"p": f, "y": y}), "p", "y")
    want, width = relplot.smECE(f, y, return_width=True)
    assert got.item(0, "smooth_ece") == pytest.approx(want, abs=1e-6)
    assert got.item(0, "bandwidth") == pytest.approx(width, abs=1e-12)
    assert got.item(0, "n") == n
    for sigma in (0.01, 0.05, 0.3):
        assert smooth_ece_at(y, f, sigma) == pytest.approx(
            relplot.smECE_sigma(f, y, sigma), abs=1e-6
        )


def test_moves_with_the_bandwidth_and_bad_input_is_refused() -> None:
    from polars_cumdev.datasets import calibration_oscillating

    oscillating = calibration_oscillating(n=2000)
    f, y = oscillating["score"].to_numpy(), oscillating["response"].to_numpy()
    values = [smooth_ece_at(y, f, s) for s in (0.01, 0.05, 0.2, 0.5)]
    # A wide kernel smooths the oscillating miscalibration away, as wide bins do.
    assert values[0] > 3 * values[-1]
    with pytest.raises(polars_cumdev.InvalidValuesError, match=r"\[0, 1\]"):
        smooth_ece_at([0, 1], [0.5, 1.5], 0.1)
    with pytest.raises(polars_cumdev.InvalidParameterError, match="bandwidth"):
        smooth_ece_at([0, 1], [0.5, 0.5], 0)
    with pytest.raises(polars_cumdev.ColumnNotFoundError):
        smooth_ece(pl.DataFrame({"p": f}), "p", "y")


@pytest.mark.slow
def test_drawn_beside_the_binned_ece_and_the_ecce() -> None:
    f, y = _data(5, 1000, 1.3, False)
    frame = pl.DataFrame({"p": f, "y": y})
    smooth = smooth_ece(frame, "p", "y")
    chart = charts.ece_sweep(
        frame.cumdev.ece_sweep("p", "y"), ecce=frame.cumdev.calibration("p", "y"), smooth=smooth
    )
    spec = chart.to_dict()
    rule = next(layer for layer in spec["layer"] if layer.get("name") == "smooth_ece")
    values = spec["datasets"][rule["data"]["name"]]
    assert values == [{"metric": "smooth ECE", "value": smooth.item(0, "smooth_ece")}]
    assert "automatic bandwidth" in " ".join(spec["title"]["subtitle"])
