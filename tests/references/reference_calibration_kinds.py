"""Naive transcriptions of calibration beyond one probability per row.

Deliberately plain loops over rows, classes and points, written from the
definitions (issue 24; method.md 2; multicalibration-mcgrad.md b.2'), not from
the library's code:

* top-label: score max_c p_c, response 1 when the label is the first class
  reaching that maximum;
* class-wise: for every class c, p_c against 1{label = c}; Holm and
  Benjamini-Hochberg adjustments over all the (group, class) rows;
* quantile at level alpha: the responses 1{y <= q} compared with alpha,
  sigma^2 = sum a_k^2 f_k alpha (1 - alpha);
* mean: the responses compared with the predictions, sigma^2 =
  sum a_k^2 f_k v_k, v_k pooling two estimates of a response's variance by
  their degrees of freedom (issue 36 item 2): the unbiased weighted variance
  of the tie's rows, sum W (y - ybar)^2 / (sum W - sum W^2 / sum W), with
  1 / f_k - 1 degrees of freedom (none for one row), and the average dbar_k
  of the successive-difference estimates d_{k-1}, d_k,
  d_k = (e_{k+1} - e_k)^2 / (f_k + f_{k+1}), e = R' - S', with one.
"""

from __future__ import annotations

import math

import numpy as np
import reference as ref


def top_label(p, labels) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the top probability and whether the label is the (first) argmax."""
    p = np.asarray(p, dtype=np.float64)
    top = np.empty(p.shape[0])
    hit = np.empty(p.shape[0])
    for i in range(p.shape[0]):
        best = 0
        for c in range(1, p.shape[1]):
            if p[i, c] > p[i, best]:
                best = c
        top[i] = p[i, best]
        hit[i] = 1.0 if int(labels[i]) == best else 0.0
    return top, hit


def one_vs_rest(p, labels, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Class c's probabilities and the indicator that the label is c."""
    p = np.asarray(p, dtype=np.float64)
    hit = np.array([1.0 if int(labels[i]) == c else 0.0 for i in range(p.shape[0])])
    return p[:, c].copy(), hit


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values (nan stays nan)."""
    p = np.asarray(p, dtype=np.float64)
    present = [i for i in range(p.size) if not math.isnan(p[i])]
    order = sorted(present, key=lambda i: p[i])
    m = len(order)
    out = np.full(p.size, np.nan)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _statistics(s_m, r_m, w_m, f, ref_values, variances, fraction: float) -> dict:
    n = s_m.shape[0]
    kept = ref._kept(n, fraction)
    total = 0.0
    for k in range(kept):
        total += w_m[k]
    a = [w_m[k] / total for k in range(kept)]
    cum_a = ref._cumulate(w_m[:kept]) / total
    cum_c = ref._cumulate([a[k] * (r_m[k] - ref_values[k]) for k in range(kept)])
    kuiper, ks = ref._range_and_max_abs(cum_c)
    v = variances(kept)
    sigma2 = 0.0
    for k in range(kept):
        sigma2 += a[k] ** 2 * f[k] * v[k]
    return {
        "S": s_m,
        "R": r_m,
        "A": cum_a,
        "C": cum_c,
        "ecce_r": kuiper,
        "ecce_mad": ks,
        "delta": float(cum_c[-1]),
        "sigma": math.sqrt(sigma2),
        "n_scores": n,
        "kept": kept,
    }


def quantile(q, y, w, alpha: float, fraction: float = 1.0) -> dict:
    """Calibration of predicted alpha-quantiles q of responses y."""
    q = np.asarray(q, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    hits = np.array([1.0 if y[i] <= q[i] else 0.0 for i in range(q.size)])
    s_m, w_m, r_m, f, _ = ref.merge_ties(q, hits, w)
    alphas = [alpha] * s_m.shape[0]
    return _statistics(
        s_m, r_m, w_m, f, alphas, lambda kept: [alpha * (1.0 - alpha)] * kept, fraction
    )


def successive_variances(e, f) -> list[float]:
    """v_k: the mean of d_{k-1} and d_k (those that exist), 0 for a single point."""
    n = len(e)
    d = [(e[k + 1] - e[k]) ** 2 / (f[k] + f[k + 1]) for k in range(n - 1)]
    v = []
    for k in range(n):
        near = []
        if k >= 1:
            near.append(d[k - 1])
        if k <= n - 2:
            near.append(d[k])
        v.append(sum(near) / len(near) if near else 0.0)
    return v


def within_tie_variances(m, y, w, s_m) -> list[tuple[float, float]]:
    """Per distinct prediction: (unbiased weighted variance of its rows, degrees of freedom)."""
    m = np.asarray(m, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(m.size) if w is None else np.asarray(w, dtype=np.float64)
    out = []
    for value in s_m:
        rows = [i for i in range(m.size) if m[i] == value]
        if len(rows) == 1:
            out.append((0.0, 0.0))
            continue
        sw = sum(w[i] for i in rows)
        sw2 = sum(w[i] * w[i] for i in rows)
        ybar = sum(w[i] * y[i] for i in rows) / sw
        squares = sum(w[i] * (y[i] - ybar) ** 2 for i in rows)
        out.append((squares / (sw - sw2 / sw), sw * sw / sw2 - 1.0))
    return out


def mean(m, y, w, fraction: float = 1.0) -> dict:
    """Calibration of predicted means m of responses y."""
    s_m, w_m, r_m, f, _ = ref.merge_ties(m, y, w)
    within = within_tie_variances(m, y, w, s_m)

    def variances(kept: int) -> list[float]:
        e = [r_m[k] - s_m[k] for k in range(kept)]
        between = successive_variances(e, list(f[:kept]))
        pooled = []
        for k in range(kept):
            spread, df = within[k]
            pooled.append((df * spread + between[k]) / (df + 1.0))
        return pooled

    return _statistics(s_m, r_m, w_m, f, list(s_m), variances, fraction)
