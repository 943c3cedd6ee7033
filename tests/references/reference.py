"""A deliberately naive float64 NumPy transcription of the numerical spec.

This module is the independent yardstick the library is tested against. It
follows /work/shared/spec/method.md (sections 1, 2 and 4) and
/work/shared/spec/two-subpopulations.md line by line, with explicit loops and
direct masking instead of the prefix sums, joins and window functions the
library uses, so that an error in one is unlikely to be repeated in the other.

It imports neither Polars nor anything from ``polars_cumdev``.

Indexing convention: Python lists/arrays are 0-based, so the spec's point k
(k = 1..n) is entry ``k - 1`` of the per-point arrays, while the cumulative
arrays ``A`` and ``C`` carry the origin at entry 0 (entry k is A_k / C_k).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

__all__ = [
    "bh_qvalues",
    "calibration",
    "ks_pvalue_naive",
    "kuiper_pvalue_naive",
    "merge_ties",
    "midpoint",
    "resolve_variance",
    "subpop_vs_full",
    "two_subpops",
]


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------


def _as_float(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).ravel()


def _weights(w, size: int) -> np.ndarray:
    if w is None:
        return np.ones(size, dtype=np.float64)
    out = _as_float(w)
    if out.shape[0] != size:
        raise ValueError("weights must have the same length as the scores")
    if not np.all(out > 0):
        raise ValueError("weights must be positive")
    return out


def resolve_variance(variance: str, responses) -> str:
    """Map ``"auto"`` to ``"bernoulli"`` when every response is exactly 0 or 1."""
    if variance == "auto":
        r = _as_float(responses)
        is_binary = all(value == 0.0 or value == 1.0 for value in r)
        return "bernoulli" if is_binary else "empirical"
    if variance not in ("bernoulli", "empirical"):
        raise ValueError(f"unknown variance {variance!r}")
    return variance


def _kept(n: int, fraction: float) -> int:
    """Spec 1.7: number of merged points kept by the zoom, floor(n q)."""
    if not (0.0 < fraction <= 1.0):
        raise ValueError("fraction must lie in (0, 1]")
    kept = math.floor(n * fraction)
    if kept < 1:
        raise ValueError("the zoom keeps no point")
    return kept


def midpoint(lower: float, upper: float) -> float:
    """Spec 1.2's B_k for consecutive distinct scores, with the order kept.

    The double nearest (lower + upper) / 2, except in the two cases where
    that rounded value would not separate the two scores: when they are
    adjacent doubles and it rounds up to ``upper`` (then ``upper``'s rows
    would fall in the lower bin), and when ``lower + upper`` overflows. In
    the first case the boundary is ``lower`` itself (every row with a score
    <= lower, i.e. < upper, is in the lower bin); in the second the halves
    are added.
    """
    total = lower + upper
    middle = total / 2.0 if math.isfinite(total) else lower / 2.0 + upper / 2.0
    if middle >= upper or middle < lower:
        return lower
    return middle


def merge_ties(s, r, w):
    """Spec 1.1: merge rows sharing exactly the same score.

    Returns (scores, weights, responses, tie_factors, row_counts) with the
    scores strictly increasing. For each distinct score the merged weight is
    the sum of the weights, the merged response their weighted average, and
    the tie factor f = sum(W^2) / (sum W)^2 (which is 1 for a single row).
    """
    s = _as_float(s)
    r = _as_float(r)
    w = _weights(w, s.shape[0])
    distinct = sorted(set(s.tolist()))
    scores, weights, responses, factors, counts = [], [], [], [], []
    for value in distinct:
        total_w = 0.0
        total_wr = 0.0
        total_w2 = 0.0
        count = 0
        for i in range(s.shape[0]):
            if s[i] == value:
                total_w += w[i]
                total_wr += w[i] * r[i]
                total_w2 += w[i] * w[i]
                count += 1
        scores.append(value)
        weights.append(total_w)
        responses.append(total_wr / total_w)
        factors.append(1.0 if count == 1 else total_w2 / (total_w * total_w))
        counts.append(count)
    return (
        np.array(scores),
        np.array(weights),
        np.array(responses),
        np.array(factors),
        np.array(counts, dtype=np.int64),
    )


def _cumulate(steps) -> np.ndarray:
    """[0, x_1, x_1 + x_2, ...] by an explicit running sum."""
    out = [0.0]
    running = 0.0
    for x in steps:
        running += x
        out.append(running)
    return np.array(out)


def _range_and_max_abs(c: np.ndarray) -> tuple[float, float]:
    """Kuiper (range over k = 0..n) and Kolmogorov-Smirnov (max |C_k| over k = 1..n)."""
    kuiper = float(max(c) - min(c))
    ks = float(max(abs(x) for x in c[1:])) if len(c) > 1 else 0.0
    return kuiper, ks


# --------------------------------------------------------------------------
# Section 1: subpopulation versus full population
# --------------------------------------------------------------------------


def subpop_vs_full(s_full, r_full, w_full, in_sub, variance, fraction=1.0) -> dict:
    """Deviation of the subpopulation ``in_sub`` (boolean mask) from all rows.

    ``variance`` is "bernoulli", "empirical" or "auto" (auto looks at every
    response of the full population). Returns a dict with

    * per merged point (length n): ``S`` (S'_k), ``W`` (W'_k), ``R`` (R'_k),
      ``f``, ``Rt``, ``V``, ``bin_rows``, ``a`` (renormalized over the zoom:
      length floor(n q));
    * cumulative (length kept + 1, origin first): ``A``, ``C``;
    * scalars: ``kuiper``, ``ks``, ``delta`` (C at the last kept point),
      ``sigma``, ``n`` (all merged points), ``kept``, ``variance`` (resolved).
    """
    s_full = _as_float(s_full)
    r_full = _as_float(r_full)
    m = s_full.shape[0]
    w_full = _weights(w_full, m)
    mask = np.asarray(in_sub, dtype=bool).ravel()
    if mask.shape[0] != m:
        raise ValueError("in_sub must have one entry per row")
    if not mask.any():
        raise ValueError("the subpopulation is empty")
    variance = resolve_variance(variance, r_full)

    # 1.1 ties inside the subpopulation.
    s_m, w_m, r_m, f, _ = merge_ties(s_full[mask], r_full[mask], w_full[mask])
    n = s_m.shape[0]

    # 1.2 midpoint thresholds: B[0] = -inf, B[k] = (S'_k + S'_{k+1}) / 2, B[n] = +inf.
    bounds = [-math.inf]
    for k in range(n - 1):
        bounds.append(midpoint(s_m[k], s_m[k + 1]))
    bounds.append(math.inf)

    # 1.3 full-population mean and unbiased empirical variance in every bin,
    # by masking the whole population afresh for each bin.
    rt = np.empty(n)
    v_bin = np.empty(n)
    bin_rows = np.empty(n, dtype=np.int64)
    for k in range(n):
        lower, upper = bounds[k], bounds[k + 1]
        in_bin = (s_full > lower) & (s_full <= upper)
        wb = w_full[in_bin]
        rb = r_full[in_bin]
        sw = float(np.sum(wb))
        mean = float(np.sum(wb * rb)) / sw
        # sum(W R^2)/sum(W) - mean^2 written as the (identical, better
        # conditioned) weighted mean of squared deviations.
        second = float(np.sum(wb * (rb - mean) ** 2)) / sw
        denominator = sw * sw - float(np.sum(wb * wb))
        u = 0.0 if wb.shape[0] == 1 or denominator == 0.0 else sw * sw / denominator
        rt[k] = mean
        v_bin[k] = u * second
        bin_rows[k] = wb.shape[0]

    # 1.7 zoom: keep the first floor(n q) points, bins unchanged.
    kept = _kept(n, fraction)

    # 1.4 accumulation over the kept points.
    total = float(sum(w_m[:kept]))
    a = np.array([w_m[k] / total for k in range(kept)])
    # A_k = (W'_1 + ... + W'_k) / W: exact for integer weights, so that equal
    # shares of equal-weight stretches are equal numbers.
    cum_a = _cumulate(w_m[:kept]) / total
    cum_c = _cumulate([a[k] * (r_m[k] - rt[k]) for k in range(kept)])

    # 1.5 statistics.
    kuiper, ks = _range_and_max_abs(cum_c)

    # 1.6 scale of fluctuations.
    if variance == "bernoulli":
        terms = [a[k] ** 2 * rt[k] * (1.0 - rt[k]) * f[k] for k in range(kept)]
    else:
        terms = [a[k] ** 2 * v_bin[k] * f[k] for k in range(kept)]
    sigma = math.sqrt(sum(terms))

    return {
        "S": s_m,
        "W": w_m,
        "R": r_m,
        "f": f,
        "Rt": rt,
        "V": v_bin,
        "bin_rows": bin_rows,
        "a": a,
        "A": cum_a,
        "C": cum_c,
        "kuiper": kuiper,
        "ks": ks,
        "delta": float(cum_c[-1]),
        "sigma": sigma,
        "n": n,
        "kept": kept,
        "variance": variance,
    }


# --------------------------------------------------------------------------
# Section 2: calibration
# --------------------------------------------------------------------------


def calibration(s, r, w, fraction=1.0) -> dict:
    """Spec 2: cumulative differences between responses and predicted probabilities."""
    s_m, w_m, r_m, f, _ = merge_ties(s, r, w)
    n = s_m.shape[0]
    kept = _kept(n, fraction)
    total = float(sum(w_m[:kept]))
    a = np.array([w_m[k] / total for k in range(kept)])
    cum_a = _cumulate(w_m[:kept]) / total  # as in subpop_vs_full
    cum_c = _cumulate([a[k] * (r_m[k] - s_m[k]) for k in range(kept)])
    kuiper, ks = _range_and_max_abs(cum_c)
    sigma = math.sqrt(sum(a[k] ** 2 * s_m[k] * (1.0 - s_m[k]) * f[k] for k in range(kept)))
    return {
        "S": s_m,
        "W": w_m,
        "R": r_m,
        "f": f,
        "a": a,
        "A": cum_a,
        "C": cum_c,
        "kuiper": kuiper,
        "ks": ks,
        "ecce_r": kuiper,
        "ecce_mad": ks,
        "delta": float(cum_c[-1]),
        "sigma": sigma,
        "n": n,
        "kept": kept,
    }


# --------------------------------------------------------------------------
# Two subpopulations with disjoint scores
# --------------------------------------------------------------------------


def two_subpops(s0, r0, w0, s1, r1, w1, variance="empirical", fraction=1.0) -> dict:
    """two-subpopulations.md steps 1-6 and the treatment-effect scalar.

    ``variance`` is "empirical" or "score" ("bernoulli" is accepted as an alias
    of "score": the scores are the success probabilities). Differences read
    "subpopulation 0 minus subpopulation 1".
    """
    if variance == "bernoulli":
        variance = "score"
    if variance not in ("empirical", "score"):
        raise ValueError(f"unknown variance {variance!r}")
    s0_m, w0_m, r0_m, _, _ = merge_ties(s0, r0, w0)
    s1_m, w1_m, r1_m, _, _ = merge_ties(s1, r1, w1)
    shared = set(s0_m.tolist()) & set(s1_m.tolist())
    if shared:
        raise ValueError(f"{len(shared)} scores occur in both subpopulations")

    # Step 1: weights relative to the total weight of both subpopulations.
    grand = float(sum(w0_m)) + float(sum(w1_m))
    w0_m = w0_m / grand
    w1_m = w1_m / grand

    # Step 2: merged sequence of (score, response, weight, owner), then blocks.
    entries = [(s0_m[i], r0_m[i], w0_m[i], 0) for i in range(s0_m.shape[0])]
    entries += [(s1_m[i], r1_m[i], w1_m[i], 1) for i in range(s1_m.shape[0])]
    entries.sort(key=lambda e: e[0])
    blocks = []  # each: dict(owner, response, score, mean_weight)
    start = 0
    while start < len(entries):
        stop = start
        while stop + 1 < len(entries) and entries[stop + 1][3] == entries[start][3]:
            stop += 1
        run = entries[start : stop + 1]
        sw = sum(e[2] for e in run)
        blocks.append(
            {
                "owner": entries[start][3],
                "response": sum(e[2] * e[1] for e in run) / sw,
                "score": sum(e[2] * e[0] for e in run) / sw,
                "mean_weight": sw / len(run),
            }
        )
        start = stop + 1
    p_owner = blocks[0]["owner"]
    p_blocks = [b for b in blocks if b["owner"] == p_owner]
    q_blocks = [b for b in blocks if b["owner"] != p_owner]
    # Blocks alternate P_0, Q_0, P_1, Q_1, ...
    for index, block in enumerate(blocks):
        expected = p_blocks[index // 2] if index % 2 == 0 else q_blocks[index // 2]
        assert block is expected

    # Step 3: centred differences, interleaved Q_0, P_1, Q_1, P_2, ...
    p = [b["response"] for b in p_blocks]
    q = [b["response"] for b in q_blocks]
    wp = [b["mean_weight"] for b in p_blocks]
    wq = [b["mean_weight"] for b in q_blocks]
    on_q = []
    for k in range(min(len(p_blocks) - 1, len(q_blocks))):
        d = ((p[k] - q[k]) + (p[k + 1] - q[k])) / 2.0
        v = (wp[k] + 2.0 * wq[k] + wp[k + 1]) / 4.0
        on_q.append((d, v, q_blocks[k]["score"]))
    on_p = []
    for k in range(min(len(p_blocks) - 1, len(q_blocks) - 1)):
        d = ((p[k + 1] - q[k]) + (p[k + 1] - q[k + 1])) / 2.0
        v = (wq[k] + 2.0 * wp[k + 1] + wq[k + 1]) / 4.0
        on_p.append((d, v, p_blocks[k + 1]["score"]))
    centred = []
    for k in range(len(on_q)):
        centred.append(on_q[k])
        if k < len(on_p):
            centred.append(on_p[k])
    assert len(centred) == len(blocks) - 2
    sign = 1.0 if p_owner == 0 else -1.0
    d = np.array([sign * c[0] for c in centred])
    v_raw = np.array([c[1] for c in centred])
    t = np.array([c[2] for c in centred])
    if d.shape[0] == 0:
        raise ValueError("fewer than three blocks: no interior block to centre on")

    # Step 4: normalize the weights over the (zoomed) domain and accumulate.
    kept = _kept(d.shape[0], fraction)
    d, v_raw, t = d[:kept], v_raw[:kept], t[:kept]
    total = float(sum(v_raw))
    v = np.array([x / total for x in v_raw])
    cum_a = _cumulate(v)
    cum_c = _cumulate([v[k] * d[k] for k in range(kept)])

    # Step 5.
    kuiper, ks = _range_and_max_abs(cum_c)

    # Step 6.
    if variance == "empirical":
        acc = 0.0
        for k in range(kept - 1):
            e = d[k + 1] - d[k]
            u = v[k] + v[k + 1]
            acc += e * e * u * u / 16.0
        sigma_page = 2.0 * math.sqrt(acc)
        # The library doubles the page's empirical sigma: the page's value is
        # half the null spread of C (derivation in polars_cumdev/compare/sigma.py
        # ``_sigma_term``; evidence in tests/analyses/test_compare_null.py).
        sigma = 2.0 * sigma_page
    else:
        sigma = 2.0 * math.sqrt(sum(v[k] ** 2 * t[k] * (1.0 - t[k]) for k in range(kept)))
        sigma_page = sigma

    # Treatment effect: each entry against its nearest other-subpopulation
    # neighbours, weights normalized within the entry's own subpopulation.
    effects = [0.0, 0.0]
    own_totals = [float(sum(w0_m)), float(sum(w1_m))]
    for i, (_, response, weight, owner) in enumerate(entries):
        differences = []
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(entries) and entries[j][3] == owner:
                j += step
            if 0 <= j < len(entries):
                other = entries[j][1]
                differences.append(response - other if owner == 0 else other - response)
        local = sum(differences) / len(differences)
        effects[owner] += weight / own_totals[owner] * local
    effect = (effects[0] + effects[1]) / 2.0

    return {
        "d": d,
        "v": v,
        "t": t,
        "A": cum_a,
        "C": cum_c,
        "kuiper": kuiper,
        "ks": ks,
        "delta": float(cum_c[-1]),
        "sigma": sigma,
        "sigma_page": sigma_page,
        "effect": effect,
        "blocks": blocks,
    }


# --------------------------------------------------------------------------
# Section 4: asymptotic p-values, by direct summation in high precision
# --------------------------------------------------------------------------

_DPS = 60


def _upper_normal(x):
    """Q(x) = P(N(0, 1) > x) in mpmath."""
    return mpmath.erfc(x / mpmath.sqrt(2)) / 2


def _sum_until_negligible(term, first: int, limit: int = 100000):
    """Sum term(first), term(first + 1), ... until the terms stop mattering."""
    total = mpmath.mpf(0)
    tiny = mpmath.mpf(10) ** (-(_DPS + 10))
    k = first
    while k < limit:
        value = term(k)
        total += value
        if abs(value) <= tiny * abs(total) and k > first + 2:
            return total
        k += 1
    raise RuntimeError("series did not converge")


def _finish(p, log10: bool) -> float:
    return float(mpmath.log10(p)) if log10 else float(p)


def ks_pvalue_naive(z: float, *, form: str = "auto", log10: bool = False) -> float:
    """P(max_{0<=t<=1} |B(t)| > z) for standard Brownian motion B (or its log10).

    ``form="theta"``: 1 - (4/pi) sum (-1)^k/(2k+1) exp(-(2k+1)^2 pi^2 / (8 z^2)).
    ``form="normal"``: 4 sum (-1)^k Q((2k+1) z).
    ``"auto"`` takes the theta form below z = 1 and the normal form above.
    """
    with mpmath.workdps(_DPS):
        x = mpmath.mpf(z)
        if x <= 0:
            return 0.0 if log10 else 1.0
        if form == "auto":
            form = "theta" if x < 1 else "normal"
        pi = mpmath.pi
        if form == "theta":

            def term(k):
                odd = 2 * k + 1
                return (-1) ** k / odd * mpmath.exp(-(odd**2) * pi**2 / (8 * x**2))

            return _finish(1 - (4 / pi) * _sum_until_negligible(term, 0), log10)
        if form == "normal":

            def term(k):
                return (-1) ** k * _upper_normal((2 * k + 1) * x)

            return _finish(4 * _sum_until_negligible(term, 0), log10)
        raise ValueError(form)


def kuiper_pvalue_naive(z: float, *, form: str = "auto", log10: bool = False) -> float:
    """P(max B - min B > z) over [0, 1] for standard Brownian motion B (or its log10).

    ``form="theta"``: 1 - sum_{k>=0} (8/z^2 + 2/((k+1/2)^2 pi^2)) exp(-2 (k+1/2)^2 pi^2 / z^2).
    ``form="normal"``: 8 sum_{k>=1} (-1)^(k-1) k Q(k z).
    ``"auto"`` takes the theta form below z = 1 and the normal form above.
    """
    with mpmath.workdps(_DPS):
        x = mpmath.mpf(z)
        if x <= 0:
            return 0.0 if log10 else 1.0
        if form == "auto":
            form = "theta" if x < 1 else "normal"
        pi = mpmath.pi
        half = mpmath.mpf(1) / 2
        if form == "theta":

            def term(k):
                c = (k + half) ** 2 * pi**2
                return (8 / x**2 + 2 / c) * mpmath.exp(-2 * c / x**2)

            return _finish(1 - _sum_until_negligible(term, 0), log10)
        if form == "normal":

            def term(k):
                return (-1) ** (k - 1) * k * _upper_normal(k * x)

            return _finish(8 * _sum_until_negligible(term, 1), log10)
        raise ValueError(form)


# --------------------------------------------------------------------------
# Benjamini-Hochberg
# --------------------------------------------------------------------------


def bh_qvalues(p) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values, in the input order.

    q_(i) = min_{j >= i} min(1, m p_(j) / j) over the sorted p-values. Missing
    p-values (None or NaN) stay NaN and do not count towards m.
    """
    values = [math.nan if x is None else float(x) for x in p]
    present = [i for i, x in enumerate(values) if not math.isnan(x)]
    order = sorted(present, key=lambda i: values[i])
    m = len(order)
    out = [math.nan] * len(values)
    running = math.inf
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, min(1.0, m * values[i] / rank))
        out[i] = running
    return np.array(out, dtype=np.float64)
