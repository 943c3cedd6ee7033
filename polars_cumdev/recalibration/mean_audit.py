"""The audit of predicted means over a family of segments, for ``recalibrate(target="mean")``.

The multicalibration audit's family (the same levels, subsets, minimum size
and cap: :mod:`polars_cumdev.multicalibration.family`), each segment
calibrated as ``calibration(target="mean", by=...)`` calibrates a group (the
ECCE-R of the predicted means, its sigma from the responses' spread and
successive differences, :mod:`polars_cumdev.calibration.targets`), then
Holm's family-wise adjustment over every segment with a z
(:mod:`polars_cumdev.method.familywise`). One lazy query over the rows
repeated once per feature subset (each row belongs to one segment of every
subset), so it costs about as many calibrations of the rows as there are
subsets.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.calibration import calibration
from polars_cumdev.method.familywise import holm
from polars_cumdev.multicalibration.family import Segments, enumerate_family, subset_ids
from polars_cumdev.multicalibration.levels import coded_features
from polars_cumdev.multicalibration.walk import _labels

__all__ = ["mean_audit"]


def mean_audit(
    rows: pl.DataFrame, score: str, response: str, weight: str, family: Segments, level: float
) -> pl.DataFrame:
    """Every kept segment's calibration of predicted means, with Holm's ``p_family``.

    ``rows`` sorted by ``score``. One row per segment: the feature labels,
    ``depth``, ``condition``, ``n``, ``ecce_r_z``, ``ecce_r_p``,
    ``p_family`` and ``finding`` ("new" where ``p_family <= level``, else
    "not significant"), largest z first.
    """
    features = list(family.features)
    coded = coded_features(rows.select(features), family)
    subsets = family.subsets()
    ids, sizes = zip(*(subset_ids(coded, s, rows.height) for s in subsets), strict=True)
    counts = [np.bincount(i, minlength=n) for i, n in zip(ids, sizes, strict=True)]
    kept, _ = enumerate_family(counts, family)
    bases = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    s, y, w = (rows.get_column(c).to_numpy() for c in (score, response, weight))
    parts = []
    for k, (i, keep) in enumerate(zip(ids, kept, strict=True)):
        if keep.shape[0]:
            idx = np.flatnonzero(np.isin(i, keep))
            segment = i[idx].astype(np.int64) + bases[k]
            parts.append(pl.DataFrame({"_seg": segment, "s": s[idx], "y": y[idx], "w": w[idx]}))
    long = pl.concat(parts).lazy()
    table = (
        calibration(long, "s", "y", "w", by="_seg", target="mean", level=level)
        .select("_seg", "n", "ecce_r_z", "ecce_r_p")
        .with_columns(holm(pl.col("ecce_r_p")).alias("p_family"))
        .collect()
    )
    number = table.get_column("_seg").to_numpy()
    which = np.searchsorted(bases, number, side="right") - 1
    labels, condition = _labels(coded, subsets, which, number - bases[which], family)
    depth = pl.Series("depth", [len(subsets[k]) for k in which], dtype=pl.Int64)
    significant = pl.col("p_family") <= level
    return (
        table.with_columns(*labels.values(), depth, condition)
        .with_columns(
            pl.when(significant)
            .then(pl.lit("new"))
            .otherwise(pl.lit("not significant"))
            .alias("finding")
        )
        .select(*features, "depth", "condition", "n", "ecce_r_z", "ecce_r_p", "p_family", "finding")
        .sort(["ecce_r_z", "depth", "condition"], descending=[True, False, False], nulls_last=True)
    )
