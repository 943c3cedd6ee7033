"""Every per-group result ranks its groups the same way: the strongest evidence first.

screen, paired and compare_all by Kuiper z, calibration by ECCE-R z (largest
first, nulls last); corp and ece, which give no p-value, by their measure of
miscalibration (MCB, ECE1), largest first. Ties in the measure fall back to
the keys.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

import polars_cumdev  # noqa: F401  (registers the namespace)

GROUPS = ["a", "b", "c", "d", "e", "f"]


def frame() -> pl.DataFrame:
    rng = np.random.default_rng(26)
    n = 3000
    g = rng.choice(GROUPS, n)
    s = rng.uniform(0.02, 0.98, n).round(2)
    # groups deviate by different amounts, in an order unlike the key order
    shift = pl.Series(g).replace_strict(
        dict(zip(GROUPS, [0.0, 0.2, 0.05, 0.3, 0.1, 0.15], strict=True))
    )
    p = np.clip(s + shift.to_numpy() * (s - 0.5), 0.0, 1.0)
    return pl.DataFrame(
        {
            "g": g,
            "s": s,
            "r": (rng.random(n) < p).astype(np.float64),
            "q": (rng.random(n) < s).astype(np.float64),
            "w": rng.uniform(0.5, 2.0, n),
        }
    )


def _non_increasing(values: list[float | None]) -> bool:
    present = [v for v in values if v is not None]
    trailing_nulls = values[len(present) :] == [None] * (len(values) - len(present))
    return trailing_nulls and all(x >= y for x, y in itertools.pairwise(present))


@pytest.mark.parametrize(
    ("name", "call", "column"),
    [
        ("screen", lambda f: f.cumdev.screen("g", "s", "r", "w"), "kuiper_z"),
        ("paired", lambda f: f.cumdev.paired("s", "r", "q", "w", by="g"), "kuiper_z"),
        (  # two groups compared must not share a score: distinct scores here
            "compare_all",
            lambda f: f.with_columns(
                pl.col("s") + pl.int_range(pl.len()) * 1e-9
            ).cumdev.compare_all("g", "a", "s", "r", "w"),
            "kuiper_z",
        ),
        ("calibration", lambda f: f.cumdev.calibration("s", "r", "w", by="g"), "ecce_r_z"),
        ("corp", lambda f: f.cumdev.corp("s", "r", "w", by="g"), "mcb"),
        ("ece", lambda f: f.cumdev.ece("s", "r", "w", by="g"), "ece1"),
    ],
)
def test_groups_rank_strongest_first(name: str, call, column: str) -> None:
    table = call(frame())
    values = table[column].to_list()
    assert len(values) >= 5, name
    assert _non_increasing(values), (name, values)
    # the order is not simply the key order (else the test could not tell corp and ece,
    # which sorted by key before; compare_all's z happen to fall in key order here)
    if name != "compare_all":
        assert table["g"].to_list() != sorted(table["g"].to_list()), name
