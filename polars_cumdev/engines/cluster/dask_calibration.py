"""``calibration(by=)`` on Dask by score ranges: the tasks of :mod:`.range_calibration`.

1. each part's distinct scores are sampled (the cut points: the data's alone);
2. each part is checked and its standardized rows split by range (kept on
   its worker); the tallies reach the driver, which raises a failed check;
3. each range's pieces are put together on one worker and kept there; one
   task walks them into cells;
4. the driver combines the cells, adds the finite-sample p-values (the
   chosen groups' rows only reach it) and, when some significant group has
   D > 2 sigma, has the ranges holding it walked once more where they are,
   for those groups.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster import dask_engine, steps
from polars_cumdev.engines.cluster.batches import dask_ranges
from polars_cumdev.engines.cluster.finite import MapBatches
from polars_cumdev.engines.cluster.probe import probe_dask
from polars_cumdev.engines.cluster.range_calibration import (
    check_and_split,
    range_cells,
    range_points,
    weight_scale,
)
from polars_cumdev.engines.cluster.repeats import Repeat, RepeatedRange, split_cells, split_loaded
from polars_cumdev.engines.cluster.request import Request
from polars_cumdev.engines.partitioned import cuts as cutting
from polars_cumdev.engines.partitioned.calibration_drivers import (
    Locate,
    calibrate_ranges,
    locate_chosen,
)
from polars_cumdev.engines.partitioned.calibration_ranges import combine
from polars_cumdev.method.findings import LEVEL

__all__ = ["calibrate_by_ranges", "calibration", "segment_statistics"]


def _rows(*pieces: pl.DataFrame) -> pl.DataFrame:
    found = [p for p in pieces if p.height]
    return pl.concat(found, how="vertical_relaxed") if found else pieces[0]


def _cells_task(keys, cuts, scale, r, rows: pl.DataFrame | RepeatedRange):
    if isinstance(rows, RepeatedRange):  # (its copies walked without being made)
        return rows.cells(cuts, scale, r)
    return range_cells(rows, keys, cuts, scale, r)


def _points_task(keys, cuts, scale, r, cells, rows: pl.DataFrame | RepeatedRange):
    if isinstance(rows, RepeatedRange):
        return rows.points(cuts, scale, r, cells)
    return range_points(rows, keys, cuts, scale, r, cells)


def _piece(split: tuple, r: int) -> pl.DataFrame:
    return split[1][r]


def _repeated_range(repeat: Repeat, request: Request, *pieces: pl.DataFrame) -> RepeatedRange:
    """A range's loaded rows, to be repeated by its tasks (kept on the worker)."""
    return RepeatedRange(_rows(*pieces), repeat, request)


def _ranged(
    client: Any, parts: list[Any], request: Request, ranges, note, repeat: Repeat | None = None
) -> tuple:
    """Rounds 1 to 3 prepared: the cuts, the scale, the ranges' rows (futures, filled by
    the first pass) and the two passes.

    With ``repeat``, ``parts`` are loaded rows that each range's task repeats: the
    sample, the checks and the split read them once, and the cuts are those of the
    repeated rows (:func:`~polars_cumdev.engines.partitioned.cuts.repeat_sample`).
    """
    size = cutting.SAMPLE_SIZE
    copies = 1 if repeat is None else repeat.copies
    sampled = request if repeat is None else repeat.source
    rows, merged = 0, cutting.merge_samples([])
    futures = client.map(dask_engine._sample, parts, request=sampled, size=size, pure=False)
    for count, sample in dask_engine._samples(futures):
        sample = sample if copies == 1 else cutting.repeat_sample(sample, copies)
        rows, merged = rows + count, cutting.merge_samples([merged, sample], size)
    del futures
    default = steps.default_ranges(rows, copies)
    cuts = cutting.quantile_cuts(merged, default if ranges is None else ranges)
    count = len(cuts) + 1
    note(f"round 1: {len(parts)} parts sampled; {count} score ranges")
    if repeat is None:
        split = client.map(check_and_split, parts, request=request, cuts=cuts)
    else:
        split = client.map(split_loaded, parts, repeat=repeat, cuts=cuts)
    tallies = client.gather(client.map(operator.itemgetter(0), split))
    checked = request if repeat is None else repeat.source
    count_below = dask_engine._count_below(client, parts, checked.weight)
    scale = weight_scale(checked, tallies, count_below)
    keys = list(request.keys)
    note("round 2: values checked, rows split by range")

    # Each range's pieces are put together once, on one worker, and kept there:
    # the second pass and the finite-sample gathers read them in place.
    held: dict[int, Any] = {}

    def cells_of() -> list[pl.DataFrame | None]:
        for r in range(count):
            pieces = [client.submit(_piece, s, r) for s in split]
            if repeat is None:
                held[r] = client.submit(_rows, *pieces)
            else:
                held[r] = client.submit(_repeated_range, repeat, request, *pieces)
        split.clear()  # (the scheduler keeps the pieces until the ranges are put together)
        tasks = [client.submit(_cells_task, keys, cuts, scale, r, held[r]) for r in range(count)]
        return client.gather(tasks)

    def points_of(wanted: dict[int, pl.DataFrame]) -> list:
        tasks = [
            client.submit(_points_task, keys, cuts, scale, r, cells, held[r])
            for r, cells in wanted.items()
        ]
        return client.gather(tasks)

    return keys, cuts, scale, held, cells_of, points_of


def calibration(
    source: Any,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    by: str | Sequence[str] | None = None,
    scheduler: Any = None,
    level: float = LEVEL,
    ranges: int | Sequence[float] | None = None,
) -> pl.DataFrame:
    """Calibration per group on Dask by score ranges; see :func:`polars_cumdev.dask.calibration`."""
    make = dask_engine._request_maker("calibration", by, score, response, weight, "auto")
    names = dask_engine._names(by, score, response, weight)
    with dask_engine._client(scheduler) as client:
        probe_dask(client)
        parts, request = dask_engine._load(client, source, make, names)
        return calibrate_by_ranges(client, parts, request, level, ranges)


def calibrate_by_ranges(
    client: Any,
    parts: list[Any],
    request: Request,
    level: float,
    ranges: int | Sequence[float] | None = None,
    log: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """The calibration table of parts (futures of Polars frames) already on the workers."""
    note = steps.clock(log)
    keys, cuts, scale, held, cells_of, points_of = _ranged(client, parts, request, ranges, note)
    batches = dask_ranges(client, held)  # (filled by cells_of, before any gather)
    prepared = request.prepared()
    return calibrate_ranges(keys, cuts, scale, level, prepared, cells_of, batches, points_of, note)


def segment_statistics(
    client: Any, parts: list[Any], request: Request, repeat: Repeat
) -> tuple[pl.DataFrame, pl.DataFrame, MapBatches, Locate]:
    """Every segment's statistics by score ranges (no stretch located yet), its largest
    weight and count of responses other than 0 and 1 per range
    (:func:`~polars_cumdev.engines.cluster.repeats.split_cells`), a map over the ranges'
    repeated rows (the finite-sample gathers read them in place) and the pass that
    locates the stretches of the segments a predicate chooses (the significant ones, once
    the family-wise decision is made).

    ``parts``: futures of the loaded rows, repeated per segment (the key ``SEGMENT``
    of ``request``) in each range's task by ``repeat``; no segment, the whole
    population included, has to fit in one task.
    """
    keys, _, scale, held, cells_of, points_of = _ranged(
        client, parts, request, None, steps.clock(None), repeat
    )
    batches = dask_ranges(client, held)  # (filled by cells_of, before any gather)
    cells, maxima = split_cells(cells_of())
    stats, joined = combine(cells, keys, scale)
    return stats, maxima, batches, partial(locate_chosen, joined, keys, points_of)
