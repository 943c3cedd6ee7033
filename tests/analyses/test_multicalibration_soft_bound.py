"""Multicalibration of soft labels: a small candidate segment gets the conservative bound.

The segments of ``multicalibration`` are calibrated against their own scores, as the
groups of ``calibration(by=)``; a segment whose responses are not all 0 or 1, whose
asymptotic p-value could matter and whose effective number of events is small gets
the Chernoff-Ville bound of docs/method.md ("Soft labels: a bound valid at every
size"), ``p_method`` "bound", checked here against the naive transcription of
``tests/references/reference_bound.py`` on each such segment's rows. Before,
such segments kept the asymptotic p-value (the tail that rejected 42% of null
families of soft labels at BH 5% in ``test_calibration_soft_bound.py``).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from reference_bound import group_bound
from segment_cases import SOFT, soft_labels

from polars_cumdev.multicalibration import multicalibration


def _rows(frame: pl.DataFrame, row: dict) -> pl.DataFrame:
    """The rows of the segment ``row`` names (a null feature: any level)."""
    for feature in ("a", "b"):
        if row[feature] is not None:
            frame = frame.filter(pl.col(feature) == row[feature])
    return frame


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_small_soft_label_segments_get_the_reference_bound(seed: int) -> None:
    frame = soft_labels(seed)
    table = multicalibration(frame, "s", "y", "w", segments=SOFT)
    bounded = table.filter(pl.col("p_method") == "bound")
    assert bounded.height > 0
    assert set(table["p_method"]) <= {"asymptotic", "bound"}  # (no 0/1 segment here)
    checked = bounded.filter(pl.col("n") <= 300)  # (the naive restart bound is quadratic)
    assert checked.height >= 3
    for row in checked.iter_rows(named=True):
        part = _rows(frame, row)
        assert part.height == row["n"]
        kuiper, ks = group_bound(*(part[c].to_numpy() for c in ("s", "w", "y")))
        assert row["ecce_r_p"] == pytest.approx(kuiper, rel=1e-9)
        assert row["ecce_mad_p"] == pytest.approx(ks, rel=1e-9)
    # the family-wise decision reads the bound: Holm over the p-values shown
    p = np.sort(table["ecce_r_p"].drop_nulls().to_numpy())
    holm = np.maximum.accumulate(np.minimum(1.0, p * (p.size - np.arange(p.size))))
    assert np.allclose(np.sort(table["p_family"].drop_nulls().to_numpy()), holm, rtol=1e-12)


def test_zero_one_segments_beside_soft_ones_keep_their_redraws() -> None:
    # half the rows 0/1: a segment of only those keeps "simulated", the mixed ones are bounded
    frame = soft_labels(3)
    rng = np.random.default_rng(3)
    hard = (frame["b"] == "0").to_numpy()
    y = frame["y"].to_numpy().copy()
    y[hard] = (
        rng.random(hard.sum())
        < frame["s"].to_numpy()[hard] + 0.2 * (frame["a"].to_numpy()[hard] == "3")
    ).astype(float)
    frame = frame.with_columns(pl.Series("y", y))
    table = multicalibration(frame, "s", "y", "w", segments=SOFT)
    found = table.filter(pl.col("p_method") != "asymptotic")
    assert set(found.filter(pl.col("b") == "0")["p_method"]) == {"simulated"}
    assert set(found.filter(pl.col("b") != "0")["p_method"]) == {"bound"}
