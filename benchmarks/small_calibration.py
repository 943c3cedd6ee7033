"""One overall calibration, warm, beside scikit-learn's calibration_curve + brier_score_loss.

Usage::

    python benchmarks/small_calibration.py [--repeat 7] [--profile]

Issue 40, item 7: warm, one overall :func:`polars_cumdev.calibration` at
134,094 rows should be at least as fast as scikit-learn's
``calibration_curve`` + ``brier_score_loss`` on the same arrays, and within
2x at 10,000 rows. Data: 0/1 outcomes drawn from seeded uniform
probabilities (every probability distinct). Both sides start from the same
NumPy arrays; the package's side includes building the Polars DataFrame
(what a scikit-learn user does). Each call is run once, then ``repeat``
times, the best time printed with the ratio (> 1: the package is faster)
and the load average, on each engine. ``--profile`` prints cProfile's top
entries of the package's calls at the smaller size: where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats

import common
import numpy as np
import polars as pl

import polars_cumdev  # noqa: F401  (registers the namespace)
from polars_cumdev.calibration import calibration


def _arrays(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    return p, (rng.uniform(size=n) < p).astype(np.int64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'rows':>8} {'engine':>7} {'sklearn s':>10} {'cumdev s':>10} {'ratio':>6}")
    for n in (134_094, 10_000):
        p, y = _arrays(n)

        def sk(p: np.ndarray = p, y: np.ndarray = y) -> object:
            return calibration_curve(y, p, n_bins=10), brier_score_loss(y, p)

        sk()
        base = common.best_of(sk, args.repeat)
        for engine in ("auto", "polars", "kernel"):

            def ours(p: np.ndarray = p, y: np.ndarray = y, engine: str = engine) -> object:
                return calibration(pl.DataFrame({"p": p, "y": y}), "p", "y", engine=engine)

            ours()
            took = common.best_of(ours, args.repeat)
            print(f"{n:>8,} {engine:>7} {base:>10.4f} {took:>10.4f} {base / took:>6.2f}")
    if args.profile:
        p, y = _arrays(10_000)
        frame = pl.DataFrame({"p": p, "y": y})
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(20):
            calibration(frame, "p", "y")
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
