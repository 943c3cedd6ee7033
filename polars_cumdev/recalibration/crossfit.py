"""Cross-fitting: the rows' folds, each fold's steps fitted on the other folds, and the level spent.

Every step of :func:`~polars_cumdev.recalibration.recalibrate` is fitted
once per fold on the other folds' rows and applied to that fold's rows, so
each row's cross-fitted score comes from a fit that never saw it
(docs/method.md, "Recalibration").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.recalibration.links import Probability

__all__ = ["Folds", "audit_level", "members_of"]


def members_of(rows: pl.DataFrame, conditions: Sequence[str]) -> np.ndarray:
    """Rows x conditions: whether each row satisfies each SQL condition (null: no)."""
    if not conditions:
        return np.zeros((rows.height, 0), dtype=bool)
    names = [f"_rc_c{i}" for i in range(len(conditions))]
    inside = rows.with_columns(  # with_columns: a constant condition ("TRUE") fills every row
        [pl.sql_expr(c).fill_null(False).alias(n) for n, c in zip(names, conditions, strict=True)]
    ).select(names)
    return inside.to_numpy().astype(bool).reshape(rows.height, len(conditions))


class Folds:
    """The rows' arrays, their folds, and cross-fitted scores on the link's scale."""

    def __init__(
        self,
        rows: pl.DataFrame,
        columns: tuple[str, str, str],
        fold: np.ndarray,
        folds: int,
        link: Probability,
    ) -> None:
        self.rows, self.link = rows, link
        self.s, self.y, self.w = (rows.get_column(c).to_numpy() for c in columns)
        self.u = link.start(self.s)
        self.inside = [fold == k for k in range(folds)]
        self.offset = self.u.copy()  # cross-fitted scores of the global step
        self.offsets: list[np.ndarray] = [self.u] * folds  # fold k's map on every row
        self.columns: dict[str, np.ndarray] = {}

    def fit_map(self, max_knots: int) -> None:
        cross = np.empty_like(self.u)
        self.offsets = []
        for part in self.inside:
            rest = ~part
            fitted = self.link.fit_map(self.s[rest], self.y[rest], self.w[rest], max_knots)
            mapped = self.link.mapped(fitted, self.s)
            cross[part] = mapped[part]
            self.offsets.append(mapped)
        self.offset = cross

    def drop_map(self) -> None:
        self.offset, self.offsets = self.u.copy(), [self.u] * len(self.inside)

    def members(self, conditions: Sequence[str]) -> np.ndarray:
        missing = [c for c in conditions if c not in self.columns]
        if missing:
            for c, column in zip(missing, members_of(self.rows, missing).T, strict=True):
                self.columns[c] = column
        if not conditions:
            return np.zeros((self.rows.height, 0), dtype=bool)
        return np.stack([self.columns[c] for c in conditions], axis=1)

    def shifts(self, members: np.ndarray, shrinkage: float) -> list[np.ndarray]:
        """Per fold, the shifts fitted on the other folds."""
        out = []
        for k, part in enumerate(self.inside):
            rest = ~part
            out.append(
                self.link.shifts(
                    self.offsets[k][rest], self.y[rest], self.w[rest], members[rest], shrinkage
                )
            )
        return out

    def cross(self, members: np.ndarray, shifts: list[np.ndarray]) -> np.ndarray:
        eta = self.offset.copy()
        for part, d in zip(self.inside, shifts, strict=True):
            eta[part] += members[part] @ d
        return eta

    def loss(self, eta: np.ndarray) -> float:
        return self.link.loss(eta, self.y, self.w)


def audit_level(level: float, audit: int) -> float:
    """The level at which the ``audit``-th audit of a fit (counting from 1) is tested.

    ``level / 2**audit``: the first audit (of the raw scores) at half the
    level, each new audit at half the previous one's. Their sum is below
    ``level`` however many rounds run, so by the union bound the chance that
    any audit of the fit declares a calibrated segment significant (and so
    the chance of any false correction) is at most ``level``
    (docs/method.md, "Recalibration").
    """
    return level * 0.5**audit
