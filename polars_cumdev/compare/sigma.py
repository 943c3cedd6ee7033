"""Step 6 of the comparison, per point: the terms of sigma^2 and their rounding bounds."""

from __future__ import annotations

import polars as pl

from polars_cumdev.compare.columns import _COUNT, _D, _D_ERR, _T, _V, _Options
from polars_cumdev.compare.neighbours import _U, _neighbour

__all__ = ["_sigma_error_term", "_sigma_term"]


def _sigma_error_term(options: _Options) -> pl.Expr:
    """A bound of the rounding error of each point's :func:`_sigma_term`.

    Empirical: e_k carries the errors of d_k and d_{k+1}, so e_k^2 errs by at
    most 2 |e_k| err + err^2. Score: the block's average score errs by a few
    units of rounding (scores in [0, 1]), and t (1 - t) by that times |1 - 2t|.
    Plus a few roundings of the term itself.
    """
    v = pl.col(_V)
    term = _sigma_term(options)
    if options.variance == "empirical":
        e = _neighbour(pl.col(_D), -1) - pl.col(_D)
        err = _neighbour(pl.col(_D_ERR), -1) + pl.col(_D_ERR) + _U * e.abs()
        u = v + _neighbour(v, -1)
        return u * u / 4.0 * (2.0 * e.abs() * err + err * err) + 8.0 * _U * term.abs()
    t = pl.col(_T).clip(0.0, 1.0)
    t_error = (2.0 * (pl.col(_COUNT) + 4.0)) * _U * t
    return v * v * t_error * (1.0 - 2.0 * t).abs() + 8.0 * _U * term.abs()


def _sigma_term(options: _Options) -> pl.Expr:
    """Step 6, per point: the terms whose sum is (sigma / 2)^2.

    Empirical: e_k^2 u_k^2 / 4 with e_k = d_{k+1} - d_k and u_k = v_k + v_{k+1}
    (null on a group's last point). Score: v_k^2 t_k (1 - t_k).

    The empirical term is 4 times the one of two-subpopulations.md step 6
    (e_k^2 u_k^2 / 16), so sigma is twice the page's. The page's sigma is half
    the spread of C under the null: with single-row blocks of variance s^2,
    e_k = (p_k - p_{k-1} + q_{k-1} - q_k) / 2 has variance s^2, while every
    block response enters C with a total coefficient of about 2 v (1/2, 1, 1/2
    in three neighbouring differences), so Var C = 4 sum v_k^2 s^2, which
    sum e_k^2 u_k^2 (u_k about 2 v_k) estimates without bias. Simulated
    under the null (600 rows, balanced, unbalanced, weighted, Gaussian
    responses), the standard deviation of the last C_k is 1.97-2.10 times
    the page's sigma, and the page's sigma rejects 61-65% of null
    comparisons at the 5% level; the doubled one rejects 4-5%
    (``tests/analyses/test_compare_null.py``).
    """
    v = pl.col(_V)
    if options.variance == "empirical":
        e = _neighbour(pl.col(_D), -1) - pl.col(_D)
        u = v + _neighbour(v, -1)
        return e * e * u * u / 4.0
    # The block-centre scores lie in [0, 1] when the scores do; the clip only
    # keeps a dithered score of exactly 0 or 1 from giving a negative term.
    t = pl.col(_T).clip(0.0, 1.0)
    return v * v * t * (1.0 - t)
