"""Altair charts of the tidy frames produced by polars-cumdev.

Every function takes a Polars frame with documented columns and returns an
Altair chart; none computes statistics beyond trivial display summaries
(e.g. the range of a column for a title). :func:`save` writes a chart as
Vega-Lite JSON, SVG, PNG, PDF or self-contained HTML via ``vl-convert``.

* :func:`cumulative` - cumulative differences against A_k (or k/n), with the
  triangle at the origin, scores on the lower axis and k/n on the upper one.
* :func:`reliability` - binned reliability diagram, subpopulation in black,
  full population in gray, bootstrap resamples in light gray.
* :func:`screen` - every group's Kuiper z, ranked, significant groups filled.
* :func:`drift` - each time window's calibration z against time, with the
  family-wise critical line; flagged windows named.
* :func:`funnel` - every segment's z against its weight, with the family-wise
  critical z (multicalibration).
* :func:`ece_sweep` - binned ECEs against the number of bins, beside the ECCEs.
* :func:`covariate_map` - the points of a curve on Hilbert order in the plane
  of two covariates, coloured by their position along the curve.
* :func:`calibration_classes` - one cumulative calibration plot per class of a
  class-wise curve frame.
* :func:`overlay` - several cumulative calibration curves on one chart, one
  colour per model (two scikit-learn displays added together).
* :func:`corp` - CORP reliability diagram: isotonic recalibration, consistency
  band, diagonal, histogram of the scores.
"""

from __future__ import annotations

from polars_cumdev.charts.classes import calibration_classes
from polars_cumdev.charts.corp import corp
from polars_cumdev.charts.covariates import covariate_map
from polars_cumdev.charts.cumulative import cumulative
from polars_cumdev.charts.drift import drift
from polars_cumdev.charts.ece import ece_sweep
from polars_cumdev.charts.export import save
from polars_cumdev.charts.funnel import funnel
from polars_cumdev.charts.overlay import overlay
from polars_cumdev.charts.recalibration import before_after
from polars_cumdev.charts.reliability import reliability
from polars_cumdev.charts.screen import screen

__all__ = [
    "before_after",
    "calibration_classes",
    "corp",
    "covariate_map",
    "cumulative",
    "drift",
    "ece_sweep",
    "funnel",
    "overlay",
    "reliability",
    "save",
    "screen",
]
