"""A self-contained HTML report: the screen, then a drill-down for the top groups.

The report is one HTML file. The Vega, Vega-Lite and Vega-Embed libraries are
inlined from vl-convert's bundle, so the file opens offline and loads nothing
from the network. Group and column names are data: every one of them is
HTML-escaped in the page, and the chart specifications are embedded as JSON
with ``<``, ``>`` and ``&`` escaped, so no value can close a tag or a script.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev import charts
from polars_cumdev.binned import reliability
from polars_cumdev.charts.export import json_for_script, xml_safe
from polars_cumdev.covariates.ordering import Score
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.findings import LEVEL, check_level, decided
from polars_cumdev.method.groups import group_label, group_selection
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.progress import Progress, reporting
from polars_cumdev.report.table import HEADERS, format_cell, html_table
from polars_cumdev.report.wording import how_to_read, significance_heading, where_words
from polars_cumdev.subpopulation import curve, screen

__all__ = ["HEADERS", "format_cell", "html_table", "render_html", "report"]

_TABLE_COLUMNS = (
    "n",
    "n_scores",
    "kuiper",
    "kuiper_z",
    "kuiper_p",
    "kuiper_q",
    "ks_z",
    "delta",
    "note",
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.row { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.note { color: #666; font-size: 0.9em; }
.guide { background: #f6f6f6; padding: 0.6em 1.2em; font-size: 0.9em; max-width: 60em; }
.guide li { margin: 0.3em 0; }
"""

# Reads the embedded specs and renders each one into its div.
_BOOT = """
document.querySelectorAll('script[type="application/json"][data-target]').forEach(
  function (node) {
    var spec = JSON.parse(node.textContent);
    vegaEmbed('#' + node.dataset.target, spec, {actions: false, renderer: 'svg'})
      .catch(function (err) { console.error(err); });
  });
"""


def _json_for_script(spec: dict[str, Any]) -> str:
    """JSON that is safe inside a ``<script>`` element whatever strings it holds."""
    return json_for_script(xml_safe(spec))


def render_html(
    title: str,
    sections: Sequence[tuple[str, str, Sequence[dict[str, Any]]]],
    preface: str = "",
) -> str:
    """Assemble the report page.

    Parameters
    ----------
    title
        Page title (plain text; escaped here).
    sections
        ``(heading, html_fragment, vega_lite_specs)`` triples. Headings are
        plain text and escaped here; fragments must already be escaped HTML;
        each spec is drawn in its own box, side by side within the section.
    preface
        Escaped HTML put between the page's title and the first section
        (the reports' "how to read this page").

    Returns
    -------
    str
        The complete HTML document with the JavaScript libraries inlined.
    """
    import vl_convert

    parts = []
    index = 0
    for heading, fragment, specs in sections:
        boxes = []
        for spec in specs:
            target = f"chart-{index}"
            index += 1
            boxes.append(
                f'<div id="{target}"></div>'
                f'<script type="application/json" data-target="{target}">'
                f"{_json_for_script(spec)}</script>"
            )
        parts.append(
            f"<section><h2>{html.escape(xml_safe(heading))}</h2>{xml_safe(fragment)}"
            f'<div class="row">{"".join(boxes)}</div></section>'
        )
    bundle = vl_convert.javascript_bundle().replace("</script", "<\\/script")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(xml_safe(title))}</title><style>{_STYLE}</style>"
        f"<script>{bundle}</script></head><body><h1>{html.escape(xml_safe(title))}</h1>"
        f"{preface}{''.join(parts)}<script>{_BOOT}</script></body></html>\n"
    )


def report(
    frame: FrameLike,
    by: str | Sequence[str],
    score: Score,
    response: str,
    weight: str | None = None,
    *,
    path: str | Path,
    top: int = 5,
    variance: str = "auto",
    bins: int = 10,
    level: float = LEVEL,
    progress: Progress = False,
) -> Path:
    """Write a self-contained HTML report of a screen and its top drill-downs.

    The page opens with a short guide to reading it, then holds the ranked
    table and overview chart of :func:`polars_cumdev.subpopulation.screen`,
    then, for each of the ``top`` groups with the largest Kuiper z, the
    cumulative plot (equations (25)-(28) of M. Tygert, "Cumulative deviation
    of a subpopulation from the full population", with the triangle of
    height 4 sigma) beside the reliability diagram of the group against the
    full population ((34)-(37)).

    Only what the data support is stated (:mod:`polars_cumdev.method.findings`):
    a group's section names its located stretch ("... 0.13 more ... than
    rows with the same score") only when its BH-adjusted q is at most
    ``level``; the section of any other group says "not significant: q =
    ..." in its heading, and its plot shades no stretch.

    With several covariates (``score=[...]``, Hilbert order; section 2 of
    ``paired-and-covariates.md``) a reliability diagram has no single score
    to bin, so the map of the group's points in the plane of the first two
    covariates (:func:`polars_cumdev.charts.covariate_map`) takes its place,
    and the section headers name the located stretch by covariate values.

    Parameters
    ----------
    frame
        The full population.
    by, score, response, weight, variance
        As in :func:`polars_cumdev.subpopulation.screen` (``score`` may be a
        list of covariates).
    path
        Where to write the ``.html`` file.
    top
        Number of groups to drill into (groups whose statistics are null are
        skipped). A group whose key is null is drilled into like any other
        (selected with null-aware equality) and labelled ``(null)``.
    bins
        Number of bins of the reliability diagrams.
    level
        Significance level of the findings (on ``kuiper_q``).
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
        return _report(frame, by, score, response, weight, path, top, variance, bins, level, say)


def _report(
    frame: FrameLike,
    by: str | Sequence[str],
    score: Score,
    response: str,
    weight: str | None,
    path: str | Path,
    top: int,
    variance: str,
    bins: int,
    level: float,
    say: Callable[[str], None],
) -> Path:
    keys = [by] if isinstance(by, str) else list(by)
    lazy = as_lazy(frame)
    say("report: screening every group")
    table = screen(lazy, keys, score, response, weight, variance=variance, level=level).collect()
    if not isinstance(score, str) and len(score) == 1:
        score = score[0]  # one covariate is an ordinary score
    covariates = None if isinstance(score, str) else list(score)
    ordered_by = (
        f"score {score!r}"
        if covariates is None
        else f"covariates {', '.join(map(repr, covariates))} along a Hilbert curve"
    )
    sections: list[tuple[str, str, Sequence[dict[str, Any]]]] = [
        (
            f"Screen of {response!r} by {', '.join(keys)} ({ordered_by})",
            html_table(table, [*keys, *[c for c in _TABLE_COLUMNS if c in table.columns]]),
            [charts.screen(table, by=keys).to_dict()],
        )
    ]
    ranked = table.filter(pl.col("kuiper_z").is_not_null()).head(min(top, table.height))
    for number, row in enumerate(ranked.iter_rows(named=True), start=1):
        subpop = group_selection(keys, row)  # null-aware: the null group too
        label = group_label(keys, row)
        say(f"report: drill-down {number}/{ranked.height}: {label}")
        points = curve(
            lazy, subpop, score, response, weight, variance=variance, level=level
        ).collect()
        summary = (
            f'<p class="note">{format_cell(row["n"])} rows, '
            f"{format_cell(row['n_scores'])} distinct scores; "
            f"Kuiper D = {format_cell(row['kuiper'], 'kuiper')} "
            f"= {format_cell(row['kuiper_z'], 'kuiper_z')} sigma "
            f"(p {_p(row['kuiper_p'])}, BH-adjusted q {_p(row['kuiper_q'])})</p>"
        )
        significant = decided(row)
        if significant:
            where = where_words(row, keys, score, response, weight is not None)
            line = None
        else:
            # The screen's rule, not the curve's own p: no stretch for this group.
            where = significance_heading(row["kuiper_q"], level)
            points = points.with_columns(pl.lit(False).alias("located"))
            line = f"{where} (no stretch shaded)"
        cumulative = charts.cumulative(
            points,
            subject=label,
            score_label=score if isinstance(score, str) else "score",
            y_label=f"cumulative difference in {response}",
            significance=line,
        )
        beside = (
            charts.reliability(
                reliability(lazy, score, response, weight, subpop=subpop, bins=bins).collect(),
                title=f"reliability diagram: {label}",
                x_label=score,
                y_label=response,
            )
            if covariates is None
            else charts.covariate_map(points, title=f"{label}: the points along the curve")
        )
        sections.append((f"{label}: {where}", summary, [cumulative.to_dict(), beside.to_dict()]))
    say("report: writing the page")
    target = Path(path)
    guide = how_to_read("subpopulation", level)
    target.write_text(
        render_html(f"cumdev report: {response}", sections, preface=guide), encoding="utf-8"
    )
    say(f"report: wrote {target}")
    return target


def _p(value: float | None) -> str:
    """ "= 0.072" or "< 0.001" (p-values in one notation, :func:`format_cell`)."""
    text = format_cell(value, "kuiper_p")
    return text if text.startswith("<") else f"= {text}"
