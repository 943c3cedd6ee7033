"""The comparison's verdict per group: notes, nulls where undefined, z-scores and p-values."""

from __future__ import annotations

import polars as pl

from polars_cumdev.compare.columns import (
    _BLOCKS,
    _C_ERROR,
    _C_FLOOR,
    _C_OK,
    _INVALID,
    _M_FIRST,
    _M_SECOND,
    _N_LEFT,
    _N_SHARED,
    _RMAX,
    _SIGMA2_ERROR,
    _SIGMA_OK,
    _Options,
)
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.method.prepare import Labels
from polars_cumdev.method.resolution import (
    ROUNDING_LEVEL,
    resolved,
    uneven_means,
    unresolved_sigma,
)
from polars_cumdev.method.statistics import NOT_LOCATED, pvalue_columns

__all__ = ["_finish"]


def _finish(
    stats: pl.LazyFrame, options: _Options, labels: tuple[str, str], columns: Labels
) -> pl.LazyFrame:
    """Notes, nulls where a statistic is undefined, z-scores and p-values.

    A statistic that rounding leaves unresolved is null with the reason in
    the note, by the one rule of :func:`polars_cumdev.method.resolution.resolved`
    (as for every analysis): C (hence D, G, C_n) against its error bound,
    sigma against the bound of sigma^2's.
    """
    flags = resolved(
        pl.col("kuiper"),
        pl.col("ks"),
        pl.col("sigma"),
        pl.col(_C_ERROR),
        pl.col(_SIGMA2_ERROR),
        pl.col(_RMAX),
    )
    stats = stats.with_columns(
        flags.c.fill_null(True).alias(_C_OK),
        flags.c_floor.fill_null(True).alias(_C_FLOOR),
        flags.sigma.fill_null(True).alias(_SIGMA_OK),
    )
    c_ok, c_floor, sigma_ok = pl.col(_C_OK), pl.col(_C_FLOOR), pl.col(_SIGMA_OK)
    one, two = labels
    few = (pl.col(_M_FIRST) < 2) | (pl.col(_M_SECOND) < 2)
    tied = (pl.col(_N_SHARED) > 0) if options.ties == "error" else pl.lit(False)
    left = pl.col(_N_LEFT) > 0
    flat = pl.col(_BLOCKS) < 3
    sigma = pl.col("sigma")
    note = (
        pl.when(few)
        .then(
            pl.format(
                f"too few distinct scores ({{}} in {one}, {{}} in {two}): "
                "each subpopulation needs at least two",
                pl.col(_M_FIRST),
                pl.col(_M_SECOND),
            )
        )
        .when(tied)
        .then(
            pl.format(
                f"{{}} distinct score(s) occur in both {one} and {two}; the method needs "
                "disjoint scores: pass ties='dither' to break them",
                pl.col(_N_SHARED),
            )
        )
        .when(left)
        .then(
            pl.format(
                "{} shared score(s) remain after dithering: try another seed",
                pl.col(_N_LEFT),
            )
        )
        .when(flat)
        .then(
            pl.format(
                f"the scores of {one} and {two} do not interleave ({{}} blocks): there is no "
                "interior block to centre a difference on",
                pl.col(_BLOCKS),
            )
        )
        .when(~c_floor)
        .then(pl.lit(uneven_means(columns)))
        .when(~sigma_ok)
        .then(pl.lit(unresolved_sigma(columns)))
        .when(sigma <= 0.0)
        .then(
            pl.lit(
                "sigma is 0 (too few centred differences, or no spread): "
                "the normalized statistics are undefined"
            )
        )
        .when(~c_ok)
        .then(pl.lit(ROUNDING_LEVEL))
        .when(pl.col(_N_SHARED) > 0)
        .then(
            pl.format(
                f"{{}} score(s) shared with {one} dithered in {two} (seed {options.seed}); "
                "on coarse scores a trend in the response can read as a gap",
                pl.col(_N_SHARED),
            )
        )
        .when(pl.col("from_score").is_null())
        .then(pl.lit(NOT_LOCATED))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    invalid = few | tied | left | flat
    undefined = invalid | (sigma <= 0.0) | ~c_ok | ~sigma_ok

    def unless(condition: pl.Expr, name: str) -> pl.Expr:
        return pl.when(condition).then(None).otherwise(pl.col(name)).alias(name)

    return (
        stats.with_columns(invalid.alias(_INVALID), note.alias("note"))
        .with_columns(
            unless(pl.col(_INVALID) | ~c_floor, "kuiper"),
            unless(pl.col(_INVALID) | ~c_floor, "ks"),
            unless(pl.col(_INVALID) | ~c_floor, "delta"),
            unless(pl.col(_INVALID) | ~c_floor | ~sigma_ok, "sigma"),
            unless(few | tied | left, "effect"),
            pl.when(undefined).then(None).otherwise(pl.col("kuiper") / sigma).alias("kuiper_z"),
            pl.when(undefined).then(None).otherwise(pl.col("ks") / sigma).alias("ks_z"),
            *[unless(undefined, c) for c in LOCATION_COLUMNS],
            pl.lit(options.variance).alias("variance"),
        )
        .with_columns(pvalue_columns())
    )
