"""The node's sort that moves the columns with the scores, against NumPy's ``lexsort``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_cumdev import kernel as k
from polars_cumdev.kernel import bucketsort

SPECIAL = [0.0, -1.0, 1.0, 1.0 + 2**-52, 5e-324, -5e-324, 2.2e-308, 1e300, -1e300, 0.5]


def _expected(s: np.ndarray, r: np.ndarray, w: np.ndarray, ids: np.ndarray) -> tuple:
    """A stable sort by score, weight (if any), then response."""
    keys = (r, w, s) if w.size else (r, s)
    order = np.lexsort(keys)
    scores = np.where(s[order] == 0.0, 0.0, s[order])  # -0.0 comes back as 0.0
    return order, scores, [x[order] if x.size else x for x in (r, w, ids)]


def _check(s: np.ndarray, r: np.ndarray, w: np.ndarray, ids: np.ndarray, threads: int) -> None:
    scores, order, moved = bucketsort.bucket_sort(s, r, w, ids, w.size > 0, threads=threads)
    want_order, want_scores, want_moved = _expected(s, r, w, ids)
    assert order.dtype == np.uint32
    np.testing.assert_array_equal(order, want_order)
    assert np.array_equal(scores.view(np.uint64), want_scores.view(np.uint64))
    assert len(moved) == 3
    for got, want in zip(moved, want_moved, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def _check_float_values(values: list[float]) -> None:
    x = np.array(values + SPECIAL + [-0.0], dtype=np.float64)
    raw, sign = x.view(np.uint64), np.uint64(1 << 63)
    keys = np.where(raw & sign, ~raw, raw | sign)  # (ranks.key, written in NumPy)
    keys[raw == sign] = sign  # -0.0 shares 0.0's key
    assert keys[0] == k.ranks.key(raw[0], k.ranks.FLOAT)
    back = k.ranks.float_values(keys.copy())
    expected = np.where(x == 0.0, 0.0, x)  # -0.0 comes back as 0.0
    assert np.array_equal(back.view(np.uint64), expected.view(np.uint64))


def test_float_values_undo_the_keys_of_special_values():
    _check_float_values([])


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=200))
def test_float_values_undo_the_keys(values):
    _check_float_values(values)


def _scores(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    return {
        "continuous": rng.random(n),
        "logistic": 1.0 / (1.0 + np.exp(-rng.normal(size=n))),
        "3-decimal": np.round(rng.random(n), 3),
        "three values": rng.integers(0, 3, n) * 0.5,
        "signs and scales": rng.normal(size=n) * np.exp(rng.normal(size=n) * 20),
        "subnormal": rng.integers(-50, 50, n) * 5e-324,
        "one value": np.full(n, 0.25),
        "ulps apart": 1.0 + rng.integers(0, 1 << 20, n) * 2.0**-52,
    }[kind]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "kind",
    [
        "continuous",
        "logistic",
        "3-decimal",
        "three values",
        "signs and scales",
        "subnormal",
        "one value",
        "ulps apart",
    ],
)
@pytest.mark.parametrize("n", [0, 2, 49, 3_000, pytest.param(60_000, marks=pytest.mark.slow)])
def test_bucket_sort_is_a_stable_sort(monkeypatch, threads, kind, n):
    monkeypatch.setattr(bucketsort, "TWO_THREADS", 0)  # the second thread from any size
    rng = np.random.default_rng(n + len(kind))
    s = _scores(kind, n, rng)
    r = rng.integers(0, 2, n).astype(np.int8)
    w = rng.integers(1, 4, n).astype(np.float32)  # (weights tie too: runs by weight, response)
    g = rng.integers(0, 1000, n).astype(np.int64)
    _check(s, r, w, g, threads)
    _check(s, r.astype(np.float64) * 0.5, np.empty(0), g, threads)  # no weights
    _check(s, r, w, np.empty(0, dtype=np.int32), threads)  # no group numbers


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: v != 0.0) | st.just(0.0),
        max_size=300,
    ),
    threads=st.sampled_from([1, 2]),
)
def test_bucket_sort_of_any_doubles(values, threads):
    s = np.array(values, dtype=np.float64)
    n = s.shape[0]
    rng = np.random.default_rng(n)
    r, w = rng.normal(size=n), rng.integers(1, 3, n).astype(np.float64)
    index = np.arange(n, dtype=np.int32)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bucketsort, "TWO_THREADS", 0)  # the second thread from any size
        _check(s, r, w, index, threads)


@pytest.mark.slow
def test_two_threads_on_their_own_size():
    rng = np.random.default_rng(2)
    n = bucketsort.TWO_THREADS + 5
    s = np.round(rng.normal(size=n), 4)  # (-0.0 among them)
    r = (rng.random(n) < 0.5).astype(np.float64)
    w = rng.integers(1, 5, n).astype(np.float64)
    ids = rng.integers(0, 300, n).astype(np.int32)
    one = bucketsort.bucket_sort(s, r, w, ids, True, threads=1)
    two = bucketsort.bucket_sort(s, r, w, ids, True, threads=2)
    np.testing.assert_array_equal(one[1], two[1])
    np.testing.assert_array_equal(one[2][2], two[2][2])
    _check(s, r, w, ids, 2)
