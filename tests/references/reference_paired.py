"""A deliberately naive float64 transcription of paired-and-covariates.md section 1.

Paired samples: every row has a score S, two responses Q (first population)
and R (second), and a weight W. Written with plain loops over dictionaries,
independent of the library's sorted prefix sums and window functions. It
imports neither Polars nor anything from ``polars_cumdev``.

Arrays ``A`` and ``C`` carry the origin at entry 0 (entry k is A_k / C_k).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["merge_pairs", "paired"]


def merge_pairs(s, q, r, w=None):
    """Step 1: one point per distinct score, in increasing order of score.

    Returns lists (scores, W~, Q~, R~, f, rows) with W~ the sum of the
    weights, Q~ and R~ the weighted averages and f = sum W^2 / (sum W)^2.
    """
    s = [float(x) for x in s]
    q = [float(x) for x in q]
    r = [float(x) for x in r]
    w = [1.0] * len(s) if w is None else [float(x) for x in w]
    table: dict[float, list[int]] = {}
    for i, score in enumerate(s):
        table.setdefault(score, []).append(i)
    scores, wt, qt, rt, f, rows = [], [], [], [], [], []
    for score in sorted(table):
        members = table[score]
        total = sum(w[i] for i in members)
        scores.append(score)
        wt.append(total)
        qt.append(sum(w[i] * q[i] for i in members) / total)
        rt.append(sum(w[i] * r[i] for i in members) / total)
        f.append(sum(w[i] * w[i] for i in members) / (total * total))
        rows.append(len(members))
    return scores, wt, qt, rt, f, rows


def paired(s, q, r, w=None, variance: str = "empirical", fraction: float = 1.0) -> dict:
    """Steps 2-4 for one group: A, C, Kuiper, KS, delta and sigma.

    ``fraction`` keeps the first floor(m q) merged points and renormalizes
    the weights over them (method.md 1.7).
    """
    if variance not in ("empirical", "bernoulli"):
        raise ValueError(variance)
    scores, wt, qt, rt, f, rows = merge_pairs(s, q, r, w)
    m = len(scores)
    kept = math.floor(m * fraction)
    if kept < 1:
        raise ValueError("the zoom keeps no point")
    scores, wt, qt, rt, f, rows = (x[:kept] for x in (scores, wt, qt, rt, f, rows))
    total = sum(wt)
    a_steps = [x / total for x in wt]
    big_a, big_c = [0.0], [0.0]
    sigma2 = 0.0
    for j in range(kept):
        big_a.append(big_a[-1] + a_steps[j])
        big_c.append(big_c[-1] + a_steps[j] * (qt[j] - rt[j]))
        if variance == "empirical":
            sigma2 += a_steps[j] ** 2 * (qt[j] - rt[j]) ** 2
        else:
            sigma2 += a_steps[j] ** 2 * f[j] * (qt[j] * (1.0 - qt[j]) + rt[j] * (1.0 - rt[j]))
    kuiper = max(big_c) - min(big_c)
    ks = max(abs(x) for x in big_c)
    return {
        "n": sum(rows),
        "n_scores": kept,
        "weight": total,
        "scores": scores,
        "first_mean": qt,
        "second_mean": rt,
        "weights": wt,
        "A": np.array(big_a),
        "C": np.array(big_c),
        "kuiper": kuiper,
        "ks": ks,
        "delta": big_c[-1],
        "sigma": math.sqrt(sigma2),
        "sigma2_terms": [
            (a_steps[j] * (qt[j] - rt[j])) ** 2
            if variance == "empirical"
            else a_steps[j] ** 2 * f[j] * (qt[j] * (1.0 - qt[j]) + rt[j] * (1.0 - rt[j]))
            for j in range(kept)
        ],
    }
