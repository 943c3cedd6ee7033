"""Time of a screen against the time of one sort of the same frame, and its peak memory.

Usage::

    python benchmarks/screen_vs_sort.py                      # the full grid
    python benchmarks/screen_vs_sort.py --rows 1e6 --groups 100 --engines in-memory
    python benchmarks/screen_vs_sort.py --rows 1e7 --groups 1000 --engines kernel in-memory
    python benchmarks/screen_vs_sort.py --partitioned 8   # the range-partitioned screen
    python benchmarks/screen_vs_sort.py --rows 1e7 --groups 1000 --engines kernel \
        --scores continuous 5-decimal 3-decimal --group-sizes zipf uniform   # the headline grid

Engines: ``in-memory`` and ``streaming`` run the lazy Polars plan
(``engine="polars"``) under that Polars engine; ``kernel`` and
``kernel-streaming`` run the compiled kernel (``engine="kernel"``) under the
in-memory or the streaming engine; ``calibration``, ``calibration-kernel``
and ``calibration-kernel-streaming`` time ``calibration(..., by="group")``
on the Polars plan or the kernel (under either engine). Polars 2.1's
``LazyFrame.collect()`` with no argument runs the streaming engine, so the
``-streaming`` rows are what a user who collects without choosing gets.
The kernel's first call in each child loads it from Numba's on-disk cache
(or compiles it, the first time ever):
each child first screens 1,000 rows with the kernel (importing Numba and
loading the compiled code: "warm-up s"), so that the memory figures are the
screen's own, not Numba's (about 130 MiB, once per process).

Scores (``--scores``): ``continuous`` (every score distinct, what model
probabilities and noisy measurements look like), ``5-decimal`` and
``3-decimal`` (rounded, so exact ties are common: about 97,000 and 1,000
distinct scores at 1e7 rows). Group sizes (``--group-sizes``): ``zipf``
(share of group k proportional to 1/k^1.1, the default) or ``uniform``.
The headline figure is the worst ratio of the grid.

For every (rows, groups, engine, scores, sizes) a fresh Python process builds
the weighted frame of :func:`common.make_frame`, runs the screen once (its peak resident
set size, ``ru_maxrss``, is read right after that first run, before any sort,
so it is the screen's peak in a process holding the input), then alternates
``df.sort("score")`` and the screen ``repeat`` times and keeps the best time
of each. The ratio screen / sort compares the two measured side by side in
the same process. Input bytes are ``df.estimated_size()`` of the four input
columns; the RSS ratio is peak RSS / input bytes (the interpreter, NumPy and
Polars alone take about 100 MiB, which dominates at small sizes).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import common

ENGINES = (
    "in-memory",
    "streaming",
    "kernel",
    "kernel-streaming",
    "calibration",
    "calibration-kernel",
    "calibration-kernel-streaming",
)


def child(
    rows: int, groups: int, engine: str, repeat: int, ranges: int, scores: str, sizes: str
) -> None:
    from polars_cumdev.calibration import calibration
    from polars_cumdev.partitioned import screen_partitioned
    from polars_cumdev.subpopulation import screen

    df = common.make_frame(
        rows,
        groups,
        seed=rows + groups,
        decimals=common.score_kind(scores),
        uniform_groups=sizes == "uniform",
    )
    input_bytes = df.estimated_size()
    warm = 0.0
    compiled = "kernel" in engine
    if compiled:  # import Numba and load the kernel before measuring
        small = df.head(1000)
        warm = common.timed(
            lambda: screen(small, "group", "score", "response", "weight", engine="kernel")
        )[0]
    base_rss = common.current_rss()

    polars_engine = "streaming" if engine.endswith("streaming") else "in-memory"

    def run_screen():
        if engine.startswith("calibration"):
            query = calibration(
                df.lazy(), "score", "response", "weight", by="group",
                engine="kernel" if compiled else "polars",
            )  # fmt: skip
            return query.collect(engine=polars_engine)
        if ranges:
            return screen_partitioned(
                df, "group", "score", "response", "weight", ranges=ranges, engine=polars_engine
            )
        query = screen(
            df.lazy(),
            "group",
            "score",
            "response",
            "weight",
            engine="kernel" if compiled else "polars",
        )
        return query.collect(engine=polars_engine)

    first, out = common.timed(run_screen)
    peak = common.peak_rss()
    assert out.height == df.get_column("group").n_unique()
    sorts, screens = [], []
    for _ in range(repeat):
        sorts.append(common.timed(lambda: df.sort("score"))[0])
        screens.append(common.timed(run_screen)[0])
    common.emit(
        {
            "rows": rows,
            "groups": groups,
            "engine": engine if not ranges else f"{engine}, partitioned R={ranges}",
            "scores": scores,
            "distinct": df.get_column("score").n_unique(),
            "sizes": sizes,
            "load": os.getloadavg()[0],
            "input_bytes": input_bytes,
            "base_rss": base_rss,
            "peak_rss": peak,
            "first_screen_s": first,
            "warm_up_s": warm,
            "sort_s": min(sorts),
            "screen_s": min(screens),
        }
    )


def fmt_row(r: dict) -> dict:
    if "error" in r:
        return {**r, "ratio": "failed", "note": r["error"]}
    return {
        "rows": f"{r['rows']:.0e}".replace("+0", ""),
        "groups": r["groups"],
        "engine": r["engine"],
        "scores": r.get("scores", ""),
        "sizes": r.get("sizes", ""),
        "sort s": f"{r['sort_s']:.3f}",
        "screen s": f"{r['screen_s']:.3f}",
        "screen/sort": f"{r['screen_s'] / r['sort_s']:.2f}",
        "first screen s": f"{r['first_screen_s']:.3f}",
        "warm-up s": f"{r.get('warm_up_s', 0.0):.2f}",
        "input MiB": f"{r['input_bytes'] / common.MIB:.1f}",
        "peak RSS MiB": f"{r['peak_rss'] / common.MIB:.0f}",
        "RSS/input": f"{r['peak_rss'] / r['input_bytes']:.1f}",
        "(peak-before)/input": f"{(r['peak_rss'] - r['base_rss']) / r['input_bytes']:.1f}",
        "load": f"{r.get('load', 0.0):.1f}",
    }


COLUMNS = (
    "rows",
    "groups",
    "engine",
    "scores",
    "sizes",
    "sort s",
    "screen s",
    "screen/sort",
    "first screen s",
    "warm-up s",
    "input MiB",
    "peak RSS MiB",
    "RSS/input",
    "(peak-before)/input",
    "load",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", type=float, default=[1e5, 1e6, 1e7])
    parser.add_argument("--groups", nargs="+", type=int, default=[10, 100, 1000])
    parser.add_argument(
        "--engines", nargs="+", choices=ENGINES, default=["in-memory", "streaming", "kernel"]
    )
    parser.add_argument("--repeat", type=int, default=None, help="timed repeats (default 5/3/2)")
    parser.add_argument(
        "--partitioned",
        type=int,
        default=0,
        metavar="R",
        help="time polars_cumdev.engines.partitioned.screen_partitioned with R ranges instead",
    )
    parser.add_argument(
        "--scores", nargs="+", choices=list(common.SCORE_KINDS), default=["continuous", "5-decimal"]
    )
    parser.add_argument("--group-sizes", nargs="+", choices=["zipf", "uniform"], default=["zipf"])
    parser.add_argument("--child", nargs=7)
    args = parser.parse_args()
    if args.child:
        rows, groups, engine, repeat, ranges, scores, sizes = args.child
        child(int(rows), int(groups), engine, int(repeat), int(ranges), scores, sizes)
        return
    common.run_grid(
        Path(__file__),
        args.rows,
        args.groups,
        args.engines,
        lambda rows: args.repeat or (5 if rows <= 100_000 else 3 if rows <= 1_000_000 else 2),
        fmt_row,
        COLUMNS,
        extra=[args.partitioned],
        variants=[(scores, sizes) for scores in args.scores for sizes in args.group_sizes],
    )


if __name__ == "__main__":
    main()
