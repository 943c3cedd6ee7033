"""Tests of the naive reference itself, on cases worked out by hand.

If the reference were silently wrong, every comparison with the library would
be worthless; these tests pin it to arithmetic done on paper.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference as ref
from numpy.testing import assert_allclose

EXACT = {"rtol": 1e-13, "atol": 1e-15}


# --------------------------------------------------------------------------
# Section 1 by hand
# --------------------------------------------------------------------------


def test_hand_case_unweighted_midpoint_goes_to_lower_bin():
    # Full population (score, response, in subpopulation?):
    #   (0, 1, yes) (1, 0, no) (2, 0, yes) (3, 1, no)
    # Subpopulation scores S' = [0, 2], n = 2, B_1 = (0 + 2)/2 = 1.
    # Bin 1: S <= 1 -> rows at 0 and 1 (1 equals the midpoint: lower bin).
    #   Rt_1 = (1 + 0)/2 = 1/2.
    # Bin 2: S > 1 -> rows at 2 and 3: Rt_2 = (0 + 1)/2 = 1/2.
    # a = [1/2, 1/2]; C_1 = 1/2 (1 - 1/2) = 1/4; C_2 = 1/4 + 1/2 (0 - 1/2) = 0.
    # D = 1/4 - 0 = 1/4; G = 1/4; delta = C_2 = 0.
    # Bernoulli: sigma^2 = 1/4 * 1/4 + 1/4 * 1/4 = 1/8.
    # Empirical: each bin has two unit weights, u = 4/(4 - 2) = 2 and
    #   mean(R^2) - Rt^2 = 1/2 - 1/4 = 1/4, so V = 1/2; sigma^2 = 1/4*1/2*2 = 1/4.
    s = [0.0, 1.0, 2.0, 3.0]
    r = [1.0, 0.0, 0.0, 1.0]
    sub = [True, False, True, False]
    out = ref.subpop_vs_full(s, r, None, sub, "bernoulli")
    assert_allclose(out["S"], [0.0, 2.0])
    assert_allclose(out["Rt"], [0.5, 0.5], **EXACT)
    assert list(out["bin_rows"]) == [2, 2]
    assert_allclose(out["a"], [0.5, 0.5], **EXACT)
    assert_allclose(out["A"], [0.0, 0.5, 1.0], **EXACT)
    assert_allclose(out["C"], [0.0, 0.25, 0.0], **EXACT)
    assert out["kuiper"] == pytest.approx(0.25, rel=1e-14)
    assert out["ks"] == pytest.approx(0.25, rel=1e-14)
    assert out["delta"] == pytest.approx(0.0, abs=1e-15)
    assert out["sigma"] == pytest.approx(math.sqrt(1 / 8), rel=1e-14)
    emp = ref.subpop_vs_full(s, r, None, sub, "empirical")
    assert_allclose(emp["V"], [0.5, 0.5], **EXACT)
    assert emp["sigma"] == pytest.approx(0.5, rel=1e-14)
    # auto: every response is 0 or 1 -> bernoulli
    assert ref.subpop_vs_full(s, r, None, sub, "auto")["variance"] == "bernoulli"


def test_hand_case_weighted_with_ties():
    # Full population (score, response, weight, in subpopulation?):
    #   (1, 2, 1, yes) (1, 5, 2, yes) (2, 0, 1, no) (3, 1, 1, yes)
    # Ties: score 1 merges rows 1-2: W' = 3, R' = (2 + 10)/3 = 4,
    #   f = (1 + 4)/9 = 5/9. Score 3: W' = 1, R' = 1, f = 1.
    # B_1 = 2. Bin 1 = rows at scores 1, 1, 2 (2 is the midpoint: lower bin):
    #   sum W = 4, sum WR = 2 + 10 + 0 = 12, Rt_1 = 3;
    #   sum WR^2 = 4 + 50 + 0 = 54, 54/4 - 9 = 4.5; sum W^2 = 6,
    #   u = 16/(16 - 6) = 1.6, V_1 = 7.2.
    # Bin 2 = the single row at 3: Rt_2 = 1, V_2 = 0 (u = 0).
    # a = [3/4, 1/4]; C_1 = 3/4 (4 - 3) = 3/4; C_2 = 3/4 + 1/4 (1 - 1) = 3/4.
    # D = 3/4, G = 3/4, delta = 3/4.
    # Empirical sigma^2 = (3/4)^2 * 7.2 * 5/9 + 0 = 9/16 * 4 = 9/4: sigma = 1.5.
    s = [1.0, 1.0, 2.0, 3.0]
    r = [2.0, 5.0, 0.0, 1.0]
    w = [1.0, 2.0, 1.0, 1.0]
    sub = [True, True, False, True]
    out = ref.subpop_vs_full(s, r, w, sub, "auto")
    assert out["variance"] == "empirical"
    assert_allclose(out["S"], [1.0, 3.0])
    assert_allclose(out["W"], [3.0, 1.0], **EXACT)
    assert_allclose(out["R"], [4.0, 1.0], **EXACT)
    assert_allclose(out["f"], [5 / 9, 1.0], **EXACT)
    assert_allclose(out["Rt"], [3.0, 1.0], **EXACT)
    assert_allclose(out["V"], [7.2, 0.0], **EXACT)
    assert_allclose(out["A"], [0.0, 0.75, 1.0], **EXACT)
    assert_allclose(out["C"], [0.0, 0.75, 0.75], **EXACT)
    assert out["kuiper"] == pytest.approx(0.75, rel=1e-14)
    assert out["ks"] == pytest.approx(0.75, rel=1e-14)
    assert out["delta"] == pytest.approx(0.75, rel=1e-14)
    assert out["sigma"] == pytest.approx(1.5, rel=1e-14)


def test_hand_case_kuiper_differs_from_ks_and_zoom():
    # Full population (score, response, in subpopulation?):
    #   (0, 1, yes) (0, 0, no) (1, 0, yes) (1, 1, no) (1, 1, no)
    # S' = [0, 1], B_1 = 1/2. Bin 1 = the two rows at 0: Rt_1 = 1/2.
    # Bin 2 = the three rows at 1: Rt_2 = 2/3.
    # C_1 = 1/2 (1 - 1/2) = 1/4; C_2 = 1/4 + 1/2 (0 - 2/3) = -1/12.
    # D = 1/4 - (-1/12) = 1/3; G = 1/4; delta = -1/12.
    # Bernoulli sigma^2 = 1/4 * 1/4 + 1/4 * 2/9 = 17/144.
    # Empirical: bin 1: u = 2, V = 2 * 1/4 = 1/2; bin 2: u = 9/6 = 3/2,
    #   mean(R^2) - Rt^2 = 2/3 - 4/9 = 2/9, V = 1/3;
    #   sigma^2 = 1/4 * 1/2 + 1/4 * 1/3 = 5/24.
    # Zoom q = 1/2: floor(2 * 1/2) = 1 point kept, a = [1], C = [0, 1/2],
    #   D = G = 1/2, Bernoulli sigma = sqrt(1/4) = 1/2 (bins unchanged).
    s = [0.0, 0.0, 1.0, 1.0, 1.0]
    r = [1.0, 0.0, 0.0, 1.0, 1.0]
    sub = [True, False, True, False, False]
    out = ref.subpop_vs_full(s, r, None, sub, "bernoulli")
    assert_allclose(out["C"], [0.0, 0.25, -1 / 12], **EXACT)
    assert out["kuiper"] == pytest.approx(1 / 3, rel=1e-14)
    assert out["ks"] == pytest.approx(0.25, rel=1e-14)
    assert out["delta"] == pytest.approx(-1 / 12, rel=1e-14)
    assert out["sigma"] == pytest.approx(math.sqrt(17) / 12, rel=1e-14)
    emp = ref.subpop_vs_full(s, r, None, sub, "empirical")
    assert_allclose(emp["V"], [0.5, 1 / 3], **EXACT)
    assert emp["sigma"] == pytest.approx(math.sqrt(5 / 24), rel=1e-14)
    for q in (0.5, 0.99):
        zoom = ref.subpop_vs_full(s, r, None, sub, "bernoulli", fraction=q)
        assert zoom["kept"] == 1
        assert_allclose(zoom["C"], [0.0, 0.5], **EXACT)
        assert zoom["kuiper"] == pytest.approx(0.5, rel=1e-14)
        assert zoom["ks"] == pytest.approx(0.5, rel=1e-14)
        assert zoom["sigma"] == pytest.approx(0.5, rel=1e-14)
    with pytest.raises(ValueError):
        ref.subpop_vs_full(s, r, None, sub, "bernoulli", fraction=0.4)  # keeps no point


def test_single_distinct_score_uses_whole_population():
    # One merged point: B_0 = -inf, B_1 = +inf, so Rt_1 is the mean of all rows.
    s = [0.1, 0.5, 0.5, 0.9]
    r = [0.0, 1.0, 1.0, 0.0]
    sub = [False, True, True, False]
    out = ref.subpop_vs_full(s, r, None, sub, "bernoulli")
    assert out["n"] == 1
    assert_allclose(out["Rt"], [0.5])
    assert_allclose(out["f"], [0.5])
    assert_allclose(out["C"], [0.0, 0.5])
    # sigma^2 = 1 * 1/4 * 1/2
    assert out["sigma"] == pytest.approx(math.sqrt(1 / 8), rel=1e-14)


def test_whole_population_as_subpopulation_has_no_deviation(make_frame, arrays):
    # Every bin then holds exactly the tied rows of its own score: Rt_k = R'_k.
    df = make_frame(3, 300, response="count", weights="float")
    s, r, w = arrays(df)
    out = ref.subpop_vs_full(s, r, w, np.ones(s.size, dtype=bool), "empirical")
    assert_allclose(out["Rt"], out["R"], rtol=1e-12)
    assert_allclose(out["C"], 0.0, atol=1e-13)


def test_empirical_variance_matches_literal_spec_formula(make_frame, arrays):
    # The reference evaluates sum(W (R - Rt)^2)/sum(W); the spec writes
    # sum(W R^2)/sum(W) - Rt^2. They must agree (up to rounding).
    df = make_frame(11, 500, response="continuous", weights="int")
    s, r, w = arrays(df)
    sub = df["g"].to_numpy() == "mid"
    out = ref.subpop_vs_full(s, r, w, sub, "empirical")
    merged_scores = out["S"]
    bounds = [-np.inf, *((merged_scores[:-1] + merged_scores[1:]) / 2), np.inf]
    for k in range(out["n"]):
        in_bin = (s > bounds[k]) & (s <= bounds[k + 1])
        sw = w[in_bin].sum()
        rt = (w[in_bin] * r[in_bin]).sum() / sw
        literal = (w[in_bin] * r[in_bin] ** 2).sum() / sw - rt**2
        u = sw**2 / (sw**2 - (w[in_bin] ** 2).sum()) if in_bin.sum() > 1 else 0.0
        assert out["Rt"][k] == pytest.approx(rt, rel=1e-12)
        assert out["V"][k] == pytest.approx(u * literal, rel=1e-8, abs=1e-12)


def test_bins_partition_the_population(make_frame, arrays):
    df = make_frame(5, 400, response="bernoulli", weights="none")
    s, r, _ = arrays(df, weight=None)
    for label in ("big", "small", "pair", "single"):
        out = ref.subpop_vs_full(s, r, None, df["g"].to_numpy() == label, "bernoulli")
        assert out["bin_rows"].sum() == s.size


def test_unweighted_abscissa_is_k_over_n(make_frame, arrays):
    df = make_frame(8, 300, response="bernoulli", weights="none")
    s, r, _ = arrays(df, weight=None)
    sub = df["g"].to_numpy() == "big"
    out = ref.subpop_vs_full(s, r, None, sub, "bernoulli")
    n = out["n"]
    # Ties merge into W' = row count, so A_k = k/n only without ties; with
    # unit weights it is the cumulative share of rows.
    counts = np.array([np.sum(s[sub] == x) for x in out["S"]])
    assert_allclose(out["A"][1:], np.cumsum(counts) / counts.sum(), rtol=1e-12)
    zoom = ref.subpop_vs_full(s, r, None, sub, "bernoulli", fraction=0.3)
    assert zoom["kept"] == math.floor(n * 0.3)
    assert zoom["A"][-1] == pytest.approx(1.0, rel=1e-14)


# --------------------------------------------------------------------------
# Section 2 by hand
# --------------------------------------------------------------------------


def test_hand_case_calibration():
    # s = [0.2, 0.2, 0.6], r = [1, 0, 1], unit weights.
    # Merged: S' = [0.2, 0.6], W' = [2, 1], R' = [1/2, 1], f = [1/2, 1].
    # a = [2/3, 1/3]; C_1 = 2/3 (0.5 - 0.2) = 0.2; C_2 = 0.2 + 1/3 (0.4) = 1/3.
    # ECCE-R = 1/3, ECCE-MAD = 1/3.
    # sigma^2 = 4/9 * 0.2 * 0.8 * 1/2 + 1/9 * 0.6 * 0.4 = (0.32 + 0.24)/9.
    out = ref.calibration([0.2, 0.2, 0.6], [1.0, 0.0, 1.0], None)
    assert_allclose(out["C"], [0.0, 0.2, 1 / 3], rtol=1e-13)
    assert out["ecce_r"] == pytest.approx(1 / 3, rel=1e-13)
    assert out["ecce_mad"] == pytest.approx(1 / 3, rel=1e-13)
    assert out["sigma"] == pytest.approx(math.sqrt(0.56) / 3, rel=1e-13)
    # Weighted: weights [1, 3, 4] -> W' = [4, 4], R' = [1/4, 1], f = [10/16, 1],
    # a = [1/2, 1/2], C_1 = 1/2 (0.05) = 0.025, C_2 = 0.025 + 0.2 = 0.225.
    out = ref.calibration([0.2, 0.2, 0.6], [1.0, 0.0, 1.0], [1.0, 3.0, 4.0])
    assert_allclose(out["C"], [0.0, 0.025, 0.225], rtol=1e-13)
    expected = 0.25 * 0.16 * 10 / 16 + 0.25 * 0.24
    assert out["sigma"] == pytest.approx(math.sqrt(expected), rel=1e-13)


# --------------------------------------------------------------------------
# Two subpopulations by hand
# --------------------------------------------------------------------------

# Subpopulation 0: (score, response, weight) = (0.1, 1, 1), (0.5, 0.5, 2).
# Subpopulation 1: (0.2, 0, 1), (0.3, 1, 1), (0.6, 0, 1), (0.6, 1, 1); the two
# rows at 0.6 merge into (0.6, 0.5, 2).
TWO = {
    "s0": [0.1, 0.5],
    "r0": [1.0, 0.5],
    "w0": [1.0, 2.0],
    "s1": [0.2, 0.3, 0.6, 0.6],
    "r1": [0.0, 1.0, 0.0, 1.0],
    "w1": [1.0, 1.0, 1.0, 1.0],
}


def test_hand_case_two_subpopulations():
    # Total weight 7. Normalized weights: sub 0: 1/7, 2/7; sub 1: 1/7, 1/7, 2/7.
    # Blocks: P_0 = {0.1} (p=1, wp=1/7), Q_0 = {0.2, 0.3} (q=1/2, wq=1/7,
    #   score 0.25), P_1 = {0.5} (p=1/2, wp=2/7), Q_1 = {0.6} (q=1/2, wq=2/7).
    # Centred on Q_0: d = ((1 - 1/2) + (1/2 - 1/2))/2 = 1/4,
    #   v = (1/7 + 2/7 + 2/7)/4 = 5/28.
    # Centred on P_1: d = ((1/2 - 1/2) + (1/2 - 1/2))/2 = 0,
    #   v = (1/7 + 4/7 + 2/7)/4 = 7/28.
    # P is subpopulation 0: no sign change. v -> [5/12, 7/12].
    # C = [0, 5/48, 5/48], A = [0, 5/12, 1]; Kuiper = KS = 5/48.
    # Empirical: e = 0 - 1/4, u = 1: sigma = 2 sqrt(1/16 * 1/16) = 1/8.
    # Score-based: t = [0.25, 0.5]:
    #   sigma = 2 sqrt(25/144 * 3/16 + 49/144 * 1/4) = sqrt(271)/24.
    # Treatment effect: entries of sub 0 (own weights 1/3, 2/3):
    #   0.1: right neighbour 0.2 (r=0): 1 - 0 = 1.
    #   0.5: left 0.3 (r=1): -1/2; right 0.6 (r=1/2): 0; average -1/4.
    #   effect_0 = 1/3 - 2/3 * 1/4 = 1/6.
    # Entries of sub 1 (own weights 1/4, 1/4, 1/2), signed 0 minus 1:
    #   0.2: left 0.1: 1 - 0 = 1; right 0.5: 1/2 - 0 = 1/2; average 3/4.
    #   0.3: left 0.1: 1 - 1 = 0; right 0.5: 1/2 - 1 = -1/2; average -1/4.
    #   0.6: left 0.5: 1/2 - 1/2 = 0.
    #   effect_1 = 3/16 - 1/16 + 0 = 1/8.
    # effect = (1/6 + 1/8)/2 = 7/48.
    out = ref.two_subpops(**TWO, variance="empirical")
    assert_allclose(out["d"], [0.25, 0.0], atol=1e-15)
    assert_allclose(out["v"], [5 / 12, 7 / 12], rtol=1e-13)
    assert_allclose(out["A"], [0.0, 5 / 12, 1.0], rtol=1e-13)
    assert_allclose(out["C"], [0.0, 5 / 48, 5 / 48], rtol=1e-13)
    assert out["kuiper"] == pytest.approx(5 / 48, rel=1e-13)
    assert out["ks"] == pytest.approx(5 / 48, rel=1e-13)
    assert out["delta"] == pytest.approx(5 / 48, rel=1e-13)
    assert out["sigma_page"] == pytest.approx(1 / 8, rel=1e-13)
    assert out["sigma"] == pytest.approx(1 / 4, rel=1e-13)
    assert out["effect"] == pytest.approx(7 / 48, rel=1e-13)
    assert_allclose(out["t"], [0.25, 0.5], rtol=1e-13)
    score = ref.two_subpops(**TWO, variance="score")
    assert score["sigma"] == pytest.approx(math.sqrt(271) / 24, rel=1e-13)


def test_two_subpopulations_sign_convention():
    # Swapping the roles of the subpopulations flips every sign.
    out = ref.two_subpops(**TWO)
    swapped = ref.two_subpops(TWO["s1"], TWO["r1"], TWO["w1"], TWO["s0"], TWO["r0"], TWO["w0"])
    assert_allclose(swapped["C"], -out["C"], atol=1e-15)
    assert swapped["kuiper"] == pytest.approx(out["kuiper"], rel=1e-13)
    assert swapped["sigma"] == pytest.approx(out["sigma"], rel=1e-13)
    assert swapped["effect"] == pytest.approx(-out["effect"], rel=1e-13)


def test_two_subpopulations_rejects_shared_scores():
    with pytest.raises(ValueError, match="1 scores"):
        ref.two_subpops([0.1, 0.5], [1, 0], None, [0.5, 0.7], [0, 1], None)


def test_two_subpopulations_constant_offset():
    # Subpopulation 0 is subpopulation 1 shifted up by 0.3 in response, with
    # interleaved scores: every centred difference is 0.3, C_k = 0.3 A_k, and
    # the treatment effect is 0.3.
    rng = np.random.default_rng(0)
    scores = np.sort(rng.uniform(0, 1, 40))
    base = 0.2 + 0.5 * scores
    s0, s1 = scores[0::2], scores[1::2]
    # a linear trend: averages of neighbours on both sides are exact
    r0, r1 = base[0::2] + 0.3, base[1::2]
    out = ref.two_subpops(s0, r0, None, s1, r1, None)
    assert_allclose(out["C"], 0.3 * out["A"], atol=0.02)
    assert out["effect"] == pytest.approx(0.3, abs=0.02)


# --------------------------------------------------------------------------
# P-values
# --------------------------------------------------------------------------


@pytest.mark.parametrize("z", [0.6, 0.8, 1.0, 1.3, 1.7, 2.2])
def test_pvalue_series_forms_agree(z):
    assert ref.ks_pvalue_naive(z, form="theta") == pytest.approx(
        ref.ks_pvalue_naive(z, form="normal"), rel=1e-13
    )
    assert ref.kuiper_pvalue_naive(z, form="theta") == pytest.approx(
        ref.kuiper_pvalue_naive(z, form="normal"), rel=1e-13
    )


@pytest.mark.slow
def test_pvalue_means():
    # E[X] = integral of P(X > x) over x >= 0.
    from scipy.integrate import quad

    ks_mean = quad(ref.ks_pvalue_naive, 0.0, 1.0)[0] + quad(ref.ks_pvalue_naive, 1.0, 12.0)[0]
    kuiper_mean = (
        quad(ref.kuiper_pvalue_naive, 0.0, 1.0)[0] + quad(ref.kuiper_pvalue_naive, 1.0, 14.0)[0]
    )
    assert ks_mean == pytest.approx(math.sqrt(math.pi / 2), rel=1e-8)
    assert kuiper_mean == pytest.approx(2 * math.sqrt(2 / math.pi), rel=1e-8)


def test_pvalue_limits_and_tail():
    assert ref.ks_pvalue_naive(0.05) == pytest.approx(1.0, abs=1e-15)
    assert ref.kuiper_pvalue_naive(0.05) == pytest.approx(1.0, abs=1e-15)
    # Far tail: the leading term dominates (4 Q(z) and 8 Q(z)).
    from scipy.special import ndtr

    for z in (8.0, 12.0):
        assert ref.ks_pvalue_naive(z) == pytest.approx(4 * ndtr(-z), rel=1e-12)
        assert ref.kuiper_pvalue_naive(z) == pytest.approx(8 * ndtr(-z), rel=1e-12)
    assert 0.0 < ref.ks_pvalue_naive(30.0) < 1e-190
    # log10 stays finite where p underflows float64; leading terms 4 Q(z), 8 Q(z).
    import mpmath

    with mpmath.workdps(40):
        log10_tail = float(mpmath.log10(mpmath.erfc(mpmath.mpf(50) / mpmath.sqrt(2)) / 2))
    assert ref.ks_pvalue_naive(50.0, log10=True) == pytest.approx(
        math.log10(4) + log10_tail, rel=1e-12
    )
    assert ref.kuiper_pvalue_naive(50.0, log10=True) == pytest.approx(
        math.log10(8) + log10_tail, rel=1e-12
    )
    assert ref.ks_pvalue_naive(2.0, log10=True) == pytest.approx(
        math.log10(ref.ks_pvalue_naive(2.0)), rel=1e-13
    )


@pytest.mark.slow
def test_pvalues_against_monte_carlo_random_walks():
    # Maximum absolute value and range of scaled Gaussian random walks.
    rng = np.random.default_rng(12345)
    steps = 2000
    walks = 8000
    maxabs = np.empty(walks)
    ranges = np.empty(walks)
    for start in range(0, walks, 1000):
        path = np.cumsum(rng.standard_normal((1000, steps)), axis=1) / math.sqrt(steps)
        path = np.concatenate([np.zeros((1000, 1)), path], axis=1)
        maxabs[start : start + 1000] = np.abs(path).max(axis=1)
        ranges[start : start + 1000] = path.max(axis=1) - path.min(axis=1)
    for z in (1.0, 1.5, 2.0):
        # Discrete walks slightly undershoot the continuous extremes: allow
        # a few standard errors plus that bias.
        assert np.mean(maxabs > z) == pytest.approx(ref.ks_pvalue_naive(z), abs=0.025)
    for z in (1.2, 1.8, 2.5):
        assert np.mean(ranges > z) == pytest.approx(ref.kuiper_pvalue_naive(z), abs=0.025)


# --------------------------------------------------------------------------
# Benjamini-Hochberg
# --------------------------------------------------------------------------


def test_bh_by_hand():
    # p = [0.01, 0.04, 0.03, 0.2], m = 4; sorted 0.01, 0.03, 0.04, 0.2;
    # m p/j = 0.04, 0.06, 0.0533.., 0.2; running minimum from the right:
    # 0.04, 0.0533.., 0.0533.., 0.2; back in input order:
    q = ref.bh_qvalues([0.01, 0.04, 0.03, 0.2])
    assert_allclose(q, [0.04, 0.16 / 3, 0.16 / 3, 0.2], rtol=1e-14)
    # Capping at 1: p = [0.9, 0.5]: m p/j = 1.0 (for 0.5), 0.9 -> both 0.9.
    assert_allclose(ref.bh_qvalues([0.9, 0.5]), [0.9, 0.9], rtol=1e-14)
    # Missing values are ignored and stay missing (m = 2 here).
    q = ref.bh_qvalues([0.02, None, 0.04])
    assert_allclose(q, [0.04, np.nan, 0.04], rtol=1e-14)


def test_bh_against_scipy():
    from scipy.stats import false_discovery_control

    p = np.random.default_rng(1).uniform(0, 0.2, 37) ** 2
    assert_allclose(ref.bh_qvalues(p), false_discovery_control(p), rtol=1e-12)
