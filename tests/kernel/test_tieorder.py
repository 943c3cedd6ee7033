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
from hypothesis import given, settings
from hypothesis import strategies as st

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


# --- The permutation against a naive reference, on data built to hit every path of the sort ---

SPECIAL = [-0.0, 0.0, -1.0, 1.0, 1.0 + 2**-52, 2.5, 5e-324, 1e300, -1e300, np.inf]


def _reference(s, r, w, weighted):
    """``np.lexsort`` by score, weight, response, row; ``None`` when that is the rows' order."""
    row = np.arange(s.shape[0])
    expected = np.lexsort((row, r, w, s) if weighted else (row, r, s))
    return None if np.array_equal(expected, row) else expected


def _check(s, r, w, weighted):
    """Both thread counts give the reference's permutation (empty when the rows are in order)."""
    expected = _reference(s, r, w, weighted)
    for threads in (1, 2):
        order = k.tieorder.tie_order(s, r, w, weighted, threads)
        if expected is None:
            assert order.shape[0] == 0, threads
        else:
            np.testing.assert_array_equal(order, expected, err_msg=f"threads={threads}")


def _values(rng, kind: str, n: int) -> np.ndarray:
    """n weights or responses of one kind, as doubles."""
    if kind == "two":
        return rng.choice([0.0, 1.0], n)
    if kind == "few":
        return rng.choice([-1.0, 0.5, 2.0, 3.0], n)
    if kind == "special":  # signed zeros (equal), subnormals, huge, ulps apart
        return rng.choice(SPECIAL, n)
    if kind == "ulps":  # keys a few units apart: exact buckets
        return 1.0 + rng.integers(0, 40, n) * 2.0**-52
    if kind == "skewed":  # one far value, the rest within a few ulps of 1: one big bucket
        values = 1.0 + rng.integers(0, 1000, n) * 2.0**-52
        if n:
            values[rng.integers(0, n, 2)] = [1e300, -1e-300]
        return values
    if kind == "equal":
        return np.full(n, 2.0)
    return rng.lognormal(0.0, 1.0, n)  # continuous


KINDS = ["two", "few", "special", "ulps", "skewed", "equal", "continuous"]


def _frame(seed, n, distinct, w_kind, r_kind, ordered_share):
    """Rows sorted by score, runs of equal scores in random order or (a share of them) in order."""
    rng = np.random.default_rng(seed)
    s = np.sort(rng.integers(0, distinct, n).astype(np.float64))
    w, r = _values(rng, w_kind, n), _values(rng, r_kind, n)
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])  # ([0] without rows: one empty run)
    for begin, end in zip(starts, [*starts[1:], n], strict=True):
        if rng.random() < ordered_share:  # this run put in order by weight, then response
            inside = np.lexsort((r[begin:end], w[begin:end])) + begin
            w[begin:end], r[begin:end] = w[inside], r[inside]
    return s, r, w


_PERMUTATION_CASES = given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 400),
    distinct=st.sampled_from([1, 2, 5, 30, 1000]),
    w_kind=st.sampled_from(KINDS),
    r_kind=st.sampled_from(KINDS),
    ordered_share=st.sampled_from([0.0, 0.5, 1.0]),
    weighted=st.booleans(),
)


@settings(max_examples=40, deadline=None)
@_PERMUTATION_CASES
def test_tie_order_is_the_reference_permutation(
    seed, n, distinct, w_kind, r_kind, ordered_share, weighted
):
    """Runs of 1 to 400 rows, weights and responses tied or not, some runs already in order
    (a quick sample; the 300 cases of the ``_many`` twin are slow)."""
    _check(*_frame(seed, n, distinct, w_kind, r_kind, ordered_share), weighted)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@_PERMUTATION_CASES
def test_tie_order_is_the_reference_permutation_many(
    seed, n, distinct, w_kind, r_kind, ordered_share, weighted
):
    _check(*_frame(seed, n, distinct, w_kind, r_kind, ordered_share), weighted)


_SMALL_ROWS = given(
    st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(SPECIAL[:7]), st.sampled_from(SPECIAL[:7])),
        max_size=60,
    ),
    st.booleans(),
)


@settings(max_examples=30, deadline=None)
@_SMALL_ROWS
def test_tie_order_on_small_rows(rows, weighted):
    """Any rows (shrinking to a smallest failing case): scores, weights, responses of few values
    (a quick sample; the 200 cases of the ``_many`` twin are slow)."""
    _small_rows_case(rows, weighted)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@_SMALL_ROWS
def test_tie_order_on_small_rows_many(rows, weighted):
    _small_rows_case(rows, weighted)


def _small_rows_case(rows, weighted):
    rows = sorted(rows, key=lambda row: row[0])  # by score alone, stably
    s = np.array([row[0] for row in rows], dtype=np.float64)
    w = np.array([row[1] for row in rows], dtype=np.float64)
    r = np.array([row[2] for row in rows], dtype=np.float64)
    _check(s, r, w, weighted)


@pytest.mark.parametrize("length", [17, 300, 5_000, 40_000])
@pytest.mark.parametrize(
    ("w_kind", "r_kind"),
    [("continuous", "two"), ("two", "two"), ("equal", "continuous"), ("few", "ulps"),
     ("skewed", "special"), ("ulps", "few"), ("special", "skewed")],
)  # fmt: skip
def test_tie_order_of_long_runs(length, w_kind, r_kind):
    """Runs longer than the insertion sort's stretches: the counting passes, key after key."""
    n = 3 * length + 7
    s, r, w = _frame(length, n, 3, w_kind, r_kind, 0.0)
    for weighted in (True, False):
        _check(s, r, w, weighted)


@pytest.mark.parametrize(
    ("r_dtype", "w_dtype"), [(np.int8, np.float64), (np.uint8, np.int64), (np.float32, np.float32)]
)
def test_tie_order_reads_every_numeric_column_as_doubles(r_dtype, w_dtype):
    """Responses and weights of other types are compared as the doubles they convert to."""
    rng = np.random.default_rng(7)
    n = 4_000
    s = np.sort(rng.integers(0, 50, n) / 7)
    r = rng.integers(0, 3, n).astype(r_dtype)
    w = (rng.integers(0, 5, n) * 3).astype(w_dtype)
    for weighted in (True, False):
        _check(s, r, w, weighted)


def test_tie_order_threads_share_runs_whatever_their_place():
    """Ties at one end only, the rest continuous: two threads still give the same permutation."""
    rng = np.random.default_rng(8)
    n = 200_000
    s = np.sort(np.r_[np.round(rng.random(n // 10), 2) - 1.0, rng.random(n - n // 10)])
    r = rng.integers(0, 2, n).astype(np.int8)
    w = rng.lognormal(0.0, 1.0, n)
    _check(s, r, w, True)
    whole = np.zeros(n)  # one run of every row
    _check(whole, r, w, True)
    _check(whole, r, w, False)


@pytest.mark.parametrize("zeros", [[0.0, 0.0], [-0.0, -0.0]])
def test_runs_reordered_without_moving_the_scores(monkeypatch, zeros):
    # Within a run of equal scores the bits are equal (the node reads -0.0 as 0.0
    # first: tests/method/test_signed_zeros.py), so the score column stays put.
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 0)
    s = np.array([-1.0, zeros[0], zeros[1], zeros[0], zeros[1], 2.0])
    w = np.array([1.0, 5.0, 4.0, 3.0, 2.0, 1.0])
    r = np.array([0, 1, 0, 1, 0, 1], dtype=np.int8)
    order = np.arange(6)
    columns = [s.copy(), r.copy(), w.copy()]
    order = compiled._in_ties_order(order, columns, weighted=True)
    assert order.tolist() == [0, 4, 3, 2, 1, 5]  # the run of zeros by weight
    np.testing.assert_array_equal(columns[0].view(np.uint64), s[order].view(np.uint64))
    np.testing.assert_array_equal(columns[1], r[order])
    np.testing.assert_array_equal(columns[2], w[order])
