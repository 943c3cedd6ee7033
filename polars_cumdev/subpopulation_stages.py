"""The subpopulation's stages on either engine: per-group statistics and one group's points.

:func:`~polars_cumdev.subpopulation.screen` needs every group's statistics
and :func:`~polars_cumdev.subpopulation.curve` the merged points of one
subpopulation with their bins. Each comes two ways, with the same layout:
from the Polars stages (ties -> bins -> accumulate -> statistics, one lazy
query over all groups) or from the compiled node of
:mod:`polars_cumdev.method.compiled`. When ``engine="auto"`` is left to run
time (a lazy input), the node runs the Polars stages on its rows if they are
few.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled, kernel_frames
from polars_cumdev.method.accumulate import accumulate
from polars_cumdev.method.bins import locate_bins
from polars_cumdev.method.keys import coded
from polars_cumdev.method.prefix_sums import full_population_prefix
from polars_cumdev.method.prepare import Prepared, schema_of
from polars_cumdev.method.statistics import FACTS_SCHEMA, SUMMARY_SCHEMA, summarize, with_location
from polars_cumdev.method.summary_columns import EVENTS
from polars_cumdev.method.ties import merge_ties
from polars_cumdev.method.weights import SCALE

__all__ = ["POINT_SCHEMA", "points_node", "polars_points", "polars_summary", "summary_node"]

#: The points of one subpopulation with their bins, as the curve needs them.
POINT_SCHEMA: dict[str, pl.DataType] = {
    nm.SCORE: pl.Float64(),
    nm.WEIGHT: pl.Float64(),
    nm.RESPONSE: pl.Float64(),
    nm.TIE: pl.Float64(),
    nm.ROWS: pl.Int64(),
    nm.BIN_WEIGHT: pl.Float64(),
    nm.BIN_ROWS: pl.Int64(),
    nm.REFERENCE: pl.Float64(),
    nm.BIN_VARIANCE: pl.Float64(),
    nm.REFERENCE_ERROR: pl.Float64(),
    nm.BERNOULLI_ERROR: pl.Float64(),
    nm.VARIANCE_ERROR: pl.Float64(),
    nm.OVERFLOW: pl.Boolean(),
    SCALE: pl.Float64(),
}


def _binned(
    full: pl.LazyFrame,
    subpopulation: pl.LazyFrame,
    keys: Sequence[str],
    types: dict[str, pl.DataType] | None = None,
) -> pl.LazyFrame:
    """Merged points of ``subpopulation`` with their bins in ``full`` (both sorted by score).

    ``types``: the keys' dtypes, when known (:func:`merge_ties`).
    """
    # (any group order: the screen sorts its result)
    points = merge_ties(subpopulation, keys, any_group_order=True, types=types)
    return locate_bins(points, full_population_prefix(full), keys)


def polars_summary(
    ordered: pl.LazyFrame,
    keys: Sequence[str],
    binary: pl.LazyFrame,
    key_types: dict[str, pl.DataType],
    texts: Sequence[str] = (),
) -> pl.LazyFrame:
    """The screen's per-group statistics by the Polars stages (rows sorted by score).

    ``key_types``: the keys' dtypes in the user's frame; ``texts``: the keys
    that came as strings and run through the stages as categoricals
    (:func:`~polars_cumdev.method.keys.coded`), strings again in the summary.
    (Cached points: the summary and the location both read them.)
    """
    types = {k: pl.Categorical() if k in texts else key_types[k] for k in keys}
    accumulated = accumulate(_binned(ordered, ordered, keys, types), keys).cache()
    summary = with_location(summarize(accumulated, keys), accumulated, keys, binary, types)
    return summary.with_columns(pl.col(k).cast(pl.String) for k in texts) if texts else summary


def summary_node(
    prepared: Prepared, choice: compiled.Choice, variance: str, level: float
) -> pl.LazyFrame:
    """Per-group statistics (:func:`summarize`'s layout, with ``BINARY``, ``RMAX`` and
    ``EVENTS``, the effective events the walk sums for the finite-sample step).

    From the compiled node; ``"auto"`` below the threshold runs the Polars
    stages on the node's rows instead. Stretches are located only in groups
    significant at ``level`` by their own p-value
    (:func:`polars_cumdev.method.kernel_frames.location`).
    """
    keys = prepared.keys
    source = schema_of(prepared.source)
    schema = {**{k: source[k] for k in keys}, **SUMMARY_SCHEMA, **FACTS_SCHEMA}
    schema[EVENTS] = pl.Float64()

    def run(rows: compiled.Rows) -> pl.DataFrame:
        found = compiled.response_facts(rows)
        constants = compiled.facts(rows, variance, found)
        if choice == "at run time" and rows.small:
            binary = pl.LazyFrame([constants])
            ordered, texts = coded(compiled.standardized(rows, prepared), prepared.key_types)
            summary = polars_summary(ordered, keys, binary, prepared.key_types, texts)
            summary = summary.with_columns(
                pl.col("weight") / rows.scale,
                *[pl.lit(v).alias(n) for n, v in constants.items()],
                pl.lit(None, dtype=pl.Float64).alias(EVENTS),  # (not summed by these stages)
            )
            return summary.select(list(schema)).collect(engine="in-memory")
        ids, offset, count = rows.groups
        k = compiled.kernel()
        columns = (rows.s, rows.r, rows.w, rows.weighted, rows.scale)
        out, first, starts, curves = k.screen_events(
            ids, offset, *columns, count, rows.centre, True
        )
        binary = bool(constants[nm.BINARY])
        recorded = (starts, curves[:, 0], curves[:, 1], None)  # (no scores: see location)
        located = kernel_frames.location(
            rows, ids, offset, out, first, binary, recorded=recorded, level=level
        )
        events = {EVENTS: kernel_frames.walk_events(out, found[0])}
        summary = kernel_frames.summary_frame(
            rows, keys, out, first, {**constants, **located, **events}
        )
        return summary.select(list(schema))

    return compiled.node(prepared, run, schema, grouped=True)


def polars_points(ordered: pl.LazyFrame) -> pl.LazyFrame:
    """The subpopulation's points with their bins, by the Polars stages (sorted rows)."""
    members = ordered.filter(pl.col(nm.MEMBER)).drop(nm.MEMBER)
    return _binned(ordered, members, [])


def points_node(prepared: Prepared, choice: compiled.Choice, mask: pl.Expr) -> pl.LazyFrame:
    """The points of the subpopulation ``mask`` with their bins, from the compiled node."""

    def run(rows: compiled.Rows) -> pl.DataFrame:
        if choice == "at run time" and rows.small:
            points = polars_points(compiled.standardized(rows, prepared))
            points = points.with_columns(pl.lit(rows.scale).alias(SCALE))
            return points.select(list(POINT_SCHEMA)).collect(engine="in-memory")
        member = rows.frame([nm.MEMBER]).to_series().to_numpy()
        values, ints, flags = compiled.kernel().group_points(
            member, rows.s, rows.r, rows.w, rows.weighted, rows.scale, rows.centre
        )
        return kernel_frames.points_frame(rows, values, ints, flags)

    return compiled.node(prepared, run, POINT_SCHEMA, extra={nm.MEMBER: mask})
