"""Invariants of multiclass, mean and quantile calibration (hypothesis)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from test_calibration_multiclass import COLUMNS, classified
from test_calibration_targets import regression

_small = st.integers(min_value=0, max_value=2**32 - 1)
_STATS = ("ecce_r", "ecce_mad", "delta", "sigma", "ecce_r_p", "share")


def _runs(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Class-wise, top-label, mean and quantile calibration per group, sorted by the keys."""
    return {
        "class-wise": frame.cumdev.calibration(COLUMNS, "label", "w", kind="class-wise", by="g")
        .sort("g", "class")
        .drop("ecce_r_holm", "ecce_mad_holm"),
        "top-label": frame.cumdev.calibration(COLUMNS, "label", "w", kind="top-label", by="g"),
        "mean": frame.cumdev.calibration("m", "y", "w", by="g", target="mean"),
        "quantile": frame.cumdev.calibration("q", "y", "w", by="g", target="quantile", alpha=0.8),
    }


def _frame(seed: int) -> pl.DataFrame:
    labelled, _ = classified(seed, m=400)
    numbers = regression(seed, m=400).select("m", "q", "y")
    return pl.concat([labelled, numbers], how="horizontal")


def _compare(
    a: dict[str, pl.DataFrame], b: dict[str, pl.DataFrame], simulated_rtol: float = 1e-12
) -> None:
    """Equal statistics; ``simulated_rtol`` for p-values from redraws (their
    sequential stop may fall one redraw apart when rounding moves a statistic
    across the observed one, as a weight scale that is not a power of two can)."""
    for kind in a:
        left, right = a[kind].sort("g"), b[kind].sort("g")
        simulated = (
            (left["p_method"] == "simulated").to_numpy()
            if "p_method" in left.columns
            else np.zeros(left.height, dtype=bool)
        )
        for name in _STATS:
            # ties are summed in row order: their last bits may differ, which
            # matters relative to a delta near 0 (hence the absolute 1e-15)
            x, y = left[name].to_numpy(), right[name].to_numpy()
            rtol = simulated_rtol if name.endswith("_p") else 1e-12
            assert_allclose(x[simulated], y[simulated], rtol=rtol, err_msg=f"{kind} {name}")
            assert_allclose(
                x[~simulated], y[~simulated], rtol=1e-12, atol=1e-15, err_msg=f"{kind} {name}"
            )


@settings(max_examples=15, deadline=None)
@given(seed=_small, permutation=_small)
@pytest.mark.slow
def test_row_order_does_not_matter(seed: int, permutation: int) -> None:
    df = _frame(seed)
    _compare(_runs(df), _runs(df.sample(fraction=1.0, shuffle=True, seed=permutation)))


@settings(max_examples=15, deadline=None)
@given(seed=_small, factor=st.floats(min_value=1e-100, max_value=1e100))
@pytest.mark.slow
def test_scaling_weights_changes_nothing_but_the_total(seed: int, factor: float) -> None:
    df = _frame(seed)
    a, b = _runs(df), _runs(df.with_columns(pl.col("w") * factor))
    _compare(a, b, simulated_rtol=0.01)
    for kind in a:
        assert_allclose(b[kind].sort("g")["weight"], a[kind].sort("g")["weight"] * factor)


@settings(max_examples=15, deadline=None)
@given(seed=_small, shift=st.integers(min_value=-1000, max_value=1000))
@pytest.mark.slow
def test_shifting_predictions_and_responses_together_changes_nothing(seed: int, shift: int) -> None:
    # A mean or a quantile of y + c is the mean or quantile of y plus c: the
    # residuals, the indicators 1{y <= q}, and so every statistic, stay the same.
    df = regression(seed, m=400)
    moved = df.with_columns(pl.col("m", "q", "y") + float(shift))
    for target, score, alpha in (("mean", "m", None), ("quantile", "q", 0.9)):
        a = df.cumdev.calibration(score, "y", "w", by="g", target=target, alpha=alpha).sort("g")
        b = moved.cumdev.calibration(score, "y", "w", by="g", target=target, alpha=alpha)
        b = b.sort("g")
        for name in ("ecce_r", "ecce_mad", "sigma", "ecce_r_p"):
            # residuals of shifted values round differently in the last bits
            assert_allclose(a[name], b[name], rtol=1e-6, err_msg=f"{target} {name}")
        assert_allclose(b["from_score"], a["from_score"] + shift, rtol=1e-9, atol=1e-9)


def test_two_classes_class_wise_mirror_each_other() -> None:
    # With K = 2, class 1's curve is the mirror image of class 0's over the
    # mirrored probabilities: the same ECCE-R and sigma.
    rng = np.random.default_rng(9)
    p = rng.integers(0, 21, size=600) / 20.0
    label = (rng.uniform(size=600) < p).astype(np.int64)
    df = pl.DataFrame({"p0": 1.0 - p, "p1": p, "label": label})
    out = df.cumdev.calibration(["p0", "p1"], "label", kind="class-wise").sort("class")
    assert_allclose(out["ecce_r"][0], out["ecce_r"][1], rtol=1e-12)
    assert_allclose(out["sigma"][0], out["sigma"][1], rtol=1e-12)
    assert_allclose(out["delta"][0], -out["delta"][1], rtol=1e-12, atol=1e-15)
