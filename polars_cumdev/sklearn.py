"""Cumulative calibration in scikit-learn's conventions: a Display, a metric, a scorer.

Needs the optional extra ``polars-cumdev[sklearn]`` (scikit-learn >= 1.4);
``import polars_cumdev`` never imports this module or scikit-learn.

* :class:`CumulativeCalibrationDisplay` is the cumulative counterpart of
  scikit-learn's ``CalibrationDisplay``, without bins: built with
  :meth:`~CumulativeCalibrationDisplay.from_estimator` or
  :meth:`~CumulativeCalibrationDisplay.from_predictions` (sample weights
  accepted), it holds the drill-down frame of
  :func:`polars_cumdev.calibration.calibration_curve` in ``curve_`` and the
  one-row table of :func:`polars_cumdev.calibration.calibration` (ECCE-R,
  ECCE-MAD, sigma, z, p-values) in ``statistics_``; :meth:`plot` returns the
  Altair chart of :func:`polars_cumdev.charts.cumulative`.
* :func:`ecce_r_score` is a metric like ``brier_score_loss``: the ECCE-R of
  method.md 2 (the Kuiper range of the cumulative differences between
  outcomes and predicted probabilities, equation (49) of Tygert's
  "Cumulative deviation of a subpopulation from the full population",
  appendix A). Lower is better; 0 for perfect calibration.
* :data:`ecce_r_scorer` wraps it for ``scoring=`` in ``cross_val_score``,
  ``GridSearchCV`` and the rest: it scores ``predict_proba`` of the positive
  class and is negated (greater is better), as scikit-learn's loss scorers
  are (``neg_brier_score``). Sample weights reach it through metadata
  routing (``sklearn.set_config(enable_metadata_routing=True)`` and
  ``ecce_r_scorer.set_score_request(sample_weight=True)``) or directly,
  ``ecce_r_scorer(estimator, X, y, sample_weight=w)``.

Binary outcomes only; the class counted as positive is ``pos_label`` (by
default 1 for labels in {0, 1} or {-1, 1} and True for booleans, else it
must be given, as in scikit-learn's metrics).
"""

from __future__ import annotations

from typing import Any

from sklearn.base import is_classifier
from sklearn.metrics import make_scorer
from sklearn.utils.validation import check_is_fitted

from polars_cumdev.calibration import calibration
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.sklearn_display import (
    CumulativeCalibrationDisplay as CumulativeCalibrationDisplay,
)
from polars_cumdev.sklearn_display import (
    CumulativeCalibrationDisplays as CumulativeCalibrationDisplays,
)
from polars_cumdev.sklearn_inputs import _RESPONSE, _SCORE, _frame, _weight
from polars_cumdev.sklearn_recalibration import RecalibratedClassifier as RecalibratedClassifier

__all__ = [
    "CumulativeCalibrationDisplay",
    "CumulativeCalibrationDisplays",
    "RecalibratedClassifier",
    "ecce_r_score",
    "ecce_r_scorer",
]


def ecce_r_score(
    y_true: Any,
    y_prob: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
) -> float:
    """ECCE-R of predicted probabilities: the Kuiper range of cumulative miscalibration.

    The range of C_k = sum_{j<=k} a_j (R'_j - S'_j) over the predictions
    sorted by probability (equations (44)-(49) of Tygert's "Cumulative
    deviation of a subpopulation from the full population", appendix A;
    method.md 2): no bins, lower is better, 0 when perfectly calibrated.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_prob : array-like of shape (n_samples,)
        Predicted probabilities of the positive class, in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Positive weights.
    pos_label : int, float, bool or str, default=None
        The positive class; see the module docstring for the default.

    Returns
    -------
    float
        ECCE-R, in units of the outcome (the same as ``statistics_["ecce_r"]``
        of :class:`CumulativeCalibrationDisplay`).
    """
    frame = _frame(y_true, y_prob, sample_weight, pos_label)
    table = calibration(frame, _SCORE, _RESPONSE, _weight(sample_weight), engine="polars")
    return float(table.lazy().collect().item(0, "ecce_r"))


def _probability_classifier(estimator: Any, what: str) -> None:
    """Refuse an estimator without ``predict_proba``; an unfitted one raises NotFittedError."""
    if not is_classifier(estimator) or not hasattr(estimator, "predict_proba"):
        raise InvalidParameterError(
            f"{type(estimator).__name__} is not a classifier with predict_proba: {what} scores "
            "predicted probabilities (use a classifier, or CalibratedClassifierCV around it)"
        )
    check_is_fitted(estimator)


_Scorer = type(make_scorer(ecce_r_score))


class _EcceRScorer(_Scorer):  # type: ignore[misc,valid-type]
    """scikit-learn's scorer of :func:`ecce_r_score`, checking the estimator first (a
    missing ``predict_proba`` raised AttributeError from inside scikit-learn)."""

    def __call__(self, estimator: Any, *args: Any, **kwargs: Any) -> float:
        _probability_classifier(estimator, "ecce_r_scorer")
        return super().__call__(estimator, *args, **kwargs)


#: Scorer for ``scoring=``: minus :func:`ecce_r_score` of ``predict_proba``'s positive class.
ecce_r_scorer = _EcceRScorer(
    score_func=ecce_r_score, sign=-1, kwargs={}, response_method="predict_proba"
)
