"""Calibration by group: one pass in process against the score-range route (in process, Dask).

Usage::

    python benchmarks/calibration_ranges.py                 # 1e6 rows, 100 groups
    python benchmarks/calibration_ranges.py --rows 1e6 --ranges 1,8 --no-dask

The benchmark population of :func:`common.make_frame` (0/1 responses,
scores in (0, 1) rounded to 5 decimals, log-normal weights, Zipf-like group
sizes). Printed side by side, each the best of ``--repeat`` warm runs:

- ``one pass``: ``calibration(df, ..., by="group")`` (the compiled kernel);
- ``ranges R``: :func:`polars_cumdev.partitioned.calibration_partitioned` of
  the DataFrame with R ranges (each range collected, walked, combined);
- with Dask (a ``LocalCluster`` of ``--workers`` single-threaded processes,
  the frame written as Parquet): ``dask whole groups``, the former route (rows
  shuffled by group, each group calibrated whole in one task,
  ``dask_engine.calibrate_parts``), and ``dask ranges R``
  (:func:`polars_cumdev.dask.calibration`).

Each result is checked against the one-pass table (largest relative
difference of ``ecce_r``). The load average is printed first: the machine
is shared.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from common import make_frame

from polars_cumdev.calibration import calibration
from polars_cumdev.partitioned import calibration_partitioned


def best(function, repeat: int) -> tuple[float, pl.DataFrame]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = function()
        times.append(time.perf_counter() - start)
    return min(times), out


def difference(expected: pl.DataFrame, actual: pl.DataFrame) -> float:
    joined = expected.select("group", "ecce_r").join(
        actual.select("group", pl.col("ecce_r").alias("other")), on="group"
    )
    x, y = joined["ecce_r"].to_numpy(), joined["other"].to_numpy()
    return float(np.max(np.abs(x - y) / np.abs(x)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--ranges", default="1,8")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    df = make_frame(int(args.rows), args.groups)
    args_ = ("score", "response", "weight")
    calibration(df.head(1000), *args_, by="group")  # the kernel loaded
    base, expected = best(lambda: calibration(df, *args_, by="group"), args.repeat)
    print(f"{df.height:,} rows, {args.groups} groups")
    print(f"{'one pass':>20}: {base:7.3f} s  1.00x")
    counts = [int(r) for r in args.ranges.split(",")]
    for r in counts:
        seconds, out = best(
            lambda r=r: calibration_partitioned(df, *args_, by="group", ranges=r), args.repeat
        )
        print(
            f"{'ranges ' + str(r):>20}: {seconds:7.3f} s  {seconds / base:5.2f}x  "
            f"(max rel diff {difference(expected, out):.1e})"
        )
    if args.no_dask:
        return
    import polars_cumdev.dask as cdask
    from polars_cumdev.engines.cluster import dask_engine

    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "rows.parquet")
        df.write_parquet(path, row_group_size=1_000_000)
        client = cdask.local_cluster(args.workers)
        try:

            def whole() -> pl.DataFrame:
                make = dask_engine._request_maker("calibration", "group", *args_, "auto")
                names = ["group", *args_]
                parts, request = dask_engine._load(client, path, make, names)
                return dask_engine.calibrate_parts(client, parts, request, 0.05)

            seconds, out = best(whole, args.repeat)
            print(
                f"{'dask whole groups':>20}: {seconds:7.3f} s  {seconds / base:5.2f}x  "
                f"(max rel diff {difference(expected, out):.1e})"
            )
            for r in counts:
                seconds, out = best(
                    lambda r=r: cdask.calibration(
                        path, *args_, by="group", scheduler=client, ranges=r
                    ),
                    args.repeat,
                )
                print(
                    f"{'dask ranges ' + str(r):>20}: {seconds:7.3f} s  {seconds / base:5.2f}x  "
                    f"(max rel diff {difference(expected, out):.1e})"
                )
        finally:
            cluster = client.cluster
            client.close()
            cluster.close()


if __name__ == "__main__":
    main()
