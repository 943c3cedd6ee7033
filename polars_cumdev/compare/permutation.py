"""Permutation p-values where ``ties="dither"`` meets coarse scores (issue 36).

Why the asymptotic p-value fails there. Dithering puts the two merged points
of a shared score next to each other in an order set by the seed, so a
centred difference (step 3) compares a block with a neighbour at the *next*
distinct score. With few distinct scores that neighbour is far away, and any
trend of the response along the score enters every such difference with the
same sign: under the null the curve drifts. Measured on the code before
(``benchmarks/null_rates/compare_few_scores.py``, 0/1 responses drawn from 3
scores): the mean of C_n / sigma was 1.0 (not 0) and its spread 0.5 (not 1),
and 23-39% of null comparisons were significant at 5% (60 and 400 rows). The
drift grows like the square root of the sample size for a fixed number of
scores, so no asymptotic correction fixes it.

What replaces it. Wherever the scores that both subpopulations hold carry at
least :data:`MIN_SHARED` of the comparison's weight, the p-values come from a
stratified permutation null (:mod:`polars_cumdev.kernel.permutation`): the
responses are shuffled among the rows of each distinct score, everything
else fixed, and z = D / sigma (G / sigma) recomputed on each shuffle, the
empirical sigma included. It is exact (a valid p-value at every size) under
the hypothesis that at each score the two subpopulations' responses are
exchangeable, and it carries the drift of the dither in every draw, so the
drift no longer reads as a difference. The number of draws follows
:func:`polars_cumdev.method.finite_sample.redraws` (enough for the smallest
Benjamini-Hochberg threshold over the comparisons), with Besag and
Clifford's early stop. Each comparison's stream is seeded from its scores,
subpopulations, size and ``seed``, never from the row order or the
responses. Comparisons below the share keep the asymptotic p-value: the
permutation holds the unshared rows fixed, so there it would lose most of its
power; the asymptotic value is not guaranteed where a sizeable minority of the
weight sits at a few shared scores far from any other (docs/method.md).

A small side with distinct scores. With the empirical sigma, where the smaller
subpopulation has fewer than :data:`SMALL_ROWS` effective rows, the asymptotic
tail is too light even without shared scores: sigma rests on a few centred
differences, each resting on one skewed row of the small side (measured
7-10% of null comparisons significant at 5% at 5 + 5 and 10 + 100 rows,
``benchmarks/null_rates/compare_small.py``). There the candidates (asymptotic
p-value at most :func:`polars_cumdev.method.finite_sample.cutoff`) take the
same permutation null with strata of :data:`STRATUM` consecutive rows of the
pooled score order, set from the ranks alone (a tie kept whole), so that each
row of the small side is shuffled with its nearest neighbours. Under the null
(the same law of the response at each score on both sides, moving smoothly
with the score) the responses within such a stratum are nearly exchangeable,
and every draw carries the few-term sigma and the skew of the small side.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.compare.columns import _G, _SOURCE, _Options
from polars_cumdev.compare.dither import _splitmix64, dither_scores
from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_sample as fs

__all__ = [
    "MIN_PARTIAL",
    "MIN_SHARED",
    "PERMUTATION",
    "SMALL_ROWS",
    "STRATUM",
    "permutation_batch",
    "with_permutation",
]

#: The least share of weight at shared scores for which the p-values are permuted.
MIN_SHARED = 0.5
#: Below this many effective rows on the smaller side, distinct scores are permuted too.
SMALL_ROWS = 200.0
#: Above this share of weight at shared scores (and under MIN_SHARED), strata of
#: neighbouring rows are permuted at every size (the dither's drift; 0: any shared score).
MIN_PARTIAL = 0.0
#: Rows per stratum (consecutive in the pooled score order) for distinct scores.
STRATUM = 8
#: ``p_method`` of a permuted row.
PERMUTATION = "permutation"

_PK, _PG, _TESTS = "__cd_perm_kuiper", "__cd_perm_ks", "__cd_perm_tests"
_GID = "__cd_perm_group"
_COARSE = "on coarse scores a trend in the response can read as a gap"
_EACH_SCORE = "p-values by permutation within each score"
_NEIGHBOURS = f"p-values by permutation among {STRATUM} neighbouring rows by score"
_ZK, _ZG = "__cd_perm_kuiper_z", "__cd_perm_ks_z"
_LOCAL = "__cd_perm_local"  # (strata of STRATUM neighbouring rows, not of one score)
_SCHEMA = {
    _G: pl.Int64,
    _PK: pl.Float64,
    _PG: pl.Float64,
    _ZK: pl.Float64,
    _ZG: pl.Float64,
    _LOCAL: pl.Boolean,
}


def _seeds(s: np.ndarray, source: np.ndarray, starts: np.ndarray, seed: int) -> np.ndarray:
    """Per group: a 64-bit seed from its scores' bits, sources, size and ``seed``."""
    with np.errstate(over="ignore"):
        bits = (s + 0.0).view(np.uint64) ^ (source.astype(np.uint64) * np.uint64(0x5851F42D))
        words = _splitmix64(bits)
        sums = np.add.reduceat(words, starts[:-1]) if words.size else np.zeros(0, np.uint64)
        size = np.diff(starts).astype(np.uint64)
        key = _splitmix64(np.array([int(seed) % 2**64], dtype=np.uint64))[0]
        return _splitmix64(_splitmix64(sums ^ key) + size)


def permutation_batch(batch: pl.DataFrame, options: _Options, level: float) -> pl.DataFrame:
    """The permutation p-values of the eligible comparisons among ``batch``'s rows.

    ``batch``: the group id, subpopulation (0 or 1), score, response, weight and
    the number of tests (the same in every row), every row of every candidate
    comparison (the second subpopulation repeated for each). Returns the group
    id, both p-values and the observed z = D / sigma and G / sigma (as the kernel
    computes them; the same as ``kuiper_z`` and ``ks_z``), for the comparisons
    that are permuted.
    """
    empty = pl.DataFrame(schema=_SCHEMA)
    if batch.height == 0:
        return empty
    g = batch[_G].to_numpy()
    src = batch[_SOURCE].to_numpy().astype(np.int64)
    s = batch[nm.SCORE].to_numpy().astype(np.float64) + 0.0
    r = batch[nm.RESPONSE].to_numpy().astype(np.float64)
    w = batch[nm.WEIGHT].to_numpy().astype(np.float64)
    tests = int(batch[_TESTS][0])
    order = np.lexsort((r, w, src, s, g))
    g, src, s, r, w = g[order], src[order], s[order], r[order], w[order]
    # Groups renumbered 0..G-1 in order, and their row starts.
    new_group = np.concatenate([[True], g[1:] != g[:-1]])
    gid = np.cumsum(new_group) - 1
    keys = g[new_group]
    starts = np.concatenate([np.flatnonzero(new_group), [g.size]])
    # Entries: (group, score, subpopulation); shared: the score has both.
    new_entry = new_group | np.concatenate([[True], (s[1:] != s[:-1]) | (src[1:] != src[:-1])])
    entry = np.cumsum(new_entry) - 1
    e_first = np.flatnonzero(new_entry)
    e_group, e_score, e_src = gid[e_first], s[e_first], src[e_first]
    same = (e_group[1:] == e_group[:-1]) & (e_score[1:] == e_score[:-1])
    e_shared = np.concatenate([same, [False]]) | np.concatenate([[False], same])
    total = np.bincount(gid, weights=w)
    shared_w = np.bincount(gid, weights=w * e_shared[entry], minlength=keys.size)
    # The dither of the pipeline (steps._entries), then its order of entries.
    moved = e_shared & (e_src == 1)
    e_dithered = e_score.copy()
    e_dithered[moved] = dither_scores(e_score[moved], options.seed)
    e_order = np.lexsort((e_src, e_dithered, e_group))
    rank = np.empty_like(e_order)
    rank[e_order] = np.arange(e_order.size)
    og, osrc = e_group[e_order], e_src[e_order]
    new_block = np.concatenate([[True], (og[1:] != og[:-1]) | (osrc[1:] != osrc[:-1])])
    o_block = np.cumsum(new_block) - 1  # global block of each entry, in the new order
    b_first = np.flatnonzero(new_block)
    b_group, b_src = og[b_first], osrc[b_first]
    row_block = o_block[rank[entry]]
    bw = np.bincount(row_block, weights=w)
    bt = np.bincount(row_block, weights=w * e_dithered[entry]) / bw
    b_entries = np.bincount(o_block)
    block_starts = np.concatenate([[0], np.cumsum(np.bincount(b_group, minlength=keys.size))])
    mw = bw / total[b_group] / b_entries
    prev_mw = np.concatenate([[0.0], mw[:-1]])
    next_mw = np.concatenate([mw[1:], [0.0]])
    is_first = np.zeros(bw.size, dtype=bool)
    is_first[block_starts[:-1]] = True
    is_last = np.zeros(bw.size, dtype=bool)
    is_last[block_starts[1:] - 1] = True
    interior = ~is_first & ~is_last
    v = np.where(interior, (prev_mw + 2.0 * mw + next_mw) / 4.0, 0.0)
    v_total = np.bincount(b_group, weights=v, minlength=keys.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = v / v_total[b_group]
    blocks = np.diff(block_starts)
    shared = shared_w >= MIN_SHARED * total
    # The smaller side's effective rows (Kish): below SMALL_ROWS, distinct scores too.
    eff = fs.effective_rows(gid * 2 + src, w, 2 * keys.size).reshape(-1, 2).min(axis=1)
    small = ~shared & (eff < SMALL_ROWS) & (options.variance == "empirical")
    # Some shared scores, under the share: the dither's drift is there (measured: 3,000
    # rows, 45% of them at three shared scores far from the others, 9.5% of null
    # comparisons significant at 5% on the asymptotic tail), with too few shared rows for
    # strata of one score; strata of neighbouring rows carry it, and shuffle the rest too.
    small |= ~shared & (shared_w > MIN_PARTIAL * total)
    ok = (shared | small) & (blocks >= 3)
    if options.variance == "score":
        t = np.clip(bt, 0.0, 1.0)
        sigma = 2.0 * np.sqrt(np.bincount(b_group, weights=v * v * t * (1.0 - t)))
        ok &= sigma > 0.0
    else:
        sigma = np.full(keys.size, -1.0)
    if not ok.any():
        return empty
    # Keep the eligible groups only (rows, blocks, starts renumbered).
    keep_rows = ok[gid]
    keep_blocks = ok[b_group]
    local = row_block - block_starts[gid]
    sizes = np.diff(starts)[ok]
    row_starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    kept_blocks = np.concatenate([[0], np.cumsum(blocks[ok])]).astype(np.int64)
    # Strata: one distinct score; or, where `small`, STRATUM rows by pooled rank (a
    # tie kept whole, so the responses never matter).
    new_score = new_group | np.concatenate([[True], s[1:] != s[:-1]])
    tie_rank = np.maximum.accumulate(np.where(new_score, np.arange(g.size), 0)) - starts[gid]
    bucket = tie_rank // STRATUM
    new_bucket = new_group | np.concatenate([[True], bucket[1:] != bucket[:-1]])
    # A tie of several rows is a stratum of its own (its rows share one law under the null;
    # a neighbour of another score shuffled into a large shared tie would not).
    tie_size = np.diff(np.concatenate([np.flatnonzero(new_score), [g.size]]))
    tied = np.repeat(tie_size > 1, tie_size)
    new_bucket |= new_score & (tied | np.concatenate([[False], tied[:-1]]))
    opens = np.where(small[gid], new_bucket, new_score)
    seeds = _seeds(s, src, starts, options.seed)[ok]
    draws = fs.redraws(sizes, tests, level)
    from polars_cumdev.kernel.permutation import permutation_pvalues  # only when needed

    z_d, z_g, p_d, p_g, _ = permutation_pvalues(
        row_starts,
        np.ascontiguousarray(local[keep_rows], dtype=np.int64),
        np.ascontiguousarray(w[keep_rows]),
        np.ascontiguousarray(r[keep_rows]),
        np.ascontiguousarray(opens[keep_rows]),
        kept_blocks,
        np.ascontiguousarray(bw[keep_blocks]),
        np.ascontiguousarray(np.where(b_src == 0, 1.0, -1.0)[keep_blocks]),
        np.ascontiguousarray(v[keep_blocks]),
        np.ascontiguousarray(sigma[ok], dtype=np.float64),
        seeds,
        draws,
        fs.STOP,
    )
    # A zero observed sigma leaves z undefined: no p-value (the table says why).
    defined = np.isfinite(z_d) & np.isfinite(z_g)
    columns = {_G: keys[ok].astype(np.int64), _PK: p_d, _PG: p_g, _ZK: z_d, _ZG: z_g}
    columns[_LOCAL] = small[ok]
    return pl.DataFrame({k: c[defined] for k, c in columns.items()}, schema=_SCHEMA)


def with_permutation(
    stats: pl.LazyFrame,
    first: pl.LazyFrame,
    second: pl.LazyFrame,
    options: _Options,
    level: float,
) -> pl.LazyFrame:
    """``stats`` with permutation p-values where eligible, and ``p_method``.

    ``first`` holds the group id, score, response and weight of the first
    subpopulation; ``second`` the same without the group id (crossed with
    every candidate). Candidates: comparisons with a p-value and a shared score
    (``ties="dither"``), or, with the empirical sigma, an asymptotic p-value at
    most :func:`~polars_cumdev.method.finite_sample.cutoff`;
    :func:`permutation_batch` keeps those meeting :data:`MIN_SHARED` or
    :data:`SMALL_ROWS`.
    """
    method = pl.lit("asymptotic").alias(fs.P_METHOD)
    dither, empirical = options.ties == "dither", options.variance == "empirical"
    if not (dither or empirical):
        return stats.with_columns(method)
    from polars_cumdev.compare.columns import _N_SHARED

    low = pl.min_horizontal("kuiper_p", "ks_p") <= fs.cutoff(level)
    wanted = ((pl.col(_N_SHARED) > 0) & dither) | (low & empirical)
    stats = stats.cache()
    # Candidates numbered 0.. (the group ids of compare_all are the `by` values).
    candidates = (
        stats.with_columns(pl.col("kuiper_p").is_not_null().sum().alias(_TESTS))
        .filter(pl.col("kuiper_p").is_not_null() & wanted)
        .select(_G, pl.col(_TESTS).cast(pl.Int64))
        .with_row_index(_GID)
        .with_columns(pl.col(_GID).cast(pl.Int64))
        .cache()
    )
    columns = [nm.SCORE, nm.RESPONSE, nm.WEIGHT]
    own = first.join(candidates, on=_G, how="inner", nulls_equal=True).select(
        pl.col(_GID).alias(_G), pl.lit(0, dtype=pl.Int8).alias(_SOURCE), *columns, _TESTS
    )
    other = candidates.join(second, how="cross").select(
        pl.col(_GID).alias(_G), pl.lit(1, dtype=pl.Int8).alias(_SOURCE), *columns, _TESTS
    )
    rows = pl.concat([own, other], how="vertical")
    found = rows.map_batches(
        lambda batch: permutation_batch(batch, options, level),
        schema=pl.Schema(_SCHEMA),
        streamable=False,
    ).rename({_G: _GID})
    found = candidates.select(_G, _GID).join(found, on=_GID, how="inner").drop(_GID)
    joined = stats.join(found, on=_G, how="left", nulls_equal=True, maintain_order="left")
    permuted = pl.col(_PK).is_not_null()

    def pick(name: str, new: str) -> pl.Expr:
        return pl.when(permuted).then(pl.col(new)).otherwise(pl.col(name)).alias(name)

    def log10(name: str, new: str) -> pl.Expr:
        return pl.when(permuted).then(pl.col(new).log10()).otherwise(pl.col(name)).alias(name)

    # The dither's warning (compare.verdict) no longer applies: its drift is in the null.
    within = pl.when(pl.col(_LOCAL)).then(pl.lit(_NEIGHBOURS)).otherwise(pl.lit(_EACH_SCORE))
    note = pl.col("note").str.replace(_COARSE, within, literal=True)
    return joined.with_columns(
        pl.when(permuted).then(note).otherwise(pl.col("note")).alias("note"),
        pick("kuiper_p", _PK),
        pick("ks_p", _PG),
        log10("kuiper_log10p", _PK),
        log10("ks_log10p", _PG),
        pl.when(permuted)
        .then(pl.lit(PERMUTATION))
        .otherwise(pl.lit("asymptotic"))
        .alias(fs.P_METHOD),
    ).drop(_PK, _PG, _ZK, _ZG, _LOCAL)
