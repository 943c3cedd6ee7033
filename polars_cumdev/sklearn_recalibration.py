"""``RecalibratedClassifier``: a fitted classifier's probabilities, recalibrated as audited.

Needs the optional extra ``polars-cumdev[sklearn]``; re-exported by
:mod:`polars_cumdev.sklearn`. The wrapped estimator is fitted already (on
other rows); :meth:`RecalibratedClassifier.fit` fits
:func:`polars_cumdev.recalibration.recalibrate` on its ``predict_proba`` of
the positive class over the rows given (a calibration set), with the segment
features read from the columns of ``X``; :meth:`predict_proba` applies the fix
(:meth:`polars_cumdev.recalibration.Recalibration.expr`) to the estimator's
probabilities. Like scikit-learn's ``CalibratedClassifierCV`` with a frozen
estimator, but a segment is corrected only where the multicalibration audit
finds it miscalibrated family-wise, and the fix is ``fix_``: a table, a JSON
file, a Polars expression.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted, column_or_1d

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.multicalibration import Segments
from polars_cumdev.recalibration import recalibrate

__all__ = ["RecalibratedClassifier"]

_SCORE, _RESPONSE, _WEIGHT = "_sk_score", "_sk_response", "_sk_weight"


def _frame(X: Any) -> pl.DataFrame:  # noqa: N803  (scikit-learn's name)
    """``X`` as a Polars frame: Polars as is, pandas converted, arrays as columns x0, x1, ..."""
    if isinstance(X, pl.DataFrame):
        return X
    if hasattr(X, "columns") and hasattr(X, "iloc"):  # pandas, without importing it
        return pl.from_pandas(X)
    array = np.asarray(X)
    if array.ndim != 2:
        raise InvalidParameterError(f"X must be 2-dimensional, got shape {array.shape}")
    return pl.DataFrame({f"x{j}": array[:, j] for j in range(array.shape[1])})


class RecalibratedClassifier(ClassifierMixin, BaseEstimator):
    """A fitted binary classifier whose probabilities are recalibrated segment by segment.

    Parameters
    ----------
    estimator
        A fitted binary classifier with ``predict_proba``.
    segments
        The family audited, :func:`polars_cumdev.segments` naming columns of
        ``X`` (arrays: ``x0``, ``x1``, ...); None: the global step only.
    level, method, folds, shrinkage, max_corrections
        As in :func:`polars_cumdev.recalibration.recalibrate`.

    Attributes
    ----------
    fix_ : polars_cumdev.recalibration.Recalibration
        The fitted fix (``fix_.table``, ``fix_.to_json()``).
    classes_ : numpy.ndarray
        The estimator's two classes.
    """

    def __init__(
        self,
        estimator: Any,
        segments: Segments | None = None,
        *,
        level: float = 0.05,
        method: str = "holm",
        folds: int = 2,
        shrinkage: float = 1.0,
        max_corrections: int = 30,
    ) -> None:
        self.estimator = estimator
        self.segments = segments
        self.level = level
        self.method = method
        self.folds = folds
        self.shrinkage = shrinkage
        self.max_corrections = max_corrections

    def _positive_proba(self, X: Any) -> np.ndarray:  # noqa: N803
        try:
            check_is_fitted(self.estimator)
        except NotFittedError:
            raise NotFittedError(
                "RecalibratedClassifier wraps a fitted estimator: fit it first, on other rows "
                "than those the recalibration is fitted on"
            ) from None
        proba = np.asarray(self.estimator.predict_proba(X), dtype=np.float64)
        if proba.ndim != 2 or proba.shape[1] != 2:
            raise InvalidParameterError(
                f"the estimator's predict_proba has shape {proba.shape}; binary classifiers only"
            )
        return proba[:, 1]

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> RecalibratedClassifier:  # noqa: N803
        """Fit the recalibration on the calibration rows ``X``, ``y`` (optionally weighted)."""
        score = self._positive_proba(X)
        self.classes_ = np.asarray(self.estimator.classes_)
        labels = column_or_1d(y)
        unknown = set(np.unique(labels).tolist()) - set(self.classes_.tolist())
        if unknown:
            known = self.classes_.tolist()
            raise InvalidParameterError(
                f"y has labels {sorted(map(str, unknown))} unknown to the estimator ({known})"
            )
        frame = _frame(X).with_columns(
            pl.Series(_SCORE, score),
            pl.Series(_RESPONSE, (labels == self.classes_[1]).astype(np.float64)),
        )
        weight = None
        if sample_weight is not None:
            frame = frame.with_columns(pl.Series(_WEIGHT, column_or_1d(sample_weight)))
            weight = _WEIGHT
        self.fix_ = recalibrate(
            frame, _SCORE, _RESPONSE, weight, segments=self.segments, level=self.level,
            method=self.method, folds=self.folds, shrinkage=self.shrinkage,
            max_corrections=self.max_corrections,
        )  # fmt: skip
        return self

    def predict_proba(self, X: Any) -> np.ndarray:  # noqa: N803
        """The estimator's probabilities, recalibrated: columns for ``classes_``."""
        check_is_fitted(self, "fix_")
        frame = _frame(X).with_columns(pl.Series(_SCORE, self._positive_proba(X)))
        q = frame.select(self.fix_.expr()).to_series().to_numpy()
        return np.column_stack([1.0 - q, q])

    def predict(self, X: Any) -> np.ndarray:  # noqa: N803
        """The class with the larger recalibrated probability (the positive one at 1/2)."""
        return self.classes_[(self.predict_proba(X)[:, 1] >= 0.5).astype(int)]
