"""Issue 25, item 1: compare applies the one resolution rule of method/resolution.py.

With a constant response and weights, every centred difference is rounding
noise; compare and compare_all must say so (null z and p, a note), as screen
does, instead of a "significant" z computed from noise.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev  # noqa: F401  (registers the namespace)


def _frame(seed: int, n: int = 60, constant: float = 0.3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n),
            "s": rng.normal(size=n),
            "r": [constant] * n,
            "w": rng.uniform(0.5, 2.0, n),
        }
    )


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("constant", [0.3, 0.1, 7.7])
@pytest.mark.slow
def test_constant_weighted_response_is_not_significant(seed, constant):
    df = _frame(seed, constant=constant)
    one = df.cumdev.compare(pl.col("g") == "a", pl.col("g") == "b", "s", "r", "w")
    every = df.cumdev.compare_all("g", "a", "s", "r", "w")
    for out in (one, every):
        row = out.row(0, named=True)
        assert row["kuiper_z"] is None and row["kuiper_p"] is None, row
        assert row["ks_z"] is None and row["ks_p"] is None, row
        assert row["from_score"] is None
        # a constant response is its own centre: every difference is exactly 0, so the
        # note says there is no spread (before, rounding noise was left and blamed)
        assert row["note"] is not None and "no spread" in row["note"], row["note"]
    # screen on the same data agrees that nothing is resolved
    screened = df.cumdev.screen("g", "s", "r", "w")
    assert screened.get_column("kuiper_z").null_count() == screened.height


def test_a_real_difference_is_still_reported():
    df = _frame(0).with_columns(r=(pl.col("s") > 0.0).cast(pl.Float64) + 0.5 * (pl.col("g") == "a"))
    row = df.cumdev.compare(pl.col("g") == "a", pl.col("g") == "b", "s", "r", "w").row(
        0, named=True
    )
    assert row["kuiper_z"] is not None and row["kuiper_z"] > 5.0
    assert row["note"] is None
    exact = df.with_columns(pl.col("w").round(0).clip(1.0, 2.0))
    row = exact.cumdev.compare(pl.col("g") == "a", pl.col("g") == "b", "s", "r", "w").row(
        0, named=True
    )
    assert row["kuiper_z"] is not None and row["kuiper_z"] > 5.0
