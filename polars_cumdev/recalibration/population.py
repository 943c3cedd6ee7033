"""The audit of a recalibration without segment features: the full population alone.

``recalibrate(segments=None)`` fits only what the full population's audit
proves: the global monotone map (or, when the map does not help, one shift
of everyone). The multicalibration audit refuses a family that names no
feature (its full population alone is ``calibration(...)``); this module
gives the fit the same audit of the full population, with the same
columns, the same adjustment (``method``) and so the same ``p_family``, by
auditing the family of one constant feature at depth 0, whose only segment
is the full population.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

import polars as pl

from polars_cumdev.multicalibration import Segments, multicalibration

__all__ = ["POPULATION", "audit", "featureless"]

F = TypeVar("F", pl.DataFrame, pl.LazyFrame)

#: The family of ``recalibrate(segments=None)``: no feature, the full population alone.
POPULATION = Segments(categorical=(), numerical=(), depth=0, levels=None, min_rows=1)


def featureless(family: Segments) -> bool:
    """Whether ``family`` names no feature (its only segment is the full population)."""
    return not family.features


def _constant(frame: F, family: Segments) -> tuple[F, Segments, str | None]:
    """``frame`` with one constant feature added when ``family`` names none, and its family."""
    if not featureless(family):
        return frame, family, None
    taken = set(frame.collect_schema().names())
    name = "population"
    while name in taken:
        name += "_"
    constant = replace(family, categorical=(name,), numerical=(), depth=0, feature_levels=())
    return frame.with_columns(pl.lit(True).alias(name)), constant, name


def audit(frame: F, score: str, response: str, weight: str | None, family: Segments,
          **options: Any) -> pl.DataFrame:  # fmt: skip
    """:func:`~polars_cumdev.multicalibration.multicalibration` of ``frame``, any family.

    A featureless family is audited as the one segment of depth 0 (the full
    population): one row, the table's columns (no feature column).
    """
    rows, used, added = _constant(frame, family)
    table = multicalibration(rows, score, response, weight, segments=used, **options)
    if isinstance(table, pl.LazyFrame):
        table = table.collect()
    return table.drop(added) if added else table
