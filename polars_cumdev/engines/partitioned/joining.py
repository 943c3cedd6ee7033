"""Step 4: the per-group scan over the range results, and the screen's final columns."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from polars_cumdev.engines.partitioned import events
from polars_cumdev.engines.partitioned.cells import Plan
from polars_cumdev.engines.partitioned.columns import Q_HI, Q_LO, QUERY, RANGE, TOTAL_WEIGHT
from polars_cumdev.engines.partitioned.step import RangeResult, zero_sums
from polars_cumdev.method import _names as nm
from polars_cumdev.method.accumulate import per_group
from polars_cumdev.method.bins import bin_moments
from polars_cumdev.method.finite_groups import SIMULATED
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.method.prefix_sums import COUNT_SUMS, FLOAT_SUMS, MAXIMA, SUMS
from polars_cumdev.method.statistics import (
    C_ERROR,
    OVERFLOWS,
    RMAX,
    SIGMA_B,
    SIGMA_B_ERROR,
    SIGMA_E,
    SIGMA_E_ERROR,
    normalize,
)
from polars_cumdev.method.sums import ordered_sum, with_running_sums
from polars_cumdev.method.weights import SCALE

__all__ = ["aggregate", "combine", "combine_cells", "finish"]


def _range_table(plan: Plan, results: Sequence[RangeResult | None]) -> pl.DataFrame:
    """Per range r: its totals T_r (``T*``) and the totals of the ranges up to it.

    For the counts, T_{<=r} (``I*``) and T_{<r} (``X*``). For the float sums,
    the pair of each range's total is added into one number, accumulated
    over the ranges as a compensated pair (``M*``, ``M*_err``: up to and
    including r; ``N*``, ``N*_err``: before r), beside the accumulated
    magnitudes (``A*`` up to r, ``N*`` of them before r) that bound the
    rounding of those one-number totals. For the running maxima
    (:data:`polars_cumdev.method.bins.MAXIMA`), ``I*`` is the largest over the
    ranges up to r.
    """
    rows = []
    for r in range(plan.ranges):
        res = results[r] if r < len(results) else None
        frame = res.totals if res is not None else pl.select(zero_sums())
        rows.append(frame.with_columns(pl.lit(r, dtype=pl.Int64).alias(RANGE)))
    totals = pl.concat(rows).sort(RANGE)
    # A float sum's range total (its pair added) accumulated over the ranges
    # with its own compensation, so that whole ranges between two ends are
    # a difference accurate relative to those ranges.
    merged = with_running_sums(
        totals, {f"M{c}": pl.col(c) + pl.col(f"{c}_err") for c in FLOAT_SUMS}
    ).with_columns(
        (pl.col(c) + pl.col(f"{c}_err")).abs().cum_sum().alias(f"A{c}") for c in FLOAT_SUMS
    )
    inclusive = [pl.col(c).cum_sum() for c in COUNT_SUMS]
    before = [
        pl.col(name).shift(1, fill_value=0.0).alias(alias)
        for c in FLOAT_SUMS
        for name, alias in ((f"M{c}", f"N{c}"), (f"M{c}_err", f"N{c}_err"), (f"A{c}", f"NA{c}"))
    ]
    return merged.select(
        pl.col(RANGE),
        *[pl.col(c).alias(f"T{c}") for c in SUMS],
        *[pl.col(f"M{c}") for c in FLOAT_SUMS],
        *[pl.col(f"M{c}_err") for c in FLOAT_SUMS],
        *[pl.col(f"A{c}") for c in FLOAT_SUMS],
        *before,
        *[s.alias(f"I{c}") for c, s in zip(COUNT_SUMS, inclusive, strict=True)],
        *[
            s.shift(1, fill_value=0).alias(f"X{c}")
            for c, s in zip(COUNT_SUMS, inclusive, strict=True)
        ],
        *[pl.col(m).alias(f"T{m}") for m in MAXIMA],
        *[pl.col(m).cum_max().alias(f"I{m}") for m in MAXIMA],
    )


def _through(c: str) -> str:
    """Column of the range table holding the sums up to and including a range."""
    return f"M{c}" if c not in COUNT_SUMS else f"I{c}"


def _before(c: str) -> str:
    """Column of the range table holding the sums of the ranges before a range."""
    return f"N{c}" if c not in COUNT_SUMS else f"X{c}"


def _span(
    lo_range: pl.Expr,
    lo: Sequence[pl.Expr],
    lo_total: Sequence[pl.Expr],
    lo_through: Sequence[pl.Expr],
    hi_range: pl.Expr,
    hi: Sequence[pl.Expr],
    hi_before: Sequence[pl.Expr],
) -> list[pl.Expr]:
    """The running sums over the rows with B_lo < S <= B_hi, from range-local prefixes.

    Each end is a range index and the local prefix there. In one range the
    sums are a difference of local prefixes; across ranges they are the rest
    of the lower range (T_lo - local_lo), the whole ranges in between
    (T_{<hi} - T_{<=lo}, from the range table's compensated totals) and the
    local prefix of the upper range. Rounding then scales with the sums of
    a range, not of the whole population.
    """
    same = lo_range == hi_range
    return [
        pl.when(same).then(h - low).otherwise((tot - low) + (before - through) + h)
        for low, tot, through, h, before in zip(
            lo, lo_total, lo_through, hi, hi_before, strict=True
        )
    ]


def _span_error(
    total: dict[str, pl.Expr],
    same: pl.Expr,
    lomax: Callable[[str], pl.Expr],
    between: Callable[[str], pl.Expr],
    ranges: int,
) -> Callable[[str], pl.Expr]:
    """Bounds of the rounding error of the sums of a span (:func:`_span`).

    Within one range, as :func:`polars_cumdev.method.bins.difference_error`, with
    the largest |error sum| of the ranges up to the upper end. Across
    ranges, the whole ranges in between add the rounding of their
    one-number totals (at most 2^-52 of their magnitudes, ``between``) and
    that of the compensated accumulation over at most ``ranges`` terms.
    """
    eps = 2.0**-52
    rows = total["_pn"].cast(pl.Float64)

    def error(name: str) -> pl.Expr:
        own = eps * (rows * lomax(name) + total[name].abs() + total[f"{name}_err"].abs())
        across = eps * (1.0 + eps * ranges) * between(name)
        return own + pl.when(same).then(0.0).otherwise(across)

    return error


def combine(plan: Plan, results: Sequence[RangeResult | None]) -> pl.DataFrame:
    """Per-group statistics in the layout of :func:`polars_cumdev.method.statistics.summarize`.

    ``results[r]`` is the :class:`RangeResult` of range r (``None`` for a
    range with no row). The end points of every cell get their bins from the
    range totals and the query answers, and the offsets of C are carried
    across each group's cells: the maximum of C over a cell is its offset
    plus the cell's partial maximum, and so on. The location columns are
    null here; :mod:`polars_cumdev.engines.partitioned.locating` fills them.
    """
    return aggregate(plan, combine_cells(plan, results))


def combine_cells(plan: Plan, results: Sequence[RangeResult | None]) -> pl.DataFrame:
    """The cells of :func:`combine` before the per-group aggregation, in (keys, range) order.

    Beside the range step's columns: ``_tf`` and ``_tl`` (the terms of the
    cell's first and last point, divided by the group's total weight),
    ``_step`` (the cell's increment of C), ``_max`` and ``_min`` (the
    extremes of C over the cell), and ``TOTAL_WEIGHT``.
    """
    keys = plan.keys
    last_range = plan.ranges - 1
    table = _range_table(plan, results)
    answers = pl.concat(
        [res.answers for res in results if res is not None and res.answers.height]
        or [
            pl.DataFrame(
                schema={
                    QUERY: pl.UInt32,
                    **{c: pl.Int64 if c in COUNT_SUMS else pl.Float64 for c in SUMS},
                }
            )
        ],
        how="vertical_relaxed",
    )
    answered = plan.queries.join(answers, on=QUERY, how="left").select(
        pl.col(QUERY), pl.col(RANGE), *[pl.col(c).fill_null(0) for c in SUMS]
    )

    def side(name: str) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Query answers and range table with columns prefixed by ``name``."""
        a = answered.rename({QUERY: f"{name}_q", RANGE: f"{name}_r"})
        a = a.rename({c: f"{name}{c}" for c in SUMS})
        return a, table.rename(lambda c, n=name: f"{n}_r" if c == RANGE else f"{n}{c}")

    cell_frames = [
        res.cells.with_columns(pl.lit(r, dtype=pl.Int64).alias(RANGE))
        for r, res in enumerate(results)
        if res is not None and res.cells.height
    ]
    cells = pl.concat(cell_frames, how="vertical_relaxed")
    on = [*keys, RANGE]
    cells = cells.join(plan.cells, on=on, how="left", nulls_equal=True)
    lo_answers, lo_table = side("lo")
    hi_answers, hi_table = side("hi")
    _, own_table = side("own")
    # The lower end of a cell (its first point's lower midpoint): a query, or -inf
    # (range 0, local prefix 0); the upper end: a query, or +inf (last range, its total).
    cells = (
        cells.join(lo_answers, left_on=Q_LO, right_on="lo_q", how="left")
        .join(hi_answers, left_on=Q_HI, right_on="hi_q", how="left")
        .with_columns(
            pl.col("lo_r").fill_null(0),
            pl.col("hi_r").fill_null(last_range),
            *[pl.col(f"lo{c}").fill_null(0) for c in SUMS],
        )
        .join(lo_table, on="lo_r", how="left")
        .join(hi_table, on="hi_r", how="left")
        .join(own_table, left_on=RANGE, right_on="own_r", how="left")
        .with_columns(
            pl.when(pl.col(Q_HI).is_null())
            .then(pl.col(f"hiT{c}"))
            .otherwise(pl.col(f"hi{c}"))
            .alias(f"hi{c}")
            for c in SUMS
        )
    )
    multi = pl.col("n_scores") > 1
    own = pl.col(RANGE)
    lo_r, hi_r = pl.col("lo_r"), pl.col("hi_r")

    def first_hi(column: str) -> pl.Expr:
        """The first point's upper end: its own range when the cell has more points."""
        return pl.when(multi).then(pl.col(f"own{column}")).otherwise(pl.col(f"hi{column}"))

    first = _span(
        lo_r,
        [pl.col(f"lo{c}") for c in SUMS],
        [pl.col(f"loT{c}") for c in SUMS],
        [pl.col(f"lo{_through(c)}") for c in SUMS],
        pl.when(multi).then(own).otherwise(hi_r),
        [pl.when(multi).then(pl.col(f"f_up{c}")).otherwise(pl.col(f"hi{c}")) for c in SUMS],
        [first_hi(_before(c)) for c in SUMS],
    )
    last = _span(
        own,
        [pl.col(f"l_lo{c}") for c in SUMS],
        [pl.col(f"ownT{c}") for c in SUMS],
        [pl.col(f"own{_through(c)}") for c in SUMS],
        hi_r,
        [pl.col(f"hi{c}") for c in SUMS],
        [pl.col(f"hi{_before(c)}") for c in SUMS],
    )
    centre = pl.lit(plan.centre)
    first_hi_range = pl.when(multi).then(own).otherwise(hi_r)
    first_sums = dict(zip(SUMS, first, strict=True))
    first_error = _span_error(
        first_sums,
        lo_r == first_hi_range,
        lambda c: first_hi(f"I{c}_lomax"),
        lambda c: (first_hi(f"NA{c}") - pl.col(f"loA{c}")).clip(lower_bound=0.0),
        plan.ranges,
    )
    last_sums = dict(zip(SUMS, last, strict=True))
    last_error = _span_error(
        last_sums,
        own == hi_r,
        lambda c: pl.col(f"hiI{c}_lomax"),
        lambda c: (pl.col(f"hiNA{c}") - pl.col(f"ownA{c}")).clip(lower_bound=0.0),
        plan.ranges,
    )
    f = bin_moments(first_sums.__getitem__, centre, first_error, name="_first")
    l_ = bin_moments(last_sums.__getitem__, centre, last_error, name="_last")
    f_ref, f_var, l_ref, l_var = f.reference, f.variance, l_.reference, l_.variance
    # The group's total weight, summed over its cells in range order; the
    # cells' partial sums carry W'_k in place of a_k and are divided here.
    total = pl.col(TOTAL_WEIGHT)
    cells = l_.on(f.on(cells.lazy())).collect()
    cells = cells.sort(on, nulls_last=True).with_columns(
        per_group(ordered_sum(pl.col("weight")), keys).alias(TOTAL_WEIGHT)
    )
    cells = cells.with_columns(
        *[(pl.col(c) / total) for c in ("q_sum", "q_max", "q_min", "e_c")],
        *[(pl.col(c) / (total * total)) for c in ("s_b", "s_e", "e_b", "e_e")],
    )
    f_a = pl.col("f_w") / total
    l_a = pl.col("l_w") / total
    cells = cells.with_columns(
        (f_a * (pl.col("f_r") - f_ref)).alias("_tf"),
        pl.when(multi).then(l_a * (pl.col("l_r") - l_ref)).otherwise(0.0).alias("_tl"),
        (f_a * f_a * pl.col("f_tie") * f_ref * (1.0 - f_ref)).alias("_fb"),
        (f_a * f_a * pl.col("f_tie") * f_var).alias("_fv"),
        pl.when(multi)
        .then(l_a * l_a * pl.col("l_tie") * l_ref * (1.0 - l_ref))
        .otherwise(0.0)
        .alias("_lb"),
        pl.when(multi).then(l_a * l_a * pl.col("l_tie") * l_var).otherwise(0.0).alias("_lv"),
        *events.cell_terms(f_ref, l_ref, multi, total),
    )
    # Bounds of the rounding errors (polars_cumdev.method.sigma_terms.error_terms) of
    # the two end points, beside the interior ones of the range step.
    rounding = 8.0 * 2.0**-52
    cells = cells.with_columns(
        (
            pl.col("e_c")
            + f_a * f.reference_error
            + pl.when(multi).then(l_a * l_.reference_error).otherwise(0.0)
        ).alias("e_c"),
        (
            pl.col("e_b")
            + f_a * f_a * pl.col("f_tie") * f.bernoulli_error
            + pl.when(multi).then(l_a * l_a * pl.col("l_tie") * l_.bernoulli_error).otherwise(0.0)
            + rounding * (pl.col("_fb").abs() + pl.col("_lb").abs())
        ).alias("e_b"),
        (
            pl.col("e_e")
            + f_a * f_a * pl.col("f_tie") * f.variance_error
            + pl.when(multi).then(l_a * l_a * pl.col("l_tie") * l_.variance_error).otherwise(0.0)
            + rounding * (pl.col("_fv").abs() + pl.col("_lv").abs())
        ).alias("e_e"),
        (
            pl.col("overflows") + f.overflow.cast(pl.Int64) + (multi & l_.overflow).cast(pl.Int64)
        ).alias("overflows"),
    )
    # Inside a cell: C_f = off + tf; C_j = off + tf + Q_j; C_l = off + tf + Q_sum + tl.
    end = pl.when(multi).then(pl.col("q_sum") + pl.col("_tl"))
    cells = cells.with_columns(
        (pl.col("_tf") + pl.col("q_sum") + pl.col("_tl")).alias("_step"),
        pl.max_horizontal(pl.lit(0.0), pl.col("q_max"), end).alias("_cmax"),
        pl.min_horizontal(pl.lit(0.0), pl.col("q_min"), end).alias("_cmin"),
    )
    offset = per_group(pl.col("_step").cum_sum(), keys) - pl.col("_step") + pl.col("_tf")
    return cells.with_columns(
        (offset + pl.col("_cmax")).alias("_max"),
        (offset + pl.col("_cmin")).alias("_min"),
    )


def aggregate(plan: Plan, cells: pl.DataFrame) -> pl.DataFrame:
    """:func:`combine`'s per-group statistics from :func:`combine_cells`' output."""
    keys = plan.keys
    # Float sums added one cell at a time, in range order (ordered_sum): a group-by's
    # sum adds partial sums in an order that varies from run to run (Polars 2.1), which
    # made the engines' last bits differ between two runs on the same data.
    aggs = [
        pl.col("n").sum().cast(pl.Int64),
        pl.col("n_scores").sum().cast(pl.Int64),
        ordered_sum(pl.col("weight")).alias("weight"),
        (
            pl.col("_max").max().clip(lower_bound=0.0) - pl.col("_min").min().clip(upper_bound=0.0)
        ).alias("kuiper"),
        pl.max_horizontal(pl.col("_max").max().abs(), pl.col("_min").min().abs()).alias("ks"),
        ordered_sum(pl.col("_step")).alias("delta"),
        (
            ordered_sum(pl.col("s_b")) + ordered_sum(pl.col("_fb")) + ordered_sum(pl.col("_lb"))
        ).alias(SIGMA_B),
        (
            ordered_sum(pl.col("s_e")) + ordered_sum(pl.col("_fv")) + ordered_sum(pl.col("_lv"))
        ).alias(SIGMA_E),
        ordered_sum(pl.col("e_c")).alias(C_ERROR),
        ordered_sum(pl.col("e_b")).alias(SIGMA_B_ERROR),
        ordered_sum(pl.col("e_e")).alias(SIGMA_E_ERROR),
        pl.col("overflows").sum().alias(OVERFLOWS),
        *[ordered_sum(pl.col(c)).alias(c) for c in events.SUMS],  # (NaN: a cell did not count)
    ]
    # The located stretch needs each group's whole curve, which no range
    # holds: a second pass over the ranges finds it (polars_cumdev.engines.partitioned.locating).
    unlocated = [pl.lit(None, dtype=pl.Float64).alias(c) for c in LOCATION_COLUMNS]
    if keys:
        stats = cells.group_by(keys, maintain_order=True).agg(aggs).with_columns(unlocated)
    else:
        stats = cells.select(aggs).with_columns(unlocated)
    return events.with_events(stats)


def finish(plan: Plan, stats: pl.DataFrame) -> pl.DataFrame:
    """The screen's columns from :func:`combine`'s output (sigma, z, p, q; sorted).

    Raises the errors of :func:`polars_cumdev.method.statistics.normalize` (bins too
    uneven to resolve, a statistic that is not finite). The location columns
    are those of ``stats`` (:func:`polars_cumdev.engines.partitioned.locating.stitch`
    fills them).
    """
    binary = pl.LazyFrame({nm.BINARY: [plan.binary], RMAX: [plan.response_scale]})
    scale = pl.LazyFrame({SCALE: [plan.weight_scale]})
    # The simulated p-values where .finite added them, else none (asymptotic).
    asymptotic = [pl.lit(None, dtype=pl.Float64).alias(c) for c in SIMULATED if c not in stats]
    out = normalize(
        stats.lazy().with_columns(asymptotic), plan.keys, binary, scale=scale,
        labels=plan.labels, level=plan.level, simulated=True,
    )  # fmt: skip
    return out.collect(engine="in-memory")
