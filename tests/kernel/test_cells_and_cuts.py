"""The multicalibration audit's fast paths against plain NumPy and against the paths they replace.

* :func:`polars_cumdev.multicalibration.numerical_levels.quantile_cuts` (order
  statistics found by histograms of the keys) against ``np.quantile`` on the
  non-NaN values, equal as numbers, on bells, heavy tails, ties, NaN,
  infinities, subnormals and huge ranges;
* :func:`polars_cumdev.kernel.cells.cell_extremes` (all subsets in one pass
  over the rows) against a per-segment transcription of C and its extremes
  over the tie-merged points, and the same bits on one thread or two;
* the audit's three walks (all subsets in one pass, one pass per subset with
  or without its additive sums) on heavily tied scores against exact rational
  arithmetic: a tie's rows are merged before C takes them (method.md 1.1);
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


def _naive_extremes(ids, size, s, r, w) -> np.ndarray:
    """Per segment: merged scores, C_n, max C and min C over the tie-merged points k >= 1,
    the ties merged first (method.md 1.1 and 2: W' = sum W, R' = sum W R / W', C_k the
    running sum of W' (R' - S'), unnormalized)."""
    out = np.zeros((size, 4))
    for g in range(size):
        rows = np.flatnonzero(ids == g)
        if rows.size == 0:
            continue
        scores, at = np.unique(s[rows], return_index=True)
        merged_w = np.add.reduceat(w[rows], at)
        merged_r = np.add.reduceat(w[rows] * r[rows], at) / merged_w
        c = np.cumsum(merged_w * (merged_r - scores))
        out[g] = [scores.size, c[-1], c.max(), c.min()]
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
    for k, subset in enumerate(subsets):
        ids = np.zeros(n, dtype=np.int64)
        for f in subset:
            ids = ids * levels[f] + coded[f].codes
        size = int(np.prod([levels[f] for f in subset]))
        expected = _naive_extremes(ids, size, s, r, w)
        got = walked[0][bases[k] : bases[k] + size]
        if not ties:
            expected[:, 0] = 0.0  # merged scores are the caller's business without ties
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def _exact_ranges(df: pl.DataFrame, by: str | None) -> dict:
    """Each segment's Kuiper range of C (method.md 2), in exact rational arithmetic
    from its counts of rows and of R = 1 at each distinct score (unweighted 0/1 rows)."""
    from fractions import Fraction

    keys = [by] if by else []
    counts = df.group_by([*keys, "s"]).agg(pl.len().alias("n"), pl.col("y").sum().alias("ones"))
    ranges = {}
    for key, part in counts.sort("s").group_by(keys or pl.lit(0), maintain_order=True):
        total = int(part["n"].sum())
        c, high, low = Fraction(0), Fraction(0), Fraction(0)
        for s, n, ones in part.select("s", "n", "ones").iter_rows():
            c += (int(ones) - n * Fraction(s)) / total
            high, low = max(high, c), min(low, c)
        ranges[key[0] if by else None] = high - low
    return ranges


@pytest.mark.parametrize("path", ["one pass", "per subset", "per subset, sums walked"])
def test_walks_merge_ties_before_adding(monkeypatch, path):
    """300,000 rows on 11 scores (ties of about 27,000 rows): adding every row's
    W (R - S) to a running C, as the walks did, put the ranges 7.5e-14 to 3.3e-12
    (relative) off the exact ones, on all three paths; with each tie's merged point
    added once, as method.md 1.1 reads, they are 1.7e-15 to 1.3e-14 off."""
    from polars_cumdev.kernel import cells
    from polars_cumdev.multicalibration import walk

    if path != "one pass":
        monkeypatch.setattr(cells, "TABLE_LIMIT", 0)
    if path == "per subset, sums walked":
        monkeypatch.setattr(walk, "MAX_CELLS", 0)
    rng = np.random.default_rng(3)
    n = 300_000
    s = rng.integers(0, 11, n) / 10.0 * 0.9 + 0.05  # 0.05, 0.14, ..., 0.95: inexact floats
    df = pl.DataFrame({"s": s, "y": (rng.random(n) < s).astype(float), "a": rng.integers(0, 3, n)})
    family = segments(categorical=["a"], depth=1, levels=3)
    got = multicalibration(df, "s", "y", segments=family, locate=False)
    exact = _exact_ranges(df, None) | _exact_ranges(df.with_columns(pl.col("a").cast(str)), "a")
    for row in got.select("a", "ecce_r").iter_rows():
        want = float(exact[row[0]])
        assert abs(row[1] - want) <= 5e-14 * want, (path, row, want)


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
