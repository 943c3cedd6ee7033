"""Issue 36: null rates of compare(ties="dither") with few distinct scores; args: REPS."""

import sys, numpy as np, polars as pl, polars_cumdev  # noqa

reps = int(sys.argv[1])
for size in (60, 400):
    for K in (3, 5, 11):
        for kind in ("binary", "gaussian"):
            ps = []
            for k in range(reps):
                rng = np.random.default_rng(10**6 + k)
                s = np.linspace(0.1, 0.9, K)[rng.integers(0, K, size)]
                g = np.where(rng.uniform(size=size) < 0.5, "a", "b")
                r = (
                    (rng.uniform(size=size) < s).astype(float)
                    if kind == "binary"
                    else s + rng.normal(size=size)
                )
                df = pl.DataFrame({"g": g, "s": s, "r": r})
                out = df.cumdev.compare(
                    pl.col("g") == "a", pl.col("g") == "b", "s", "r", ties="dither", seed=k
                )
                ps.append(out["kuiper_p"][0])
            p = np.array([np.nan if v is None else v for v in ps])
            print(
                f"compare size={size} K={K} {kind}: 5%: {np.nanmean(p <= 0.05):.4f} "
                f"1%: {np.nanmean(p <= 0.01):.4f} null={np.isnan(p).sum()} of {reps}",
                flush=True,
            )
