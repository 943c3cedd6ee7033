"""The search for the end of a tie's bin, against NumPy's ``searchsorted``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_cumdev.kernel import boundaries


def _expected(s: np.ndarray, value: float, low: int, high: int) -> int:
    return low + int(np.searchsorted(s[low : high + 1], value, side="right")) - 1


def _scores(kind: int, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == 0:  # continuous
        return np.sort(rng.random(n))
    if kind == 1:  # ties
        return np.sort(np.round(rng.random(n), 2))
    if kind == 2:  # signs and scales far apart
        return np.sort(rng.normal(size=n) * np.exp(rng.normal(size=n) * 30))
    if kind == 3:  # differences that overflow
        return np.sort(np.concatenate([[-1.7e308, 1.7e308], rng.random(n)]))
    return np.sort(np.exp(rng.random(n) * 50))  # far from evenly spread


@settings(max_examples=100, deadline=None)
@given(
    kind=st.integers(0, 4),
    n=st.integers(1, 300),
    seed=st.integers(0, 2**32 - 1),
    count=st.integers(1, boundaries.SIDE_BY_SIDE),
)
def test_searches_side_by_side_are_searchsorted(kind, n, seed, count):
    """Up to SIDE_BY_SIDE searches of different lengths at once, each as searchsorted finds it."""
    rng = np.random.default_rng(seed)
    s = _scores(kind, n, rng)
    lows = rng.integers(0, s.shape[0], count)
    highs = np.array([int(rng.integers(low, s.shape[0])) for low in lows])
    values = np.empty(count)
    for x, (low, high) in enumerate(zip(lows, highs, strict=True)):
        where = rng.random()
        with np.errstate(over="ignore", invalid="ignore"):
            inside = s[low] + (s[high] - s[low]) * where
        candidates = [s[low], s[high], inside, np.nextafter(s[high], -np.inf)]
        # (the search assumes s[low] <= value)
        values[x] = rng.choice([v for v in candidates if s[low] <= v])
    bases = lows.astype(np.int64)
    lengths = (highs - lows + 1).astype(np.int64)
    boundaries._last_rows_at_most(s, values, bases, lengths, count)
    for x in range(count):
        assert bases[x] == _expected(s, float(values[x]), int(lows[x]), int(highs[x]))
