"""Tests of the asymptotic p-values of the normalized statistics (method.md, section 4).

Under the null, G / sigma behaves like max |B| and D / sigma like the range of
a standard Brownian motion B on [0, 1]. The checks below are, in order:
agreement of the two textbook series with each other (written out naively
here), agreement with a 50-digit mpmath evaluation, the known moments, basic
properties and edge cases, and a seeded Monte Carlo simulation of random walks.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special

from polars_cumdev.method.pvalues import ks_pvalue, kuiper_pvalue

PVALUE = {"ks": ks_pvalue, "kuiper": kuiper_pvalue}
LEAD = {"ks": 4.0, "kuiper": 8.0}  # p ~ LEAD * Q(z) for large z
KINDS = sorted(PVALUE)
SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)


# --------------------------------------------------------------------------
# Deliberately naive float64 versions of both series, with many terms.
# --------------------------------------------------------------------------

N_NAIVE = 400


def _q(x: np.ndarray) -> np.ndarray:
    """Standard normal upper tail Q(x)."""
    return 0.5 * special.erfc(x / math.sqrt(2.0))


def _naive_cdf_form(kind: str, z: np.ndarray) -> np.ndarray:
    """1 - CDF, the CDF from its theta series."""
    k = np.arange(N_NAIVE)[:, None]
    if kind == "ks":
        m = 2 * k + 1
        terms = (-1.0) ** k / m * np.exp(-(m**2) * math.pi**2 / (8.0 * z**2))
        return 1.0 - 4.0 / math.pi * terms.sum(axis=0)
    h2 = (k + 0.5) ** 2 * math.pi**2
    terms = (8.0 / z**2 + 2.0 / h2) * np.exp(-2.0 * h2 / z**2)
    return 1.0 - terms.sum(axis=0)


def _naive_tail_form(kind: str, z: np.ndarray) -> np.ndarray:
    """The survival function as an alternating series of normal tails."""
    if kind == "ks":
        k = np.arange(N_NAIVE)[:, None]
        return 4.0 * ((-1.0) ** k * _q((2 * k + 1) * z)).sum(axis=0)
    k = np.arange(1, N_NAIVE + 1)[:, None]
    return 8.0 * ((-1.0) ** (k - 1) * k * _q(k * z)).sum(axis=0)


@pytest.mark.parametrize("kind", KINDS)
def test_series_forms_agree_where_both_converge(kind: str) -> None:
    z = np.linspace(0.8, 3.0, 221)
    cdf_form = _naive_cdf_form(kind, z)
    tail_form = _naive_tail_form(kind, z)
    np.testing.assert_allclose(cdf_form, tail_form, rtol=1e-12, atol=0)
    got = PVALUE[kind](z)
    np.testing.assert_allclose(got, cdf_form, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got, tail_form, rtol=1e-12, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_one_minus_cdf_collapses_but_pvalue_does_not(kind: str) -> None:
    # The reason for the tail form: near z = 8, 1 - CDF is pure rounding noise.
    z = np.array([8.5, 9.0, 10.0])
    assert np.all(_naive_cdf_form(kind, z) <= 1e-15)
    got = PVALUE[kind](z)
    np.testing.assert_allclose(got, _naive_tail_form(kind, z), rtol=1e-12, atol=0)
    assert np.all(got > 1e-25)


# --------------------------------------------------------------------------
# 50-digit reference.
# --------------------------------------------------------------------------

DPS = 50
SPLIT = 2.0  # reference uses the CDF form below, the tail form above (not the module's split)


def _mp_q(x: mpmath.mpf) -> mpmath.mpf:
    return mpmath.erfc(x / mpmath.sqrt(2)) / 2


def _reference(kind: str, z: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(p, ln p) at DPS significant digits; terms summed until negligible."""
    with mpmath.workdps(DPS):
        x = mpmath.mpf(z)
        small = mpmath.mpf(10) ** (-(DPS + 10))
        total = mpmath.mpf(0)
        if x < SPLIT:
            k = 0
            while True:
                if kind == "ks":
                    m = 2 * k + 1
                    term = (
                        4
                        / mpmath.pi
                        * (-1) ** k
                        / m
                        * mpmath.exp(-(m**2) * mpmath.pi**2 / (8 * x**2))
                    )
                else:
                    h2 = (k + mpmath.mpf(1) / 2) ** 2 * mpmath.pi**2
                    term = (8 / x**2 + 2 / h2) * mpmath.exp(-2 * h2 / x**2)
                total += term
                if k >= 3 and abs(term) < small:
                    break
                k += 1
            return 1 - total, mpmath.log1p(-total)
        scale = _mp_q(x)
        k = 0 if kind == "ks" else 1
        while True:
            if kind == "ks":
                term = 4 * (-1) ** k * _mp_q((2 * k + 1) * x)
            else:
                term = 8 * (-1) ** (k - 1) * k * _mp_q(k * x)
            total += term
            if abs(term) < small * scale:
                break
            k += 1
        return total, mpmath.log(total)


def _relative_errors(got: np.ndarray, want: list[mpmath.mpf]) -> np.ndarray:
    with mpmath.workdps(DPS):
        return np.array(
            [float(abs((mpmath.mpf(g) - w) / w)) for g, w in zip(got, want, strict=True)]
        )


REFERENCE_GRID = np.unique(
    np.concatenate(
        [
            np.linspace(0.05, 3.0, 119),
            np.linspace(3.0, 30.0, 109),
            # both sides of the module's crossovers (1 and 1.5) and of SPLIT
            [np.nextafter(1.0, 0.0), 1.0, np.nextafter(1.5, 0.0), 1.5, 1.999, 2.001],
        ]
    )
)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow
def test_pvalue_matches_mpmath(kind: str) -> None:
    want = [_reference(kind, z)[0] for z in REFERENCE_GRID]
    errors = _relative_errors(PVALUE[kind](REFERENCE_GRID), want)
    # The contract is 1e-12; the measured maximum is about 1.5e-13 (at large z,
    # where rounding z / sqrt(2) inside erfc costs about z**2 ulps).
    assert errors.max() <= 1e-12, (REFERENCE_GRID[errors.argmax()], errors.max())


@pytest.mark.parametrize("kind", KINDS)
def test_log10_matches_mpmath(kind: str) -> None:
    z = np.concatenate([np.geomspace(0.05, 1000.0, 160), [38.0, 38.6, 100.0, 1e4]])
    got = PVALUE[kind](z, log10=True)
    assert np.all(np.isfinite(got))
    with mpmath.workdps(DPS):
        want = [_reference(kind, x)[1] / mpmath.log(10) for x in z]
        representable = np.array([abs(w) > 1e-300 for w in want])
        # Tiny z: log10 p is subnormal (about -1e-314 at z = 0.06 for the range)
        # or below the smallest double (about -1e-858 at z = 0.05): compare absolutely.
        tiny = [float(w) for w, r in zip(want, representable, strict=True) if not r]
        np.testing.assert_allclose(got[~representable], tiny, rtol=0, atol=1e-310)
        errors = _relative_errors(
            got[representable], [w for w, r in zip(want, representable, strict=True) if r]
        )
    assert errors.max() <= 1e-12, (z[representable][errors.argmax()], errors.max())


@pytest.mark.parametrize("kind", KINDS)
def test_tail_stays_positive_into_the_subnormal_range(kind: str) -> None:
    z = np.linspace(30.0, 38.0, 81)
    p = PVALUE[kind](z)
    assert np.all(np.isfinite(p)) and np.all(p > 0.0)
    assert np.all(np.diff(p) < 0.0)
    with mpmath.workdps(DPS):
        want = np.array([float(_reference(kind, x)[0]) for x in z])
    # Full relative precision while p is a normal double; in the subnormal range
    # only the absolute spacing of subnormals (~5e-324) is available.
    normal = want >= SMALLEST_NORMAL
    np.testing.assert_allclose(p[normal], want[normal], rtol=1e-12, atol=0)
    np.testing.assert_allclose(p[~normal], want[~normal], rtol=1e-12, atol=1e-322)


# --------------------------------------------------------------------------
# Moments (integrals of the survival function).
# --------------------------------------------------------------------------

BREAKS = (0.0, 1.0, 1.5, 3.0, 8.0, math.inf)  # includes the module's crossovers


def _integral(f) -> float:
    return sum(
        integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-13, limit=200)[0]
        for a, b in itertools.pairwise(BREAKS)
    )


@pytest.mark.parametrize(
    ("kind", "mean"),
    [("ks", math.sqrt(math.pi / 2.0)), ("kuiper", 2.0 * math.sqrt(2.0 / math.pi))],
)
def test_mean(kind: str, mean: float) -> None:
    # E X = integral_0^inf P(X > z) dz for X >= 0.
    assert abs(_integral(PVALUE[kind]) - mean) <= 1e-8 * mean


@pytest.mark.parametrize(
    ("kind", "second_moment"),
    [
        # E max|B|^2 = E[1 / tau] with tau the exit time of (-1, 1), whose Laplace
        # transform is 1 / cosh(sqrt(2 s)); integrating it over s gives
        # integral_0^inf u / cosh(u) du = 2 * Catalan's constant.
        ("ks", 2.0 * float(mpmath.catalan)),
        # Feller (1951): the range R of B on [0, 1] has E R^2 = 4 ln 2.
        ("kuiper", 4.0 * math.log(2.0)),
    ],
)
def test_second_moment(kind: str, second_moment: float) -> None:
    value = _integral(lambda z: 2.0 * z * PVALUE[kind](z))
    assert abs(value - second_moment) <= 1e-8 * second_moment


# --------------------------------------------------------------------------
# Properties and edge cases.
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_monotone_and_in_unit_interval(kind: str) -> None:
    z = np.concatenate([[0.0], np.geomspace(1e-3, 38.5, 20001)])
    p = PVALUE[kind](z)
    assert np.all((p >= 0.0) & (p <= 1.0))
    assert np.all(np.diff(p) <= 0.0)
    assert p[0] == 1.0 and p[1] == 1.0  # p is 1 to machine precision near 0
    z = np.geomspace(1e-2, 1e6, 5001)
    log_p = PVALUE[kind](z, log10=True)
    assert np.all(log_p <= 0.0) and np.all(np.isfinite(log_p))
    assert np.all(np.diff(log_p) <= 0.0)


@pytest.mark.parametrize("kind", KINDS)
def test_continuous_across_crossover(kind: str) -> None:
    # The two series meet without a jump: the last value from the CDF form and
    # the first from the tail form differ by at most a few ulps of p (the true
    # change over one ulp of z is below one ulp of p; each side is accurate to
    # about 2 ulps, so their order at this scale is rounding noise).
    crossover = {"ks": 1.0, "kuiper": 1.5}[kind]
    z = np.array([np.nextafter(crossover, 0.0), crossover])
    for log10 in (False, True):
        below, above = PVALUE[kind](z, log10=log10)
        assert abs(below - above) <= 4.0 * np.spacing(abs(above))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("z", [0, 0.0, -0.0, -1.0, -1e300, -math.inf])
def test_nonpositive_z_gives_one(kind: str, z: float) -> None:
    assert PVALUE[kind](z) == 1.0
    assert PVALUE[kind](z, log10=True) == 0.0
    assert math.copysign(1.0, PVALUE[kind](z, log10=True)) == 1.0  # +0.0, not -0.0


@pytest.mark.parametrize("kind", KINDS)
def test_tiny_z(kind: str) -> None:
    z = np.array([5e-324, 1e-300, 1e-10, 1e-3, 0.01])
    assert np.all(PVALUE[kind](z) == 1.0)
    log_p = PVALUE[kind](z, log10=True)
    assert np.all(log_p <= 0.0) and np.all(log_p > -1e-20)


@pytest.mark.parametrize("kind", KINDS)
def test_infinite_z(kind: str) -> None:
    assert PVALUE[kind](math.inf) == 0.0
    assert PVALUE[kind](math.inf, log10=True) == -math.inf


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "z", [1, 1.0, np.float64(1.0), np.float32(1.0), np.int64(1), np.array(1.0)]
)
def test_scalar_input_gives_python_float(kind: str, z: object) -> None:
    for log10 in (False, True):
        value = PVALUE[kind](z, log10=log10)
        assert type(value) is float
        assert value == PVALUE[kind](1.0, log10=log10)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "z",
    [
        [0.5, 1.0, 2.0],
        (3,),
        np.array([[0.5, 1.0], [2.0, 50.0]]),
        np.arange(6, dtype=np.int32).reshape(3, 1, 2),
        np.array([], dtype=np.float64),
        np.zeros((0, 3)),
    ],
)
def test_array_input_gives_float64_array_of_same_shape(kind: str, z: object) -> None:
    expected_shape = np.shape(z)
    for log10 in (False, True):
        values = PVALUE[kind](z, log10=log10)
        assert isinstance(values, np.ndarray)
        assert values.dtype == np.float64
        assert values.shape == expected_shape
        flat = np.asarray(z, dtype=np.float64).ravel()
        np.testing.assert_array_equal(
            values.ravel(), [PVALUE[kind](float(x), log10=log10) for x in flat]
        )


@pytest.mark.parametrize("kind", KINDS)
def test_nan_in_nan_out(kind: str) -> None:
    assert math.isnan(PVALUE[kind](math.nan))
    assert math.isnan(PVALUE[kind](math.nan, log10=True))
    z = np.array([np.nan, 0.0, 0.5, np.nan, 2.0, 40.0, np.inf, -1.0])
    for log10 in (False, True):
        values = PVALUE[kind](z, log10=log10)
        np.testing.assert_array_equal(np.isnan(values), np.isnan(z))
        finite = ~np.isnan(z)
        np.testing.assert_array_equal(
            values[finite], [PVALUE[kind](float(x), log10=log10) for x in z[finite]]
        )


@pytest.mark.parametrize("kind", KINDS)
def test_log10_consistent_with_pvalue(kind: str) -> None:
    z = np.geomspace(0.05, 37.0, 3001)
    p = PVALUE[kind](z)
    assert np.all(p >= SMALLEST_NORMAL)
    np.testing.assert_allclose(PVALUE[kind](z, log10=True), np.log10(p), rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("z", [100.0, 1e3, 1e4])
def test_huge_z_log10_is_finite_and_near_leading_term(kind: str, z: float) -> None:
    assert PVALUE[kind](z) == 0.0  # underflows...
    log_p = PVALUE[kind](z, log10=True)  # ...but its logarithm does not
    assert math.isfinite(log_p)
    # Leading term LEAD * Q(z) with Q(z) ~ phi(z) / z; the next Mills-ratio term
    # is a relative -1 / z**2, i.e. about -0.43 / z**2 in log10.
    leading = (math.log(LEAD[kind]) - z * z / 2.0 - math.log(z * math.sqrt(2.0 * math.pi))) / (
        math.log(10.0)
    )
    slack = 4.0 * np.spacing(abs(leading))  # rounding of two numbers near 1e7 at z = 1e4
    assert leading - 1.0 / z**2 - slack <= log_p <= leading + slack


@pytest.mark.parametrize("kind", KINDS)
def test_no_floating_point_warnings(kind: str) -> None:
    small = [np.nan, -np.inf, -1.0, 0.0, 5e-324, 1e-300, 1e-3, 0.5, 1.0, 1.5, 3.0, 38.0, 39.0]
    z = np.array([*small, 1e4, 1e8, 1.5e8, 1e154, 1e200, 1.7e308, np.inf])
    with np.errstate(all="raise"):
        p = PVALUE[kind](z)
        log_p = PVALUE[kind](z, log10=True)
    assert math.isnan(p[0]) and math.isnan(log_p[0])
    assert np.all(p[1:-1] >= p[2:]) and np.all(log_p[1:-1] >= log_p[2:])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-10.0, max_value=1e5, allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=20,
    )
)
@pytest.mark.slow
def test_array_matches_scalar_and_stays_in_range(values: list[float]) -> None:
    z = np.array(values)
    for f in PVALUE.values():
        p = f(z)
        log_p = f(z, log10=True)
        assert np.all((p >= 0.0) & (p <= 1.0))
        assert np.all(np.isfinite(log_p) & (log_p <= 0.0))
        np.testing.assert_array_equal(p, [f(x) for x in values])
        np.testing.assert_array_equal(log_p, [f(x, log10=True) for x in values])


# --------------------------------------------------------------------------
# Monte Carlo: Gaussian random walks as discretized Brownian motion.
# --------------------------------------------------------------------------

# Siegmund's constant beta = -zeta(1/2) / sqrt(2 pi): the maximum of a Gaussian
# random walk with steps of variance dt falls short of the maximum of the
# underlying Brownian path by about beta * sqrt(dt) (Siegmund 1979; Broadie,
# Glasserman & Kou 1997), so P(walk max > z) ~ P(Brownian max > z + beta sqrt(dt)).
SIEGMUND_BETA = 0.5825971579390106


@pytest.mark.slow
def test_monte_carlo_random_walks() -> None:
    walks, steps, chunk = 20_000, 2_000, 1_000
    rng = np.random.default_rng(20240519)
    highs, lows = [], []
    for _ in range(walks // chunk):
        paths = np.cumsum(rng.standard_normal((chunk, steps)), axis=1)
        highs.append(np.maximum(paths.max(axis=1), 0.0))  # B(0) = 0 is part of the path
        lows.append(np.minimum(paths.min(axis=1), 0.0))
    scale = 1.0 / math.sqrt(steps)  # B(k / steps) = (sum of k standard normals) / sqrt(steps)
    high = np.concatenate(highs) * scale
    low = np.concatenate(lows) * scale
    statistic = {"ks": np.maximum(high, -low), "kuiper": high - low}

    dt = 1.0 / steps
    # max|B| involves one extreme (the larger of max and -min): one shortfall.
    # The range max - min involves two extremes, each short by beta * sqrt(dt).
    shift = {"ks": SIEGMUND_BETA * math.sqrt(dt), "kuiper": 2.0 * SIEGMUND_BETA * math.sqrt(dt)}
    for kind in KINDS:
        for z in (1.0, 1.5, 2.0, 2.5):
            empirical = float(np.mean(statistic[kind] > z))
            p = PVALUE[kind](z)
            corrected = PVALUE[kind](z + shift[kind])
            standard_error = math.sqrt(p * (1.0 - p) / walks)
            # Without correction the bias (0.001-0.028 here) is up to ~8.5 standard
            # errors, always in the same direction: the walk misses excursions
            # between grid points, so its survival function lies below p.
            assert empirical <= p + 3.0 * standard_error, (kind, z, empirical, p)
            # With Siegmund's correction the remaining bias is o(sqrt(dt)), a few
            # 1e-4 at 2,000 steps; allow 4 binomial standard errors plus 1e-3.
            assert abs(empirical - corrected) <= 4.0 * standard_error + 1e-3, (
                kind,
                z,
                empirical,
                corrected,
                standard_error,
            )


def test_normal_tail_within_a_few_ulps_of_exact() -> None:
    # Issue 22: Q(x) from Polars' erfc with the rounding of x / sqrt 2 corrected
    # (uncorrected, the error reaches 2e-13 near x = 37), and ln Q through its
    # asymptotic series from x = 30, against 40-digit arithmetic.
    import mpmath

    from polars_cumdev.method.normal_tail import log_q, q

    x = np.concatenate([np.linspace(1.0, 37.5, 401), [29.999, 30.0, 30.001, 1e3, 1e8, 2e8]])
    with mpmath.workdps(40):
        exact = [mpmath.erfc(mpmath.mpf(float(v)) / mpmath.sqrt(2)) / 2 for v in x]
        logs = [float(mpmath.log(e)) for e in exact]
        want = np.array([float(e) for e in exact])
    finite = x < 38.0
    np.testing.assert_allclose(q(x)[finite], want[finite], rtol=8.9e-16, atol=0)
    np.testing.assert_allclose(log_q(x), logs, rtol=8.9e-16)


def test_the_default_finite_sample_cutoff_is_the_solved_critical_values() -> None:
    # method/finite_groups.py keeps these two numbers so that a small screen
    # never imports SciPy's root finder; they must be what the solver gives.
    from polars_cumdev.method import finite_groups
    from polars_cumdev.method.pvalues import ks_critical, kuiper_critical

    assert finite_groups._KUIPER_01 == kuiper_critical(0.1)
    assert finite_groups._KS_01 == ks_critical(0.1)


def test_erfc_one_by_one_equals_polars_erfc() -> None:
    """A few arguments take Python's erfc, many Polars': the same numbers, bit for bit
    (both the C library's), so that a p-value does not depend on how many are computed
    at once. Fails where the platform's two differ."""
    import polars as pl

    from polars_cumdev.method import normal_tail

    rng = np.random.default_rng(5)
    t = np.concatenate(
        [
            rng.uniform(0.0, 30.0, 20_000),
            rng.exponential(2.0, 20_000),
            rng.uniform(-6.0, 0.0, 2_000),
            [0.0, -0.0, 1e-300, 5e-324, 26.5, 27.3, 1e8, np.inf, -np.inf, np.nan],
        ]
    )
    polars = pl.Series(t, dtype=pl.Float64).erfc().to_numpy()
    small = np.concatenate([normal_tail._erfc(chunk) for chunk in np.array_split(t, 1000)])
    assert small.shape == t.shape
    np.testing.assert_array_equal(small, polars)  # (NaN where NaN)
    assert (np.signbit(small) == np.signbit(polars)).all()
    assert np.array_equal(normal_tail._erfc(t), polars, equal_nan=True)  # (Polars' pass)


@pytest.mark.parametrize("p", [1.0, 0.5, 0.049999999999999996, 2.2e-308, 5e-324, 0.0, None])
def test_benjamini_hochberg_of_one_p_value_is_that_p_value(p: float | None) -> None:
    # normalize takes q = p without keys (one row: a family of one) instead of running BH;
    # the two must be the same bits, a null included
    import polars as pl

    from polars_cumdev.method.significance import benjamini_hochberg

    frame = pl.DataFrame({"p": [p]}, schema={"p": pl.Float64})
    q = frame.select(benjamini_hochberg(pl.col("p")))["p"]
    assert q.to_list() == frame["p"].to_list()
    if p is not None:
        assert np.float64(q[0]).tobytes() == np.float64(p).tobytes()
