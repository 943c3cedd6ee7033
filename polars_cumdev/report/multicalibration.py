"""A self-contained HTML report on a multicalibration audit (every intersection of features).

The page a modeller hands on after auditing a model's calibration on every
segment of a family (:func:`polars_cumdev.multicalibration.multicalibration`):

* the summary (largest z, its family-wise p-value, the critical z, the
  minimum detectable ECCE and MCGrad's ``mce``, ``mce_sigma``, ``mde``,
  multicalibration-mcgrad.md section c) beside the funnel chart
  (:func:`polars_cumdev.charts.funnel`);
* the strongest segments in words (:mod:`polars_cumdev.multicalibration.words`),
  new findings first;
* the ranked table of segments;
* for the ``top`` segments of that ranking, the cumulative plot of outcome
  minus prediction on the segment's rows (method.md 2,
  :func:`polars_cumdev.calibration.calibration_curve`).

The rule of every report: a finding (a located stretch, "exceed", "fall
short of") is stated, and shaded on a plot, only where the family-wise
p-value ``p_family`` is at most ``level``; any other segment is headed "not
significant" whatever its single-test p-value. The page is written with
:func:`polars_cumdev.report.subpopulation.render_html`, so it opens offline
and escapes every name it shows.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev import charts
from polars_cumdev.calibration import calibration_curve
from polars_cumdev.charts.numbers import p_text
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.findings import LEVEL, check_level, decided
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.multicalibration import Segments, multicalibration, subpop, summary
from polars_cumdev.multicalibration.words import conjunction, describe, sentences
from polars_cumdev.progress import Progress, reporting
from polars_cumdev.report.subpopulation import render_html
from polars_cumdev.report.table import html_table
from polars_cumdev.report.wording import significance_heading

__all__ = ["SEGMENT_COLUMNS", "SUMMARY_COLUMNS", "multicalibration_report", "write_report"]

#: Columns of the report's segment table, after the feature columns.
SEGMENT_COLUMNS = (
    "depth",
    "n",
    "ecce_r",
    "sigma",
    "ecce_r_z",
    "ecce_r_p",
    "p_family",
    "significant",
    "from_score",
    "to_score",
    "deviation",
    "finding",
    "overlap",
    "note",
)
#: Columns of the summary table (:func:`polars_cumdev.multicalibration.summary`).
SUMMARY_COLUMNS = (
    "segments",
    "tests",
    "dropped",
    "significant",
    "new_findings",
    "max_z",
    "p_family",
    "critical_z",
    "min_detectable_ecce",
    "mce",
    "mce_sigma",
    "mde",
)

_METHODS = {
    "holm": "Holm's step-down on the Kuiper p-values",
    "bootstrap": "a max-z parametric bootstrap under calibration",
    "stepdown": "a step-down max-z parametric bootstrap under calibration",
}


def reading_guide(method: str, level: float, critical: float | None) -> str:
    """The multicalibration report's own guide, as escaped HTML (not the other reports' box).

    It names ``p_family`` a family-wise p-value (never "q"), says what makes a
    finding (``significant``: ``p_family <= level``, the one decision every
    part of the page follows) and what each ``finding`` means.
    """
    words = _METHODS.get(method, method)
    line = f"{critical:.2f}" if critical is not None and critical == critical else "-"
    items = [
        "<b>Segments.</b> Every intersection of at most <i>depth</i> feature values with "
        "enough rows is a segment, the whole population included (<i>everyone</i>); a "
        "feature's rare values are pooled into <i>(other)</i>, as the summary says.",
        "<b>The plot</b> of a segment accumulates its outcomes minus their predicted "
        "probabilities, from the lowest score to the highest: where the curve rises the "
        "outcomes exceed the predictions, where it falls they are too high. The triangle at "
        "the origin (plus and minus 2 sigma) is what noise alone typically gives.",
        "<b>p</b> is one segment's own p-value, as if it were the only one examined. Among "
        "many segments of a calibrated model some p fall below 5% by chance alone.",
        f"<b>p_family</b> is the family-wise p-value ({words}): the chance that <i>any</i> "
        "segment of a calibrated model would look at least this bad. It is not a "
        "Benjamini-Hochberg q-value.",
        f"<b>Findings.</b> A segment is significant only with p_family &le; {level:g} (z "
        f"above the critical z of {line}); only then is a stretch of scores named and shaded. "
        "Every other segment is <i>not significant</i>, however large its deviation looks.",
        "<b>finding</b>: <i>new</i>: stronger than its parents and children and not "
        "explained by an overlapping stronger segment; <i>inherited</i>: a parent is "
        "stronger; <i>broader</i>: a child is stronger (the deviation is concentrated there); "
        "<i>echo</i>: its rows outside an overlapping stronger segment (<i>overlap</i>) are "
        "not significant on their own.",
    ]
    body = "".join(f"<li>{item}</li>" for item in items)
    return f'<div class="guide"><h2>How to read this audit</h2><ul>{body}</ul></div>'


def _shown_notes(table: pl.DataFrame) -> pl.DataFrame:
    """The table as the page shows it: a note only where it adds to the ``finding`` column."""
    note = pl.col("note").cast(pl.String)
    repeats = note.str.starts_with("not significant") & ~pl.col("significant").fill_null(False)
    return table.with_columns(pl.when(repeats).then(None).otherwise(note).alias("note"))


def _pooled(facts: dict[str, Any]) -> str:
    pooled = facts.get("pooled")
    text = f"pooled into (other): {pooled}" if pooled else "nothing pooled into (other)"
    return f"<p>{html.escape(text)}</p>"


def _summary_heading(facts: dict[str, Any], level: float) -> str:
    p = facts["p_family"]
    if not facts["significant"]:
        return f"Summary: no segment is significant family-wise ({significance_heading(p, level)})"
    return (
        f"Summary: {facts['significant']} of {facts['tests']} segments significant family-wise "
        f"(largest z {facts['max_z']:.2f}, p_family = {p_text(p)})"
    )


def _list(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"


def multicalibration_report(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    segments: Segments,
    path: str | Path,
    top: int = 5,
    rows: int = 50,
    level: float = LEVEL,
    method: str = "holm",
    resamples: int = 999,
    seed: int = 0,
    band: float | None = 0.05,
    progress: Progress = False,
) -> Path:
    """Write an HTML page auditing the calibration of every segment of a family.

    Parameters
    ----------
    frame
        Predictions with the segment features (DataFrame or LazyFrame).
    score, response, weight
        As in :func:`polars_cumdev.multicalibration.multicalibration`.
    segments
        The family, from :func:`polars_cumdev.segments`.
    path
        The ``.html`` file to write.
    top
        Number of segments drawn (new findings first, then by z).
    rows
        Number of segments in the page's table (the strongest; the page
        says how many more there are).
    level, method, resamples, seed
        As in :func:`~polars_cumdev.multicalibration.multicalibration`: a
        stretch is stated and shaded only where ``p_family <= level``.
    band
        Level of the Kolmogorov-Smirnov band of the cumulative plots
        (``None``: no band).
    progress
        ``True`` writes the report's stages to stderr, a callable receives
        them (:mod:`polars_cumdev.progress`); off by default.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    for name, value in (("top", top), ("rows", rows)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidParameterError(f"`{name}` must be a non-negative int, got {value!r}")
    level = check_level(level)
    lazy = as_lazy(frame)
    with reporting(progress) as say:
        say("multicalibration report: every segment")
        table = multicalibration(
            lazy, score, response, weight, segments=segments, level=level,
            method=method, resamples=resamples, seed=seed,
        ).collect()  # fmt: skip
        return write_report(
            table, lazy, list(segments.features), score, response, weight, path=path,
            top=top, rows=rows, level=level, method=method, band=band, say=say,
        )  # fmt: skip


def write_report(
    table: pl.DataFrame,
    lazy: pl.LazyFrame,
    features: list[str],
    score: str,
    response: str,
    weight: str | None,
    *,
    path: str | Path,
    top: int,
    rows: int,
    level: float,
    method: str,
    band: float | None,
    say: Callable[[str], None],
) -> Path:
    """The page of :func:`multicalibration_report` from a table already computed (the CLI's)."""
    facts = summary(table, level=level).row(0, named=True)
    guide = reading_guide(method, level, facts["critical_z"])
    shown = [*features, *SEGMENT_COLUMNS]
    more = table.height - min(rows, table.height)
    tail = f"<p>{more} more segments in the full table.</p>" if more else ""
    sections = [
        (
            _summary_heading(facts, level),
            _pooled(facts) + html_table(summary(table, level=level), SUMMARY_COLUMNS),
            [charts.funnel(table, level=level).to_dict()],
        ),
        (
            "The strongest segments in words (new findings first)",
            _list(sentences(table, features, top=max(top, 1), level=level)),
            [],
        ),
        (
            f"Every segment, largest z first ({table.height} segments)",
            html_table(_shown_notes(table.head(rows)), shown) + tail,
            [],
        ),
    ]
    names = {
        row["condition"]: conjunction(row, features)
        for row in table.select(*features, "condition").iter_rows(named=True)
    }
    for number, row in enumerate(_drawn(table, top).iter_rows(named=True), start=1):
        say(f"multicalibration report: segment {number}: {conjunction(row, features)}")
        sections.append(_segment(lazy, row, features, names, score, response, weight, level, band))
    say("multicalibration report: writing the page")
    written = Path(path)
    title = f"cumdev multicalibration report: {score}"
    written.write_text(render_html(title, sections, preface=guide), encoding="utf-8")
    say(f"multicalibration report: wrote {written}")
    return written


def _drawn(table: pl.DataFrame, top: int) -> pl.DataFrame:
    """The ``top`` segments with a z, in the order of the sentences (new findings first)."""
    rank = {"new": 0, "broader": 1, "inherited": 2, "echo": 2}
    order = pl.col("finding").replace_strict(rank, default=3, return_dtype=pl.Int8)
    return (
        table.filter(pl.col("ecce_r_z").is_not_null())
        .with_columns(order.alias("_order"))
        .sort(["_order", "ecce_r_z"], descending=[False, True], maintain_order=True)
        .head(top)
        .drop("_order")
    )


def _segment(
    lazy: pl.LazyFrame,
    row: dict[str, Any],
    features: list[str],
    names: dict[str, str],
    score: str,
    response: str,
    weight: str | None,
    level: float,
    band: float | None,
) -> tuple[str, str, list[dict[str, Any]]]:
    """One segment's section: its sentence, its table row, its cumulative plot."""
    label = conjunction(row, features)
    significant = decided(row)
    # the family's decision, not the curve's own p: located wherever the table locates
    points = calibration_curve(
        lazy.filter(subpop(row)), score, response, weight, level=1.0
    ).collect()
    line = None
    if not significant:
        points = points.with_columns(pl.lit(False).alias("located"))
        line = f"{significance_heading(row['p_family'], level, 'p_family')} (no stretch shaded)"
    chart = charts.cumulative(
        points,
        kind="calibration",
        score_label=score,
        y_label=f"cumulative {response} minus {score}",
        title=f"cumulative miscalibration: {label}",
        band=band,
        significance=line,
    )
    heading = describe(row, features, level, names)
    body = html_table(_shown_notes(pl.DataFrame([row])), [*features, *SEGMENT_COLUMNS])
    return heading, body, [chart.to_dict()]
