"""Finite-sample p-values where the asymptotic Kuiper tail is not trusted (issue 36, item 1).

Oracle: ``reference_finite_sample`` (a naive transcription of the redraws, the
seed protocol and Besag and Clifford's rule) for the compiled kernel; the
null tests check the family-wise error at the issue's adversarial settings
(small segments, scores near 1), and that the same check fails on the
asymptotic p-values alone.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
import reference_finite_sample as ref

from polars_cumdev.calibration import calibration
from polars_cumdev.kernel.finite_sample import simulated_pvalues
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.pvalues import ks_pvalue, kuiper_pvalue
from polars_cumdev.multicalibration import multicalibration, segments
from polars_cumdev.subpopulation import screen


def _groups(seed: int, sizes: list[int]):
    """Rows of several groups, tied scores on a grid, weights, 0/1 responses, sorted."""
    rng = np.random.default_rng(seed)
    parts = []
    for g, n in enumerate(sizes):
        s = rng.integers(1, 9, n) / 10.0
        w = rng.choice([0.5, 1.0, 2.5], n)
        r = (rng.random(n) < np.clip(s + 0.2 * (g % 2), 0, 1)).astype(np.float64)
        parts.append(np.stack([np.full(n, g), s, w, r]))
    table = np.concatenate(parts, axis=1)
    order, starts = fs.grouped(table[0].astype(np.int64), table[1], table[2], table[3])
    return starts, table[1][order], table[2][order], table[3][order]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_equals_the_naive_transcription(seed):
    starts, s, w, r = _groups(seed, [7, 12, 25, 3])
    draws = np.array([150, 400, 60, 90], dtype=np.int64)
    p_d, p_g, used = simulated_pvalues(starts, s, w, s, r, draws, 5)
    for g in range(starts.shape[0] - 1):
        a, b = starts[g], starts[g + 1]
        want = ref.pvalues(list(s[a:b]), list(w[a:b]), list(s[a:b]), list(r[a:b]), draws[g], 5)
        assert (p_d[g], p_g[g], used[g]) == want, g


def test_the_seed_follows_the_rows_not_their_order_or_other_groups():
    starts, s, w, r = _groups(3, [20, 20])
    alone = simulated_pvalues(starts[:2], s[:20], w[:20], s[:20], r[:20], np.array([300]), 7)
    both = simulated_pvalues(starts, s, w, s, r, np.array([300, 300]), 7)
    assert alone[0][0] == both[0][0] and alone[1][0] == both[1][0]


def test_simulated_pvalue_is_valid_where_the_asymptotic_one_is_not():
    """Groups of 100 rows, a rare outcome (scores ~ Beta(1, 12)), log-normal weights
    (sigma 1); 4,000 null data sets in one call.

    Under the null P(p <= t) <= t for the simulated p-value (checked at t = 0.05
    and 0.01 to three binomial standard errors); the asymptotic p-value of the
    same statistic rejects at 0.01 about twice too often here.
    """
    rng = np.random.default_rng(11)
    n, sets = 100, 4000
    s = np.sort(rng.beta(1.0, 12.0, (sets, n)), axis=1)  # each set its scores: its own seed
    w = rng.lognormal(0.0, 1.0, (sets, n))
    r = (rng.random((sets, n)) < s).astype(np.float64)
    starts = np.arange(sets + 1, dtype=np.int64) * n
    # each data set's rows sorted by score, weight, response (scores are distinct)
    p_d, _, _ = simulated_pvalues(
        starts, s.ravel(), w.ravel(), s.ravel(), r.ravel(),
        np.full(sets, 999, dtype=np.int64), fs.STOP,
    )  # fmt: skip
    for t in (0.05, 0.01):
        assert np.mean(p_d <= t) <= t + 3 * math.sqrt(t * (1 - t) / sets), t
    c = np.cumsum(w * (r - s), axis=1)
    kuiper = np.maximum(c.max(axis=1), 0) - np.minimum(c.min(axis=1), 0)
    asymptotic = kuiper_pvalue(kuiper / np.sqrt(np.sum(w * w * s * (1 - s), axis=1)))
    assert np.mean(asymptotic <= 0.01) > 0.01 + 3 * math.sqrt(0.01 * 0.99 / sets)


def _segmented(seed: int, n: int = 3000, levels: int = 20) -> pl.DataFrame:
    """The issue's small-segment setting, scaled down: scores ~ Beta(8, 1), weights 1-3,
    a Zipf-sized categorical feature and a numerical one; calibrated responses."""
    rng = np.random.default_rng(seed)
    zipf = 1.0 / np.arange(1, levels + 1)
    s = rng.beta(8.0, 1.0, n)
    return pl.DataFrame(
        {
            "s": s,
            "r": (rng.random(n) < s).astype(np.float64),
            "w": rng.uniform(1.0, 3.0, n),
            "cat": rng.choice(levels, n, p=zipf / zipf.sum()).astype(str),
            "x": rng.standard_normal(n),
        }
    )


_FAMILY = segments(categorical=["cat"], numerical=["x"], depth=2, levels=20)


def test_multicalibration_says_which_rows_were_simulated():
    frame = _segmented(4)
    table = multicalibration(frame, "s", "r", "w", segments=_FAMILY, level=0.1)
    simulated = table.filter(pl.col("p_method") == "simulated")
    kept = table.filter(pl.col("p_method") == "asymptotic")
    assert simulated.height > 0 and set(table["p_method"]) == {"simulated", "asymptotic"}
    # the asymptotic rows keep the asymptotic p-value of their z
    z = kept["ecce_r_z"].drop_nulls().to_numpy()
    got = kept["ecce_r_p"].drop_nulls().to_numpy()
    assert np.allclose(got, kuiper_pvalue(z), rtol=1e-12, atol=0)
    # only rows whose asymptotic p could matter were simulated
    smaller = np.fmin(
        kuiper_pvalue(simulated["ecce_r_z"].to_numpy()),
        ks_pvalue(simulated["ecce_mad_z"].to_numpy()),
    )
    assert (smaller <= fs.cutoff(0.1)).all()
    # p_family is Holm over the p-values shown
    p = table["ecce_r_p"].to_numpy()
    order = np.argsort(p, kind="stable")
    holm = np.minimum(np.maximum.accumulate(p[order] * (p.size - np.arange(p.size))), 1.0)
    assert np.allclose(table["p_family"].to_numpy()[order], holm, rtol=1e-12)
    # the same numbers whatever the row order
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=9)
    again = multicalibration(shuffled, "s", "r", "w", segments=_FAMILY, level=0.1)
    assert again.select("condition", "ecce_r_p", "p_method").equals(
        table.select("condition", "ecce_r_p", "p_method")
    )


def _familywise_rate(sets: int, finite: bool) -> float:
    found = 0
    for k in range(sets):
        table = multicalibration(
            _segmented(k), "s", "r", "w", segments=_FAMILY, level=0.1, _finite_sample=finite
        )
        found += int((table["p_family"] <= 0.1).any())
    return found / sets


# Fewest data sets whose rate may exceed the level 0.1: 600 sets, at most 79 with a finding
# (13.2%). A true rate of 0.15 (1.5 times the level) fails with probability 0.907, a true
# rate of exactly 0.10 with 0.0075 (binomial).
_SETS, _BOUND = 600, 79 / 600


@pytest.mark.slow
def test_multicalibration_familywise_error_on_small_segments():
    """Holm on the finite-sample p-values keeps the family-wise level on ~130 segments of
    10-300 rows with scores near 1 (0.27 s a data set, under 3 minutes, on a quiet
    machine; 6 minutes under load 20)."""
    assert _familywise_rate(_SETS, finite=True) <= _BOUND


@pytest.mark.slow
def test_the_same_check_fails_on_the_asymptotic_pvalues():
    """The check above, on 200 data sets, with the simulation switched off: the asymptotic
    tail alone finds something in 15-18% of them (issue 36), above the bound."""
    assert _familywise_rate(200, finite=False) > _BOUND


def _rare(seed: int, n: int = 5000, groups: int = 50) -> pl.DataFrame:
    """The issue's rare-outcome setting, scaled down: scores ~ Beta(1, 12), log-normal
    weights (sigma 1), Zipf-sized groups; calibrated responses."""
    rng = np.random.default_rng(seed)
    zipf = 1.0 / np.arange(1, groups + 1)
    s = rng.beta(1.0, 12.0, n)
    return pl.DataFrame(
        {
            "s": s,
            "r": (rng.random(n) < s).astype(np.float64),
            "w": rng.lognormal(0.0, 1.0, n),
            "g": rng.choice(groups, n, p=zipf / zipf.sum()),
        }
    )


def _same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    """The same rows: simulated p-values bit for bit, asymptotic ones to 1e-9 (the engines'
    z agree to that, not to the bit)."""
    assert a["p_method"].equals(b["p_method"]) and a["g"].equals(b["g"])
    simulated = (a["p_method"] == "simulated").to_numpy()
    for c in ("ecce_r_p", "ecce_mad_p", "ecce_r_q"):
        x, y = a[c].to_numpy(), b[c].to_numpy()
        assert np.array_equal(x[simulated], y[simulated]), c
        assert np.allclose(x, y, rtol=1e-9, atol=0), c


def test_calibration_by_groups_is_the_same_in_both_engines_and_any_order():
    frame = _rare(5)
    columns = ["g", "ecce_r_p", "ecce_mad_p", "ecce_r_log10p", "ecce_r_q", "p_method"]
    polars = calibration(frame, "s", "r", "w", by="g", engine="polars").select(columns).sort("g")
    kernel = calibration(frame, "s", "r", "w", by="g", engine="kernel").select(columns).sort("g")
    _same(polars, kernel)
    assert set(polars["p_method"]) == {"simulated", "asymptotic"}
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)
    _same(calibration(shuffled, "s", "r", "w", by="g").select(columns).sort("g"), polars)
    # a simulated row's p-value is the kernel's on that group's rows alone
    row = polars.filter(pl.col("p_method") == "simulated").row(0, named=True)
    part = frame.filter(pl.col("g") == row["g"]).sort("s", "w", "r")
    tests = polars["ecce_r_p"].drop_nulls().len()
    p_d, p_g, _ = fs.simulate(
        np.array([0, part.height]), *(part[c].to_numpy() for c in ("s", "w", "s", "r")),
        tests, 0.05,
    )  # fmt: skip
    assert (p_d[0], p_g[0]) == (row["ecce_r_p"], row["ecce_mad_p"])
    # the q-values are Benjamini-Hochberg's over the p-values shown
    p = polars["ecce_r_p"].to_numpy()
    order = np.argsort(p, kind="stable")
    bh = np.minimum.accumulate((p[order] * p.size / np.arange(1, p.size + 1))[::-1])[::-1]
    assert np.allclose(polars["ecce_r_q"].to_numpy()[order], np.minimum(bh, 1.0), rtol=1e-12)


def test_soft_labels_that_match_their_scores_are_no_candidates():
    # responses equal to the scores: no group deviates, so none is a candidate for the bound
    # (tests/analyses/test_calibration_soft_bound.py covers the groups that are)
    frame = _rare(6).with_columns(pl.col("s").alias("r"))
    table = calibration(frame, "s", "r", "w", by="g")
    assert set(table["p_method"]) == {"asymptotic"}


def _naive_bin_means(frame: pl.DataFrame, part: pl.DataFrame) -> np.ndarray:
    """Rt of each row of ``part`` (sorted by score), written from method.md 1.2-1.3."""
    scores = sorted(set(part["s"].to_list()))
    edges = [-math.inf] + [(a + b) / 2 for a, b in itertools.pairwise(scores)] + [math.inf]
    s, r, w = (frame[c].to_numpy() for c in ("s", "r", "w"))
    mean = {}
    for k, score in enumerate(scores):
        inside = (s > edges[k]) & (s <= edges[k + 1])
        mean[score] = float(np.sum(w[inside] * r[inside]) / np.sum(w[inside]))
    return np.array([mean[x] for x in part["s"].to_list()])


def test_screen_by_groups_is_the_same_in_both_engines_and_any_order():
    frame = _rare(7)
    columns = ["g", "kuiper_p", "ks_p", "kuiper_q", "p_method"]
    polars = screen(frame, "g", "s", "r", "w", engine="polars").select(columns).sort("g")
    kernel = screen(frame, "g", "s", "r", "w", engine="kernel").select(columns).sort("g")
    renamed = {"kuiper_p": "ecce_r_p", "ks_p": "ecce_mad_p", "kuiper_q": "ecce_r_q"}
    _same(polars.rename(renamed), kernel.rename(renamed))
    assert set(polars["p_method"]) == {"simulated", "asymptotic"}
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=4)
    again = screen(shuffled, "g", "s", "r", "w").select(columns).sort("g")
    _same(again.rename(renamed), polars.rename(renamed))
    # a simulated row's p-value is the kernel's on that group's rows, with the full
    # population's bin means (held fixed) as the null probabilities
    row = polars.filter(pl.col("p_method") == "simulated").row(0, named=True)
    part = frame.filter(pl.col("g") == row["g"]).sort("s", "w", "r")
    tests = polars["kuiper_p"].drop_nulls().len()
    p = _naive_bin_means(frame, part)
    s, w, r = (part[c].to_numpy() for c in ("s", "w", "r"))
    p_d, p_g, _ = fs.simulate(np.array([0, part.height]), s, w, p, r, tests, 0.05)
    assert p_d[0] == pytest.approx(row["kuiper_p"], rel=1e-12)
    assert p_g[0] == pytest.approx(row["ks_p"], rel=1e-12)


def _rates(sets: int, finite: bool, **sizes: int) -> tuple[float, float]:
    """Share of data sets with a finding of calibration(by=) and of screen(by=) at 0.1."""
    found = np.zeros(2)
    for k in range(sets):
        frame = _rare(k, **sizes)
        table = calibration(frame, "s", "r", "w", by="g", level=0.1, _finite_sample=finite)
        found[0] += int((table["ecce_r_q"] <= 0.1).any())
        table = screen(frame, "g", "s", "r", "w", level=0.1, _finite_sample=finite)
        found[1] += int((table["kuiper_q"] <= 0.1).any())
    return found[0] / sets, found[1] / sets


@pytest.mark.slow
def test_by_groups_familywise_error_on_rare_outcomes():
    """BH over 50 groups (Zipf sizes, 5,000 rows, rare outcome, log-normal weights sigma 1)
    under the global null, where BH's false discovery rate is its family-wise error:
    ``calibration(by=)`` and ``screen(by=)`` each at most the level 0.1, with the power of
    ``_SETS`` (both on a data set: about 0.4 s, 4 minutes, on a quiet machine; 8 minutes
    under load 20)."""
    calibrated, screened = _rates(_SETS, finite=True)
    assert calibrated <= _BOUND and screened <= _BOUND, (calibrated, screened)


@pytest.mark.slow
def test_the_by_groups_check_fails_on_the_asymptotic_pvalues():
    """The same with the simulation off, at the issue's size (20,000 rows, 200 groups) on
    30 data sets: about half of them find something (issue 36: 52% and 63% at 5%)."""
    calibrated, screened = _rates(30, finite=False, n=20_000, groups=200)
    assert calibrated > _BOUND and screened > _BOUND, (calibrated, screened)
