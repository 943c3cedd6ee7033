"""`cumdev screen --engine dask|spark`: a Parquet file screened on a cluster."""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from polars_cumdev.engines.files import check_parquet_files, parquet_files
from polars_cumdev.errors import CumdevError

__all__ = ["CLUSTER_ENGINES", "ENGINES", "add_engine_arguments", "cluster_screen"]

#: In-process engines (``frame.cumdev.screen(engine=...)``) and cluster engines, in one option.
ENGINES = ("auto", "polars", "kernel", "dask", "spark")
CLUSTER_ENGINES = ("dask", "spark")


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--engine``, ``--master``, ``--scheduler`` and ``--ranges``."""
    parser.add_argument(
        "--engine",
        default="auto",
        choices=ENGINES,
        help=(
            "auto (default), polars or kernel screen in this process; dask or spark screen "
            "a Parquet file on a cluster"
        ),
    )
    parser.add_argument(
        "--master",
        default=None,
        help="with --engine spark: the Spark master URL (default: local[*]; a local master "
        "without retries gets them: local[N] runs as local[N,4], 4 attempts per task)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        help="with --engine dask: a scheduler address (default: a new LocalCluster)",
    )
    parser.add_argument(
        "--ranges",
        type=int,
        default=None,
        help="with --engine dask or spark: the number of score ranges (default: automatic)",
    )


def cluster_screen(args: argparse.Namespace) -> pl.DataFrame:
    """Screen ``args.path`` (Parquet) with ``args.engine`` and the screen's arguments."""
    path = Path(args.path)
    if path.suffix.lower() != ".parquet" and not path.is_dir():
        raise CumdevError(
            f"--engine {args.engine} reads Parquet (a .parquet file or a directory of them), "
            f"got {args.path}"
        )
    if args.ranges is not None and args.ranges < 1:
        raise CumdevError(f"--ranges must be at least 1, got {args.ranges}")
    arguments = (args.by, args.score, args.response, args.weight)
    options = {"variance": args.variance, "ranges": args.ranges, "level": args.level}
    from polars_cumdev.progress import say

    options["log"] = say  # shown when the command line switched progress on
    if args.engine == "dask":
        from polars_cumdev.engines.cluster import dask_engine

        return dask_engine.screen(str(path), *arguments, scheduler=args.scheduler, **options)
    from polars_cumdev.engines.cluster import spark_engine

    files = parquet_files(str(path))  # the checks of every engine, before Spark starts
    score = [args.score] if isinstance(args.score, str) else list(args.score)
    used = [*args.by, *score, args.response, *([args.weight] if args.weight else [])]
    check_parquet_files(files, used)
    spark = spark_engine.local_session(args.master or "local[*]")
    spark.sparkContext.setLogLevel("ERROR")
    try:
        return spark_engine.screen(spark.read.parquet(*files), *arguments, **options)
    finally:
        spark.stop()
