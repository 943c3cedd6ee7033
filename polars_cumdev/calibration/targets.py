"""What a prediction claims, and so what its responses are compared with and how they spread.

The cumulative calibration statistics (:mod:`polars_cumdev.calibration.cumulative`)
accumulate C_k = sum_{j<=k} a_j (R'_j - ref_j) over the merged points, sorted
by the prediction, and scale by sigma^2 = sum_k a_k^2 f_k v_k with v_k the
variance of one response at the k-th prediction under perfect calibration.
Three targets fill in R', ref and v:

* ``"probability"`` (method.md 2): the prediction p in [0, 1] of a 0/1 (or
  soft) response; ref_k = S'_k and v_k = S'_k (1 - S'_k), appendix A (50) of M.
  Tygert, "Cumulative deviation of a subpopulation from the full population".
* ``"quantile"`` at level alpha: the prediction q of the alpha-quantile of a
  real response y. The identification function 1{y <= q} - alpha has mean 0
  exactly when q is the alpha-quantile, so R'_k is the (weighted) share of
  responses at or below q_k, ref_k = alpha and v_k = alpha (1 - alpha), the
  variance of the indicator under calibration.
* ``"mean"``: the prediction m of the mean of a real response y; ref_k =
  S'_k and v_k is estimated from the responses themselves, from two sources
  pooled by their degrees of freedom (docs/method.md, "Calibration of
  predicted means"). Within a merged point of several rows, their weighted
  spread Q_k / W'_k = sum W (y - R'_k)^2 / sum W has expectation v (1 - f_k)
  under calibration (the rows share one prediction, hence one mean), an
  unbiased estimate v (1 - f_k) / (1 - f_k) with about 1 / f_k - 1 degrees
  of freedom. Between points, successive differences of the residuals
  e_k = R'_k - S'_k along the sorted predictions (the idea of
  ``multicalibration-mcgrad.md`` b.2', made local and tie-aware): with a
  conditional variance v(s) that changes slowly with s,
  E[(e_{k+1} - e_k)^2] = v (f_k + f_{k+1}), so
  d_k = (e_{k+1} - e_k)^2 / (f_k + f_{k+1}) estimates v between points k and
  k + 1, and dbar_k is the average of the d on either side of point k (d_1
  at the first point, d_{n-1} at the last), counted as one degree of
  freedom. Weighting the two by their degrees of freedom,
  v_k = ((1/f_k - 1) Q_k / (W'_k (1 - f_k)) + dbar_k) / (1/f_k), that is
  v_k = Q_k / W'_k + f_k dbar_k. A point of one row (f = 1, Q = 0) keeps
  v_k = dbar_k, as before; a point of many rows is read almost wholly from
  its own spread, so that few distinct predictions (where the differences
  are few: K - 1 of them for K predictions) still give a sigma of many
  degrees of freedom. Neither source swells with a smooth miscalibration:
  the spread within a tie does not see the bias at all, the differences
  barely. Rows are taken as independent given the prediction, as the tie
  factor f assumes everywhere. One merged point of one row gives sigma 0.

Where the asymptotic tail is not trusted (few effective rows), a quantile's
hits are redrawn as Bernoulli(alpha) (its exact null) and a mean's residuals
get random signs (exact for symmetric errors; the p-value is the larger of
that and the asymptotic one): :attr:`Target.null`, and docs/method.md,
"Predicted means and quantiles at every size".

Weights are sampling weights, as for probabilities: a merged point's
response R'_k = sum(W y) / sum(W) has variance v f_k with the tie factor
f_k = sum(W^2) / (sum W)^2 when every row's response has variance v.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.accumulate import per_group
from polars_cumdev.method.resolution import merged_error
from polars_cumdev.method.statistics import RMAX

__all__ = ["PROBABILITY_SIGMA_ZERO", "SPREAD", "TARGETS", "TERM", "Target", "check_target"]

TARGETS = ("probability", "mean", "quantile")
#: Each point's term a_k^2 f_k v_k of sigma^2.
TERM = f"{nm.PREFIX}sigma_term"
#: Bounds of the rounding errors of TERM and of a_k (R'_k - ref_k) (predicted means).
TERM_ERROR = f"{nm.PREFIX}sigma_term_error"
C_TERM_ERROR = f"{nm.PREFIX}c_term_error"
#: Each merged point's mean |R - S| (predicted means), 0 when R' = S' exactly.
GAP = f"{nm.PREFIX}gap"
#: Each merged point's sum W (R - R')^2 / sum W (predicted means; :func:`merge_ties`'s spread).
SPREAD = f"{nm.PREFIX}spread"
_UNIT = (0.0, 1.0)


@dataclass(frozen=True)
class Target:
    """A kind of prediction: ``"probability"``, ``"mean"`` or ``"quantile"`` (with ``alpha``)."""

    name: Literal["probability", "mean", "quantile"] = "probability"
    alpha: float | None = None

    @property
    def ranges(self) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
        """The closed intervals the scores and the responses must lie in."""
        return (_UNIT, _UNIT) if self.name == "probability" else (None, None)

    @property
    def null(self) -> Literal["score", "level", "flip"]:
        """How :func:`~polars_cumdev.method.finite_groups.with_simulated` redraws a group:
        Bernoulli(score), Bernoulli(alpha) of the hits, or the residuals' signs."""
        return {"probability": "score", "quantile": "level", "mean": "flip"}[self.name]  # type: ignore[return-value]

    @property
    def compiled(self) -> bool:
        """Whether the compiled kernel computes this target (the probability only)."""
        return self.name == "probability"

    def standardize(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """Rows with the response the cumulative differences compare (quantile: 1{y <= q})."""
        if self.name != "quantile":
            return frame
        hit = (pl.col(nm.RESPONSE) <= pl.col(nm.SCORE)).cast(pl.Float64)
        return frame.with_columns(hit.alias(nm.RESPONSE))

    def with_reference(self, points: pl.LazyFrame) -> pl.LazyFrame:
        """Merged points with ``REFERENCE``, the value each R'_k is compared with."""
        ref = pl.lit(self.alpha, dtype=pl.Float64) if self.name == "quantile" else pl.col(nm.SCORE)
        return points.with_columns(ref.alias(nm.REFERENCE))

    def with_term(self, accumulated: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        """Accumulated points (sorted by score per group) with ``TERM``, a_k^2 f_k v_k."""
        a2f = pl.col(nm.A_STEP) ** 2 * pl.col(nm.TIE)
        if self.name != "mean":
            p = pl.col(nm.REFERENCE)
            return accumulated.with_columns((a2f * p * (1.0 - p)).alias(TERM))
        e = pl.col(nm.RESPONSE) - pl.col(nm.SCORE)
        f = pl.col(nm.TIE)
        d = per_group((e.shift(-1) - e) ** 2 / (f + f.shift(-1)), keys)
        # Rounding: e_k errs by R'_k's bound (the score is exact), so a difference
        # of consecutive residuals by the sum of two; propagated into d and v.
        delta = merged_error(pl.col(RMAX), exact=pl.col(GAP) == 0.0)
        both = per_group(delta.shift(-1), keys) + delta
        d_err = per_group(
            (2.0 * (e.shift(-1) - e).abs() * both + both * both) / (f + f.shift(-1)), keys
        )
        d_name, err_name = f"{nm.PREFIX}successive", f"{nm.PREFIX}successive_error"
        dbar = pl.mean_horizontal(per_group(pl.col(d_name).shift(1), keys), pl.col(d_name))
        d_err_bar = pl.mean_horizontal(per_group(pl.col(err_name).shift(1), keys), pl.col(err_name))
        # The spread within the tie: each (R - R')^2 errs by at most
        # delta (4 max|R| + delta) with R' off by delta, and the sum of those
        # non-negative terms and its division by (rows + 5) units; exactly 0
        # when the tie's responses are equal (R' is then one of them).
        spread = pl.col(SPREAD)
        plain = merged_error(pl.col(RMAX))
        spread_err = (
            pl.when(spread == 0.0)
            .then(0.0)
            .otherwise(
                plain * (4.0 * pl.col(RMAX) + plain)
                + (pl.col(nm.ROWS) + 5).cast(pl.Float64) * 2.0**-52 * spread
            )
        )
        v = spread + f * dbar.fill_null(0.0)
        v_err = spread_err + f * d_err_bar.fill_null(0.0)
        term = a2f * v
        return (
            accumulated.with_columns(d.alias(d_name), d_err.alias(err_name))
            .with_columns(
                term.alias(TERM),
                (a2f * v_err + 8.0 * 2.0**-52 * term.abs()).alias(TERM_ERROR),
                (pl.col(nm.A_STEP) * delta).alias(C_TERM_ERROR),
            )
            .drop(d_name, err_name, SPREAD)
        )

    @property
    def errors(self) -> tuple[pl.Expr, pl.Expr] | None:
        """Per point, bounds of the rounding errors of C's and sigma^2's terms (None: exact).

        Only the predicted mean estimates its sigma from the responses
        themselves, so that residuals agreeing except for rounding would give
        a sigma of rounding noise; its bounds (from :func:`merged_error`, with
        ``RMAX`` joined to the points) let
        :func:`polars_cumdev.method.resolution.resolved` judge it as it judges
        the screen. A probability or quantile's sigma^2 is a sum of
        a^2 f p (1 - p) with p the prediction or level itself, far above the
        rounding of the averages compared with it.
        """
        if self.name != "mean":
            return None
        return pl.col(C_TERM_ERROR), pl.col(TERM_ERROR)

    @property
    def sigma_zero(self) -> str | None:
        """The note of a group whose sigma is 0 (None: the library's default note)."""
        if self.name == "mean":
            return (
                "sigma is 0 (one distinct prediction of one row, or responses that neither "
                "vary within tied predictions nor change between consecutive ones): z undefined"
            )
        if self.name == "probability":
            return PROBABILITY_SIGMA_ZERO
        return None


#: The note of a group whose sigma (50) is 0: every score is 0 or 1 (there are no bins).
PROBABILITY_SIGMA_ZERO = (
    "sigma is 0 (every score is 0 or 1, where calibrated responses do not vary): z undefined"
)


def check_target(target: object, alpha: object) -> Target:
    """Validate ``target`` and ``alpha`` (needed by, and only by, ``"quantile"``)."""
    if target not in TARGETS:
        raise InvalidParameterError(
            f"`target` must be 'probability', 'mean' or 'quantile', got {target!r}"
        )
    if target != "quantile":
        if alpha is not None:
            raise InvalidParameterError(
                f"`alpha` is the level of a predicted quantile: use it with target='quantile', "
                f"not target={target!r}"
            )
        return Target(target)  # type: ignore[arg-type]
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, int | float)
        or not math.isfinite(alpha)
        or not 0.0 < alpha < 1.0
    ):
        raise InvalidParameterError(
            f"target='quantile' needs `alpha`, the quantile's level, in (0, 1); got {alpha!r}"
        )
    return Target("quantile", float(alpha))
