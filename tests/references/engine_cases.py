"""Data and comparisons shared by the tests of the range-partitioned and cluster screens.

``make_data`` draws seeded frames with ties and skewed groups, ``planted``
plants deviations across and inside score ranges, and ``assert_same``
compares two screen tables column by column at the tolerances below.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.method.statistics import STATISTIC_COLUMNS

RTOL = 1e-12
RTOL_LOCATION = 1e-9  # the located stretch (a deviation is a ratio of differences of C)
ATOL = 1e-15  # only matters where a statistic is exactly 0
ATOL_C = 1e-14  # statistics of C: responses are O(1) here (see assert_same)
EXACT = ("n", "n_scores", "variance")
FLOATS = tuple(c for c in STATISTIC_COLUMNS if c not in (*EXACT, "note", *LOCATION_COLUMNS))


def make_data(
    seed: int,
    rows: int = 1200,
    groups: int = 7,
    *,
    weighted: bool = True,
    response: str = "binary",
) -> pl.DataFrame:
    """Seeded frame: g (group), s (score, many exact ties), r (response), w (weight).

    Group sizes follow a Zipf-like law. Each group draws its scores from its
    own window: the largest group the whole of [0, 1], the last group a
    single score, the others windows of width 0.02 (they live in one or two
    ranges), 0.3 or 1.0. Half the scores are on
    the grid of multiples of 1/64, so ties are frequent and midpoints often
    equal other scores.
    """
    rng = np.random.default_rng(seed)
    share = 1.0 / np.arange(1, groups + 1) ** 1.2
    g = rng.choice(groups, size=rows, p=share / share.sum())
    g[:groups] = np.arange(groups)  # every group present
    centre = rng.uniform(0.1, 0.9, size=groups)
    width = rng.choice(np.array([0.02, 0.3, 1.0]), size=groups)
    centre[0], width[0] = 0.5, 1.0  # the largest group spans every range
    width[-1] = 0.0  # the last group has a single score: it lives in one range
    s = np.clip(centre[g] + width[g] * (rng.random(rows) - 0.5), 0.0, 1.0)
    on_grid = rng.random(rows) < 0.5
    s = np.where(on_grid, np.round(s * 64.0) / 64.0, np.round(s, 6))
    bump = 0.2 * (g == 1) * (s > 0.5)
    if response == "binary":
        r = (rng.random(rows) < 0.15 + 0.6 * s + bump).astype(np.int64)
    else:
        r = np.round(2.0 * s + bump + rng.normal(0.0, 0.5, rows), 3)
    columns = {"g": [f"g{k:02d}" for k in g], "s": s, "r": r}
    if weighted:
        columns["w"] = rng.lognormal(0.0, 0.7, size=rows)
    return pl.DataFrame(columns)


def assert_same(expected: pl.DataFrame, actual: pl.DataFrame, by: list[str]) -> None:
    """Same groups and columns; integers and labels equal, floats to RTOL.

    The relative tolerance is 1e-12 throughout. Statistics of C (and z = them
    / sigma) also get an absolute floor of ATOL_C (over sigma for z): when a
    group is nearly the whole population C is pure rounding noise, and C_n
    can be far smaller than the terms it sums, so neither screen is more
    accurate than that there.
    """
    assert actual.columns == expected.columns
    assert actual.height == expected.height
    left = expected.sort(by, nulls_last=True)
    right = actual.sort(by, nulls_last=True)
    for column in (*by, *EXACT):
        assert left[column].to_list() == right[column].to_list(), column
    if "p_method" in left.columns:  # the same groups simulated (their draws: the same seeds)
        assert left["p_method"].to_list() == right["p_method"].to_list()
    assert left["note"].to_list() == right["note"].to_list()
    # The located stretch: the same points, so the same scores and shares to rounding.
    for column in LOCATION_COLUMNS:
        x = left[column].cast(pl.Float64).to_numpy()
        y = right[column].cast(pl.Float64).to_numpy()
        assert np.array_equal(np.isnan(x), np.isnan(y)), column
        bad = ~(np.abs(y - x) <= RTOL_LOCATION * np.abs(x)) & ~np.isnan(x)
        assert not bad.any(), f"{column}: expected {x[bad]}, got {y[bad]}"
    sigma = left["sigma"].cast(pl.Float64).to_numpy()
    for column in FLOATS:
        x = left[column].cast(pl.Float64).to_numpy()
        y = right[column].cast(pl.Float64).to_numpy()
        assert np.array_equal(np.isnan(x), np.isnan(y)), column
        atol = ATOL
        if column in ("kuiper", "ks", "delta"):
            atol = ATOL_C
        elif column in ("kuiper_z", "ks_z"):
            atol = ATOL_C / np.where(sigma > 0, sigma, 1.0)
        bad = np.abs(y - x) > RTOL * np.abs(x) + atol
        bad &= ~np.isnan(x)
        assert not bad.any(), f"{column}: expected {x[bad]}, got {y[bad]}"


def planted(
    seed: int, rows: int = 6000, *, weighted: bool = True, response: str = "binary"
) -> pl.DataFrame:
    """Seeded frame with deviations planted in some groups.

    Groups: ``wide`` (a bump over scores 0.3-0.7, across many ranges),
    ``narrow`` (all its scores in [0.50, 0.52] with a bump in the upper
    half: one or two ranges), ``drop`` (a fall over 0.1-0.4), ``null``
    (no deviation), ``flat`` (one score), ``small`` (few rows), and
    ``other`` the rest of the population. A third of the scores lie on a
    grid of 1/128, so ties are frequent.
    """
    rng = np.random.default_rng(seed)
    names = np.array(["wide", "narrow", "drop", "null", "flat", "small", "other"])
    share = np.array([0.15, 0.08, 0.12, 0.1, 0.02, 0.01, 0.52])
    g = rng.choice(names.size, size=rows, p=share)
    g[: names.size] = np.arange(names.size)
    s = rng.random(rows)
    s = np.where(g == 1, 0.5 + 0.02 * rng.random(rows), s)
    s = np.where(g == 4, 0.25, s)
    grid = rng.random(rows) < 1 / 3
    s = np.where(grid, np.round(s * 128.0) / 128.0, np.round(s, 7))
    shift = np.zeros(rows)
    shift += 0.35 * ((g == 0) & (s > 0.3) & (s < 0.7))
    shift += 0.4 * ((g == 1) & (s > 0.51))
    shift -= 0.35 * ((g == 2) & (s > 0.1) & (s < 0.4))
    p = np.clip(0.1 + 0.5 * s + shift, 0.0, 1.0)
    if response == "binary":
        r = (rng.random(rows) < p).astype(np.int64)
    else:
        r = np.round(p + rng.normal(0.0, 0.3, rows), 4)
    columns = {"g": names[g], "s": s, "r": r}
    if weighted:
        columns["w"] = rng.lognormal(0.0, 0.5, rows)
    return pl.DataFrame(columns)


def soft_groups(seed: int, groups: int = 60) -> pl.DataFrame:
    """Soft labels near 0 (Beta(0.3, b), mean 0.01-0.03) in groups of 10-30 rows, weights
    0.5 / 1 / 2.5: the in-process screen resamples some groups (``p_method`` "resampled")."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(groups), rng.integers(10, 31, groups))
    s = rng.random(g.size)
    r = rng.beta(0.3, 30.0 * (1.5 - s))
    w = rng.choice([0.5, 1.0, 2.5], g.size)
    return pl.DataFrame({"g": [f"g{k:02d}" for k in g], "s": s, "r": r, "w": w})


def rare_groups(seed: int, rows: int = 6000, groups: int = 40) -> pl.DataFrame:
    """A rare outcome (scores from Beta(1, 12), mean about 8%) in small weighted groups.

    Zipf-sized groups, scores rounded to 1/1000 (ties), log-normal weights,
    every seventh group's events 1.8 times as likely: several groups have
    few effective events and an asymptotic p-value under the cutoff, so the
    in-process screen simulates their p-values (``p_method`` "simulated").
    """
    rng = np.random.default_rng(seed)
    share = 1.0 / np.arange(1, groups + 1) ** 1.1
    g = rng.choice(groups, size=rows, p=share / share.sum())
    s = np.round(rng.beta(1.0, 12.0, rows), 3)
    r = (rng.random(rows) < s * np.where(g % 7 == 0, 1.8, 1.0)).astype(np.int64)
    w = rng.lognormal(0.0, 0.7, rows)
    return pl.DataFrame({"g": [f"g{k:02d}" for k in g], "s": s, "r": r, "w": w})
