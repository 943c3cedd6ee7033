"""The multicalibration audit's fast paths against plain NumPy and against the paths they replace.

* :func:`polars_cumdev.multicalibration.numerical_levels.quantile_cuts` (order
  statistics found by histograms of the keys) against ``np.quantile`` on the
  non-NaN values, equal as numbers, on bells, heavy tails, ties, NaN,
  infinities, subnormals and huge ranges;
* :func:`polars_cumdev.kernel.cells.cell_extremes` (all subsets in one pass
  over the rows) against a per-segment transcription of C and its extremes
  over the tie-merged points, and the same bits on one thread or two;
* the compiled node's radix sort (:mod:`polars_cumdev.method.score_order`)
  against Polars' sort: the same tables, bit for bit, for the screen, for
  calibration and for the audit, on scores with ties.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

pytest.importorskip("numba")

from polars_cumdev.calibration import calibration
from polars_cumdev.kernel.cells import cell_extremes, cell_numbers, cell_segments
from polars_cumdev.method import compiled, score_order
from polars_cumdev.multicalibration import multicalibration, segments
from polars_cumdev.multicalibration.coding import Coded
from polars_cumdev.multicalibration.family import layout
from polars_cumdev.multicalibration.numerical_levels import quantile_cuts
from polars_cumdev.subpopulation import screen


def _columns(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    with_nan = rng.normal(size=n)
    with_nan[rng.random(n) < 0.3] = np.nan
    signed_zeros = np.where(rng.random(n) < 0.5, -0.0, 0.0)
    signed_zeros[:2] = [1.0, -1.0]
    return [
        rng.normal(size=n),
        rng.exponential(size=n) ** 6,  # most values in a sliver of the range
        rng.lognormal(0.0, 30.0, n),
        rng.standard_cauchy(n),
        rng.integers(0, 5, n).astype(np.float64),
        with_nan,
        np.concatenate([[1e308, -1e308], rng.normal(size=n - 2)]),
        np.concatenate([[np.inf, -np.inf], rng.normal(size=n - 2)]),
        rng.normal(size=n) * 1e-310,  # subnormal
        1.0 + rng.integers(0, 3, n) * np.finfo(np.float64).eps,
        signed_zeros,
    ]


def _numpy_cuts(values: np.ndarray, levels: int) -> np.ndarray:
    present = values[~np.isnan(values)]
    inner = np.quantile(present, np.linspace(0.0, 1.0, levels + 1)[1:-1])
    return np.unique(np.concatenate([[present.min()], inner, [present.max()]]))


@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 10, 101, 5_000, 40_001])
def test_quantile_cuts_equal_numpy(n):
    rng = np.random.default_rng(n)
    for values in _columns(rng, n):
        for levels in (2, 3, 4, 10):
            with np.errstate(invalid="ignore"):  # inf - inf, in both
                got, expected = quantile_cuts(values, levels), _numpy_cuts(values, levels)
            assert np.array_equal(got, expected, equal_nan=True), (levels, got, expected)
            assert not np.any(np.signbit(got) & (got == 0.0))  # never -0.0 in a label


def _naive_extremes(ids: np.ndarray, size: int, s: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Per segment: merged scores, C_n, max C and min C over the tie-merged points k >= 1."""
    out = np.zeros((size, 4))
    for g in range(size):
        rows = np.flatnonzero(ids == g)
        if rows.size == 0:
            continue
        c = np.cumsum(step[rows])
        closes = np.append(s[rows][1:] != s[rows][:-1], True)  # last row of each tie
        points = c[closes]
        out[g] = [points.size, c[-1], points.max(), points.min()]
    return out


@pytest.mark.parametrize("ties", [False, True])
def test_cell_walk_matches_a_transcription_per_segment(ties):
    rng = np.random.default_rng(7 + ties)
    n = 3_000
    s = np.sort(rng.integers(0, 60, n) / 60.0 if ties else rng.random(n))
    r = (rng.random(n) < s).astype(np.float64)
    w = rng.uniform(0.5, 2.0, n)
    levels = [3, 4, 2, 5]
    coded = [
        Coded(rng.integers(0, k, n).astype(np.int32), [str(i) for i in range(k)], [])
        for k in levels
    ]
    subsets = segments(["a", "b", "c", "d"], depth=3).subsets()
    codes, features, radices, bases, total = layout(coded, subsets)
    counts = np.array(levels, dtype=np.int64)
    table = cell_segments(counts, features, radices, bases)
    cell = cell_numbers(codes, counts)
    walked = [
        cell_extremes(t, cell, s, r, w, True, 1.0, total, ties, parts)
        for t in (table, table.astype(np.int16))
        for parts in (1, 2, 7)
    ]
    for other in walked[1:]:
        assert np.array_equal(walked[0], other)  # same bits, any table type or threads
    step = w * (r - s)
    for k, subset in enumerate(subsets):
        ids = np.zeros(n, dtype=np.int64)
        for f in subset:
            ids = ids * levels[f] + coded[f].codes
        size = int(np.prod([levels[f] for f in subset]))
        expected = _naive_extremes(ids, size, s, step)
        got = walked[0][bases[k] : bases[k] + size]
        if not ties:
            expected[:, 0] = 0.0  # merged scores are the caller's business without ties
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_radix_sort_of_the_node_gives_the_same_tables(monkeypatch):
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 0)  # ties ordered by the compiled pass
    rng = np.random.default_rng(11)
    n = 4_000
    s = rng.integers(0, 30, n) / 30.0
    s[s == 0.0] = -0.0  # a Float64 score holding -0.0 takes the radix sort, then the gather
    frame = pl.DataFrame(
        {
            "s": s,
            "y": (rng.random(n) < s).astype(np.float64),
            "w": rng.integers(1, 4, n).astype(np.float64),
            "g": rng.integers(0, 6, n),
            "a": rng.choice(["p", "q", "r"], n).tolist(),
            "x": rng.normal(size=n),
        }
    )
    family = segments(["a", "g"], ["x"], depth=2, min_rows=5)

    def tables(data: pl.DataFrame = frame) -> list[pl.DataFrame]:
        return [
            screen(data, "g", "s", "y", "w", engine="kernel"),
            calibration(data, "s", "y", "w", by="g", engine="kernel"),
            multicalibration(data, "s", "y", "w", segments=family),
        ]

    by_polars = tables()
    zero = pl.when(pl.col("s") == 0.0).then(0.0).otherwise(pl.col("s")).alias("s")
    by_buckets = tables(frame.with_columns(zero))  # (kernel.bucketsort: no -0.0)
    monkeypatch.setattr(score_order, "RADIX_ROWS", 0)
    by_radix = tables()
    monkeypatch.setattr(score_order, "SLICED_ROWS", 0)  # each pass on two threads
    monkeypatch.setattr(score_order.os, "cpu_count", lambda: 2)
    by_slices = tables()
    for left, *others in zip(by_polars, by_radix, by_slices, by_buckets, strict=True):
        for other in others:
            assert_frame_equal(left, other, check_exact=True)
