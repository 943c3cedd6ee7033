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

import numpy as np
import polars as pl
from sklearn.base import is_classifier
from sklearn.metrics import make_scorer
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.errors import InvalidParameterError

__all__ = ["CumulativeCalibrationDisplay", "ecce_r_score", "ecce_r_scorer"]

_SCORE, _RESPONSE, _WEIGHT = "y_prob", "y_true", "sample_weight"


def _positive(y_true: Any, pos_label: Any) -> np.ndarray:
    """The 0/1 outcome: ``y_true == pos_label``, with scikit-learn's default positive label."""
    y = column_or_1d(y_true)
    if pos_label is None:
        labels = set(np.unique(y).tolist())
        if not (labels <= {0, 1} or labels <= {-1, 1} or labels <= {False, True}):
            raise InvalidParameterError(
                f"y_true has labels {sorted(map(str, labels))}: pass `pos_label` naming the "
                "positive class (needed unless the labels are {0, 1}, {-1, 1} or booleans)"
            )
        pos_label = 1
    return (y == pos_label).astype(np.float64)


def _frame(y_true: Any, y_prob: Any, sample_weight: Any, pos_label: Any) -> pl.DataFrame:
    y = _positive(y_true, pos_label)
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


class CumulativeCalibrationDisplay:
    """Cumulative calibration plot and statistics, in scikit-learn's Display conventions.

    Build it with :meth:`from_estimator` or :meth:`from_predictions`; the
    constructor only stores what they computed.

    Parameters
    ----------
    curve : pl.DataFrame
        The frame of :func:`polars_cumdev.calibration.calibration_curve`.
    statistics : pl.DataFrame
        The one-row frame of :func:`polars_cumdev.calibration.calibration`.
    estimator_name : str, default=None
        Name of the model, used in the chart's title.
    pos_label : int, float, bool or str, default=None
        The positive class.

    Attributes
    ----------
    curve_ : pl.DataFrame
        Origin row then one row per distinct predicted probability: ``k``,
        ``a``, ``k_over_n``, ``score``, ``cumdiff``, ``sigma``, ... .
    statistics_ : pl.DataFrame
        ``n``, ``ecce_r``, ``ecce_mad``, ``sigma``, ``ecce_r_z``,
        ``ecce_r_p``, ... (method.md 2 and 4).
    chart_ : altair.LayerChart or None
        The chart of the last :meth:`plot`.
    """

    def __init__(
        self,
        curve: pl.DataFrame,
        statistics: pl.DataFrame,
        *,
        estimator_name: str | None = None,
        pos_label: Any = None,
    ) -> None:
        self.curve_ = curve
        self.statistics_ = statistics
        self.estimator_name = estimator_name
        self.pos_label = pos_label
        self.chart_: Any = None

    def plot(self, *, name: str | None = None, band: float | None = None, **kwargs: Any) -> Any:
        """The cumulative calibration chart (:func:`polars_cumdev.charts.cumulative`).

        Parameters
        ----------
        name : str, default=None
            Name of the model in the title; default ``estimator_name``.
        band : float, default=None
            Draw the band of +- z_alpha sigma at this level (e.g. 0.05).
        **kwargs
            Passed to :func:`polars_cumdev.charts.cumulative` (``width``,
            ``height``, ``title``, ...).

        Returns
        -------
        altair.LayerChart
            The chart (also kept in ``chart_``).
        """
        from polars_cumdev import charts

        name = name if name is not None else self.estimator_name
        options: dict[str, Any] = {
            "subject": f"calibration of {name}" if name else None,
            "score_label": "predicted probability",
            "y_label": "cumulative (outcome minus probability)",
            **kwargs,
        }
        self.chart_ = charts.cumulative(self.curve_, kind="calibration", band=band, **options)
        return self.chart_

    @classmethod
    def from_predictions(
        cls,
        y_true: Any,
        y_prob: Any,
        *,
        sample_weight: Any = None,
        pos_label: Any = None,
        name: str | None = None,
        fraction: float = 1.0,
    ) -> CumulativeCalibrationDisplay:
        """Display from true labels and predicted probabilities.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True binary labels.
        y_prob : array-like of shape (n_samples,)
            Predicted probabilities of the positive class, in [0, 1].
        sample_weight : array-like of shape (n_samples,), default=None
            Positive weights.
        pos_label : int, float, bool or str, default=None
            The positive class (see the module docstring).
        name : str, default=None
            Name of the model, for the chart.
        fraction : float, default=1.0
            Remark 3's zoom of the curve (method.md 1.7).

        Returns
        -------
        CumulativeCalibrationDisplay
        """
        frame = _frame(y_true, y_prob, sample_weight, pos_label)
        weight = _weight(sample_weight)
        curve = calibration_curve(frame, _SCORE, _RESPONSE, weight, fraction=fraction)
        statistics = calibration(frame, _SCORE, _RESPONSE, weight)
        return cls(
            curve.lazy().collect(),
            statistics.lazy().collect(),
            estimator_name=name,
            pos_label=pos_label,
        )

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,  # noqa: N803  (scikit-learn's name)
        y: Any,
        *,
        sample_weight: Any = None,
        pos_label: Any = None,
        name: str | None = None,
        fraction: float = 1.0,
    ) -> CumulativeCalibrationDisplay:
        """Display from a fitted binary classifier's ``predict_proba`` on ``X``.

        Parameters
        ----------
        estimator : fitted classifier or Pipeline with ``predict_proba``
            Binary: ``classes_`` has two labels.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Input values.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Positive weights.
        pos_label : int, float, bool or str, default=None
            The positive class; default the estimator's ``classes_[1]``.
        name : str, default=None
            Name of the model; default the estimator's class name.
        fraction : float, default=1.0
            Remark 3's zoom of the curve.

        Returns
        -------
        CumulativeCalibrationDisplay
        """
        if not is_classifier(estimator) or not hasattr(estimator, "predict_proba"):
            raise InvalidParameterError(
                f"{type(estimator).__name__} is not a classifier with predict_proba"
            )
        check_is_fitted(estimator)
        classes = list(estimator.classes_)
        if len(classes) != 2:
            raise InvalidParameterError(
                f"the estimator has {len(classes)} classes {classes}; this display is for "
                "binary classifiers"
            )
        pos_label = classes[1] if pos_label is None else pos_label
        if pos_label not in classes:
            raise InvalidParameterError(f"pos_label {pos_label!r} is not among {classes}")
        y_prob = estimator.predict_proba(X)[:, classes.index(pos_label)]
        return cls.from_predictions(
            y,
            y_prob,
            sample_weight=sample_weight,
            pos_label=pos_label,
            name=name if name is not None else type(estimator).__name__,
            fraction=fraction,
        )
