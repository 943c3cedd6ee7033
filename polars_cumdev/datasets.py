"""Example data, generated deterministically (no download, no file on disk).

Three families of loaders:

* :func:`census`, a simulated survey shaped like the American Community
  Survey example of the subpopulation paper (weighted, 41 counties);
* four synthetic subpopulation examples that follow the constructions of the
  paper's section "Synthetic" (figures 1, 3, 5 and 7): :func:`notch`,
  :func:`smooth_oscillation`, :func:`step_oscillation` and
  :func:`weighted_outliers`;
* three synthetic calibration examples in the spirit of the paper's
  appendix A: :func:`calibration_linear`, :func:`calibration_overconfident`
  and :func:`calibration_oscillating`.

The synthetic loaders return the true success probability of every row in
the column ``expected``, so the ground truth can be plotted next to what the
method recovers from the random 0/1 responses alone. The paper specifies the
scores and the subpopulation's indices exactly, and those are reproduced
exactly here; it describes the probabilities only in words, so the formulas
for ``expected`` are this package's own (each loader documents its choice).

Every loader draws from :func:`numpy.random.default_rng` with a fixed seed, so
the same call returns the same frame on every machine with the same NumPy
major version.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = [
    "CALIBRATION_EXAMPLES",
    "COUNTIES",
    "PAPER_STATISTICS",
    "SYNTHETIC_EXAMPLES",
    "calibration_linear",
    "calibration_oscillating",
    "calibration_overconfident",
    "census",
    "notch",
    "notch_indices",
    "power_indices",
    "smooth_oscillation",
    "step_oscillation",
    "weighted_outliers",
]

# Fictional county names: the data are simulated and describe no real place.
COUNTIES = (
    "Alder", "Basalt", "Cedar", "Dunmore", "Elkhorn", "Fennel", "Granite", "Harrow",
    "Ironwood", "Juniper", "Kestrel", "Larkspur", "Marlow", "Northgate", "Oakridge",
    "Pinecrest", "Quarry", "Redfern", "Saltmarsh", "Thornbury", "Umber", "Valewood",
    "Willowby", "Yarrow", "Zephyr", "Ashford", "Brackenridge", "Coldwater", "Driftwood",
    "Emberly", "Foxglove", "Glenmoor", "Hollowell", "Inverness", "Jasper", "Kingsbury",
    "Lowmoor", "Millbrook", "Nettlefield", "Orchard", "Pebblebrook",
)  # fmt: skip

# Counties whose outcomes are built to differ from similar households elsewhere,
# and how: (county, response, kind). The rest follow the statewide pattern.
DEVIATIONS = (
    ("Cedar", "has_internet", "lower below median income"),
    ("Marlow", "has_internet", "higher everywhere"),
    ("Alder", "vehicles", "fewer at high income"),
    ("Quarry", "children", "more at low income"),
)

#: Statistics printed in the papers' captions for the examples reproduced here:
#: figure -> (n, Kuiper D, D / sigma, Kolmogorov-Smirnov G, G / sigma). Our
#: probabilities and random draws differ from the paper's, so these are the
#: sizes to expect, not values to match digit for digit.
PAPER_STATISTICS = {
    "fig1": (5000, 0.2037, 34.34, 0.2033, 34.27),
    "fig28": (10_000, 0.1031, 25.25, 0.09849, 24.12),
    "fig30": (1000, 0.1195, 9.256, 0.1195, 9.256),
    "fig34": (10_000, 0.1781, 48.77, 0.1781, 48.77),
    "fig40": (10_000, 0.1475, 36.12, 0.1089, 26.67),
    "fig44": (100, 0.1483, 3.632, 0.1112, 2.723),
}


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def census(n: int = 134_094, *, seed: int = 20211) -> pl.DataFrame:
    """A survey-like household sample shaped like the paper's census example.

    Modelled on the American Community Survey analysis of Tygert, "Cumulative
    deviation of a subpopulation from the full population" (section "American
    Community Survey of the U.S. Census Bureau"): 41 counties of very different
    sizes, integer survey weights, and scores equal to log10 of household
    income. It is simulated; county names are fictional.

    Parameters
    ----------
    n
        Number of households (the default matches the paper's 134,094).
    seed
        Seed of the generator.

    Returns
    -------
    pl.DataFrame
        Columns ``county`` (String), ``log10_income`` (score, Float64, rounded
        to 3 decimals so that ties occur, as with real incomes), ``WGTP``
        (integer survey weight, Int64), ``has_internet`` (0/1), ``vehicles``
        (count), ``children`` (count) and ``rooms`` (count).

    Notes
    -----
    What screening should find: the counties listed in :data:`DEVIATIONS`
    deviate by construction (Cedar has less internet access below the median
    income, Marlow more at every income, Alder fewer vehicles at high
    income, Quarry more children at low income); all other counties follow
    the statewide relation between income and outcomes, up to noise.
    """
    rng = np.random.default_rng(seed)
    k = len(COUNTIES)
    # County sizes span two orders of magnitude (a Zipf-like law).
    share = 1.0 / np.arange(1, k + 1) ** 1.1
    share = rng.permutation(share / share.sum())
    county = rng.choice(k, size=n, p=share)
    centre = rng.normal(4.75, 0.12, size=k)
    score = np.round(rng.normal(centre[county], 0.38), 3)
    weight = np.maximum(1, np.round(rng.lognormal(3.0, 0.6, size=n))).astype(np.int64)
    names = np.asarray(COUNTIES)[county]
    median = np.median(score)

    p_internet = _logistic(3.2 * (score - 4.3))
    p_internet = np.where((names == "Cedar") & (score < median), p_internet * 0.7, p_internet)
    p_internet = np.where(names == "Marlow", np.minimum(1.0, p_internet + 0.06), p_internet)
    has_internet = (rng.uniform(size=n) < p_internet).astype(np.int64)

    vehicles_mean = np.exp(0.55 * (score - 4.0))
    vehicles_mean = np.where(
        (names == "Alder") & (score > median), vehicles_mean * 0.75, vehicles_mean
    )
    vehicles = rng.poisson(vehicles_mean)

    children_mean = 0.9 * np.exp(-0.4 * (score - 4.5) ** 2)
    children_mean = np.where(
        (names == "Quarry") & (score < median - 0.2), children_mean * 1.6, children_mean
    )
    children = rng.poisson(children_mean)
    rooms = 1 + rng.poisson(np.exp(0.45 * (score - 3.0)))

    return pl.DataFrame(
        {
            "county": names,
            "log10_income": score,
            "WGTP": weight,
            "has_internet": has_internet,
            "vehicles": vehicles,
            "children": children,
            "rooms": rooms,
        }
    )


# ---------------------------------------------------------------------------
# Synthetic subpopulation examples (section "Synthetic" of the paper)
# ---------------------------------------------------------------------------

_M = 50_000


def _grid(m: int) -> tuple[np.ndarray, np.ndarray]:
    """1-based indices j and the equispaced positions t_j = (j - 0.5) / m."""
    j = np.arange(1, m + 1, dtype=np.int64)
    return j, (j - 0.5) / m


def _frame(
    score: np.ndarray,
    expected: np.ndarray,
    member: np.ndarray,
    rng: np.random.Generator,
    weight: np.ndarray | None = None,
) -> pl.DataFrame:
    """Draw the 0/1 responses and assemble the tidy frame."""
    expected = np.clip(expected, 0.0, 1.0)
    response = (rng.uniform(size=score.size) < expected).astype(np.int64)
    columns: dict[str, object] = {
        "index": np.arange(1, score.size + 1, dtype=np.int64),
        "score": score,
        "response": response,
    }
    if weight is not None:
        columns["weight"] = weight
    columns["in_subpop"] = member
    columns["expected"] = expected
    return pl.DataFrame(columns)


def notch_indices(m: int = _M) -> np.ndarray:
    """The 1-based subpopulation indices of :func:`notch` (n = 5000 for m = 50,000).

    Every multiple of 20, refined three times around m / 2: the multiples of
    10 within m / 5 of the centre, then the multiples of 5 within m / 10, then
    the m / 100 not yet chosen indices nearest the centre (ties broken
    towards the smaller index).
    """
    j, _ = _grid(m)
    centre = m / 2
    distance = np.abs(j - centre)
    chosen = j % 20 == 0
    chosen |= (j % 10 == 0) & (distance <= m / 5)
    chosen |= (j % 5 == 0) & (distance <= m / 10)
    rest = j[~chosen]
    nearest = rest[np.lexsort((rest, np.abs(rest - centre)))[: m // 100]]
    chosen[nearest - 1] = True
    return j[chosen]


def notch(*, seed: int = 1) -> pl.DataFrame:
    """Figure 1 of the paper: a subpopulation above the rest except in a notch.

    Parameters
    ----------
    seed
        Seed of the generator for u_j and for the responses.

    Returns
    -------
    pl.DataFrame
        m rows in increasing order of score: ``index`` (j), ``score``,
        ``response`` (0/1), ``in_subpop`` (bool) and ``expected`` (P_j).

    Notes
    -----
    **How it is made.** m = 50,000 rows with scores S_j = ((j - 0.5) / m)^2, j
    = 1, ..., m, so the scores crowd near 0. The subpopulation is built as in
    the paper: every multiple of 20, refined three times around j = m / 2
    (score 0.25) -- see :func:`notch_indices` -- for n = 5000 indices.

    The probabilities are our own choice (the paper describes them only in
    words). With t = (j - 0.5) / m, a baseline b(t) = 0.35 + 0.3 t and a
    spread a(t) = 0.3 (1 - exp(-((t - 0.5) / 0.04)^2)), which vanishes in a
    narrow notch around t = 0.5, that is around the score 0.25:

    * rows outside the subpopulation belong to a continuum of groups,
      P_j = b(t) + a(t) u_j with u_j uniform on [-1, 1] (seeded);
    * subpopulation rows sit at the top of that range, P_j = b(t) + a(t).

    Responses are independent Bernoulli(P_j) draws.

    **What it should show.** The cumulative plot climbs steadily (the
    subpopulation is above the full population) except for a flat stretch
    around the score 0.25; because the subpopulation is refined there, the flat
    stretch covers a large share of the k / n axis. Kuiper's statistic is about
    0.2, some 30-35 sigma (the paper reports 0.2037 = 34.34 sigma).
    """
    rng = np.random.default_rng(seed)
    _, t = _grid(_M)
    member = np.zeros(_M, dtype=bool)
    member[notch_indices(_M) - 1] = True
    base = 0.35 + 0.3 * t
    spread = 0.3 * (1.0 - np.exp(-(((t - 0.5) / 0.04) ** 2)))
    offset = np.where(member, 1.0, rng.uniform(-1.0, 1.0, size=_M))
    return _frame(t**2, base + spread * offset, member, rng)


def power_indices(n: int = 3300) -> np.ndarray:
    """The 1-based indices of :func:`smooth_oscillation`: the lowest ``n`` distinct round(k^(4/3)).

    For k = 1, 2, ... (k^(4/3) is never exactly halfway between integers, so
    the rounding is unambiguous).
    """
    k = np.arange(1, 2 * n + 2, dtype=np.float64)
    return np.unique(np.rint(k ** (4.0 / 3.0)).astype(np.int64))[:n]


def smooth_oscillation(*, seed: int = 3) -> pl.DataFrame:
    """Figure 3 of the paper: a subpopulation oscillating smoothly across the range.

    Parameters
    ----------
    seed
        Seed of the generator for u_j and for the responses.

    Returns
    -------
    pl.DataFrame
        Columns ``index``, ``score``, ``response``, ``in_subpop``, ``expected``.

    Notes
    -----
    **How it is made.** m = 50,000 rows with equispaced scores S_j = (j - 0.5)
    / m. The subpopulation's indices are round(k^(4/3)) for k = 1, 2, ...,
    keeping the lowest n = 3300 distinct values (:func:`power_indices`), so the
    subpopulation is denser at low scores.

    Our probabilities: the full population's groups spread evenly around the
    centre c(S) = 0.45 + 0.1 S, P_j = c(S_j) + 0.4 u_j with u_j uniform on
    [-1, 1] (seeded), while the subpopulation swings smoothly from the bottom
    of that band to its top and back, P_j = c(S_j) + 0.4 sin(4 pi S_j) (two
    full periods over the range of scores).

    **What it should show.** A cumulative plot that rises and falls like a
    wave: the slope is positive where the subpopulation is above the band's
    centre and negative where it is below. The overall deviation C_n is near
    zero, yet Kuiper's statistic is large, because it measures the range of the
    curve, not its end point.
    """
    rng = np.random.default_rng(seed)
    _, t = _grid(_M)
    member = np.zeros(_M, dtype=bool)
    member[power_indices(3300) - 1] = True
    centre = 0.45 + 0.1 * t
    swing = np.where(member, np.sin(4.0 * np.pi * t), rng.uniform(-1.0, 1.0, size=_M))
    return _frame(t, centre + 0.4 * swing, member, rng)


def step_oscillation(*, seed: int = 5) -> pl.DataFrame:
    """Figure 5 of the paper: a subpopulation oscillating in discrete steps.

    Parameters
    ----------
    seed
        Seed of the generator for the permutation, u_j and the responses.

    Returns
    -------
    pl.DataFrame
        Columns ``index``, ``score``, ``response``, ``in_subpop``, ``expected``.

    Notes
    -----
    **How it is made.** m = 50,000 rows with scores S_j = sqrt((j - 0.5) / m),
    so the scores crowd near 1. The subpopulation is the first n = 2500 entries
    of a seeded random permutation of 1, ..., m, sorted.

    Our probabilities: as in :func:`smooth_oscillation` the full population
    spreads around c(S) = 0.45 + 0.1 S, P_j = c(S_j) + 0.4 u_j, but the
    subpopulation moves through five discrete levels,
    P_j = c(S_j) + 0.4 q(S_j) with q(S) = round(2 sin(4 pi S)) / 2, which
    takes the values -1, -1/2, 0, 1/2 and 1.

    **What it should show.** A cumulative plot made of straight segments whose
    slopes change abruptly where the levels change; flat segments where q = 0.
    """
    rng = np.random.default_rng(seed)
    _, t = _grid(_M)
    chosen = np.sort(rng.permutation(_M)[:2500])
    member = np.zeros(_M, dtype=bool)
    member[chosen] = True
    score = np.sqrt(t)
    level = np.round(2.0 * np.sin(4.0 * np.pi * score)) / 2.0
    swing = np.where(member, level, rng.uniform(-1.0, 1.0, size=_M))
    return _frame(score, 0.45 + 0.1 * score + 0.4 * swing, member, rng)


def weighted_outliers(*, seed: int = 7) -> pl.DataFrame:
    """Figure 7 of the paper: weighted data, a subpopulation at 0 and three heavy outliers.

    Parameters
    ----------
    seed
        Seed of the generator for the subpopulation and the responses.

    Returns
    -------
    pl.DataFrame
        Columns ``index``, ``score``, ``response``, ``weight`` (Float64),
        ``in_subpop``, ``expected``.

    Notes
    -----
    **How it is made.** m = 50,000 rows with equispaced scores S_j = (j - 0.5)
    / m and weight 1. The subpopulation is n = 2500 indices drawn uniformly at
    random without replacement (seeded), and its success probability is 0.

    Our probabilities for the rest: ten interleaved groups (j mod 10) whose
    probabilities oscillate between 0 and 0.2 with shifted phases,
    P_j = 0.1 + 0.1 sin(2 pi (4 S_j + (j mod 10) / 10)).

    Then, as in the paper, three outliers near the score 0.75: the
    subpopulation member whose score is nearest 0.75 gets probability 1 and
    weight 0.02 n = 50; the nearest rows outside the subpopulation just below
    and just above it get probabilities 0 and 1 respectively, each with
    weight 0.002 m = 100.

    **What it should show.** Against the cumulative weight A_k, the curve falls
    with slope about -0.1 (the subpopulation is below the full population
    everywhere) with a single upward jump at the score 0.75, of height about
    0.02 times the member's deviation. A binned reliability diagram, by
    contrast, is pulled around by the heavy neighbours in the bin holding 0.75
    (Remark 6 of the paper).
    """
    rng = np.random.default_rng(seed)
    n = 2500
    j, t = _grid(_M)
    member = np.zeros(_M, dtype=bool)
    member[rng.choice(_M, size=n, replace=False)] = True
    expected = np.where(member, 0.0, 0.1 + 0.1 * np.sin(2.0 * np.pi * (4.0 * t + (j % 10) / 10)))
    weight = np.ones(_M)
    members = np.flatnonzero(member)
    pivot = members[np.argmin(np.abs(t[members] - 0.75))]
    below = pivot - 1
    while member[below]:
        below -= 1
    above = pivot + 1
    while member[above]:
        above += 1
    expected[pivot], weight[pivot] = 1.0, 0.02 * n
    expected[below], weight[below] = 0.0, 0.002 * _M
    expected[above], weight[above] = 1.0, 0.002 * _M
    return _frame(t, expected, member, rng, weight)


# ---------------------------------------------------------------------------
# Synthetic calibration examples (appendix A of the paper)
# ---------------------------------------------------------------------------


def _calibration_frame(score: np.ndarray, expected: np.ndarray, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    expected = np.clip(expected, 0.0, 1.0)
    response = (rng.uniform(size=score.size) < expected).astype(np.int64)
    return pl.DataFrame({"score": score, "response": response, "expected": expected})


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise ValueError(f"`n` must be an int >= 2, got {n!r}")
    return int(n)


def calibration_linear(n: int = 10_000, *, seed: int = 28) -> pl.DataFrame:
    """Appendix A, figures 28-33: miscalibration growing linearly with the score.

    Parameters
    ----------
    n
        Number of predictions (the paper uses 10,000, 1000 and 100).
    seed
        Seed of the generator for the responses.

    Returns
    -------
    pl.DataFrame
        Columns ``score`` (S_k), ``response`` (0/1) and ``expected`` (P_k).

    Notes
    -----
    **How it is made.** Predicted probabilities S_k = (k - 0.5) / n, k = 1,
    ..., n (equispaced). Our true probabilities P_k = 0.75 S_k + 0.025:
    calibrated at 0.1, too high above it by a quarter of the distance (the
    deviation P - S is a linear function of k, as the paper describes).
    Responses are Bernoulli(P_k).

    **What it should show.** A cumulative plot shaped like a parabola, falling
    ever more steeply: after a barely visible rise below 0.1 the slope P - S
    grows linearly more negative. The statistics are close to those of the
    paper's figure 28 for n = 10,000 (ECCE-R about 0.1, some 25 sigma), figure
    30 for n = 1000 and figure 32 for n = 100.
    """
    n = _check_n(n)
    score = (np.arange(1, n + 1) - 0.5) / n
    return _calibration_frame(score, 0.75 * score + 0.025, seed)


def calibration_overconfident(n: int = 10_000, *, seed: int = 34) -> pl.DataFrame:
    """Appendix A, figures 34-39: outcomes above the predictions, with a calibrated notch.

    Parameters
    ----------
    n
        Number of predictions (the paper uses 10,000, 1000 and 100).
    seed
        Seed of the generator for the responses.

    Returns
    -------
    pl.DataFrame
        Columns ``score`` (S_k), ``response`` (0/1) and ``expected`` (P_k).

    Notes
    -----
    **How it is made.** Predicted probabilities S_k = ((k - 0.5) / n)^2, so
    they crowd near 0. Our true probabilities lie above the predictions
    everywhere, most of all around 0.25, except in a narrow perfectly
    calibrated notch at 0.25: P_k = S_k + 0.37 g(S_k) h(S_k), with the bump
    g(S) = 4 S exp(1 - 4 S) (1 - S) / 0.75 (largest near 0.25; the factor
    1 - S keeps P below 1) and the notch h(S) = 1 - exp(-((S - 0.25) / 0.02)^2).

    **What it should show.** A cumulative plot that only rises (so ECCE-R
    equals ECCE-MAD), steepest on either side of 0.25 and flat across the
    notch. At n = 10,000 ECCE-R is about 0.18, near 50 sigma, like the
    paper's figure 34 (0.1781 = 48.77 sigma).
    """
    n = _check_n(n)
    score = ((np.arange(1, n + 1) - 0.5) / n) ** 2
    bump = 4.0 * score * np.exp(1.0 - 4.0 * score) * (1.0 - score) / 0.75
    notch_ = 1.0 - np.exp(-(((score - 0.25) / 0.02) ** 2))
    return _calibration_frame(score, score + 0.37 * bump * notch_, seed)


def calibration_oscillating(n: int = 10_000, *, seed: int = 40) -> pl.DataFrame:
    """Appendix A, figures 40-45: miscalibration that changes sign several times.

    Parameters
    ----------
    n
        Number of predictions (the paper uses 10,000, 1000 and 100).
    seed
        Seed of the generator for the responses.

    Returns
    -------
    pl.DataFrame
        Columns ``score`` (S_k), ``response`` (0/1) and ``expected`` (P_k).

    Notes
    -----
    **How it is made.** Predicted probabilities S_k = sqrt((k - 0.5) / n),
    so they crowd near 1. Our true probabilities wander above and below the
    predictions: P_k = S_k + 0.8 min(S_k, 1 - S_k) sin(3.5 pi S_k), which is
    above the predictions on (0, 2/7) and (4/7, 6/7) and below them on
    (2/7, 4/7) and (6/7, 1); the factor min(S, 1 - S) keeps P within [0, 1].

    **What it should show.** A cumulative plot that goes up and down; since
    the curve does not stay on one side of 0, ECCE-R (its range) is clearly
    larger than ECCE-MAD (its largest distance from 0), as in the paper's
    figure 40. At n = 10,000 both are well over 10 sigma.
    """
    n = _check_n(n)
    score = np.sqrt((np.arange(1, n + 1) - 0.5) / n)
    wave = 0.8 * np.minimum(score, 1.0 - score) * np.sin(3.5 * np.pi * score)
    return _calibration_frame(score, score + wave, seed)


#: The subpopulation examples by the paper's figure number.
SYNTHETIC_EXAMPLES = {
    "fig1": notch,
    "fig3": smooth_oscillation,
    "fig5": step_oscillation,
    "fig7": weighted_outliers,
}

#: The calibration examples by the first of the paper's figures they follow.
CALIBRATION_EXAMPLES = {
    "fig28": calibration_linear,
    "fig34": calibration_overconfident,
    "fig40": calibration_oscillating,
}
