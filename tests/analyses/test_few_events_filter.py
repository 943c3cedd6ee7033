"""The groups set aside before the finite-sample criterion are those it would not simulate.

:func:`polars_cumdev.method.finite_sample.may_have_few_events` drops, before the rows
reach the simulation, the candidate groups whose lower bound of the effective
events, sigma_B (W / w_max)^2, reaches the threshold. The tables must be those
of the exact criterion alone (the filter replaced by the identity), on groups
sized around the threshold: unit, integer and log-normal weights, rare and
common outcomes, screen and calibration. A bound that is not a lower bound
(checked: sigma_B W^2 / w_min^2) drops groups the criterion simulates and
fails here.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from polars_cumdev.calibration import calibration
from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.summary_columns import SIGMA_B
from polars_cumdev.subpopulation import screen


def _frame(seed: int, weights: str) -> pl.DataFrame:
    """60 groups of 200-4,000 rows and 4 of 20,000; the score (probability) near 0.03-0.2,
    0/1 responses from it shifted up in every third group; E around 200 for many groups,
    and the bound above it for some (the large ones)."""
    rng = np.random.default_rng(seed)
    sizes = np.concatenate([rng.integers(200, 4000, 60), np.full(4, 20_000)])
    g = np.repeat(np.arange(sizes.size), sizes)
    s = rng.beta(1.0, rng.choice([8.0, 30.0]), g.size)
    y = (rng.random(g.size) < np.clip(s + 0.03 * (g % 3 == 0), 0, 1)).astype(np.int8)
    w = {
        "unit": np.ones(g.size),
        "integer": rng.integers(1, 4, g.size).astype(float),
        "log-normal": rng.lognormal(0.0, 0.7, g.size),
    }[weights]
    return pl.DataFrame({"g": g, "s": s, "y": y, "w": w})


def _both(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    a = screen(frame, "g", "s", "y", "w")
    a = a.collect() if isinstance(a, pl.LazyFrame) else a
    return a, calibration(frame, "s", "y", "w", by="g")


@pytest.mark.slow
@pytest.mark.parametrize("weights", ["unit", "integer", "log-normal"])
def test_the_filter_changes_no_table(weights: str, monkeypatch) -> None:
    frame = _frame(7, weights)
    rows: list[tuple[int, int]] = []  # candidate rows before and after the filter
    real = fs.may_have_few_events

    def spy(picked, keys, sigma_b, population):
        kept = real(picked, keys, sigma_b, population)
        rows.append(tuple(f.select(pl.len()).collect().item() for f in (picked, kept)))
        return kept

    monkeypatch.setattr(fs, "may_have_few_events", spy)
    filtered = _both(frame)
    if weights != "log-normal":  # (not vacuous; here heavy weights and rare outcomes leave
        # both bounds under the threshold: that case checks that nothing wrong is set aside)
        assert any(after < before for before, after in rows), rows
    monkeypatch.setattr(fs, "may_have_few_events", lambda picked, keys, sigma_b, population: picked)
    exact = _both(frame)
    for got, want in zip(filtered, exact, strict=True):
        assert got.equals(want)
    assert any((t["p_method"] == "simulated").any() for t in exact)  # (E < 200 is reached)


@pytest.mark.slow
def test_a_bound_that_is_not_one_changes_the_table(monkeypatch) -> None:
    # sigma_B (W / w_min)^2 is an upper bound of E: it sets aside groups E keeps
    frame = _frame(7, "log-normal")
    exact = _both(frame)

    def too_high(picked, keys, sigma_b, population):
        w = pl.col(nm.WEIGHT)
        ratio = (w.sum().over(keys) / w.min().over(keys)) ** 2
        return picked.filter(pl.col(SIGMA_B) * ratio < 200.0)

    monkeypatch.setattr(fs, "may_have_few_events", too_high)
    wrong = _both(frame)
    assert not all(a.equals(b) for a, b in zip(wrong, exact, strict=True))
