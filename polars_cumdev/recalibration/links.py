"""What a recalibration's steps work on: log-odds of probabilities, or predicted means as they are.

The fit (:mod:`~polars_cumdev.recalibration.fit`) is the same for both
targets; these two classes hold what differs: the scale the steps add on
(log-odds, or the prediction's own units), the loss that judges a step
(log-loss, or squared error), the fits of the global map and of the shifts,
the way back to a score, and the audit that decides.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.multicalibration import Segments
from polars_cumdev.recalibration.means import fit_mean_map, fit_mean_shifts, mean_map_expr
from polars_cumdev.recalibration.monotone import LOGIT_BOUND, MonotoneMap, fit_monotone, logit
from polars_cumdev.recalibration.population import audit
from polars_cumdev.recalibration.shifts import fit_shifts

__all__ = ["LINKS", "Mean", "Probability"]

A = np.ndarray


class Probability:
    """Probabilities: steps on the log-odds, judged by log-loss; the probability audit."""

    name = "probability"
    loss_name = "log_loss"
    ranges: tuple[float, float] | None = (0.0, 1.0)

    def start(self, s: np.ndarray) -> np.ndarray:
        return logit(s)

    def score(self, eta: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-eta))

    def loss(self, eta: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
        eta = np.clip(eta, -LOGIT_BOUND, LOGIT_BOUND)
        return float(np.sum(w * (np.logaddexp(0.0, eta) - y * eta)) / np.sum(w))

    def fit_map(self, s: np.ndarray, y: np.ndarray, w: np.ndarray, knots: int) -> MonotoneMap:
        return fit_monotone(s, y, w, max_knots=knots)

    def mapped(self, monotone: MonotoneMap | None, s: np.ndarray) -> np.ndarray:
        """The map's log-odds of scores ``s`` (the expression's arithmetic, by Polars)."""
        if monotone is None:
            return logit(s)
        return pl.select(monotone.expr(pl.lit(pl.Series(s)))).to_series().to_numpy()

    def shifts(self, offset: A, y: A, w: A, members: A, shrinkage: float) -> np.ndarray:
        return fit_shifts(offset, y, w, members, shrinkage=shrinkage)

    def audit(self, rows: pl.DataFrame, score: str, names: tuple[str, str], family: Segments,
              level: float, method: str, seed: int) -> pl.DataFrame:  # fmt: skip
        return audit(  # no located stretch: the rounds do not use it
            rows, score, names[0], names[1], family, level=level, method=method, seed=seed,
            locate=False,
        )  # fmt: skip


class Mean(Probability):
    """Predicted means: steps in the prediction's units, judged by squared error; the mean audit."""

    name = "mean"
    loss_name = "squared_error"
    ranges = None

    def start(self, s: np.ndarray) -> np.ndarray:
        return np.asarray(s, dtype=np.float64).copy()

    def score(self, eta: np.ndarray) -> np.ndarray:
        return eta

    def loss(self, eta: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
        return float(np.sum(w * (y - eta) ** 2) / np.sum(w))

    def fit_map(self, s: np.ndarray, y: np.ndarray, w: np.ndarray, knots: int) -> MonotoneMap:
        return fit_mean_map(s, y, w, max_knots=knots)

    def mapped(self, monotone: MonotoneMap | None, s: np.ndarray) -> np.ndarray:
        if monotone is None:
            return self.start(s)
        return pl.select(mean_map_expr(monotone, pl.lit(pl.Series(s)))).to_series().to_numpy()

    def shifts(self, offset: A, y: A, w: A, members: A, shrinkage: float) -> np.ndarray:
        return fit_mean_shifts(offset, y, w, members, shrinkage=shrinkage)

    def audit(self, rows: pl.DataFrame, score: str, names: tuple[str, str], family: Segments,
              level: float, method: str, seed: int) -> pl.DataFrame:  # fmt: skip
        from polars_cumdev.recalibration.mean_audit import mean_audit

        return mean_audit(rows, score, names[0], names[1], family, level)


#: The targets recalibrate accepts.
LINKS = {"probability": Probability(), "mean": Mean()}
