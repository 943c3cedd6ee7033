"""Issue 36: family-wise null rates of multicalibration, and two mutations (usage: SETS ROWS)."""

import sys
import time

import numpy as np
import polars as pl

from polars_cumdev.method.familywise import holm_numpy
from polars_cumdev.multicalibration import bootstrap, multicalibration, segments

N = int(sys.argv[1])
n = int(sys.argv[2])
orig = bootstrap.maxima


def scaled(*a, **k):
    out = orig(*a, **k)
    return out * 0.95 if isinstance(out, np.ndarray) else out


family = segments(["a", "b"], ["c"], depth=3)


def data(k):
    rng = np.random.default_rng(1000 + k)
    s = rng.uniform(0.05, 0.95, n)
    return pl.DataFrame(
        {
            "s": s,
            "y": (rng.random(n) < s).astype(np.int8),
            "a": rng.choice(["x", "y", "z", "v"], n),
            "b": rng.choice(["1", "2", "3"], n),
            "c": rng.normal(size=n),
        }
    )


rows = []
t = time.time()
for k in range(N):
    f = data(k)
    tab = multicalibration(f, "s", "y", segments=family, method="bootstrap", resamples=99, seed=k)
    p = tab["ecce_r_p"].to_numpy()
    hp = holm_numpy(p)
    bootstrap.maxima = scaled
    mut = multicalibration(f, "s", "y", segments=family, method="bootstrap", resamples=99, seed=k)
    bootstrap.maxima = orig
    rows.append(
        (
            hp.min() <= 0.05,
            hp.min() <= 0.10,
            hp.min() <= 0.15,
            tab["p_family"].min() <= 0.05,
            mut["p_family"].min() <= 0.05,
            np.nanmin(p),
        )
    )
r = np.array(rows, dtype=float)
print(
    f"N={N} n={n} time={time.time() - t:.0f}s holm5={r[:, 0].mean():.4f} "
    f"holm@2x={r[:, 1].mean():.4f} holm@3x={r[:, 2].mean():.4f} boot={r[:, 3].mean():.4f} "
    f"boot*0.95={r[:, 4].mean():.4f}"
)
