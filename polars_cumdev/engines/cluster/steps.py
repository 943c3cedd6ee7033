"""The engine-neutral work of a cluster screen: what each task computes, and what the driver does.

The screen follows :mod:`polars_cumdev.engines.partitioned`; an engine adapter only
moves Polars frames between these functions:

| function | runs on | what it does |
| --- | --- | --- |
| :func:`sample_scores` | worker | a batch's sample of distinct scores (for the cuts) |
| :func:`merge_sample_stream` | driver | merge the batches' samples one at a time |
| :func:`cuts_from_sample` | driver | merge the samples; the cut points (their quantiles) |
| :func:`summarize_part` | worker | a batch's check counts and cell summaries |
| :func:`plan_screen` | driver | raise a failed check; merge the cells; plan |
| :func:`split_part` | worker | a batch's standardized rows, range by range |
| :func:`summarize_and_split_part` | worker | both, standardizing the batch once (Dask) |
| :func:`task_plan` | driver | the plan without what only the driver needs |
| :func:`run_range` | worker | one range's step (its rows checked in range) |
| :func:`combine_ranges` | driver | combine the ranges; flag the groups to locate |
| :func:`run_points` | worker | a range's second step, for the flagged groups only |
| :func:`finish_screen` | driver | stitch the located stretches; the screen's columns |

Everything a worker returns is small (per batch: one tally row, one row per
(range, group) cell) except the split rows, which the engine shuffles.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import polars as pl

from polars_cumdev.engines.cluster.checks import WMAX, WMIN, raise_tally, tally
from polars_cumdev.engines.cluster.request import Request
from polars_cumdev.engines.partitioned import (
    RANGE,
    ROWS_PER_RANGE,
    Locating,
    Plan,
    RangeResult,
    aggregate,
    cell_summaries,
    combine_cells,
    finish,
    flag,
    gather,
    merge_cell_summaries,
    plan_ranges,
    range_filter,
    range_points,
    range_step,
    stitch,
    with_located,
)
from polars_cumdev.engines.partitioned import cuts as cutting
from polars_cumdev.engines.partitioned.cells import piece_cell_summaries
from polars_cumdev.engines.partitioned.cuts import range_index
from polars_cumdev.errors import CumdevError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.method.weights import RATIO_LIMIT

__all__ = [
    "clock",
    "combine_ranges",
    "cuts_from_sample",
    "default_ranges",
    "finish_screen",
    "merge_sample_stream",
    "pack",
    "plan_screen",
    "run_points",
    "run_range",
    "sample_scores",
    "split_part",
    "summarize_and_split_part",
    "summarize_part",
    "task_plan",
    "unpack",
]


def clock(log: Callable[[str], None] | None) -> Callable[[str], None]:
    """A progress callback: ``log`` gets each step (or nothing).

    The elapsed time is added by :func:`polars_cumdev.progress.reporting`.
    """

    def note(message: str) -> None:
        if log is not None:
            log(message)

    return note


def pack(value: object) -> bytes:
    """Bytes of a task's small result (frames pickle as Arrow IPC), for engines that ship bytes."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(data: bytes) -> object:
    """The inverse of :func:`pack` (only for bytes the tasks of this screen produced)."""
    return pickle.loads(data)


#: Fewest rows per range the default range count asks for, up to :data:`WAVE` ranges.
MIN_RANGE_ROWS = 100_000
#: Ranges the default gives data of ``WAVE * MIN_RANGE_ROWS`` rows or more (tasks to share).
WAVE = 32


def default_ranges(rows: int, copies: int = 1) -> int:
    """The default number of score ranges for ``rows`` rows: a function of the row count alone.

    One range per :data:`MIN_RANGE_ROWS` rows up to :data:`WAVE` ranges (so
    that the range steps of data of a few million rows spread over the
    slots of a cluster), and at least one range per
    :data:`polars_cumdev.engines.partitioned.ROWS_PER_RANGE` rows (so that
    a range stays small). The slots of the cluster play no part: the same
    data gives the same ranges, hence the same bits, on any cluster.

    ``copies``: each row counts that many times toward a range's size, as when
    a range's task repeats its rows once per feature subset (multicalibration,
    :mod:`~polars_cumdev.engines.cluster.repeats`). The tasks are counted by the rows
    shuffled, one copy each: a task's fixed cost (its pieces gathered, its rows read)
    is per row shuffled, while its walk runs over ``copies`` times as many.
    """
    rows, copies = max(0, int(rows)), max(1, int(copies))
    total = rows * copies
    return max(1, min(WAVE, -(-rows // MIN_RANGE_ROWS)), -(-total // ROWS_PER_RANGE))


def sample_scores(chunk: pl.DataFrame, request: Request, size: int) -> pl.DataFrame:
    """A batch's sample of distinct finite scores for the cut points.

    See :mod:`polars_cumdev.engines.partitioned.cuts`.

    ``size`` is the sample size (:data:`polars_cumdev.engines.partitioned.SAMPLE_SIZE`,
    read on the driver). The samples of all batches merge, in any grouping
    and order, into the same sample: the cuts depend on the data alone.
    """
    return cutting.sample_scores(chunk.get_column(request.score), size)


def merge_sample_stream(samples: Iterable[pl.DataFrame], size: int | None = None) -> pl.DataFrame:
    """The batches' samples merged one at a time (the driver holds two samples at most)."""
    merged = cutting.merge_samples([])
    for sample in samples:
        merged = cutting.merge_samples([merged, sample], size)
    return merged


def cuts_from_sample(
    samples: Iterable[pl.DataFrame], ranges: int | Sequence[float], size: int | None = None
) -> list[float]:
    """Cut points for ``ranges`` ranges from the batches' samples (or the cuts given)."""
    return cutting.quantile_cuts(merge_sample_stream(samples, size), ranges)


def _clean(part: pl.DataFrame, weight: str | None) -> bool:
    """Whether a batch's own counts pass (then its rows can be summarized safely)."""
    counts = [c for c in part.columns if c.startswith("c")]
    fine = all(part.get_column(c).item() == 0 for c in counts)
    wmin, wmax = part.get_column(WMIN).item(), part.get_column(WMAX).item()
    spread = weight is not None and wmin is not None and wmin < wmax / RATIO_LIMIT
    return fine and not spread


def summarize_part(
    chunk: pl.DataFrame, request: Request, cuts: Sequence[float]
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """A batch's :func:`~polars_cumdev.engines.cluster.checks.tally` and cell summaries.

    The cells are computed only when the batch's own counts pass; otherwise
    the driver raises from the tallies and never needs them.
    """
    counts, chunk = _checked(chunk, request)
    if chunk is None:
        return counts, None
    return counts, _cells(request.standardize(chunk), request, cuts)


def summarize_and_split_part(
    chunk: pl.DataFrame, request: Request, cuts: Sequence[float]
) -> tuple[tuple[pl.DataFrame, pl.DataFrame | None], list[pl.DataFrame] | None]:
    """:func:`summarize_part` and :func:`split_part` of one batch, standardizing it once.

    The pieces are None when the batch failed a check (the driver raises
    before any range runs); an empty batch gives an empty piece per range.
    """
    counts, checked = _checked(chunk, request)
    if checked is None:
        return (counts, None), (split_part(chunk, request, cuts) if chunk.height == 0 else None)
    pieces = _split_rows(request.standardize(checked), cuts)
    return (counts, piece_cell_summaries(pieces, list(request.keys), cuts)), pieces


def _checked(chunk: pl.DataFrame, request: Request) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """A batch's tally, and the batch conformed to the schema when it is not empty and passes."""
    chunk = request.conform(chunk)
    counts = tally(chunk, request.checks(), request.weight)
    if not chunk.height or not _clean(counts, request.weight):
        return counts, None
    return counts, chunk


def _cells(rows: pl.DataFrame, request: Request, cuts: Sequence[float]) -> pl.DataFrame:
    return cell_summaries(rows, list(request.keys), cuts).collect(engine="in-memory")


def plan_screen(
    request: Request,
    parts: Sequence[tuple[pl.DataFrame, pl.DataFrame | None]],
    cuts: Sequence[float],
    count_below: Callable[[float], int],
    level: float = LEVEL,
) -> Plan:
    """Raise a failed check as in-process, then merge the cells and plan the ranges."""
    tallies = pl.concat([t for t, _ in parts], how="vertical_relaxed") if parts else pl.DataFrame()
    if not tallies.height:
        tallies = tally(request.empty(), request.checks(), request.weight)
    raise_tally(tallies, request.checks(), request.weight, count_below)
    keys = list(request.keys)
    cells = merge_cell_summaries([c for _, c in parts if c is not None], keys)
    labels = request.prepared().labels
    return plan_ranges(cells.collect(), keys, cuts, request.variance, labels, level=level)


def split_part(chunk: pl.DataFrame, request: Request, cuts: Sequence[float]) -> list[pl.DataFrame]:
    """A batch's standardized rows, one frame per range (empty frames for ranges it misses)."""
    return _split_rows(request.standardize(request.conform(chunk)), cuts)


def _split_rows(
    rows: pl.DataFrame, cuts: Sequence[float], score: pl.Expr | None = None
) -> list[pl.DataFrame]:
    """``rows`` one frame per range of ``score`` (the standardized score by default)."""
    count = len(cuts) + 1
    if count == 1:
        return [rows]
    score = pl.col(nm.SCORE) if score is None else score
    indexed = rows.with_columns(range_index(cuts, score).alias(RANGE))
    split = indexed.partition_by(RANGE, as_dict=True)
    pieces = {key[0]: piece.drop(RANGE) for key, piece in split.items()}
    empty = rows.clear()
    return [pieces.get(r, empty) for r in range(count)]


def task_plan(plan: Plan, r: int | None = None) -> Plan:
    """The part of the plan a range task needs: no cells; only range ``r``'s queries if given.

    The cells (one row per (range, group)) serve the combination on the
    driver only; leaving them out keeps what is shipped to every task small.
    """
    queries = plan.queries if r is None else plan.queries.filter(pl.col(RANGE) == r)
    return replace(plan, cells=plan.cells.clear(), queries=queries)


def _check_routed(rows: pl.DataFrame, plan: Plan, r: int) -> None:
    outside = rows.select((~range_filter(plan.cuts, r)).sum()).item()
    if outside:
        raise CumdevError(
            f"internal error: {outside} row(s) routed to score range {r} lie outside it"
        )


def run_range(rows: pl.DataFrame, plan: Plan, r: int) -> RangeResult:
    """The step of range ``r`` (:func:`polars_cumdev.engines.partitioned.range_step`).

    Raises when a row lies outside the range: the engine routed it wrong,
    which would otherwise change the result without a trace.
    """
    _check_routed(rows, plan, r)
    from polars_cumdev.method import compiled

    # The compiled step is about 4x faster than the Polars step (0.16 s against
    # 0.61 s for 500,000 rows); a worker pays Numba's cache load once.
    return range_step(rows, plan, r, compiled=compiled.available())


def combine_ranges(
    plan: Plan, results: Sequence[RangeResult | None]
) -> tuple[pl.DataFrame, Locating | None]:
    """The per-group statistics from the ranges' results, and what locating them needs.

    ``results[r]`` is ``None`` for a range without rows. The second value is
    ``None`` when no significant group has D > 2 sigma; otherwise the ranges
    ``locating.ranges`` are stepped again (:func:`run_points`) and the
    outputs finished by :func:`finish_screen`.
    """
    cells = combine_cells(plan, results)
    stats = aggregate(plan, cells)
    return stats, flag(plan, cells, stats)


def run_points(
    rows: pl.DataFrame, plan: Plan, r: int, cells: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The second step of range ``r`` (:func:`polars_cumdev.engines.partitioned.range_points`).

    ``cells`` are the range's flagged cells
    (:meth:`polars_cumdev.engines.partitioned.Locating.for_range`); the rows are
    checked as in :func:`run_range`.
    """
    _check_routed(rows, plan, r)
    from polars_cumdev.method import compiled

    return range_points(rows, plan, cells, compiled=compiled.available())


def finish_screen(
    plan: Plan,
    stats: pl.DataFrame,
    locating: Locating | None = None,
    outputs: Sequence[tuple[pl.DataFrame, pl.DataFrame]] = (),
) -> pl.DataFrame:
    """The screen from :func:`combine_ranges`' statistics and the second steps' outputs."""
    if locating is not None:
        stats = with_located(plan, stats, stitch(locating, *gather(outputs)))
    return finish(plan, stats)
