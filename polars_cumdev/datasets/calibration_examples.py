"""Synthetic calibration examples in the spirit of the paper's appendix A."""

from __future__ import annotations

import numpy as np
import polars as pl

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


#: The calibration examples by the first of the paper's figures they follow.
CALIBRATION_EXAMPLES = {
    "fig28": calibration_linear,
    "fig34": calibration_overconfident,
    "fig40": calibration_oscillating,
}
