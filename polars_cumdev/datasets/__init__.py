"""Example data, generated deterministically (no download, no file on disk).

Three families of loaders:

* :func:`census`, a simulated survey shaped like the American Community
  Survey example of the subpopulation paper (weighted, 41 counties);
* four synthetic subpopulation examples that follow the constructions of the
  paper's section "Synthetic" (figures 1, 3, 5 and 7): :func:`notch`,
  :func:`smooth_oscillation`, :func:`step_oscillation` and
  :func:`weighted_outliers`;
* three synthetic calibration examples in the spirit of the paper's
  appendix A: :func:`calibration_linear`, :func:`calibration_overconfident`
  and :func:`calibration_oscillating`.
* two paired examples (two responses per unit): :func:`paired_synthetic`
  and :func:`paired_models`;
* a model's predictions week by week with drift planted in one week, for
  monitoring calibration over time: :func:`weekly_predictions`.

The synthetic loaders return the true success probability of every row in
the column ``expected``, so the ground truth can be plotted next to what the
method recovers from the random 0/1 responses alone. The paper specifies the
scores and the subpopulation's indices exactly, and those are reproduced
exactly here; it describes the probabilities only in words, so the formulas
for ``expected`` are this package's own (each loader documents its choice).

Every loader draws from :func:`numpy.random.default_rng` with a fixed seed, so
the same call returns the same frame on every machine with the same NumPy
major version.
"""

from __future__ import annotations

from polars_cumdev.datasets.calibration_examples import (
    CALIBRATION_EXAMPLES,
    calibration_linear,
    calibration_oscillating,
    calibration_overconfident,
)
from polars_cumdev.datasets.monitoring import weekly_predictions
from polars_cumdev.datasets.paired_examples import paired_models, paired_synthetic
from polars_cumdev.datasets.scored import census_scored
from polars_cumdev.datasets.subpopulation_examples import (
    SYNTHETIC_EXAMPLES,
    notch,
    notch_indices,
    power_indices,
    smooth_oscillation,
    step_oscillation,
    weighted_outliers,
)
from polars_cumdev.datasets.survey import COUNTIES, PAPER_STATISTICS, census

__all__ = [
    "CALIBRATION_EXAMPLES",
    "COUNTIES",
    "PAPER_STATISTICS",
    "SYNTHETIC_EXAMPLES",
    "calibration_linear",
    "calibration_oscillating",
    "calibration_overconfident",
    "census",
    "census_scored",
    "notch",
    "notch_indices",
    "paired_models",
    "paired_synthetic",
    "power_indices",
    "smooth_oscillation",
    "step_oscillation",
    "weekly_predictions",
    "weighted_outliers",
]
