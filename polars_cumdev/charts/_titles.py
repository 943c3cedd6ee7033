"""The words above the plot of cumulative differences: its title and its statistics.

The title says what the slope means (:func:`default_title`). The subtitle
states the curve's statistics: Kuiper's range and Kolmogorov-Smirnov's
maximum, divided by sigma only where the tables would normalize them
(:func:`statistics_lines`), and, when no stretch is shaded, the curve's own
Kuiper p-value (:func:`unshaded_line`).
"""

from __future__ import annotations

import numpy as np

from polars_cumdev.charts import _style
from polars_cumdev.charts.numbers import p_text
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.method.normalization import MIN_SCORES
from polars_cumdev.method.pvalues import kuiper_pvalue

__all__ = ["default_title", "statistics_lines", "unshaded_line"]


def default_title(kind: str, weighted: bool) -> str:
    """The default title of a cumulative plot, in plain words: what the slope means.

    Parameters
    ----------
    kind
        ``"subpopulation"``, ``"calibration"``, ``"compare"`` or ``"paired"``.
    weighted
        Whether the horizontal coordinate is the cumulative weight (A_k)
        rather than the share of points (k/n, the upper axis).

    Returns
    -------
    str
        The title text.
    """
    variable = "cumulative weight" if weighted else "k/n"
    lead = {
        "subpopulation": "deviation from the full population",
        "calibration": "miscalibration",
        "compare": "deviation of first from second",
        "paired": "paired difference, first minus second",
    }[kind]
    return f"slope against {variable} = {lead}"


_UNITS = {
    "subpopulation": ("distinct score", "distinct scores"),
    "calibration": ("distinct score", "distinct scores"),
    "compare": ("centred difference", "centred differences"),
    "paired": ("distinct score", "distinct scores"),
}


def _count(n: int, kind: str) -> str:
    one, many = _UNITS[kind]
    return f"n = {n:,} {one if n == 1 else many}"


def statistics_lines(
    cumdiff: np.ndarray, sigma: float | None, n: int, kind: str, shows_z: bool
) -> list[str]:
    """Kuiper's range and Kolmogorov-Smirnov's maximum of C_k, over sigma when normalized.

    Whether they are normalized (``shows_z``: z shown, triangle drawn) follows
    the rule of the tables, :func:`polars_cumdev.method.normalization.normalized`.
    """
    # The origin (C_0 = 0) always counts, even if the frame omitted its row.
    kuiper = float(max(cumdiff.max(), 0.0) - min(cumdiff.min(), 0.0))
    ks = float(np.abs(cumdiff).max())
    s = _style.SIGMA
    count = _count(n, kind)
    if sigma is None:
        return [
            f"Kuiper {kuiper:.4g}; Kolmogorov-Smirnov {ks:.4g}",
            f"{count}; sigma is 0 or unavailable: not normalized, no triangle",
        ]
    if not shows_z:
        return [
            f"Kuiper {kuiper:.4g}; Kolmogorov-Smirnov {ks:.4g}",
            f"{count}; the normalized statistics need at least {MIN_SCORES[kind]}: "
            "not normalized, no triangle",
        ]
    return [
        f"Kuiper {kuiper:.4g} = {kuiper / sigma:.4g}{s}; "
        f"Kolmogorov-Smirnov {ks:.4g} = {ks / sigma:.4g}{s}",
        f"{count}; the triangle at the origin spans ±2{s} = ±{2 * sigma:.3g}",
    ]


def unshaded_line(cumdiff: np.ndarray, sigma: float) -> str:
    """The curve's own Kuiper p-value, where the curve flags no stretch to shade."""
    p = float(kuiper_pvalue(float(max(cumdiff.max(), 0.0) - min(cumdiff.min(), 0.0)) / sigma))
    judged = " (not significant)" if p > LEVEL else ""
    return f"Kuiper p = {p_text(p)}: no stretch shaded{judged}"
