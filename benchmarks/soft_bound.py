"""What the soft labels' bound costs: power on a 20-row group, and run time.

Power: 2,000 independent groups of 20 rows, scores from Beta(1, 12), soft labels
Beta(k m, k (1 - m)) with mean m = s + delta (k = 0.1: near 0/1), unit weights or
log-normal (sigma 1); the share of groups with ``ecce_r_p`` at most 0.05 and at
most 0.05 / 150 (Benjamini-Hochberg's smallest threshold over 150 groups), on the
asymptotic p-values alone (before) and with the bound (now). Time: ``calibration(
by=)`` of 150 such groups a data set, 400 data sets, before and now, in one process.
The grid (``--grid``): the same before/now ratio on 1.2e6 rows of soft labels with
continuous scores (every one distinct) and 2-decimal ones, in 60,000 groups of 20
rows or in 6,000 groups of Zipf-skewed sizes (a few of 100,000 rows and more, most
of a few rows); the worst cell is the headline.

    python benchmarks/soft_bound.py [--grid]
"""

from __future__ import annotations

import time

import numpy as np
import polars as pl

from polars_cumdev.calibration import calibration


def groups(seed: int, count: int, delta: float, sigma: float, k: float = 0.1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(count), 20)
    s = rng.beta(1.0, 12.0, g.size)
    m = np.clip(s + delta, 1e-3, 0.999)
    r = rng.beta(k * m, k * (1.0 - m))
    w = rng.lognormal(0.0, sigma, g.size) if sigma else np.ones(g.size)
    return pl.DataFrame({"g": g, "s": s, "r": r, "w": w})


def power() -> None:
    print("power of a 20-row group (share with ecce_r_p <= 0.05 | <= 0.05/150)")
    print(f"{'weights':>10} {'delta':>6} {'before':>16} {'now':>16}")
    for sigma in (0.0, 1.0):
        for delta in (0.05, 0.1, 0.15, 0.2, 0.3, 0.4):
            frame = groups(1, 2000, delta, sigma)
            cells = []
            for finite in (False, True):
                p = calibration(frame, "s", "r", "w", by="g", _finite_sample=finite)["ecce_r_p"]
                cells.append(f"{(p <= 0.05).mean():.2f} | {(p <= 0.05 / 150).mean():.2f}")
            label = "log-normal" if sigma else "unit"
            print(f"{label:>10} {delta:>6} {cells[0]:>16} {cells[1]:>16}")


def timing() -> None:
    frame = groups(2, 60_000, 0.0, 1.0).with_columns(
        (pl.col("g") // 150).alias("set"), (pl.col("g") % 150).alias("g")
    )
    calibration(frame.head(3000), "s", "r", "w", by=["set", "g"])  # (compiled once)
    found = {}
    for finite in (False, True, False, True):
        start = time.perf_counter()
        table = calibration(frame, "s", "r", "w", by=["set", "g"], _finite_sample=finite)
        found.setdefault(finite, []).append(time.perf_counter() - start)
        bounded = int((table["p_method"] == "bound").sum())
    before, now = min(found[False]), min(found[True])
    print(f"calibration(by=) of {frame.height:,} rows, 60,000 groups ({bounded:,} bounded):")
    print(f"  asymptotic only {before:.2f} s, with the bound {now:.2f} s ({now / before:.2f}x)")


def skewed(seed: int, rows: int, count: int, decimals: int | None) -> pl.DataFrame:
    """``rows`` soft labels in ``count`` groups of Zipf-like sizes (exponent 1.1)."""
    rng = np.random.default_rng(seed)
    share = 1.0 / np.arange(1, count + 1) ** 1.1
    g = rng.choice(count, rows, p=share / share.sum())
    s = rng.beta(1.0, 12.0, rows)
    if decimals is not None:
        s = np.round(s, decimals)
    r = rng.beta(0.1 * s + 1e-3, 0.1 * (1.0 - s) + 1e-3)
    return pl.DataFrame({"g": g, "s": s, "r": r, "w": rng.lognormal(0.0, 1.0, rows)})


def grid(rows: int = 1_200_000, repeat: int = 3) -> None:
    print(f"calibration(by=) of {rows:,} rows of soft labels: asymptotic only against the bound")
    head = f"{'scores':>11} {'groups':>14} {'bounded':>8} {'before s':>9} {'now s':>7}"
    print(f"{head} {'now/before':>10}")
    worst = (0.0, "")
    for decimals in (None, 2):
        for layout in ("20 rows", "Zipf-skewed"):
            if layout == "20 rows":
                frame = groups(3, rows // 20, 0.0, 1.0)
                if decimals is not None:
                    frame = frame.with_columns(pl.col("s").round(decimals))
            else:
                frame = skewed(4, rows, 6000, decimals)
            calibration(frame.head(3000), "s", "r", "w", by="g")  # (compiled once)
            found: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(repeat):
                for finite in (False, True):
                    start = time.perf_counter()
                    table = calibration(frame, "s", "r", "w", by="g", _finite_sample=finite)
                    found[finite].append(time.perf_counter() - start)
            bounded = int((table["p_method"] == "bound").sum())
            before, now = min(found[False]), min(found[True])
            label = "continuous" if decimals is None else f"{decimals}-decimal"
            print(
                f"{label:>11} {layout:>14} {bounded:>8,} {before:>9.2f} {now:>7.2f}"
                f" {now / before:>10.2f}"
            )
            worst = max(worst, (now / before, f"{label}, {layout}"))
    print(f"worst: {worst[0]:.2f}x ({worst[1]})")


if __name__ == "__main__":
    import sys

    if "--grid" in sys.argv:
        grid()
    else:
        power()
        timing()
