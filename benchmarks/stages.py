"""Where a screen's time goes: each stage of the one-pass plan collected on its own.

Usage::

    python benchmarks/stages.py                    # 1e7 rows, 1,000 groups
    python benchmarks/stages.py --rows 1e6 --groups 100 --repeat 3

Builds the weighted frame of :func:`common.make_frame`, then, for each engine,
materializes the input of every stage of :func:`polars_cumdev.subpopulation.screen`
and times that stage alone (best of ``repeat``), next to one eager
``df.sort("score")`` and the whole screen:

* ``standardize``: validation and renaming (:func:`polars_cumdev.subpopulation.prepare_screen`);
* ``sort by score``: the lazy sort the screen starts with;
* ``full-population sums``: :func:`polars_cumdev.method.bins.full_population_prefix`;
* ``stable sort by group``: :func:`polars_cumdev.method.ties.group_rows`;
* ``merge ties``: :func:`polars_cumdev.method.ties.merge_ties` (includes the sort by group);
* ``locate bins``: :func:`polars_cumdev.method.bins.locate_bins`;
* ``accumulate + statistics``: accumulation, per-group statistics, p-values.

Stages collected separately lose what the whole query shares (the cached
sort, fewer materializations), so the stage times do not add up to the
screen's; they show which stages dominate, which is what they are for.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import common
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.accumulate import accumulate
from polars_cumdev.method.bins import locate_bins
from polars_cumdev.method.prefix_sums import full_population_prefix
from polars_cumdev.method.statistics import is_binary, normalize, summarize
from polars_cumdev.method.ties import group_rows, merge_ties
from polars_cumdev.subpopulation import prepare_screen, screen

ENGINES = ("in-memory", "streaming")
KEYS = ["group"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(common.machine())
    df = common.make_frame(int(args.rows), args.groups, seed=int(args.rows) + args.groups)
    table = []

    def stage(name: str, engine: str, query: Callable[[], object]) -> pl.DataFrame:
        def run() -> pl.DataFrame:
            out = query()
            return out.collect(engine=engine) if isinstance(out, pl.LazyFrame) else out

        times, out = zip(*(common.timed(run) for _ in range(args.repeat)), strict=True)
        seconds, out = min(times), out[-1]
        table.append(
            {
                "engine": engine,
                "stage": name,
                "seconds": f"{seconds:.3f}",
                "output rows": f"{out.height:,}",
            }
        )
        return out

    for engine in ENGINES:
        prepared = prepare_screen(df, "group", "score", "response", "weight", "auto")
        rows = stage("standardize", engine, lambda p=prepared: p.frame)
        stage("df.sort(score), eager", engine, lambda: df.sort("score"))
        ordered = stage("sort by score", engine, lambda r=rows: r.lazy().sort(nm.SCORE))
        prefix = stage(
            "full-population sums", engine, lambda o=ordered: full_population_prefix(o.lazy())
        )
        stage("stable sort by group", engine, lambda o=ordered: group_rows(o.lazy(), KEYS))
        points = stage(
            "merge ties (includes the sort by group)",
            engine,
            lambda o=ordered: merge_ties(o.lazy(), KEYS),
        )
        binned = stage(
            "locate bins",
            engine,
            lambda p=points, q=prefix: locate_bins(p.lazy(), q.lazy(), KEYS),
        )
        stage(
            "accumulate + statistics",
            engine,
            lambda b=binned, r=rows: normalize(
                summarize(accumulate(b.lazy(), KEYS), KEYS), KEYS, is_binary(r.lazy(), "auto")
            ),
        )
        stage(
            "whole screen",
            engine,
            lambda: screen(df.lazy(), "group", "score", "response", "weight"),
        )
    print(f"{int(args.rows):,} rows, {args.groups} groups, best of {args.repeat}")
    print(common.markdown_table(table, ("engine", "stage", "seconds", "output rows")))


if __name__ == "__main__":
    main()
