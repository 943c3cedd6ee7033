"""Synthetic subpopulations after the paper's section "Synthetic" (figures 1, 3, 5 and 7)."""

from __future__ import annotations

import numpy as np
import polars as pl

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


#: The subpopulation examples by the paper's figure number.
SYNTHETIC_EXAMPLES = {
    "fig1": notch,
    "fig3": smooth_oscillation,
    "fig5": step_oscillation,
    "fig7": weighted_outliers,
}
