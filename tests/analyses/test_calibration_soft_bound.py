"""Calibration of soft labels: the conservative bound where the asymptotic tail fails.

docs/method.md, "Soft labels: a bound valid at every size"; the bound itself in
:mod:`polars_cumdev.method.finite_bound`, transcribed naively in
tests/references/reference_bound.py.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import reference_bound as ref
from null_level import bound, check, power, rejects

from polars_cumdev.calibration import calibration
from polars_cumdev.kernel import bound as kernel_bound
from polars_cumdev.method import finite_bound as fb
from polars_cumdev.method import finite_sample as fs

COLUMNS = ["g", "ecce_r_p", "ecce_mad_p", "ecce_r_log10p", "ecce_r_q", "p_method"]


def _layout(seed: int, sizes: list[int], distinct: int | None = None):
    """Groups of soft labels (ties when ``distinct``), log-normal weights, sorted."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(len(sizes)), sizes)
    s = rng.beta(1.0, 6.0, g.size)
    if distinct is not None:
        s = np.round(s * distinct) / distinct
    r = np.clip(rng.beta(0.3 * s + 1e-3, 0.3 * (1 - s) + 1e-3) + 0.05 * (g % 3 == 0), 0, 1)
    w = rng.lognormal(0.0, 0.8, g.size)
    order, starts = fs.grouped(g, s, w, r)
    return starts, s[order], w[order], r[order]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_bound_equals_the_naive_transcription(seed):
    sizes = [1, 2, 5, 13, 30]
    for distinct in (None, 4) if seed == 1 else (40,):
        starts, s, w, r = _layout(seed, sizes, distinct)
        p_k, p_ks = fb.bound_pvalues(starts, s, w, r)
        for k in range(len(sizes)):
            part = slice(starts[k], starts[k + 1])
            want = ref.group_bound(s[part], w[part], r[part])
            assert np.allclose([p_k[k], p_ks[k]], want, rtol=1e-9, atol=0), (distinct, k)


@pytest.mark.slow
def test_bound_is_at_least_the_tail_of_bernoulli_responses():
    """The law on [0, 1] nearest the bound's worst case: 0/1 responses. 8,000 groups of 20
    rows, scores near 0, log-normal weights (sigma 1): the share of bounds at most t is at
    most t (binomial bound, false failure 0.1%) at t = 0.01, 0.05 and 0.2 (a true rate of
    1.5 t fails with probability 0.83 at t = 0.01, ~1 at the others)."""
    rng = np.random.default_rng(11)
    groups, n = 8000, 20
    g = np.repeat(np.arange(groups), n)
    s = rng.beta(1.0, 12.0, g.size)
    w = rng.lognormal(0.0, 1.0, g.size)
    r = (rng.random(g.size) < s).astype(np.float64)
    order, starts = fs.grouped(g, s, w, r)
    p_k, p_ks = fb.bound_pvalues(starts, s[order], w[order], r[order])
    for t in (0.01, 0.05, 0.2):
        check(int((p_k <= t).sum()), groups, t)
        check(int((p_ks <= t).sum()), groups, t)


def test_bound_ignores_the_weights_scale_and_the_other_groups():
    starts, s, w, r = _layout(4, [3, 17, 25, 8], 10)
    p_k, p_ks = fb.bound_pvalues(starts, s, w, r)
    scaled = fb.bound_pvalues(starts, s, w * 3.7, r)
    assert np.allclose(scaled, (p_k, p_ks), rtol=1e-9, atol=0)
    exact = fb.bound_pvalues(starts, s, w * 0.25, r)  # (a power of two: bit for bit)
    assert np.array_equal(exact[0], p_k) and np.array_equal(exact[1], p_ks)
    for k in range(4):  # each group alone: the same bits
        part = slice(starts[k], starts[k + 1])
        alone = fb.bound_pvalues(
            np.array([0, starts[k + 1] - starts[k]]), s[part], w[part], r[part]
        )
        assert (alone[0][0], alone[1][0]) == (p_k[k], p_ks[k])


def test_the_bound_is_tighter_than_a_single_worst_row_and_finds_a_plain_deviation():
    # twelve rows all 1 at scores 0.05: the deviation is plain; a 20-row group of scores
    # near 0.05 at their means is not
    s = np.full(12, 0.05)
    p_k, p_ks = fb.bound_pvalues(np.array([0, 12]), s, np.ones(12), np.ones(12))
    assert p_k[0] < 1e-6 and p_ks[0] < 1e-6
    s = np.linspace(0.03, 0.07, 20)
    p_k, p_ks = fb.bound_pvalues(np.array([0, 20]), s, np.ones(20), s.copy())
    assert p_k[0] == 1.0 and p_ks[0] == 1.0


def _soft(seed: int, groups: int = 120, k: float = 0.1, planted: float = 0.0) -> pl.DataFrame:
    """Soft labels (Beta with mean the score, concentration ``k``: near 0/1 for small k),
    scores from Beta(1, 12) rounded to 1/1000 (ties), groups of 10-30 rows, log-normal
    weights (sigma 1); every fifth group's responses raised by ``planted``."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(groups), rng.integers(10, 31, groups))
    s = np.clip(np.round(rng.beta(1.0, 12.0, g.size), 3), 1e-3, None)
    mean = np.clip(s + planted * (g % 5 == 0), 1e-3, 0.999)
    r = rng.beta(mean * k, (1.0 - mean) * k)
    w = rng.lognormal(0.0, 1.0, g.size)
    return pl.DataFrame({"g": [f"g{x:03d}" for x in g], "s": s, "r": r, "w": w})


@pytest.mark.slow
def test_calibration_by_groups_bounds_soft_labels_in_both_engines_and_any_order():
    frame = _soft(5, planted=0.3)
    polars = calibration(frame, "s", "r", "w", by="g", engine="polars").select(COLUMNS)
    kernel = calibration(frame, "s", "r", "w", by="g", engine="kernel").select(COLUMNS)
    polars, kernel = polars.sort("g"), kernel.sort("g")
    assert polars["p_method"].equals(kernel["p_method"])
    assert {"bound", "asymptotic"} <= set(polars["p_method"])
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)
    again = calibration(shuffled, "s", "r", "w", by="g").select(COLUMNS).sort("g")
    assert again["p_method"].equals(polars["p_method"])
    bounded = polars.filter(pl.col("p_method") == "bound")
    for table in (kernel, again):
        mine = table.filter(pl.col("p_method") == "bound")
        assert mine.select("ecce_r_p", "ecce_mad_p").equals(
            bounded.select("ecce_r_p", "ecce_mad_p")
        )
    # a bound row's p-values are the naive transcription's on that group's rows alone
    for row in bounded.head(2).iter_rows(named=True):
        part = frame.filter(pl.col("g") == row["g"])
        want = ref.group_bound(*(part[c].to_numpy() for c in ("s", "w", "r")))
        assert np.allclose([row["ecce_r_p"], row["ecce_mad_p"]], want, rtol=1e-9, atol=0)
        assert row["ecce_r_log10p"] == pytest.approx(np.log10(row["ecce_r_p"]), rel=1e-12)
    # the q-values are Benjamini-Hochberg's over the p-values shown
    p = polars["ecce_r_p"].to_numpy()
    order = np.argsort(p, kind="stable")
    bh = np.minimum.accumulate((p[order] * p.size / np.arange(1, p.size + 1))[::-1])[::-1]
    assert np.allclose(polars["ecce_r_q"].to_numpy()[order], np.minimum(bh, 1.0), rtol=1e-12)


@pytest.mark.slow
def test_overall_calibration_bounds_a_small_soft_label_sample():
    frame = _soft(6, planted=0.3).filter(pl.col("g") == "g000")
    for engine in ("auto", "polars", "kernel"):
        row = calibration(frame, "s", "r", "w", engine=engine).row(0, named=True)
        assert row["p_method"] == "bound", engine
        want = ref.group_bound(*(frame[c].to_numpy() for c in ("s", "w", "r")))
        assert np.allclose([row["ecce_r_p"], row["ecce_mad_p"]], want, rtol=1e-9, atol=0)


def test_drift_windows_of_soft_labels_are_bounded():
    import datetime as dt

    from polars_cumdev.drift import calibration_drift

    frame = _soft(8, groups=8, planted=0.3).with_columns(
        pl.col("g")
        .str.slice(1)
        .cast(pl.Int64)
        .map_elements(
            lambda k: dt.date(2024, 1, 1) + dt.timedelta(days=7 * k), return_dtype=pl.Date
        )
        .alias("t")
    )
    out = calibration_drift(frame, "s", "r", "w", time="t")
    out = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert "bound" in set(out["p_method"])
    alone = calibration(frame, "s", "r", "w", by="t").select("t", "ecce_r_p", "p_method")
    joined = out.select("t", "ecce_r_p", "p_method").join(alone, on="t")
    assert joined["p_method"].equals(joined["p_method_right"])
    assert np.allclose(joined["ecce_r_p"], joined["ecce_r_p_right"], rtol=1e-12, atol=0)


def test_zero_one_groups_are_still_simulated_beside_soft_ones():
    frame = _soft(7, planted=0.3)
    binary = frame.filter(pl.col("g") < "g060").with_columns(
        (pl.col("r") > 0.5).cast(pl.Float64).alias("r")
    )
    mixed = pl.concat([binary, frame.filter(pl.col("g") >= "g060")])
    table = calibration(mixed, "s", "r", "w", by="g")
    methods = dict(table.select("g", "p_method").iter_rows())
    assert {methods[g] for g in methods if g < "g060"} <= {"simulated", "asymptotic"}
    assert {methods[g] for g in methods if g >= "g060"} <= {"bound", "asymptotic"}
    assert "bound" in methods.values() and "simulated" in methods.values()


# --------------------------------------------------------------------------
# The level under the null (issue 36): slow.
# --------------------------------------------------------------------------

SETS, GROUPS = 1800, 100


def _null_sets(seed: int) -> pl.DataFrame:
    """SETS calibrated data sets of GROUPS groups each (soft labels Beta(0.1 s, 0.1 (1 - s)),
    mean s; scores Beta(1, 12); 10-30 rows; log-normal weights, sigma 1)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(10, 31, SETS * GROUPS)
    gid = np.repeat(np.arange(SETS * GROUPS), sizes)
    s = rng.beta(1.0, 12.0, gid.size)
    r = rng.beta(0.1 * s, 0.1 * (1.0 - s))
    w = rng.lognormal(0.0, 1.0, gid.size)
    return pl.DataFrame({"set": gid // GROUPS, "g": gid % GROUPS, "s": s, "r": r, "w": w})


def _rates(table: pl.DataFrame) -> dict[str, int]:
    """Rejections: per group at 1% and 5% (Kuiper and KS), and data sets where BH at 5%
    over the GROUPS groups rejects some group (Kuiper)."""
    ranked = table.sort("set", "ecce_r_p").with_columns(
        rank=pl.int_range(1, pl.len() + 1).over("set"), m=pl.len().over("set")
    )
    hit = pl.col("ecce_r_p") <= 0.05 * pl.col("rank") / pl.col("m")
    familywise = ranked.group_by("set").agg(hit.any())["ecce_r_p"].sum()
    found = {"familywise": int(familywise)}
    for level in (0.01, 0.05):
        for c in ("ecce_r_p", "ecce_mad_p"):
            found[f"{c}@{level}"] = int((table[c] <= level).sum())
    return found


def _checks(found: dict[str, int]) -> list[bool]:
    """Whether each check of :func:`test_soft_label_null_level` fails on ``found``."""
    groups = SETS * GROUPS
    out = [rejects(found["familywise"], SETS, 0.05)]
    for level in (0.01, 0.05):
        out += [rejects(found[f"{c}@{level}"], groups, level) for c in ("ecce_r_p", "ecce_mad_p")]
    return out


@pytest.mark.slow
def test_soft_label_null_level():
    """Calibrated soft labels, 1,800 data sets of 100 groups (180,000 groups, ~3.6M rows):
    per-group rejections at 1% and 5% within the binomial bound (false failure at most
    0.1%; a true rate of 1.5 times the level fails with probability ~1 over 180,000
    groups), and Benjamini-Hochberg's family-wise rate at 5% over the data sets: 1,800
    of them, a true rate of 7.5% fails with probability 0.90 (asserted below). The same
    checks fail on the asymptotic p-values alone (family-wise and 1%) and on a bound
    built from the variance alone (sub-Gaussian psi = lambda^2 w^2 s (1 - s) / 2, which
    ignores the skewness): see the next two tests."""
    assert power(SETS, 0.05, 0.075) >= 0.9
    assert bound(SETS, 0.05) < SETS
    table = calibration(_null_sets(36), "s", "r", "w", by=["set", "g"])
    assert "bound" in set(table["p_method"])
    found = _rates(table)
    assert not any(_checks(found)), found
    groups = SETS * GROUPS
    check(found["familywise"], SETS, 0.05)
    for level in (0.01, 0.05):
        check(found[f"ecce_r_p@{level}"], groups, level)
        check(found[f"ecce_mad_p@{level}"], groups, level)


@pytest.mark.slow
def test_the_same_checks_fail_on_the_asymptotic_pvalues():
    table = calibration(_null_sets(36), "s", "r", "w", by=["set", "g"], _finite_sample=False)
    assert set(table["p_method"]) == {"asymptotic"}
    failed = _checks(_rates(table))
    assert failed[0] and failed[1]  # BH's family-wise rate, and the Kuiper p at 1%


def _variance_only(starts, s, w, lam, g, d, restart, columns, psi_up, psi_down, folded, *rest):
    """:func:`polars_cumdev.kernel.bound.exponents` with sub-Gaussian cumulants, psi =
    lambda^2 w^2 s (1 - s) / 2 on both sides: a bound from the variance alone, which ignores
    the skewness (deliberately wrong for rare outcomes). In NumPy, one lambda at a time."""
    group = np.repeat(np.arange(starts.size - 1), np.diff(starts))
    v = 0.5 * w**2 * s * (1.0 - s)
    running = np.cumsum(v)
    before = running - np.concatenate([[0.0], running])[starts[:-1]][group]
    total = np.bincount(group, weights=v, minlength=starts.size - 1)
    at = np.flatnonzero(restart)
    left = np.maximum(total[group[at]] - before[at], 0.0)  # Psi after j, over lambda^2
    for c in range(*columns):
        psi = lam[:, c] ** 2 * total
        psi_up[:, c] = psi_down[:, c] = psi
        for k, a in enumerate((g, g, d, d)):
            np.minimum(folded[:, k], psi - lam[:, c] * a, out=folded[:, k])
        after = lam[group[at], c] ** 2 * left - lam[group[at], c] * d[group[at]]
        for part in rest:
            np.minimum(part, after, out=part)


@pytest.mark.slow
def test_the_same_checks_fail_on_a_bound_from_the_variance_alone(monkeypatch):
    monkeypatch.setattr(kernel_bound, "exponents", _variance_only)
    table = calibration(_null_sets(36), "s", "r", "w", by=["set", "g"])
    assert any(_checks(_rates(table)))
