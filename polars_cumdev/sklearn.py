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
from polars_cumdev.errors import InvalidParameterError, InvalidValuesError

__all__ = [
    "CumulativeCalibrationDisplay",
    "CumulativeCalibrationDisplays",
    "ecce_r_score",
    "ecce_r_scorer",
]

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


def _matplotlib_axes(ax: Any) -> Any:
    """``ax`` if it is a matplotlib Axes; matplotlib is imported only here, when ``ax`` is given."""
    try:
        from matplotlib.axes import Axes
    except ImportError:
        raise InvalidParameterError(
            "`ax=` draws into a matplotlib Axes, and matplotlib is not installed: "
            "`pip install matplotlib`, or leave `ax` out for the Altair chart"
        ) from None
    if not isinstance(ax, Axes):
        raise InvalidParameterError(
            f"`ax` must be a matplotlib Axes, got {type(ax).__name__}; to put several "
            "displays on one Altair chart, add them: (display_a + display_b).plot()"
        )
    return ax


class CumulativeCalibrationDisplay:
    """Cumulative calibration plot and statistics, in scikit-learn's Display conventions.

    Build it with :meth:`from_estimator` or :meth:`from_predictions`; the
    constructor only stores what they computed. Several models on one chart:
    add their displays, ``(display_a + display_b).plot()`` (an Altair chart
    with one colour per model, :func:`polars_cumdev.charts.overlay`), or
    draw them into one matplotlib Axes, ``display_b.plot(ax=display_a.ax_)``.

    Parameters
    ----------
    curve : pl.DataFrame
        The frame of :func:`polars_cumdev.calibration.calibration_curve`.
    statistics : pl.DataFrame
        The frame of :func:`polars_cumdev.calibration.calibration` (one row;
        one per class with ``kind="class-wise"``).
    estimator_name : str, default=None
        Name of the model: the chart's title and legend.
    pos_label : int, float, bool or str, default=None
        The positive class (binary).
    kind : {None, "top-label", "class-wise"}, default=None
        The multiclass calibration drawn (:mod:`polars_cumdev.calibration.multiclass`).

    Attributes
    ----------
    curve_ : pl.DataFrame
        Origin row then one row per distinct predicted probability: ``k``,
        ``a``, ``k_over_n``, ``score``, ``cumdiff``, ``sigma``, ... (with
        ``class`` first for ``kind="class-wise"``).
    statistics_ : pl.DataFrame
        ``n``, ``ecce_r``, ``ecce_mad``, ``sigma``, ``ecce_r_z``,
        ``ecce_r_p``, ... (method.md 2 and 4).
    chart_ : altair.LayerChart or None
        The chart of the last :meth:`plot` without ``ax``.
    ax_, figure_, line_ : matplotlib objects or None
        Set by :meth:`plot` with ``ax``: the Axes, its Figure and the line
        (the last one drawn, for ``kind="class-wise"``).
    """

    def __init__(
        self,
        curve: pl.DataFrame,
        statistics: pl.DataFrame,
        *,
        estimator_name: str | None = None,
        pos_label: Any = None,
        kind: str | None = None,
    ) -> None:
        if kind not in _KINDS:
            raise InvalidParameterError(f"`kind` must be one of {_KINDS}, got {kind!r}")
        self.curve_ = curve
        self.statistics_ = statistics
        self.estimator_name = estimator_name
        self.pos_label = pos_label
        self.kind = kind
        self.chart_: Any = None
        self.ax_: Any = None
        self.figure_: Any = None
        self.line_: Any = None

    def __add__(self, other: object) -> CumulativeCalibrationDisplays:
        return CumulativeCalibrationDisplays([self]) + other

    def plot(
        self,
        *,
        ax: Any = None,
        name: str | None = None,
        band: float | None = None,
        **kwargs: Any,
    ) -> Any:
        """The cumulative calibration chart (:func:`polars_cumdev.charts.cumulative`).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Draw into this Axes with matplotlib (which must be installed;
            it is imported only then) and return the display, as
            scikit-learn's displays do; the curve is labelled ``name`` for
            ``ax.legend()``. Default: return an Altair chart.
        name : str, default=None
            Name of the model (the title, or the legend's label with ``ax``);
            default ``estimator_name``.
        band : float, default=None
            Draw the band of +- z_alpha sigma at this level (e.g. 0.05;
            Altair only).
        **kwargs
            Passed to :func:`polars_cumdev.charts.cumulative` (``width``,
            ``height``, ``title``, ...), or to matplotlib's ``ax.plot`` with
            ``ax``.

        Returns
        -------
        altair.LayerChart or CumulativeCalibrationDisplay
            The chart (also kept in ``chart_``); with ``ax``, the display.
        """
        from polars_cumdev import charts

        name = name if name is not None else self.estimator_name
        if ax is not None:
            return self._draw(_matplotlib_axes(ax), name, kwargs)
        if self.kind == "class-wise":
            self.chart_ = charts.calibration_classes(self.curve_, band=band, **kwargs)
            return self.chart_
        top = self.kind == "top-label"
        options: dict[str, Any] = {
            "subject": f"calibration of {name}" if name else None,
            "score_label": "top predicted probability" if top else "predicted probability",
            "y_label": (
                "cumulative (top label right minus its probability)"
                if top
                else "cumulative (outcome minus probability)"
            ),
            **kwargs,
        }
        self.chart_ = charts.cumulative(self.curve_, kind="calibration", band=band, **options)
        return self.chart_

    def _draw(self, ax: Any, name: str | None, kwargs: dict[str, Any]) -> Any:
        """Matplotlib: each curve against A_k, with its triangle of +- 2 sigma at the origin."""
        from polars_cumdev.charts._layers import TRIANGLE_APEX

        if self.kind == "class-wise":
            parts = [
                (
                    f"{name}, class {c}" if name else f"class {c}",
                    self.curve_.filter(pl.col("class") == c),
                )
                for c in self.curve_.get_column("class").unique(maintain_order=True).to_list()
            ]
        else:
            parts = [(name, self.curve_)]
        for label, curve in parts:
            (line,) = ax.plot(
                curve.get_column("a").to_numpy(),
                curve.get_column("cumdiff").to_numpy(),
                label=label,
                **kwargs,
            )
            sigma = curve.get_column("sigma").drop_nulls()
            if sigma.len() and sigma[0] > 0:
                s = 2.0 * float(sigma[0])
                ax.plot(
                    [0.0, TRIANGLE_APEX, 0.0, 0.0],
                    [-s, 0.0, s, -s],
                    color=line.get_color(),
                    linewidth=0.8,
                )
            self.line_ = line
        ax.set_xlabel("cumulative share of the predictions (A_k)")
        ax.set_ylabel("cumulative (outcome minus probability)")
        self.ax_, self.figure_ = ax, ax.figure
        return self

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
        kind: str | None = None,
        classes: Any = None,
    ) -> CumulativeCalibrationDisplay:
        """Display from true labels and predicted probabilities.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels: binary, or any of the classes with ``kind``.
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probabilities of the positive class, in [0, 1]; with
            ``kind``, one column per class (``predict_proba``'s output).
        sample_weight : array-like of shape (n_samples,), default=None
            Positive weights.
        pos_label : int, float, bool or str, default=None
            The positive class (see the module docstring); binary only.
        name : str, default=None
            Name of the model, for the chart's title and legend.
        fraction : float, default=1.0
            Remark 3's zoom of the curve (method.md 1.7).
        kind : {None, "top-label", "class-wise"}, default=None
            Multiclass calibration: the top probability against "the top
            class was right", or every class's probability against "the
            label is that class" (one curve per class).
        classes : array-like, default=None
            With ``kind``: the class of each column of ``y_prob`` (default:
            the column index 0..K-1), as an estimator's ``classes_``.

        Returns
        -------
        CumulativeCalibrationDisplay
        """
        if kind not in _KINDS:
            raise InvalidParameterError(f"`kind` must be one of {_KINDS}, got {kind!r}")
        if kind is None:
            frame = _frame(y_true, y_prob, sample_weight, pos_label)
            options: dict[str, Any] = {}
        else:
            if pos_label is not None:
                raise InvalidParameterError(
                    "`pos_label` names the positive class of a binary display; "
                    "with `kind`, every class is drawn"
                )
            frame = _frame_multiclass(y_true, y_prob, sample_weight)
            options = {"kind": kind}
            if classes is not None:
                options["classes"] = list(classes)
        return cls._from_frame(frame, sample_weight, pos_label, name, fraction, kind, options)

    @classmethod
    def _from_frame(
        cls,
        frame: pl.DataFrame,
        sample_weight: Any,
        pos_label: Any,
        name: Any,
        fraction: float,
        kind: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> CumulativeCalibrationDisplay:
        options = options or {}
        weight = _weight(sample_weight)
        curve = calibration_curve(frame, _SCORE, _RESPONSE, weight, fraction=fraction, **options)
        statistics = calibration(frame, _SCORE, _RESPONSE, weight, **options)
        return cls(
            curve.lazy().collect(),
            statistics.lazy().collect(),
            estimator_name=name,
            pos_label=pos_label,
            kind=kind,
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
        kind: str | None = None,
    ) -> CumulativeCalibrationDisplay:
        """Display from a fitted classifier's ``predict_proba`` on ``X``.

        Parameters
        ----------
        estimator : fitted classifier or Pipeline with ``predict_proba``
            Binary (``classes_`` has two labels), or any number of classes
            with ``kind``.
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
        kind : {None, "top-label", "class-wise"}, default=None
            Multiclass calibration (see :meth:`from_predictions`); needed
            for more than two classes.

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
        name = name if name is not None else type(estimator).__name__
        if kind is not None:
            return cls.from_predictions(
                y,
                estimator.predict_proba(X),
                sample_weight=sample_weight,
                pos_label=pos_label,
                name=name,
                fraction=fraction,
                kind=kind,
                classes=classes,
            )
        if len(classes) != 2:
            raise InvalidParameterError(
                f"the estimator has {len(classes)} classes {classes}, not binary: pass "
                "kind='top-label' or kind='class-wise' for a multiclass display"
            )
        pos_label = classes[1] if pos_label is None else pos_label
        if pos_label not in classes:
            raise InvalidParameterError(f"pos_label {pos_label!r} is not among {classes}")
        y_prob = estimator.predict_proba(X)[:, classes.index(pos_label)]
        # The estimator's classes count as labels: a test set of one class is fine.
        frame = _frame(y, y_prob, sample_weight, pos_label, classes)
        return cls._from_frame(frame, sample_weight, pos_label, name, fraction)


class CumulativeCalibrationDisplays:
    """Several displays drawn on one chart: what ``display_a + display_b`` returns.

    Parameters
    ----------
    displays : list of CumulativeCalibrationDisplay
        Binary or top-label displays, one per model; their names (the
        legend) must differ.
    """

    def __init__(self, displays: list[CumulativeCalibrationDisplay]) -> None:
        self.displays = list(displays)
        self.chart_: Any = None

    def __add__(self, other: object) -> CumulativeCalibrationDisplays:
        if isinstance(other, CumulativeCalibrationDisplay):
            return CumulativeCalibrationDisplays([*self.displays, other])
        if isinstance(other, CumulativeCalibrationDisplays):
            return CumulativeCalibrationDisplays([*self.displays, *other.displays])
        return NotImplemented

    def _names(self) -> list[str]:
        names = [d.estimator_name or f"model {i + 1}" for i, d in enumerate(self.displays)]
        if len(set(names)) != len(names):
            raise InvalidParameterError(
                f"the displays' names {names} repeat; give each a `name=` for the legend"
            )
        if any(d.kind == "class-wise" for d in self.displays):
            raise InvalidParameterError(
                "a class-wise display draws one chart per class; add binary or top-label displays"
            )
        return names

    def plot(self, *, ax: Any = None, **kwargs: Any) -> Any:
        """All the curves on one chart, one colour per model, each with its ECCE-R.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Draw every curve into this Axes (see
            :meth:`CumulativeCalibrationDisplay.plot`) and return self.
        **kwargs
            Passed to :func:`polars_cumdev.charts.overlay` (``title``,
            ``width``, ...).

        Returns
        -------
        altair.LayerChart or CumulativeCalibrationDisplays
        """
        from polars_cumdev import charts
        from polars_cumdev.charts.numbers import p_text

        names = self._names()
        if ax is not None:
            ax = _matplotlib_axes(ax)
            for display, name in zip(self.displays, names, strict=True):
                display.plot(ax=ax, name=name)
            ax.legend()
            return self
        curves = pl.concat(
            [
                d.curve_.select("a", "cumdiff", "sigma").with_columns(pl.lit(name).alias("model"))
                for d, name in zip(self.displays, names, strict=True)
            ]
        )
        lines = []
        for d, name in zip(self.displays, names, strict=True):
            row = d.statistics_.row(0, named=True)
            z, p = row.get("ecce_r_z"), row.get("ecce_r_p")
            noise = ""
            if z is not None and p is not None:
                shown = p_text(p)
                shown = shown if shown.startswith("<") else f"= {shown}"
                noise = f" = {z:.3g}\N{GREEK SMALL LETTER SIGMA}, p {shown}"
            lines.append(f"{name}: ECCE-R {row['ecce_r']:.4g}{noise}")
        self.chart_ = charts.overlay(curves, subtitle=lines, **kwargs)
        return self.chart_


from polars_cumdev.sklearn_recalibration import RecalibratedClassifier as RecalibratedClassifier  # noqa: E402
