"""Cost of locating the deviation in the range-partitioned screen (its second pass).

Usage::

    python benchmarks/located_ranges.py                      # 1e7 rows, 10 and 1000 groups, R = 8
    python benchmarks/located_ranges.py --rows 1e6 --groups 100 --ranges 4 16
    python benchmarks/located_ranges.py --parquet     # screen_parquet from a Parquet file

For each size, two fresh processes screen the same frame
(:func:`polars_cumdev.engines.partitioned.screen_partitioned`, in-memory engine, or
with ``--parquet`` :func:`~polars_cumdev.partitioned.screen_parquet` reading
it from a file):
``off`` with the second pass disabled (as if no group had D > 2 sigma: the
first pass alone) and ``on`` as shipped (the flagged groups' curves laid out
range by range, candidates stitched). Each reports the best time of
``--repeat`` runs, the peak RSS, the flagged groups and their share of the
rows, and the candidates the ranges sent to the driver.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import common


def child(rows: int, groups: int, ranges: int, mode: str, repeat: int, parquet: str) -> None:
    import polars_cumdev.engines.partitioned.drivers as drivers
    from polars_cumdev.partitioned import screen_parquet, screen_partitioned

    df = common.make_frame(rows, groups, seed=rows + groups)
    input_bytes = df.estimated_size()
    if parquet != "-":  # screened from the file, the frame dropped first
        df.write_parquet(parquet, row_group_size=1_000_000)
        df = df.select("group")
    base = common.current_rss()
    seen: dict[str, int] = {}
    stitch = drivers.stitch

    def counting_stitch(locating, bests, candidates):
        seen["candidates"] = candidates.height
        seen["flagged"] = locating.groups.height
        return stitch(locating, bests, candidates)

    drivers.stitch = counting_stitch
    if mode == "off":
        drivers.flag = lambda *args: None

    def run():
        if parquet != "-":
            return screen_parquet(parquet, "group", "score", "response", "weight", ranges=ranges)
        return screen_partitioned(df, "group", "score", "response", "weight", ranges=ranges)

    first, out = common.timed(run)
    peak = common.peak_rss()
    times = [first] + [common.timed(run)[0] for _ in range(repeat - 1)]
    located = out.filter(out["share"].is_not_null()).height
    flagged_rows = 0
    if mode == "on":
        keys = out.filter(out["share"].is_not_null())["group"]
        flagged_rows = df.filter(df["group"].is_in(keys.implode())).height
    common.emit(
        {
            "rows": rows,
            "groups": groups,
            "ranges": ranges,
            "mode": mode,
            "input_bytes": input_bytes,
            "base_rss": base,
            "peak_rss": peak,
            "screen_s": min(times),
            "located": located,
            "flagged": seen.get("flagged", 0),
            "flagged_rows": flagged_rows,
            "candidates": seen.get("candidates", 0),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", type=float, default=[1e7])
    parser.add_argument("--groups", nargs="+", type=int, default=[10, 1000])
    parser.add_argument("--ranges", nargs="+", type=int, default=[8])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--parquet",
        action="store_true",
        help="write the frame to a temporary Parquet file and time screen_parquet",
    )
    parser.add_argument("--child", nargs=6, metavar=("ROWS", "GROUPS", "R", "MODE", "REPEAT", "P"))
    args = parser.parse_args()
    if args.child:
        rows, groups, ranges, mode, repeat, path = args.child
        child(int(float(rows)), int(groups), int(ranges), mode, int(repeat), path)
        return
    scratch = tempfile.TemporaryDirectory()
    path = str(Path(scratch.name) / "data.parquet") if args.parquet else "-"
    print(common.machine())
    columns = [
        "rows",
        "groups",
        "R",
        "located groups (rows)",
        "candidates",
        "off s",
        "on s",
        "on/off",
        "off peak MiB",
        "on peak MiB",
    ]
    lines = []
    for rows in args.rows:
        for groups in args.groups:
            for ranges in args.ranges:
                got = {
                    mode: common.run_child(
                        __file__,
                        ["--child", rows, groups, ranges, mode, args.repeat, path],
                        timeout=3600,
                    )
                    for mode in ("off", "on")
                }
                if any("error" in g for g in got.values()):
                    print(got, file=sys.stderr)
                    continue
                off, on = got["off"], got["on"]
                lines.append(
                    {
                        "rows": f"{int(rows):,}",
                        "groups": groups,
                        "R": ranges,
                        "located groups (rows)": f"{on['located']} ({on['flagged_rows']:,})",
                        "candidates": f"{on['candidates']:,}",
                        "off s": f"{off['screen_s']:.2f}",
                        "on s": f"{on['screen_s']:.2f}",
                        "on/off": f"{on['screen_s'] / off['screen_s']:.2f}",
                        "off peak MiB": f"{off['peak_rss'] / common.MIB:.0f}",
                        "on peak MiB": f"{on['peak_rss'] / common.MIB:.0f}",
                    }
                )
                print(common.markdown_table(lines[-1:], columns), flush=True)
    print(common.markdown_table(lines, columns))


if __name__ == "__main__":
    main()
