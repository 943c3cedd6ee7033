"""Cut points that depend on the data alone (issue 25, item 9).

The score ranges of the partitioned, Dask and Spark screens are cut at
quantiles of a bottom-k sample of the distinct scores
(:mod:`polars_cumdev.engines.partitioned.cuts`). Checked here against plain
NumPy: below the sample size the cuts are ``numpy.quantile(..., "lower")`` of
all finite scores; above it, the sample of any split of the rows, merged in any
order, is the sample of the whole (the k distinct scores of smallest key,
with their exact counts), so the cuts, and the bits of the screen, do not
depend on the row order or on how the rows are split into batches.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from engine_cases import make_data
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_cumdev.engines.partitioned import cuts as cutting
from polars_cumdev.engines.partitioned import screen_parquet, screen_partitioned
from polars_cumdev.method import _names as nm


def naive_sample(values: np.ndarray, size: int) -> dict[float, int]:
    """The ``size`` distinct finite values of smallest SplitMix64 key, with their counts.

    The key is written out here from the published finalizer of SplitMix64
    (Steele, Lea and Flood 2014), one Python integer at a time.
    """
    mask = (1 << 64) - 1

    def key(value: float) -> int:
        z = (int(np.float64(value + 0.0).view(np.uint64)) + 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    finite = [float(v) + 0.0 for v in values if np.isfinite(v)]
    counts: dict[float, int] = {}
    for v in finite:
        counts[v] = counts.get(v, 0) + 1
    kept = sorted(counts, key=lambda v: (key(v), v))[:size]
    return {v: counts[v] for v in sorted(kept)}


def as_dict(sample: pl.DataFrame) -> dict[float, int]:
    return dict(zip(*[sample.get_column(c).to_list() for c in sample.columns], strict=True))


def scores(seed: int, rows: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    s = np.where(rng.random(rows) < 0.5, np.round(rng.normal(size=rows), 2), rng.normal(size=rows))
    s[:4] = [np.nan, np.inf, -0.0, 0.0]
    return s


def test_below_the_sample_size_the_cuts_are_numpys_lower_quantiles():
    s = scores(1, 4000)
    finite = s[np.isfinite(s)]
    frame = pl.LazyFrame({nm.SCORE: s})
    for ranges in [2, 7, 64, 5000]:
        count = min(ranges, finite.size)
        levels = np.arange(1, count) / count
        q = np.unique(np.quantile(finite, levels, method="lower"))
        assert cutting.cut_points(frame, ranges) == q[q < finite.max()].tolist()


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(1, 300),
    splits=st.lists(st.integers(0, 2000), max_size=6),
)
def test_the_merged_sample_of_any_split_is_the_naive_sample_of_the_whole(seed, size, splits):
    s = scores(seed, 2000)
    expected = naive_sample(s, size)
    edges = [0, *sorted(splits), s.size]
    pieces = [pl.Series(s[a:b]) for a, b in itertools.pairwise(edges)]
    samples = [cutting.sample_scores(p, size) for p in pieces]
    assert as_dict(cutting.merge_samples(samples, size)) == expected
    assert as_dict(cutting.merge_samples(samples[::-1], size)) == expected
    merged = cutting.merge_samples([])
    for sample in samples:  # one at a time, as the drivers merge them
        merged = cutting.merge_samples([merged, sample], size)
    assert as_dict(merged) == expected


@pytest.mark.parametrize("copies", [1, 3, 16])
def test_the_sample_of_repeated_rows_is_the_rows_sample_with_counts_times_copies(copies):
    """Multicalibration's engines cut the rows repeated once per feature subset from the
    rows themselves (:func:`cutting.repeat_sample`): the naive sample of the repeated
    rows, and so their cuts, whether the sample is full or not."""
    s = scores(4, 3000)
    repeated = np.tile(s, copies)  # every row ``copies`` times
    for size in (100, 5000):  # a bottom-k sample, and every distinct score
        sample = cutting.repeat_sample(cutting.sample_scores(pl.Series(s), size), copies)
        assert as_dict(sample) == naive_sample(repeated, size)
        whole = cutting.sample_scores(pl.Series(repeated), size)
        for ranges in (2, 9, 40):
            assert cutting.quantile_cuts(sample, ranges) == cutting.quantile_cuts(whole, ranges)


def test_cuts_are_quantiles_of_the_sample_repeated_by_their_counts():
    s = scores(3, 3000)
    sample = cutting.sample_scores(pl.Series(s), 200)
    repeated = np.repeat(*[sample.get_column(c).to_numpy() for c in sample.columns])
    levels = np.arange(1, 6) / 6
    q = np.unique(np.quantile(repeated, levels, method="lower"))
    assert cutting.quantile_cuts(sample, 6) == q[q < repeated.max()].tolist()


def test_above_the_sample_size_the_cuts_ignore_row_order_and_batches(monkeypatch):
    monkeypatch.setattr(cutting, "SAMPLE_SIZE", 300)
    monkeypatch.setattr(cutting, "_BATCH_ROWS", 700)
    s = scores(4, 5000)
    first = cutting.cut_points(pl.LazyFrame({nm.SCORE: s}), 8)
    assert len(first) == 7
    for seed in range(3):
        shuffled = np.random.default_rng(seed).permutation(s)
        assert cutting.cut_points(pl.LazyFrame({nm.SCORE: shuffled}), 8) == first


@pytest.mark.slow
def test_partitioned_screen_same_bits_under_shuffles_above_the_sample_size(monkeypatch):
    """The in-process partitioned screen took every k-th row: its bits changed with row order."""
    monkeypatch.setattr(cutting, "SAMPLE_SIZE", 500)
    df = make_data(13, rows=4000)
    assert df["s"].n_unique() > 500
    first = screen_partitioned(df, "g", "s", "r", "w", ranges=4)
    for seed in range(1, 3):
        shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed)
        out = screen_partitioned(shuffled, "g", "s", "r", "w", ranges=4)
        assert out.sort("g").equals(first.sort("g")), seed


@pytest.mark.slow
def test_parquet_screen_same_bits_under_row_groups_and_files(monkeypatch, tmp_path):
    monkeypatch.setattr(cutting, "SAMPLE_SIZE", 500)
    monkeypatch.setattr(cutting, "_BATCH_ROWS", 900)
    df = make_data(13, rows=4000)
    expected = screen_partitioned(df, "g", "s", "r", "w", ranges=4).sort("g")
    one = tmp_path / "one.parquet"
    df.sample(fraction=1.0, shuffle=True, seed=5).write_parquet(one, row_group_size=333)
    assert screen_parquet(one, "g", "s", "r", "w", ranges=4).sort("g").equals(expected)
    folder = tmp_path / "three"
    folder.mkdir()
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=6)
    for i, start in enumerate([0, 1000, 2500]):
        shuffled.slice(start, [1000, 1500, 1500][i]).write_parquet(folder / f"{i}.parquet")
    assert screen_parquet(folder, "g", "s", "r", "w", ranges=4).sort("g").equals(expected)
