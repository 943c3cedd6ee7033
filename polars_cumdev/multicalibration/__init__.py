"""Multicalibration: the calibration of every intersection of a few features.

:func:`segments` describes the family (every conjunction of at most ``depth``
feature levels); :func:`multicalibration` computes each segment's ECCE-R,
sigma, z and p-value from one sort by score, adjusts the p-values for the
whole family (Holm, or a max-z parametric bootstrap), and tells new findings
from inherited ones; :func:`summary` gives the figures a modeller reports,
MCGrad's ``mce``, ``mce_sigma``, ``mde`` among them
(``multicalibration-mcgrad.md``).
"""

from polars_cumdev.multicalibration.api import (
    MULTICALIBRATION_COLUMNS,
    multicalibration,
    subpop,
)
from polars_cumdev.multicalibration.family import Segments, segments
from polars_cumdev.multicalibration.summary import summary

__all__ = [
    "MULTICALIBRATION_COLUMNS",
    "Segments",
    "multicalibration",
    "segments",
    "subpop",
    "summary",
]
