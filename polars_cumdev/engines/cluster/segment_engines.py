"""``multicalibration`` on Dask: the steps of :mod:`.segments` as Dask tasks.

Four rounds over the parts, which stay on the workers: first the checks and
value tables (the levels); second the per-segment rows and sums; third the
rows calibrated by segment and score range
(:func:`.dask_calibration.segment_statistics`: each row is shuffled once to
its score range, whose task walks it into its segment in every feature
subset; no segment, the whole population included, has to fit in one task;
each segment's largest weight comes with its statistics), then the
finite-sample p-values' few rows, read from the ranges
where they are; then the stretches of the segments found significant
family-wise (Holm, once); last, only when some significant segment may be an echo,
that segment's rows. Only per-segment summaries and those few rows reach the
driver.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import polars as pl

from polars_cumdev.engines.cluster import dask_engine, finite, steps
from polars_cumdev.engines.cluster.checks import ROWS, raise_tally, tally
from polars_cumdev.engines.cluster.dask_calibration import segment_statistics
from polars_cumdev.engines.cluster.probe import probe_dask
from polars_cumdev.engines.cluster.repeats import Repeat, range_sums
from polars_cumdev.engines.cluster.request import Request, make_request
from polars_cumdev.engines.cluster.segment_levels import (
    levels_from_tables,
    merge_tables,
    refuse_unsupported,
    value_tables,
)
from polars_cumdev.engines.cluster.segments import (
    SEGMENT,
    Decision,
    Kept,
    Layout,
    decide,
    family_table,
    kept_segments,
    segment_numbers,
    segment_rows,
    segment_sums,
)
from polars_cumdev.engines.partitioned.calibration_drivers import Locate
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.multicalibration.api import MULTICALIBRATION_COLUMNS, check_options
from polars_cumdev.multicalibration.family import Segments
from polars_cumdev.multicalibration.walk import Options

__all__ = ["dask_multicalibration", "decided_family", "prepare_request", "too_few_rows"]


def prepare_request(
    schema: pl.Schema, family: Segments, score: str, response: str, weight: str | None
) -> Request:
    """The in-process checks of the arguments against the schema, and the request."""
    from polars_cumdev.calibration.table import CALIBRATION_COLUMNS

    family.check(schema, (*MULTICALIBRATION_COLUMNS, *CALIBRATION_COLUMNS, "p_family"))
    by = list(family.features) or None
    return make_request("calibration", schema, by, score, response, weight)


def options_of(
    segments: object, level: object, method: object, locate: object, engine: str
) -> Options:
    """The checked options (the in-process messages), refusing what the engines do not run."""
    if not isinstance(segments, Segments):
        raise InvalidParameterError(
            "`segments` must be made by polars_cumdev.segments(categorical=..., numerical=...)"
        )
    options = check_options(level, method, 999, 0, locate)
    refuse_unsupported(segments, options.method, engine)
    return replace(options, finite_sample=True)


def segment_request(request: Request) -> Request:
    """The calibration request of the repeated rows, grouped by segment."""
    schema = dict(request.schema)
    names = [request.score, request.response, *([request.weight] if request.weight else [])]
    columns = {SEGMENT: pl.Int64(), **{c: schema[c] for c in names}}
    return make_request(
        "calibration", pl.Schema(columns), SEGMENT, request.score, request.response,
        request.weight,
    )  # fmt: skip


def too_few_rows(tallies: pl.DataFrame, family: Segments) -> bool:
    """Whether the rows (counted by the checks' ``tallies``) are fewer than ``min_rows``:
    then no segment is kept, and the few rows are summed at once for the in-process error
    (else the range pass sums the segments)."""
    return int(tallies.get_column(ROWS).sum()) < family.min_rows


def decided_family(
    layout: Layout,
    family: Segments,
    options: Options,
    stats: pl.DataFrame,
    extra: pl.DataFrame,
    map_batches: finite.MapBatches,
    locate: Locate,
) -> tuple[Kept, np.ndarray, pl.DataFrame, Decision]:
    """After either engine's range pass (``stats``, the ranges' ``extra`` columns, a map
    over their rows, the locating pass): the family kept from the ranges' sums, the
    finite-sample p-values (0/1 segments redrawn, soft-label segments bounded: as in
    process), Holm once, then the significant segments' stretches located.
    Returns ``(kept, sums, stats, decision)``."""
    sums = range_sums(extra, layout.total)
    kept = kept_segments(layout, family, sums)
    stats = stats.join(pl.DataFrame({SEGMENT: kept.ids}), on=SEGMENT, how="semi")
    stats = finite.calibration_simulated(stats, [SEGMENT], options.level, map_batches, extra)
    decision = decide(kept, stats, options)
    if options.locate:  # the significant segments' stretches: one more pass
        stats = locate(stats, decision.chosen(kept))
    return kept, sums, stats, decision


def _tables(chunk: pl.DataFrame, request: Request, family: Segments) -> tuple:
    counts, checked = steps._checked(chunk, request)
    return counts, (None if checked is None else value_tables(checked, family))


def _sums(chunk: pl.DataFrame, request: Request, layout: Layout) -> np.ndarray:
    return segment_sums(request.conform(chunk), request, layout)


def _rows(chunk: pl.DataFrame, request: Request, layout: Layout, wanted: list[int]):
    return segment_rows(request.conform(chunk), request, layout, wanted)


def dask_multicalibration(
    source: Any,
    score: str,
    response: str,
    weight: str | None,
    *,
    segments: Segments,
    level: float,
    method: str,
    locate: bool,
    scheduler: Any,
) -> pl.DataFrame:
    """See :func:`polars_cumdev.dask.multicalibration`."""
    options = options_of(segments, level, method, locate, "Dask")
    names = [*segments.features, score, response, *([weight] if weight else [])]

    def make(schema: pl.Schema) -> Request:
        return prepare_request(pl.Schema(schema), segments, score, response, weight)

    with dask_engine._client(scheduler) as client:
        probe_dask(client)
        parts, request = dask_engine._load(client, source, make, names)
        found = client.gather(client.map(_tables, parts, request=request, family=segments))
        tallies = [t for t, _ in found]
        merged = pl.concat(tallies, how="vertical_relaxed") if tallies else pl.DataFrame()
        if not merged.height:
            merged = tally(request.empty(), request.checks(), request.weight)
        count_below = dask_engine._count_below(client, parts, request.weight)
        raise_tally(merged, request.checks(), request.weight, count_below)
        per_part = [t for _, t in found if t is not None]
        per_part = per_part or [value_tables(request.empty(), segments)]
        tables = merge_tables(per_part, len(segments.features))
        levels = levels_from_tables(tables, segments, pl.Schema(dict(request.schema)))
        layout = Layout.of(levels, segments)
        if too_few_rows(merged, segments):  # (no segment can be kept: the in-process error)
            sums = client.gather(client.map(_sums, parts, request=request, layout=layout))
            kept_segments(layout, segments, sum(sums, np.zeros((layout.total, 3))))
        grouped = segment_request(request)
        # Each row crosses the network once: every range's task walks its own rows into
        # their segments, and sums them (the family kept) beside the calibration.
        repeat = Repeat(request, len(layout.subsets), partial(segment_numbers, layout=layout))
        found = segment_statistics(client, parts, grouped, repeat)
        kept, sums, stats, decision = decided_family(layout, segments, options, *found)

        def gather(wanted: Sequence[int]) -> pl.DataFrame:
            rows = client.map(_rows, parts, request=request, layout=layout, wanted=list(wanted))
            return pl.concat(client.gather(rows), how="vertical_relaxed")

        return family_table(
            layout, segments, options, kept, stats, decision, sums, request.prepared().labels,
            gather, weight is not None,
        )  # fmt: skip
