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

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev import charts
from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.calibration.targets import check_target
from polars_cumdev.corp import corp, corp_curve
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.findings import LEVEL, check_level, decided
from polars_cumdev.method.groups import group_label, group_selection
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.progress import Progress, reporting
from polars_cumdev.report.subpopulation import render_html
from polars_cumdev.report.table import html_table
from polars_cumdev.report.wording import how_to_read, significance_heading, where_words

__all__ = ["TABLE_COLUMNS", "calibration_report"]

#: Columns of the report's tables, after the group keys.
TABLE_COLUMNS = (
    "n",
    "ecce_r",
    "ecce_r_z",
    "ecce_r_p",
    "ecce_r_q",
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
    level: float,
    significance: str | None,
) -> list[dict[str, Any]]:
    points = calibration_curve(lazy, score, response, weight, **target, level=level).collect()
    if significance is not None:  # the table's rule (q over the groups), not the curve's p
        points = points.with_columns(pl.lit(False).alias("located"))
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
        significance=significance,
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
    corp_level: float = 0.9,
    seed: int = 0,
    band: float | None = 0.05,
    target: str = "probability",
    alpha: float | None = None,
    level: float = LEVEL,
    progress: Progress = False,
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
    resamples, corp_level, seed
        The consistency bands of :func:`polars_cumdev.corp.diagram.corp_curve`
        (``corp_level`` is its ``level``, the band's coverage); all groups'
        curves come from one query.
    band
        Level of the Kolmogorov-Smirnov band of the cumulative plots
        (``None``: no band).
    target, alpha
        What ``score`` predicts, as in :func:`polars_cumdev.calibration.calibration`;
        for a mean or a quantile the page has no Brier score and no CORP diagram.
    level
        Significance level of the findings (:mod:`polars_cumdev.method.findings`):
        a located stretch is stated (in a heading, shaded on a plot) only
        where ``ecce_r_p`` (all predictions) or ``ecce_r_q`` (a group, BH
        over the groups) is at most ``level``; elsewhere the heading says
        "not significant".
    progress
        ``True`` writes the report's stages to stderr, a callable receives
        them (:mod:`polars_cumdev.progress`); off by default.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise InvalidParameterError(f"`top` must be a non-negative int, got {top!r}")
    level = check_level(level)
    with reporting(progress) as say:
        keys = [] if by is None else ([by] if isinstance(by, str) else list(by))
        corp_args = {"resamples": resamples, "level": corp_level, "seed": seed}
        predicted = {"target": target, "alpha": alpha}
        sections = _sections(
            as_lazy(frame),
            score,
            response,
            weight,
            keys,
            top,
            corp_args,
            band,
            predicted,
            level,
            say,
        )
        say("calibration report: writing the page")
        written = Path(path)
        title = f"cumdev calibration report: {score}"
        guide = how_to_read("calibration", level)
        written.write_text(render_html(title, sections, preface=guide), encoding="utf-8")
        say(f"calibration report: wrote {written}")
        return written


def _heading(row: dict[str, Any], p: str, level: float, symbol: str) -> tuple[str | None, str]:
    """The significance line for the plot (None when significant) and the heading's words."""
    if decided(row):
        return None, ""
    words = significance_heading(row[p], level, symbol)
    return f"{words} (no stretch shaded)", words


def _sections(
    lazy: pl.LazyFrame,
    score: str,
    response: str,
    weight: str | None,
    keys: list[str],
    top: int,
    corp_args: dict[str, Any],
    band: float | None,
    predicted: dict[str, Any],
    level: float,
    say: Callable[[str], None],
) -> list[_Section]:
    alpha = predicted["alpha"]
    probability = check_target(predicted["target"], alpha).name == "probability"
    say("calibration report: all predictions")
    ecce = calibration(lazy, score, response, weight, **predicted, level=level).collect()
    overall, curves = ecce, None
    if probability:
        brier = corp(lazy, score, response, weight).collect().drop("n", "n_scores", "weight")
        overall = pl.concat([ecce, brier], how="horizontal")
        curves = corp_curve(lazy, score, response, weight, **corp_args).collect()
    line, words = _heading(overall.row(0, named=True), "ecce_r_p", level, "p")
    heading = f"All predictions: {score!r} against {response!r}"
    sections: list[_Section] = [
        (
            f"{heading}: {words}" if words else heading,
            html_table(overall, [c for c in TABLE_COLUMNS if c in overall.columns]),
            _charts(
                lazy,
                score,
                response,
                weight,
                curves,
                overall,
                "all predictions",
                band,
                predicted,
                level,
                line,
            ),
        )
    ]
    if not keys:
        return sections
    say("calibration report: every group")
    table = calibration(lazy, score, response, weight, by=keys, **predicted, level=level).collect()
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
    drawn = table.filter(pl.col("ecce_r_z").is_not_null()).head(min(top, table.height))
    all_curves = None
    if probability:
        all_curves = corp_curve(lazy, score, response, weight, by=keys, **corp_args).collect()
    for number, row in enumerate(drawn.iter_rows(named=True), start=1):
        chosen = group_selection(keys, row)
        label = group_label(keys, row)
        say(f"calibration report: group {number}/{drawn.height}: {label}")
        summary = table.filter(chosen)
        line, where = _heading(row, "ecce_r_q", level, "q")
        if line is None:
            weighted = weight is not None
            where = where_words(row, keys, score, response, weighted, kind="calibration")
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
                    level,
                    line,
                ),
            )
        )
    return sections


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
