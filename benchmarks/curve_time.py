"""Time of the drill-down ``curve`` for one subpopulation, against one sort and one screen.

Usage::

    python benchmarks/curve_time.py                  # 1e6 and 1e7 rows, 1000 groups
    python benchmarks/curve_time.py --rows 1e6 --groups 100

For every (rows, groups, engine) a fresh process builds the weighted frame of
:func:`common.make_frame` and times (best of ``repeat``) ``df.sort("score")``,
the screen of all groups, and the curve of the largest, the median-sized and
the smallest group (the curve sorts the whole population too, since each bin
is a range of full-population rows). Peak RSS is that of the whole child.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import common

ENGINES = ("in-memory", "streaming")


def child(rows: int, groups: int, engine: str, repeat: int) -> None:
    import polars as pl

    from polars_cumdev.subpopulation import curve, screen

    df = common.make_frame(rows, groups, seed=rows + groups)
    sizes = df.get_column("group").value_counts().sort(["count", "group"])
    picks = {
        "largest": sizes.row(-1, named=True),
        "median": sizes.row(sizes.height // 2, named=True),
        "smallest": sizes.row(0, named=True),
    }
    out = {"rows": rows, "groups": groups, "engine": engine}
    out["sort_s"] = common.best_of(lambda: df.sort("score"), repeat)
    out["screen_s"] = common.best_of(
        lambda: screen(df.lazy(), "group", "score", "response", "weight").collect(engine=engine),
        repeat,
    )
    for name, row in picks.items():
        mask = pl.col("group") == row["group"]

        def run(mask=mask):
            return curve(df.lazy(), mask, "score", "response", "weight").collect(engine=engine)

        points = run().height - 1
        out[f"{name}_rows"] = row["count"]
        out[f"{name}_points"] = points
        out[f"{name}_s"] = common.best_of(run, repeat)
    out["peak_rss"] = common.peak_rss()
    out["input_bytes"] = df.estimated_size()
    common.emit(out)


COLUMNS = (
    "rows",
    "groups",
    "engine",
    "sort s",
    "screen s (all groups)",
    "curve largest s (rows/points)",
    "curve median s (rows/points)",
    "curve smallest s (rows/points)",
    "peak RSS MiB",
)


def fmt_row(r: dict) -> dict:
    if "error" in r:
        return {**r, "sort s": "failed: " + r["error"]}
    row = {
        "rows": f"{r['rows']:.0e}".replace("+0", ""),
        "groups": r["groups"],
        "engine": r["engine"],
        "sort s": f"{r['sort_s']:.3f}",
        "screen s (all groups)": f"{r['screen_s']:.3f}",
        "peak RSS MiB": f"{r['peak_rss'] / common.MIB:.0f}",
    }
    for name in ("largest", "median", "smallest"):
        row[f"curve {name} s (rows/points)"] = (
            f"{r[name + '_s']:.3f} ({r[name + '_rows']}/{r[name + '_points']})"
        )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", type=float, default=[1e6, 1e7])
    parser.add_argument("--groups", nargs="+", type=int, default=[1000])
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--child", nargs=4, metavar=("ROWS", "GROUPS", "ENGINE", "REPEAT"))
    args = parser.parse_args()
    if args.child:
        rows, groups, engine, repeat = args.child
        child(int(rows), int(groups), engine, int(repeat))
        return
    common.run_grid(
        Path(__file__),
        args.rows,
        args.groups,
        args.engines,
        lambda rows: args.repeat or (3 if rows <= 1_000_000 else 2),
        fmt_row,
        COLUMNS,
    )


if __name__ == "__main__":
    main()
