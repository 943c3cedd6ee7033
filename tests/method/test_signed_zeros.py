"""-0.0 and 0.0 are one score: every route gives the same bits whichever comes first.

Before scores were read with -0.0 as 0.0 (:mod:`polars_cumdev.method.signed_zeros`),
a tie of zeros took the sign of its first row, so the drill-down's scores
changed with the input's row order. These tests put -0.0 first in one order
and 0.0 first in the other.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from polars_cumdev.engines.partitioned import screen_partitioned
from polars_cumdev.method import compiled, score_order
from polars_cumdev.subpopulation import curve, screen


def _frame(dtype: pl.DataType = pl.Float64) -> pl.DataFrame:
    """Scores rounded to 0.1 with a run of zeros, alternately -0.0 and 0.0, in group 1."""
    rng = np.random.default_rng(11)
    n = 240
    s = np.round(rng.normal(size=n), 1)
    s[:12] = 0.0
    s[:12:2] = -0.0
    g = rng.integers(0, 3, n)
    g[:12] = 1
    y = (rng.random(n) < 0.5).astype(np.int8)
    y[:12] = 1  # (equal weight and response: only the sign tells the zeros apart)
    w = rng.integers(1, 4, n).astype(np.float64)
    w[:12] = 2.0
    return pl.DataFrame({"g": g, "s": pl.Series(s, dtype=dtype), "y": y, "w": w})


def _orders(frame: pl.DataFrame) -> list[pl.DataFrame]:
    """``frame`` with a -0.0 first, then with a 0.0 first, the rest shuffled alike."""
    rest = np.random.default_rng(5).permutation(np.arange(12, frame.height))
    return [
        frame[np.concatenate([zeros, rest])] for zeros in (np.arange(12), np.arange(1, 13) % 12)
    ]


def _bits(frame: pl.DataFrame) -> list[np.ndarray]:
    return [
        frame[c].to_numpy().view(np.uint64) for c in frame.columns if frame.schema[c] == pl.Float64
    ]


def _same_bits(first: pl.DataFrame, second: pl.DataFrame) -> None:
    assert first.equals(second)
    for a, b in zip(_bits(first), _bits(second), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
@pytest.mark.parametrize("route", ["polars", "kernel small", "kernel radix", "kernel bucket"])
@pytest.mark.parametrize("dtype", [pl.Float64, pl.Float32])
def test_curve_and_screen_bits_do_not_follow_the_sign_of_the_first_zero(monkeypatch, route, dtype):
    engine = "polars" if route == "polars" else "kernel"
    if route in ("kernel radix", "kernel bucket"):
        monkeypatch.setattr(compiled, "KERNEL_ROWS", 0)
    if route == "kernel radix":
        monkeypatch.setattr(score_order, "RADIX_ROWS", 0)
    results = []
    for frame in _orders(_frame(dtype)):
        drill = curve(frame, pl.col("g") == 1, "s", "y", "w", engine=engine)
        table = screen(frame, "g", "s", "y", "w", engine=engine)
        results.append((drill, table))
    for first, second in zip(*results, strict=True):
        _same_bits(first, second)
    scores = results[0][0]["score"].to_numpy()
    zero = scores[scores == 0.0]
    assert zero.size == 1 and not np.signbit(zero[0])


def test_partitioned_screen_bits_do_not_follow_the_sign_of_the_first_zero():
    tables = [screen_partitioned(f, "g", "s", "y", "w", ranges=3) for f in _orders(_frame())]
    _same_bits(*tables)


def test_the_plan_reads_minus_zero_as_zero_in_its_standardized_score():
    from polars_cumdev.method import _names as nm
    from polars_cumdev.method.prepare import prepare

    frame = pl.DataFrame({"s": [-0.0, 0.0, -1.5], "y": [1, 0, 1]})
    standardized = prepare(frame, score="s", response="y").frame.collect()
    assert not np.signbit(standardized[nm.SCORE].to_numpy()[:2]).any()
    assert standardized[nm.SCORE].to_list() == [0.0, 0.0, -1.5]


@pytest.mark.parametrize("dtype", [pl.Float64, pl.Float32])
def test_the_node_finds_minus_zero_in_any_chunk_and_copies_only_then(dtype):
    from polars_cumdev.method.signed_zeros import unsigned_score

    first = pl.DataFrame({"s": pl.Series([1.0, 2.0], dtype=dtype), "k": [1, 2]})
    second = pl.DataFrame({"s": pl.Series([3.0, -0.0], dtype=dtype), "k": [3, 4]})
    batch = pl.concat([first, second], rechunk=False)
    assert batch["s"].n_chunks() == 2
    read = unsigned_score(batch, "s")
    assert read.schema == batch.schema
    assert read["s"].to_list() == [1.0, 2.0, 3.0, 0.0]
    assert not np.signbit(read["s"].to_numpy()).any()
    assert unsigned_score(first, "s") is first  # (nothing to replace: no copy)
    integers = pl.DataFrame({"s": [0, 1]})
    assert unsigned_score(integers, "s") is integers
