"""Smooth ECE: the calibration error of kernel-smoothed residuals (Blasiok and Nakkiran).

J. Blasiok and P. Nakkiran, "Smooth ECE: principled reliability diagrams via
kernel smoothing" (2023), replace the ECE's bins with a Gaussian kernel of
width sigma, reflected at 0 and 1 so that no mass leaves [0, 1]:

    smECE_sigma = integral over t in [0, 1] of |r_sigma(t)| delta_sigma(t) dt,

where delta_sigma is the kernel density of the predictions and r_sigma the
kernel average of the residuals (prediction minus outcome) at t. Their
automatic bandwidth is the fixed point sigma* = smECE_sigma*, found by
bisection: smECE_sigma decreases in sigma, so the fixed point is where the
line sigma meets it.

The numbers follow the discretisation of the authors' package (relplot's
``smECE``), so that the two agree: the predictions and residuals are spread
linearly onto a uniform grid of G = floor(max(2000, round(20 / sigma)) / 2) + 1
points of [0, 1]; the grid is mirrored at both ends and convolved with the
Gaussian sampled on the same spacing; the result is read off by linear
interpolation at M = max(200, round(10 / sigma)) points, where the integral
becomes the ratio of sums over those points; 1e-4 is added to the density
to avoid dividing by zero; and the bisection runs ten halvings from [0, 1]
(returning 1 when sigma = 1 already lies below smECE_1, and stopping below
sigma = 0.001). Unweighted, as there.

The binned ECE moves with the number of bins, the smooth ECE with the
bandwidth (the automatic choice is one rule for it); the ECCEs
(:mod:`polars_cumdev.calibration`) have neither.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from polars_cumdev.errors import InvalidParameterError, InvalidValuesError

__all__ = ["smooth_ece", "smooth_ece_at"]

_FLOOR = 1e-4  # added to the density before dividing by it
_SMALLEST = 0.001  # the bisection takes any width below this as the fixed point
_HALVINGS = 10


def _spread(x: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """``values`` at positions ``x`` in [0, 1], shared linearly by the two nearest grid points."""
    position = x * (size - 1)
    left = position.astype(np.int64).clip(0, size - 2)
    share = position - left
    grid = np.zeros(size)
    np.add.at(grid, left, (1.0 - share) * values)
    np.add.at(grid, left + 1, share * values)
    return grid


def _smoothed(grid: np.ndarray, sigma: float) -> np.ndarray:
    """The grid convolved with the Gaussian of width sigma, mirrored at 0 and 1."""
    from scipy.signal import fftconvolve  # imported when first used

    size = grid.size
    offsets = np.linspace(0.0, 1.0, size) - 0.5
    bump = np.exp(-offsets * offsets / (2.0 * sigma * sigma)) / (np.sqrt(2.0 * np.pi) * sigma)
    mirrored = np.concatenate([grid[::-1][:-1], grid, grid[::-1][1:]])
    full = fftconvolve(mirrored, bump, mode="valid")
    return full[size // 2 : size // 2 + size]


def _read(t: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Linear interpolation of the grid (point i at i / (size - 1)) at ``t``."""
    size = grid.size
    left = (t * (size - 1)).astype(np.int64).clip(0, size - 2)
    share = (t - left / (size - 1)) * (size - 1)
    return grid[left] * (1.0 - share) + grid[left + 1] * share


def _at(prob: np.ndarray, outcome: np.ndarray, sigma: float) -> float:
    size = max(2000, round(20.0 / sigma)) // 2 + 1
    t = np.linspace(0.0, 1.0, max(round(10.0 / sigma), 200))
    residual = _read(t, _smoothed(_spread(prob, prob - outcome, size), sigma))
    density = _read(t, _smoothed(_spread(prob, np.ones_like(prob), size), sigma)) + _FLOOR
    return float(np.sum(np.abs(residual / density) * density) / np.sum(density))


def _arrays(y_prob: Any, y_true: Any) -> tuple[np.ndarray, np.ndarray]:
    prob = np.asarray(y_prob, dtype=np.float64).ravel()
    outcome = np.asarray(y_true, dtype=np.float64).ravel()
    if prob.size != outcome.size:
        raise InvalidParameterError(
            f"{prob.size} predictions but {outcome.size} outcomes: they must pair up"
        )
    if prob.size == 0:
        raise InvalidValuesError("no prediction to measure")
    if not (np.isfinite(prob).all() and ((prob >= 0) & (prob <= 1)).all()):
        raise InvalidValuesError("predicted probabilities must be finite and in [0, 1]")
    if not (np.isfinite(outcome).all() and ((outcome >= 0) & (outcome <= 1)).all()):
        raise InvalidValuesError("outcomes must be finite and in [0, 1] (0/1 labels)")
    return prob, outcome


def smooth_ece_at(y_true: Any, y_prob: Any, bandwidth: float) -> float:
    """Smooth ECE at a given kernel width (relplot's ``smECE_sigma``).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in [0, 1] (0/1 labels).
    y_prob : array-like of shape (n,)
        Predicted probabilities in [0, 1].
    bandwidth : float
        The Gaussian kernel's width sigma, > 0.

    Returns
    -------
    float
    """
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float)) or not bandwidth > 0:
        raise InvalidParameterError(f"`bandwidth` must be a positive number, got {bandwidth!r}")
    prob, outcome = _arrays(y_prob, y_true)
    return _at(prob, outcome, float(bandwidth))


def smooth_ece(frame: pl.DataFrame | pl.LazyFrame, score: str, response: str) -> pl.DataFrame:
    """Smooth ECE with its automatic bandwidth: the fixed point sigma = smECE_sigma.

    Parameters
    ----------
    frame
        Predictions (collected if lazy).
    score
        Column of predicted probabilities in [0, 1].
    response
        Column of outcomes in [0, 1] (0/1 labels).

    Returns
    -------
    pl.DataFrame
        One row: ``n``, ``smooth_ece`` and ``bandwidth`` (the sigma used).
    """
    data = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    for name in (score, response):
        if name not in data.columns:
            from polars_cumdev.errors import ColumnNotFoundError

            raise ColumnNotFoundError(f"column {name!r} not found; the frame has {data.columns}")
    prob, outcome = _arrays(
        data.get_column(score).cast(pl.Float64).to_numpy(),
        data.get_column(response).cast(pl.Float64).to_numpy(),
    )

    def below(sigma: float) -> bool:
        return sigma < _SMALLEST or sigma < _at(prob, outcome, sigma)

    width = 1.0
    if not below(1.0):
        high, low = 1.0, 0.0
        for _ in range(_HALVINGS):
            middle = (high + low) / 2.0
            if below(middle):
                low = middle
            else:
                high = middle
        width = high
    return pl.DataFrame(
        {"n": [prob.size], "smooth_ece": [_at(prob, outcome, width)], "bandwidth": [width]}
    )
