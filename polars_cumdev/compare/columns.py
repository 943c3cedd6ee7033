"""Column names and the validated options of the two-subpopulation comparison."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.accumulate import check_fraction
from polars_cumdev.method.location import LOCATION_COLUMNS

COMPARE_COLUMNS = (
    "n_first",
    "n_second",
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
    "p_method",
    *LOCATION_COLUMNS,
    "effect",
    "variance",
    "significant",
    "note",
)
"""Columns of :func:`compare`, in order."""

# Statistics that are never NaN or infinite when present.
_CHECKED = ("kuiper", "ks", "delta", "sigma", "kuiper_z", "ks_z", "effect")

COMPARE_ALL_COLUMNS = (
    "n_first",
    "n_second",
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
    "p_method",
    *LOCATION_COLUMNS,
    "effect",
    "variance",
    "significant",
    "note",
)
"""Columns of :func:`compare_all` after the ``by`` column, in order."""

COMPARE_CURVE_COLUMNS = (
    "k",
    "a",
    "k_over_n",
    "score",
    "cumdiff",
    "sigma",
    "centre",
    "difference",
    "v",
    "variance_share",
    "located",
)
"""Columns of :func:`compare_curve`, in order."""

DITHER = 1e-8
"""Relative size of the dither of ``ties="dither"`` (see :func:`dither_scores`)."""

_VARIANCES = ("empirical", "score")
_TIES = ("error", "dither")

# Internal columns (the prefix keeps them clear of user columns).
_P = nm.PREFIX
_FIRST = f"{_P}first"
_SECOND = f"{_P}second"
_SOURCE = f"{_P}source"  # 0: first subpopulation, 1: second (the reference)
_SHARED = f"{_P}shared"  # the score occurs in both subpopulations (before dithering)
_LEFT = f"{_P}left"  # the score still occurs in both (after dithering)
_W = f"{_P}w"  # weight normalized by the total of both subpopulations (step 1)
_BLOCK = f"{_P}block"
_BLOCKS = f"{_P}blocks"
_SW = f"{_P}block_weight"
_R = f"{_P}block_response"
_T = f"{_P}block_score"
_MW = f"{_P}block_mean_weight"
_R_LOW = f"{_P}response_at_lowest"
_R_HIGH = f"{_P}response_at_highest"
_TERM = f"{_P}effect_term"
_D = f"{_P}d"
_V_RAW = f"{_P}v_raw"
_V = f"{_P}v"
_N_ALL = f"{_P}n_all"
_SIGMA2 = f"{_P}sigma2"
_M_FIRST = f"{_P}m_first"
_M_SECOND = f"{_P}m_second"
_N_SHARED = f"{_P}n_shared"
_N_LEFT = f"{_P}n_left"
_INVALID = f"{_P}invalid"
# Rounding: bounds of the errors of a block's response, of a centred difference,
# of C and of sigma^2, and the largest |response| (method/resolution.py's rule).
_ABS_R = f"{_P}block_abs_response"
_COUNT = f"{_P}block_points"
_R_ERR = f"{_P}block_response_error"
_D_ERR = f"{_P}d_error"
_C_ERR_TERM = f"{_P}c_error_term"
_C_ABS_TERM = f"{_P}c_abs_term"
_SIGMA2_ERR = f"{_P}sigma2_error"
_C_ERROR = f"{_P}c_error"
_SIGMA2_ERROR = f"{_P}sigma2_error_total"
_RMAX = f"{_P}rmax"
_C_OK = f"{_P}c_ok"
_C_FLOOR = f"{_P}c_floor"
_SIGMA_OK = f"{_P}sigma_ok"

_G = nm.GROUP

# SplitMix64 constants (Steele, Lea and Flood, OOPSLA 2014).
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@dataclass(frozen=True)
class _Options:
    variance: str
    ties: str
    seed: int
    fraction: float = 1.0


def _options(variance: object, ties: object, seed: object, fraction: object = 1.0) -> _Options:
    if variance not in _VARIANCES:
        raise InvalidParameterError(
            f"`variance` must be 'empirical' or 'score', got {variance!r} "
            "('score' reads the scores as the success probabilities of Bernoulli responses)"
        )
    if ties not in _TIES:
        raise InvalidParameterError(f"`ties` must be 'error' or 'dither', got {ties!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InvalidParameterError(f"`seed` must be an int, got {seed!r}")
    return _Options(
        variance=str(variance),
        ties=str(ties),
        seed=int(seed),
        fraction=check_fraction(fraction),  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------
