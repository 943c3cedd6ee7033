"""What the census-sized screen cannot go below, on each road: the parts beside 25 ms.

Usage::

    python benchmarks/small_floor.py [--repeat 7]

Issue 22 asks for the census-sized screen (134,094 rows, 41 counties,
continuous scores: :func:`small_screen.frame`) in at most 25 ms warm with the
default engine, and a fresh process's first screen no slower than before.
This script times, best of ``repeat``, the parts each road cannot skip:

* **the compiled kernel** (Numba): its bucket sort of the four columns and
  its events walk (:func:`polars_cumdev.kernel.screen_events`, curves
  recorded, one thread: two start at 2^20 rows), on the node's own arrays;
  and a fresh interpreter's ``import numba`` alone (median of 3), which
  ``"auto"`` would pay in a fresh process if it took the kernel at this size;
* **NumPy, vectorised over all groups** (a road not built): the least a
  NumPy route must do before any statistic -- sort the rows by score, then
  stably by group, move the four columns into each order, take four running
  sums (plain ``cumsum``: the screen's are compensated, so this is a lower
  bound) and search the end of every bin among the scores;
* the warm screen itself on each engine, for scale.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import common
import numpy as np
import polars as pl
from small_screen import frame


def best(fn, repeat: int) -> float:
    """Best wall time of ``fn`` in milliseconds, after one call to warm it."""
    fn()
    return 1000 * common.best_of(fn, repeat)


def numba_import() -> float:
    """Median over 3 fresh interpreters of ``import numba`` alone, in milliseconds."""
    code = "import time; t = time.perf_counter(); import numba; print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(3)
    ]
    return 1000 * float(np.median(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    from polars_cumdev import kernel as k
    from polars_cumdev.subpopulation import screen

    df = frame()
    groups = df.get_column("county").cast(pl.Categorical).to_physical().to_numpy()
    s = df.get_column("log10_income").to_numpy()
    r = df.get_column("has_internet").cast(pl.Float64).to_numpy()
    w = df.get_column("WGTP").cast(pl.Float64).to_numpy()
    count = int(groups.max()) + 1
    print(common.machine())
    print(f"rows {df.height}, groups {count}, distinct scores {np.unique(s).size}")
    print(f"load average before: {os.getloadavg()}")

    scores, _, (r_sorted, w_sorted, g_sorted) = k.bucketsort.bucket_sort(s, r, w, groups, True)
    walk = (g_sorted, 0, scores, r_sorted, w_sorted, True, 1.0, count, 0.5, True)
    rows = [
        ("kernel", "bucket sort of the four columns", best(
            lambda: k.bucketsort.bucket_sort(s, r, w, groups, True), args.repeat)),
        ("kernel", "events walk, curves recorded", best(
            lambda: k.screen_events(*walk), args.repeat)),
        ("kernel", "import numba, fresh interpreter (median of 3)", numba_import()),
    ]  # fmt: skip

    columns = (s, r, w, groups)

    def numpy_floor() -> None:
        by_score = np.argsort(s)
        moved = [c[by_score] for c in columns]
        by_group = np.argsort(moved[3], kind="stable")
        grouped = [c[by_group] for c in moved]
        for c in (moved[2], moved[2] * moved[2], moved[2] * moved[1], moved[2] * moved[1] ** 2):
            np.cumsum(c)
        ends = 0.5 * (grouped[0][1:] + grouped[0][:-1])
        np.searchsorted(moved[0], ends, side="right")

    steps = {
        "argsort of the score": lambda: np.argsort(s),
        "stable argsort by group": lambda: np.argsort(groups, kind="stable"),
        "four columns moved, twice": lambda: [c[np.arange(c.size)] for c in columns * 2],
        "four running sums": lambda: [np.cumsum(c) for c in (s, r, w, s)],
        "bin ends searched": lambda: np.searchsorted(scores, scores, side="right"),
        "all of the above, in sequence": numpy_floor,
    }
    rows += [("numpy", name, best(fn, args.repeat)) for name, fn in steps.items()]

    for engine in ("auto", "kernel"):

        def run(engine: str = engine) -> None:
            screen(df, "county", "log10_income", "has_internet", "WGTP", engine=engine)

        rows.append(("screen", f'whole warm screen, engine="{engine}"', best(run, args.repeat)))
    print(f"load average after: {os.getloadavg()}")
    table = [{"road": a, "part": b, "ms": f"{c:.1f}"} for a, b, c in rows]
    print(common.markdown_table(table, ("road", "part", "ms")))


if __name__ == "__main__":
    main()
