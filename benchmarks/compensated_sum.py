"""How accurate are bin sums taken as differences of float64 prefix sums over 1e7 rows?

Usage::

    python benchmarks/compensated_sum.py [--rows 1e7] [--groups 1000]

The screen (polars_cumdev.method.bins) gets every bin's sums of W, W^2, W r and
W r^2 (r = R - c, the centred response) as differences of running sums over
the whole population sorted by score. A difference of two large running
sums carries the rounding error of the running sums themselves, about
eps * (sum of |x| up to there), however small the bin. This script measures
that error on the benchmark frame of :func:`common.make_frame`, sorted by
score, with the bins of real subpopulations: the midpoint bins of the
largest, a median-sized and the smallest group (method.md 1.2).

The exact bin sums are :func:`math.fsum` over each bin's rows. Ways of
getting a bin sum from stored running sums:

* ``global cum_sum``: one float64 running sum over the whole population
  (Polars ``cum_sum``; NumPy's ``cumsum`` gives the same figures), bin =
  difference of two running sums (what bins.py did before it compensated);
* ``library pair``: what :func:`polars_cumdev.method.bins.running_sums` stores, the
  running sum and the running sum of each addition's exact rounding error
  (TwoSum); bin = (sum_b - sum_a) + (err_b - err_a);
* ``kernel pair``: the same pair as the compiled kernel keeps it
  (:func:`polars_cumdev.kernel.prefix_table`, one row per distinct score);
* ``kahan pair``: a Kahan-compensated running sum stored as two columns
  (sum, compensation); bin = (sum_b - sum_a) - (comp_b - comp_a);
* ``blocked (4096)``: running sums restarted every 4096 rows plus the block
  totals; a bin inside one block is a difference of local sums, a bin across
  blocks is (rest of its first block) + (whole blocks between) + (local sum
  in its last block);
* ``ranges (R=8)``: the same with 8 score ranges instead of blocks: exactly
  how :mod:`polars_cumdev.engines.partitioned` computes bins.

Reported: the largest relative error |diff - exact| / |exact| of a bin sum,
and the same relative to the bin's sum of |x| (which is what matters for the
centred, sign-changing W r).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import time

import common
import numpy as np
import polars as pl

from polars_cumdev.kernel import prefix_table
from polars_cumdev.kernel.prefix import HI, LO
from polars_cumdev.method import _names as nm
from polars_cumdev.method.prefix_sums import running_sums

BLOCK = 4096


def kahan_pair(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kahan running sums as (sum, compensation) at positions 0..n; the sum is sum - comp."""
    total_out = np.zeros(x.size + 1)
    comp_out = np.zeros(x.size + 1)
    total = 0.0
    comp = 0.0
    for i, value in enumerate(x.tolist(), start=1):
        y = value - comp
        t = total + y
        comp = (t - total) - y
        total = t
        total_out[i] = total
        comp_out[i] = comp
    return total_out, comp_out


def restarted_bins(x: np.ndarray, starts: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin sums from running sums restarted at ``starts`` (see the module docstring)."""
    local = np.zeros(x.size + 1)  # local[p]: sum of x from the start of p's piece to p
    bounds = [*starts.tolist(), x.size]
    totals = []
    for lo, hi in itertools.pairwise(bounds):
        run = np.cumsum(x[lo:hi])
        local[lo + 1 : hi + 1] = run
        totals.append(run[-1] if run.size else 0.0)
    piece = np.searchsorted(starts, edges, side="right") - 1
    local_at = local[edges].copy()
    # A position equal to a piece start belongs to that piece, with local sum 0.
    local_at[np.isin(edges, starts)] = 0.0
    at_end = edges == x.size
    piece[at_end] = len(totals) - 1
    local_at[at_end] = totals[-1]
    total = np.asarray(totals)
    through = np.cumsum(total)  # T_{<=j}
    before = np.concatenate([[0.0], through[:-1]])  # T_{<j}
    a, b = piece[:-1], piece[1:]
    la, lb = local_at[:-1], local_at[1:]
    across = (total[a] - la) + (before[b] - through[a]) + lb
    return np.where(a == b, lb - la, across)


def bins_of_group(scores: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Indices into the sorted full population where each midpoint bin ends."""
    distinct = np.unique(scores[members])
    mids = (distinct[:-1] + distinct[1:]) / 2.0
    ends = np.searchsorted(scores, mids, side="right")
    return np.concatenate([[0], ends, [scores.size]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--groups", type=int, default=1000)
    args = parser.parse_args()
    rows = int(args.rows)
    print(common.machine())
    print(f"load average before: {os.getloadavg()}")
    df = common.make_frame(rows, args.groups, seed=7).sort("score")
    s = df["score"].to_numpy()
    w = df["weight"].to_numpy()
    r = df["response"].to_numpy().astype(np.float64)
    g = df["group"].to_numpy()
    centre = round(2.0 * r.mean()) / 2.0
    rc = r - centre
    columns = {"W": w, "W^2": w * w, "W r": w * rc, "W r^2": w * rc * rc}
    library = running_sums(
        pl.LazyFrame({nm.SCORE: s, nm.RESPONSE: r, nm.WEIGHT: w}), pl.lit(centre)
    ).collect()
    sums_of = {"W": "_pw", "W^2": "_pww", "W r": "_pwr", "W r^2": "_pwrr"}
    stream_of = {"W": 0, "W^2": 1, "W r": 2, "W r^2": 3}
    distinct, kernel_table = prefix_table(s, r, w, True, 1.0, centre)

    def kernel_rows(e: np.ndarray) -> np.ndarray:
        """Prefix row of the kernel's table holding the sums of the first e rows (-1: none)."""
        last = np.where(e > 0, s[np.maximum(e - 1, 0)], -np.inf)
        return np.searchsorted(distinct, last, side="right") - 1

    sizes = df["group"].value_counts().sort("count")
    picks = {
        "largest": sizes.row(-1)[0],
        "median": sizes.row(sizes.height // 2)[0],
        "smallest": sizes.row(0)[0],
    }
    edges = {name: bins_of_group(s, g == label) for name, label in picks.items()}
    for name, e in edges.items():
        widths = np.diff(e)
        print(
            f"group {name}: {widths.size} bins, rows per bin min {widths.min()} "
            f"median {int(np.median(widths))} max {widths.max()}"
        )
    quantiles = np.quantile(s, np.arange(1, 8) / 8, method="lower")
    range_starts = np.concatenate([[0], np.searchsorted(s, quantiles, side="right")])
    block_starts = np.arange(0, rows, BLOCK)

    table = []
    for column, x in columns.items():
        start = time.perf_counter()
        glob = np.concatenate([[0.0], pl.Series(x).cum_sum().to_numpy()])
        pair = np.concatenate([[0.0], library[sums_of[column]].to_numpy()])
        pair_err = np.concatenate([[0.0], library[f"{sums_of[column]}_err"].to_numpy()])
        total, comp = kahan_pair(x)
        j = stream_of[column]
        k_hi = np.concatenate([[0.0], kernel_table[:, HI + j]])
        k_lo = np.concatenate([[0.0], kernel_table[:, LO + j]])
        absx = np.abs(x)
        for name, e in edges.items():
            pairs = list(itertools.pairwise(e.tolist()))
            exact = np.array([math.fsum(x[a:b].tolist()) for a, b in pairs])
            scale = np.array([math.fsum(absx[a:b].tolist()) for a, b in pairs])
            estimates = {
                "global cum_sum": glob[e[1:]] - glob[e[:-1]],
                "library pair": (pair[e[1:]] - pair[e[:-1]]) + (pair_err[e[1:]] - pair_err[e[:-1]]),
                "kernel pair": (
                    (k_hi[kernel_rows(e[1:]) + 1] - k_hi[kernel_rows(e[:-1]) + 1])
                    + (k_lo[kernel_rows(e[1:]) + 1] - k_lo[kernel_rows(e[:-1]) + 1])
                ),
                "kahan pair": (total[e[1:]] - total[e[:-1]]) - (comp[e[1:]] - comp[e[:-1]]),
                "blocked (4096)": restarted_bins(x, block_starts, e),
                "ranges (R=8)": restarted_bins(x, range_starts, e),
            }
            row = {"sum": column, "bins of": f"{name} ({e.size - 1})"}
            nonzero = exact != 0
            for method, diff in estimates.items():
                err = np.abs(diff - exact)
                rel = (err[nonzero] / np.abs(exact[nonzero])).max() if nonzero.any() else 0.0
                row[method] = f"{rel:.1e} / {(err / scale).max():.1e}"
            table.append(row)
        print(f"{column}: {time.perf_counter() - start:.1f} s", flush=True)
    print(f"load average after: {os.getloadavg()}")
    print(
        "entries: largest |diff - exact| / |exact|  /  largest |diff - exact| / sum |x| "
        f"over the bins ({rows} rows)"
    )
    print(
        common.markdown_table(
            table,
            [
                "sum",
                "bins of",
                "global cum_sum",
                "library pair",
                "kernel pair",
                "kahan pair",
                "blocked (4096)",
                "ranges (R=8)",
            ],
        )
    )


if __name__ == "__main__":
    main()
