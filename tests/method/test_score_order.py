"""The node's radix order by score, and the scores it decodes from the sorted keys."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_cumdev import kernel as k
from polars_cumdev.method import compiled, score_order
from polars_cumdev.subpopulation import curve, screen

SPECIAL = [0.0, -1.0, 1.0, 1.0 + 2**-52, 5e-324, -5e-324, 2.2e-308, 1e300, -1e300, 0.5]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=200))
def test_float_values_undo_the_keys(values):
    x = np.array(values + SPECIAL, dtype=np.float64)
    keys = np.array([k.ranks.key(v, k.ranks.FLOAT) for v in x.view(np.uint64)], dtype=np.uint64)
    back = k.ranks.float_values(keys.copy())
    expected = np.where(x == 0.0, 0.0, x)  # -0.0 shares 0.0's key
    assert np.array_equal(back.view(np.uint64), expected.view(np.uint64))


@pytest.mark.parametrize("slices", [1, 2])
@pytest.mark.parametrize("kind", ["continuous", "ties", "negative"])
def test_score_order_gives_the_scores_in_order(monkeypatch, slices, kind):
    monkeypatch.setattr(score_order, "RADIX_ROWS", 0)
    monkeypatch.setattr(score_order, "SLICED_ROWS", 0 if slices == 2 else 10**9)
    monkeypatch.setattr(score_order.os, "cpu_count", lambda: 2)
    rng = np.random.default_rng(len(kind) + slices)
    n = 5_000
    s = {
        "continuous": rng.normal(size=n),
        "ties": np.round(rng.random(n), 2),
        "negative": -np.exp(rng.normal(size=n) * 30),
    }[kind]
    order, scores = score_order.score_order(pl.Series(s))
    assert scores is not None
    assert np.array_equal(scores.view(np.uint64), s[order].view(np.uint64))
    assert np.all(np.diff(scores) >= 0)


def test_negative_zero_leaves_the_scores_to_the_gather(monkeypatch):
    monkeypatch.setattr(score_order, "RADIX_ROWS", 0)
    s = np.array([0.5, -0.0, 0.25, 0.0, -1.0])
    order, scores = score_order.score_order(pl.Series(s))
    assert scores is None
    assert s[order].tolist() == sorted(s.tolist())


@pytest.mark.parametrize("zeros", [[0.0, 0.0], [-0.0, -0.0], [-0.0, 0.0]])
def test_screen_through_the_radix_sort_keeps_the_sign_of_zero(monkeypatch, zeros):
    rng = np.random.default_rng(8)
    n = 400
    s = np.round(rng.normal(size=n), 1)
    s[s == 0.0] = np.resize(np.array(zeros), int((s == 0.0).sum()))
    frame = pl.DataFrame(
        {
            "g": rng.integers(0, 3, n),
            "s": s,
            "y": (rng.random(n) < 0.5).astype(np.int8),
            "w": rng.integers(1, 4, n).astype(np.float64),
        }
    )
    queries = [
        screen(frame.lazy(), "g", "s", "y", "w", engine="kernel"),
        curve(frame.lazy(), pl.col("g") == 1, "s", "y", "w", engine="kernel"),
    ]
    expected = [query.collect() for query in queries]
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 0)
    monkeypatch.setattr(score_order, "RADIX_ROWS", 0)
    for query, want in zip(queries, expected, strict=True):
        got = query.collect()
        assert got.equals(want)
        # The bits too (equals takes -0.0 for 0.0), where they are set: a run of zeros
        # mixing -0.0 and 0.0 on rows of equal weight and response may take either
        # as its merged score, as before the scores came from the sort's keys.
        for name in got.columns if len(set(np.signbit(zeros))) == 1 else []:
            if got.schema[name] == pl.Float64:
                bits = [c.to_numpy().view(np.uint64) for c in (got[name], want[name])]
                assert np.array_equal(*bits)
