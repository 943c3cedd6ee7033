"""The node's order by score: every route gives the same tables, signed zeros included."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from polars_cumdev.method import compiled, score_order
from polars_cumdev.subpopulation import curve, screen


@pytest.mark.slow
@pytest.mark.parametrize("zeros", [[0.0, 0.0], [-0.0, -0.0], [-0.0, 0.0]])
def test_screen_through_either_compiled_sort_keeps_the_sign_of_zero(monkeypatch, zeros):
    rng = np.random.default_rng(8)
    n = 400
    s = np.round(rng.normal(size=n), 1)
    s[s == 0.0] = np.resize(np.array(zeros), int((s == 0.0).sum()))
    frame = pl.DataFrame(
        {
            "g": rng.integers(0, 3, n),
            "s": s,
            "y": (rng.random(n) < 0.5).astype(np.int8),
            "w": rng.integers(1, 4, n).astype(np.float64),
        }
    )
    queries = [
        screen(frame.lazy(), "g", "s", "y", "w", engine="kernel"),
        curve(frame.lazy(), pl.col("g") == 1, "s", "y", "w", engine="kernel"),
    ]
    expected = [query.collect() for query in queries]
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 0)
    monkeypatch.setattr(score_order, "RADIX_ROWS", 0)
    for query, want in zip(queries, expected, strict=True):
        got = query.collect()
        assert got.equals(want)
        # The bits too (equals takes -0.0 for 0.0): every route reads -0.0 as 0.0
        # (tests/method/test_signed_zeros.py), so a run of mixed zeros has one sign.
        for name in got.columns:
            if got.schema[name] == pl.Float64:
                bits = [c.to_numpy().view(np.uint64) for c in (got[name], want[name])]
                assert np.array_equal(*bits)
