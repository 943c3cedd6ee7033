"""One overall calibration, warm, beside scikit-learn's calibration_curve + brier_score_loss.

Usage::

    python benchmarks/small_calibration.py [--repeat 7] [--engines auto kernel] [--profile]

Issue 40, item 7: warm, one overall :func:`polars_cumdev.calibration` at
134,094 rows should be at least as fast as scikit-learn's
``calibration_curve`` + ``brier_score_loss`` on the same arrays, and within
2x at 10,000 rows. The grid: both sizes; continuous scores (seeded uniform
probabilities, every one distinct) and tie-heavy ones (the same rounded to
2 decimals); without and with weights (scikit-learn's Brier score takes
them, its ``calibration_curve`` does not). Both sides start from the same
NumPy arrays; the package's side includes building the Polars DataFrame
(what a scikit-learn user does). Each call runs once, then ``repeat``
rounds in which scikit-learn and every engine run in turn (the machine's
load then weighs on all alike); the best time of each is printed with the
ratio (> 1: the package is faster), and per engine the worst ratio of the
grid (the headline). ``--profile`` prints cProfile's top entries of the
package's calls at the smaller size: where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time
from collections.abc import Callable

import common  # noqa: F401  (puts the checkout first on sys.path)
import numpy as np
import polars as pl

import polars_cumdev  # noqa: F401  (registers the namespace)
from polars_cumdev.calibration import calibration

SIZES = (134_094, 10_000)


def _arrays(n: int, ties: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    if ties:
        p = np.round(p, 2)
    y = (rng.uniform(size=n) < p).astype(np.int64)
    return p, y, rng.lognormal(0.0, 0.5, size=n)


def _best(calls: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best time of each call over ``repeat`` rounds, the calls taking turns in each round."""
    for call in calls.values():
        call()
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeat):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--engines", nargs="+", default=["auto", "polars", "kernel"])
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    print(f"load average {os.getloadavg()[0]:.1f} at start")
    print(f"{'rows':>8} {'scores':>10} {'weights':>7} {'engine':>7} {'sklearn ms':>10} "
          f"{'cumdev ms':>10} {'ratio':>6}")  # fmt: skip
    worst: dict[str, tuple[float, str]] = {}
    for n in SIZES:
        for ties in (False, True):
            for weighted in (False, True):
                p, y, w = _arrays(n, ties)
                sw = w if weighted else None

                def sk(p=p, y=y, sw=sw) -> object:
                    return calibration_curve(y, p, n_bins=10), brier_score_loss(
                        y, p, sample_weight=sw
                    )

                calls: dict[str, Callable[[], object]] = {"sklearn": sk}
                for engine in args.engines:

                    def ours(p=p, y=y, w=w, engine=engine, weighted=weighted) -> object:
                        frame = pl.DataFrame({"p": p, "y": y, "w": w})
                        return calibration(
                            frame, "p", "y", "w" if weighted else None, engine=engine
                        )

                    calls[engine] = ours
                best = _best(calls, args.repeat)
                scores = "2-decimal" if ties else "continuous"
                for engine in args.engines:
                    ratio = best["sklearn"] / best[engine]
                    where = f"{n:,} rows, {scores}, {'weighted' if weighted else 'unweighted'}"
                    if engine not in worst or ratio < worst[engine][0]:
                        worst[engine] = (ratio, where)
                    print(f"{n:>8,} {scores:>10} {'yes' if weighted else 'no':>7} {engine:>7} "
                          f"{1e3 * best['sklearn']:>10.2f} {1e3 * best[engine]:>10.2f} "
                          f"{ratio:>6.2f}")  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f} at end")
    for engine, (ratio, where) in worst.items():
        print(f"worst ratio, engine={engine}: {ratio:.2f} ({where})")
    if args.profile:
        p, y, _ = _arrays(10_000, False)
        frame = pl.DataFrame({"p": p, "y": y})
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(20):
            calibration(frame, "p", "y", engine=args.engines[-1])
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
