"""Cumulative calibration: ECCE-R and ECCE-MAD for every kind of prediction (method.md 2).

* :mod:`~polars_cumdev.calibration.cumulative`: the statistics and the curve of
  one prediction per row (M. Tygert, "Plots of the cumulative differences
  between observed and expected values of ordered Bernoulli variates", 2022;
  equations (44)-(50) of appendix A of M. Tygert, "Cumulative deviation of a
  subpopulation from the full population");
* :mod:`~polars_cumdev.calibration.targets`: what that prediction claims: a
  probability, the mean of a real response, or its quantile at a level alpha;
* :mod:`~polars_cumdev.calibration.multiclass`: K class probabilities per row,
  top-label or class-wise;
* :mod:`~polars_cumdev.calibration.table`: the door and the table's names,
  shared by every engine.

:func:`calibration` and :func:`calibration_curve` here are the public entry
points; they pick the kind and forward.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_cumdev.calibration import cumulative
from polars_cumdev.calibration.multiclass import check_kind, multiclass
from polars_cumdev.calibration.table import CALIBRATION_COLUMNS
from polars_cumdev.calibration.targets import check_target
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.callable_module import make_callable
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.familywise import holm
from polars_cumdev.method.findings import LEVEL, SIGNIFICANT
from polars_cumdev.method.keys import Key
from polars_cumdev.method.masks import resolve_mask
from polars_cumdev.method.prepare import FrameLike, as_lazy

__all__ = ["CALIBRATION_COLUMNS", "CLASSWISE_COLUMNS", "calibration", "calibration_curve"]

_HOLM = ("ecce_r_holm", "ecce_mad_holm")
#: The columns of class-wise calibration after the keys: ``class``, then
#: :data:`CALIBRATION_COLUMNS` with Holm's adjusted p-values after the q-values.
CLASSWISE_COLUMNS = (
    "class",
    *[
        c
        for name in CALIBRATION_COLUMNS
        for c in ((name, *_HOLM) if name == "ecce_mad_q" else (name,))
    ],
    "p_method",
)
# Names of the derived score and response columns (how errors would name them).
_TOP = ("top-label probability", "top-label hit")
_ONE = ("class probability", "label is the class")


def _keys(by: Key | Sequence[Key] | None) -> list[str]:
    """Multiclass ``by``: column names only (the classes join them as a key)."""
    keys = [by] if isinstance(by, str | pl.Expr) else list(by or [])
    if not all(isinstance(k, str) for k in keys):
        raise InvalidParameterError(
            "with `kind`, `by` takes column names; add an expression as a column first, "
            "e.g. frame.with_columns(week=pl.col('ts').dt.truncate('1w')) and by='week'"
        )
    return keys  # type: ignore[return-value]


def _single(score: object, classes: object) -> None:
    """Refuse multiclass arguments without ``kind``."""
    if not isinstance(score, str):
        raise InvalidParameterError(
            f"`score`={score!r} is not one column name: K class probabilities need "
            "kind='top-label' or kind='class-wise'"
        )
    if classes is not None:
        raise InvalidParameterError("`classes` names multiclass classes: use it with `kind`")


@entry_point("score", "response", "weight", "by")
def calibration(
    frame: FrameLike,
    score: Column | Sequence[Column],
    response: Column,
    weight: Column | None = None,
    *,
    by: Column | Sequence[Column] | None = None,
    engine: str = "auto",
    kind: str | None = None,
    classes: Sequence[Any] | None = None,
    target: str = "probability",
    alpha: float | None = None,
    level: float = LEVEL,
    _finite_sample: bool = True,
) -> pl.LazyFrame:
    """ECCE-R and ECCE-MAD with sigma and p-values, overall or per group.

    C_k = sum_{j<=k} a_j (R'_j - ref_j) over the predictions merged by value
    and sorted (appendix A (44)-(47) of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population"); the ECCE-R is its range (49), the
    ECCE-MAD its largest absolute value (48), sigma the scale of its random
    fluctuations under perfect calibration ((50) for probabilities).

    Parameters
    ----------
    frame
        DataFrame or LazyFrame of predictions (a pandas DataFrame or PyArrow
        table is converted, and the result collected).
    score
        The prediction's column. For a probability, values in [0, 1]. With
        ``kind``, the K class probabilities: a list of K columns, or one
        List/Array column (:mod:`polars_cumdev.calibration.multiclass`).
    response
        Observed outcomes: in [0, 1] for a probability (0/1 labels or soft
        labels), any real number for a mean or quantile, the class label
        with ``kind``.
    weight
        Optional positive weights.
    by
        Optional grouping column(s) or expressions (names only with ``kind``):
        one row per group, computed in one query.
    engine
        ``"polars"``, ``"kernel"`` or ``"auto"``, as in
        :func:`polars_cumdev.subpopulation.screen` (the kernel computes
        probabilities only).
    kind
        ``None`` (one prediction per row), ``"top-label"`` (the top
        probability against "the predicted class was right"; a tie in the
        argmax goes to the lowest class index) or ``"class-wise"`` (each
        class's probability against "the label is that class": one row per
        group and class).
    classes
        With ``kind``: the class of each probability, in order, as the labels
        hold it. By default an integer label is the class index 0..K-1 and a
        string label the name of a score column.
    target
        What ``score`` predicts: ``"probability"`` (method.md 2), ``"mean"``
        (of a real response; sigma from successive differences of the
        residuals along the sorted predictions, the local form of
        ``multicalibration-mcgrad.md`` b.2') or ``"quantile"`` (at level
        ``alpha``: the response is 1{y <= q}, compared with alpha, sigma^2 =
        sum_k a_k^2 f_k alpha (1 - alpha));
        see :mod:`polars_cumdev.calibration.targets`. Where few rows make
        the asymptotic tail untrustworthy, p-values come from redraws, or for
        soft labels from a conservative bound (``p_method`` ``"simulated"``
        or ``"bound"``; docs/method.md, "Valid at every size").
    alpha
        The quantile's level, in (0, 1), with ``target="quantile"``.
    level
        Significance level of the located stretch
        (:mod:`polars_cumdev.method.findings`): stated only where ``ecce_r_q``
        (``ecce_r_p`` without groups, the same number) is at most ``level``;
        elsewhere null, with ``note`` saying "not significant".

    Returns
    -------
    pl.LazyFrame
        One row (per group): ``n``, ``n_scores``, ``weight``, ``ecce_r``
        (Kuiper range of C, (49)), ``ecce_mad`` (max |C_k|, (48)), ``delta``
        (C_n), ``sigma``, ``ecce_r_z``, ``ecce_mad_z``,
        ``ecce_r_p``, ``ecce_mad_p`` (method.md 4), their base-10 logarithms
        ``ecce_r_log10p``, ``ecce_mad_log10p``, ``ecce_r_q``,
        ``ecce_mad_q`` (Benjamini-Hochberg across the rows), the located
        stretch ``from_score``, ``to_score``, ``share``, ``deviation``
        (:mod:`polars_cumdev.method.location`) and ``note``;
        sorted by ``ecce_r_z``, largest first. Class-wise, the keys are
        followed by ``class``, and ``ecce_r_holm``, ``ecce_mad_holm`` (Holm's
        family-wise adjustment across all rows, every class of every group)
        follow the q-values (:data:`CLASSWISE_COLUMNS`).
    """
    chosen = check_target(target, alpha)
    if kind is None:
        _single(score, classes)
        return cumulative.calibration(
            frame, score, response, weight, by=by, engine=engine, target=chosen, level=level,
            _finite_sample=_finite_sample,
        )  # fmt: skip
    kind = check_kind(kind)
    if chosen.name != "probability":
        raise InvalidParameterError(f"`kind`={kind!r} calibrates probabilities, not {target!r}")
    keys = _keys(by)
    rows = multiclass(frame, score, response, weight, keys, classes)
    if kind == "top-label":
        return cumulative.calibration(
            rows.top_label(*_TOP), *_TOP, weight, by=keys or None, engine=engine, level=level
        )
    out = cumulative.calibration(
        rows.one_vs_rest(*_ONE),
        *_ONE,
        weight,
        by=[*keys, "class"],
        engine=engine,
        reserved=_HOLM,
        level=level,
    )
    adjusted = [holm(pl.col(f"{name}_p")).alias(f"{name}_holm") for name in ("ecce_r", "ecce_mad")]
    return out.with_columns(adjusted).select(*keys, *CLASSWISE_COLUMNS)


@entry_point("score", "response", "weight")
def calibration_curve(
    frame: FrameLike,
    score: Column | Sequence[Column],
    response: Column,
    weight: Column | None = None,
    *,
    subpop: pl.Expr | str | None = None,
    fraction: float = 1.0,
    kind: str | None = None,
    class_: Any = None,
    classes: Sequence[Any] | None = None,
    target: str = "probability",
    alpha: float | None = None,
    level: float = LEVEL,
) -> pl.LazyFrame:
    """Drill-down frame of the cumulative differences between responses and predictions.

    Same columns as :func:`polars_cumdev.subpopulation.curve`, so
    :func:`polars_cumdev.charts.cumulative` draws it; ``full_mean`` is
    replaced by the reference the response is compared with: the score
    itself (C_k of method.md 2, equations (44)-(47) of M. Tygert, "Cumulative
    deviation of a subpopulation from the full population"), or alpha for a
    quantile.

    Parameters
    ----------
    frame, score, response, weight, kind, classes, target, alpha
        As in :func:`calibration`.
    subpop
        The rows of one group (a boolean expression or the name of a boolean
        column), e.g. the group of a row of ``calibration(..., by=...)``, as
        in :func:`polars_cumdev.subpopulation.curve`; None for all rows.
    level
        Significance level of the located stretch: ``located`` flags points
        only when the curve's Kuiper p-value is at most ``level``.
    fraction
        Remark 3's zoom q in (0, 1] (method.md 1.7).
    class_
        Class-wise: the class to draw (a name of ``classes`` or of the score
        columns, or an index). By default every class, one curve after the
        other, told apart by the first column ``class`` (K must be known:
        score columns, an Array column, or ``classes``).

    Returns
    -------
    pl.LazyFrame
        Origin row then one row per merged score: ``k``, ``a``, ``k_over_n``,
        ``score``, ``cumdiff``, ``full_mean``, ``response_mean``, ``weight``,
        ``sigma``, ``variance_share`` and ``located`` (the point lies in the
        located stretch, :mod:`polars_cumdev.method.location`); class-wise
        with ``class`` first.
    """
    chosen = check_target(target, alpha)
    if kind is None or kind == "top-label":
        if class_ is not None:
            raise InvalidParameterError("`class_` picks one class of kind='class-wise'")
    if kind is None:
        _single(score, classes)
        return cumulative.calibration_curve(
            frame,
            score,
            response,
            weight,
            subpop=subpop,
            fraction=fraction,
            target=chosen,
            level=level,
        )
    if subpop is not None:  # the group's rows, then the classes as for all rows
        lazy = as_lazy(frame)
        frame = lazy.filter(resolve_mask(lazy, subpop))
    kind = check_kind(kind)
    if chosen.name != "probability":
        raise InvalidParameterError(f"`kind`={kind!r} calibrates probabilities, not {target!r}")
    rows = multiclass(frame, score, response, weight, [], classes)
    if kind == "top-label":
        return cumulative.calibration_curve(
            rows.top_label(*_TOP), *_TOP, weight, fraction=fraction, level=level
        )
    if class_ is None and rows.names is None:
        raise InvalidParameterError(
            f"{rows.what} does not say how many classes there are: pass `class_` (an index) "
            "or `classes`"
        )
    wanted = [class_] if class_ is not None else rows.names
    # The decision of the class-wise table (BH q across the classes), not each curve's own
    # p: a class is shaded only where its row of calibration(kind="class-wise") is
    # significant (polars_cumdev.method.findings).
    decisions = None
    if rows.names is not None:
        decisions = cumulative.calibration(
            rows.one_vs_rest(*_ONE), *_ONE, weight, by=["class"], reserved=_HOLM, level=level
        ).select("class", SIGNIFICANT)

    def one(c: Any) -> pl.LazyFrame:
        curve = cumulative.calibration_curve(
            rows.one_vs_rest(*_ONE, class_=c).drop("class"),
            *_ONE,
            weight,
            fraction=fraction,
            level=level if decisions is None else 1.0,
        )
        if decisions is not None:
            name = rows.names[rows._index(c)]
            decision = decisions.filter(pl.col("class") == name).select(SIGNIFICANT)
            curve = (
                curve.join(decision, how="cross")
                .with_columns(pl.col("located") & pl.col(SIGNIFICANT).fill_null(False))
                .drop(SIGNIFICANT)
            )
        return curve.select(pl.lit(c).alias("class"), pl.all())

    return pl.concat([one(c) for c in wanted], how="vertical_relaxed")


make_callable(__name__, calibration)  # pc.calibration(df, ...) is calibration(df, ...)
