"""Bins are the same at every scale of the scores, subnormals included (issue 37, item 8).

The statistics depend on the scores only through their order and the bins
between midpoints. Below 2^-1021 doubles are spaced 2^-1074 apart and a
midpoint rounded to even could pass a full-population score lying above the
true midpoint: scaling integer scores by 2^-1074 changed the Kuiper statistic
on both engines (0.1865 -> 0.1898 here). Halves there are now rounded down,
which puts every double on the same side as the exact midpoint does.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from polars_cumdev.kernel.prefix import midpoint as kernel_midpoint
from polars_cumdev.method.bins import midpoint

SCALES = [2.0**-1074, 2.0**-1060, 2.0**-1030, 2.0**-1000, 2.0**1010]


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(8)
    n = 3000
    scores = rng.integers(-200, 400, size=n).astype(np.float64)  # dense: every midpoint matters
    responses = rng.normal(size=n)
    groups = np.where(rng.uniform(size=n) < 0.05, "a", "b")  # a sparse group
    return scores, responses, groups


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["polars", "kernel"])
def test_the_screen_is_the_same_at_every_power_of_two(data, engine: str) -> None:
    scores, responses, groups = data
    frames = [pl.DataFrame({"s": scores * c, "r": responses, "g": groups}) for c in [1, *SCALES]]
    for frame, c in zip(frames[1:], SCALES, strict=True):
        assert np.array_equal(frame["s"].to_numpy() / c, scores)  # the scaling is exact
    columns = ["g", "n", "kuiper", "sigma", "kuiper_z", "kuiper_p"]
    tables = [
        f.cumdev.screen("g", "s", "r", engine=engine).sort("g").select(columns) for f in frames
    ]
    for table in tables[1:]:
        assert table.equals(tables[0])


def test_a_subnormal_midpoint_puts_every_double_where_the_exact_one_does() -> None:
    rng = np.random.default_rng(9)
    tiny = 2.0**-1074
    k = np.sort(rng.integers(-(2**50), 2**50, size=(4000, 2)), axis=1)
    k = k[k[:, 0] < k[:, 1]]
    lower, upper = k[:, 0] * tiny, k[:, 1] * tiny
    frame = pl.DataFrame({"lo": lower, "hi": upper})
    bounds = frame.select(midpoint(pl.col("lo"), pl.col("hi")))["lo"].to_numpy()
    kernel = np.array([kernel_midpoint(a, b) for a, b in zip(lower, upper, strict=True)])
    assert np.array_equal(bounds, kernel)
    # Exact in integers: S <= (lo + hi) / 2 iff 2 S <= lo + hi, for S = B and the next double.
    twice_mid = k[:, 0] + k[:, 1]
    at = np.round(bounds / tiny).astype(np.int64)
    assert (2 * at <= twice_mid).all() and (2 * (at + 1) > twice_mid).all()
    assert (lower <= bounds).all() and (bounds < upper).all()
