"""The soft labels' Chernoff-Ville bound, compiled: its exponents in one pass per lambda.

:func:`exponents` is the loop of
:func:`polars_cumdev.method.finite_bound.bound_pvalues` over the grid of
lambda, written row by row: for each group and each lambda, the Bernoulli
cumulants of every row, log(1 - s + s e^{+-lambda w}) -+ lambda w s (at least
0), their sum Psi over the group, and, at each restart point, Psi less the running
sum up to it. Every sum adds the group's rows in row order from its first, as
the NumPy form did (``np.bincount`` and ``np.cumsum``); it needs no padded
copies and no per-lambda arrays of every row, which made the NumPy form cost
about 30 microseconds a row (its 96 lambdas, each a few passes over all the
bounded rows).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from polars_cumdev.kernel.prefix import F64, I64, JIT

__all__ = ["exponents", "split"]


@njit(**JIT)
def exponents(
    starts: I64,
    s: F64,
    w: F64,
    lam: F64,
    g: F64,
    d: F64,
    restart: np.ndarray,
    columns: I64,
    psi_up: F64,
    psi_down: F64,
    folded: F64,
    rest_up: F64,
    rest_down: F64,
) -> None:
    """The exponents at the lambdas ``columns[0]`` to ``columns[1] - 1`` of every group.

    Fills those columns of ``psi_up`` and ``psi_down`` (groups x lambdas), and
    lowers (they start at 0) ``folded[k]`` to the smallest over those lambdas
    of Psi_up - lam g and Psi_down - lam g (Kolmogorov-Smirnov), Psi_up - lam d
    and Psi_down - lam d (the restart bound from the start of the walk), and
    ``rest_up[m]``, ``rest_down[m]`` to the smallest of max(Psi - S(j), 0) -
    lam d at the m-th restart point j (``restart[j]``: a tie's end, not its
    group's last row, in a group given the restart bound), S(j) the running sum
    of the cumulants through row j. Two threads may take disjoint columns with
    their own ``folded`` and ``rest_*``: the smaller of theirs is the same
    whatever the split.
    """
    m = 0
    for k in range(starts.shape[0] - 1):
        a, b = starts[k], starts[k + 1]
        first = m
        for i in range(a, b):
            if restart[i]:
                m += 1
        up = np.empty(b - a)
        down = np.empty(b - a)
        for c in range(columns[0], columns[1]):
            lk = lam[k, c]
            total_up = 0.0
            total_down = 0.0
            for i in range(a, b):
                x = lk * w[i]
                si = s[i]
                u = math.log1p(si * math.expm1(x)) - x * si
                v = math.log1p(si * math.expm1(-x)) + x * si
                u = u if u > 0.0 else 0.0  # (>= 0 by Jensen; rounding up)
                v = v if v > 0.0 else 0.0
                up[i - a] = u
                down[i - a] = v
                total_up += u
                total_down += v
            psi_up[k, c] = total_up
            psi_down[k, c] = total_down
            folded[k, 0] = min(folded[k, 0], total_up - lk * g[k])
            folded[k, 1] = min(folded[k, 1], total_down - lk * g[k])
            folded[k, 2] = min(folded[k, 2], total_up - lk * d[k])
            folded[k, 3] = min(folded[k, 3], total_down - lk * d[k])
            if m > first:
                run_up = 0.0
                run_down = 0.0
                point = first
                for i in range(a, b):
                    run_up += up[i - a]
                    run_down += down[i - a]
                    if restart[i]:
                        after_up = max(total_up - run_up, 0.0) - lk * d[k]
                        after_down = max(total_down - run_down, 0.0) - lk * d[k]
                        rest_up[point] = min(rest_up[point], after_up)
                        rest_down[point] = min(rest_down[point], after_down)
                        point += 1


@njit(**JIT)
def split(psi_up: F64, psi_down: F64, lam: F64, d: F64, t: F64, out: F64) -> None:
    """The Kuiper split bound of every group into ``out``: the smallest over the points t of
    exp(min(0, min_lam Psi_up - lam d t)) + exp(min(0, min_lam Psi_down - lam d (1 - t)))
    (Chernoff's bound of each side's tail at a = d t and a = d (1 - t))."""
    for k in range(psi_up.shape[0]):
        best = np.inf
        for j in range(t.shape[0]):
            a_up = d[k] * t[j]
            a_down = d[k] * (1.0 - t[j])
            low_up = np.inf
            low_down = np.inf
            for c in range(lam.shape[1]):
                low_up = min(low_up, psi_up[k, c] - lam[k, c] * a_up)
                low_down = min(low_down, psi_down[k, c] - lam[k, c] * a_down)
            found = math.exp(min(low_up, 0.0)) + math.exp(min(low_down, 0.0))
            best = min(best, found)
        out[k] = best
