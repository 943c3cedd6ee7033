"""Issue 25, item 1: paired samples and calibration of means apply the screen's resolution rule.

Ties of equal weights whose responses are 0.1 below and 0.1 above the other
value (the prediction, or the second response) average to it exactly, but
the computed averages differ from it by rounding. Before, paired and
``calibration(target="mean")`` reported a z-score of that rounding noise
(kuiper 1.3e-17 over a sigma of 8e-18, a sigma estimated from the same
noise); now sigma is not resolved, as the screen says on such data, and z, p
and the located stretch are null with the reason in ``note``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev  # noqa: F401  (registers the namespace)


def _frame(seed: int, ties: int = 40, spread: float = 0.1, keys: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = np.repeat(rng.uniform(0.1, 0.9, ties), 2)
    return pl.DataFrame(
        {
            "g": np.repeat(rng.integers(0, keys, ties), 2),
            "s": s,
            "q": s + np.tile([-spread, spread], ties),  # averages to s in exact arithmetic
            "r": s,
            "w": np.repeat(rng.uniform(0.5, 2.0, ties), 2),
            "x": np.repeat(rng.normal(size=ties), 2),
        }
    )


def _unresolved(out: pl.DataFrame, z: str, p: str) -> None:
    for row in out.iter_rows(named=True):
        assert row[z] is None and row[p] is None, row
        assert row["from_score"] is None, row
        assert row["note"] is not None and "resolved" in row["note"], row["note"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("keys", [1, 3])
def test_rounding_noise_gives_no_z(seed, keys):
    df = _frame(seed, keys=keys)
    diff = df.select((pl.col("q") - pl.col("s")).abs().max()).item()
    assert diff > 0.09  # the rows differ; only their tie averages agree
    for variance in ("empirical", "bernoulli"):
        paired = df.cumdev.paired("x", "q", "r", "w", by="g", variance=variance)
        if variance == "empirical":
            _unresolved(paired, "kuiper_z", "kuiper_p")
        else:  # sigma from q(1 - q) + r(1 - r) is far above the noise: z is ~1e-16
            assert (paired["kuiper_z"].abs() < 1e-12).all()
    # A mean's sigma now reads the spread within each tie (issue 36): 0.1 there is
    # real noise, and C (rounding) is nothing against it. With a spread of 1e-9
    # the tie variances (1e-18) are themselves below the rounding of the averages.
    means = df.cumdev.calibration("s", "q", "w", by="g", target="mean")
    assert (means["ecce_r_z"].abs() < 1e-12).all() and means["from_score"].is_null().all()
    tiny = _frame(seed, keys=keys, spread=1e-9)
    assert tiny.select((pl.col("q") != pl.col("s")).all()).item()
    means = tiny.cumdev.calibration("s", "q", "w", by="g", target="mean")
    _unresolved(means, "ecce_r_z", "ecce_r_p")


def test_real_deviations_are_still_reported():
    df = _frame(0, ties=300)
    shifted = df.with_columns(q=pl.col("q") + 0.05 * (pl.col("s") > 0.5))
    row = shifted.cumdev.paired("x", "q", "r", "w").row(0, named=True)
    assert row["note"] is None and row["kuiper_z"] is not None and row["kuiper_z"] > 2.0
    noisy = df.with_columns(q=pl.col("s") + 0.3 * (pl.col("s") - 0.5) ** 2 + pl.col("x") * 0.01)
    row = noisy.cumdev.calibration("s", "q", "w", target="mean").row(0, named=True)
    assert row["ecce_r_z"] is not None and row["ecce_r_z"] > 2.0
