"""Cost of the Hilbert index against one sort of the same frame.

Usage::

    python benchmarks/hilbert.py                 # 1e7 rows, 2 and 4 covariates
    python benchmarks/hilbert.py --rows 1e6 --repeat 3

The frame has ``rows`` rows and four Float64 covariates (a normal, an
exponential rounded to 2 decimals so that it ties, integer ages 18-95 and a
uniform), a Float64 weight and an Int8 response. For 2 and 4 covariates and
both coordinate maps it times, best of ``repeat`` and alternating with the
sort:

* ``sort``: ``df.sort(first covariate)`` (the whole frame, one key);
* ``index``: ``df.select(hilbert_index(*covariates, normalize=...))``, the
  UInt64 index of every row (coordinates and distance along the curve);
* ``coords``: the grid coordinates of the d covariates alone, as the index
  computes them (rank: :func:`polars_cumdev.covariates.ranking.compiled_rank_grid`,
  the compiled dense ranks on threads; range: the min-max expressions);
* ``polars rank``: what the rank coordinates cost before the compiled path,
  one Polars ``rank("dense")`` per covariate in one ``select``;
* ``distance``: :func:`polars_cumdev.covariates.hilbert.hilbert_distances` alone, on
  precomputed grid coordinates (the state machine's share of ``index``);
* ``score``: the internal score of ``score=[...]``, the index's dense rank
  (as :func:`polars_cumdev.covariates.ordering.resolve_score` computes it).

Ratios are to the sort measured in the same process; the load average is
printed before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import os

import common
import numpy as np
import polars as pl

from polars_cumdev.covariates import ranking
from polars_cumdev.covariates.hilbert import (
    _range_expr,
    default_bits,
    grid_coordinates,
    hilbert_distances,
    hilbert_index,
)
from polars_cumdev.covariates.ordering import _dense_rank

COVARIATES = ("x", "y", "age", "u")


def make(rows: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "x": rng.normal(size=rows),
            "y": np.round(rng.exponential(size=rows), 2),
            "age": rng.integers(18, 96, size=rows).astype(np.float64),
            "u": rng.uniform(size=rows),
            "weight": rng.uniform(0.5, 2.0, size=rows),
            "response": (rng.uniform(size=rows) < 0.3).astype(np.int8),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    rows = int(args.rows)
    print(common.machine())
    print(f"rows: {rows:,}; load average before: {os.getloadavg()}")
    df = make(rows)
    results = []
    for d in (2, 4):
        columns = list(COVARIATES[:d])
        for normalize in ("rank", "range"):
            distinct = max(df[c].n_unique() for c in columns)
            bits = default_bits(d, distinct, normalize)
            grid = [grid_coordinates(df[c], bits, normalize) for c in columns]
            index = hilbert_index(*columns, normalize=normalize)
            df.select(index)  # Numba's compilation (or cache load) is not timed
            parts = [df[c] for c in columns]
            polars_rank = [pl.col(c).rank("dense") for c in columns]
            if normalize == "rank" and ranking.use_compiled(rows):

                def coords(p=parts, b=bits):
                    return ranking.compiled_rank_grid(p, b, None, None)

            elif normalize == "rank":

                def coords(e=polars_rank):
                    return df.select(e)

            else:
                scaled = [_range_expr(pl.col(c), bits) for c in columns]

                def coords(e=scaled):
                    return df.select(e)

            times = {"sort": [], "index": [], "coords": [], "polars rank": []}
            times |= {"distance": [], "score": []}
            for _ in range(args.repeat):
                times["sort"].append(common.timed(lambda c=columns: df.sort(c[0]))[0])
                times["index"].append(common.timed(lambda e=index: df.select(e))[0])
                times["coords"].append(common.timed(coords)[0])
                if normalize == "rank":
                    rank = polars_rank
                    times["polars rank"].append(common.timed(lambda e=rank: df.select(e))[0])
                times["distance"].append(
                    common.timed(lambda g=grid, b=bits: hilbert_distances(g, b))[0]
                )
                if normalize == "rank":
                    rank = _dense_rank(index)  # as score=[...] computes it
                    times["score"].append(common.timed(lambda e=rank: df.select(e))[0])
            best = {k: min(v) for k, v in times.items() if v}
            row = {"covariates": d, "normalize": normalize, "bits": bits}
            row["sort s"] = f"{best['sort']:.2f}"
            for part in ("index", "coords", "polars rank", "distance", "score"):
                if part in best:
                    row[f"{part} s"] = f"{best[part]:.2f}"
                    row[f"{part}/sort"] = f"{best[part] / best['sort']:.2f}"
                else:
                    row[f"{part} s"] = row[f"{part}/sort"] = "-"
            print(row, flush=True)
            results.append(row)
    print(f"load average after: {os.getloadavg()}")
    columns = list(results[0])
    print(common.markdown_table(results, columns))


if __name__ == "__main__":
    main()
