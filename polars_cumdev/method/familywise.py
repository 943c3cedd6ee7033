"""Family-wise adjusted p-values: Holm's step-down, and the critical z it implies.

Holm (1979) controls the probability of any false rejection among the
segments at the chosen level whatever the dependence between the p-values,
which overlapping segments certainly have: sort the M p-values, multiply the
j-th smallest by M - j + 1, take the running maximum, cap at 1. Its first step
is Bonferroni's, so no segment is declared at level alpha unless its z exceeds
the Kuiper quantile of 1 - alpha / M: :func:`critical_z`.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from polars_cumdev.method.pvalues import kuiper_critical

__all__ = ["critical_z", "holm", "holm_numpy"]


def holm(p: pl.Expr) -> pl.Expr:
    """Holm's adjusted p-values over the non-null entries of ``p`` (nulls stay null).

    p_adj(j) = max_{i <= j} min(1, (M - i + 1) p_(i)) over the M non-null
    p-values in increasing order. Expressions only.
    """
    order = p.arg_sort(nulls_last=True)
    ranked = p.sort(nulls_last=True)
    position = pl.int_range(0, pl.len(), dtype=pl.Int64).cast(pl.Float64)
    factor = p.count().cast(pl.Float64) - position
    adjusted = (ranked * factor).cum_max().clip(upper_bound=1.0)
    return adjusted.gather(order.arg_sort())


def holm_numpy(p: np.ndarray) -> np.ndarray:
    """:func:`holm` on an array (NaN for an undefined p-value, kept as NaN)."""
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(p))
    if defined.size == 0:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    factor = defined.size - np.arange(defined.size)
    out[order] = np.minimum(np.maximum.accumulate(p[order] * factor), 1.0)
    return out


def critical_z(level: float, tests: int) -> float:
    """The z beyond which Holm's first step rejects: kuiper_p(z) = level / tests.

    NaN when there is nothing to test (:func:`~polars_cumdev.method.pvalues.kuiper_critical`).
    """
    if tests <= 0:
        return math.nan
    return kuiper_critical(level / tests)
