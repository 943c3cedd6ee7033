"""``any_candidate`` decides as the candidate expression does, row by row.

:func:`polars_cumdev.method.finite_groups.any_candidate` reads a summary in
memory with NumPy where every input is a finite double, and runs the lazy
expression :func:`~polars_cumdev.method.finite_groups.candidate` otherwise.
Each row is checked alone (a frame of one row: ``any`` is that row's answer),
against the expression, on rows built to sit on the rule's edges: a statistic
exactly at its critical value times sigma and one double below it, sigma
squared negative, zero, subnormal and huge, and the non-finite values that
take the expression's road (Polars orders NaN above every number).
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from polars_cumdev.method.finite_groups import _critical, any_candidate, candidate
from polars_cumdev.method.finite_sample import cutoff
from polars_cumdev.method.summary_columns import SIGMA_B


def _expression(row: pl.DataFrame, level: float) -> bool:
    return bool(row.select(candidate(level, False).any()).item())


def _rows(level: float) -> list[tuple[float, float, float]]:
    kuiper_z, ks_z = _critical(cutoff(level))
    rows = []
    for sigma2 in (2.0, 0.37, 5e-324, 1e300):
        sigma = float(np.sqrt(sigma2))
        at_k, at_g = kuiper_z * sigma, ks_z * sigma
        for kuiper, ks in itertools.product(
            (at_k, np.nextafter(at_k, 0.0), 0.0), (at_g, np.nextafter(at_g, 0.0), 0.0)
        ):
            rows.append((kuiper, ks, sigma2))
    rows += [(1.0, 1.0, 0.0), (1.0, 1.0, -1e-12), (0.0, 0.0, 1.0), (5.0, 0.0, 1.0)]
    odd = (np.nan, np.inf, -np.inf, None)
    rows += [(x, 1.0, 1.0) for x in odd] + [(1.0, x, 1.0) for x in odd]
    rows += [(1.0, 1.0, x) for x in odd] + [(x, x, x) for x in odd]
    return rows


@pytest.mark.parametrize("level", [0.05, 0.01, 0.1, 0.5, 1.0])
def test_any_candidate_follows_the_expression(level: float):
    decided = []
    for kuiper, ks, sigma2 in _rows(level):
        row = pl.DataFrame(
            {"kuiper": [kuiper], "ks": [ks], SIGMA_B: [sigma2]},
            schema={"kuiper": pl.Float64, "ks": pl.Float64, SIGMA_B: pl.Float64},
        )
        expected = _expression(row, level)
        assert any_candidate(row, level) == expected, (kuiper, ks, sigma2, level)
        decided.append(expected)
    assert any(decided) and not all(decided)  # (the rows sit on both sides of the rule)


def test_any_candidate_of_many_rows():
    rng = np.random.default_rng(3)
    for _ in range(50):
        rows = int(rng.integers(1, 6))
        frame = pl.DataFrame(
            {
                "kuiper": rng.uniform(0.0, 3.0, rows),
                "ks": rng.uniform(0.0, 2.5, rows),
                SIGMA_B: rng.uniform(-0.1, 1.0, rows),
            }
        )
        assert any_candidate(frame, 0.05) == _expression(frame, 0.05)
