"""The Hilbert index: hand-checked curves, a naive per-point transcription, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from reference_hilbert import naive_distance

from polars_cumdev import hilbert_index
from polars_cumdev.covariates.hilbert import (
    default_bits,
    grid_coordinates,
    hilbert_distances,
    transposed_distances,
)
from polars_cumdev.errors import (
    ColumnTypeError,
    CumdevError,
    InvalidParameterError,
    InvalidValuesError,
)


def grid(d: int, bits: int) -> np.ndarray:
    return np.array(list(itertools.product(range(1 << bits), repeat=d)), dtype=np.uint64)


# The 2-D curve of order 1 and 2 drawn by hand from Skilling's figure
# conventions: (x, y) visited in this order.
ORDER_1 = [(0, 0), (0, 1), (1, 1), (1, 0)]
ORDER_2 = [
    (0, 0), (1, 0), (1, 1), (0, 1), (0, 2), (0, 3), (1, 3), (1, 2),
    (2, 2), (2, 3), (3, 3), (3, 2), (3, 1), (2, 1), (2, 0), (3, 0),
]  # fmt: skip


@pytest.mark.parametrize(("bits", "visits"), [(1, ORDER_1), (2, ORDER_2)])
def test_hand_drawn_2d_curves(bits: int, visits: list[tuple[int, int]]) -> None:
    pts = np.array(visits, dtype=np.uint64)
    got = hilbert_distances([pts[:, 0], pts[:, 1]], bits)
    assert got.tolist() == list(range(len(visits)))


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("bits", [1, 2, 3])
def test_bijective_and_continuous(d: int, bits: int) -> None:
    pts = grid(d, bits)
    h = hilbert_distances([pts[:, i] for i in range(d)], bits)
    assert sorted(h.tolist()) == list(range(1 << (d * bits)))  # bijective on the grid
    walk = pts[np.argsort(h)].astype(np.int64)
    steps = np.abs(np.diff(walk, axis=0)).sum(axis=1)
    assert (steps == 1).all()  # consecutive indices are grid neighbours


def test_first_corner_is_origin_3d() -> None:
    pts = grid(3, 2)
    h = hilbert_distances([pts[:, i] for i in range(3)], 2)
    assert pts[h == 0].tolist() == [[0, 0, 0]]


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_matches_naive_transcription(d: int) -> None:
    rng = np.random.default_rng(d)
    for bits in sorted({1, 2, 3, 7, min(32, 63 // d)}):
        pts = rng.integers(0, 1 << bits, size=(300, d), dtype=np.uint64)
        want = [naive_distance([int(v) for v in row], bits) for row in pts]
        cols = [pts[:, i] for i in range(d)]
        assert hilbert_distances(cols, bits).tolist() == want
        assert transposed_distances(cols, bits).tolist() == want


def test_matches_hilbertcurve_package() -> None:
    hc = pytest.importorskip("hilbertcurve.hilbertcurve")
    rng = np.random.default_rng(7)
    for d, bits in [(2, 3), (2, 31), (3, 21), (4, 15)]:
        pts = rng.integers(0, 1 << bits, size=(200, d), dtype=np.uint64)
        want = hc.HilbertCurve(bits, d).distances_from_points(pts.tolist())
        assert hilbert_distances([pts[:, i] for i in range(d)], bits).tolist() == want


def test_one_dimension_is_identity() -> None:
    x = np.arange(1 << 6, dtype=np.uint64)
    assert hilbert_distances([x], 6).tolist() == x.tolist()


def test_rank_coordinates() -> None:
    s = pl.Series("a", [5.0, -1.0, 5.0, 2.0, 100.0])
    # dense ranks 2, 0, 2, 1, 3 of m = 4 distinct values; floor(r 2^3 / 4)
    assert grid_coordinates(s, 3, "rank").tolist() == [4, 0, 4, 2, 6]
    # 5 distinct among 7 values, 2 bits: floor(r 4 / 5) for r = 0..4
    s = pl.Series("a", [0, 1, 2, 3, 4, 4, 0])
    assert grid_coordinates(s, 2, "rank").tolist() == [0, 0, 1, 2, 3, 3, 0]


def test_rank_coordinates_wide_bits_exact() -> None:
    # rank * 2^bits does not fit 64 bits: the long division path, checked
    # against Python's exact integers.
    from polars_cumdev.covariates.hilbert import _scaled_ranks

    rng = np.random.default_rng(3)
    distinct = (1 << 40) + 12345
    rank = rng.integers(0, distinct, size=100, dtype=np.uint64)
    got = _scaled_ranks(rank, distinct, 32)
    assert got.tolist() == [(int(r) << 32) // distinct for r in rank]


def test_range_coordinates() -> None:
    s = pl.Series("a", [0.0, 0.5, 1.0, 0.24, 0.25])
    assert grid_coordinates(s, 2, "range").tolist() == [0, 2, 3, 0, 1]
    assert grid_coordinates(pl.Series("c", [3, 3, 3]), 4, "range").tolist() == [0, 0, 0]


def test_default_bits() -> None:
    assert default_bits(2, 10**7, "range") == 31
    assert default_bits(2, 10**7, "rank") == 24  # 2^24 > 1e7
    assert default_bits(4, 10**7, "rank") == 15
    assert default_bits(1, 10**12, "range") == 32
    assert default_bits(3, 1, "rank") == 1


def test_expression_is_lazy_uint64_and_rank_invariant() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=500)
    y = rng.exponential(size=500)
    lf = pl.LazyFrame({"x": x, "y": y})
    expr = hilbert_index("x", "y")
    assert lf.select(expr).collect_schema()["hilbert"] == pl.UInt64
    h = lf.select(expr).collect()["hilbert"]
    # monotone transforms of a covariate leave rank coordinates unchanged
    h2 = pl.DataFrame({"x": np.exp(x), "y": y**3}).select(hilbert_index("x", "y"))["hilbert"]
    assert h.to_list() == h2.to_list()
    # equal to the distances of the rank coordinates computed here
    bits = 9  # 500 distinct values per covariate
    rx = np.argsort(np.argsort(x))
    ry = np.argsort(np.argsort(y))
    coords = [(int(a) << bits) // 500 for a in rx], [(int(b) << bits) // 500 for b in ry]
    want = [naive_distance([a, b], bits) for a, b in zip(*coords, strict=True)]
    assert h.to_list() == want


def test_ties_share_a_cell() -> None:
    df = pl.DataFrame({"a": [1, 2, 1, 2, 3], "b": [0.5, 0.1, 0.5, 0.1, 0.1]})
    h = df.select(hilbert_index("a", "b", normalize="range"))["hilbert"].to_list()
    assert h[0] == h[2] and h[1] == h[3] and len(set(h)) == 3


def test_explicit_bits_and_expressions() -> None:
    df = pl.DataFrame({"a": [0, 1, 2, 3], "b": [3, 2, 1, 0]})
    h = df.select(hilbert_index(pl.col("a"), pl.col("b") * 2, bits=2, normalize="range"))
    want = [naive_distance([a, b], 2) for a, b in [(0, 3), (1, 2), (2, 1), (3, 0)]]
    assert h["hilbert"].to_list() == want


@pytest.mark.parametrize(
    ("values", "error", "text"),
    [
        ([1.0, None, 2.0], InvalidValuesError, "1 null"),
        ([1.0, float("nan"), 2.0], InvalidValuesError, "1 NaN"),
        ([1.0, float("inf"), 2.0], InvalidValuesError, "1 infinite"),
        (["a", "b", "c"], ColumnTypeError, "dtype String"),
    ],
)
def test_bad_values_name_the_column(values: list, error: type, text: str) -> None:
    df = pl.DataFrame({"good": [1.0, 2.0, 3.0], "age": values})
    for normalize in ("rank", "range"):
        with pytest.raises(error, match=rf"covariate column 'age'.*{text}"):
            df.lazy().select(hilbert_index("good", "age", normalize=normalize)).collect()


@pytest.mark.parametrize(
    "kwargs",
    [{"bits": 32, "columns": ("a", "b")}, {"bits": 0}, {"bits": 1.5}, {"normalize": "z"}],
)
def test_bad_parameters(kwargs: dict) -> None:
    columns = kwargs.pop("columns", ("a", "b"))
    with pytest.raises(InvalidParameterError):
        hilbert_index(*columns, **kwargs)
    assert issubclass(InvalidParameterError, CumdevError)


def test_no_columns_and_empty_frame() -> None:
    with pytest.raises(InvalidParameterError, match="at least one"):
        hilbert_index()
    empty = pl.DataFrame(schema={"a": pl.Float64, "b": pl.Float64})
    assert empty.select(hilbert_index("a", "b")).height == 0


def test_range_expression_matches_numpy_coordinates() -> None:
    rng = np.random.default_rng(11)
    df = pl.DataFrame({"a": rng.normal(size=400), "b": rng.integers(0, 7, size=400)})
    for bits in (None, 3, 31):
        got = df.select(hilbert_index("a", "b", bits=bits, normalize="range"))["hilbert"]
        chosen = bits or default_bits(2, 0, "range")
        grid = [grid_coordinates(df[c], chosen, "range") for c in ("a", "b")]
        want = [naive_distance([int(x), int(y)], chosen) for x, y in zip(*grid, strict=True)]
        assert got.to_list() == want
