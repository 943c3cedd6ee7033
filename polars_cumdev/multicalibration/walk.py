"""Every segment's calibration statistics from one sort by score.

Inside one node of the lazy plan (:func:`polars_cumdev.compiled.node`): the
rows arrive sorted by score; each feature is coded once
(:func:`~polars_cumdev.multicalibration.family.coded_features`); then, for
each feature subset (a partition of the rows), each row's segment number is
formed on the fly and its sums updated,
in one walk for all subsets at once
(:func:`polars_cumdev.kernel.segments.segment_sums`), the sums
``calibration(by=...)`` gets from :func:`polars_cumdev.kernel.calibration_groups`
for one grouping. The located stretch
is searched only in the segments significant family-wise
(:func:`polars_cumdev.compiled.location`, a second walk of those subsets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.method import compiled
from polars_cumdev.method.familywise import critical_z, holm_numpy
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.method.pvalues import kuiper_pvalue
from polars_cumdev.method.statistics import SUMMARY_SCHEMA
from polars_cumdev.multicalibration import bootstrap
from polars_cumdev.multicalibration.family import (
    Coded,
    Segments,
    coded_features,
    enumerate_family,
    layout,
    subset_ids,
)

__all__ = ["EXTRA_SCHEMA", "Options", "Walked", "assemble", "family_frame"]

#: Columns the node adds to :data:`SUMMARY_SCHEMA` (after the feature columns).
EXTRA_SCHEMA: dict[str, pl.DataType] = {
    "depth": pl.Int32(),
    "condition": pl.String(),
    "response_mean": pl.Float64(),
    "_p_bootstrap": pl.Float64(),
    "critical_z": pl.Float64(),
    "tests": pl.Int64(),
    "dropped": pl.Int64(),
}


@dataclass(frozen=True)
class Options:
    """How the family-wise p-values are found (see ``multicalibration``)."""

    level: float = 0.05
    method: str = "holm"
    resamples: int = 999
    seed: int = 0


def _labels(coded: list[Coded], subset: tuple[int, ...], numbers: np.ndarray, family: Segments):
    """Feature label columns and the SQL condition of the segments ``numbers`` of ``subset``."""
    columns: dict[str, pl.Series] = {
        name: pl.Series(name, [None] * numbers.shape[0], dtype=pl.String)
        for name in family.features
    }
    parts = []
    rest = numbers.astype(np.int64)
    levels = {}
    for f in reversed(subset):
        count = len(coded[f].labels)
        levels[f] = rest % count
        rest = rest // count
    for f in subset:
        name = family.features[f]
        labels = np.array(coded[f].labels, dtype=object)[levels[f]]
        columns[name] = pl.Series(name, labels.tolist(), dtype=pl.String)
        conditions = np.array(coded[f].conditions, dtype=object)[levels[f]]
        parts.append(pl.Series(conditions.tolist(), dtype=pl.String))
    if parts:
        condition = pl.DataFrame(parts).select(pl.concat_str(pl.all(), separator=" AND "))
        condition = condition.to_series().alias("condition")
    else:
        condition = pl.Series("condition", ["TRUE"] * numbers.shape[0], dtype=pl.String)
    return columns, condition


@dataclass(frozen=True)
class Walked:
    """Per subset, the kernel's per-segment arrays (``calibration_groups`` layout)."""

    out: list[np.ndarray]
    first: list[np.ndarray]
    response_sums: list[np.ndarray]  # sum of W R per segment number (rescaled weights)


def family_frame(rows: compiled.Rows, family: Segments, options: Options) -> pl.DataFrame:
    """Per segment: feature labels, the layout of ``summarize`` and :data:`EXTRA_SCHEMA`.

    Calibration (method.md 2): every subset's sums from one compiled walk.
    """
    from polars_cumdev.kernel.segments import segment_sums

    coded = coded_features(rows.batch, family)
    subsets = family.subsets()
    codes, features, radices, bases, total = layout(coded, subsets)
    sums, firsts, wr = segment_sums(
        codes, features, radices, bases, rows.s, rows.r, rows.w, rows.weighted, rows.scale, total
    )
    ends = np.append(bases[1:], total)
    spans = list(zip(bases, ends, strict=True))
    walked = Walked(
        [sums[a:b] for a, b in spans], [firsts[a:b] for a, b in spans], [wr[a:b] for a, b in spans]
    )
    return assemble(rows, family, options, coded, subsets, walked, binary=True, prefix=None)


def assemble(
    rows: compiled.Rows,
    family: Segments,
    options: Options,
    coded: list[Coded],
    subsets: list[tuple[int, ...]],
    walked: Walked,
    *,
    binary: bool,
    prefix: tuple[np.ndarray, np.ndarray] | None,
    constants: dict[str, object] | None = None,
) -> pl.DataFrame:
    """Keep, test, adjust and locate the walked segments; one frame row per kept segment.

    ``binary`` picks sigma^2 (31) or (32) of M. Tygert, "Cumulative deviation of
    a subpopulation from the full population" (always (50) for calibration);
    ``prefix`` is the screen's :func:`polars_cumdev.kernel.prefix_table`
    (``None`` for calibration); ``constants`` extra columns (the screen's
    :func:`polars_cumdev.compiled.facts`).
    """
    from polars_cumdev import kernel as k

    n = rows.batch.height
    kept, dropped = enumerate_family([o[:, k.N_ROWS] for o in walked.out], family)

    # z and p of every kept segment, as normalize will find them, to choose where to locate.
    outs = [walked.out[i][kept[i]] for i in range(len(subsets))]
    stacked = np.concatenate(outs) if outs else np.zeros((0, k.GROUP_COLUMNS))
    column = k.SIGMA_B if binary else k.SIGMA_E
    with np.errstate(invalid="ignore", divide="ignore"):
        root = np.sqrt(np.maximum(stacked[:, column], 0.0))
        ranges = np.maximum(stacked[:, k.C_MAX], 0.0) - np.minimum(stacked[:, k.C_MIN], 0.0)
        z = np.where(root > 0.0, ranges / root, np.nan)
    tests = int(np.count_nonzero(~np.isnan(z)))
    p_boot = np.full(z.shape, np.nan)
    if options.method == "bootstrap":
        defined = ~np.isnan(z)
        starts = np.concatenate([[0], np.cumsum([len(x) for x in kept])])
        numbers = [kept[i][defined[starts[i] : starts[i + 1]]] for i in range(len(subsets))]
        found = bootstrap.maxima(
            coded, subsets, numbers, root[defined], rows.s, rows.w, rows.weighted,
            rows.scale, options.resamples, options.seed,
        )  # fmt: skip
        p_boot[defined] = bootstrap.adjusted(z[defined], found)
        family_p, critical = p_boot, bootstrap.critical(found, options.level)
    else:
        family_p = holm_numpy(np.asarray(kuiper_pvalue(z), dtype=np.float64))
        critical = critical_z(options.level, tests)
    significant = family_p <= options.level

    frames, start = [], 0
    for i, subset in enumerate(subsets):
        numbers = kept[i]
        if numbers.shape[0] == 0:
            continue
        out, first = walked.out[i], walked.first[i]
        stop = start + numbers.shape[0]
        located = {c: np.full(numbers.shape[0], np.nan) for c in LOCATION_COLUMNS}
        if significant[start:stop].any():
            ids, _ = subset_ids(coded, subset, n)
            chosen = np.full(first.shape[0], -1, dtype=np.int64)
            picked = numbers[significant[start:stop]]
            chosen[picked] = first[picked]
            found = compiled.location(rows, ids, 0, out, chosen, binary, prefix)
            located = {c: v[numbers] for c, v in found.items()}
        body = compiled.summary_frame(
            rows, [], out[numbers], first[numbers], {**(constants or {}), **located}
        )
        labels, condition = _labels(coded, subset, numbers, family)
        extra = pl.DataFrame(
            {
                "depth": np.full(numbers.shape[0], len(subset), dtype=np.int32),
                "condition": condition,
                "response_mean": walked.response_sums[i][numbers] / out[numbers, k.WEIGHT],
                "_p_bootstrap": p_boot[start:stop],
                "critical_z": np.full(numbers.shape[0], critical),
                "tests": np.full(numbers.shape[0], tests, dtype=np.int64),
                "dropped": np.full(numbers.shape[0], dropped, dtype=np.int64),
            }
        ).with_columns(pl.col("_p_bootstrap").fill_nan(None))
        frames.append(pl.concat([pl.DataFrame(labels), extra, body], how="horizontal"))
        start = stop
    schema = {
        **{f: pl.String() for f in family.features},
        **EXTRA_SCHEMA,
        **SUMMARY_SCHEMA,
        **{
            c: pl.Boolean() if isinstance(v, bool) else pl.Float64()
            for c, v in (constants or {}).items()
        },
    }
    if not frames:
        return pl.DataFrame(schema=schema)
    return pl.concat(frames, how="vertical").select(list(schema)).cast(schema)
