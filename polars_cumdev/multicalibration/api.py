"""``multicalibration``: the calibration of every segment of a family, family-wise honest.

One lazy query: the rows are sorted by score once, every segment's ECCE-R,
ECCE-MAD, sigma, z and p-value computed as ``calibration(by=...)`` computes
them (method.md 2, equations (44)-(50) of M. Tygert, "Cumulative deviation of a
subpopulation from the full population"), then adjusted for the whole family
(:mod:`~polars_cumdev.method.familywise` or
:mod:`~polars_cumdev.multicalibration.bootstrap`), and each segment compared
with its strongest parent (:mod:`~polars_cumdev.multicalibration.redundancy`).
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from polars_cumdev.calibration.table import BERNOULLI, CALIBRATION_COLUMNS, RENAME
from polars_cumdev.calibration.targets import PROBABILITY_SIGMA_ZERO
from polars_cumdev.errors import InvalidParameterError, InvalidValuesError
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.familywise import holm
from polars_cumdev.method.findings import findings
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.method.prepare import FrameLike, as_lazy, prepare, schema_of
from polars_cumdev.method.statistics import MIN_SCORES, SUMMARY_SCHEMA, normalize
from polars_cumdev.multicalibration.family import Segments
from polars_cumdev.multicalibration.redundancy import with_parents
from polars_cumdev.multicalibration.walk import EXTRA_SCHEMA, Options, family_frame

__all__ = [
    "MULTICALIBRATION_COLUMNS",
    "check_options",
    "finish_family",
    "multicalibration",
    "subpop",
]

METHODS = ("holm", "bootstrap", "stepdown")
#: The per-segment columns carried through normalize beside the feature keys.
CARRIED = (
    "depth",
    "condition",
    "response_mean",
    "_p_bootstrap",
    "critical_z",
    "tests",
    "dropped",
    "pooled",
    "overlap",
    "remainder_z",
    fs.SIM_KUIPER,
    fs.SIM_KS,
)


def family_findings(table: pl.LazyFrame, level: float) -> pl.LazyFrame:
    """The one significance rule (:func:`polars_cumdev.method.findings.findings`) on ``p_family``.

    ``significant`` is ``p_family <= level`` whatever the method (Holm,
    bootstrap, step-down); the located stretch is kept only there, and the
    note of every other tested segment says "not significant: p_family = 0.12
    > 0.05". Applied once, after ``p_family`` is final.
    """
    return findings(table, level, p="p_family", symbol="p_family")


def family_columns(statistics: tuple[str, ...]) -> tuple[str, ...]:
    """A family table's columns after the feature columns, around an analysis' statistics.

    The same for the audit (``statistics`` = the calibration columns) and for
    the screen of segments (the screen's columns): depth, the statistics
    without their location and note, the family-wise columns, the location,
    the parent/child redundancy, and the note last.
    """
    return (
        "depth",
        *[c for c in statistics if c not in (*LOCATION_COLUMNS, "note", "significant")],
        fs.P_METHOD,
        "response_mean",
        "p_family",
        "significant",
        *LOCATION_COLUMNS,
        "parent_z",
        "parent",
        "child_z",
        "child",
        "overlap",
        "remainder_z",
        "finding",
        "condition",
        "critical_z",
        "tests",
        "dropped",
        "pooled",
        "note",
    )


#: Most bootstrap resamples accepted: the largest z of each is kept (8 bytes a resample).
MAX_RESAMPLES = 100_000_000

#: Columns after the feature columns, in order.
MULTICALIBRATION_COLUMNS = family_columns(CALIBRATION_COLUMNS)


def check_options(
    level: object, method: object, resamples: object, seed: object, locate: object = True
) -> Options:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0.0 < level < 1.0:
        raise InvalidParameterError(f"`level` must be a number in (0, 1), got {level!r}")
    if method not in METHODS:
        raise InvalidParameterError(f"`method` must be one of {METHODS}, got {method!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InvalidParameterError(f"`resamples` must be a positive integer, got {resamples!r}")
    if resamples > MAX_RESAMPLES:
        raise InvalidParameterError(
            f"`resamples` must be at most {MAX_RESAMPLES:,} (one maximum z is kept per "
            f"resample), got {resamples!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidParameterError(f"`seed` must be an integer, got {seed!r}")
    if not isinstance(locate, bool):
        raise InvalidParameterError(f"`locate` must be True or False, got {locate!r}")
    return Options(
        level=float(level), method=str(method), resamples=resamples, seed=seed, locate=locate
    )


@entry_point("score", "response", "weight")
def multicalibration(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    segments: Segments,
    level: float = 0.05,
    method: str = "holm",
    resamples: int = 999,
    seed: int = 0,
    _finite_sample: bool = True,
    locate: bool = True,
) -> pl.LazyFrame:
    """Calibration of every segment of a family, with family-wise adjusted p-values.

    Parameters
    ----------
    frame
        DataFrame or LazyFrame of predictions with the segment features.
    score, response, weight
        As in :func:`polars_cumdev.calibration.calibration`: scores in
        [0, 1], responses in [0, 1], optional positive weights.
    segments
        The family, from :func:`polars_cumdev.segments`.
    level
        Family-wise level: a located stretch is stated only for segments with
        ``p_family <= level``; ``critical_z`` is the z they must exceed.
    method
        ``"holm"`` (default): Holm's step-down on the Kuiper p-values
        (method.md 4), valid whatever the dependence between overlapping
        segments. ``"bootstrap"``: the single-step max-z parametric
        bootstrap under calibration (0/1 responses only;
        :mod:`polars_cumdev.multicalibration.bootstrap`). ``"stepdown"``: its
        step-down version (Westfall and Young), never less powerful;
        ``critical_z`` is then its first step's (the single-step one).
    resamples, seed
        The bootstrap's number of resamples B and its seed.
    locate
        False leaves the located stretch out (``from_score`` ... ``deviation``
        null): its second walk is most of the time of a large audit, and
        :func:`~polars_cumdev.recalibration.recalibrate`'s rounds do not use it.

    Returns
    -------
    pl.LazyFrame
        One row per segment: a column per feature (the segment's level as a
        label, null where the segment does not restrict that feature),
        ``depth``, the columns of ``calibration(by=...)`` (``n``,
        ``n_scores``, ``weight``, ``ecce_r`` (49) of M. Tygert, "Cumulative
        deviation of a subpopulation from the full population", ``ecce_mad``
        (48), ``delta``, ``sigma`` (50), ``ecce_r_z``, ``ecce_mad_z``, their p,
        log10 p and Benjamini-Hochberg q across the family), ``response_mean``
        (the segment's weighted mean response), ``p_family`` (family-wise
        adjusted p of ``ecce_r_z``), the located stretch (``from_score``,
        ``to_score``, ``share``, ``deviation``; only where ``p_family <=
        level``), ``parent_z``, ``parent``, ``child_z``, ``child`` (the
        strongest parent and child segments), ``overlap`` and ``remainder_z``
        (the overlapping stronger segment an echo's deviation is explained by,
        and the z of its rows outside it;
        :mod:`~polars_cumdev.multicalibration.echoes`), ``finding`` ("new",
        "inherited", "broader", "echo" or "not significant";
        :mod:`~polars_cumdev.multicalibration.redundancy`), ``condition`` (SQL
        text; :func:`subpop` turns it into an expression), ``critical_z`` (null
        when no segment has a z),
        ``tests`` (segments with a defined z), ``dropped`` (segments left out by
        a cap), ``pooled`` (what the level rule pooled into ``(other)``,
        e.g. "county: 39 values, 8,000 rows"; null when nothing) and
        ``note``; sorted by ``ecce_r_z``, largest first. ``significant``
        (after ``p_family``) is ``p_family <= level`` whatever the method: the
        one decision every face follows (:mod:`polars_cumdev.method.findings`).
    """
    if not isinstance(segments, Segments):
        raise InvalidParameterError(
            "`segments` must be made by polars_cumdev.segments(categorical=..., numerical=...)"
        )
    options = replace(
        check_options(level, method, resamples, seed, locate), finite_sample=bool(_finite_sample)
    )
    lazy = as_lazy(frame)
    reserved = (*MULTICALIBRATION_COLUMNS, *CALIBRATION_COLUMNS, "p_family")
    segments.check(schema_of(lazy), reserved)
    prepared = prepare(
        lazy,
        score=score,
        response=response,
        weight=weight,
        by=list(segments.features) or None,
        score_range=(0.0, 1.0),
        response_range=(0.0, 1.0),
        reserved=reserved,
    )
    features = list(segments.features)
    schema = {**{f: pl.String() for f in features}, **EXTRA_SCHEMA, **SUMMARY_SCHEMA}

    def run(rows: compiled.Rows) -> pl.DataFrame:
        if options.method != "holm" and not compiled.facts(rows, "auto")[nm.BINARY]:
            raise InvalidValuesError(
                f"method={options.method!r} redraws 0/1 responses, but response column "
                f"{response!r} has values other than 0 and 1; use method='holm'"
            )
        return family_frame(rows, segments, options)

    stats = compiled.node(prepared, run, schema)
    return finish_family(stats, features, prepared.labels, options)


def finish_family(
    stats: pl.LazyFrame, features: list[str], labels: dict, options: Options
) -> pl.LazyFrame:
    """The family table from the per-segment frame of
    :func:`~polars_cumdev.multicalibration.walk.family_frame`'s layout.

    p-values, the family-wise ``p_family`` and decision, the parents and
    children, the order: the same steps whichever engine made the frame (in
    process, or a cluster's per-segment statistics).
    """
    keys = [*features, *CARRIED]
    out = normalize(
        stats,
        keys,
        pl.LazyFrame([BERNOULLI]),
        min_scores=MIN_SCORES["calibration"],
        labels=labels,
        decide=False,
        simulated=True,
        sigma_zero=PROBABILITY_SIGMA_ZERO,
    )
    out = out.drop("variance").rename(RENAME)
    if options.method == "holm":
        p_family = holm(pl.col("ecce_r_p"))
    else:
        p_family = pl.when(pl.col("ecce_r_z").is_not_null()).then(pl.col("_p_bootstrap"))
    out = family_findings(out.with_columns(p_family.alias("p_family")), options.level)
    if not options.locate:
        out = out.with_columns(
            pl.when(pl.col("significant") & pl.col("from_score").is_null())
            .then(pl.lit("not located (locate=False)"))
            .otherwise(pl.col("note"))
            .alias("note")
        )
    out = with_parents(out, features, options.level)
    return out.sort(
        ["ecce_r_z", "depth", "condition"], descending=[True, False, False], nulls_last=True
    ).select(*features, *MULTICALIBRATION_COLUMNS)


def subpop(segment: dict | str) -> pl.Expr:
    """The boolean expression selecting a segment's rows.

    ``segment`` is a row of :func:`multicalibration` (a dict, e.g. from
    ``table.row(0, named=True)``) or its ``condition``; filter the frame
    with it and pass the rows to ``calibration_curve`` to drill down.
    """
    condition = segment["condition"] if isinstance(segment, dict) else segment
    if not isinstance(condition, str):
        raise InvalidParameterError(f"expected a segment row or its condition, got {segment!r}")
    return pl.sql_expr(condition)
