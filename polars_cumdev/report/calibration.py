"""A self-contained HTML report on the calibration of predicted probabilities.

The screen report (:mod:`polars_cumdev.report.subpopulation`) is about subpopulations
against the full population; calibration asks another question and gets its
own page. For all predictions, and then for the groups of ``by`` whose
cumulative miscalibration is largest, it puts two views side by side:

* the cumulative plot of outcome minus prediction (method.md 2), with the
  Kolmogorov-Smirnov band of :func:`polars_cumdev.charts.cumulative`: where
  along the scores the miscalibration builds up, and whether the curve as a
  whole is beyond noise;
* the CORP reliability diagram (:mod:`polars_cumdev.corp.decomposition`): the isotonic
  recalibration against the diagonal, its consistency band, and the Brier
  score split into miscalibration, discrimination and uncertainty.

A table of every group's ECCE statistics and Brier decomposition heads the
per-group part. Predicted means and quantiles (``target=``,
:mod:`polars_cumdev.calibration.targets`) get the cumulative plots and the
ECCE tables alone: the Brier score and CORP are for probabilities. The page is written with
:func:`polars_cumdev.report.subpopulation.render_html`, so it opens offline and escapes
every name it shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev import charts
from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.calibration.targets import check_target
from polars_cumdev.corp import corp, corp_curve
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.groups import group_label, group_selection
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.report.subpopulation import html_table, render_html
from polars_cumdev.report.wording import where_words

__all__ = ["TABLE_COLUMNS", "calibration_report"]

#: Columns of the report's tables, after the group keys.
TABLE_COLUMNS = (
    "n",
    "ecce_r",
    "ecce_r_z",
    "ecce_r_p",
    "ecce_mad_z",
    "ecce_mad_p",
    "brier",
    "mcb",
    "dsc",
    "unc",
    "note",
)

_Section = tuple[str, str, Sequence[dict[str, Any]]]


def _charts(
    lazy: pl.LazyFrame,
    score: str,
    response: str,
    weight: str | None,
    corp_frame: pl.DataFrame | None,
    summary: pl.DataFrame,
    label: str,
    band: float | None,
    target: dict[str, Any],
) -> list[dict[str, Any]]:
    points = calibration_curve(lazy, score, response, weight, **target).collect()
    alpha = target.get("alpha")
    cumulative = charts.cumulative(
        points,
        kind="calibration",
        score_label=score,
        y_label=f"cumulative {response} minus {score}"
        if alpha is None
        else f"cumulative share of {response} <= {score}, minus {alpha:g}",
        title=f"cumulative miscalibration: {label}",
        band=band,
    )
    if corp_frame is None:
        return [cumulative.to_dict()]
    diagram = charts.corp(
        corp_frame, summary=summary, title=f"CORP reliability diagram: {label}", score_label=score
    )
    return [cumulative.to_dict(), diagram.to_dict()]


def calibration_report(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    path: str | Path,
    by: str | Sequence[str] | None = None,
    top: int = 5,
    resamples: int = 100,
    level: float = 0.9,
    seed: int = 0,
    band: float | None = 0.05,
    target: str = "probability",
    alpha: float | None = None,
) -> Path:
    """Write an HTML page with the cumulative and the CORP views of calibration, side by side.

    Parameters
    ----------
    frame
        Predictions (DataFrame or LazyFrame).
    score, response, weight
        As in :func:`polars_cumdev.calibration.calibration`.
    path
        The ``.html`` file to write.
    by
        Optional grouping column(s): a table of every group, then the
        ``top`` groups with the largest ECCE-R z drawn as for all
        predictions.
    top
        Number of groups drawn (groups with a null z are skipped).
    resamples, level, seed
        The consistency bands of :func:`polars_cumdev.corp.diagram.corp_curve`; all
        groups' curves come from one query.
    band
        Level of the Kolmogorov-Smirnov band of the cumulative plots
        (``None``: no band).
    target, alpha
        What ``score`` predicts, as in :func:`polars_cumdev.calibration.calibration`;
        for a mean or a quantile the page has no Brier score and no CORP diagram.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise InvalidParameterError(f"`top` must be a non-negative int, got {top!r}")
    keys = [] if by is None else ([by] if isinstance(by, str) else list(by))
    lazy = as_lazy(frame)
    predicted = {"target": target, "alpha": alpha}
    probability = check_target(target, alpha).name == "probability"
    ecce = calibration(lazy, score, response, weight, **predicted).collect()
    overall, curves = ecce, None
    if probability:
        brier = corp(lazy, score, response, weight).collect().drop("n", "n_scores", "weight")
        overall = pl.concat([ecce, brier], how="horizontal")
        curves = corp_curve(
            lazy, score, response, weight, resamples=resamples, level=level, seed=seed
        ).collect()
    sections: list[_Section] = [
        (
            f"All predictions: {score!r} against {response!r}",
            html_table(overall, [c for c in TABLE_COLUMNS if c in overall.columns]),
            _charts(
                lazy, score, response, weight, curves, overall, "all predictions", band, predicted
            ),
        )
    ]
    if keys:
        table = calibration(lazy, score, response, weight, by=keys, **predicted).collect()
        if probability:
            brier = corp(lazy, score, response, weight, by=keys).collect()
            table = table.join(
                brier.drop("n", "n_scores", "weight"), on=keys, how="left", nulls_equal=True
            )
        sections.append(
            (
                f"By {', '.join(keys)}: every group, largest ECCE-R z first",
                html_table(table, [*keys, *[c for c in TABLE_COLUMNS if c in table.columns]]),
                [],
            )
        )
        drawn = table.filter(pl.col("ecce_r_z").is_not_null()).head(top)
        all_curves = None
        if probability:
            all_curves = corp_curve(
                lazy, score, response, weight, by=keys, resamples=resamples, level=level, seed=seed
            ).collect()
        for row in drawn.iter_rows(named=True):
            chosen = group_selection(keys, row)
            label = group_label(keys, row)
            summary = table.filter(chosen)
            where = where_words(row, keys, score, response, weight is not None, kind="calibration")
            if alpha is not None:  # the deviation is a share of responses, not of the response
                where = _quantile_words(where, response, score, alpha)
            sections.append(
                (
                    f"{label}: {where}",
                    html_table(summary, [c for c in TABLE_COLUMNS if c in summary.columns]),
                    _charts(
                        lazy.filter(chosen),
                        score,
                        response,
                        weight,
                        None if all_curves is None else all_curves.filter(chosen),
                        summary,
                        label,
                        band,
                        predicted,
                    ),
                )
            )
    written = Path(path)
    title = f"cumdev calibration report: {score}"
    written.write_text(render_html(title, sections), encoding="utf-8")
    return written


def _quantile_words(where: str, response: str, score: str, alpha: float) -> str:
    """:func:`where_words` of a quantile: the share at or below the prediction against alpha."""
    ending = f" the {score} on average"
    if not where.endswith(ending):
        return where  # "not located"
    head, _, tail = where[: -len(ending)].rpartition(f": {response} ")
    size, _, side = tail.partition(" ")
    return (
        f"{head}: the share of {response} at or below the {score} is {size} {side} "
        f"the level {alpha:g} on average"
    )
