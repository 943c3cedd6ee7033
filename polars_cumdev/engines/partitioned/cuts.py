"""The score ranges: cut points and the predicate and index of a range."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.engines.partitioned.columns import Engine
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm

__all__ = ["SAMPLE_SIZE", "cut_points", "range_filter", "range_index"]

# Size of the systematic sample the quantile cut points are drawn from.
SAMPLE_SIZE = 1_000_000


def range_filter(cuts: Sequence[float], r: int, column: str = nm.SCORE) -> pl.Expr:
    """Predicate selecting range ``r`` of ``cuts``: c_{r-1} < S <= c_r."""
    s = pl.col(column)
    parts = []
    if r > 0:
        parts.append(s > cuts[r - 1])
    if r < len(cuts):
        parts.append(s <= cuts[r])
    if not parts:
        return pl.lit(True)
    return pl.all_horizontal(parts) if len(parts) > 1 else parts[0]


def range_index(cuts: Sequence[float], expr: pl.Expr) -> pl.Expr:
    """Index r of the range holding each value: the number of cuts strictly below it.

    ``bin_intervals`` with explicit breakpoints is elementwise, so it streams;
    a ``search_sorted`` of the column in a literal would make the streaming
    engine materialize the whole column (measured: 2.4 GiB for 2e8 rows).
    """
    if not cuts:
        return pl.lit(0, dtype=pl.UInt32)
    if hasattr(pl.Expr, "bin_intervals"):  # Polars >= 2.0 (experimental there)
        return expr.bin_intervals(list(cuts), labels=False, right_closed=True)
    return pl.sum_horizontal([(expr > c).cast(pl.UInt32) for c in cuts])


def _clean_cuts(cuts: Sequence[float]) -> list[float]:
    values = [float(c) for c in cuts]
    if not all(math.isfinite(c) for c in values):
        raise InvalidParameterError(f"cut points must be finite numbers, got {list(cuts)!r}")
    return sorted(set(values))


def cut_points(
    frame: pl.LazyFrame,
    ranges: int | Sequence[float],
    *,
    column: str = nm.SCORE,
    engine: Engine = "streaming",
) -> list[float]:
    """Cut points c_1 < ... < c_{R-1} for ``ranges`` score ranges.

    An integer R asks for R ranges of about equal row counts: the cuts are the
    (i / R)-quantiles (lower) of a systematic sample of at most
    :data:`SAMPLE_SIZE` scores; repeated quantiles (heavily tied scores) are
    merged, so fewer ranges can result. A sequence is taken as the cut points
    themselves. Any cuts give the same result; balanced ranges only keep the
    largest range small.
    """
    if not isinstance(ranges, int | np.integer) or isinstance(ranges, bool):
        if isinstance(ranges, str | bytes) or not isinstance(ranges, Sequence | np.ndarray):
            raise InvalidParameterError(
                f"`ranges` must be a positive int or a sequence of cut points, got {ranges!r}"
            )
        return _clean_cuts(ranges)
    count = int(ranges)
    if count < 1:
        raise InvalidParameterError(f"`ranges` must be at least 1, got {ranges!r}")
    if count == 1:
        return []
    rows = frame.select(pl.len()).collect(engine=engine).item()
    step = max(1, rows // SAMPLE_SIZE)
    sample = frame.select(pl.col(column)).gather_every(step).collect(engine=engine)
    values = sample.get_column(column).drop_nulls().drop_nans().to_numpy()
    if values.size == 0:
        return []
    count = min(count, values.size)  # more ranges than sampled values cut nowhere new
    levels = np.arange(1, count) / count
    quantiles = np.quantile(values, levels, method="lower")
    cuts = np.unique(quantiles)
    return _clean_cuts(cuts[cuts < values.max()].tolist())
