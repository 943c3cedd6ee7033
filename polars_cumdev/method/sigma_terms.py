"""The per-point terms of sigma^2 and of the rounding bounds (method.md 1.6; equations (31)-(32)).

Equation numbers are those of M. Tygert, "Cumulative deviation of a
subpopulation from the full population". Each merged point contributes a
term to sigma^2 under the Bernoulli form (31) and under the empirical form
(32); :mod:`polars_cumdev.method.statistics` sums them per group, and
:func:`chosen_sigma` picks the form by the flag of
:func:`polars_cumdev.method.statistics.is_binary`.
"""

from __future__ import annotations

import polars as pl

from polars_cumdev.method import _names as nm

__all__ = ["chosen_sigma", "error_terms", "sigma_terms"]


def sigma_terms(reference: str = nm.REFERENCE) -> tuple[pl.Expr, pl.Expr]:
    """Per-point terms whose sums are sigma^2 under (31) and (32) (method.md 1.6).

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".

    Returns ``(bernoulli, empirical)``: a_k^2 p_k (1 - p_k) f_k with p_k the
    ``reference`` column, and a_k^2 V_k f_k.
    """
    a2f = pl.col(nm.A_STEP) ** 2 * pl.col(nm.TIE)
    p = pl.col(reference)
    return a2f * p * (1.0 - p), a2f * pl.col(nm.BIN_VARIANCE)


def error_terms() -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Per-point terms whose sums bound the rounding errors of C_k and of sigma^2.

    Returns ``(c, bernoulli, empirical)``: a_k times the bound of Rt_k's
    error (so the sum over k <= j bounds the error of C_j), and a_k^2 f_k
    times the bounds of the errors of Rt_k (1 - Rt_k) and of V_k, plus a
    few roundings of the term itself. Needs the bin bounds of
    :func:`polars_cumdev.method.bins.locate_bins`.
    """
    a = pl.col(nm.A_STEP)
    a2f = a * a * pl.col(nm.TIE)
    bern, emp = sigma_terms()
    rounding = 8.0 * 2.0**-52
    return (
        a * pl.col(nm.REFERENCE_ERROR),
        a2f * pl.col(nm.BERNOULLI_ERROR) + rounding * bern.abs(),
        a2f * pl.col(nm.VARIANCE_ERROR) + rounding * emp.abs(),
    )


def _root(total: pl.Expr) -> pl.Expr:
    return total.clip(lower_bound=0.0).sqrt()


def chosen_sigma(bernoulli_sum: pl.Expr, empirical_sum: pl.Expr) -> pl.Expr:
    """sigma from the sums of :func:`sigma_terms`, by the flag of :func:`is_binary`.

    Needs the ``BINARY`` column of :func:`is_binary` joined in.
    """
    return pl.when(pl.col(nm.BINARY)).then(_root(bernoulli_sum)).otherwise(_root(empirical_sum))
