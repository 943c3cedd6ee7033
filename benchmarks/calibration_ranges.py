"""Calibration by group: one pass in process against the score-range route (here, Dask, Spark).

Usage::

    python benchmarks/calibration_ranges.py                 # 1e6 rows, 100 groups
    python benchmarks/calibration_ranges.py --rows 1e6 --ranges 1,8 --engines dask
    python benchmarks/calibration_ranges.py --scores continuous,3-decimal --drift

The benchmark population of :func:`common.make_frame` (0/1 responses,
log-normal weights, Zipf-like group sizes: group k's share is proportional
to 1 / k^1.1), its scores of each kind of ``--scores``
(:data:`common.SCORE_KINDS`: ``continuous``, every score distinct;
``5-decimal``; ``3-decimal``, about a thousand distinct scores, tie-heavy).
Printed side by side per score kind, each the best of ``--repeat`` warm runs:

- ``one pass``: ``calibration(df, ..., by="group")`` (the compiled kernel);
- ``ranges R``: :func:`polars_cumdev.partitioned.calibration_partitioned` of
  the DataFrame with R ranges (each range collected, walked, combined);
- ``dask ranges R``: :func:`polars_cumdev.dask.calibration` of the frame
  written as Parquet, on a ``LocalCluster`` of ``--workers`` single-threaded
  processes;
- ``spark ranges R``: :func:`polars_cumdev.spark.calibration` of
  ``spark.read.parquet`` of the same file, on ``local[--workers]``;
- with ``--drift``: ``calibration_drift`` by group over 8 weekly windows of
  a ``ts`` column (800 (group, window) pairs), in process (one pass) and on
  each engine (by score ranges, the engines' default range count), against
  the in-process drift.

Each result is checked against the one-pass table (largest relative
difference of ``ecce_r``); the worst ratio to the one pass of each score
kind is printed last. The load average is printed first: the machine is
shared.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl
from common import make_frame, score_kind

from polars_cumdev.calibration import calibration
from polars_cumdev.drift import calibration_drift
from polars_cumdev.partitioned import calibration_partitioned

ARGS = ("score", "response", "weight")


def best(function, repeat: int) -> tuple[float, pl.DataFrame]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = function()
        times.append(time.perf_counter() - start)
    return min(times), out


def difference(expected: pl.DataFrame, actual: pl.DataFrame, keys=("group",)) -> float:
    keys = list(keys)
    if "ts" in keys and actual.schema["ts"] != expected.schema["ts"]:  # Spark's time zone
        actual = actual.with_columns(pl.col("ts").dt.replace_time_zone(None))
    joined = expected.select(*keys, "ecce_r").join(
        actual.select(*keys, pl.col("ecce_r").alias("other")), on=keys
    )
    assert joined.height == expected.height == actual.height
    x, y = joined["ecce_r"].to_numpy(), joined["other"].to_numpy()
    return float(np.max(np.abs(x - y) / np.abs(x)))


def with_weeks(df: pl.DataFrame) -> pl.DataFrame:
    """A ``ts`` column: a seeded random second over 8 weeks from a Monday."""
    rng = np.random.default_rng(1)
    seconds = rng.integers(0, 8 * 7 * 86_400, df.height)
    start = pl.lit(datetime(2024, 1, 1))
    return df.with_columns((start + pl.duration(seconds=pl.Series(seconds))).alias("ts"))


def drift(df: pl.DataFrame) -> pl.DataFrame:
    return calibration_drift(df.lazy(), *ARGS, time="ts", by="group").collect()


DRIFT_KEYS = ("group", "ts")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--ranges", default="1,8")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scores", default="5-decimal", help="comma-separated score kinds")
    parser.add_argument("--engines", default="dask,spark", help="'' for in process only")
    parser.add_argument("--drift", action="store_true")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    kinds = args.scores.split(",")
    engines = [e for e in args.engines.split(",") if e]
    counts = [int(r) for r in args.ranges.split(",")]
    frames = {
        k: with_weeks(make_frame(int(args.rows), args.groups, decimals=score_kind(k)))
        for k in kinds
    }
    small = frames[kinds[0]].head(1000)
    calibration(small, *ARGS, by="group")  # the kernels loaded
    calibration_partitioned(small, *ARGS, by="group", ranges=2)
    rows: dict[str, list[tuple[str, float, float]]] = {k: [] for k in kinds}
    base: dict[tuple[str, str], float] = {}
    expected: dict[tuple[str, str], pl.DataFrame] = {}

    def add(kind: str, what: str, route: str, seconds: float, diff: float) -> None:
        ratio = seconds / base[kind, what]
        rows[kind].append((route, seconds, ratio))
        print(
            f"  [{kind}] {route:>22}: {seconds:7.3f} s  {ratio:5.2f}x  (max rel diff {diff:.1e})",
            flush=True,
        )

    for kind, df in frames.items():
        distinct = df["score"].n_unique()
        print(f"{kind}: {df.height:,} rows, {args.groups} groups, {distinct:,} distinct scores")
        base[kind, "cal"], expected[kind, "cal"] = best(
            lambda df=df: calibration(df, *ARGS, by="group"), args.repeat
        )
        add(kind, "cal", "one pass", base[kind, "cal"], 0.0)
        for r in counts:
            seconds, out = best(
                lambda r=r, df=df: calibration_partitioned(df, *ARGS, by="group", ranges=r),
                args.repeat,
            )
            add(kind, "cal", f"ranges {r}", seconds, difference(expected[kind, "cal"], out))
        if args.drift:
            base[kind, "drift"], expected[kind, "drift"] = best(
                lambda df=df: drift(df), args.repeat
            )
            add(kind, "drift", "drift one pass", base[kind, "drift"], 0.0)

    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for kind, df in frames.items():
            paths[kind] = str(Path(folder) / f"{kind}.parquet")
            df.write_parquet(paths[kind], row_group_size=1_000_000)
        if "dask" in engines:
            dask_runs(args, paths, counts, expected, add)
        if "spark" in engines:
            spark_runs(args, paths, counts, expected, add)

    print("worst ratio to the in-process one pass, per score kind:")
    for kind, found in rows.items():
        route, seconds, ratio = max(found, key=lambda row: row[2])
        print(f"  {kind}: {route}, {seconds:.3f} s, {ratio:.2f}x")


def dask_runs(args, paths, counts, expected, add) -> None:
    import polars_cumdev.dask as cdask

    client = cdask.local_cluster(args.workers)
    try:
        for kind, path in paths.items():
            for r in counts:
                seconds, out = best(
                    lambda r=r, path=path: cdask.calibration(
                        path, *ARGS, by="group", scheduler=client, ranges=r
                    ),
                    args.repeat,
                )
                add(
                    kind, "cal", f"dask ranges {r}", seconds, difference(expected[kind, "cal"], out)
                )
            if args.drift:
                seconds, out = best(
                    lambda path=path: cdask.calibration_drift(
                        path, *ARGS, time="ts", by="group", scheduler=client
                    ),
                    args.repeat,
                )
                diff = difference(expected[kind, "drift"], out, DRIFT_KEYS)
                add(kind, "drift", "dask drift", seconds, diff)
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()


def spark_runs(args, paths, counts, expected, add) -> None:
    import polars_cumdev.spark as cspark

    spark = cspark.local_session(f"local[{args.workers}]")
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for kind, path in paths.items():
            sdf = spark.read.parquet(path)
            for r in counts:
                seconds, out = best(
                    lambda r=r, sdf=sdf: cspark.calibration(sdf, *ARGS, by="group", ranges=r),
                    args.repeat,
                )
                diff = difference(expected[kind, "cal"], out)
                add(kind, "cal", f"spark ranges {r}", seconds, diff)
            if args.drift:
                seconds, out = best(
                    lambda sdf=sdf: cspark.calibration_drift(sdf, *ARGS, time="ts", by="group"),
                    args.repeat,
                )
                diff = difference(expected[kind, "drift"], out, DRIFT_KEYS)
                add(kind, "drift", "spark drift", seconds, diff)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
