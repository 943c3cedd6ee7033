"""The census-like survey with a model's predicted probabilities, for multicalibration.

:func:`census_scored` adds to :func:`~polars_cumdev.datasets.census` a column
``score``: the probability of ``has_internet`` predicted by a logistic
regression on ``log10_income`` and ``rooms`` only, fitted (weighted by
``WGTP``) by a few Newton steps. The model never sees the county, the
vehicles or the children, so it is well calibrated overall but not in every
intersection: the example an audit of every intersection should catch.
Deterministic: the same data every time.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.datasets.survey import census

__all__ = ["census_scored"]


def census_scored() -> pl.DataFrame:
    """The census-like households with a model's ``score`` for ``has_internet``.

    Returns
    -------
    pl.DataFrame
        The columns of :func:`~polars_cumdev.datasets.census` and ``score``
        (in (0, 1)).
    """
    data = census()
    income = data["log10_income"].to_numpy()
    rooms = data["rooms"].to_numpy().astype(np.float64)
    x = np.column_stack([np.ones_like(income), income - 4.5, rooms - 3.0])
    y = data["has_internet"].to_numpy().astype(np.float64)
    w = data["WGTP"].to_numpy().astype(np.float64)
    beta = np.zeros(3)
    for _ in range(25):  # Newton's method for the weighted logistic likelihood
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (w * (y - p))
        hessian = (x * (w * p * (1.0 - p))[:, None]).T @ x
        beta = beta + np.linalg.solve(hessian, gradient)
    score = 1.0 / (1.0 + np.exp(-(x @ beta)))
    return data.with_columns(pl.Series("score", score))
