"""The global step: a monotone map of the score, fitted by isotonic regression in logit space.

The fit (docs/method.md, "Recalibration"): rows with equal scores are merged,
the weighted nondecreasing least-squares fit of the responses on the scores is
computed by pool-adjacent-violators (:func:`scipy.optimize.isotonic_regression`),
its blocks are merged, adjacent ones together, into at most ``max_knots``
groups of about equal weight (merging adjacent blocks of a nondecreasing fit
keeps it nondecreasing), and each group becomes one knot: its weighted mean
logit score, and the logit of its mean response shrunk toward its mean score
by one row's worth of weight (so that a group of all-zero or all-one responses
still maps inside (0, 1)). Between knots the map interpolates linearly in logit
space (the smoothing: no steps), and beyond the end knots it continues with
slope one, so the map is nondecreasing everywhere and strictly increasing
outside flat stretches of the fit.

The map is written as plain arithmetic on the logit of the score: the first
knot's value, plus each stretch's slope times the part of the stretch lying
below the point (``clip``), plus the overhang beyond the ends. The same
expression is evaluated when fitting and when applying, so every engine
computes the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["EPSILON", "LOGIT_BOUND", "MonotoneMap", "fit_monotone", "logit", "logit_expr"]

#: Scores are clipped to [EPSILON, 1 - EPSILON] before the logit.
EPSILON = 1e-12
#: Recalibrated log-odds are clipped to [-LOGIT_BOUND, LOGIT_BOUND]: outputs strictly in (0, 1).
LOGIT_BOUND = 30.0


def logit(p: np.ndarray) -> np.ndarray:
    """The log-odds of ``p`` clipped to [EPSILON, 1 - EPSILON]."""
    q = np.clip(np.asarray(p, dtype=np.float64), EPSILON, 1.0 - EPSILON)
    return np.log(q) - np.log1p(-q)


def logit_expr(score: pl.Expr) -> pl.Expr:
    """The expression of :func:`logit`."""
    q = score.cast(pl.Float64).clip(EPSILON, 1.0 - EPSILON)
    return q.log() - (1.0 - q).log()


@dataclass(frozen=True)
class MonotoneMap:
    """A nondecreasing piecewise-linear map of log-odds: knots ``knots`` -> ``values``.

    ``knots`` strictly increasing, ``values`` nondecreasing, the same length
    (at least one); slope one beyond the end knots.
    """

    knots: tuple[float, ...]
    values: tuple[float, ...]

    def pieces(self) -> list[tuple[float, float, float]]:
        """The map as linear pieces ``(upper, a, b)``: ``a + b u`` for scores below ``upper``.

        ``upper`` is the knot's score (the logistic function of its log-odds;
        the last piece's is 2, above every score); below the first knot and
        above the last the slope is one.
        """
        t, v = self.knots, self.values
        out = [(float(1.0 / (1.0 + np.exp(-t[0]))), v[0] - t[0], 1.0)]
        for k in range(len(t) - 1):
            slope = (v[k + 1] - v[k]) / (t[k + 1] - t[k])
            upper = float(1.0 / (1.0 + np.exp(-t[k + 1])))
            out.append((upper, v[k] - slope * t[k], slope))
        out.append((2.0, v[-1] - t[-1], 1.0))
        return out

    def expr(self, score: pl.Expr) -> pl.Expr:
        """The map of the log-odds of ``score`` (Polars expressions only).

        The log-odds are computed once; each row's piece (its intercept and
        slope) is found by a binary search of the clipped score among the
        knots' scores (``search_sorted`` of the literal knots, then
        ``gather``), so the cost hardly grows with the number of knots. At a
        knot the two pieces agree up to rounding.
        """
        q = score.cast(pl.Float64).clip(EPSILON, 1.0 - EPSILON)
        pieces = self.pieces()
        uppers = pl.Series([p[0] for p in pieces[:-1]], dtype=pl.Float64)
        piece = pl.lit(uppers).search_sorted(q, side="right")
        a = pl.lit(pl.Series([p[1] for p in pieces], dtype=pl.Float64)).gather(piece)
        b = pl.lit(pl.Series([p[2] for p in pieces], dtype=pl.Float64)).gather(piece)
        return a + b * logit_expr(score)


def _tie_merged(score: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct scores ascending, with the sums of w y and of w over each score's rows."""
    if score.shape[0] > 1 and not bool(np.all(score[1:] >= score[:-1])):
        order = np.argsort(score, kind="stable")  # the fit's rows come sorted: rarely taken
        score, y, w = score[order], y[order], w[order]
    starts = np.flatnonzero(np.concatenate([[True], score[1:] != score[:-1]]))
    return score[starts], np.add.reduceat(w * y, starts), np.add.reduceat(w, starts)


def fit_monotone(
    score: np.ndarray, y: np.ndarray, w: np.ndarray, *, max_knots: int = 32
) -> MonotoneMap:
    """The global monotone map fitted on rows ``score``, ``y``, ``w`` (see the module docstring).

    Parameters
    ----------
    score, y, w
        Scores in [0, 1], responses in [0, 1], positive weights (float64 arrays).
    max_knots
        Most knots of the piecewise-linear map.
    """
    from scipy.optimize import isotonic_regression

    s, wy, ws = _tie_merged(score, y, w)
    fitted = isotonic_regression(wy / ws, weights=ws, increasing=True).x
    starts = np.flatnonzero(np.concatenate([[True], fitted[1:] != fitted[:-1]]))
    block = np.zeros(s.shape[0], dtype=np.int64)
    block[starts[1:]] = 1
    block = np.cumsum(block)
    block_w = np.bincount(block, weights=ws)
    # adjacent blocks pooled into groups of about equal weight
    cumulative = np.cumsum(block_w) - 0.5 * block_w
    groups = min(max_knots, block_w.shape[0])
    group_of_block = np.minimum((cumulative / cumulative[-1] * groups).astype(np.int64), groups - 1)
    _, group_of_block = np.unique(group_of_block, return_inverse=True)
    group = group_of_block[block]
    u = logit(s)
    gw = np.bincount(group, weights=ws)
    gwy = np.bincount(group, weights=wy)
    gu = np.bincount(group, weights=ws * u) / gw
    prior = float(ws.sum()) / float(score.shape[0])  # one row's mean weight
    mean_score = 1.0 / (1.0 + np.exp(-gu))
    shrunk = (gwy + prior * mean_score) / (gw + prior)
    values = np.maximum.accumulate(logit(shrunk))
    knots = np.maximum.accumulate(gu)
    keep = np.concatenate([[True], knots[1:] > knots[:-1]])
    return MonotoneMap(tuple(float(t) for t in knots[keep]), tuple(float(v) for v in values[keep]))
