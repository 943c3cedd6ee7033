"""Stage 4, second half: from each group's sums to the row a table reports (method.md 4).

Equation numbers are those of M. Tygert, "Cumulative deviation of a
subpopulation from the full population".

:func:`polars_cumdev.method.statistics.summarize` leaves every group with its
Kuiper range D, Kolmogorov-Smirnov maximum G, overall deviation C_n and the
sums of both sigmas ((31)-(32)). :func:`normalize` turns those into what a
user reads: the sigma that applies, z = D / sigma and G / sigma where the
rounding of double precision allows them, asymptotic or finite-sample
p-values, Benjamini-Hochberg q-values across the groups, the note that says
why a number is missing, and the decision on the located stretch
(:mod:`polars_cumdev.method.findings`). Every analysis normalizes through it,
so a group is reported the same way by the screen, the calibration, the
comparisons and the audits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.findings import LEVEL, check_level, finding_steps
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.method.normalization import MIN_SCORES, normalized
from polars_cumdev.method.prepare import Labels
from polars_cumdev.method.resolution import (
    ROUNDING_LEVEL,
    Resolved,
    resolved,
    uneven_means,
    unresolved_sigma,
    verdict,
    verdict_check,
)
from polars_cumdev.method.sigma_terms import chosen_sigma
from polars_cumdev.method.significance import benjamini_hochberg, pvalue_columns
from polars_cumdev.method.summary_columns import (
    C_ERROR,
    OVERFLOWS,
    RMAX,
    SIGMA_B,
    SIGMA_B_ERROR,
    SIGMA_E,
    SIGMA_E_ERROR,
    STATISTIC_COLUMNS,
)
from polars_cumdev.method.weights import SCALE

# Statistics that must be finite whenever they are not null.
_FINITE = ("kuiper", "ks", "delta", "sigma", "kuiper_z", "ks_z")
# normalize's columns of two rules read by several of its steps (dropped by its last select)
_TINY, _UNDEFINED = f"{nm.PREFIX}tiny", f"{nm.PREFIX}undefined"
# A step of normalize: the frame's method, its expressions, and the step as a function of a
# frame in memory when it runs a Python function (which it then calls without a query).
_Step = tuple[str, tuple[pl.Expr, ...], "Callable[[pl.DataFrame], pl.DataFrame] | None"]
#: How a plan of a few rows in memory is collected: without the optimizer's passes, which
#: cost a one-row normalization more than they save (types are still coerced and checked).
UNOPTIMIZED = pl.QueryOptFlags.none()


#: The note of a group whose z is at most 2: no stretch stands out from the noise.
NOT_LOCATED = "D <= 2 sigma: not located"


#: Below this largest |response| (nonzero), squares of responses times squares of
#: weight shares come near or below the smallest normal double (2^-1022): sigma
#: underflows (to 0 or to a subnormal of few bits) whatever the spread.
TINY_RESPONSES = 2.0**-400
#: The note of groups whose responses are all that small (:func:`normalize`).
TOO_SMALL = (
    "responses too small for double precision (largest |response| below 2^-400, about "
    "3.9e-121): their squares underflow, so sigma and z are undefined; multiply the "
    "responses by a power of two such as 2^600 (statistics in response units scale with "
    "it, z and p do not)"
)

#: The note of a group whose sigma is 0, by default (:func:`normalize`).
SIGMA_ZERO = "sigma is 0 (no spread of responses within the bins): z undefined"


def normalize(
    stats: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    binary: pl.LazyFrame | None,
    *,
    min_scores: int = MIN_SCORES["subpopulation"],
    scale: pl.LazyFrame | None = None,
    labels: Labels | None = None,
    sigma_zero: str = SIGMA_ZERO,
    level: float = LEVEL,
    decide: bool = True,
    simulated: bool = False,
    names: Mapping[str, str] | None = None,
) -> pl.LazyFrame:
    """Pick sigma, divide, attach p-values (method.md 4) and BH q-values; sort; check.

    Parameters
    ----------
    stats
        Output of :func:`summarize`. A DataFrame (a small summary in memory,
        with ``binary`` and ``scale`` None) is normalized by the same steps,
        those that run a Python function on the frame seen whole calling it
        directly instead of inside a plan (the plan of the other steps is
        then returned, to be collected).
    keys
        Grouping columns (used to break ties in the ordering).
    binary
        Output of :func:`is_binary`: which sigma applies (``None`` when
        ``stats`` carries those columns itself).
    min_scores
        Fewest merged scores for which the normalized statistics are
        reported: 2 for a subpopulation against the full population (a
        single point says nothing about a trend), 1 for calibration, where
        sigma > 0 alone makes them defined (method.md 2).
    scale
        One-row frame of :func:`polars_cumdev.method.weights.rescale`: the factor
        the weights were multiplied by, divided out of ``weight`` here.
    labels
        How errors name the weight and response columns.
    sigma_zero
        The note of a group whose sigma is 0, in the terms of the comparison
        (:data:`SIGMA_ZERO` speaks of bins).
    level
        Significance level of the located stretch
        (:mod:`polars_cumdev.method.findings`): stated only where ``kuiper_q``
        is at most ``level`` (``kuiper_p`` without keys, the same number).
    decide
        Apply the rule of :mod:`polars_cumdev.method.findings` on ``kuiper_q``
        (default). ``False`` leaves the stretch as found and ``significant``
        null, for a caller that decides on another adjusted p-value (a
        multicalibration family's ``p_family``) and applies the rule itself.
    simulated
        ``stats`` carries finite-sample p-values (:mod:`.finite_sample`): used, with ``p_method``.
    names
        The statistics' columns to return, each with its name in the result
        (an analysis's own names, in one step with the last selection); by
        default every column of ``STATISTIC_COLUMNS`` under its own name.

    Returns
    -------
    pl.LazyFrame
        ``stats`` with ``sigma``, ``kuiper_z``, ``ks_z``, ``kuiper_p``,
        ``ks_p``, ``kuiper_log10p``, ``ks_log10p``, ``kuiper_q``, ``ks_q``,
        the located stretch (:mod:`polars_cumdev.method.location`; null where z is,
        where D <= 2 sigma, or where the group is not significant at ``level``),
        ``variance`` and ``note``, sorted by
        ``kuiper_z`` (largest first,
        nulls last) and then by the keys. A statistic whose rounding error
        is not known to be below :data:`RESOLUTION` of its scale (bins too
        uneven, :func:`resolved`) is null, with the reason in ``note``.
        Collecting it raises :class:`~polars_cumdev.errors.InvalidValuesError`
        when a statistic is not finite: no NaN or infinity is ever returned.
    """
    if isinstance(stats, pl.DataFrame) and (binary is not None or scale is not None):
        stats = stats.lazy()  # (joined with frames of a plan: normalized in the plan)
    out = stats if binary is None else stats.join(binary, how="cross", maintain_order="left")
    if scale is not None:
        out = out.join(scale, how="cross", maintain_order="left").with_columns(
            pl.col("weight") / pl.col(SCALE)
        )
    level = check_level(level) if decide else level  # (refused before the cache's look-up)
    labels = labels if labels is not None else Labels()
    steps = _normalize_steps(tuple(keys), min_scores, labels, sigma_zero, level, decide, simulated)
    # A frame in memory (joined with frames in memory): the steps that run a Python function
    # on the frame seen whole call it directly on the frame collected so far, without a
    # query around it; the steps between run as one plan each, not optimized (a plan of a
    # few rows in memory: nothing to push down, and the passes cost more than they save).
    direct = isinstance(out, pl.DataFrame)
    for method, exprs, run in steps:
        if direct and run is not None:
            if isinstance(out, pl.LazyFrame):
                out = out.collect(engine="in-memory", optimizations=UNOPTIMIZED)
            out = run(out)
        else:
            out = getattr(out.lazy(), method)(*exprs)
    out = out.lazy()
    if keys:  # (without keys, one row: nothing to sort)
        out = out.sort(
            ["kuiper_z", *keys], descending=[True] + [False] * len(keys), nulls_last=True
        )
    chosen = (
        STATISTIC_COLUMNS
        if names is None
        else [pl.col(c).alias(name) if c != name else c for c, name in names.items()]
    )
    return out.select(*keys, *chosen, *(["p_method"] if simulated else []))


@functools.lru_cache(maxsize=64)
def _normalize_steps(
    keys: tuple[str, ...],
    min_scores: int,
    labels: Labels,
    sigma_zero: str,
    level: float,
    decide: bool,
    simulated: bool,
) -> tuple[_Step, ...]:
    """:func:`normalize`'s steps after the joins: (``"with_columns"`` or ``"filter"``, the
    expressions, and for a step whose expression runs a Python function on the frame seen
    whole, that step run on a frame in memory by calling the function itself, or None),
    built once per set of arguments (building them cost a small call about 2 ms, as much as
    running them on one row) and applied to each frame in turn."""
    sigma = pl.col("sigma")
    c_ok, c_floor, sigma_ok = (pl.col(f"_{name}_ok") for name in Resolved._fields)
    single = pl.col("n_scores") < min_scores
    # (each held in a column of its own, read by the steps after it: written into each of
    # them, the expressions cost the plan's conversion about a millisecond more)
    tiny, undefined = pl.col(_TINY), pl.col(_UNDEFINED)
    tiny_rule = (pl.col(RMAX) > 0.0) & (pl.col(RMAX) < TINY_RESPONSES)
    undefined_rule = ~normalized(pl.col("n_scores"), sigma, min_scores) | ~c_ok | ~sigma_ok | tiny
    note = (
        pl.when(tiny)
        .then(pl.lit(TOO_SMALL))
        .when(~c_floor)
        .then(pl.lit(uneven_means(labels)))
        .when(~sigma_ok)
        .then(pl.lit(unresolved_sigma(labels)))
        .when(single)
        .then(pl.lit("only one distinct score: the normalized statistics need at least two"))
        .when(sigma <= 0.0)
        .then(pl.lit(sigma_zero))
        .when(~c_ok)
        .then(pl.lit(ROUNDING_LEVEL))
        .when(pl.col("from_score").is_null())
        .then(pl.lit(NOT_LOCATED))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    binary = pl.col(nm.BINARY)
    sigma2_error = pl.when(binary).then(pl.col(SIGMA_B_ERROR)).otherwise(pl.col(SIGMA_E_ERROR))
    flags = resolved(
        pl.col("kuiper"), pl.col("ks"), sigma, pl.col(C_ERROR), sigma2_error, pl.col(RMAX)
    )
    checked = ("weight", *_FINITE)
    check = verdict_check(checked, keys, labels, overflows=OVERFLOWS)

    def verified(frame: pl.DataFrame) -> pl.DataFrame:  # (the filter keeps every row)
        check(frame)
        return frame

    def with_pvalues(frame: pl.DataFrame) -> pl.LazyFrame:
        return frame.lazy().with_columns(pvalue_columns(simulated, rows=frame))

    steps: list[_Step] = [
        (
            "with_columns",
            (
                chosen_sigma(pl.col(SIGMA_B), pl.col(SIGMA_E)).alias("sigma"),
                pl.when(binary)
                .then(pl.lit("bernoulli"))
                .otherwise(pl.lit("empirical"))
                .alias("variance"),
            ),
            None,
        ),
        (
            "with_columns",
            (
                *[
                    flag.alias(f"_{name}_ok")
                    for name, flag in zip(Resolved._fields, flags, strict=True)
                ],
                tiny_rule.alias(_TINY),
            ),
            None,
        ),
        ("with_columns", (undefined_rule.alias(_UNDEFINED),), None),
        (
            "with_columns",
            (
                pl.when(undefined).then(None).otherwise(pl.col("kuiper") / sigma).alias("kuiper_z"),
                pl.when(undefined).then(None).otherwise(pl.col("ks") / sigma).alias("ks_z"),
                note.alias("note"),
                *[pl.when(c_floor).then(pl.col(c)).alias(c) for c in ("kuiper", "ks", "delta")],
                pl.when(c_floor & sigma_ok & ~tiny).then(sigma).alias("sigma"),
                *[pl.when(~undefined).then(pl.col(c)).alias(c) for c in LOCATION_COLUMNS],
            ),
            None,
        ),
        # One check of all: the overflows, then the weight (which no step changes), then
        # the statistics, each raising as its own check did before the steps between.
        ("filter", (verdict(checked, keys, labels, overflows=OVERFLOWS),), verified),
        ("with_columns", tuple(pvalue_columns(simulated)), with_pvalues),
    ]
    # (without keys the frame is one row, a family of one: BH's q is p itself, min(1, p * 1
    # / 1), bit for bit, without the sorts that cost a small call about 2 ms of planning;
    # the decision then reads p, in the same step)
    q_values = tuple(
        (benjamini_hochberg(pl.col(p)) if keys else pl.col(p)).alias(q)
        for p, q in (("kuiper_p", "kuiper_q"), ("ks_p", "ks_q"))
    )
    if not decide:
        undecided = pl.lit(None, dtype=pl.Boolean).alias("significant")
        steps.append(("with_columns", (*q_values, undecided), None))
    else:
        decision, stated = finding_steps(
            level, p="kuiper_q" if keys else "kuiper_p", symbol="q" if keys else "p"
        )
        if keys:
            steps += [("with_columns", q_values, None), ("with_columns", (decision,), None)]
        else:
            steps.append(("with_columns", (*q_values, decision), None))
        steps.append(("with_columns", stated, None))
    return tuple(steps)
