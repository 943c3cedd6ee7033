"""The reports' tables and numbers: headers in the user's terms, one format per column.

Both reports (:mod:`polars_cumdev.report.subpopulation`,
:mod:`polars_cumdev.report.calibration`) print their tables with
:func:`html_table`: every column has a readable header (``kuiper_q`` is
"q (BH-adjusted)") and one format, so that a column's numbers line up and
compare at a glance: counts with thousands separators, statistics with three
significant digits, p- and q-values in one notation (two significant digits,
"< 0.001" below a thousandth).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence

import polars as pl

from polars_cumdev.charts.export import xml_safe
from polars_cumdev.charts.numbers import p_text

__all__ = ["HEADERS", "format_cell", "html_table", "p_text", "stat_text"]

#: Column headers of the reports' tables in the user's terms.
HEADERS = {
    "n": "rows",
    "n_scores": "distinct scores",
    "weight": "weight",
    "kuiper": "Kuiper D",
    "kuiper_z": "D / sigma",
    "kuiper_p": "p",
    "kuiper_q": "q (BH-adjusted)",
    "ks": "Kolmogorov-Smirnov",
    "ks_z": "KS / sigma",
    "ks_p": "KS p",
    "ks_q": "KS q",
    "delta": "overall deviation",
    "ecce_r": "ECCE-R",
    "ecce_r_z": "ECCE-R / sigma",
    "ecce_r_p": "p",
    "ecce_r_q": "q (BH-adjusted)",
    "ecce_mad": "ECCE-MAD",
    "ecce_mad_z": "ECCE-MAD / sigma",
    "ecce_mad_p": "ECCE-MAD p",
    "ecce_mad_q": "ECCE-MAD q",
    "brier": "Brier score",
    "mcb": "miscalibration (MCB)",
    "dsc": "discrimination (DSC)",
    "unc": "uncertainty (UNC)",
    "p_family": "p_family (family-wise p)",
    "significant": "significant",
    "note": "note",
}


def stat_text(value: float) -> str:
    """A statistic with three significant digits, never in exponent form for moderate values."""
    if value == 0.0 or 1e-4 <= abs(value) < 1e6:
        digits = max(0, 2 - math.floor(math.log10(abs(value)))) if value else 0
        return f"{value:,.{digits}f}"
    return f"{value:.3g}"


def _is_p(column: str) -> bool:
    return column.endswith(("_p", "_q"))


def format_cell(value: object, column: str = "") -> str:
    """A table cell's text: empty for null; the format of ``column`` for numbers."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        formatter: Callable[[float], str] = p_text if _is_p(column) else stat_text
        return formatter(value)
    return xml_safe(str(value))


def html_table(frame: pl.DataFrame, columns: Sequence[str]) -> str:
    """``columns`` of ``frame`` as an HTML table, headed in the user's terms (``HEADERS``)."""
    head = "".join(f"<th>{html.escape(xml_safe(HEADERS.get(c, c)))}</th>" for c in columns)
    rows = [
        "<tr>"
        + "".join(f"<td>{html.escape(format_cell(row[c], c))}</td>" for c in columns)
        + "</tr>"
        for row in frame.select(columns).iter_rows(named=True)
    ]
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
