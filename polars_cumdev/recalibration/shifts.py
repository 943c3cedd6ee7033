"""The segment step: additive log-odds shifts of chosen segments, fitted jointly and shrunk.

Given each row's log-odds after the steps so far (the offset o), its response
y in [0, 1], its weight w and its membership X (rows x chosen segments, 0/1),
the shifts d minimize the weighted Bernoulli deviance plus a ridge penalty,

    sum_i w_i / mean(w) * ( log(1 + exp(o_i + X_i d)) - y_i (o_i + X_i d) ) + (lam / 2) |d|^2,

a logistic regression with offset (docs/method.md, "Recalibration"). The
penalty is the log-density of a normal prior on each shift with variance
1 / lam (in rows of mean weight): it pulls the shift of a segment with little
information toward zero, and leaves a large segment's almost untouched. The
problem is strictly convex; Newton's method with step halving solves it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit_shifts"]


def _objective(o: np.ndarray, y: np.ndarray, w: np.ndarray, lam: float, d: np.ndarray) -> float:
    eta = o
    return float(np.sum(w * (np.logaddexp(0.0, eta) - y * eta)) + 0.5 * lam * float(d @ d))


def fit_shifts(
    offset: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    members: np.ndarray,
    *,
    shrinkage: float,
    tolerance: float = 1e-10,
    max_iterations: int = 100,
) -> np.ndarray:
    """The penalized maximum-likelihood shifts (see the module docstring).

    Parameters
    ----------
    offset, y, w
        Per row: log-odds so far, response, weight (float64 arrays).
    members
        Boolean array rows x segments.
    shrinkage
        The ridge penalty ``lam`` (> 0).

    Returns
    -------
    numpy.ndarray
        One shift per segment (column of ``members``).
    """
    k = members.shape[1]
    d = np.zeros(k)
    if k == 0:
        return d
    x = members.astype(np.float64)
    w = w / w.mean()
    eta = offset.copy()
    current = _objective(eta, y, w, shrinkage, d)
    for _ in range(max_iterations):
        p = 1.0 / (1.0 + np.exp(-eta))
        gradient = x.T @ (w * (p - y)) + shrinkage * d
        hessian = (x * (w * p * (1.0 - p))[:, None]).T @ x + shrinkage * np.eye(k)
        step = np.linalg.solve(hessian, gradient)
        t = 1.0
        while True:
            trial = d - t * step
            trial_eta = offset + x @ trial
            value = _objective(trial_eta, y, w, shrinkage, trial)
            if value <= current or t < 1e-8:
                break
            t *= 0.5
        d, eta, previous, current = trial, trial_eta, current, value
        if np.max(np.abs(t * step)) < tolerance or previous - current < tolerance * 1e-3:
            break
    return d
