"""Multicalibration on the cluster engines against in process (issue 39, item 1).

Prints, per row count, the in-process audit and the Dask (2 workers) and Spark
(``local[2]``) ones, each run twice (first: worker start-up and the compiled kernel's
cache load; warm: the second), the ratio of the warm times to in process, and the
largest relative difference of ``ecce_r_z`` from the in-process table.

    python benchmarks/cluster_multicalibration.py --rows 1e5,1e6 --engines dask,spark

The family: three categorical features of 10 levels and one numerical feature cut
in 3, depth 2 (1 + 33 + 363 = 397 segments; each row belongs to 11 of them, so the
engines shuffle 11 copies of the score, response and segment number).
``--family 1051``: five categorical features of 10 levels, depth 2 (1 + 50 + 1,000
= 1,051 segments, "about 1,000"; each row in 16 of them).

``--data tied`` rounds the scores to 2 decimals; ``--data skewed`` draws the levels
with skewed frequencies (:func:`data`).

``--screen`` adds each engine's screen of the same rows by ``g``, the 1,000 cells
of three of the features (``a``, ``b``, ``c``), and prints the engine's audit time
over it (issue 39, item 5: at most 2).
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import polars as pl

import polars_cumdev as pc
from polars_cumdev.multicalibration import multicalibration

FAMILY = pc.segments(categorical=["a", "b", "c"], numerical=["x"], depth=2, levels=10)
FAMILIES = {
    "397": FAMILY,
    "1051": pc.segments(categorical=["a", "b", "c", "d", "e"], depth=2, levels=10),
}


def data(rows: int, seed: int = 0, kind: str = "continuous") -> pl.DataFrame:
    """The rows: continuous scores (every one distinct) and even levels; ``kind="tied"``:
    scores rounded to 2 decimals (101 distinct); ``"skewed"``: every feature's levels
    drawn with probabilities proportional to 1 / (k + 1)^1.5 (level 0 holds 50% of the
    rows, level 9 1.6%), so the segments' sizes span two orders of magnitude."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(size=rows)
    if kind == "tied":
        s = np.round(s, 2)
    weights = 1.0 / np.arange(1, 11) ** 1.5

    def level() -> np.ndarray:
        if kind != "skewed":
            return rng.integers(0, 10, rows)
        return rng.choice(10, size=rows, p=weights / weights.sum())

    a, b, c = (level() for _ in range(3))
    x = rng.normal(size=rows)
    p = np.clip(s + 0.05 * ((a == 0) & (b == 1)), 0, 1)
    y = (rng.random(rows) < p).astype(float)
    d, e = (level() for _ in range(2))
    g = a * 100 + b * 10 + c
    return pl.DataFrame({"s": s, "y": y, "a": a, "b": b, "c": c, "x": x, "d": d, "e": e, "g": g})


def largest_difference(expected: pl.DataFrame, actual: pl.DataFrame) -> float:
    x, y = expected["ecce_r_z"].to_numpy(), actual["ecce_r_z"].to_numpy()
    both = ~np.isnan(x)
    return float(np.max(np.abs(x[both] - y[both]) / np.maximum(np.abs(x[both]), 1.0)))


def twice(run) -> tuple[float, float, pl.DataFrame]:
    start = time.perf_counter()
    run()
    first = time.perf_counter() - start
    start = time.perf_counter()
    table = run()
    return first, time.perf_counter() - start, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", default="1e5,1e6")
    parser.add_argument("--engines", default="dask,spark")
    parser.add_argument("--family", default="397", choices=sorted(FAMILIES))
    parser.add_argument("--screen", action="store_true", help="each engine's screen beside")
    parser.add_argument("--data", default="continuous", choices=["continuous", "tied", "skewed"])
    args = parser.parse_args()
    engines = args.engines.split(",")
    family = FAMILIES[args.family]
    client = spark = None
    if "dask" in engines:
        import dask.dataframe as dd

        import polars_cumdev.dask as cdask

        client = cdask.local_cluster(2)
    if "spark" in engines:
        import polars_cumdev.spark as cspark

        spark = cspark.local_session("local[2]")
        spark.sparkContext.setLogLevel("ERROR")
    scratch = tempfile.mkdtemp(prefix="cumdev_mc_")
    print("| rows | engine | first s | warm s | warm / in-process | largest rel. diff of z |")
    print("| --- | --- | --- | --- | --- | --- |")
    for rows in (int(float(r)) for r in args.rows.split(",")):
        df = data(rows, kind=args.data)
        first, warm, want = twice(lambda df=df: multicalibration(df, "s", "y", segments=family))
        print(f"| {rows:.0e} | in-process | {first:.2f} | {warm:.2f} | 1 | 0 |", flush=True)
        base = warm
        if client is not None:
            ddf = dd.from_pandas(df.to_pandas(), npartitions=4).persist()
            first, warm, got = twice(
                lambda ddf=ddf: cdask.multicalibration(
                    ddf, "s", "y", segments=family, scheduler=client
                )
            )
            diff = largest_difference(want, got)
            print(f"| {rows:.0e} | Dask, 2 workers | {first:.2f} | {warm:.2f} | "
                  f"{warm / base:.1f} | {diff:.1e} |", flush=True)  # fmt: skip
            if args.screen:
                audit = warm
                first, warm, _ = twice(
                    lambda ddf=ddf: cdask.screen(ddf, "g", "s", "y", scheduler=client)
                )
                print(f"| {rows:.0e} | Dask screen by g (1,000 groups) | {first:.2f} | "
                      f"{warm:.2f} | {warm / base:.1f} | audit / screen {audit / warm:.1f} |",
                      flush=True)  # fmt: skip
        if spark is not None:
            # (from a Parquet file: at 1e7 rows the driver's heap does not hold the frame
            # that createDataFrame builds)
            path = f"{scratch}/rows_{rows}.parquet"
            df.write_parquet(path)
            sdf = spark.read.parquet(path).repartition(4).cache()
            sdf.count()
            first, warm, got = twice(
                lambda sdf=sdf: cspark.multicalibration(sdf, "s", "y", segments=family)
            )
            diff = largest_difference(want, got)
            print(f"| {rows:.0e} | Spark local[2] | {first:.2f} | {warm:.2f} | "
                  f"{warm / base:.1f} | {diff:.1e} |", flush=True)  # fmt: skip
            if args.screen:
                audit = warm
                first, warm, _ = twice(lambda sdf=sdf: cspark.screen(sdf, "g", "s", "y"))
                print(f"| {rows:.0e} | Spark screen by g (1,000 groups) | {first:.2f} | "
                      f"{warm:.2f} | {warm / base:.1f} | audit / screen {audit / warm:.1f} |",
                      flush=True)  # fmt: skip
            sdf.unpersist()
    if client is not None:
        client.close()
        client.cluster.close()
    if spark is not None:
        spark.stop()


if __name__ == "__main__":
    main()
