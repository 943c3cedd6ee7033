"""The compiled rank coordinates and curve machine against Polars, NumPy and the NumPy path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_cumdev
from polars_cumdev import hilbert_index
from polars_cumdev.covariates import ranking
from polars_cumdev.covariates.tables import distances
from polars_cumdev.errors import InvalidValuesError
from polars_cumdev.method import score_order

pytest.importorskip("numba")

TINY = 5e-324  # the smallest subnormal
HUGE = np.finfo(np.float64).max


def polars_ranks(series: pl.Series) -> np.ndarray:
    return series.rank("dense").to_numpy().astype(np.uint64) - np.uint64(1)


def numpy_ranks(values: np.ndarray) -> np.ndarray:
    return np.unique(values, return_inverse=True)[1].astype(np.uint64).ravel()


def float_columns(rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = 20_000
    awkward = np.array([0.0, -0.0, TINY, -TINY, 2.2e-308, -2.2e-308, HUGE, -HUGE, 1.0, -1.0])
    return {
        "normal": rng.normal(size=n),  # > 4096 distinct: the radix sort
        "rounded": np.round(rng.normal(size=n), 1),  # few distinct: the hash table
        "awkward small": rng.choice(awkward, size=n),
        "awkward many": np.concatenate([rng.choice(awkward, size=n), rng.normal(size=n) * 1e300]),
        "one value": np.full(n, 3.5),
        "near one": 1.0 + rng.integers(0, 10_000, size=n) * 2.0**-52,  # differ in low bytes
        "ties below radix bytes": 1.0 + rng.integers(0, 1 << 20, size=n) * 2.0**-40,
        "signed zeros": rng.choice([0.0, -0.0], size=n),
        "spread": rng.choice([-1.0, 1.0], size=n) * 10.0 ** rng.uniform(-300, 300, size=n),
    }


@pytest.mark.parametrize("name", list(float_columns(np.random.default_rng(0))))
@pytest.mark.parametrize("dtype", [pl.Float64, pl.Float32])
def test_dense_ranks_of_floats_equal_polars_and_numpy(name, dtype):
    values = float_columns(np.random.default_rng(1))[name]
    if dtype == pl.Float32:  # keep the values finite in single precision
        top = float(np.finfo(np.float32).max)
        values = np.clip(values, -top, top)
    series = pl.Series("v", values).cast(dtype)
    got = ranking.dense_ranks(series)
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, polars_ranks(series))
    np.testing.assert_array_equal(got, numpy_ranks(series.to_numpy()))


def test_minus_zero_and_zero_share_a_rank_as_in_polars():
    series = pl.Series("v", [0.0, -0.0, 1.0, -1.0] * 2000)
    assert ranking.dense_ranks(series)[:4].tolist() == [1, 1, 2, 0]
    assert polars_ranks(series)[:4].tolist() == [1, 1, 2, 0]


INTEGER_TYPES = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64]


@pytest.mark.parametrize("dtype", INTEGER_TYPES)
@pytest.mark.parametrize("spread", ["few", "many"])
def test_dense_ranks_of_integers_equal_polars(dtype, spread):
    rng = np.random.default_rng(2)
    info = np.iinfo(str(dtype).lower())
    low, high = int(info.min), int(info.max)
    if spread == "few":
        values = rng.choice(np.array([low, high, 0, 1, high // 2], dtype=object), size=20_000)
    else:
        dtype_np = np.dtype(str(dtype).lower())
        values = [
            int(v) for v in rng.integers(low, high, size=20_000, endpoint=True, dtype=dtype_np)
        ]
        values[:4] = [low, high, low, high]
    series = pl.Series("v", list(values), dtype=dtype)
    np.testing.assert_array_equal(ranking.dense_ranks(series), polars_ranks(series))


@pytest.mark.parametrize("dtype", [pl.Int128, pl.UInt128, pl.Decimal(20, 3), pl.Boolean])
def test_other_numeric_types_fall_back_on_polars_ranks(dtype):
    values = np.random.default_rng(6).integers(0, 100, size=10_000)
    series = pl.Series("v", values).cast(dtype)
    np.testing.assert_array_equal(ranking.dense_ranks(series), polars_ranks(series))


def test_radix_sort_is_a_sort_for_every_number_of_radix_bytes():
    kernel = polars_cumdev.method.compiled.kernel().ranks
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(size=5000), 1.0 + rng.integers(0, 50, size=5000) * 1e-12])
    raw = values.view(np.uint64)
    varying, bad = kernel.survey(raw, kernel.FLOAT)
    assert bad == 0
    keys = np.array([kernel.key(b, kernel.FLOAT) for b in raw], dtype=np.uint64)
    for radix_bytes in range(1, 9):
        sorted_keys, rows = kernel.radix_order(raw, kernel.FLOAT, np.uint64(varying), radix_bytes)
        np.testing.assert_array_equal(sorted_keys, np.sort(keys))
        np.testing.assert_array_equal(keys[rows], sorted_keys)
        assert sorted(rows.tolist()) == list(range(keys.size))


@pytest.mark.parametrize("slices", [2, 3, 5])
def test_the_sort_in_slices_equals_the_single_thread_sort(slices):
    kernel = polars_cumdev.method.compiled.kernel().ranks
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.normal(size=9999), np.round(rng.normal(size=5000), 2)])
    values[:3] = [-0.0, 0.0, -0.0]
    raw = values.view(np.uint64)
    varying, _ = kernel.survey(raw, kernel.FLOAT)
    want_keys, want_rows = kernel.radix_order(raw, kernel.FLOAT, np.uint64(varying), 5)
    got_keys, got_rows = score_order.sorted_in_slices(raw, kernel.FLOAT, np.uint64(varying), slices)
    np.testing.assert_array_equal(got_keys, want_keys)
    np.testing.assert_array_equal(got_rows, want_rows)  # stable: the same rows in ties too


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, -0.0, 1.5]),
        min_size=1,
        max_size=300,
    ),
    repeat=st.integers(1, 30),
)
@pytest.mark.slow
def test_dense_ranks_property(values, repeat):
    # Repeating the values puts ties in every column; 30 repeats of 300 values
    # can pass the hash table's limit and reach the radix sort.
    series = pl.Series("v", values * repeat, dtype=pl.Float64)
    np.testing.assert_array_equal(ranking.dense_ranks(series), polars_ranks(series))


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6000))
def test_dense_ranks_of_int64_property(values):
    series = pl.Series("v", values, dtype=pl.Int64)
    np.testing.assert_array_equal(ranking.dense_ranks(series), polars_ranks(series))


@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("rows", [1, 3, 4, 1001])
def test_compiled_machine_equals_the_numpy_machine(d, rows):
    rng = np.random.default_rng(4 + d)
    for bits in sorted({1, 2, 3, 5, 7, min(63 // d, 32)}):
        grid = rng.integers(0, 2**bits, size=(d, rows), dtype=np.uint64).astype(np.uint32)
        got = ranking.compiled_distances(grid, bits)
        np.testing.assert_array_equal(got, distances(list(grid), bits))


def frame(rows: int, seed: int = 5) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "x": rng.normal(size=rows),
            "y": np.round(rng.exponential(size=rows), 2),
            "age": rng.integers(18, 96, size=rows),
            "u": rng.uniform(size=rows).astype(np.float32),
            "flag": rng.uniform(size=rows) < 0.5,
            "z": np.where(rng.uniform(size=rows) < 0.5, -0.0, 0.0),
        }
    )


@pytest.mark.parametrize(
    "columns",
    [
        ("x",),
        ("x", "y"),
        ("age", "flag"),
        ("x", "y", "age"),
        ("x", "y", "age", "u"),
        ("x", "y", "age", "u", "z"),
    ],
)
@pytest.mark.parametrize("bits", [None, 1, 5, 12])
@pytest.mark.parametrize("normalize", ["rank", "range"])
def test_the_compiled_index_equals_the_numpy_index(monkeypatch, columns, bits, normalize):
    if bits is not None and bits * len(columns) > 63:
        pytest.skip("too many bits")
    df = frame(30_001)
    index = hilbert_index(*columns, bits=bits, normalize=normalize)
    monkeypatch.setattr(ranking, "COMPILED_ROWS", 10**12)
    numpy_path = df.select(index).to_series()
    monkeypatch.setattr(ranking, "COMPILED_ROWS", 1)
    compiled_path = df.select(index).to_series()
    assert compiled_path.dtype == pl.UInt64
    assert compiled_path.to_list() == numpy_path.to_list()


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0.0, -0.0, 2.5]),
            st.integers(-3, 3),
            st.floats(allow_nan=False, allow_infinity=False),
        ),
        min_size=1,
        max_size=400,
    ),
    d=st.integers(1, 3),
    bits=st.none() | st.integers(1, 21),
)
@pytest.mark.slow
def test_the_compiled_index_equals_the_numpy_index_property(data, d, bits):
    df = pl.DataFrame(data, schema=["a", "b", "c"], orient="row")
    index = hilbert_index(*["a", "b", "c"][:d], bits=bits)
    saved = ranking.COMPILED_ROWS
    try:
        ranking.COMPILED_ROWS = 10**12
        numpy_path = df.select(index).to_series().to_list()
        ranking.COMPILED_ROWS = 1
        compiled_path = df.select(index).to_series().to_list()
    finally:
        ranking.COMPILED_ROWS = saved
    assert compiled_path == numpy_path


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_the_compiled_path_names_a_column_with_non_finite_values(monkeypatch, bad):
    monkeypatch.setattr(ranking, "COMPILED_ROWS", 1)
    df = frame(1000).with_columns(
        pl.when(pl.int_range(pl.len()) == 7).then(bad).otherwise(pl.col("y")).alias("y")
    )
    with pytest.raises(InvalidValuesError, match="'y'"):
        df.select(hilbert_index("x", "y"))


@pytest.mark.slow
def test_small_frames_do_not_import_numba():
    root = Path(polars_cumdev.__file__).resolve().parent.parent
    code = (
        "import json, sys, polars as pl\n"
        "from polars_cumdev import hilbert_index\n"
        "df = pl.DataFrame({'a': [3.0, 1.0, 2.0] * 100, 'b': [1, 2, 2] * 100})\n"
        "df.select(hilbert_index('a', 'b')); df.select(hilbert_index('a', normalize='range'))\n"
        "print(json.dumps('numba' in sys.modules))\n"
    )
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) is False
