"""Multicalibration audit: time and memory against one sort of the frame, and per resample.

The configuration of multicalibration-mcgrad.md (f): 4 categorical features of
5 values and 3 numerical ones, continuous scores, weights, depth 3 (MCGrad's
segment rules, levels 3: about 1,000 segments). Prints, side by side in one
process, the time of one ``sort`` of the frame by score, of the audit (Holm),
their ratio, the bootstrap's cost per resample, and the added peak memory
(resident set, sampled) against the size of the input columns. MCGrad 0.1.5 is
not timed here: it needs PyTorch (6.7 GB installed), which this environment has
not got; the script says whether it is importable, and compares with the 29.9 s
that multicalibration-mcgrad.md (f) measured at 1e6 rows on this machine class
(another moment, another load: indicative only).

    python benchmarks/multicalibration.py            # 1e6 and 1e7 rows
    python benchmarks/multicalibration.py 1000000    # one size
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import time

import numpy as np
import polars as pl

import polars_cumdev as pc
from polars_cumdev.multicalibration import multicalibration


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


class Peak:
    """Largest resident set seen while the block runs, sampled every 10 ms."""

    def __enter__(self):
        self.base, self.peak, self.done = _rss(), _rss(), False

        def watch():
            while not self.done:
                self.peak = max(self.peak, _rss())
                time.sleep(0.01)

        self.thread = threading.Thread(target=watch, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done = True
        self.thread.join()
        self.added = self.peak - self.base


def frame(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 5.0, n)
    columns = {"s": s, "y": (rng.random(n) < s).astype(np.int8), "w": rng.uniform(0.5, 2.0, n)}
    for k in range(4):
        columns[f"c{k}"] = rng.integers(0, 5, n).astype(np.int32)
    for k in range(3):
        columns[f"x{k}"] = rng.normal(size=n)
    return pl.DataFrame(columns)


def best(function, repeats: int = 2) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main(sizes: list[int]) -> None:
    family = pc.segments(
        [f"c{k}" for k in range(4)], [f"x{k}" for k in range(3)], depth=3, rules="mcgrad"
    )
    print(
        f"MCGrad importable: {importlib.util.find_spec('mcgrad') is not None} "
        "(not installed here: it needs PyTorch, 6.7 GB; spec (f) measured 29.9 s at 1e6)"
    )
    warm = frame(20_000)
    multicalibration(warm, "s", "y", "w", segments=family)
    multicalibration(warm, "s", "y", "w", segments=family, method="bootstrap", resamples=2)
    for n in sizes:
        data = frame(n)
        size = data.estimated_size()
        sort = best(lambda data=data: data.sort("s"))
        with Peak() as peak:
            table = multicalibration(data, "s", "y", "w", segments=family)
        audit = best(lambda data=data: multicalibration(data, "s", "y", "w", segments=family), 1)
        b = 5
        boot = best(
            lambda data=data, b=b: multicalibration(
                data, "s", "y", "w", segments=family, method="bootstrap", resamples=b
            ),
            1,
        )
        per = (boot - audit) / b
        print(
            f"rows {n:>10,}  segments {table.height:>5}  sort {sort:7.3f} s  "
            f"audit {audit:7.3f} s  = {audit / sort:5.1f} sorts  "
            f"bootstrap {per:6.3f} s/resample = {per / sort:5.2f} sorts  "
            f"added peak {peak.added / 1e9:5.2f} GB = {peak.added / size:4.2f} x input "
            f"({size / 1e9:.2f} GB)"
        )
        if n <= 1_000_000:
            print(
                f"  vs MCGrad 0.1.5's 29.9 s (spec (f), same machine class): {29.9 / audit:5.1f}x"
            )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1_000_000, 10_000_000])
