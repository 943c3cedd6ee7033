"""The node's compiled gather against NumPy's ``take``, on one thread and two."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_cumdev.calibration import calibration
from polars_cumdev.kernel import gather
from polars_cumdev.method import compiled
from polars_cumdev.subpopulation import screen

DTYPES = (np.float64, np.float32, np.int8, np.int64, np.uint8, np.uint32, np.int32)


def _columns(rng: np.random.Generator, n: int, dtypes: list) -> list[np.ndarray]:
    return [(rng.normal(size=n) * 100).astype(dtype) for dtype in dtypes]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("count", [1, 3, 4, 5, 9])
def test_gather_rows_is_take(monkeypatch, threads, count):
    monkeypatch.setattr(gather, "TWO_THREADS", 0)  # the second thread from any size
    rng = np.random.default_rng(count)
    n = 1001
    columns = _columns(rng, n, [DTYPES[j % len(DTYPES)] for j in range(count)])
    columns[min(1, count - 1)] = np.empty(0)  # an absent column stays absent
    index = rng.permutation(n).astype(np.uint32)
    moved = gather.gather_rows(index, columns, threads=threads)
    assert len(moved) == count
    for before, after in zip(columns, moved, strict=True):
        assert after.dtype == before.dtype
        if before.size == 0:
            assert after.size == 0
        else:
            assert np.array_equal(after, np.take(before, index))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 300),
    seed=st.integers(0, 2**32 - 1),
    index_type=st.sampled_from([np.uint32, np.int64]),
    repeats=st.booleans(),
)
def test_gather_rows_on_any_index(n, seed, index_type, repeats):
    rng = np.random.default_rng(seed)
    columns = _columns(rng, n, [np.float64, np.int8, np.float32, np.uint32])
    index = rng.integers(0, n, n) if repeats and n else rng.permutation(n)
    index = index.astype(index_type)
    for threads in (1, 2):
        moved = gather.gather_rows(index, columns, threads=threads)
        for before, after in zip(columns, moved, strict=True):
            assert np.array_equal(after, before[index])


@pytest.mark.slow
def test_two_threads_fill_both_halves():
    n = gather.TWO_THREADS + 3
    rng = np.random.default_rng(5)
    columns = _columns(rng, n, [np.float64, np.int32])
    index = rng.permutation(n).astype(np.uint32)
    one = gather.gather_rows(index, columns, threads=1)
    two = gather.gather_rows(index, columns, threads=2)
    for a, b, c in zip(one, two, columns, strict=True):
        assert np.array_equal(a, b)
        assert np.array_equal(a, c[index])


def test_node_gives_the_same_tables_on_a_batch_in_many_chunks(monkeypatch):
    """A batch in many chunks (as the streaming engine hands it over) reads the same rows."""
    rng = np.random.default_rng(3)
    n = 5_000
    s = np.round(rng.random(n), 2)
    frame = pl.DataFrame(
        {
            "g": rng.integers(0, 7, n),
            "s": s,
            "y": (rng.random(n) < s).astype(np.int8),
            "w": rng.integers(1, 5, n).astype(np.float32),
        }
    )
    pieces = pl.concat([frame.slice(k, 500) for k in range(0, n, 500)], rechunk=False)
    assert pieces.n_chunks() > 1

    def tables(data: pl.DataFrame) -> list[pl.DataFrame]:
        return [
            screen(data, "g", "s", "y", "w", engine="kernel"),
            calibration(data, "s", "y", "w", by="g", engine="kernel"),
        ]

    expected = tables(frame)
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 0)  # the compiled gather at any size
    for data in (frame, pieces):
        for got, want in zip(tables(data), expected, strict=True):
            assert got.equals(want)
