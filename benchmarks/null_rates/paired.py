"""Issue 36: null rejection rates of paired() (usage: python paired.py REPS)."""

import sys, numpy as np, polars as pl, polars_cumdev  # noqa

reps = int(sys.argv[1])
for size in (20, 200):
    for K in (2, 5, 11, 50):
        for kind in ("gaussian", "binary"):
            rng = np.random.default_rng(K * 7 + size)
            rep = np.repeat(np.arange(reps), size)
            x = np.linspace(0.1, 0.9, K)[rng.integers(0, K, rep.size)]
            if kind == "gaussian":
                q = x + rng.normal(size=x.size)
                r = x + rng.normal(size=x.size)
            else:
                q = (rng.random(x.size) < x).astype(float)
                r = (rng.random(x.size) < x).astype(float)
            df = pl.DataFrame(
                {"s": x, "q": q, "r": r, "rep": rep, "w": rng.lognormal(0, 0.5, x.size)}
            )
            for variance in ("empirical",) if kind == "gaussian" else ("empirical", "bernoulli"):
                out = df.cumdev.paired("s", "q", "r", "w", by="rep", variance=variance)
                p = out["kuiper_p"].to_numpy()
                print(
                    f"paired size={size} K={K} {kind} {variance}: "
                    f"5%: {np.nanmean(p <= 0.05):.4f} 1%: {np.nanmean(p <= 0.01):.4f} "
                    f"null={np.isnan(p).sum()}",
                    flush=True,
                )
