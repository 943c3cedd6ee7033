"""Naive transcription of the screen's resampling null for non-0/1 responses
(docs/method.md, "Valid at every size", real responses and soft labels).

Everything from the page, one row and one redraw at a time: the bins of
method.md 1.2 found by masking the whole population afresh
(``reference.subpop_vs_full``), each bin's rows listed in the order score,
response, weight, a row of the bin picked by walking its running weights, z of
every redraw recomputed with sigma as the statistic computes it, the criterion
min(E, n_eff) < 200 and Besag and Clifford's rule written out. The uniforms are
``reference_finite_sample``'s SplitMix64 stream and seed. Oracle of
``tests/analyses/test_screen_resampled.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import reference as base
import reference_finite_sample as fin


def _bins(s_full, r_full, w_full, scores):
    """Per distinct score of the group: its bin's rows as (score, response, weight),
    sorted, between the midpoints of method.md 1.2 (plain halves of the sums)."""
    edges = [-math.inf] + [(a + b) / 2.0 for a, b in itertools.pairwise(scores)] + [math.inf]
    out = {}
    for k, x in enumerate(scores):
        inside = (s_full > edges[k]) & (s_full <= edges[k + 1])
        out[x] = sorted(zip(s_full[inside], r_full[inside], w_full[inside], strict=True))
    return out


def _moments(rows):
    """Weighted mean, and central moments of order 2, 3, 4, of one bin's responses."""
    total = sum(w for _, _, w in rows)
    mean = sum(w * r for _, r, w in rows) / total
    m = [sum(w * (r - mean) ** k for _, r, w in rows) / total for k in (2, 3, 4)]
    return mean, *m


def _z(s, w, rt, r, sigma):
    """Kuiper and KS z of the group's rows (sorted by score) with responses ``r``."""
    d, g = fin.ranges(s, w, rt, r)
    total = sum(w)
    return d / total / sigma, g / total / sigma


def screen_pvalues(s_full, r_full, w_full, in_sub, tests: int, level: float = 0.05):
    """(Kuiper p, KS p, p_method) of the group ``in_sub`` of ``screen(by=)`` (responses
    not all 0/1), ``tests`` the number of groups with a z."""
    s_full, r_full, w_full = (np.asarray(a, dtype=float) for a in (s_full, r_full, w_full))
    found = base.subpop_vs_full(s_full, r_full, w_full, in_sub, "auto")
    sigma = found["sigma"]
    z = (found["kuiper"] / sigma, found["ks"] / sigma)
    asymptotic = (base.kuiper_pvalue_naive(z[0]), base.ks_pvalue_naive(z[1]))
    if min(asymptotic) > max(0.1, level):
        return (*asymptotic, "asymptotic")
    mask = np.asarray(in_sub, dtype=bool)
    rows = sorted(zip(s_full[mask], w_full[mask], r_full[mask], strict=True))
    s, w, r = ([row[j] for row in rows] for j in range(3))
    bins = _bins(s_full, r_full, w_full, sorted(set(s)))
    moments = [_moments(bins[x]) for x in s]
    rt = [m[0] for m in moments]
    second = sum(x * x * m[1] for x, m in zip(w, moments, strict=True))
    third = sum(abs(x) ** 3 * abs(m[2]) for x, m in zip(w, moments, strict=True))
    fourth = sum(x**4 * max(m[3] - 3 * m[1] ** 2, 0.0) for x, m in zip(w, moments, strict=True))
    e3 = second**3 / third**2 if third > 0 else math.inf
    e4 = second**2 / fourth if fourth > 0 else math.inf
    n_eff = sum(w) ** 2 / sum(x * x for x in w)
    if min(e3, e4, n_eff) >= 200:
        return (*asymptotic, "asymptotic")
    draws = max(min(math.ceil(2.0 * max(tests, 1) / level), 20_000_000 // len(s)), 999)
    z0 = _z(s, w, rt, r, sigma)
    slack = (
        1e-12
        * sum(abs(a) * (abs(b) + abs(c)) for a, b, c in zip(w, r, rt, strict=True))
        / sum(w)
        / sigma
    )
    state = fin.seed(s, w)
    hits, stops, t = [0, 0], [0, 0], 0
    while t < draws and (stops[0] == 0 or stops[1] == 0):
        t += 1
        redrawn = []
        for i in range(len(s)):
            state = (state + fin.GOLDEN) & fin.MASK
            u = (fin.mix(state) >> 11) * 2.0**-53
            inside = bins[s[i]]
            target = u * sum(x for _, _, x in inside)
            running, pick = 0.0, inside[-1][1]
            for _, response, weight in inside:
                running += weight
                if running > target:
                    pick = response
                    break
            redrawn.append(pick)
        # sigma of the redraw: the population, hence every bin, is as observed
        again = _z(s, w, rt, redrawn, sigma)
        for j in range(2):
            if stops[j] == 0 and again[j] >= z0[j] - slack:
                hits[j] += 1
                if hits[j] == 10:
                    stops[j] = t
    out = [10 / stops[j] if stops[j] else (hits[j] + 1.0) / (t + 1.0) for j in range(2)]
    return out[0], out[1], "resampled"
