"""Issue 36: null rates of calibration(target=mean or quantile); args: TARGET REPS ROWS K,K."""

import sys
import time

import numpy as np
import polars as pl

import polars_cumdev  # noqa


def rates(K, hetero, weighted, reps=2000, size=1000, seed=0, target="mean"):  # noqa: N803
    rng = np.random.default_rng(seed + 1000 * K + 7 * hetero + 3 * weighted)
    rep = np.repeat(np.arange(reps), size)
    grid = np.linspace(-2, 2, K)
    x = grid[rng.integers(0, K, rep.size)]
    spread = 0.5 + 0.5 * np.abs(x) if hetero else np.ones_like(x)
    y = x + spread * rng.normal(size=x.size)
    w = rng.lognormal(0, 0.5, rep.size) if weighted else np.ones(rep.size)
    df = pl.DataFrame({"s": x, "y": y, "rep": rep, "w": w})
    if target == "quantile":
        df = df.with_columns(s=pl.col("s") + 1.2815515655446004 * pl.Series(spread))
    out = df.cumdev.calibration(
        "s",
        "y",
        "w" if weighted else None,
        by="rep",
        target=target,
        alpha=0.9 if target == "quantile" else None,
    )
    p = out["ecce_r_p"].to_numpy()
    return (p <= 0.05).mean(), (p <= 0.01).mean(), np.isnan(p).sum()


target = sys.argv[1] if len(sys.argv) > 1 else "mean"
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
size = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
KS = [int(k) for k in sys.argv[4].split(",")] if len(sys.argv) > 4 else (2, 5, 11, 50, 500)
for K in KS:
    for hetero in (0, 1):
        for weighted in (0, 1):
            t = time.time()
            r5, r1, nan = rates(K, hetero, weighted, reps=reps, size=size, target=target)
            print(
                f"{target} K={K:4d} hetero={hetero} weighted={weighted}: "
                f"5%: {r5:.4f} 1%: {r1:.4f} nan={nan} ({time.time() - t:.1f}s)",
                flush=True,
            )
