"""The cluster screen on Dask (``distributed``): Polars frames moved between the tasks as futures.

Three rounds of tasks, each a plain function of :mod:`polars_cumdev.engines.cluster.steps`:

1. load each part (a Dask DataFrame partition converted with
   :func:`polars.from_pandas`, or row groups of a Parquet file read with
   PyArrow and converted with :func:`polars.from_arrow`) and keep it on its
   worker; sample its distinct scores for the cut points (the samples merge
   on the driver into the same sample however the data is partitioned, so
   the cuts, and the bits of the result, depend on the data alone);
2. per part: its check counts and cell summaries (gathered to the driver,
   which raises a failed check and plans the ranges) and its rows split by
   score range (kept on the worker);
3. per range: the range's pieces are put together on one worker and kept
   there, and one task runs the range step; the small results are gathered
   and combined on the driver (the finite-sample p-values' few rows and sums
   are gathered from the kept ranges);
4. only when some significant group has D > 2 sigma: per range holding such a group,
   a task on the kept range lays out those groups' curves there
   (:func:`polars_cumdev.engines.cluster.steps.run_points`; nothing is shipped
   again); the driver stitches the located stretches.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster import finite, require, steps
from polars_cumdev.engines.cluster.batches import dask_ranges
from polars_cumdev.engines.cluster.checks import count_below
from polars_cumdev.engines.cluster.probe import probe_dask
from polars_cumdev.engines.cluster.request import Kind, Request, make_request
from polars_cumdev.engines.files import check_parquet_files, parquet_files, unreadable
from polars_cumdev.engines.partitioned import cuts as cutting
from polars_cumdev.errors import InvalidParameterError, first_line
from polars_cumdev.method.findings import LEVEL

__all__ = ["local_cluster", "screen"]

#: Rows of a Parquet part (row groups are gathered up to about this many rows).
PART_ROWS = 1_000_000


def local_cluster(workers: int | None = None) -> Any:
    """A ``distributed.Client`` on a new ``LocalCluster``: one process per core, one thread each.

    Polars in each worker is limited to one thread (``POLARS_MAX_THREADS``),
    so the workers do not oversubscribe the cores.
    """
    distributed = require("distributed", "dask")
    workers = workers or os.cpu_count() or 1
    # The client owns the cluster it starts: closing the client stops the workers.
    return distributed.Client(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        env={"POLARS_MAX_THREADS": "1"},
    )


#: Dask's own schedulers, named by a string, which run without dask.distributed.
_LOCAL_SCHEDULERS = (
    "synchronous", "sync", "single-threaded", "threads", "threading", "processes",
    "multiprocessing",
)  # fmt: skip


def _connect(distributed: Any, address: str) -> Any:
    """A client of the scheduler at ``address``; a CumdevError when it is not one."""
    if address in _LOCAL_SCHEDULERS:
        raise InvalidParameterError(
            f"`scheduler`={address!r} names one of Dask's local schedulers; polars_cumdev.dask "
            "runs its tasks through dask.distributed: pass a distributed.Client, a scheduler "
            "address such as 'tcp://10.0.0.5:8786', or None (a LocalCluster for the call)"
        )
    try:
        return distributed.Client(address)
    except (ValueError, OSError) as error:  # (a malformed address, or none answering)
        raise InvalidParameterError(
            f"`scheduler`={address!r}: no Dask scheduler reached at this address "
            f"({first_line(error)})"
        ) from error


@contextmanager
def _client(scheduler: Any):
    """The client to use: the one given, one for an address, the current one, or a new cluster."""
    distributed = require("distributed", "dask")
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    if isinstance(scheduler, str):
        client = _connect(distributed, scheduler)
    elif scheduler is None:
        try:
            yield distributed.get_client()
            return
        except ValueError:
            client = local_cluster()
    else:
        raise InvalidParameterError(
            f"`scheduler` must be a distributed.Client, an address or None, got {scheduler!r}"
        )
    try:
        yield client
    finally:
        client.close()


# -- loading parts -------------------------------------------------------------


def _from_pandas(frame: Any, columns: Sequence[str]) -> pl.DataFrame:
    return pl.from_pandas(frame[list(columns)], nan_to_null=False)


def _read_row_groups(path: str, groups: Sequence[int], columns: Sequence[str]) -> pl.DataFrame:
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(path).read_row_groups(list(groups), columns=list(columns))
    except (OSError, ValueError) as exc:  # a data page damaged behind a sound footer
        raise unreadable([path], columns, exc) from None
    return pl.from_arrow(table)


def _parquet_parts(paths: Sequence[str]) -> list[tuple[str, list[int]]]:
    """(file, row groups) of about :data:`PART_ROWS` rows each."""
    import pyarrow.parquet as pq

    parts: list[tuple[str, list[int]]] = []
    for path in paths:
        meta = pq.ParquetFile(path).metadata
        group: list[int] = []
        rows = 0
        for i in range(meta.num_row_groups):
            group.append(i)
            rows += meta.row_group(i).num_rows
            if rows >= PART_ROWS:
                parts.append((path, group))
                group, rows = [], 0
        if group or not parts:
            parts.append((path, group))
    return parts


def _load(client: Any, source: Any, request_of, names: Sequence[str]) -> tuple[list[Any], Request]:
    """Futures of the parts as Polars frames (kept on the workers) and the request."""
    require("pyarrow", "dask")
    if hasattr(source, "to_delayed") and hasattr(source, "_meta"):
        schema = pl.from_pandas(source._meta).schema
        request = request_of(schema)
        delayed = source[request.columns].to_delayed()
        pandas_parts = client.compute(delayed)
        parts = client.map(_from_pandas, pandas_parts, columns=request.columns, pure=False)
        del pandas_parts
        return parts, request
    if isinstance(source, str | Path | list | tuple):
        paths = parquet_files(source)
        # The files are checked against each other first (the in-process
        # screen's check and message), then the first one's schema is judged.
        check_parquet_files(paths, names)
        request = request_of(pl.scan_parquet(paths[:1]).collect_schema())
        specs = _parquet_parts(paths)
        parts = [
            client.submit(_read_row_groups, p, g, request.columns, pure=False) for p, g in specs
        ]
        return parts, request
    raise InvalidParameterError(
        "expected a dask.dataframe.DataFrame or Parquet path(s), got " + type(source).__name__
    )


def _count_below(client: Any, parts: list[Any], weight: str | None):
    def count(threshold: float) -> int:
        counts = client.map(count_below, parts, weight=weight, threshold=threshold)
        return sum(client.gather(counts))

    return count


def _sample(chunk: pl.DataFrame, request: Request, size: int) -> tuple[int, pl.DataFrame]:
    return chunk.height, steps.sample_scores(chunk, request, size)


def _samples(futures: list[Any]) -> Any:
    """The parts' (rows, sample) as they complete (the driver merges them one at a time)."""
    distributed = require("distributed", "dask")
    for future in distributed.as_completed(futures):
        yield future.result()
        future.release()


def _range_rows(*pieces: pl.DataFrame) -> pl.DataFrame:
    """A range's rows, its pieces from every part put together (kept on the worker)."""
    found = [p for p in pieces if p.height]
    return pl.concat(found, how="vertical_relaxed") if found else pieces[0]


def _range_task(plan: Any, r: int, rows: pl.DataFrame) -> Any:
    return steps.run_range(rows, plan, r)


def _points_task(plan: Any, r: int, cells: pl.DataFrame, rows: pl.DataFrame) -> Any:
    return steps.run_points(rows, plan, r, cells)


def _piece(split: tuple, r: int) -> pl.DataFrame:
    return split[1][r]


def _request_maker(kind: Kind, by, score, response, weight, variance):
    def make(schema):
        return make_request(kind, schema, by, score, response, weight, variance)

    return make


def _names(by, score, response, weight) -> list[str]:
    """The column names a call uses (the columns every Parquet file must agree on)."""
    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    return [c for c in [*keys, score, response, weight] if isinstance(c, str)]


def screen(
    source: Any,
    by: str | Sequence[str],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    variance: str = "auto",
    ranges: int | Sequence[float] | None = None,
    scheduler: Any = None,
    level: float = LEVEL,
    log: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """The screen of a Dask DataFrame or Parquet files; see :func:`polars_cumdev.dask.screen`."""
    note = steps.clock(log)
    make = _request_maker("screen", by, score, response, weight, variance)
    with _client(scheduler) as client:
        probe_dask(client)
        parts, request = _load(client, source, make, _names(by, score, response, weight))
        size = cutting.SAMPLE_SIZE
        rows, merged = 0, cutting.merge_samples([])
        futures = client.map(_sample, parts, request=request, size=size, pure=False)
        for count, sample in _samples(futures):
            rows, merged = rows + count, cutting.merge_samples([merged, sample], size)
        del futures
        if ranges is None:
            ranges = steps.default_ranges(rows)
        cuts = cutting.quantile_cuts(merged, ranges)
        note(f"round 1: {len(parts)} parts loaded and sampled; {len(cuts) + 1} score ranges")
        split = client.map(steps.summarize_and_split_part, parts, request=request, cuts=cuts)
        summaries = client.gather(client.map(operator.itemgetter(0), split))
        plan = steps.plan_screen(
            request, summaries, cuts, _count_below(client, parts, request.weight), level
        )
        note(f"round 2: checks and cell summaries; {plan.queries.height} queries")
        del parts
        # Round 3: each range's pieces put together once, on one worker, and kept
        # there: the range step, the finite-sample gathers and round 4 read them
        # in place (no second shuffle, no part put back together).
        held, results, pieces = {}, [], []
        for r in range(plan.ranges):
            if plan.range_rows[r] == 0:
                continue
            pieces = [client.submit(_piece, s, r) for s in split]
            held[r] = client.submit(_range_rows, *pieces)
            results.append((r, client.submit(_range_task, steps.task_plan(plan, r), r, held[r])))
        del split, pieces  # (the scheduler keeps them until the ranges are put together)
        done = client.gather([f for _, f in results])
        gathered = dict(zip([r for r, _ in results], done, strict=True))
        del results
        note("round 3: range steps")
        stats, locating = finite.combine_ranges(  # finite-sample p-values before any flag
            plan, [gathered.get(r) for r in range(plan.ranges)], dask_ranges(client, held)
        )
        outputs = []
        if locating is not None:
            # Round 4, only for the significant groups with D > 2 sigma: the located stretch.
            for r in sorted(locating.ranges):
                task = steps.task_plan(plan, r)
                cells = locating.for_range(r)
                outputs.append(client.submit(_points_task, task, r, cells, held[r]))
            outputs = client.gather(outputs)
            note(f"round 4: {locating.groups.height} groups located")
        del held
        out = steps.finish_screen(plan, stats, locating, outputs)
        note("combined")
        return out
