"""Finite-sample p-values of named groups (``calibration(by=...)``), in the lazy plan.

The groups whose asymptotic p-value could matter (Kuiper or Kolmogorov-Smirnov
p at most :func:`~polars_cumdev.method.finite_sample.cutoff`, judged from z
against the critical values, so before :func:`~polars_cumdev.method.statistics.normalize`)
are joined with their rows; one batch function over those rows
(:mod:`~polars_cumdev.method.finite_batch`) numbers the groups, keeps the ones
whose responses are all 0 or 1 and whose effective number of events is below
:data:`~polars_cumdev.method.finite_sample.MIN_EVENTS`, and simulates them in
one compiled call (:func:`~polars_cumdev.method.finite_sample.simulate`);
calibration's groups with soft labels (some response strictly between 0 and
1) and the same criterion get the conservative bound of
:mod:`~polars_cumdev.method.finite_bound` instead (``p_method`` "bound"). The
result, keyed like the groups, is joined back as the columns
``normalize(simulated=True)`` reads.
Both engines pass the same prepared rows (the user's scores, responses and
weights as float64), so both get the same draws and the same p-values.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.finite_batch import (
    ALPHA,
    KS_Z,
    KUIPER_Z,
    SIM_SCHEMA,
    TESTS,
    Null,
    resample_groups,
    simulate_groups,
)
from polars_cumdev.method.finite_bins import bin_means
from polars_cumdev.method.keys import join_on_keys
from polars_cumdev.method.pvalues import ks_critical, kuiper_critical
from polars_cumdev.method.summary_columns import EVENTS, SIGMA_B, SIGMA_E

# TESTS, resample_groups and simulate_groups live in finite_batch (named here too).
__all__ = [
    "SIMULATED",
    "TESTS",
    "any_candidate",
    "candidate",
    "resample_groups",
    "simulate_groups",
    "tests_expr",
    "with_simulated",
    "without_set_aside",
]

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

#: The columns :func:`with_simulated` adds.
SIMULATED = (fs.SIM_KUIPER, fs.SIM_KS)

_ALL = "__cd_all"
_TAG = "__cd_tag"


@functools.lru_cache(maxsize=16)
def _critical(cut: float) -> tuple[float, float]:
    """The z of the Kuiper and KS statistics whose asymptotic p-value is ``cut`` (a solve each)."""
    if cut >= 1.0:  # every p-value is at most 1: every group with a z is a candidate
        return 0.0, 0.0
    if cut == 0.1:  # the default cutoff, solved once (tests/method/test_pvalues.py checks it):
        return _KUIPER_01, _KS_01  # a small screen then never imports SciPy's root finder
    return kuiper_critical(cut), ks_critical(cut)


#: kuiper_critical(0.1) and ks_critical(0.1), as SciPy's brentq gives them.
_KUIPER_01, _KS_01 = 2.2411746364498923, 1.9599639494186472


def _nan_safe(frame: pl.LazyFrame, floats: Sequence[str]) -> pl.LazyFrame:
    """Float keys as the pair (is NaN, value with NaN as 0): joins then match NaN with NaN."""
    return frame.with_columns(
        *[pl.col(k).is_nan().alias(f"{k}__cd_nan") for k in floats],
        *[pl.col(k).fill_nan(0.0).alias(f"{k}__cd_value") for k in floats],
    )


def _simulate(
    batch: pl.DataFrame, keys: list[str], level: float, screen: bool, null: Null = "score"
) -> pl.DataFrame:
    """Per candidate group of ``batch`` (its rows): simulated p-values where it fails.

    For the screen, ``batch`` also holds the full population (tag 0), whose
    bin means at the group's scores are the null probabilities, held fixed.
    ``null``: see :func:`with_simulated`.
    """
    if not screen:
        return simulate_groups(batch, keys, level, null=null)
    groups, full = _tagged(batch)
    population = full[nm.RESPONSE].to_numpy()
    if not np.all((population == 0.0) | (population == 1.0)):  # real responses, soft labels
        return resample_groups(groups, keys, level, full)
    means = functools.partial(bin_means, full)
    return simulate_groups(groups, keys, level, means)


def _tagged(batch: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The candidates' rows (tag 1) and the full population (tag 0) of the screen's batch.

    The plan concatenates them in that order, so two slices (no copy) hold them: at
    1e7 rows two filters cost about 0.7 s. Any other order is filtered.
    """
    tag = batch[_TAG].to_numpy()
    k = int(np.count_nonzero(tag == 1))
    if bool(np.all(tag[:k] == 1)) and bool(np.all(tag[k:] == 0)):
        return batch.slice(0, k), batch.slice(k)
    return batch.filter(pl.col(_TAG) == 1), batch.filter(pl.col(_TAG) == 0)


@functools.lru_cache(maxsize=16)
def candidate(level: float, screen: bool) -> pl.Expr:
    """Whether a row of :func:`~polars_cumdev.method.statistics.summarize`'s layout is a
    candidate: its asymptotic Kuiper or KS p-value at most the cutoff, sigma positive.
    (Built once per level: an expression is not changed by its use.)"""
    kuiper_z, ks_z = _critical(fs.cutoff(level))
    sigma = pl.col(SIGMA_B).clip(lower_bound=0.0).sqrt()
    small = (pl.col("kuiper") >= kuiper_z * sigma) | (pl.col("ks") >= ks_z * sigma)
    small = small & (pl.col(SIGMA_B) > 0.0)
    if screen:  # either sigma (31) or (32), whichever normalize will take (for real
        # responses (32): Rt (1 - Rt) of (31) may then be negative)
        other = pl.col(SIGMA_E).fill_null(0.0).clip(lower_bound=0.0).sqrt()
        large = (pl.col("kuiper") >= kuiper_z * other) | (pl.col("ks") >= ks_z * other)
        small = small | (large & (pl.col(SIGMA_E).fill_null(0.0) > 0.0))
        small = small & (pl.col("n_scores") >= 2)  # (one score: no z, method.md 1)
    return small


def _positive(screen: bool) -> pl.Expr:
    """Whether a row has a positive sigma: (31), or for the screen either (31) or (32),
    of M. Tygert, "Cumulative deviation of a subpopulation from the full population"."""
    if not screen:
        return pl.col(SIGMA_B) > 0.0
    return (pl.col(SIGMA_B) > 0.0) | (pl.col(SIGMA_E).fill_null(0.0) > 0.0)


def without_set_aside(candidates: FrameT) -> FrameT:
    """``candidates`` (groups' statistics, eager or lazy) less the ones
    :func:`~.finite_sample.set_aside` drops, when they carry the compiled walks' count
    (``EVENTS``: the kernel's summaries and the range engines' do; the Polars plan's do
    not, and keep every candidate)."""
    if EVENTS not in candidates.collect_schema().names():
        return candidates
    return candidates.filter(~fs.set_aside(pl.col(EVENTS)))


def any_candidate(stats: pl.DataFrame, level: float) -> bool:
    """Whether :func:`with_simulated` would simulate some group of ``stats`` (in memory).

    The same filter, run now: without a candidate, with_simulated adds its columns
    null, which a caller holding the statistics in memory can do at once instead of
    joining the rows in a plan.
    """
    stats = without_set_aside(stats)  # (as with_simulated sets them aside)
    kuiper, ks, sigma2 = (stats.get_column(c).cast(pl.Float64).to_numpy() for c in _READ)
    if not (np.isfinite(kuiper).all() and np.isfinite(ks).all() and np.isfinite(sigma2).all()):
        # (a null, NaN or infinity: Polars orders NaN above every number, NumPy's
        # comparisons say False; the expression itself decides)
        return bool(stats.select(candidate(level, False).any()).item())
    # :func:`candidate`'s arithmetic on finite doubles, by NumPy: the same bits (one
    # correctly rounded square root and product each), without a query (about 0.7 ms of a
    # 10,000-row calibration's 8 ms).
    kuiper_z, ks_z = _critical(fs.cutoff(level))
    sigma = np.sqrt(np.maximum(sigma2, 0.0))
    small = (kuiper >= kuiper_z * sigma) | (ks >= ks_z * sigma)
    return bool((small & (sigma2 > 0.0)).any())


#: The columns :func:`any_candidate` reads.
_READ = ("kuiper", "ks", SIGMA_B)


def tests_expr(screen: bool) -> pl.Expr:
    """The number of tests, as :func:`~polars_cumdev.method.finite_batch.simulate_groups`
    reads it: rows with a positive sigma (:func:`_positive`; sigma (31) of M. Tygert,
    "Cumulative deviation of a subpopulation from the full population")."""
    return _positive(screen).sum().cast(pl.Int64)


def with_simulated(
    stats: pl.LazyFrame,
    rows: pl.LazyFrame,
    keys: Sequence[str],
    key_types: Mapping[str, pl.DataType],
    level: float,
    *,
    screen: bool = False,
    null: Null = "score",
    alpha: float | None = None,
) -> pl.LazyFrame:
    """``stats`` (:func:`~polars_cumdev.method.statistics.summarize`'s layout) with the
    simulated p-value columns.

    ``rows`` is the prepared frame (keys, score, response, weight); ``key_types``
    the keys' dtypes there. ``screen``: each group against the full population
    (every row of ``rows``), whose bin means are the null probabilities; else
    calibration, whose ``null`` is one of:

    * ``"score"``: probabilities, 0/1 responses redrawn as Bernoulli(score);
    * ``"level"``: a quantile at level ``alpha``, ``rows``' responses being the
      hits 1{y <= q}, redrawn as Bernoulli(alpha);
    * ``"flip"``: a predicted mean, each residual y - m given a random sign, the
      p-value the larger of that and the asymptotic one.

    When ``stats`` carries the compiled walks' count of each group's effective events
    (``EVENTS``), a candidate whose count reaches :func:`~.finite_sample.set_aside` is
    not simulated, so its rows are not joined and, when no candidate is left, the full
    population is not read again (:func:`~.finite_sample.set_aside` says why the
    decisions are those of the rows' own count).
    """
    whole = not keys  # one group: a constant key, dropped at the end
    if whole:
        keys, key_types = [_ALL], {_ALL: pl.Int8()}
        stats = stats.with_columns(pl.lit(0, dtype=pl.Int8).alias(_ALL))
        rows = rows.with_columns(pl.lit(0, dtype=pl.Int8).alias(_ALL))
    keys = list(keys)
    stats = stats.cache()  # read twice: for the candidates and for the join
    sigma = pl.col(SIGMA_B).clip(lower_bound=0.0).sqrt()
    extra = []
    if null == "flip":
        extra = [(pl.col(c) / sigma).alias(z) for c, z in (("kuiper", KUIPER_Z), ("ks", KS_Z))]
    elif null == "level":
        extra = [pl.lit(alpha, dtype=pl.Float64).alias(ALPHA)]
    carried = [e.meta.output_name() for e in extra]
    candidates = without_set_aside(
        stats.with_columns(tests_expr(screen).alias(TESTS)).filter(candidate(level, screen))
    ).select(*[pl.col(k).cast(key_types[k]) for k in keys], TESTS, SIGMA_B, *extra)
    floats = [k for k in keys if key_types[k].is_float()]
    on = [k for k in keys if k not in floats] + [
        f"{k}__cd_{part}" for k in floats for part in ("nan", "value")
    ]
    picked = (
        _nan_safe(rows.select(*keys, nm.SCORE, nm.RESPONSE, nm.WEIGHT), floats)
        .join(_nan_safe(candidates, floats).drop(floats), on=on, how="inner", nulls_equal=True)
        .select(*keys, nm.SCORE, nm.RESPONSE, nm.WEIGHT, TESTS, SIGMA_B, *carried)
    )
    if null == "score":  # (the null probabilities are the scores or the screen's bin means)
        picked = fs.may_have_few_events(picked, keys, SIGMA_B, rows if screen else None)
    picked = picked.drop(SIGMA_B).cache()  # (read twice by the screen: rows and gate)
    schema = {**{k: key_types[k] for k in keys}, **SIM_SCHEMA}
    if screen:  # the full population too, only when some group is a candidate
        gate = picked.select(pl.len().alias("__cd_count")).filter(pl.col("__cd_count") > 0)
        population = rows.select(nm.SCORE, nm.RESPONSE, nm.WEIGHT).join(gate, how="cross")
        population = population.select(
            *[pl.lit(None, dtype=key_types[k]).alias(k) for k in keys],
            nm.SCORE, nm.RESPONSE, nm.WEIGHT,
            pl.lit(None, dtype=pl.Int64).alias(TESTS), pl.lit(0, dtype=pl.Int8).alias(_TAG),
        )  # fmt: skip
        picked = pl.concat([picked.with_columns(pl.lit(1, dtype=pl.Int8).alias(_TAG)), population])
    found = picked.map_batches(
        lambda batch: _simulate(batch, keys, level, screen, null),
        schema=pl.Schema(schema),
        streamable=False,
    )
    out = join_on_keys(stats, found, keys, pl.Schema(key_types))
    return out.drop(_ALL) if whole else out
