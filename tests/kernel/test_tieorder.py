"""Ties put in canonical order after a sort by score alone (:mod:`polars_cumdev.kernel.tieorder`).

The compiled node sorts by score only and orders each run of equal scores by
weight, then response; the result must be the order of a sort by the three
keys (NumPy's ``lexsort`` here), so that a screen of shuffled rows adds the
same values in the same order.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

pytest.importorskip("numba")

from polars_cumdev import kernel as k
from polars_cumdev.method import compiled


def _rows(rows: int, distinct: int, seed: int):
    rng = np.random.default_rng(seed)
    s = np.sort(rng.integers(0, distinct, rows) / distinct)
    r = rng.integers(0, 3, rows).astype(np.int8)
    w = rng.integers(1, 4, rows).astype(np.float64)  # repeated weights: responses decide
    return s, r, w


@pytest.mark.parametrize("distinct", [1, 5, 300, 10**9])
@pytest.mark.parametrize("weighted", [True, False])
def test_tie_order_sorts_each_run_by_weight_then_response(distinct, weighted):
    s, r, w = _rows(2_000, distinct, seed=distinct)
    order = k.tieorder.tie_order(s, r, w, weighted)
    if order.shape[0] == 0:  # claimed sorted: check it
        order = np.arange(s.shape[0])
    keys = (r, w, s) if weighted else (r, s)
    expected = np.lexsort(keys)
    for column in (s, r, *([w] if weighted else [])):
        np.testing.assert_array_equal(column[order], column[expected])
    assert np.array_equal(np.sort(order), np.arange(s.shape[0]))  # a permutation


@pytest.mark.parametrize("distinct", [1, 7, 40, 300])
@pytest.mark.parametrize("weights", ["repeated", "continuous", "none"])
@pytest.mark.parametrize("threads", [1, 2])
def test_tie_order_is_the_stable_order_by_weight_then_response(distinct, weights, threads):
    """The very permutation of a stable sort by score, weight, response (runs of 1 to 2,000).

    On two threads (the runs of each half of the rows ordered by one) as on one.
    """
    s, r, w = _rows(2_000, distinct, seed=distinct + 1)
    if weights == "continuous":
        w = np.random.default_rng(distinct).lognormal(0.0, 1.0, s.shape[0])
    weighted = weights != "none"
    order = k.tieorder.tie_order(s, r, w, weighted, threads)
    index = np.arange(s.shape[0])
    expected = np.lexsort((index, r, w, s) if weighted else (index, r, s))
    np.testing.assert_array_equal(order if order.shape[0] else index, expected)


def test_tie_order_leaves_ordered_rows_alone():
    s = np.array([0.1, 0.1, 0.2, 0.3, 0.3, 0.3])
    w = np.array([1.0, 2.0, 5.0, 1.0, 1.0, 3.0])
    r = np.array([1, 0, 0, 0, 1, 0], dtype=np.int8)
    assert k.tieorder.tie_order(s, r, w, True).shape[0] == 0
    swapped = k.tieorder.tie_order(s, r[[1, 0, 2, 3, 4, 5]], w[[1, 0, 2, 3, 4, 5]], True)
    assert swapped.tolist() == [1, 0, 2, 3, 4, 5]


@pytest.mark.parametrize("threshold", [0, 10**9])  # compiled pass, or Polars' sort of three keys
def test_canonical_rows_do_not_depend_on_the_input_order(monkeypatch, threshold):
    monkeypatch.setattr(compiled, "KERNEL_ROWS", threshold)
    s, r, w = _rows(3_000, 40, seed=3)
    rng = np.random.default_rng(4)
    frame = pl.DataFrame({"g": rng.integers(0, 5, s.shape[0]), "s": s, "r": r, "w": w})
    prepared = type("P", (), {"names": ("s", "r", "w")})()
    results = []
    for seed in range(3):
        shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
        order = compiled._canonical_order(shuffled, prepared)
        columns = [shuffled.get_column(c).to_numpy()[order] for c in ("s", "r", "w")]
        order = compiled._in_ties_order(order, columns, weighted=True)
        result = shuffled[pl.Series(order)]
        for name, values in zip(("s", "r", "w"), columns, strict=True):
            np.testing.assert_array_equal(values, result.get_column(name).to_numpy())
        results.append(result.drop("g"))
    expected = frame.sort(["s", "w", "r"]).drop("g")
    for result in results:
        assert result.equals(expected)


def test_kernel_screen_of_shuffled_rows_gives_the_same_bits(monkeypatch):
    # The compiled tie order (as from 1e6 rows) on tie-heavy data with uneven weights.
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 0)
    rng = np.random.default_rng(11)
    n = 20_000
    frame = pl.DataFrame(
        {
            "g": rng.integers(0, 4, n),
            "s": np.round(rng.random(n), 2),
            "r": rng.random(n).round(1),
            "w": rng.lognormal(0.0, 1.0, n),
        }
    )
    results = []
    for seed in range(3):
        shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed).lazy()
        out = shuffled.cumdev.screen("g", "s", "r", "w", engine="kernel").collect().sort("g")
        results.append(repr(out.rows()))
    assert results[0] == results[1] == results[2]
