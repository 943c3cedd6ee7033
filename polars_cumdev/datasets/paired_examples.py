"""Paired examples: two responses per unit (``polars_cumdev.paired``).

* :func:`paired_synthetic` follows the synthetic setting of Kloumann,
  Korevaar, McConnell, Tygert and Zhao, "Cumulative differences between paired
  samples" (figure ``ex0``: n = 4,000 weighted pairs over m = 1,000 distinct
  scores, 0/1 responses of two populations whose expected difference changes
  sign at the median score, with a narrow band around the median where the
  two agree).
* :func:`paired_models` scores the households of :func:`census` by two
  models of internet access, so that ``by="county"`` asks where, and in which
  county, the models disagree at the same income.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.datasets.survey import census

__all__ = ["paired_models", "paired_synthetic"]


def _check_size(value: int, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"`{name}` must be an int >= {low}, got {value!r}")
    return int(value)


def paired_synthetic(n: int = 4_000, m: int = 1_000, *, seed: int = 2305) -> pl.DataFrame:
    """The paper's synthetic paired setting: a difference that changes sign at the median.

    Parameters
    ----------
    n
        Number of pairs (the paper's figures use 4,000).
    m
        Number of distinct scores (1,000 in the paper's figure ``ex0``); each
        score is shared by n / m pairs (rounded down; the rest go to the
        first scores), so ties merge as in method.md 1.1.
    seed
        Seed of the generator.

    Returns
    -------
    pl.DataFrame
        Columns ``score`` (S in (0, 1)), ``first`` and ``second`` (0/1
        responses of the two populations), ``weight`` (positive),
        ``first_expected`` and ``second_expected`` (their success
        probabilities: the ground truth).

    Notes
    -----
    **How it is made.** Scores (j - 1/2) / m, j = 1..m. The second
    population succeeds with probability 0.3 + 0.4 S; the first with that
    plus 0.15 below S = 0.45, minus 0.15 above S = 0.55, and the same
    probability in between (our formulas; the paper describes its setting in
    words). Weights are uniform on [0.5, 1.5].

    **What it should show** (the paper's finding for this setting): the
    cumulative graph rises, is flat around the median score, then falls
    back, so the average difference C_m is small next to the Kuiper range,
    which is many sigma (the paper reports 7.8 sigma).
    """
    n = _check_size(n, "n", 2)
    m = _check_size(m, "m", 2)
    if m > n:
        raise ValueError(f"`m` ({m}) cannot exceed `n` ({n})")
    rng = np.random.default_rng(seed)
    grid = (np.arange(1, m + 1) - 0.5) / m
    score = grid[np.arange(n) % m]
    second_p = 0.3 + 0.4 * score
    shift = np.where(score < 0.45, 0.15, np.where(score > 0.55, -0.15, 0.0))
    first_p = second_p + shift
    return pl.DataFrame(
        {
            "score": score,
            "first": (rng.uniform(size=n) < first_p).astype(np.int64),
            "second": (rng.uniform(size=n) < second_p).astype(np.int64),
            "weight": rng.uniform(0.5, 1.5, size=n),
            "first_expected": first_p,
            "second_expected": second_p,
        }
    )


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def paired_models(n: int = 134_094, *, seed: int = 20211) -> pl.DataFrame:
    """The households of :func:`census` scored by two models of internet access.

    Parameters
    ----------
    n, seed
        Passed to :func:`census` (the same households); the models' noise is
        drawn from ``seed + 1``.

    Returns
    -------
    pl.DataFrame
        Columns ``county``, ``log10_income`` (the score), ``WGTP`` (survey
        weight), ``has_internet`` (the observed 0/1 outcome), ``model_a`` and
        ``model_b`` (each model's predicted probability of internet access
        for the household).

    Notes
    -----
    **How it is made.** Model A is a statewide logistic curve in income,
    blind to counties; model B is a refit that knows the county "Cedar" has
    less access below the median income (as built into :func:`census`) and
    is a little less optimistic at middle incomes (log10 income between 4
    and 4.6) everywhere. Each model's prediction carries its own small
    household-level noise.

    **What it should show.** Overall, ``paired(..., "model_a", "model_b",
    variance="bernoulli")`` finds model A above model B at middle incomes
    (a located stretch inside (4, 4.6), positive deviation). By county,
    Cedar stands out with a much larger deviation at low incomes; only the
    largest counties have enough households to show the mild statewide
    disagreement on their own.
    """
    frame = census(n, seed=seed).select("county", "log10_income", "WGTP", "has_internet")
    rng = np.random.default_rng(seed + 1)
    score = frame["log10_income"].to_numpy()
    cedar = (frame["county"] == "Cedar").to_numpy()
    median = np.median(score)
    base = 3.2 * (score - 4.3)
    model_a = _logistic(base + rng.normal(0.0, 0.15, size=score.size))
    middle = (score > 4.0) & (score < 4.6)
    logit_b = np.where(middle, base - 0.2, base)
    logit_b = np.where(cedar & (score < median), logit_b - 1.5, logit_b)
    model_b = _logistic(logit_b + rng.normal(0.0, 0.15, size=score.size))
    return frame.with_columns(model_a=pl.Series(model_a), model_b=pl.Series(model_b))
