"""Where the compiled screen's time goes, each part beside one sort, in one process.

Usage::

    python benchmarks/kernel_stages.py                       # 1e7 rows, continuous and 5-decimal
    python benchmarks/kernel_stages.py --rows 1e6 --repeat 5 --scores continuous

For each score kind, builds the weighted frame of :func:`common.make_frame`
(1,000 Zipf-sized groups) and times, best of ``repeat``, alternating:

* ``df.sort("score")``: the reference, one eager sort of the four columns;
* ``sort by score, weight, response``: the node's sort before issue 22's
  second round (three keys, for ties in canonical order);
* ``radix order, gather, ties``: the node's route for scores the bucket sort
  does not take (a Float64 score holding -0.0, other dtypes): the radix
  sort of the row numbers (:func:`polars_cumdev.method.score_order.score_order`),
  the compiled gather of the score, response, weight and group numbers
  (:func:`polars_cumdev.kernel.gather.gather_rows`) and the canonical tie
  order (:func:`polars_cumdev.method.compiled._in_ties_order`);
* ``bucket sort``: the node's route for a Float64 score
  (:func:`polars_cumdev.kernel.bucketsort.bucket_sort`: the same rows in
  the same canonical order, the columns riding along; checked to give the
  same arrays as the route above);
* ``events walk, 1 thread`` and ``2 threads``
  (:func:`polars_cumdev.kernel.screen_events` with ``threads=1`` or 2, on
  the sorted arrays, curves recorded; the two are checked to give the same
  bits);
* ``calibration walk, 1 thread`` and ``2 threads``
  (:func:`polars_cumdev.kernel.calibration_walk`, the walk of
  ``calibration(by=)``, split by group on two);
* ``located stretches, 1 thread`` and ``2 threads``
  (:func:`polars_cumdev.kernel.split_stretches` on the recorded curves);
* ``whole screen`` (``screen(df.lazy(), ..., engine="kernel")``, location
  included) and ``calibration(by=)`` (``engine="kernel"``), collected with
  Polars' default engine (in Polars 2.1 the streaming engine, which hands
  the node its rows in many chunks).

Each figure is printed as seconds and as a ratio to the sort, with the load
average: on a shared machine only the ratios mean anything.
"""

from __future__ import annotations

import argparse
import os

import common
import numpy as np


def measure(scores: str, n: int, groups: int, repeat: int) -> tuple[list[dict], bool]:
    """The table's rows of one score kind, and whether 1 and 2 threads gave the same bits."""
    import polars as pl

    from polars_cumdev import kernel as k
    from polars_cumdev.calibration import calibration
    from polars_cumdev.method import compiled, score_order
    from polars_cumdev.subpopulation import screen

    df = common.make_frame(n, groups, seed=n + groups, decimals=common.score_kind(scores))
    screen(df.head(1000), "group", "score", "response", "weight", engine="kernel")
    ordered = df.sort("score")
    ids, s = ordered["group"].to_numpy(), ordered["score"].to_numpy()
    r, w = ordered["response"].to_numpy(), ordered["weight"].to_numpy()
    raw = [df.get_column(c).to_numpy() for c in ("score", "response", "weight", "group")]

    def radix_route() -> list[np.ndarray]:
        order = score_order.score_order(pl.Series(raw[0]))
        columns = k.gather.gather_rows(order, [np.array(x, copy=True) for x in raw])
        return [compiled._in_ties_order(order, columns, weighted=True), *columns]

    def bucket_route() -> list[np.ndarray]:
        scores, order, moved = k.bucketsort.bucket_sort(*raw, weighted=True)
        return [order, scores, *moved]

    routes_agree = all(
        np.array_equal(a, b) for a, b in zip(radix_route(), bucket_route(), strict=True)
    )
    walk = (ids, 0, s, r, w, True, 1.0, groups, 0.5, True)
    one = k.screen_events(*walk, threads=1)
    two = k.screen_events(*walk, threads=2)
    same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(one, two, strict=True))
    starts = np.zeros(groups + 1, dtype=np.int64)
    np.cumsum(k.tie_counts(ids, 0, s, groups), out=starts[1:])
    calibrating = (ids, 0, s, r, w, True, 1.0, groups, starts)
    _, _, points, curves = one
    search = (points, curves[:, 0].copy(), curves[:, 1].copy(), np.full(groups, 1e-3))
    lazy = df.lazy()
    parts = {
        "df.sort(score)": lambda: df.sort("score"),
        "sort by score, weight, response": lambda: df.sort(["score", "weight", "response"]),
        "radix order, gather, ties": radix_route,
        "bucket sort": bucket_route,
        "events walk, 1 thread": lambda: k.screen_events(*walk, threads=1),
        "events walk, 2 threads": lambda: k.screen_events(*walk, threads=2),
        "calibration walk, 1 thread": lambda: k.calibration_walk(*calibrating, threads=1),
        "calibration walk, 2 threads": lambda: k.calibration_walk(*calibrating, threads=2),
        "located stretches, 1 thread": lambda: k.split_stretches(*search, threads=1),
        "located stretches, 2 threads": lambda: k.split_stretches(*search, threads=2),
        "whole screen": lambda: screen(
            lazy, "group", "score", "response", "weight", engine="kernel"
        ).collect(),
        "calibration(by=)": lambda: calibration(
            lazy, "score", "response", "weight", by="group", engine="kernel"
        ).collect(),
    }
    best = dict.fromkeys(parts, np.inf)
    load = os.getloadavg()[0]
    for _ in range(repeat):
        for name, part in parts.items():
            best[name] = min(best[name], common.timed(part)[0])
    load = (load + os.getloadavg()[0]) / 2
    rows = [
        {
            "scores": scores,
            "part": name,
            "seconds": f"{seconds:.3f}",
            "/ sort": f"{seconds / best['df.sort(score)']:.2f}",
            "load": f"{load:.1f}",
        }
        for name, seconds in best.items()
    ]
    return rows, same and routes_agree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scores", nargs="+", default=["continuous", "5-decimal"])
    args = parser.parse_args()
    print(common.machine())
    table = []
    for scores in args.scores:
        rows, same = measure(scores, int(args.rows), args.groups, args.repeat)
        table += rows
        print(
            f"{scores}: events on 1 and 2 threads, and the node's two routes to the "
            f"sorted rows, give the same arrays: {same}"
        )
    print(f"{int(args.rows):,} rows, {args.groups} groups, best of {args.repeat}")
    print(common.markdown_table(table, ("scores", "part", "seconds", "/ sort", "load")))


if __name__ == "__main__":
    main()
