"""The screen's null probabilities: the population's bin means, in any row order, on any road.

:func:`polars_cumdev.method.finite_bins.bin_means` sums the population's
weights and weighted responses in canonical order (by score, then weight, then
response), by NumPy, or by the kernel's bucket sort from ``KERNEL_ROWS`` rows
when the kernel is loaded (both roads are taken here, the kernel's counted).
Checked on tie-heavy scores with repeated weights (so that a sum over a tie
adds different values): each road against a naive transcription of method.md
1.2-1.3 (every bin's sums over a mask, 1e-12), both roads against each other
and against the rows shuffled, bit for bit. A sort that kept ties in the rows'
order (NumPy's stable sort of the scores alone) fails the shuffle.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled
from polars_cumdev.method.finite_bins import bin_means


def _population(seed: int, rows: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = np.round(rng.uniform(size=rows), 2)
    r = (rng.uniform(size=rows) < s).astype(np.float64)
    w = np.round(rng.lognormal(0.0, 1.0, size=rows), 1) + 0.05  # repeated, and uneven
    return pl.DataFrame({nm.SCORE: s, nm.RESPONSE: r, nm.WEIGHT: w})


def _groups(full: pl.DataFrame, seed: int) -> tuple[np.ndarray, ...]:
    """Three groups' scores (sorted by group, then score), group numbers and starts."""
    rng = np.random.default_rng(seed + 1)
    parts = [np.sort(rng.choice(full[nm.SCORE].to_numpy(), size=n)) for n in (40, 7, 120)]
    s = np.concatenate(parts)
    group = np.repeat(np.arange(3), [p.size for p in parts])
    starts = np.cumsum([0, *[p.size for p in parts]])
    return s, group, starts


def _naive(full: pl.DataFrame, s: np.ndarray, group: np.ndarray, starts: np.ndarray):
    fs_, fr, fw = (full[c].to_numpy() for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT))
    out = []
    for g in range(starts.size - 1):
        mine = s[starts[g] : starts[g + 1]]
        scores = sorted(set(mine.tolist()))
        edges = [-math.inf] + [(a + b) / 2 for a, b in itertools.pairwise(scores)] + [math.inf]
        mean = {}
        for k, x in enumerate(scores):
            inside = (fs_ > edges[k]) & (fs_ <= edges[k + 1])
            mean[x] = math.fsum(fw[inside] * fr[inside]) / math.fsum(fw[inside])
        out += [mean[x] for x in mine.tolist()]
    return np.array(out)


def _kernel_road(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every population from now on through the kernel's bucket sort (loaded here), counted."""
    kernel = compiled.kernel()
    sort = kernel.bucketsort.bucket_sort
    calls: list[int] = []
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 0)
    monkeypatch.setattr(
        kernel.bucketsort, "bucket_sort", lambda *a, **k: calls.append(1) or sort(*a, **k)
    )
    return calls


@pytest.mark.parametrize("road", ["numpy", "kernel"])
def test_bin_means_any_row_order(road: str, monkeypatch: pytest.MonkeyPatch):
    calls = _kernel_road(monkeypatch) if road == "kernel" else []
    full = _population(3, 6_000)
    s, group, starts = _groups(full, 3)
    found = bin_means(full, s, group, starts)
    np.testing.assert_allclose(found, _naive(full, s, group, starts), rtol=1e-12, atol=0.0)
    for seed in range(3):
        shuffled = full.sample(fraction=1.0, shuffle=True, seed=seed)
        assert np.array_equal(bin_means(shuffled, s, group, starts), found)
    assert len(calls) == (4 if road == "kernel" else 0)


def test_bin_means_the_same_on_both_roads(monkeypatch: pytest.MonkeyPatch):
    full = _population(5, 6_000)
    s, group, starts = _groups(full, 5)
    numpy_road = bin_means(full, s, group, starts)
    calls = _kernel_road(monkeypatch)
    assert np.array_equal(bin_means(full, s, group, starts), numpy_road)
    assert calls == [1]


def test_the_screen_batch_splits_into_candidates_and_population():
    """The screen's batch (candidates tagged 1, then the population tagged 0) is split by
    two slices; rows in another order by filters: the same two frames either way."""
    from polars_cumdev.method.finite_groups import _TAG, _tagged

    frame = pl.DataFrame({"x": np.arange(10.0), _TAG: [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]})
    frame = frame.with_columns(pl.col(_TAG).cast(pl.Int8))
    groups, full = _tagged(frame)
    assert groups["x"].to_list() == [0.0, 1.0, 2.0] and full["x"].to_list() == list(range(3, 10))
    mixed = frame.sample(fraction=1.0, shuffle=True, seed=1)
    groups, full = _tagged(mixed)
    assert sorted(groups["x"].to_list()) == [0.0, 1.0, 2.0]
    assert sorted(full["x"].to_list()) == list(range(3, 10))
    assert set(groups[_TAG]) == {1} and set(full[_TAG]) == {0}
