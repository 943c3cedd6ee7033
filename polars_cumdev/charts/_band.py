"""Significance band and noise envelope of the plot of cumulative differences.

Two references for reading a cumulative curve without the p-values:

* the Kolmogorov-Smirnov band, plus and minus z_alpha sigma around zero,
  z_alpha the critical value at level alpha
  (:func:`polars_cumdev.method.pvalues.ks_critical`): the curve leaves it exactly
  when max_k |C_k| / sigma > z_alpha, that is when the Kolmogorov-Smirnov
  p-value is below alpha;
* the pointwise envelope of pure noise, plus and minus two sigma times the
  square root of the share of sigma^2 accumulated by point k (the frame's
  ``variance_share``): under the null hypothesis C_k has standard deviation
  sigma times that root, so the envelope is where a driftless curve spends
  about 95% of its time at each point. Leaving it locally is not a test of
  the whole curve, only a guide to where the deviation builds up.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._data import inline
from polars_cumdev.errors import InvalidParameterError

__all__ = ["band_layers", "check_band"]


def check_band(band: object) -> float | None:
    """Validate the ``band`` argument: ``None`` or a level alpha in (0, 1)."""
    if band is None:
        return None
    if isinstance(band, bool) or not isinstance(band, int | float) or not 0.0 < band < 1.0:
        raise InvalidParameterError(f"`band` must be None or a level in (0, 1), got {band!r}")
    return float(band)


def band_layers(
    shown: pl.DataFrame, sigma: float, alpha: float, ks: float, y_axis: alt.Axis
) -> tuple[list[alt.Chart], str]:
    """The band and envelope layers, and a subtitle line saying whether the curve leaves the band.

    Parameters
    ----------
    shown
        The rows of the curve frame that are drawn (``a`` and
        ``variance_share``).
    sigma
        The curve's sigma (finite, positive).
    alpha
        Level of the Kolmogorov-Smirnov band.
    ks
        max_k |C_k| over the whole curve.
    y_axis
        The vertical axis shared by every layer.

    Returns
    -------
    tuple
        ``(layers, subtitle)``: the layers ``ks_band`` (two dashed rules) and
        ``noise_envelope`` (two dotted lines), and one line of text.
    """
    from polars_cumdev.method.pvalues import ks_critical

    critical = ks_critical(alpha)
    half = critical * sigma
    s = _style.SIGMA
    rules = (
        alt.Chart(alt.InlineData(values=[{"edge": half}, {"edge": -half}]))
        .mark_rule(color=_style.SIGNIFICANT, strokeDash=[6, 3], strokeWidth=1, clip=True)
        .encode(
            y=alt.Y("edge:Q", axis=y_axis),
            tooltip=[alt.Tooltip("edge:Q", title=f"±{critical:.4g}{s}", format=".4~g")],
        )
        .properties(description="ks_band")
    )
    share = shown.get_column("variance_share").cast(pl.Float64).fill_null(np.nan).to_numpy()
    a = shown.get_column("a").cast(pl.Float64).to_numpy()
    reach = 2.0 * sigma * np.sqrt(np.clip(share, 0.0, 1.0))
    envelope = pl.DataFrame({"a": a, "envelope": reach})
    noise = (
        alt.Chart(inline(envelope))
        .transform_calculate(lower="-datum.envelope")
        .transform_fold(["envelope", "lower"], as_=["side", "reach"])
        .mark_line(color=_style.REFERENCE, strokeDash=[2, 2], strokeWidth=1, clip=True)
        .encode(
            x=alt.X("a:Q", axis=None),
            y=alt.Y("reach:Q", axis=y_axis),
            detail="side:N",
        )
        .properties(description="noise_envelope")
    )
    leaves = math.isfinite(ks) and ks > half
    verdict = "leaves it: KS p < " if leaves else "stays inside: KS p ≥ "
    text = (
        f"dashed: ±{critical:.3g}{s}, the curve {verdict}{alpha:g}; "
        f"dotted: ±2{s}·√(share of {s}² so far)"
    )
    return [rules, noise], text
