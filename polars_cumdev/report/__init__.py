"""Self-contained HTML reports: the screen with its drill-downs, and the calibration audit.

- :mod:`.subpopulation`: :func:`report` and :func:`render_html`;
- :mod:`.calibration`: :func:`calibration_report`;
- :mod:`.multicalibration`: :func:`multicalibration_report`;
- :mod:`.wording`: the located stretch in words, for the section headers.
"""

from __future__ import annotations

from polars_cumdev.report.calibration import calibration_report
from polars_cumdev.report.multicalibration import multicalibration_report
from polars_cumdev.report.recalibration import recalibration_report
from polars_cumdev.report.subpopulation import (
    HEADERS,
    format_cell,
    html_table,
    render_html,
    report,
)

__all__ = [
    "HEADERS",
    "calibration_report",
    "format_cell",
    "html_table",
    "multicalibration_report",
    "recalibration_report",
    "render_html",
    "report",
]
