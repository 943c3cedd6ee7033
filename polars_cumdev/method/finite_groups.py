"""Finite-sample p-values of named groups (``calibration(by=...)``), in the lazy plan.

The groups whose asymptotic p-value could matter (Kuiper or Kolmogorov-Smirnov
p at most :func:`~polars_cumdev.method.finite_sample.cutoff`, judged from z
against the critical values, so before :func:`~polars_cumdev.method.statistics.normalize`)
are joined with their rows; one batch function over those rows numbers the
groups, keeps the ones whose responses are all 0 or 1 and whose effective
number of events is below :data:`~polars_cumdev.method.finite_sample.MIN_EVENTS`,
and simulates them in one compiled call
(:func:`~polars_cumdev.method.finite_sample.simulate`). The result, keyed like
the groups, is joined back as the columns ``normalize(simulated=True)`` reads.
Both engines pass the same prepared rows (the user's scores, responses and
weights as float64), so both get the same draws and the same p-values.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.keys import join_on_keys
from polars_cumdev.method.pvalues import ks_critical, kuiper_critical
from polars_cumdev.method.summary_columns import SIGMA_B

__all__ = ["SIMULATED", "with_simulated"]

#: The columns :func:`with_simulated` adds.
SIMULATED = (fs.SIM_KUIPER, fs.SIM_KS)

_TESTS = "__cd_tests"
_ALL = "__cd_all"
_SIM = {fs.SIM_KUIPER: pl.Float64(), fs.SIM_KS: pl.Float64()}


@functools.lru_cache(maxsize=16)
def _critical(cut: float) -> tuple[float, float]:
    """The z of the Kuiper and KS statistics whose asymptotic p-value is ``cut`` (a solve each)."""
    if cut >= 1.0:  # every p-value is at most 1: every group with a z is a candidate
        return 0.0, 0.0
    return kuiper_critical(cut), ks_critical(cut)


def _nan_safe(frame: pl.LazyFrame, floats: Sequence[str]) -> pl.LazyFrame:
    """Float keys as the pair (is NaN, value with NaN as 0): joins then match NaN with NaN."""
    return frame.with_columns(
        *[pl.col(k).is_nan().alias(f"{k}__cd_nan") for k in floats],
        *[pl.col(k).fill_nan(0.0).alias(f"{k}__cd_value") for k in floats],
    )


def _simulate(batch: pl.DataFrame, keys: list[str], level: float) -> pl.DataFrame:
    """Per candidate group of ``batch`` (its rows): simulated p-values where it fails."""
    schema = {
        **{k: batch.schema[k] for k in keys},
        fs.SIM_KUIPER: pl.Float64,
        fs.SIM_KS: pl.Float64,
    }
    if batch.height == 0:
        return pl.DataFrame(schema=schema)
    grouped = batch.with_row_index("__cd_row").group_by(keys).agg(pl.col("__cd_row"))
    sizes = grouped["__cd_row"].list.len().to_numpy()
    rows = grouped["__cd_row"].explode().to_numpy().astype(np.int64)
    group = np.repeat(np.arange(grouped.height), sizes)
    s, r, w = (batch[c].to_numpy()[rows] for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT))
    tests = int(batch[_TESTS][0])
    other = np.bincount(group, weights=((r != 0.0) & (r != 1.0)), minlength=grouped.height)
    terms = fs.event_terms(s, w)
    sums = np.stack([np.bincount(group, weights=t, minlength=grouped.height) for t in terms])
    few = fs.effective_events(sums) < fs.MIN_EVENTS
    chosen = (other == 0) & few
    renumber = np.cumsum(chosen) - 1
    mine = chosen[group]
    group, s, r, w = renumber[group[mine]], s[mine], r[mine], w[mine]
    order, starts = fs.grouped(group, s, w, r)
    s, r, w = s[order], r[order], w[order]
    p_k, p_ks, _ = fs.simulate(starts, s, w, s, r, tests, level)
    out = grouped.select(keys).filter(pl.Series(chosen))
    return out.with_columns(
        pl.Series(fs.SIM_KUIPER, p_k, dtype=pl.Float64),
        pl.Series(fs.SIM_KS, p_ks, dtype=pl.Float64),
    ).select(list(schema))


def with_simulated(
    stats: pl.LazyFrame,
    rows: pl.LazyFrame,
    keys: Sequence[str],
    key_types: Mapping[str, pl.DataType],
    level: float,
) -> pl.LazyFrame:
    """``stats`` (:func:`~polars_cumdev.method.statistics.summarize`'s layout, calibration of
    probabilities: sigma^2 (50) in ``SIGMA_B``) with the simulated p-value columns.

    ``rows`` is the prepared frame (keys, score, response, weight); ``key_types``
    the keys' dtypes there.
    """
    whole = not keys  # one group: a constant key, dropped at the end
    if whole:
        keys, key_types = [_ALL], {_ALL: pl.Int8()}
        stats = stats.with_columns(pl.lit(0, dtype=pl.Int8).alias(_ALL))
        rows = rows.with_columns(pl.lit(0, dtype=pl.Int8).alias(_ALL))
    keys = list(keys)
    stats = stats.cache()  # read twice: for the candidates and for the join
    cut = fs.cutoff(level)
    sigma = pl.col(SIGMA_B).clip(lower_bound=0.0).sqrt()
    kuiper_z, ks_z = _critical(cut)
    small = (pl.col("kuiper") >= kuiper_z * sigma) | (pl.col("ks") >= ks_z * sigma)
    candidates = (
        stats.with_columns((pl.col(SIGMA_B) > 0.0).sum().alias(_TESTS))
        .filter(small & (pl.col(SIGMA_B) > 0.0))
        .select(*[pl.col(k).cast(key_types[k]) for k in keys], _TESTS)
    )
    floats = [k for k in keys if key_types[k].is_float()]
    on = [k for k in keys if k not in floats] + [
        f"{k}__cd_{part}" for k in floats for part in ("nan", "value")
    ]
    picked = (
        _nan_safe(rows.select(*keys, nm.SCORE, nm.RESPONSE, nm.WEIGHT), floats)
        .join(_nan_safe(candidates, floats).drop(floats), on=on, how="inner", nulls_equal=True)
        .select(*keys, nm.SCORE, nm.RESPONSE, nm.WEIGHT, _TESTS)
    )
    schema = {**{k: key_types[k] for k in keys}, **_SIM}
    found = picked.map_batches(
        lambda batch: _simulate(batch, keys, level), schema=pl.Schema(schema), streamable=False
    )
    out = join_on_keys(stats, found, keys, pl.Schema(key_types))
    return out.drop(_ALL) if whole else out
