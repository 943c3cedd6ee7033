"""The range engines give the same bits on every run of the same data.

A group-by's float sum in Polars 2.1 adds its partial sums in an order that
varies from run to run (pola-rs/polars#25163); the engines' combination of the
ranges' cells used it, so two runs of ``calibration(by=)`` by ranges differed in
the last bits of some group's sums about one time in three (300 groups, 4
ranges). The combinations now add each group's cells one at a time, in range
order (:func:`polars_cumdev.method.sums.ordered_sum`). Twenty runs of each:
calibration's failed on the code before; the screen's combination, changed the
same way, is checked beside it (it had not been seen to differ).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

pytest.importorskip("numba")

from polars_cumdev.engines.partitioned import screen_partitioned
from polars_cumdev.engines.partitioned.calibration_drivers import calibration_partitioned


def _frame(rows: int = 60_000, groups: int = 300) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    s = rng.beta(1.0, 8.0, rows)
    return pl.DataFrame(
        {
            "g": rng.integers(0, groups, rows),
            "s": s,
            "y": (rng.random(rows) < s * 1.2).astype(np.int8),
            "w": rng.lognormal(0.0, 0.5, rows),
        }
    )


@pytest.mark.parametrize("analysis", ["calibration", "screen"])
def test_twenty_runs_give_the_same_bits(analysis: str) -> None:
    frame = _frame()
    if analysis == "calibration":
        run = lambda: calibration_partitioned(frame, "s", "y", "w", by="g", ranges=4)  # noqa: E731
    else:
        run = lambda: screen_partitioned(frame, "g", "s", "y", "w", ranges=4)  # noqa: E731
    first = run()
    for _ in range(19):
        assert run().equals(first)
