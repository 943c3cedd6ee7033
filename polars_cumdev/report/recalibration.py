"""A self-contained HTML report on a recalibration, judged on held-out rows.

The page a modeller hands on with a fix
(:func:`polars_cumdev.recalibration.recalibrate`):

* the audit of held-out rows before and after (the summary of
  :func:`polars_cumdev.recalibration.evaluate`: segments significant
  family-wise, largest z, Brier score, log-loss) beside the two funnel charts
  on one z scale (:func:`polars_cumdev.charts.before_after`);
* the table of corrections, each with the evidence that called for it;
* the strongest segments after the fix, in words (new findings first);
* for each corrected segment, the cumulative plot of outcome minus
  prediction on its held-out rows, before and after, side by side.

As in every report, a stretch is shaded and a direction stated only for a
segment significant family-wise in the held-out audit; the corrected
segments' plots are drawn for inspection, unshaded (their conditions were
cut on the training rows, so they are not rows of the held-out audit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev import charts
from polars_cumdev.calibration import calibration_curve
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.multicalibration.words import sentences
from polars_cumdev.progress import Progress, reporting
from polars_cumdev.recalibration import Recalibration, before_after_audits, evaluate
from polars_cumdev.recalibration.evaluate import RECALIBRATED
from polars_cumdev.report.multicalibration import _list
from polars_cumdev.report.subpopulation import render_html
from polars_cumdev.report.table import html_table

__all__ = ["recalibration_report"]

_SUMMARY = ("scores", "rows", "brier", "log_loss", "significant", "max_z", "p_family", "critical_z")
_TABLE = ("step", "segment", "change", "rows", "z", "p_family")


def _curve(rows: pl.LazyFrame, condition: str, score: str, response: str, weight: str | None,
           title: str) -> dict[str, Any]:  # fmt: skip
    points = calibration_curve(rows.filter(pl.sql_expr(condition).fill_null(False)), score,
                               response, weight).collect()  # fmt: skip
    points = points.with_columns(pl.lit(False).alias("located"))
    chart = charts.cumulative(
        points,
        kind="calibration",
        score_label=score,
        y_label=f"cumulative {response} minus {score}",
        title=title,
        width=340,
        height=280,
        significance="drawn for inspection (no stretch shaded)",
    )
    return chart.to_dict()


def recalibration_report(
    fix: Recalibration,
    holdout: FrameLike,
    *,
    path: str | Path,
    top: int = 5,
    level: float | None = None,
    progress: Progress = False,
) -> Path:
    """Write an HTML page judging ``fix`` on ``holdout`` (rows it was not fitted on).

    Parameters
    ----------
    fix
        From :func:`polars_cumdev.recalibration.recalibrate` (or read from JSON).
    holdout
        Rows with the score, response, weight and segment features.
    path
        The ``.html`` file to write.
    top
        Number of corrected segments drawn before and after, and of sentences.
    level
        Family-wise level of the held-out audit (default: the fit's).
    progress
        ``True`` writes the stages to stderr, a callable receives them.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    if not isinstance(fix, Recalibration):
        raise InvalidParameterError(f"`fix` must be a Recalibration, got {type(fix).__name__}")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise InvalidParameterError(f"`top` must be a non-negative int, got {top!r}")
    response, weight, family = fix.audit()
    chosen = float(dict(fix.fitting).get("level", 0.05) if level is None else level)
    rows = fix.apply(as_lazy(holdout), RECALIBRATED)
    with reporting(progress) as say:
        say("recalibration report: the held-out audit, before and after")
        before, after = before_after_audits(fix, holdout, level=chosen)
        facts = evaluate(fix, holdout, level=chosen)
        features = list(family.features)
        sections = [
            (
                "The held-out audit, before and after",
                html_table(facts, _SUMMARY),
                [charts.before_after(before, after, level=chosen).to_dict()],
            ),
            (
                f"Corrections ({fix.table.height}), with the evidence that called for each",
                html_table(fix.table, _TABLE)
                if fix.table.height
                else "<p>None: the audit found nothing significant; the fix is the identity.</p>",
                [],
            ),
            (
                "After the fix: the strongest held-out segments in words",
                _list(sentences(after, features, top=max(top, 1), level=chosen)),
                [],
            ),
        ]
        for c in fix.corrections[:top]:
            label = " & ".join(f"{k} = {v}" for k, v in c.levels) or "everyone"
            say(f"recalibration report: {label}")
            specs = [
                _curve(rows, c.condition, s, response, weight, f"{label}: {name}")  # type: ignore[arg-type]
                for s, name in ((fix.score, "before"), (RECALIBRATED, "after"))
            ]
            sections.append((f"{label} (log-odds {c.shift:+.3f}), held-out rows", "", specs))
        written = Path(path)
        written.write_text(
            render_html(f"cumdev recalibration report: {fix.score}", sections), encoding="utf-8"
        )
        say(f"recalibration report: wrote {written}")
    return written
