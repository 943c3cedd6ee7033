"""The cumulative calibration Display, in scikit-learn's conventions.

:class:`CumulativeCalibrationDisplay` is the cumulative counterpart of
scikit-learn's ``CalibrationDisplay`` (see :mod:`polars_cumdev.sklearn`, which
names it for the public); ``display_a + display_b`` is a
:class:`CumulativeCalibrationDisplays`, several models on one chart.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.sklearn_inputs import (
    _KINDS,
    _RESPONSE,
    _SCORE,
    _frame,
    _frame_multiclass,
    _weight,
)
from polars_cumdev.sklearn_matplotlib import draw_curves, matplotlib_axes

__all__ = ["CumulativeCalibrationDisplay", "CumulativeCalibrationDisplays"]


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
            return self._draw(matplotlib_axes(ax), name, kwargs)
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
        """Matplotlib: the curves drawn into ``ax`` (:mod:`polars_cumdev.sklearn_matplotlib`)."""
        line = draw_curves(ax, self.curve_, self.kind, name, kwargs)
        if line is not None:
            self.line_ = line
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
            ax = matplotlib_axes(ax)
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
