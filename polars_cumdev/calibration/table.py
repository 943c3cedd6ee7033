"""The two ends of a calibration, the same whichever engine computes it: door and table.

A calibration (:mod:`polars_cumdev.calibration.cumulative`) runs in process on
Polars stages or the compiled kernel, and also range by range
(:mod:`polars_cumdev.engines.partitioned`), on a cluster
(:mod:`polars_cumdev.engines.cluster`) and family by family
(:mod:`polars_cumdev.multicalibration`). All of them enter and leave the same
way, and this module holds those two ends:

- the door: the user's frame checked and prepared once, with the score and
  response ranges of the target and the table's own column names reserved
  so that no ``by`` key can take them (:func:`prepare_calibration`);
- the table: the screen's statistics normalized into p-values, q-values and
  decisions (:func:`polars_cumdev.method.statistics.normalize`), then named as
  calibration names them: the Kuiper range of C is the ECCE-R and its largest
  absolute value the ECCE-MAD (equations (48)-(49) of appendix A of
  M. Tygert, "Cumulative deviation of a subpopulation from the full
  population"; :data:`RENAME`, :data:`CALIBRATION_COLUMNS`,
  :func:`normalized_table`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev.calibration.targets import Target
from polars_cumdev.method import _names as nm
from polars_cumdev.method.keys import Key
from polars_cumdev.method.prepare import FrameLike, Prepared, prepare
from polars_cumdev.method.statistics import (
    MIN_SCORES,
    RMAX,
    SIGMA_ZERO,
    STATISTIC_COLUMNS,
    normalize,
)

__all__ = [
    "BERNOULLI",
    "CALIBRATION_COLUMNS",
    "PROBABILITY",
    "RENAME",
    "normalized_table",
    "prepare_calibration",
]

#: The default target: the score is a predicted probability.
PROBABILITY = Target()

#: The screen's statistic names -> calibration's.
RENAME = {
    "kuiper": "ecce_r",
    "ks": "ecce_mad",
    "kuiper_z": "ecce_r_z",
    "ks_z": "ecce_mad_z",
    "kuiper_p": "ecce_r_p",
    "ks_p": "ecce_mad_p",
    "kuiper_log10p": "ecce_r_log10p",
    "ks_log10p": "ecce_mad_log10p",
    "kuiper_q": "ecce_r_q",
    "ks_q": "ecce_mad_q",
}

#: The statistics' columns of a calibration table, in order (the groups' keys come first).
CALIBRATION_COLUMNS = tuple(RENAME.get(c, c) for c in STATISTIC_COLUMNS if c != "variance")

# The statistics' columns of a calibration table, each with its name there (no variance).
_NAMES = {c: RENAME.get(c, c) for c in STATISTIC_COLUMNS if c != "variance"}

#: The one row :func:`~polars_cumdev.method.statistics.normalize` takes for responses
#: in [0, 1]: Bernoulli's sigma, and C measured on the scale of 1.
BERNOULLI = {nm.BINARY: True, RMAX: 1.0}


def prepare_calibration(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None,
    by: Key | Sequence[Key] | None,
    target: Target = PROBABILITY,
    reserved: Sequence[str] = (),
    carry: Sequence[pl.Expr] = (),
) -> Prepared:
    """The rows of a calibration, prepared (:func:`polars_cumdev.method.prepare.prepare`)
    with ``target``'s ranges, the table's names and ``reserved`` kept from ``by``."""
    score_range, response_range = target.ranges
    return prepare(
        frame,
        score=score,
        response=response,
        weight=weight,
        by=by,
        score_range=score_range,
        response_range=response_range,
        reserved=(*CALIBRATION_COLUMNS, *STATISTIC_COLUMNS, *reserved),
        carry=carry,
    )


def normalized_table(
    stats: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    bernoulli: pl.LazyFrame | None,
    scale: pl.LazyFrame | None,
    prepared: Prepared,
    target: Target,
    level: float,
) -> pl.LazyFrame:
    """The statistics' table: :func:`normalize`, in calibration's names (a summary in
    memory is normalized as :func:`normalize` says)."""
    return normalize(
        stats,
        keys,
        bernoulli,
        min_scores=MIN_SCORES["calibration"],
        scale=scale,
        labels=prepared.labels,
        sigma_zero=target.sigma_zero or SIGMA_ZERO,
        level=level,
        simulated=True,
        names=_NAMES,
    )
