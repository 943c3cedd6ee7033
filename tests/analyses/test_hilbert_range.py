"""Issue 25, item 4: min-max ("range") Hilbert coordinates for subnormal and overflowing ranges.

The coordinate of x is floor((x - min) / (max - min) 2^bits), the maximum
clipped to 2^bits - 1, computed in double precision; held here to exact
rational arithmetic (fractions): equal wherever the exact quotient is not
within rounding of a cell boundary (always, in the issue's examples), and
never more than one cell off.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from polars_cumdev import hilbert_index
from polars_cumdev.covariates.hilbert import grid_coordinates, hilbert_distances

TINY = 5e-324
HUGE = 1.7976931348623157e308


def exact_quotients(values: list[float], bits: int) -> list[Fraction]:
    xs = [Fraction(v) for v in values]
    low, high = min(xs), max(xs)
    if high == low:
        return [Fraction(0)] * len(xs)
    return [(x - low) / (high - low) * 2**bits for x in xs]


def exact(values: list[float], bits: int) -> list[int]:
    return [min(int(q), 2**bits - 1) for q in exact_quotients(values, bits)]


def assert_matches(got: list[int], values: list[float], bits: int) -> None:
    for g, q, e in zip(got, exact_quotients(values, bits), exact(values, bits), strict=True):
        near_boundary = abs(q - round(q)) < Fraction(1, 10**6) and 0 < round(q) < 2**bits
        assert g == e or (near_boundary and abs(g - e) <= 1), (g, e, float(q))


CASES = {
    "subnormals": [0.0, TINY, 2 * TINY, 3 * TINY],
    "subnormal steps": [-3 * TINY, TINY, 0.0, 7 * TINY, 2.2250738585072014e-308],
    "overflowing range": [-1e308, 0.0, 1e308, 5.0],
    "two subnormal columns": [5e-324, 0.0, 1e-323],
    "extremes": [-HUGE, HUGE, 0.0, 1.0, -1.0],
    "one huge": [0.0, 1.0, 2.0, HUGE],
    "ordinary": [0.1, 0.7, 0.35, 0.2, 0.9],
    "halves": [0.0, 1.0, 0.5, 0.25, 0.75],
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("bits", [1, 7, 16, 32])
def test_range_coordinates_are_exact(case, bits):
    values = CASES[case]
    got = grid_coordinates(pl.Series(values, dtype=pl.Float64), bits, "range")
    assert_matches(got.tolist(), values, bits)


@pytest.mark.parametrize(
    "values", [[0.0, 5e-324, 1e-323, 1.5e-323], [-1e308, 0.0, 1e308, 5.0]], ids=["sub", "over"]
)
def test_the_issues_examples_exactly(values):
    got = grid_coordinates(pl.Series(values), 32, "range").tolist()
    assert got == exact(values, 32)


@pytest.mark.parametrize("case", list(CASES))
def test_range_index_uses_the_exact_coordinates(case):
    values = CASES[case]
    other = list(reversed(values))
    df = pl.DataFrame({"a": values, "b": other})
    got = df.select(hilbert_index("a", "b", bits=31, normalize="range")).to_series().to_list()
    grid = [grid_coordinates(pl.Series(v), 31, "range") for v in (values, other)]
    for coordinates, column in zip(grid, (values, other), strict=True):
        assert_matches(coordinates.tolist(), column, 31)
    assert got == hilbert_distances(grid, 31).tolist()
    # Where the values are far apart relative to the range, distinct points keep distinct
    # cells (elsewhere close values share a cell, rightly).
    if case in ("subnormals", "two subnormal columns", "ordinary", "halves"):
        assert len(set(got)) == len(set(zip(values, other, strict=True)))


def test_random_values_agree_with_exact_arithmetic():
    rng = np.random.default_rng(5)
    for scale in (1e-320, 1e-300, 1.0, 1e300):
        values = (rng.standard_normal(200) * scale).tolist()
        got = grid_coordinates(pl.Series(values), 32, "range").tolist()
        assert_matches(got, values, 32)
