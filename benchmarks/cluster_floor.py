"""The least any screen can cost on Spark and Dask, against each engine's own sort.

Usage::

    python benchmarks/cluster_floor.py --rows 1e7 --repeat 2
    python benchmarks/cluster_floor.py --rows 1e7 --engines spark
    python benchmarks/cluster_floor.py --rows 1e7 --engines spark --driver-memory 4g
    python benchmarks/cluster_floor.py --rows 1e7 --engines spark \
        --runs "range shuffle + jvm walk,jvm screen floor"

Issue 39 item 5 asks each cluster screen to cost at most 1.2 times the
engine's own sort of the same file by score. This script measures, in one
session per engine and side by side with that sort, skeletons that do
strictly less than any screen can: they move the rows as a screen must and
compute nothing. If a skeleton alone costs more than 1.2 sorts, no screen
built on that road can meet the target. Same file as ``cluster.py``
(:func:`common.make_frame`, continuous scores, 1,000 Zipf-like groups).

Spark (``local[--workers]``, the package's own session settings):

- ``sort``: ``orderBy("score")`` into the ``noop`` sink (the baseline);
- ``to python``: every row read once by a ``mapInArrow`` task that only
  counts its Arrow rows (no shuffle): the JVM-to-Python transfer alone;
- ``range shuffle + to python``: ``repartitionByRange(score)`` then the same
  counting task: the least the screen's Python road must do (every row in
  Python, grouped by score range), with no sample of its own, no checks,
  no sort within the range, no walk and no second pass;
- ``sql windows``: the JVM-only road's least: the range index of each row
  from fixed cut points, one shuffle by range, and the two running sums a
  Spark SQL formulation needs (each group's, by range and group in score
  order, and the population's, by range in score order) into ``noop``;
  without the midpoints' lookup, the offsets across ranges, the extremes,
  sigma or any p-value;
- ``range shuffle + sort within``: ``repartitionByRange(score)`` and
  ``sortWithinPartitions(score)`` into the ``noop`` sink: the rows where a
  per-range step in the JVM would read them;
- ``range shuffle + jvm walk``: the same rows handed to a skeleton of that
  step written in Java (``benchmarks/jvm/RangeWalkFloor.java``, compiled at run
  time by the Janino compiler pyspark ships, so no JDK is needed): the floor of
  a port of the kernel to the JVM, the one road that keeps Python out of the
  rows' way;
- ``jvm screen floor``: that road with the passes a screen cannot do without,
  each at its least: one JVM aggregate over the four columns standing for the
  cut points' sample and the checks (a row count, the scores' least and
  largest, NaN and null counts, the weights' and responses' extremes: any real
  sample or check reads at least this), then each row's range index from the
  cut points, the rows shuffled by it to one range per partition (the
  engine's routing keys, not Spark's own range sampler), sorted within and
  walked by the Java skeleton. Still without the located pass, the
  finite-sample step and the driver's work;
- ``jvm screen floor + located pass``: the same, then the same sorted rows
  walked a second time, as the located stretches need whenever significant
  groups lie in every range (the benchmark file's 65 flagged groups do): the
  shuffle's map output is reused (the same Dataset), so the second walk pays
  the shuffle read, the sort within and the walk, not a second shuffle;
- ``jvm screen floor + located pass on held arrays``: the first walk's arrays
  kept in Spark's block manager (an RDD of one array holder per range,
  ``MEMORY_ONLY``) and walked again from there: the least a located pass can
  cost on this road.

``--driver-memory`` sets the local JVM's heap (Spark's default is 1g); every
Spark run, the sort included, uses it.

Dask (``LocalCluster`` of ``--workers`` one-thread processes):

- ``sort``: ``sort_values("score")`` persisted and counted (as ``cluster.py``,
  behind a no-op step that makes each run's keys new);
- ``range shuffle``: each row's range index from fixed cut points, then
  ``shuffle`` on it, persisted and counted: the least the screen's range
  round must move;
- ``set_index on the cut points``: ``set_index("score", divisions=...)`` with
  the same cut points (and the scores' least and largest) as the divisions:
  Dask's own machinery moving each row to its range and sorting within it,
  persisted and counted; the sort's movement without its quantile pass;
- the in-process screen of the same file in this process, from Parquet and
  from a frame in memory: its wall and CPU seconds, the per-row work (checks,
  sort, walk, finite-sample step, located stretches) any screen must also do
  somewhere on the same cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from cluster import ARGS, timed, write

import polars_cumdev  # noqa: F401

RANGES = 4


def cut_points(path: Path, ranges: int) -> list[float]:
    """Score quantiles of the file: the fixed cut points of the skeletons' ranges."""
    scores = pl.scan_parquet(path).select("score").collect()["score"].to_numpy()
    return [float(c) for c in np.quantile(scores, np.arange(1, ranges) / ranges)]


def busy_seconds() -> float:
    """Core-seconds the whole machine has spent busy so far (``/proc/stat``, every process:
    the JVM, Spark's Python workers and Dask's workers included)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def best(run, repeat: int, after=None) -> tuple[float, float, float]:
    """First time, best warm time of ``repeat`` runs, and the cores busy in that warm run.

    ``after`` (untimed) gets each run's result: Dask's runs release what they persisted.
    """
    first, out = timed(run)
    if after is not None:
        after(out)
    warm, cores = float("inf"), 0.0
    for _ in range(repeat):
        before = busy_seconds()
        took, out = timed(run)
        spent = busy_seconds() - before
        if after is not None:
            after(out)
        if took < warm:
            warm, cores = took, spent / took
    return first, warm, cores


def spark_sort_once(spark, path: Path) -> None:
    """One run of ``cluster.py``'s Spark sort: ``orderBy("score")`` into the ``noop`` sink."""
    ordered = spark.read.parquet(str(path)).orderBy("score")
    ordered.write.format("noop").mode("overwrite").save()


def janino_walk(spark, scratch: Path):
    """``RangeWalkFloor.walk`` compiled by pyspark's own Janino, its classes in a jar the
    executors fetch; returns a function of (sorted Spark frame, number of groups)."""
    import zipfile

    jvm = spark._jvm
    compiler = jvm.org.codehaus.janino.SimpleCompiler()
    compiler.setParentClassLoader(jvm.java.lang.Thread.currentThread().getContextClassLoader())
    compiler.cook((Path(__file__).parent / "jvm" / "RangeWalkFloor.java").read_text())
    codes = compiler.getBytecodes()
    jar = scratch / "range_walk_floor.jar"
    with zipfile.ZipFile(jar, "w") as out:
        for name in codes.keySet():
            out.writestr(name.replace(".", "/") + ".class", bytes(codes.get(name)))
    spark.sparkContext._jsc.sc().addJar(str(jar))
    found = compiler.getClassLoader().loadClass("RangeWalkFloor")
    methods = {m.getName(): m for m in found.getMethods()}

    def run(sdf, groups: int, name: str = "walk") -> float:
        args = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, 2)
        args[0], args[1] = sdf._jdf, jvm.java.lang.Integer.valueOf(groups)
        return float(methods[name].invoke(None, args))

    return run


def spark_floor(
    path: Path, workers: int, repeat: int, only: set[str] | None = None
) -> dict[str, tuple[float, float, float]]:
    import pyarrow as pa
    from pyspark.sql import Window
    from pyspark.sql import functions as sf

    import polars_cumdev.spark as cspark

    spark = cspark.local_session(f"local[{workers}]")
    spark.sparkContext.setLogLevel("ERROR")
    cuts = cut_points(path, RANGES)

    def count(batches):
        rows = 0
        for batch in batches:
            rows += batch.num_rows
        yield pa.RecordBatch.from_pylist([{"rows": rows}])

    def to_python():
        sdf = spark.read.parquet(str(path))
        return sum(r["rows"] for r in sdf.mapInArrow(count, "rows long").collect())

    def shuffled_to_python():
        sdf = spark.read.parquet(str(path)).repartitionByRange(RANGES, "score")
        return sum(r["rows"] for r in sdf.mapInArrow(count, "rows long").collect())

    def sql_windows():
        sdf = spark.read.parquet(str(path))
        rid = sum((sf.col("score") > sf.lit(c)).cast("int") for c in cuts)
        sdf = sdf.withColumn("rid", rid).repartition(RANGES, "rid")
        mass = sf.col("weight") * sf.col("response")
        upto = (Window.unboundedPreceding, Window.currentRow)
        own = Window.partitionBy("rid", "group").orderBy("score").rowsBetween(*upto)
        whole = Window.partitionBy("rid").orderBy("score").rowsBetween(*upto)
        out = sdf.select(
            sf.sum(mass).over(own).alias("group_sum"),
            sf.sum("weight").over(whole).alias("population_weight"),
        )
        out.write.format("noop").mode("overwrite").save()

    def sorted_ranges():
        columns = ("group", "score", "weight", "cast(response as double) as response")
        sdf = spark.read.parquet(str(path)).selectExpr(*columns)
        return sdf.repartitionByRange(RANGES, "score").sortWithinPartitions("score")

    def sorted_to_noop():
        sorted_ranges().write.format("noop").mode("overwrite").save()

    def jvm_screen_floor(walk, again: str = "") -> float:
        from polars_cumdev.engines.cluster.spark_ranges import range_of, routing_keys

        columns = ("group", "score", "weight", "cast(response as double) as response")
        sdf = spark.read.parquet(str(path)).selectExpr(*columns)
        score, weight, response = sf.col("score"), sf.col("weight"), sf.col("response")
        facts = sdf.agg(
            sf.count(sf.lit(1)),
            sf.min(score),
            sf.max(score),
            sf.sum(sf.isnan(score).cast("long")),
            sf.sum(score.isNull().cast("long")),
            sf.min(weight),
            sf.max(weight),
            sf.sum(sf.isnan(weight).cast("long")),
            sf.min(response),
            sf.max(response),
        ).collect()[0]
        assert facts[0] > 0 and facts[3] == 0
        keys = routing_keys(spark, RANGES)
        route = sf.element_at(sf.array(*[sf.lit(k) for k in keys]), range_of(score, cuts) + 1)
        shuffled = sdf.withColumn("route", route).repartition(RANGES, "route").drop("route")
        ordered = shuffled.sortWithinPartitions("score")
        if again == "held":  # the located pass over the arrays the first walk kept
            return walk(ordered, groups, "walkTwice")
        total = walk(ordered, groups)
        if again == "read":  # the located pass: the same Dataset, its shuffle output read again
            total += walk(ordered, groups)
        return total

    groups = pl.scan_parquet(path).select(pl.col("group").max()).collect().item() + 1
    try:
        jvm_walk = janino_walk(spark, path.parent)
        assert to_python() == shuffled_to_python()
        assert np.isfinite(jvm_screen_floor(jvm_walk))  # (other cuts than Spark's sampler's)
        todo = {
            "sort": lambda: spark_sort_once(spark, path),
            "to python": to_python,
            "range shuffle + to python": shuffled_to_python,
            "sql windows": sql_windows,
            "range shuffle + sort within": sorted_to_noop,
            "range shuffle + jvm walk": lambda: jvm_walk(sorted_ranges(), groups),
            "jvm screen floor": lambda: jvm_screen_floor(jvm_walk),
            "jvm screen floor + located pass": lambda: jvm_screen_floor(jvm_walk, "read"),
            "jvm screen floor + located pass on held arrays": lambda: jvm_screen_floor(
                jvm_walk, "held"
            ),
        }
        runs = {
            name: best(run, repeat)
            for name, run in todo.items()
            if name == "sort" or only is None or name in only
        }
    finally:
        spark.stop()
    return runs


def dask_floor(path: Path, workers: int, repeat: int) -> dict[str, tuple[float, float, float]]:
    import dask.dataframe as dd
    import distributed

    import polars_cumdev.dask as cdask

    cuts = np.asarray(cut_points(path, RANGES))
    client = cdask.local_cluster(workers)

    def with_range(part, run):
        # ``run`` only makes each run's graph keys new: a cancelled earlier run's
        # keys still being dropped would cancel this one's (FuturesCancelledError).
        return part.assign(rid=np.searchsorted(cuts, part["score"].to_numpy(), side="left"))

    def same(part, run):
        return part

    runs_made = iter(range(1_000_000))

    def counted(held):
        distributed.wait(held)
        int(held.map_partitions(len).compute().sum())
        return held

    def sort():
        ddf = dd.read_parquet(str(path)).map_partitions(same, next(runs_made))
        return counted(ddf.sort_values("score").persist())

    def shuffled():
        ddf = dd.read_parquet(str(path)).map_partitions(with_range, next(runs_made))
        return counted(ddf.shuffle("rid", npartitions=RANGES).persist())

    scores = pl.scan_parquet(path).select("score")
    ends = scores.select(low=pl.col("score").min(), high=pl.col("score").max()).collect()
    divisions = [float(ends.item(0, 0)), *map(float, cuts), float(ends.item(0, 1))]

    def indexed():
        ddf = dd.read_parquet(str(path)).map_partitions(same, next(runs_made))
        return counted(ddf.set_index("score", divisions=divisions).persist())

    try:
        runs = {"sort": best(sort, repeat, client.cancel)}
        runs["range shuffle"] = best(shuffled, repeat, client.cancel)
        runs["set_index on the cut points"] = best(indexed, repeat, client.cancel)
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
    return runs


def in_process(path: Path, repeat: int) -> dict[str, tuple[float, float, float]]:
    """The in-process screen of the file, from Parquet and from a frame already in memory:
    first and best warm wall seconds, and that warm run's CPU seconds (this process)."""
    frame = pl.read_parquet(path)
    runs = {}
    for name, source in (("from Parquet", pl.scan_parquet(path)), ("in memory", frame)):

        def run(source=source):
            out = source.cumdev.screen(**ARGS)
            return out.collect() if isinstance(out, pl.LazyFrame) else out

        first, _ = timed(run)
        walls, cpus = [], []
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_SELF)
            walls.append(timed(run)[0])
            after = resource.getrusage(resource.RUSAGE_SELF)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        at = int(np.argmin(walls))
        runs[name] = (first, walls[at], cpus[at])
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1e7")
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engines", default="spark,dask")
    parser.add_argument("--repeat", type=int, default=2, help="warm runs (the best is printed)")
    parser.add_argument("--driver-memory", default=None, help="the local JVM's heap, e.g. 4g")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "cumdev_cluster"))
    parser.add_argument(
        "--runs", default=None, help="Spark only: the runs to time beside the sort, comma-separated"
    )
    args = parser.parse_args()
    if args.driver_memory:  # (read when pyspark starts the JVM)
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory {args.driver_memory} pyspark-shell"
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    rows = int(float(args.rows))
    path = write(rows, args.groups, folder, "continuous")
    engines = args.engines.split(",")
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}; {rows:.0e} rows")
    lines = [
        "| engine | run | first s | warm s | cores busy (warm) | warm / the engine's sort |",
        "| --- " * 6 + "|",
    ]
    for name, measure in (("spark", spark_floor), ("dask", dask_floor)):
        if name not in engines:
            continue
        started = time.strftime("%H:%M:%S")
        if name == "spark" and args.runs:
            runs = measure(path, args.workers, args.repeat, set(args.runs.split(",")))
        else:
            runs = measure(path, args.workers, args.repeat)
        sort = runs["sort"][1]
        for run, (first, warm, cores) in runs.items():
            lines.append(
                f"| {name} | {run} | {first:.2f} | {warm:.2f} | {cores:.2f} | {warm / sort:.2f} |"
            )
            print(lines[-1], flush=True)
        print(f"{name}: from {started}, load average now {os.getloadavg()}", flush=True)
    if "in-process" in engines or "dask" in engines:
        for name, (first, wall, cpu) in in_process(path, args.repeat).items():
            lines.append(
                f"in-process screen {name}: first {first:.2f} s, warm {wall:.2f} s wall, "
                f"{cpu:.2f} s CPU ({cpu / wall:.2f} cores busy)"
            )
            print(lines[-1], flush=True)
    print(f"load average after: {os.getloadavg()}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
