"""CORP: all groups in one isotonic call, against a loop over groups; bands; precision.

Usage::

    python benchmarks/corp.py                        # 1e6 rows; 10, 100, 1000 groups
    python benchmarks/corp.py --rows 1e5 --groups 10 100

Prints three tables, every figure measured side by side in one process:

1. ``corp(by=...)`` (one query, one SciPy call for all groups) against the
   same decomposition computed group by group in a Python loop (one query
   per group), and against one ``df.sort("score")`` of the frame;
2. ``corp_curve(by=..., resamples=R)``: the cost of the consistency band
   against ``resamples=0``, and the library's loop over resamples (each one
   fitted for all groups in one call) against fitting all resamples of all
   groups end to end in a single call, on the same draws;
3. the precision of fitting many segments in one call: the largest
   difference from separate per-segment fits of SciPy's lifted output (the
   offsets alone) and of the library's fit (block means recomputed).
"""

from __future__ import annotations

import argparse

import common
import numpy as np
import polars as pl


def decomposition_rows(rows: int, groups_list: list[int], repeat: int) -> list[dict]:
    from polars_cumdev.corp.decomposition import corp

    out = []
    for groups in groups_list:
        df = common.make_frame(rows, groups, seed=rows + groups)
        keys = df.get_column("group").unique().sort().to_list()
        one = common.best_of(
            lambda df=df: corp(df, "score", "response", "weight", by="group"), repeat
        )
        loop = common.best_of(
            lambda df=df, keys=keys: [
                corp(df.filter(pl.col("group") == k), "score", "response", "weight") for k in keys
            ],
            1,
        )
        sort = common.best_of(lambda df=df: df.sort("score"), repeat)
        out.append(
            {
                "rows": rows,
                "groups": groups,
                "one query s": f"{one:.3f}",
                "loop over groups s": f"{loop:.3f}",
                "loop / one": f"{loop / one:.1f}",
                "one / sort": f"{one / sort:.1f}",
            }
        )
    return out


def stacked_band(x, v, c, point, segment, resamples: int, level: float, seed: int):
    """The band with every resample of every segment laid end to end in one fit_segments call.

    Same draws as :func:`polars_cumdev.corp.isotonic.consistency_band`; the
    alternative to its loop over resamples, for comparison only.
    """
    from polars_cumdev.corp.isotonic import fit_segments, segment_starts

    starts = segment_starts(point)
    ids = segment[starts]
    total = np.add.reduceat(v * c, starts)
    single = c == 1
    rng = np.random.default_rng(seed)
    successes = np.empty((resamples, x.size))
    for resample in range(resamples):
        successes[resample, single] = rng.random(single.sum()) < x[single]
        successes[resample, ~single] = rng.binomial(c[~single], x[~single])
    y = np.add.reduceat(successes * v, starts, axis=1) / total
    stacked = (np.arange(resamples)[:, None] * (ids[-1] + 1) + ids).ravel()
    fits = fit_segments(y.ravel(), np.tile(total, resamples), stacked).reshape(resamples, -1)
    return np.quantile(fits, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0)


def band_rows(rows: int, groups: int, resamples: int) -> list[dict]:
    from polars_cumdev.corp import corp_curve
    from polars_cumdev.corp.isotonic import consistency_band

    df = common.make_frame(rows, groups, seed=7)

    def curve(r: int) -> pl.DataFrame:
        return corp_curve(df, "score", "response", "weight", by="group", resamples=r)

    bare = common.best_of(lambda: curve(0), 2)
    full = common.best_of(lambda: curve(resamples), 2)
    classes = (
        df.group_by("group", "score", "weight")
        .len()
        .sort("group", "score", "weight")
        .with_columns(
            pl.struct("group", "score").rank("dense").cast(pl.Int64).sub(1).alias("point"),
            pl.col("group").rank("dense").cast(pl.Int64).sub(1).alias("segment"),
        )
    )
    arrays = [
        classes.get_column(name).to_numpy()
        for name in ("score", "weight", "len", "point", "segment")
    ]
    args = {"resamples": resamples, "level": 0.9, "seed": 0}
    loop = common.best_of(lambda: consistency_band(*arrays, **args), 2)
    stacked = common.best_of(lambda: stacked_band(*arrays, **args), 2)
    same = np.array_equal(
        np.array(consistency_band(*arrays, **args)), stacked_band(*arrays, **args)
    )
    return [
        {
            "rows": rows,
            "groups": groups,
            "points": int(arrays[3][-1]) + 1,
            "resamples": resamples,
            "no band s": f"{bare:.3f}",
            "with band s": f"{full:.3f}",
            "band: loop over resamples s": f"{loop:.3f}",
            "band: one stacked call s": f"{stacked:.3f}",
            "same band": same,
        }
    ]


def precision_rows(size: int = 25) -> list[dict]:
    from scipy.optimize import isotonic_regression

    from polars_cumdev.corp.isotonic import fit_segments

    rng = np.random.default_rng(11)
    out = []
    for segments in (10, 100, 1_000, 10_000, 100_000):
        n = segments * size
        y = np.clip(rng.integers(0, 8, n) / 7.0 + rng.normal(0, 0.01, n), 0.0, 1.0)
        w = rng.lognormal(0.0, 1.0, n)
        ids = np.repeat(np.arange(segments), size)
        separate = np.concatenate(
            [
                isotonic_regression(y[i : i + size], weights=w[i : i + size]).x
                for i in range(0, n, size)
            ]
        )
        raw = isotonic_regression(y + 2.0 * ids, weights=w).x - 2.0 * ids
        ours = fit_segments(y, w, ids)
        out.append(
            {
                "segments": segments,
                "points": n,
                "offsets alone: max error": f"{np.abs(raw - separate).max():.1e}",
                "recomputed: max error": f"{np.abs(ours - separate).max():.1e}",
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--groups", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = int(args.rows)
    print(common.machine())
    warm = common.make_frame(1000, 3)  # imports SciPy and compiles the plans once
    from polars_cumdev.corp import corp, corp_curve

    corp(warm, "score", "response", "weight", by="group")
    corp_curve(warm, "score", "response", "weight", by="group", resamples=2)
    print("\n1. Brier decomposition per group: one query against a loop over groups\n")
    table = decomposition_rows(rows, args.groups, args.repeat)
    print(common.markdown_table(table, list(table[0])))
    print(f"\n2. Consistency band, {args.resamples} resamples\n")
    table = [r for g in args.groups for r in band_rows(rows // 10, g, args.resamples)]
    print(common.markdown_table(table, list(table[0])))
    print("\n3. Many segments in one isotonic call: largest difference from per-segment fits\n")
    table = precision_rows()
    print(common.markdown_table(table, list(table[0])))


if __name__ == "__main__":
    main()
