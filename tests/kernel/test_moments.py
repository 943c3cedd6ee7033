"""A bin's moments from two prefix rows, against a plain transcription with branches.

:func:`polars_cumdev.kernel.prefix.moments_between` reads both rows and
computes every case's value before choosing (no branch around the array reads
or the cases); the transcription below follows method.md 1.3 and
``method.bins.bin_moments`` case by case, in Python floats. Both must give the
same bits: the kernel's walks rely on it to agree with each other and with
the Polars plan.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_cumdev.kernel.prefix import (
    EPS,
    HI,
    LO,
    LOMAX,
    ONES,
    ROWS,
    TABLE_COLUMNS,
    ZEROS,
    moments_between,
)


def _naive(top: np.ndarray, bottom: np.ndarray | None, centre: float) -> tuple:
    """Rt, V, their bounds and the overflow flag of one bin, case by case."""
    t = [float(x) for x in top]
    b = [float(x) for x in bottom] if bottom is not None else None
    rows, zeros, ones = t[ROWS], t[ZEROS], t[ONES]
    if b is not None:
        rows, zeros, ones = rows - b[ROWS], zeros - b[ZEROS], ones - b[ONES]
    totals, bounds = [], []
    for j in range(4):
        h, e = t[HI + j], t[LO + j]
        if b is not None:
            h, e = h - b[HI + j], e - b[LO + j]
        totals.append(h + e)
        bounds.append(EPS * (rows * t[LOMAX + j] + (abs(h) + abs(e))))
    bw, bww, bwr, bwrr = totals
    e_w, e_ww, e_wr, e_wrr = bounds
    pure = ones == rows or zeros == rows
    with np.errstate(all="ignore"):
        mean_c = float(np.float64(bwr) / bw)
        second = float(np.float64(bwrr) / bw)
        square = bw * bw
        denominator = square - bww
        unbias = float(np.float64(square) / denominator) if rows > 1 else 0.0
        if ones == rows:
            reference = 1.0
        elif zeros == rows:
            reference = 0.0
        else:
            reference = centre + mean_c
        variance = 0.0 if pure else unbias * (second - mean_c * mean_c)
        overflow = not all(math.isfinite(x) for x in totals)
        e_mean = float(np.float64(e_wr + abs(mean_c) * e_w) / bw) + EPS * abs(mean_c)
        if pure:
            e_reference = 0.0
        elif e_w >= bw:
            e_reference = math.inf
        else:
            e_reference = e_mean + EPS * abs(reference)
        product = reference * (1.0 - reference)
        if pure:
            e_bernoulli = 0.0
        else:
            e_bernoulli = e_reference * (1.0 + e_reference) + EPS * (abs(reference) + abs(product))
        e_spread = (
            float(np.float64(e_wrr + abs(second) * e_w) / bw)
            + 2.0 * abs(mean_c) * e_mean
            + e_mean * e_mean
            + 2.0 * EPS * (abs(second) + mean_c * mean_c)
        )
        e_denominator = 2.0 * EPS * (square + bww) + 2.0 * bw * e_w + e_w * e_w + e_ww
        if pure or rows <= 1:
            e_variance = 0.0
        elif e_w >= bw or denominator <= e_denominator:
            e_variance = math.inf
        else:
            e_unbias = (
                float(np.float64(e_denominator) / (denominator - e_denominator))
                + float(np.float64(2.0 * e_w) / bw)
                + 2.0 * EPS
            )
            e_variance = unbias * e_spread + abs(variance) * e_unbias + EPS * abs(variance)
    return reference, variance, e_reference, e_bernoulli, e_variance, overflow


def _row(rng: np.random.Generator, kind: int, rows: int, base: np.ndarray | None) -> np.ndarray:
    """A prefix row ``rows`` rows above ``base`` (or from zero), its bin of ``kind``."""
    row = np.zeros(TABLE_COLUMNS) if base is None else base.copy()
    w = rng.exponential(size=rows) * (1e-9 if kind == 3 else 1.0)
    r = rng.integers(0, 2, rows).astype(float) if kind in (1, 2) else rng.normal(size=rows)
    if kind == 1:
        r[:] = 1.0  # pure: all ones
    if kind == 2:
        r[:] = 0.0  # pure: all zeros
    rc = r - 0.5
    for j, values in enumerate((w, w * w, w * rc, w * rc * rc)):
        row[HI + j] += values.sum()
        row[LO + j] += rng.normal() * 1e-17 * (1e8 if kind == 3 else 1.0)
        row[LOMAX + j] = max(row[LOMAX + j], abs(row[LO + j]))
    row[ROWS] += rows
    row[ZEROS] += (r == 0.0).sum()
    row[ONES] += (r == 1.0).sum()
    if kind == 4:  # a sum that overflowed
        row[HI + int(rng.integers(0, 4))] = np.inf
    if kind == 5:  # one dominant weight: the denominator of u_k cancels
        row[HI + 1] = row[HI] * row[HI] * (1.0 - 1e-17)
    return row


def _compare(rng: np.random.Generator, kind: int, rows: int, first: bool) -> None:
    bottom = None if first else _row(rng, 0, int(rng.integers(1, 50)), None)
    top = _row(rng, kind, rows, bottom)
    table = np.vstack([bottom if bottom is not None else np.zeros(TABLE_COLUMNS), top])
    centre = float(rng.choice([0.0, 0.5, -1.5]))
    got = moments_between(table, 1, table, -1 if first else 0, centre)
    want = _naive(top, bottom, centre)
    for a, b in zip(got[:5], want[:5], strict=True):
        assert np.float64(a).view(np.int64) == np.float64(b).view(np.int64), (kind, got, want)
    assert got[5] == want[5]
    assert got[7] == int(rows)


@pytest.mark.slow
def test_every_case_gives_the_transcription_bits():
    rng = np.random.default_rng(20261126)
    for kind in range(6):
        for rows in (1, 2, 3, 40):
            for first in (True, False):
                for _ in range(25):
                    _compare(rng, kind, rows, first)


_BIN_CASES = given(
    kind=st.integers(0, 5),
    rows=st.integers(1, 30),
    first=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)


@settings(max_examples=30, deadline=None)
@_BIN_CASES
def test_random_bins_give_the_transcription_bits(kind, rows, first, seed):
    """A quick sample; the 200 cases of the ``_many`` twin are slow."""
    _compare(np.random.default_rng(seed), kind, rows, first)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@_BIN_CASES
def test_random_bins_give_the_transcription_bits_many(kind, rows, first, seed):
    _compare(np.random.default_rng(seed), kind, rows, first)
