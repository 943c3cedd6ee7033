"""Multicalibration on a cluster: segment memberships on the workers, the family on the driver.

The steps an engine (:mod:`.segment_engines`) runs, each a pure function of a
part of rows or of small driver-side tables:

1. the levels (:mod:`.segment_levels`): value tables per part, merged, the
   rule of :func:`polars_cumdev.segments` applied once;
2. :func:`segment_sums`: each part's rows coded, and its rows, W and W R per
   segment (added up on the driver: the family kept, :func:`kept_segments`,
   and each segment's mean response);
3. the segments are the groups of the engine's calibration by score ranges
   (:mod:`polars_cumdev.engines.cluster.range_calibration`): the rows are cut
   into ranges of scores and shuffled once; each range's task sorts its rows
   once and walks each of them into its segment in every feature subset (a
   row of a family of depth 2 over 3 features belongs to 7 segments, the
   whole population included: :func:`segment_numbers`,
   :class:`~polars_cumdev.engines.cluster.repeats.RepeatedRange`), and the
   driver joins the ranges (no segment, the whole population included, has
   to fit in one task); the finite-sample p-values of the few small
   candidates come from their rows;
4. :func:`decide`: Holm over the kept segments, once; then the stretches of
   the significant segments only are located (one more pass over their ranges);
5. :func:`family_table`: the decision's table, the echoes (the rows
   of the few significant segments :func:`~polars_cumdev.multicalibration.echoes.echo_plan`
   examines are gathered, :func:`segment_rows`), and the frame of
   :func:`polars_cumdev.multicalibration.walk.family_frame`'s layout, which
   :func:`polars_cumdev.multicalibration.api.finish_family` turns into the
   in-process table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.engines.cluster.request import Request
from polars_cumdev.engines.cluster.segment_levels import Levels, feature_codes
from polars_cumdev.errors import EmptySubpopulationError
from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.familywise import critical_z, holm_numpy
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.method.pvalues import kuiper_pvalue
from polars_cumdev.method.statistics import SIGMA_B, SUMMARY_SCHEMA
from polars_cumdev.multicalibration.api import finish_family
from polars_cumdev.multicalibration.echoes import echo_plan, echoes, kernel_z, segment_levels
from polars_cumdev.multicalibration.family import Segments, enumerate_family, subset_ids
from polars_cumdev.multicalibration.walk import EXTRA_SCHEMA, Options, _labels, pooled_words

__all__ = [
    "SEGMENT",
    "Decision",
    "Kept",
    "Layout",
    "copies_of",
    "decide",
    "family_table",
    "kept_segments",
    "members",
    "segment_numbers",
    "segment_rows",
    "segment_sums",
]

#: The segment number column of the repeated rows (over all subsets, from 0).
SEGMENT = "_cumdev_segment"


@dataclass(frozen=True)
class Layout:
    """The levels and where each subset's segment numbers start (sent to the workers)."""

    levels: Levels
    subsets: tuple[tuple[int, ...], ...]
    bases: tuple[int, ...]
    sizes: tuple[int, ...]

    @classmethod
    def of(cls, levels: Levels, family: Segments) -> Layout:
        subsets = tuple(family.subsets())
        counts = [len(c.labels) for c in levels.coded]
        sizes = [int(np.prod([counts[f] for f in s], dtype=np.int64)) for s in subsets]
        bases = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        return cls(levels, subsets, tuple(int(b) for b in bases), tuple(sizes))

    @property
    def total(self) -> int:
        return int(sum(self.sizes))


def segment_numbers(rows: pl.DataFrame, layout: Layout) -> list[np.ndarray]:
    """A checked part's segment number (int64) in each feature subset, subset by subset."""
    coded = feature_codes(rows, layout.levels)
    return [
        layout.bases[k] + subset_ids(coded, subset, rows.height)[0].astype(np.int64)
        for k, subset in enumerate(layout.subsets)
    ]


def _sums(numbers: list[np.ndarray], chunk: pl.DataFrame, request: Request, total: int):
    """Rows, W and W R per segment number (total x 3) of a checked part."""
    standard = request.standardize(chunk)
    w = standard.get_column(nm.WEIGHT).to_numpy()
    r = standard.get_column(nm.RESPONSE).to_numpy()
    if w.shape[0] != r.shape[0]:
        w = np.broadcast_to(w, r.shape)
    sums = np.zeros((total, 3))
    for ids in numbers:
        sums[:, 0] += np.bincount(ids, minlength=total)
        sums[:, 1] += np.bincount(ids, weights=w, minlength=total)
        sums[:, 2] += np.bincount(ids, weights=w * r, minlength=total)
    return sums


def members(ids: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Which segment numbers ``ids`` are among ``keep`` (both small and non-negative: a
    lookup table, not a search)."""
    top = max(int(ids.max(initial=-1)), int(keep.max(initial=-1))) + 1
    table = np.zeros(top, dtype=np.bool_)
    table[keep] = True
    return table[ids]


def copies_of(
    numbers: Sequence[np.ndarray],
    chunk: pl.DataFrame,
    request: Request,
    keep: np.ndarray | None = None,
) -> pl.DataFrame:
    """A checked part's rows once per array of ``numbers`` (subset by subset, the rows in
    their order) with that segment number (``SEGMENT``), the score, response and weight;
    with ``keep``, only the copies whose segment number is in ``keep``."""
    payload = chunk.select(
        request.score, request.response, *([request.weight] if request.weight else [])
    )
    pieces = []
    for ids in numbers:
        piece = payload.with_columns(pl.Series(SEGMENT, ids, dtype=pl.Int64))
        pieces.append(piece if keep is None else piece.filter(pl.Series(members(ids, keep))))
    return pl.concat(pieces) if pieces else payload.with_columns(pl.lit(0).alias(SEGMENT))


def segment_sums(chunk: pl.DataFrame, request: Request, layout: Layout) -> np.ndarray:
    """A checked part's rows, W and W R per segment number (total x 3)."""
    return _sums(segment_numbers(chunk, layout), chunk, request, layout.total)


def segment_rows(
    chunk: pl.DataFrame, request: Request, layout: Layout, wanted: Sequence[int]
) -> pl.DataFrame:
    """A checked part's rows of the segments ``wanted``: segment, score, response, weight
    (standardized) and every feature's code."""
    standard = request.standardize(chunk)
    coded = feature_codes(chunk, layout.levels)
    base = pl.DataFrame(
        {
            "s": standard.get_column(nm.SCORE).to_numpy(),
            "r": standard.get_column(nm.RESPONSE).to_numpy(),
            "w": np.broadcast_to(standard.get_column(nm.WEIGHT).to_numpy(), (chunk.height,)),
            **{f"f{f}": c.codes for f, c in enumerate(coded)},
        }
    )
    found = []
    wanted_set = np.asarray(sorted(set(wanted)), dtype=np.int64)
    for ids in segment_numbers(chunk, layout):
        mask = members(ids, wanted_set)
        if mask.any():
            found.append(base.filter(pl.Series(mask)).with_columns(pl.Series(SEGMENT, ids[mask])))
    return pl.concat(found) if found else base.clear().with_columns(pl.lit(0).alias(SEGMENT))


@dataclass(frozen=True)
class Kept:
    """The family kept: segment ids (over all subsets), subset index and number in it."""

    ids: np.ndarray
    which: np.ndarray
    numbers: np.ndarray
    dropped: int


def kept_segments(layout: Layout, family: Segments, sums: np.ndarray) -> Kept:
    """The segments of the family (at least ``min_rows`` rows; the cap), as in-process."""
    spans = [slice(b, b + s) for b, s in zip(layout.bases, layout.sizes, strict=True)]
    kept, dropped = enumerate_family([sums[span, 0] for span in spans], family)
    if not any(x.shape[0] for x in kept):
        largest = int(sums[:, 0].max(initial=0))
        raise EmptySubpopulationError(
            f"no segment has min_rows={family.min_rows} rows (the largest segment examined "
            f"has {largest}), so the family is empty; lower min_rows or use fewer features"
        )
    ids = np.concatenate([layout.bases[i] + k for i, k in enumerate(kept)]).astype(np.int64)
    which = np.repeat(np.arange(len(kept)), [k.shape[0] for k in kept])
    return Kept(ids, which, np.concatenate(kept).astype(np.int64), dropped)


def _remainder(rows: pl.DataFrame, weighted: bool) -> float:
    """z of some rows taken as one segment: ECCE-R (49) over sigma (50) of M. Tygert,
    "Cumulative deviation of a subpopulation from the full population"."""
    from polars_cumdev import kernel as k

    rows = rows.sort("s", maintain_order=True)
    ids = np.zeros(rows.height, dtype=np.int32)
    s, r, w = (np.ascontiguousarray(rows.get_column(c).to_numpy()) for c in ("s", "r", "w"))
    largest = float(w.max()) if w.shape[0] else 1.0
    scale = 2.0 ** -min(max(np.floor(np.log2(largest)) + 1.0, -1000.0), 1020.0)  # as in process
    out, _ = k.calibration_groups(ids, 0, s, r, w, weighted, scale, 1)
    return kernel_z(out, k.C_MAX, k.C_MIN, k.SIGMA_B)


@dataclass(frozen=True)
class Decision:
    """The family-wise decision over the kept segments (in ``Kept.ids``' order), made once
    from their statistics (:func:`decide`); the table and the location follow it."""

    z: np.ndarray
    tests: int
    critical: float
    significant: np.ndarray

    def chosen(self, kept: Kept) -> pl.Expr:
        """A predicate over statistics keyed by ``SEGMENT``: the significant segments."""
        return pl.col(SEGMENT).is_in(kept.ids[self.significant].tolist())


def _body(kept: Kept, stats: pl.DataFrame) -> pl.DataFrame:
    order = pl.DataFrame({SEGMENT: kept.ids})
    return order.join(stats, on=SEGMENT, how="left", maintain_order="left")


def decide(kept: Kept, stats: pl.DataFrame, options: Options) -> Decision:
    """Holm over the kept segments' p-values (simulated where ``stats`` has them), as in
    process (:func:`polars_cumdev.multicalibration.walk.family_frame`)."""
    body = _body(kept, stats)
    sigma = body.get_column(SIGMA_B).fill_null(np.nan).to_numpy()
    kuiper = body.get_column("kuiper").fill_null(np.nan).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        root = np.sqrt(np.maximum(sigma, 0.0))
        z = np.where(root > 0.0, kuiper / root, np.nan)
    tests = int(np.count_nonzero(~np.isnan(z)))
    sim_k = body.get_column(fs.SIM_KUIPER).fill_null(np.nan).to_numpy()
    p = np.asarray(kuiper_pvalue(z), dtype=np.float64)
    family_p = holm_numpy(np.where(np.isnan(sim_k), p, sim_k))
    return Decision(z, tests, critical_z(options.level, tests), family_p <= options.level)


def family_table(
    layout: Layout,
    family: Segments,
    options: Options,
    kept: Kept,
    stats: pl.DataFrame,
    decision: Decision,
    sums: np.ndarray,
    labels: object,
    gather: Callable[[list[int]], pl.DataFrame],
    weighted: bool,
) -> pl.DataFrame:
    """The in-process table from the kept segments' statistics (``SEGMENT`` and
    :data:`SUMMARY_SCHEMA`, with the simulated p-value columns; located where
    ``decision`` is significant) and the family-wise ``decision`` made from them."""
    body = _body(kept, stats)
    coded = list(layout.levels.coded)
    subsets = list(layout.subsets)
    z, tests, critical, significant = (
        decision.z, decision.tests, decision.critical, decision.significant,
    )  # fmt: skip

    plan = echo_plan(z, significant, kept.which, kept.numbers, coded, subsets)
    gathered = gather(sorted({int(kept.ids[i]) for i, _ in plan})) if plan else None

    def split(i: int, t: int) -> tuple[bool, bool, float]:
        assert gathered is not None
        mine = gathered.filter(pl.col(SEGMENT) == int(kept.ids[i]))
        level = segment_levels(coded, subsets, int(kept.which[t]), int(kept.numbers[t]))
        inside = pl.all_horizontal([pl.col(f"f{f}") == v for f, v in level.items()])
        flags = mine.select(inside).to_series()
        if not flags.any():
            return False, False, float("nan")
        if flags.all():
            return True, True, float("nan")
        return True, False, _remainder(mine.filter(~flags), weighted)

    explained, remainder_z = echoes(
        z, significant, kept.which, kept.numbers, coded, subsets, critical, split
    )
    names, condition = _labels(coded, subsets, kept.which, kept.numbers, family)
    overlap = condition.gather(np.maximum(explained, 0)).zip_with(
        pl.Series(explained >= 0), pl.Series([None], dtype=pl.String)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums[kept.ids, 2] / sums[kept.ids, 1]
    count = kept.ids.shape[0]
    located = pl.lit(options.locate) & pl.Series(significant)
    body = body.with_columns(
        pl.when(located).then(pl.col(c)).otherwise(None).alias(c) for c in LOCATION_COLUMNS
    )
    extra = pl.DataFrame(
        {
            "depth": np.array([len(s) for s in subsets], dtype=np.int32)[kept.which],
            "condition": condition,
            "response_mean": mean,
            "_p_bootstrap": pl.Series([None] * count, dtype=pl.Float64),
            fs.SIM_KUIPER: body.get_column(fs.SIM_KUIPER),
            fs.SIM_KS: body.get_column(fs.SIM_KS),
            "critical_z": pl.Series([critical if tests else None] * count, dtype=pl.Float64),
            "tests": np.full(count, tests, dtype=np.int64),
            "dropped": np.full(count, kept.dropped, dtype=np.int64),
            "pooled": pl.Series([pooled_words(coded, family)] * count, dtype=pl.String),
            "overlap": overlap,
            "remainder_z": remainder_z,
        }
    ).with_columns(pl.col("remainder_z").fill_nan(None))
    frame = pl.concat(
        [pl.DataFrame(names), extra, body.select(list(SUMMARY_SCHEMA))], how="horizontal"
    )
    schema = {**{f: pl.String() for f in family.features}, **EXTRA_SCHEMA, **SUMMARY_SCHEMA}
    frame = frame.select(list(schema)).cast(schema)
    features = list(family.features)
    return finish_family(frame.lazy(), features, labels, options).collect(engine="in-memory")
