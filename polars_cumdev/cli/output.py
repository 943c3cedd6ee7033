"""What the ``cumdev`` command prints and writes: tables, summaries, charts and files."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev import progress
from polars_cumdev.charts.numbers import percent
from polars_cumdev.errors import CumdevError

__all__ = [
    "CHART_SUFFIXES",
    "DATA_SUFFIXES",
    "RANKED_COLUMNS",
    "SUMMARY_COLUMNS",
    "TABLE_SUFFIXES",
    "curve_summary",
    "drawn_as_ranked",
    "located_cell",
    "note",
    "pretty_p",
    "print_summary",
    "save_chart",
    "save_table",
    "say",
    "show",
]

CHART_SUFFIXES = (".svg", ".png", ".pdf", ".json", ".html")
#: The columns printed of a table ranked by Kuiper z (screen, paired), after the keys.
RANKED_COLUMNS = (
    "n",
    "kuiper",
    "kuiper_z",
    "kuiper_p",
    "kuiper_q",
    "ks_z",
    "delta",
    "located",
    "note",
)
#: The columns of the demo's table: few enough to fit a terminal 100 characters wide.
SUMMARY_COLUMNS = ("n", "kuiper_z", "kuiper_q", "located", "note")
DATA_SUFFIXES = (".csv", ".parquet")
TABLE_SUFFIXES = (".csv", ".json", ".parquet")


def say(message: str) -> None:
    """A line of progress ("reading ...", "wrote ..."): on stderr only when progress is on.

    It goes through :func:`polars_cumdev.progress.say`, so that it follows
    ``--progress`` / ``--no-progress`` and, without either, shows only when
    stderr is a terminal, as the library's own progress lines do.
    """
    progress.say(message)


def note(message: str) -> None:
    """A note the user needs whatever the progress switch (a skipped output): stderr."""
    print(message, file=sys.stderr, flush=True)


def pretty_p(value: float | None) -> str | None:
    """P-values in scientific notation, so tiny ones do not print as 0.0000."""
    if value is None:
        return None
    return f"{value:.4f}" if value >= 0.001 else f"{value:.2e}"


def located_cell(row: dict[str, Any]) -> str | None:
    """The located stretch in one cell: "from to to (share): deviation", or None."""
    if row["from_score"] is None:
        return None
    return (
        f"{row['from_score']:.4g} to {row['to_score']:.4g} "
        f"({percent(row['share'])}): {row['deviation']:+.3g}"
    )


def show(table: pl.DataFrame, columns: Sequence[str], rows: int) -> None:
    if rows == 0:  # only the count: for a run that writes the table to a file
        print(f"{table.height} rows not printed (--rows {table.height} prints them)")
        return
    place = ("from_score", "to_score", "share", "deviation")
    if "located" in columns and all(c in table.columns for c in place):
        cells = [located_cell(row) for row in table.select(place).iter_rows(named=True)]
        table = table.with_columns(pl.Series("located", cells, dtype=pl.String))
    shown = table.select([c for c in columns if c in table.columns])
    if "note" in shown.columns and any(c.endswith(("_q", "_p")) for c in shown.columns):
        # The q-value is in its own column: "not significant" says the rest.
        ignored = pl.col("note").str.starts_with("not significant")
        shown = shown.with_columns(
            pl.when(ignored).then(pl.lit("not significant")).otherwise(pl.col("note")).alias("note")
        )
    for quiet in ("located", "note"):
        if quiet in shown.columns and shown[quiet].null_count() == shown.height:
            shown = shown.drop(quiet)  # nothing to say: save the width
    shown = shown.with_columns(
        pl.col(c).map_elements(pretty_p, return_dtype=pl.String)
        for c in shown.columns
        if c.endswith(("_p", "_q")) and shown.schema[c].is_float()
    )
    hidden = max(0, shown.height - rows)
    shown = shown.head(rows)
    with pl.Config(
        tbl_rows=rows,
        tbl_cols=-1,
        tbl_width_chars=160,
        float_precision=4,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        fmt_str_lengths=40,
    ):
        print(shown)
    if hidden:
        print(f"... and {hidden} more rows (--rows {rows + hidden} shows all)")


def drawn_as_ranked(
    points: pl.DataFrame, row: dict[str, Any] | None, level: float, column: str = "kuiper_q"
) -> tuple[pl.DataFrame, str | None]:
    """A ranked table's group drawn by its table's rule (:mod:`polars_cumdev.method.findings`).

    The curve flags its stretch by its own p-value; a group taken from a
    table is judged by the table's q-value (adjusted over the groups), which
    may be larger. Returns the points (``located`` cleared when the group is
    not significant) and the chart's significance line (None when it is).
    """
    from polars_cumdev.method.findings import decided
    from polars_cumdev.report.wording import significance_heading

    if row is None or column not in row or decided(row):
        return points, None
    symbol = "q" if column.endswith("_q") else "p"
    words = significance_heading(row[column], level, symbol)
    return points.with_columns(pl.lit(False).alias("located")), f"{words} (no stretch shaded)"


def save_chart(chart: Any, target: Path) -> None:
    from polars_cumdev import charts

    charts.save(chart, target)
    say(f"wrote {target}")


def save_table(table: pl.DataFrame, path: str, fmt: str | None) -> None:
    fmt = fmt or Path(path).suffix.lower().lstrip(".") or "csv"
    if fmt == "csv":
        table.write_csv(path)
    elif fmt == "json":
        table.write_json(path)
    elif fmt == "parquet":
        table.write_parquet(path)
    else:
        raise CumdevError(f"cannot write {path}: unknown format {fmt!r} (csv, json or parquet)")
    say(f"wrote {path}")


def curve_summary(points: pl.DataFrame) -> dict[str, float | int | None]:
    """Kuiper and Kolmogorov-Smirnov statistics of a drill-down frame."""
    from polars_cumdev.method.normalization import MIN_SCORES, normalized
    from polars_cumdev.method.pvalues import ks_pvalue, kuiper_pvalue

    c = points["cumdiff"]
    kuiper = float(c.max() - c.min())  # type: ignore[operator]
    ks = float(c.abs().max())  # type: ignore[arg-type]
    raw_sigma = points["sigma"][0]
    sigma = float(raw_sigma) if raw_sigma is not None else 0.0
    n = int(points["k"].max())  # type: ignore[arg-type]
    out: dict[str, float | int | None] = {
        "n_scores": n,
        "kuiper": kuiper,
        "ks": ks,
        "delta": float(c[-1]),
        "sigma": sigma,
        "kuiper_z": None,
        "ks_z": None,
        "kuiper_p": None,
        "ks_p": None,
    }
    if normalized(n, sigma, MIN_SCORES["subpopulation"]):  # the rule of the screen's table
        out["kuiper_z"] = kuiper / sigma
        out["ks_z"] = ks / sigma
        out["kuiper_p"] = float(kuiper_pvalue(kuiper / sigma))
        out["ks_p"] = float(ks_pvalue(ks / sigma))
    return out


def print_summary(summary: dict[str, Any]) -> None:
    for key, value in summary.items():
        text = "null" if value is None else (f"{value:.6g}" if isinstance(value, float) else value)
        print(f"{key:>10}  {text}")
