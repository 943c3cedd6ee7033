"""P-values of the normalized statistics and Benjamini-Hochberg adjustment, as expressions."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import polars as pl

from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.pvalues import pvalue_pairs

__all__ = ["benjamini_hochberg", "pvalue", "pvalue_columns"]


def pvalue(z: pl.Expr, function: Callable[..., object]) -> pl.Expr:
    """Apply a NumPy p-value function to a column, mapping null to null."""

    def apply(series: pl.Series) -> pl.Series:
        # (to_numpy gives NaN for a null double; nan_to_null maps it back: no query run)
        values = series.cast(pl.Float64).to_numpy()
        result = np.asarray(function(values), dtype=np.float64).reshape(values.shape)
        return pl.Series(series.name, result, dtype=pl.Float64, nan_to_null=True)

    return z.map_batches(apply, return_dtype=pl.Float64, is_elementwise=True)


def pvalue_columns(
    simulated: bool = False, rows: pl.DataFrame | None = None
) -> list[pl.Expr | pl.Series]:
    """P-values of ``kuiper_z`` and ``ks_z`` (method.md 4), and their base-10 logarithms.

    Gives ``kuiper_p``, ``ks_p``, ``kuiper_log10p`` and ``ks_log10p``. The
    logarithms stay finite where p underflows to 0 (z beyond about 38), so
    very strong deviations can still be ranked and reported. One call of
    :func:`polars_cumdev.method.pvalues.pvalue_pairs` gives all four (each
    series evaluated once for a p-value and its logarithm). With ``rows``, a
    frame in memory holding the inputs, the four are computed now, by the same
    function, and given as Series (no query around it).
    """
    if rows is not None:
        found: list[pl.Expr | pl.Series] = list(_pvalue_series(rows, simulated))
    else:
        dtype = pl.Struct({n: pl.Float64() for n in _PVALUE_NAMES})
        both = pl.struct(*_pvalue_inputs(simulated)).map_batches(
            lambda batch: _pvalue_frame(batch.struct.unnest(), simulated).to_struct(),
            return_dtype=dtype,
            is_elementwise=True,
        )
        found = [both.struct.unnest()]
    return [*found, _p_method()] if simulated else found


@functools.cache
def _p_method() -> pl.Expr:
    """``p_method`` of :func:`pvalue_columns` (built once: an expression is not changed by
    its use, and building it cost a small call about 0.3 ms)."""
    chosen = pl.col(fs.SIM_KUIPER).is_not_null() | pl.col(fs.SIM_KS).is_not_null()
    chosen = chosen & pl.col("kuiper_z").is_not_null()  # (a null z keeps a null p)
    resampled = pl.col(fs.SIM_KUIPER) < 0.0  # (both negated: finite_resampled.py)
    bound = pl.col(fs.SIM_KS) < 0.0  # (KS alone negated: finite_bound.py)
    return fs.method_column(chosen, resampled, bound)


_PVALUE_NAMES = ("kuiper_p", "ks_p", "kuiper_log10p", "ks_log10p")


def _pvalue_inputs(simulated: bool) -> tuple[str, ...]:
    return ("kuiper_z", "ks_z", *((fs.SIM_KUIPER, fs.SIM_KS) if simulated else ()))


def _pvalue_frame(rows: pl.DataFrame, simulated: bool) -> pl.DataFrame:
    """:func:`pvalue_columns`' four columns from the frame ``rows`` holding their inputs."""
    return pl.DataFrame(_pvalue_series(rows, simulated))  # (no query)


def _pvalue_series(rows: pl.DataFrame, simulated: bool) -> list[pl.Series]:
    """:func:`_pvalue_frame`'s columns, as Series."""
    # (to_numpy gives NaN for a null double; nan_to_null maps it back: no query run)
    values = [rows.get_column(c).cast(pl.Float64).to_numpy() for c in _pvalue_inputs(simulated)]
    columns = list(pvalue_pairs(*values[:2]))
    if simulated:  # finite-sample p-values where given (method/finite_sample.py)
        for j, found in enumerate(values[2:]):
            given = ~np.isnan(found) & ~np.isnan(values[j])  # only where z is defined
            found = np.abs(found)  # (negated: resampled or bound, see below)
            columns[j] = np.where(given, found, columns[j])
            with np.errstate(divide="ignore"):
                columns[j + 2] = np.where(given, np.log10(found), columns[j + 2])
    return [
        pl.Series(n, np.asarray(c, dtype=np.float64), dtype=pl.Float64, nan_to_null=True)
        for n, c in zip(_PVALUE_NAMES, columns, strict=True)
    ]


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
