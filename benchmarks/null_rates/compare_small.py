"""Issue 36: null rates of compare with distinct scores at a few rows; args: SETS (8000).

Where the smaller side has fewer than SMALL_ROWS effective rows, compare takes the
p-value of its candidates (asymptotic p at most the cutoff) from the permutation null
within strata of STRATUM consecutive rows of the pooled score order. Each line prints,
for the same null comparisons, the share at 5% and 1% of the reported p-value and of the
asymptotic one (what compare reported before), from the batch function compare uses
(many comparisons in one compiled call). Then compare_all itself on 40 null data sets,
and one line of power (a gap of 0.25 in the first side's success rate).
"""

import sys

import numpy as np
import polars as pl

import polars_cumdev  # noqa: F401
from polars_cumdev.compare.columns import _G, _SOURCE, _options
from polars_cumdev.compare.permutation import _PK, _TESTS, _ZK, permutation_batch
from polars_cumdev.method import _names as nm
from polars_cumdev.method.finite_sample import cutoff
from polars_cumdev.method.pvalues import kuiper_pvalue

sets = int(sys.argv[1]) if len(sys.argv) > 1 else 8000


def rates(first: int, second: int, weighted: bool, kind: str, gap: float = 0.0) -> str:
    rng = np.random.default_rng(0)
    rep = np.repeat(np.arange(sets), first + second)
    source = np.tile(np.repeat(np.array([0, 1], dtype=np.int8), [first, second]), sets)
    s = rng.uniform(0.05, 0.95, rep.size)
    mean = np.clip(s + gap * (source == 0), 0.0, 1.0)
    r = (
        (rng.random(rep.size) < mean).astype(float)
        if kind == "binary"
        else mean * rng.lognormal(-0.5, 1.0, rep.size)
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
    out = permutation_batch(batch, _options("empirical", "error", 0), 0.05)
    if out.height == 0:
        return f"compare {first}+{second} {kind} weighted={weighted}: not permuted (SMALL_ROWS)"
    old = np.asarray(kuiper_pvalue(out[_ZK].to_numpy()))
    new = np.where(old <= cutoff(0.05), out[_PK].to_numpy(), old)
    return (
        f"compare {first}+{second} {kind} weighted={weighted}{' gap ' + str(gap) if gap else ''}"
        f": 5%: {np.mean(new <= 0.05):.4f} (asymptotic {np.mean(old <= 0.05):.4f}) "
        f"1%: {np.mean(new <= 0.01):.4f} (asymptotic {np.mean(old <= 0.01):.4f}) of {new.size}"
    )


for first, second in ((5, 5), (10, 10), (20, 20), (30, 30), (50, 50), (100, 100),
                      (5, 50), (10, 100), (20, 200), (50, 500)):  # fmt: skip
    for weighted, kind in ((False, "binary"), (True, "binary"), (False, "real")):
        print(rates(first, second, weighted, kind), flush=True)
for first, second in ((10, 10), (10, 100), (20, 200)):
    print(rates(first, second, False, "binary", gap=0.25), flush=True)
for groups, rows, reference in ((200, 10, 100), (200, 10, 1000), (200, 30, 300), (50, 100, 1000)):
    found, tail, permuted = 0, [], 0
    for k in range(40):
        rng = np.random.default_rng(700 + k)
        g = np.r_[np.repeat(np.arange(1, groups + 1), rows), np.zeros(reference, int)]
        s = rng.uniform(0.05, 0.95, g.size)
        frame = pl.DataFrame({"g": g, "s": s, "r": (rng.random(g.size) < s).astype(float)})
        out = frame.cumdev.compare_all("g", 0, "s", "r")
        tail.append(out["kuiper_p"].drop_nulls().to_numpy())
        found += int((out["kuiper_q"] <= 0.05).any())
        permuted += int((out["p_method"] == "permutation").sum())
    p = np.concatenate(tail)
    print(
        f"compare_all {groups} groups of {rows} vs {reference}: p <= 2.5e-4 in "
        f"{np.mean(p <= 2.5e-4):.4f} of groups; some q <= 0.05 in {found} of 40; "
        f"{permuted / p.size:.2f} of the p-values permuted",
        flush=True,
    )
