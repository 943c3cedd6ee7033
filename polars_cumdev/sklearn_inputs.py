"""The labels, probabilities and weights of scikit-learn's conventions, as a frame.

Shared by the metric and scorer (:mod:`polars_cumdev.sklearn`) and the
Display (:mod:`polars_cumdev.sklearn_display`): the positive class is
``pos_label`` (refused when it is not among the labels), NaN or missing
labels are refused by count, and the result is the frame that
:func:`polars_cumdev.calibration.calibration` reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from sklearn.utils.validation import check_consistent_length, column_or_1d

from polars_cumdev.errors import InvalidParameterError, InvalidValuesError

_SCORE, _RESPONSE, _WEIGHT = "y_prob", "y_true", "sample_weight"


def _missing(y: np.ndarray) -> np.ndarray:
    """Where ``y`` holds NaN or None (object arrays compare elementwise, NaN != NaN)."""
    if y.dtype.kind in "fc":
        return np.isnan(y)
    if y.dtype.kind == "O":
        return np.asarray(y != y, dtype=bool) | np.asarray(y == None, dtype=bool)  # noqa: E711
    return np.zeros(y.shape, dtype=bool)


def _positive(y_true: Any, pos_label: Any, classes: list[Any] | None = None) -> np.ndarray:
    """The 0/1 outcome: ``y_true == pos_label``, with scikit-learn's default positive label.

    Refuses NaN or None in ``y_true``, more than two labels, and a ``pos_label``
    that is neither among the labels of ``y_true`` nor among ``classes`` (the
    estimator's, when there is one): a mistyped label would otherwise make
    every outcome 0.
    """
    y = column_or_1d(y_true)
    missing = _missing(y)
    if missing.any():
        raise InvalidValuesError(
            f"y_true holds {int(missing.sum())} NaN or missing label(s) (the first at row "
            f"{int(np.argmax(missing))}); every outcome needs a label"
        )
    try:
        labels = np.unique(y).tolist()
    except TypeError as exc:
        raise InvalidValuesError(f"y_true mixes labels of different types: {exc}") from None
    if len(labels) > 2:
        raise InvalidValuesError(
            f"y_true has {len(labels)} labels {sorted(map(str, labels))[:10]}: these helpers "
            "are for binary outcomes (two labels)"
        )
    if pos_label is None:
        if not (set(labels) <= {0, 1} or set(labels) <= {-1, 1} or set(labels) <= {False, True}):
            raise InvalidParameterError(
                f"y_true has labels {sorted(map(str, labels))}: pass `pos_label` naming the "
                "positive class (needed unless the labels are {0, 1}, {-1, 1} or booleans)"
            )
        pos_label = 1
    elif pos_label not in labels and pos_label not in (classes or []):
        known = labels if classes is None else list(classes)
        raise InvalidParameterError(
            f"pos_label {pos_label!r} is not among the labels {known!r}"
            + ("" if classes is not None else " of y_true")
            + "; every outcome would count as negative"
        )
    return (y == pos_label).astype(np.float64)


def _frame(
    y_true: Any, y_prob: Any, sample_weight: Any, pos_label: Any, classes: list[Any] | None = None
) -> pl.DataFrame:
    y = _positive(y_true, pos_label, classes)
    prob = column_or_1d(y_prob).astype(np.float64, copy=False)
    columns = {_SCORE: prob, _RESPONSE: y}
    if sample_weight is not None:
        weight = column_or_1d(sample_weight).astype(np.float64, copy=False)
        check_consistent_length(y, prob, weight)
        columns[_WEIGHT] = weight
    else:
        check_consistent_length(y, prob)
    return pl.DataFrame(columns)


def _weight(sample_weight: Any) -> str | None:
    return None if sample_weight is None else _WEIGHT


def _frame_multiclass(y_true: Any, y_prob: Any, sample_weight: Any) -> pl.DataFrame:
    """Labels and the (n, K) class probabilities, as an Array column."""
    labels = column_or_1d(y_true)
    prob = np.asarray(y_prob, dtype=np.float64)
    if prob.ndim != 2 or prob.shape[1] < 2:
        raise InvalidParameterError(
            f"with `kind`, y_prob must hold one column per class, shape (n, K); got {prob.shape}"
        )
    check_consistent_length(labels, prob)
    columns: dict[str, Any] = {_SCORE: prob, _RESPONSE: labels}
    if sample_weight is not None:
        weight = column_or_1d(sample_weight).astype(np.float64, copy=False)
        check_consistent_length(labels, weight)
        columns[_WEIGHT] = weight
    return pl.DataFrame(columns)


_KINDS = (None, "top-label", "class-wise")
