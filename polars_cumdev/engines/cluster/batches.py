"""Mapping a small per-batch function over a cluster's rows (for :mod:`.finite`).

Each engine already holds the screen's standardized rows on its workers (Spark:
the rows shuffled by range and kept; Dask: each range's rows put together on a
worker); these adapters apply a function to every batch of them and gather the
small results to the driver (:data:`polars_cumdev.engines.cluster.finite.MapBatches`).
Spark's is :func:`polars_cumdev.engines.cluster.spark_jobs.batches`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster.finite import MapBatches, OfGroups
from polars_cumdev.engines.cluster.repeats import RepeatedRange
from polars_cumdev.engines.cluster.request import Request

__all__ = ["dask_parts", "dask_ranges"]


def _held_rows(rows: pl.DataFrame | RepeatedRange, function: Callable[[pl.DataFrame], object]):
    """``function`` of one range's standardized rows, held on a worker, or None when empty.

    A range held as loaded rows to repeat makes only the copies ``function`` reads
    (those of its groups' segments, :class:`~polars_cumdev.engines.cluster.finite.OfGroups`).
    """
    if not rows.height:
        return None
    if isinstance(rows, RepeatedRange):
        groups = function.groups if isinstance(function, OfGroups) else None
        return function(rows.standard(groups))
    return function(rows)


def dask_ranges(client: Any, held: Mapping[int, Any]) -> MapBatches:
    """Map over the futures ``held`` (range -> the range's standardized rows, or its
    :class:`~polars_cumdev.engines.cluster.repeats.RepeatedRange`, on a worker),
    in the order of the ranges (Dask's screen and calibration by score ranges)."""

    def run(function: Callable[[pl.DataFrame], object]) -> list:
        futures = [held[r] for r in sorted(held)]
        return client.gather(client.map(_held_rows, futures, function=function, pure=False))

    return run


def _part_rows(part: pl.DataFrame, request: Request, function: Callable) -> object:
    """``function`` of one loaded Dask part's standardized rows, or None when it is empty."""
    part = request.conform(part)
    return function(request.standardize(part)) if part.height else None


def dask_parts(client: Any, parts: list[Any], request: Request) -> MapBatches:
    """Map over the futures ``parts`` of the loaded (raw) Dask parts."""

    def run(function: Callable[[pl.DataFrame], object]) -> list:
        futures = client.map(_part_rows, parts, request=request, function=function, pure=False)
        return client.gather(futures)

    return run
