"""Every segment's calibration statistics from one sort by score.

Inside one node of the lazy plan (:func:`polars_cumdev.compiled.node`): the
rows arrive sorted by score; each feature is coded once
(:func:`~polars_cumdev.multicalibration.family.coded_features`). The
additive sums (rows, W, sigma^2's sum, W R) come from one pass over the cells
of the features' full cross, each subset's a marginal of it; they tell which
segments the family keeps. Then one walk over the rows updates, for every
row, the running sum C and its extremes of its segment in every subset that
holds a kept segment (:func:`polars_cumdev.kernel.cells.cell_extremes`, a
table of cells x subsets giving the segment numbers): the sums
``calibration(by=...)`` gets from :func:`polars_cumdev.kernel.calibration_groups`
for one grouping. When the cross is too large to tabulate, the walk runs per
subset (:func:`polars_cumdev.kernel.segments.segment_sums`). The located
stretch is searched only in the segments significant family-wise
(:func:`polars_cumdev.method.kernel_frames.location`, a second walk of those subsets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.errors import EmptySubpopulationError
from polars_cumdev.method import compiled, kernel_frames
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.familywise import critical_z, holm_numpy
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.method.pvalues import kuiper_pvalue
from polars_cumdev.method.statistics import SUMMARY_SCHEMA
from polars_cumdev.multicalibration import bootstrap
from polars_cumdev.multicalibration.echoes import echoes, kernel_z, row_split
from polars_cumdev.multicalibration.family import (
    Coded,
    Segments,
    coded_features,
    enumerate_family,
    layout,
    marginals,
    subset_ids,
)

#: Largest cross of the features whose cells hold the additive sums (else the walk sums them).
MAX_CELLS = 1 << 20

__all__ = ["EXTRA_SCHEMA", "Options", "Walked", "assemble", "family_frame"]

#: Columns the node adds to :data:`SUMMARY_SCHEMA` (after the feature columns).
EXTRA_SCHEMA: dict[str, pl.DataType] = {
    "depth": pl.Int32(),
    "condition": pl.String(),
    "response_mean": pl.Float64(),
    "_p_bootstrap": pl.Float64(),
    fs.SIM_KUIPER: pl.Float64(),
    fs.SIM_KS: pl.Float64(),
    "critical_z": pl.Float64(),
    "tests": pl.Int64(),
    "dropped": pl.Int64(),
    "pooled": pl.String(),
    "overlap": pl.String(),
    "remainder_z": pl.Float64(),
}


@dataclass(frozen=True)
class Options:
    """How the family-wise p-values are found (see ``multicalibration``)."""

    level: float = 0.05
    method: str = "holm"
    resamples: int = 999
    seed: int = 0
    finite_sample: bool = True  # off only to show what the asymptotic tail alone gives
    locate: bool = True  # False: no located stretch (its walk is most of an audit's time)


def _labels(
    coded: list[Coded],
    subsets: list[tuple[int, ...]],
    which: np.ndarray,
    numbers: np.ndarray,
    family: Segments,
) -> tuple[dict[str, pl.Series], pl.Series]:
    """Feature label columns and SQL conditions of segments ``numbers`` of subsets ``which``.

    Vectorized over the segments: each feature's level is the segment number's
    digit at that feature's place (mixed radix, last feature fastest), null
    where the subset does not hold the feature.
    """
    count = len(coded)
    place = np.zeros((len(subsets), max(count, 1)), dtype=np.int64)  # 0: feature not held
    for k, subset in enumerate(subsets):
        stride = 1
        for f in reversed(subset):
            place[k, f] = stride
            stride *= len(coded[f].labels)
    columns, parts = {}, []
    for f, name in enumerate(family.features):
        stride = place[which, f]
        held = stride > 0
        level = np.where(held, numbers // np.maximum(stride, 1) % len(coded[f].labels), 0)
        labels = pl.Series(coded[f].labels, dtype=pl.String)
        conditions = pl.Series(coded[f].conditions, dtype=pl.String)
        index = pl.Series(level, dtype=pl.UInt32)
        mask = pl.Series(held)
        columns[name] = labels.gather(index).zip_with(mask, pl.Series([None], dtype=pl.String))
        columns[name] = columns[name].alias(name)
        parts.append(conditions.gather(index).zip_with(mask, pl.Series([None], dtype=pl.String)))
    if parts:
        condition = (
            pl.DataFrame({str(i): p for i, p in enumerate(parts)})
            .select(pl.concat_str(pl.all(), separator=" AND ", ignore_nulls=True))
            .to_series()
        )
        condition = condition.replace("", "TRUE")
    else:
        condition = pl.Series(["TRUE"] * numbers.shape[0], dtype=pl.String)
    return columns, condition.alias("condition")


@dataclass(frozen=True)
class Walked:
    """Per subset, the kernel's per-segment arrays (``calibration_groups`` layout)."""

    out: list[np.ndarray]
    first: list[np.ndarray]
    response_sums: list[np.ndarray]  # sum of W R per segment number (rescaled weights)


def _cross_sums(
    sums: np.ndarray,
    firsts: np.ndarray,
    wr: np.ndarray,
    codes: np.ndarray,
    counts: np.ndarray,
    subsets: list[tuple[int, ...]],
    bases: np.ndarray,
    columns: tuple,
    distinct: bool,
) -> None:
    """Fill every segment's additive sums (rows, W, sigma^2's sum, W R, first row) from one
    pass over the cells of the features' cross, each subset's a marginal of it."""
    from polars_cumdev import kernel as k_
    from polars_cumdev.kernel.segments import cell_sums

    table, first = cell_sums(codes, counts, *columns)
    for k, subset in enumerate(subsets):
        span = slice(bases[k], bases[k] + int(np.prod([counts[f] for f in subset])))
        parts, firsts[span] = marginals(table, first, counts, subset)
        sums[span, k_.N_ROWS] = parts[:, 0]
        sums[span, k_.WEIGHT] = parts[:, 1]
        sums[span, k_.SIGMA_B] = parts[:, 2]
        wr[span] = parts[:, 3]
        if distinct:
            sums[span, k_.N_SCORES] = parts[:, 0]


def _finite(
    rows: compiled.Rows,
    stacked: np.ndarray,
    root: np.ndarray,
    z: np.ndarray,
    coded: list[Coded],
    subsets: list[tuple[int, ...]],
    kept: list[np.ndarray],
    options: Options,
    prefix: object,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulated p-values where the asymptotic tail is not trusted
    (:mod:`~polars_cumdev.multicalibration.finite`: calibration, redrawn for a segment of 0/1
    responses and bounded for one of soft labels, or with ``prefix`` the screen against the
    full population, resampled for other responses), NaN elsewhere."""
    from polars_cumdev import kernel as k
    from polars_cumdev.multicalibration.finite import screen_segment_pvalues, segment_pvalues

    none = np.full(z.shape, np.nan)
    r = np.asarray(rows.r, dtype=np.float64)
    if not options.finite_sample:
        return none, none.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.maximum(stacked[:, k.C_MAX], -stacked[:, k.C_MIN])
        z_ks = np.where(root > 0.0, g / root, np.nan)
    s = np.asarray(rows.s, dtype=np.float64)
    w = np.asarray(rows.w, dtype=np.float64) if rows.weighted else np.ones(s.shape[0])
    pvalues = segment_pvalues if prefix is None else screen_segment_pvalues
    return pvalues(s, w, r, coded, subsets, kept, z, z_ks, options.level)


def family_frame(rows: compiled.Rows, family: Segments, options: Options) -> pl.DataFrame:
    """Per segment: feature labels, the layout of ``summarize`` and :data:`EXTRA_SCHEMA`.

    Calibration (method.md 2): every subset's ranges from one compiled walk,
    the additive sums from one pass over the cells of the features' cross.
    """
    import numba

    from polars_cumdev import kernel as k_
    from polars_cumdev.kernel.cells import TABLE_LIMIT, cell_extremes, cell_numbers, cell_segments
    from polars_cumdev.kernel.segments import segment_extremes, segment_sums
    from polars_cumdev.kernel.walks import GROUP_COLUMNS

    coded = coded_features(rows.frame(list(family.features)), family)
    subsets = family.subsets()
    codes, features, radices, bases, total = layout(coded, subsets)
    counts = np.array([len(c.labels) for c in coded], dtype=np.int64)
    cells = int(np.prod(counts, dtype=np.float64)) if coded else 1
    additive = cells > MAX_CELLS
    columns = (rows.s, rows.r, rows.w, rows.weighted, rows.scale)
    distinct = not additive and bool(np.all(rows.s[1:] != rows.s[:-1]))
    own = codes[: len(coded)]  # the features' rows of the code matrix
    spans = list(zip(bases, np.append(bases[1:], total), strict=True))
    tabulated = not additive and cells * len(subsets) <= TABLE_LIMIT
    if tabulated:  # all subsets in one pass, the subsets without a kept segment left out
        sums = np.zeros((total, GROUP_COLUMNS))
        firsts, wr = np.full(total, -1, dtype=np.int64), np.zeros(total)
        _cross_sums(sums, firsts, wr, own, counts, subsets, bases, columns, distinct)
        kept, _ = enumerate_family([sums[a:b, k_.N_ROWS] for a, b in spans], family)
        walk = np.array([x.shape[0] > 0 for x in kept], dtype=bool)
        table = cell_segments(counts, features[walk], radices[walk], bases[walk])
        table = table.astype(np.int16) if total <= np.iinfo(np.int16).max else table
        cell = cell_numbers(own, counts)
        threads = numba.get_num_threads()
        found = cell_extremes(table, cell, *columns, total, not distinct, threads)
        sums[:, [k_.C_LAST, k_.C_MAX, k_.C_MIN]] = found[:, 1:]
        if not distinct:
            sums[:, k_.N_SCORES] = found[:, 0]
    elif distinct:  # no ties: every row is a tie of its own, no tie bookkeeping
        sums = np.zeros((total, GROUP_COLUMNS))
        sums[:, [k_.C_LAST, k_.C_MAX, k_.C_MIN]] = segment_extremes(
            codes, features, radices, bases, *columns, total
        )
        firsts, wr = np.full(total, -1, dtype=np.int64), np.zeros(total)
    else:
        sums, firsts, wr = segment_sums(codes, features, radices, bases, *columns, total, additive)
    if not additive and not tabulated:
        _cross_sums(sums, firsts, wr, own, counts, subsets, bases, columns, distinct)
    walked = Walked(
        [sums[a:b] for a, b in spans], [firsts[a:b] for a, b in spans], [wr[a:b] for a, b in spans]
    )
    return assemble(rows, family, options, coded, subsets, walked, binary=True, prefix=None)


def pooled_words(coded: list[Coded], family: Segments) -> str | None:
    """What the level rule pooled into ``(other)``, per feature: "county: 39 values, 8,000 rows".

    None when nothing was pooled (:meth:`Segments.kept_count` kept every value).
    """
    parts = [
        f"{name}: {c.pooled[0]:,} value{'s' if c.pooled[0] != 1 else ''}, "
        f"{c.pooled[1]:,} row{'s' if c.pooled[1] != 1 else ''}"
        for name, c in zip(family.features, coded, strict=True)
        if c.pooled[0] > 0
    ]
    return "; ".join(parts) if parts else None


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
    from polars_cumdev.kernel.walks import GROUP_COLUMNS

    n = rows.height
    kept, dropped = enumerate_family([o[:, k.N_ROWS] for o in walked.out], family)
    if not any(x.shape[0] for x in kept):
        largest = max((int(o[:, k.N_ROWS].max(initial=0)) for o in walked.out), default=0)
        raise EmptySubpopulationError(
            f"no segment has min_rows={family.min_rows} rows (the largest segment examined "
            f"has {largest}), so the family is empty; lower min_rows or use fewer features"
        )

    # z and p of every kept segment, as normalize will find them, to choose where to locate.
    outs = [walked.out[i][kept[i]] for i in range(len(subsets))]
    stacked = np.concatenate(outs) if outs else np.zeros((0, GROUP_COLUMNS))
    column = k.SIGMA_B if binary else k.SIGMA_E
    with np.errstate(invalid="ignore", divide="ignore"):
        root = np.sqrt(np.maximum(stacked[:, column], 0.0))
        ranges = np.maximum(stacked[:, k.C_MAX], 0.0) - np.minimum(stacked[:, k.C_MIN], 0.0)
        z = np.where(root > 0.0, ranges / root, np.nan)
    tests = int(np.count_nonzero(~np.isnan(z)))
    sim_k, sim_ks = _finite(rows, stacked, root, z, coded, subsets, kept, options, prefix)
    p_boot = np.full(z.shape, np.nan)
    if options.method in ("bootstrap", "stepdown"):
        defined = ~np.isnan(z)
        starts = np.concatenate([[0], np.cumsum([len(x) for x in kept])])
        numbers = [kept[i][defined[starts[i] : starts[i + 1]]] for i in range(len(subsets))]
        observed = z[defined] if options.method == "stepdown" else None
        found = bootstrap.maxima(
            coded, subsets, numbers, root[defined], rows.s, rows.w, rows.weighted,
            rows.scale, options.resamples, options.seed, observed=observed,
        )  # fmt: skip
        if observed is None:
            p_boot[defined] = bootstrap.adjusted(z[defined], found)
        else:
            found, counts = found
            p_boot[defined] = bootstrap.stepdown(observed, counts, options.resamples)
        family_p, critical = p_boot, bootstrap.critical(found, options.level)
    else:
        p = np.asarray(kuiper_pvalue(z), dtype=np.float64)
        family_p = holm_numpy(np.where(np.isnan(sim_k), p, sim_k))
        critical = critical_z(options.level, tests)
    significant = family_p <= options.level

    located = {c: np.full(z.shape[0], np.nan) for c in LOCATION_COLUMNS}
    starts = np.concatenate([[0], np.cumsum([x.shape[0] for x in kept])]).astype(np.int64)
    for i, subset in enumerate(subsets):  # only subsets with a significant segment
        a, b = starts[i], starts[i + 1]
        if not options.locate or not significant[a:b].any():
            continue
        numbers, out, first = kept[i], walked.out[i], walked.first[i]
        ids, _ = subset_ids(coded, subset, n)
        chosen = np.full(first.shape[0], -1, dtype=np.int64)
        picked = numbers[significant[a:b]]
        chosen[picked] = first[picked]
        found = kernel_frames.location(rows, ids, 0, out, chosen, binary, prefix)
        for c in LOCATION_COLUMNS:
            located[c][a:b] = found[c][numbers]
    which = np.repeat(np.arange(len(subsets)), np.diff(starts))
    numbers = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)

    def remainder(chosen: np.ndarray) -> float:  # z of some rows taken as one segment
        ids = np.zeros(chosen.shape[0], dtype=np.int32)
        w = rows.w[chosen] if rows.w.shape[0] == n else rows.w
        part = (rows.s[chosen], rows.r[chosen], w, rows.weighted, rows.scale)
        if prefix is None:
            out, _ = k.calibration_groups(ids, 0, *part, 1)
        else:
            out, _ = k.screen_groups(ids, 0, *part, 1, rows.centre, *prefix)
        return kernel_z(out, k.C_MAX, k.C_MIN, column)

    split = row_split(which, numbers, coded, subsets, n, remainder)
    explained, remainder_z = echoes(z, significant, which, numbers, coded, subsets, critical, split)
    firsts = [walked.first[i][kept[i]] for i in range(len(subsets))]
    first = np.concatenate(firsts) if firsts else np.zeros(0, dtype=np.int64)
    response = [walked.response_sums[i][kept[i]] for i in range(len(subsets))]
    body = kernel_frames.summary_frame(rows, [], stacked, first, {**(constants or {}), **located})
    labels, condition = _labels(coded, subsets, which, numbers, family)
    overlap = condition.gather(np.maximum(explained, 0)).zip_with(
        pl.Series(explained >= 0), pl.Series([None], dtype=pl.String)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (np.concatenate(response) if response else np.zeros(0)) / stacked[:, k.WEIGHT]
    extra = pl.DataFrame(
        {
            "depth": np.array([len(s) for s in subsets], dtype=np.int32)[which],
            "condition": condition,
            "response_mean": mean,
            "_p_bootstrap": p_boot,
            fs.SIM_KUIPER: sim_k,
            fs.SIM_KS: sim_ks,
            # null when no segment has a z: there is no test for a z to pass
            "critical_z": pl.Series(
                [critical if tests else None] * numbers.shape[0], dtype=pl.Float64
            ),
            "tests": np.full(numbers.shape[0], tests, dtype=np.int64),
            "dropped": np.full(numbers.shape[0], dropped, dtype=np.int64),
            "pooled": pl.Series([pooled_words(coded, family)] * numbers.shape[0], dtype=pl.String),
            "overlap": overlap,
            "remainder_z": remainder_z,
        }
    ).with_columns(pl.col("_p_bootstrap", "remainder_z", fs.SIM_KUIPER, fs.SIM_KS).fill_nan(None))
    frame = pl.concat([pl.DataFrame(labels), extra, body], how="horizontal")
    schema = {
        **{f: pl.String() for f in family.features},
        **EXTRA_SCHEMA,
        **SUMMARY_SCHEMA,
        **{
            c: pl.Boolean() if isinstance(v, bool) else pl.Float64()
            for c, v in (constants or {}).items()
        },
    }
    return frame.select(list(schema)).cast(schema)
