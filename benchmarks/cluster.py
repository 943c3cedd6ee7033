"""The cluster screens (Spark local[N], Dask LocalCluster) against the in-process screen.

Usage::

    python benchmarks/cluster.py                     # 1e6 and 1e7 rows, 1,000 groups
    python benchmarks/cluster.py --rows 1e6 --engines dask,polars
    python benchmarks/cluster.py --rows 1e7 --engines kernel,dask,dask-sort --repeat 3

For each size, the benchmark population of :func:`common.make_frame` is
written once as Parquet (row groups of 1M rows) and every engine reads it:

- ``in-process``: ``pl.scan_parquet(...).cumdev.screen(...)`` (the default
  engine: the compiled kernel from 1M rows on);
- ``polars plan``: the same with ``engine="polars"``;
- ``dask``: :func:`polars_cumdev.dask.screen` on the Parquet files, on a
  ``LocalCluster`` of ``--workers`` single-threaded processes;
- ``dask-sort``: Dask's own sort of the same file by score on the same
  cluster (``dd.read_parquet(path).sort_values("score")`` persisted on the
  workers and its rows counted), the baseline of the Dask screen;
- ``spark``: :func:`polars_cumdev.spark.screen` on ``spark.read.parquet``,
  ``local[--workers]``.
- ``spark-sort``: Spark's own sort of the same file by score in the same
  session (``spark.read.parquet(path).orderBy("score")`` written to the
  ``noop`` sink), the baseline of the Spark screen.

Printed per engine: start time (session or cluster), first and warm screen
time, bytes written by Spark's shuffles (per row), and the peak resident
memory of a worker process (Dask workers; Spark's Python workers). The
results are checked against the in-process screen (largest relative
difference of kuiper_z). The load average is printed first: the machine is
shared.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from common import MIB, make_frame, score_kind

import polars_cumdev  # noqa: F401

ARGS = {"by": "group", "score": "score", "response": "response", "weight": "weight"}


def write(rows: int, groups: int, folder: Path, scores: str) -> Path:
    path = folder / f"cluster_{rows}_{groups}_{scores}.parquet"
    if not path.exists():
        frame = make_frame(rows, groups, decimals=score_kind(scores))
        frame.write_parquet(path, row_group_size=1_000_000)
    return path


def worst(expected: pl.DataFrame, actual: pl.DataFrame) -> float:
    left = expected.sort("group")["kuiper_z"].to_numpy()
    right = actual.sort("group")["kuiper_z"].to_numpy()
    ok = ~np.isnan(left)
    return float(np.max(np.abs(right[ok] - left[ok]) / np.abs(left[ok])))


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def in_process(path: Path, engine: str) -> dict:
    def run():
        return pl.scan_parquet(path).cumdev.screen(**ARGS, engine=engine).collect()

    first, out = timed(run)
    warm, _ = timed(run)
    peak = _rss()
    return {"first": first, "warm": warm, "out": out, "peak": peak}


def _rss() -> int:
    """This process's peak resident memory (VmHWM; ``ru_maxrss`` survives exec on Linux)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def dask_run(paths: list[Path], workers: int, repeat: int = 1, sort: bool = False) -> dict:
    """The Dask screen (best warm time of ``repeat``) and, with ``sort``, Dask's own sort."""
    import polars_cumdev.dask as cdask

    start, client = timed(lambda: cdask.local_cluster(workers))
    try:

        def run():
            return cdask.screen([str(p) for p in paths], **ARGS, scheduler=client)

        first, out = timed(run)
        warm = min(timed(run)[0] for _ in range(repeat))
        peak = max(client.run(_rss).values())
        runs = {"dask": {"start": start, "first": first, "warm": warm, "out": out, "peak": peak}}
        if sort:
            runs["dask-sort"] = dask_sort(client, paths, repeat)
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
    return runs


def dask_sort(client, paths: list[Path], repeat: int) -> dict:
    """Dask's own sort of the files by score, persisted on the workers and counted."""
    import dask.dataframe as dd
    import distributed

    def run():
        ordered = dd.read_parquet([str(p) for p in paths]).sort_values("score").persist()
        distributed.wait(ordered)
        int(ordered.map_partitions(len).compute().sum())
        return ordered

    def forget(ordered) -> None:
        """Cancel the persisted sort and wait until the scheduler has dropped every one of
        its tasks: the next run's graph has the same keys, and a result still held would
        be reused (a "sort" of 0.24 s at 1e7 rows), while a cancellation still under way
        would cancel the next run's tasks of the same keys (FuturesCancelledError)."""
        keys = {f.key for f in distributed.futures_of(ordered)}
        client.cancel(ordered)
        del ordered

        def held(dask_scheduler, keys=keys) -> int:
            return sum(k in dask_scheduler.tasks for k in keys)

        deadline = time.monotonic() + 60
        while client.run_on_scheduler(held) and time.monotonic() < deadline:
            time.sleep(0.05)

    first, ordered = timed(run)
    peak = max(client.run(_rss).values())
    forget(ordered)
    times = []
    for _ in range(repeat):
        took, ordered = timed(run)
        times.append(took)
        peak = max(peak, *client.run(_rss).values())
        forget(ordered)
    return {"first": first, "warm": min(times), "peak": peak}


def _shuffle_bytes(spark) -> int:
    """Bytes written by all shuffles so far (Spark's status store, through py4j)."""
    context = spark.sparkContext
    store = context._jsc.sc().statusStore()
    defaults = [getattr(store, f"stageList$default${i}")() for i in range(2, 6)]
    stages = store.stageList(context._jvm.java.util.ArrayList(), *defaults)
    return sum(stages.apply(i).shuffleWriteBytes() for i in range(stages.size()))


def spark_run(paths: list[Path], workers: int, repeat: int = 1, sort: bool = False) -> dict:
    """The Spark screen (best warm time of ``repeat``) and, with ``sort``, Spark's own sort."""
    import polars_cumdev.spark as cspark

    start, spark = timed(lambda: cspark.local_session(f"local[{workers}]"))
    spark.sparkContext.setLogLevel("ERROR")
    try:
        sdf = spark.read.parquet(*[str(p) for p in paths])
        first, out = timed(lambda: cspark.screen(sdf, **ARGS))
        warm, shuffled = float("inf"), 0
        for _ in range(repeat):
            before = _shuffle_bytes(spark)
            took, _ = timed(lambda: cspark.screen(sdf, **ARGS))
            warm, shuffled = min(warm, took), _shuffle_bytes(spark) - before

        def peak(batches):
            import pyarrow as pa

            for _ in batches:
                pass
            yield pa.RecordBatch.from_pylist([{"rss": _rss()}])

        probe = spark.range(0, workers, numPartitions=workers).mapInArrow(peak, "rss long")
        rss = max(row["rss"] for row in probe.collect())
        run = {"start": start, "first": first, "warm": warm, "out": out, "peak": rss}
        runs = {"spark": {**run, "shuffle": shuffled}}
        if sort:
            runs["spark-sort"] = spark_sort(spark, paths, repeat)
    finally:
        spark.stop()
    return runs


def spark_sort(spark, paths: list[Path], repeat: int) -> dict:
    """Spark's own sort of the files by score, written to the ``noop`` sink (no output)."""

    def run():
        ordered = spark.read.parquet(*[str(p) for p in paths]).orderBy("score")
        ordered.write.format("noop").mode("overwrite").save()

    first, _ = timed(run)
    warm, shuffled = float("inf"), 0
    for _ in range(repeat):
        before = _shuffle_bytes(spark)
        took, _ = timed(run)
        warm, shuffled = min(warm, took), _shuffle_bytes(spark) - before
    return {"first": first, "warm": warm, "peak": 0, "shuffle": shuffled}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1e6,1e7", help="comma-separated row counts")
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engines", default="kernel,polars,dask,spark")
    parser.add_argument("--repeat", type=int, default=1, help="warm runs (the best is printed)")
    parser.add_argument(
        "--scores",
        default="continuous",
        help="continuous (every score distinct, the default), 5-decimal or 3-decimal",
    )
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "cumdev_cluster"))
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}; {args.scores} scores")
    header = "| rows | engine | start s | first s | warm s | shuffle B/row | peak MiB | rel. diff |"
    lines = [header, "| " + " | ".join(["---"] * 8) + " |"]
    for text in args.rows.split(","):
        rows = int(float(text))
        path = write(rows, args.groups, folder, args.scores)
        base = in_process(path, "auto")
        runs = {"in-process": base}
        if "polars" in engines:
            runs["polars plan"] = in_process(path, "polars")
        if "dask" in engines or "dask-sort" in engines:
            dask = dask_run([path], args.workers, args.repeat, "dask-sort" in engines)
            runs.update(dask if "dask" in engines else {"dask-sort": dask["dask-sort"]})
        if "spark" in engines or "spark-sort" in engines:
            spark = spark_run([path], args.workers, args.repeat, "spark-sort" in engines)
            runs.update(spark if "spark" in engines else {"spark-sort": spark["spark-sort"]})
        for name, run in runs.items():
            shuffle = f"{run['shuffle'] / rows:.1f}" if "shuffle" in run else ""
            start = f"{run['start']:.2f}" if "start" in run else ""
            diff = worst(base["out"], run["out"]) if "out" in run else float("nan")
            lines.append(
                f"| {rows:.0e} | {name} | {start} | {run['first']:.2f} | {run['warm']:.2f} | "
                f"{shuffle} | {run['peak'] / MIB:.0f} | {diff:.1e} |"
            )
            print(lines[-1], flush=True)
        for engine, label in (("spark", "Spark"), ("dask", "Dask")):
            if engine in runs and f"{engine}-sort" in runs:
                ratio = runs[engine]["warm"] / runs[f"{engine}-sort"]["warm"]
                against = runs[engine]["warm"] / base["warm"]
                said = f"{label} screen / its sort {ratio:.2f}; / in-process {against:.1f}"
                lines.append(f"{rows:.0e}: {said}")
                print(lines[-1], flush=True)
    print(f"load average after: {os.getloadavg()}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
