"""What the screen's resampled p-values cost (issue 36, item 1): real responses, with and without.

``screen(by=)`` (kernel) on log-normal responses (sigma 1.5, scaled by the
score; the same law in every group: the global null), with the finite-sample
p-values (the default: candidate groups resampled within their bins) and
without them (the private ``_finite_sample=False``: the asymptotic tail alone),
alternately in one process, best of 2 wall times; unweighted and with weights
0.5 / 1 / 2.5 (a binary search per pick instead of one step). Prints the groups
resampled beside the times.

    python benchmarks/finite_resampled.py            # 1e6 rows, 2,000 and 20,000 groups
    python benchmarks/finite_resampled.py 200000     # another size
"""

from __future__ import annotations

import sys

import numpy as np
import polars as pl
from common import best_of

from polars_cumdev.subpopulation import screen


def frame(n: int, groups: int, weighted: bool, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    columns = {
        "group": rng.integers(0, groups, n),
        "score": s,
        "response": (0.5 + s) * rng.lognormal(0.0, 1.5, n),
        "weight": rng.choice([0.5, 1.0, 2.5], n) if weighted else np.ones(n),
    }
    return pl.DataFrame(columns)


def main(n: int) -> None:
    for groups in (2_000, 20_000):
        for weighted in (False, True):
            data = frame(n, groups, weighted)
            weight = "weight" if weighted else None

            def run(finite: bool, data=data, weight=weight) -> pl.DataFrame:
                return screen(data, "group", "score", "response", weight, _finite_sample=finite)

            run(True), run(False)  # warm: compile or load the kernel
            on = best_of(lambda: run(True), 2)
            off = best_of(lambda: run(False), 2)
            drawn = int((run(True)["p_method"] == "resampled").sum())
            print(
                f"{n:,} rows, {groups:>6,} groups, {'weighted' if weighted else 'unweighted':>10}: "
                f"resampled {drawn:>5}  without {off:7.3f} s  with {on:7.3f} s  "
                f"added {on - off:+7.3f} s ({on / off:4.1f}x)",
                flush=True,
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
