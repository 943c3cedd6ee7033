"""Issue 36: null rates of compare with distinct scores at a few rows; args: SETS (8000).

compare keeps the asymptotic p-value where the two subpopulations share no score. The
permutation kernel computes the same z as the table (tests/analyses/
test_compare_permutation.py), for many comparisons in one call; MIN_SHARED = 0 only makes
it do so for these. The last lines run compare_all itself on 40 null data sets.
"""

import sys

import numpy as np
import polars as pl

import polars_cumdev  # noqa: F401
from polars_cumdev.compare import permutation as pm
from polars_cumdev.compare.columns import _G, _SOURCE, _options
from polars_cumdev.compare.permutation import _TESTS, _ZK, permutation_batch
from polars_cumdev.method import _names as nm
from polars_cumdev.method.pvalues import kuiper_pvalue

pm.MIN_SHARED = 0.0
sets = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
for first, second in ((5, 5), (10, 10), (20, 20), (30, 30), (50, 50), (100, 100),
                      (5, 50), (10, 100), (20, 200), (50, 500)):  # fmt: skip
    for weighted, kind in ((False, "binary"), (True, "binary"), (False, "real")):
        rng = np.random.default_rng(0)
        rep = np.repeat(np.arange(sets), first + second)
        source = np.tile(np.repeat(np.array([0, 1], dtype=np.int8), [first, second]), sets)
        s = rng.uniform(0.05, 0.95, rep.size)
        r = (
            (rng.random(rep.size) < s).astype(float)
            if kind == "binary"
            else s * rng.lognormal(-0.5, 1.0, rep.size)
        )
        batch = pl.DataFrame(
            {
                _G: rep.astype(np.int64),
                _SOURCE: source,
                nm.SCORE: s,
                nm.RESPONSE: r,
                nm.WEIGHT: rng.lognormal(0.0, 1.0, rep.size) if weighted else np.ones(rep.size),
                _TESTS: np.ones(rep.size, dtype=np.int64),
            }
        )
        out = permutation_batch(batch, _options("empirical", "dither", 0), 0.05)
        p = np.asarray(kuiper_pvalue(out[_ZK].to_numpy()))
        print(
            f"compare {first}+{second} {kind} weighted={weighted}: 5%: {np.mean(p <= 0.05):.4f} "
            f"1%: {np.mean(p <= 0.01):.4f} of {p.size}",
            flush=True,
        )
for groups, rows, reference in ((200, 10, 100), (200, 10, 1000), (200, 30, 300), (50, 100, 1000)):
    found, tail = 0, []
    for k in range(40):
        rng = np.random.default_rng(700 + k)
        g = np.r_[np.repeat(np.arange(1, groups + 1), rows), np.zeros(reference, int)]
        s = rng.uniform(0.05, 0.95, g.size)
        frame = pl.DataFrame({"g": g, "s": s, "r": (rng.random(g.size) < s).astype(float)})
        out = frame.cumdev.compare_all("g", 0, "s", "r")
        tail.append(out["kuiper_p"].drop_nulls().to_numpy())
        found += int((out["kuiper_q"] <= 0.05).any())
    p = np.concatenate(tail)
    print(
        f"compare_all {groups} groups of {rows} vs {reference}: p <= 2.5e-4 in "
        f"{np.mean(p <= 2.5e-4):.4f} of groups; some q <= 0.05 in {found} of 40",
        flush=True,
    )
