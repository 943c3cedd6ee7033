"""Breaking shared scores by a tiny seeded move (``ties="dither"``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_cumdev.compare.columns import (
    _GAMMA,
    _MIX1,
    _MIX2,
    DITHER,
)

__all__ = ["dither_scores"]


def _splitmix64(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64 output function of the state ``z`` (wrapping uint64 arithmetic)."""
    with np.errstate(over="ignore"):
        z = z + _GAMMA
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def dither_scores(scores: npt.ArrayLike, seed: int) -> npt.NDArray[np.float64]:
    """Move each score by a pseudo-random amount of about one part in 1e8.

    This is the perturbation ``ties="dither"`` applies to the scores of the
    second subpopulation that also occur in the first (two-subpopulations.md:
    ties between the subpopulations "may be broken by dithering the scores by
    about one part in 1e8 with a seeded generator"). The amount depends only
    on the score's value and ``seed``, never on the row order or on the other
    scores, so the same score is moved the same way in every comparison:

    1. ``key = splitmix64(seed mod 2**64)``;
    2. ``h = splitmix64(bits(x) XOR key)``, where ``bits(x)`` is the IEEE-754
       bit pattern of the float64 score (with -0.0 read as 0.0) and
       ``splitmix64`` is the output function of the SplitMix64 generator
       (add 0x9E3779B97F4A7C15, then the two xor-shift-multiply rounds);
    3. ``u = (h >> 11) / 2**53`` in [0, 1) and the sign is + when the lowest
       bit of ``h`` is 1, - otherwise;
    4. ``x' = x + sign * 1e-8 * (0.5 + u / 2) * max(|x|, tiny)``, ``tiny`` the
       smallest normal float64 (so a score of 0 moves too).

    The relative change is between 0.5e-8 and 1e-8, so ``x' != x`` always.

    Parameters
    ----------
    scores
        Scores to dither (any shape; read as float64).
    seed
        Any Python int; it selects the pseudo-random stream.

    Returns
    -------
    numpy.ndarray
        The dithered scores, float64, same shape.
    """
    x = np.array(scores, dtype=np.float64) + 0.0  # a fresh array; -0.0 becomes 0.0
    key = _splitmix64(np.array([int(seed) % 2**64], dtype=np.uint64))[0]
    h = _splitmix64(x.view(np.uint64) ^ key)
    u = (h >> np.uint64(11)).astype(np.float64) * 2.0**-53
    sign = np.where((h & np.uint64(1)) == np.uint64(1), 1.0, -1.0)
    size = DITHER * (0.5 + 0.5 * u) * np.maximum(np.abs(x), np.finfo(np.float64).tiny)
    return x + sign * size


def _dithered(score: pl.Expr, seed: int) -> pl.Expr:
    def apply(series: pl.Series) -> pl.Series:
        values = series.cast(pl.Float64).to_numpy()
        return pl.Series(series.name, dither_scores(values, seed), dtype=pl.Float64)

    return score.map_batches(apply, return_dtype=pl.Float64, is_elementwise=True)


# --------------------------------------------------------------------------
