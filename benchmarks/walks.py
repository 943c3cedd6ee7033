"""The screen's compiled walks side by side: with the prefix table and a second walk, or without.

Usage::

    python benchmarks/walks.py [--rows 1e7] [--groups 1000] [--repeat 3]

For each score kind (continuous, 5-decimal, 3-decimal; :func:`common.make_frame`,
Zipf-like group sizes, weights) one process sorts the frame once and then
alternates, ``repeat`` times, best time kept:

* ``sort``: ``df.sort("score")`` of the four columns (what the screen's node
  does first);
* ``table``: what the kernel did before issue 22:
  :func:`polars_cumdev.kernel.prefix_table` (15 doubles per distinct score),
  :func:`polars_cumdev.kernel.screen_groups`, a second walk
  (:func:`polars_cumdev.kernel.group_curves`) over the groups with
  D > 2 sigma, and the stretch search;
* ``events``: :func:`polars_cumdev.kernel.events.screen_events` (no table,
  the curves kept in the one walk) and the stretch search;
* ``screen``: the whole ``screen(..., engine="kernel")`` as shipped.

Both kernel paths give the same bits (checked here on every run). The
ratios to the sort are measured side by side in one process.
"""

from __future__ import annotations

import argparse
import os

import common
import numpy as np


def _table(k, located, gid, cols, groups, centre):
    prefix = k.prefix_table(*cols, centre)
    out, first = k.screen_groups(gid, 0, *cols, groups, centre, *prefix)
    total = out[:, k.WEIGHT]
    kuiper = (np.maximum(out[:, k.C_MAX], 0.0) - np.minimum(out[:, k.C_MIN], 0.0)) / total
    thresholds = kuiper - 2.0 * np.sqrt(np.maximum(out[:, k.SIGMA_B] / total**2, 0.0))
    wanted = (first >= 0) & (thresholds > 0.0)
    counts = np.where(wanted, out[:, k.N_SCORES], 0).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    curves = k.group_curves(gid, 0, *cols, groups, centre, *prefix, True, wanted, starts)
    per_point = np.repeat(total[wanted], counts[wanted])
    bounds = np.concatenate([[0], np.cumsum(counts[wanted])])
    found = located(
        bounds,
        curves[:, 0] / per_point,
        curves[:, 1] / per_point,
        curves[:, 2],
        thresholds[wanted],
        True,
    )
    return out, found, wanted


def _events(k, located, gid, cols, groups, centre):
    out, first, starts, curves = k.screen_events(gid, 0, *cols, groups, centre, True)
    total = out[:, k.WEIGHT]
    kuiper = (np.maximum(out[:, k.C_MAX], 0.0) - np.minimum(out[:, k.C_MIN], 0.0)) / total
    thresholds = kuiper - 2.0 * np.sqrt(np.maximum(out[:, k.SIGMA_B] / total**2, 0.0))
    wanted = (first >= 0) & (thresholds > 0.0)
    chosen = np.where(wanted, thresholds, np.nan)
    found = located(starts, curves[:, 0], curves[:, 1], curves[:, 2], chosen, True)
    return out, found, wanted


def measure(kind: str, args: argparse.Namespace) -> dict:
    """One score kind's row of the table."""
    from polars_cumdev import kernel as k
    from polars_cumdev.method.location import located
    from polars_cumdev.subpopulation import screen

    df = common.make_frame(int(args.rows), args.groups, decimals=common.score_kind(kind))
    ordered = df.sort("score")
    gid = ordered.get_column("group").to_numpy()
    cols = tuple(ordered.get_column(c).to_numpy() for c in ("score", "response", "weight"))
    cols = (*cols, True, 1.0)
    small = df.head(1000)
    screen(small, "group", "score", "response", "weight", engine="kernel").collect()
    a = _table(k, located, gid, cols, args.groups, 0.5)
    b = _events(k, located, gid, cols, args.groups, 0.5)
    same = np.array_equal(a[0], b[0]) and all(
        np.array_equal(a[1][n], b[1][n][b[2]], equal_nan=True) for n in a[1]
    )
    best = {"sort": np.inf, "table": np.inf, "events": np.inf, "screen": np.inf}
    for _ in range(args.repeat):
        best["sort"] = min(best["sort"], common.timed(lambda: df.sort("score"))[0])
        best["table"] = min(
            best["table"],
            common.timed(lambda: _table(k, located, gid, cols, args.groups, 0.5))[0],
        )
        best["events"] = min(
            best["events"],
            common.timed(lambda: _events(k, located, gid, cols, args.groups, 0.5))[0],
        )
        best["screen"] = min(
            best["screen"],
            common.timed(
                lambda: screen(
                    df, "group", "score", "response", "weight", engine="kernel"
                ).collect()
            )[0],
        )
    row = {
        "scores": kind,
        "distinct": df.get_column("score").n_unique(),
        "same bits": same,
        **{f"{n} s": f"{v:.3f}" for n, v in best.items()},
        "table/sort": f"{best['table'] / best['sort']:.2f}",
        "events/sort": f"{best['events'] / best['sort']:.2f}",
        "screen/sort": f"{best['screen'] / best['sort']:.2f}",
        "load": f"{os.getloadavg()[0]:.1f}",
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scores", nargs="+", default=list(common.SCORE_KINDS))
    args = parser.parse_args()
    print(common.machine())
    print(f"load average before: {os.getloadavg()}")
    rows = []
    for kind in args.scores:
        row = measure(kind, args)
        print(row, flush=True)
        rows.append(row)
    print(f"load average after: {os.getloadavg()}")
    print(common.markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
