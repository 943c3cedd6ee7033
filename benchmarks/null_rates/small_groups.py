"""Issue 36: null rates of screen(by=) / calibration(by=) with groups of 10-30 rows; args: SETS.

0/1 responses drawn from the scores, 150 groups a data set, log-normal weights (sigma 1):
scores from Beta(8, 1) or K = 2, 3, 5 levels in [0.1, 0.9]. Prints the share of groups
with p <= 0.05 and 0.01 and of data sets with some Benjamini-Hochberg q <= 0.05, with the
finite-sample p-values and on the asymptotic tail alone. The segment screen with real
responses: tests/analyses/test_small_groups_null.py (_segment_counts).
"""

import sys

import numpy as np
import polars as pl

from polars_cumdev.calibration import calibration
from polars_cumdev.subpopulation import screen

sets = int(sys.argv[1]) if len(sys.argv) > 1 else 64
for law in ("near1", "K2", "K3", "K5"):
    for finite in (True, False):
        counts = {"screen": np.zeros(3), "calibration": np.zeros(3)}
        total = 0
        for k in range(sets):
            rng = np.random.default_rng(9000 + k)
            g = np.repeat(np.arange(150), rng.integers(10, 31, 150))
            if law == "near1":
                s = rng.beta(8.0, 1.0, g.size)
            else:
                s = np.linspace(0.1, 0.9, int(law[1:]))[rng.integers(0, int(law[1:]), g.size)]
            r = (rng.random(g.size) < s).astype(float)
            frame = pl.DataFrame({"g": g, "s": s, "r": r, "w": rng.lognormal(0.0, 1.0, g.size)})
            a = screen(frame, "g", "s", "r", "w", _finite_sample=finite)
            b = calibration(frame, "s", "r", "w", by="g", _finite_sample=finite)
            for name, p, q in (("screen", a["kuiper_p"], a["kuiper_q"]),
                               ("calibration", b["ecce_r_p"], b["ecce_r_q"])):  # fmt: skip
                counts[name] += [(p <= 0.05).sum(), (p <= 0.01).sum(), (q <= 0.05).any()]
            total += 150
        for name, c in counts.items():
            print(
                f"{name} {law} finite={finite}: 5%: {c[0] / total:.4f} 1%: {c[1] / total:.4f} "
                f"family-wise (BH 0.05): {c[2] / sets:.3f} of {sets} data sets",
                flush=True,
            )
