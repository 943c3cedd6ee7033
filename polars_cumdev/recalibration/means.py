"""Recalibration of predicted means (``target="mean"``): the global map and the shifts, unlinked.

A prediction of a mean is corrected on its own scale, with no link function
and no clipping (docs/method.md, "Recalibration", predicted means):

* the global step is a nondecreasing piecewise-linear map of the prediction,
  fitted as for probabilities (:mod:`~polars_cumdev.recalibration.monotone`)
  but in the prediction's own units: the weighted isotonic regression of the
  responses on the predictions (ties merged), its blocks pooled into at most
  ``max_knots`` groups of about equal weight, each group a knot at its mean
  prediction with its mean response as the value; linear between knots,
  slope one beyond the end knots;
* each corrected segment gets an additive shift; the shifts minimize the
  weighted squared error plus a ridge penalty,
  ``sum_i w_i / mean(w) (y_i - o_i - X_i d)^2 + lam v |d|^2``, with v the
  weighted mean squared residual: a normal prior of variance v / lam on each
  shift, so ``lam`` counts rows of mean weight as for probabilities.

Both keep the order of predictions within a segment (a nondecreasing map, one
shift for all of a segment's rows).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.recalibration.monotone import MonotoneMap

__all__ = ["fit_mean_map", "fit_mean_shifts", "mean_map_expr"]


def fit_mean_map(
    score: np.ndarray, y: np.ndarray, w: np.ndarray, *, max_knots: int = 32
) -> MonotoneMap:
    """The global monotone map of predicted means fitted on ``score``, ``y``, ``w``."""
    from scipy.optimize import isotonic_regression

    order = np.argsort(score, kind="stable")
    score, y, w = score[order], y[order], w[order]
    starts = np.flatnonzero(np.concatenate([[True], score[1:] != score[:-1]]))
    s, wy, ws = score[starts], np.add.reduceat(w * y, starts), np.add.reduceat(w, starts)
    fitted = isotonic_regression(wy / ws, weights=ws, increasing=True).x
    block = np.cumsum(np.concatenate([[0], (fitted[1:] != fitted[:-1]).astype(np.int64)]))
    block_w = np.bincount(block, weights=ws)
    cumulative = np.cumsum(block_w) - 0.5 * block_w
    groups = min(max_knots, block_w.shape[0])
    of_block = np.minimum((cumulative / cumulative[-1] * groups).astype(np.int64), groups - 1)
    _, of_block = np.unique(of_block, return_inverse=True)
    group = of_block[block]
    gw = np.bincount(group, weights=ws)
    knots = np.maximum.accumulate(np.bincount(group, weights=ws * s) / gw)
    values = np.maximum.accumulate(np.bincount(group, weights=wy) / gw)
    keep = np.concatenate([[True], knots[1:] > knots[:-1]])
    return MonotoneMap(tuple(float(t) for t in knots[keep]), tuple(float(v) for v in values[keep]))


def mean_map_expr(monotone: MonotoneMap, score: pl.Expr) -> pl.Expr:
    """The map of predictions ``score`` (Polars expressions only; piece found by binary search)."""
    t, v = monotone.knots, monotone.values
    intercepts, slopes = [v[0] - t[0]], [1.0]
    for k in range(len(t) - 1):
        slope = (v[k + 1] - v[k]) / (t[k + 1] - t[k])
        intercepts.append(v[k] - slope * t[k])
        slopes.append(slope)
    intercepts.append(v[-1] - t[-1])
    slopes.append(1.0)
    s = score.cast(pl.Float64)
    piece = pl.lit(pl.Series(list(t), dtype=pl.Float64)).search_sorted(s, side="right")
    a = pl.lit(pl.Series(intercepts, dtype=pl.Float64)).gather(piece)
    b = pl.lit(pl.Series(slopes, dtype=pl.Float64)).gather(piece)
    return a + b * s


def fit_mean_shifts(
    offset: np.ndarray, y: np.ndarray, w: np.ndarray, members: np.ndarray, *, shrinkage: float
) -> np.ndarray:
    """The ridge least-squares shifts of the segments ``members`` (rows x segments, 0/1)."""
    k = members.shape[1]
    if k == 0:
        return np.zeros(0)
    x = members.astype(np.float64)
    w = w / w.mean()
    r = y - offset
    v = float(np.sum(w * r * r) / np.sum(w))
    gram = (x * w[:, None]).T @ x + shrinkage * max(v, 1e-300) * np.eye(k)
    return np.linalg.solve(gram, x.T @ (w * r))
