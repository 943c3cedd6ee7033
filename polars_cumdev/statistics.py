"""Stage 4: scalar statistics per group (method.md 1.5-1.6 and 4; equations (12)-(13), (31)-(32)).

From the accumulated points of :func:`polars_cumdev.accumulate.accumulate`
this stage computes, for every group at once, the Kuiper range D, the
Kolmogorov-Smirnov maximum G, the overall deviation C_n, the scale sigma of
random fluctuations, the normalized statistics with their asymptotic
p-values, and Benjamini-Hochberg adjusted p-values across the groups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Literal

import numpy as np
import polars as pl

from polars_cumdev import _names as nm
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.pvalues import ks_pvalue, kuiper_pvalue

__all__ = [
    "STATISTIC_COLUMNS",
    "Variance",
    "benjamini_hochberg",
    "check_variance",
    "chosen_sigma",
    "is_binary",
    "normalize",
    "pvalue",
    "pvalue_columns",
    "sigma_terms",
    "summarize",
]

Variance = Literal["auto", "bernoulli", "empirical"]

STATISTIC_COLUMNS = (
    "n",
    "n_scores",
    "weight",
    "kuiper",
    "ks",
    "delta",
    "sigma",
    "kuiper_z",
    "ks_z",
    "kuiper_p",
    "ks_p",
    "kuiper_log10p",
    "ks_log10p",
    "kuiper_q",
    "ks_q",
    "variance",
    "note",
)

_SIGMA_B = f"{nm.PREFIX}sigma_bernoulli"
_SIGMA_E = f"{nm.PREFIX}sigma_empirical"


def check_variance(variance: str) -> str:
    """Validate the ``variance`` argument ("auto", "bernoulli" or "empirical")."""
    if variance not in ("auto", "bernoulli", "empirical"):
        raise InvalidParameterError(
            f"`variance` must be 'auto', 'bernoulli' or 'empirical', got {variance!r}"
        )
    return variance


def is_binary(full: pl.LazyFrame, variance: str) -> pl.LazyFrame:
    """One-row frame whose boolean column says whether the Bernoulli formula (31) applies.

    "auto" chooses it when every response of the full population is 0 or 1.
    """
    if variance == "auto":
        r = pl.col(nm.RESPONSE)
        flag = ((r == 0.0) | (r == 1.0)).all()
    else:
        flag = pl.lit(variance == "bernoulli")
    return full.select(flag.alias(nm.BINARY))


def sigma_terms(reference: str = nm.REFERENCE) -> tuple[pl.Expr, pl.Expr]:
    """Per-point terms whose sums are sigma^2 under (31) and (32) (method.md 1.6).

    Returns ``(bernoulli, empirical)``: a_k^2 p_k (1 - p_k) f_k with p_k the
    ``reference`` column, and a_k^2 V_k f_k.
    """
    a2f = pl.col(nm.A_STEP) ** 2 * pl.col(nm.TIE)
    p = pl.col(reference)
    return a2f * p * (1.0 - p), a2f * pl.col(nm.BIN_VARIANCE)


def _root(total: pl.Expr) -> pl.Expr:
    return total.clip(lower_bound=0.0).sqrt()


def chosen_sigma(bernoulli_sum: pl.Expr, empirical_sum: pl.Expr) -> pl.Expr:
    """sigma from the sums of :func:`sigma_terms`, by the flag of :func:`is_binary`.

    Needs the ``BINARY`` column of :func:`is_binary` joined in.
    """
    return pl.when(pl.col(nm.BINARY)).then(_root(bernoulli_sum)).otherwise(_root(empirical_sum))


def summarize(
    accumulated: pl.LazyFrame,
    keys: Sequence[str],
    *,
    reference: str = nm.REFERENCE,
    empirical: bool = True,
) -> pl.LazyFrame:
    """Per-group Kuiper D (13), Kolmogorov-Smirnov G (12), C_n and both sigma candidates.

    Parameters
    ----------
    accumulated
        Output of :func:`polars_cumdev.accumulate.accumulate`.
    keys
        Grouping columns; one output row per group.
    reference
        Column used in the Bernoulli variance p(1 - p): Rt_k, or the score for
        calibration.
    empirical
        Whether the points carry ``BIN_VARIANCE`` for (32); calibration has
        only the Bernoulli form (method.md 2).

    Returns
    -------
    pl.LazyFrame
        Keys, ``n`` (rows), ``n_scores`` (merged points), ``weight`` (total
        weight), ``kuiper``, ``ks``, ``delta`` and internal columns holding
        sigma^2 under (31) and under (32) (chosen by :func:`normalize`).
    """
    c = pl.col(nm.CUMDIFF)
    bern, emp = sigma_terms(reference)
    aggs = [
        pl.col(nm.ROWS).sum().cast(pl.Int64).alias("n"),
        pl.len().cast(pl.Int64).alias("n_scores"),
        pl.col(nm.WEIGHT).sum().alias("weight"),
        (c.max().clip(lower_bound=0.0) - c.min().clip(upper_bound=0.0)).alias("kuiper"),
        c.abs().max().alias("ks"),
        c.get(pl.col(nm.K).arg_max()).alias("delta"),
        bern.sum().alias(_SIGMA_B),
        (emp.sum() if empirical else pl.lit(None, dtype=pl.Float64)).alias(_SIGMA_E),
    ]
    if keys:
        return accumulated.group_by(keys).agg(aggs)
    return accumulated.select(aggs)


def pvalue(z: pl.Expr, function: Callable[..., object]) -> pl.Expr:
    """Apply a NumPy p-value function to a column, mapping null to null."""

    def apply(series: pl.Series) -> pl.Series:
        values = series.cast(pl.Float64).fill_null(np.nan).to_numpy()
        result = np.asarray(function(values), dtype=np.float64).reshape(values.shape)
        return pl.Series(series.name, result, dtype=pl.Float64).fill_nan(None)

    return z.map_batches(apply, return_dtype=pl.Float64, is_elementwise=True)


def pvalue_columns() -> list[pl.Expr]:
    """P-values of ``kuiper_z`` and ``ks_z`` (method.md 4), and their base-10 logarithms.

    Gives ``kuiper_p``, ``ks_p``, ``kuiper_log10p`` and ``ks_log10p``. The
    logarithms stay finite where p underflows to 0 (z beyond about 38), so
    very strong deviations can still be ranked and reported.
    """
    columns = []
    for log10 in (False, True):
        suffix = "_log10p" if log10 else "_p"
        for name, function in (("kuiper", kuiper_pvalue), ("ks", ks_pvalue)):
            columns.append(
                pvalue(pl.col(f"{name}_z"), partial(function, log10=log10)).alias(name + suffix)
            )
    return columns


def benjamini_hochberg(p: pl.Expr) -> pl.Expr:
    """Benjamini-Hochberg adjusted p-values over the non-null entries of ``p``.

    q_(i) = min_{j >= i} min(1, M p_(j) / j) over the M non-null p-values in
    increasing order; nulls stay null. Computed with expressions only.
    """
    order = p.arg_sort(nulls_last=True)
    ranked = p.sort(nulls_last=True)
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    adjusted = (ranked * p.count().cast(pl.Float64) / position).cum_min(reverse=True)
    return adjusted.clip(upper_bound=1.0).gather(order.arg_sort())


def normalize(
    stats: pl.LazyFrame,
    keys: Sequence[str],
    binary: pl.LazyFrame,
    *,
    min_scores: int = 2,
) -> pl.LazyFrame:
    """Pick sigma, divide, attach p-values (method.md 4) and BH q-values; sort.

    Parameters
    ----------
    stats
        Output of :func:`summarize`.
    keys
        Grouping columns (used to break ties in the ordering).
    binary
        Output of :func:`is_binary`: which sigma applies.
    min_scores
        Fewest merged scores for which the normalized statistics are
        reported: 2 for a subpopulation against the full population (a
        single point says nothing about a trend), 1 for calibration, where
        sigma > 0 alone makes them defined (method.md 2).

    Returns
    -------
    pl.LazyFrame
        ``stats`` with ``sigma``, ``kuiper_z``, ``ks_z``, ``kuiper_p``,
        ``ks_p``, ``kuiper_log10p``, ``ks_log10p``, ``kuiper_q``, ``ks_q``,
        ``variance`` and ``note``, sorted by ``kuiper_z`` (largest first,
        nulls last) and then by the keys.
    """
    sigma = pl.col("sigma")
    single = pl.col("n_scores") < min_scores
    undefined = single | (sigma <= 0.0)
    note = (
        pl.when(single)
        .then(pl.lit("only one distinct score: the normalized statistics need at least two"))
        .when(sigma <= 0.0)
        .then(pl.lit("sigma is 0 (no spread of responses within the bins): z undefined"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    out = (
        stats.join(binary, how="cross", maintain_order="left")
        .with_columns(
            chosen_sigma(pl.col(_SIGMA_B), pl.col(_SIGMA_E)).alias("sigma"),
            pl.when(pl.col(nm.BINARY))
            .then(pl.lit("bernoulli"))
            .otherwise(pl.lit("empirical"))
            .alias("variance"),
        )
        .with_columns(
            pl.when(undefined).then(None).otherwise(pl.col("kuiper") / sigma).alias("kuiper_z"),
            pl.when(undefined).then(None).otherwise(pl.col("ks") / sigma).alias("ks_z"),
            note.alias("note"),
        )
        .with_columns(pvalue_columns())
        .with_columns(
            benjamini_hochberg(pl.col("kuiper_p")).alias("kuiper_q"),
            benjamini_hochberg(pl.col("ks_p")).alias("ks_q"),
        )
    )
    return out.sort(
        ["kuiper_z", *keys], descending=[True] + [False] * len(keys), nulls_last=True
    ).select(*keys, *STATISTIC_COLUMNS)
