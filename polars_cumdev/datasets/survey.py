"""The census-like survey: weighted households in 41 fictional counties (:func:`census`)."""

from __future__ import annotations

import numpy as np
import polars as pl

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

# With ``age=True``: a county of older households (whose lower broadband use
# is explained by age, not by anything local) and a county that deviates in
# one corner of (income, age): (county, response, kind).
AGE_DEVIATIONS = (
    ("Northgate", "broadband", "older households, otherwise typical"),
    ("Oakridge", "broadband", "lower for older, richer households"),
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


def census(n: int = 134_094, *, seed: int = 20211, age: bool = False) -> pl.DataFrame:
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
    age
        Also return a second covariate and a response that depends on it
        (see Notes); the other columns are the same either way.

    Returns
    -------
    pl.DataFrame
        Columns ``county`` (String), ``log10_income`` (score, Float64, rounded
        to 3 decimals so that ties occur, as with real incomes), ``WGTP``
        (integer survey weight, Int64), ``has_internet`` (0/1), ``vehicles``
        (count), ``children`` (count) and ``rooms`` (count); with
        ``age=True`` also ``age`` (of the householder, integer years 18-95)
        and ``broadband`` (0/1).

    Notes
    -----
    What screening should find: the counties listed in :data:`DEVIATIONS`
    deviate by construction (Cedar has less internet access below the median
    income, Marlow more at every income, Alder fewer vehicles at high
    income, Quarry more children at low income); all other counties follow
    the statewide relation between income and outcomes, up to noise.

    With ``age=True`` the two extra columns come from a second generator
    (seeded by ``[seed, 2]``), so every other column is bit for bit the same
    as without. Broadband use falls with age at every income. Northgate's
    householders are about 14 years older than elsewhere, so it looks low
    at a given income but typical at a given income and age; Oakridge's
    householders aged 65 or more with income above the median use broadband
    much less than similar households elsewhere (:data:`AGE_DEVIATIONS`):
    a deviation confined to one corner of the (income, age) plane.
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

    columns = {}
    if age:
        columns = _age_columns(names, score, median, seed)
    return pl.DataFrame(
        {
            "county": names,
            "log10_income": score,
            "WGTP": weight,
            "has_internet": has_internet,
            "vehicles": vehicles,
            "children": children,
            "rooms": rooms,
            **columns,
        }
    )


def _age_columns(
    names: np.ndarray, score: np.ndarray, median: float, seed: int
) -> dict[str, np.ndarray]:
    """``age`` and ``broadband`` for :func:`census` (``age=True``), from their own generator."""
    rng = np.random.default_rng([seed, 2])
    n = names.size
    centre = np.where(names == "Northgate", 64.0, 50.0) + 4.0 * (score - 4.75)
    years = np.clip(np.round(rng.normal(centre, 14.0, size=n)), 18, 95).astype(np.int64)
    p = _logistic(3.0 * (score - 4.3) - 0.07 * (years - 50.0))
    corner = (names == "Oakridge") & (years >= 65) & (score > median)
    p = np.where(corner, p * 0.35, p)
    broadband = (rng.uniform(size=n) < p).astype(np.int64)
    return {"age": years, "broadband": broadband}
