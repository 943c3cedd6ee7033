# ruff: noqa: N803, N806  (the spec's names: D, V, M, K, W, C, T, F)
"""Naive NumPy transcription of multicalibration-mcgrad.md (MCGrad 0.1.5's arithmetic).

Written from the spec page only, deliberately plainly: a Python loop over
segments, boolean masks, one row at a time where the spec says so. Used by the
multicalibration tests as the oracle for ``rules="mcgrad"`` (segment set),
for ECCE, sigma, z and p of every segment, and for the aggregates.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

EPS = 2.0**-52


def _first_appearance_order(values: list) -> list:
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def _is_nan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def categorical_levels(column: list, V: int) -> tuple[list, list]:
    """Section a.1, categorical: (per-row collapsed value, levels in first-appearance order)."""
    values = ["__NA" if _is_nan(v) else v for v in column]
    distinct = _first_appearance_order(values)
    if len(distinct) > V:
        counts = {v: values.count(v) for v in distinct}
        # descending count, ties by first appearance (stable sort of the appearance order)
        ranked = sorted(distinct, key=lambda v: -counts[v])
        keep = set(ranked[: V - 1])
        values = [v if v in keep else "__OTHER" for v in values]
    return values, _first_appearance_order(values)


def numerical_levels(column: list, V: int) -> tuple[list, list]:
    """Section a.1, numerical: (per-row level, levels in first-appearance order)."""
    x = np.array([np.nan if v is None else float(v) for v in column])
    present = np.sort(x[~np.isnan(x)])
    distinct = np.unique(present)
    if len(distinct) <= V:
        values = ["NaN" if np.isnan(v) else float(v) for v in x]
    else:
        L = len(present)
        edges = []
        for q in np.linspace(0, 1, V + 1):
            h = (L - 1) * q
            i = math.floor(h)
            t = h - i
            lo = present[i]
            hi = present[min(i + 1, L - 1)]
            edges.append(lo + (hi - lo) * t if t < 0.5 else hi - (hi - lo) * (1 - t))
        edges = sorted(set(edges))
        values = []
        for v in x:
            if np.isnan(v):
                values.append("NaN")
                continue
            code = 0
            for b in range(len(edges) - 1):
                if edges[b] < v <= edges[b + 1]:
                    code = b
            values.append(float(code))
    return values, _first_appearance_order(values)


def segment_masks(
    features: list[list], kinds: list[str], D: int, V: int, M: int, K: int | None, c: int
) -> list[tuple[tuple[int, ...], tuple, np.ndarray]]:
    """Sections a.2-a.3 on rows already sorted: (feature subset, levels, mask) per kept segment."""
    coded = [
        categorical_levels(f, V) if k == "c" else numerical_levels(f, V)
        for f, k in zip(features, kinds, strict=True)
    ]
    n = len(features[0]) if features else 0
    out = []
    for d in range(D + 1):
        for subset in itertools.combinations(range(len(features)), d):
            for levels in itertools.product(*[coded[f][1] for f in subset]):
                mask = np.ones(n, dtype=bool)
                for f, level in zip(subset, levels, strict=True):
                    mask &= np.array([v == level for v in coded[f][0]])
                if mask.sum() >= M:
                    out.append((subset, levels, mask))
    if K is not None:
        size = min(c, K)
        G = min(len(out), size * math.ceil(K / size))
        out = out[:G]
    return out


def ecce(s: np.ndarray, y: np.ndarray, w: np.ndarray, mask: np.ndarray) -> float:
    """Section b.1: Kuiper range of the per-row cumulative curve (sorted rows)."""
    W = w[mask].sum()
    steps = np.where(mask, w * (y - s), 0.0) / W
    C = [0.0]
    total = 0.0
    for v in steps:
        total += v
        C.append(total)
    return max(C) - min(C)


def sigma(s: np.ndarray, w: np.ndarray, mask: np.ndarray) -> float:
    """Section b.2 (classification)."""
    W = w[mask].sum()
    value = math.sqrt(np.sum(w[mask] * (w[mask] * s[mask] * (1 - s[mask]))) / W**2)
    return 0.0 if math.isnan(value) else value


def zscore(e: float, sd: float) -> float:
    """Section b.3."""
    if sd == 0.0:
        return math.inf if e != 0.0 else 0.0
    return e / sd


def pvalue(z: float) -> float:
    """Section b.4: 1 - F(z), with the cut-offs and the floor."""
    if z < 1e-20:
        return 1.0
    if z >= 8.26732673:
        return EPS
    T = math.ceil(
        0.5
        + z
        / (math.pi * math.sqrt(2))
        * math.sqrt(math.log((4 / math.sqrt(2 * math.pi)) * (1 / z + z / math.pi**2) / EPS))
    )
    F = 0.0
    for k in range(T):
        h2 = (k + 0.5) ** 2
        F += (8 / z**2 + 2 / (math.pi**2 * h2)) * math.exp(-2 * math.pi**2 * h2 / z**2)
    return 1.0 - F


def mcgrad(
    s,
    y,
    w,
    categorical: list[list],
    numerical: list[list],
    D: int = 3,
    V: int = 3,
    M: int = 10,
    K: int | None = None,
    c: int = 50,
) -> dict:
    """Everything of sections 0, a, b, c: per-segment tuples and the aggregates."""
    s = np.asarray(s, dtype=np.float64)
    order = np.argsort(s, kind="quicksort")
    s = s[order]
    y = np.asarray(y, dtype=np.float64)[order]
    w = np.ones_like(s) if w is None else np.asarray(w, dtype=np.float64)[order]
    feats = [[f[i] for i in order] for f in categorical + numerical]
    kinds = ["c"] * len(categorical) + ["n"] * len(numerical)
    segs = segment_masks(feats, kinds, D, V, M, K, c)
    rows = []
    for subset, levels, mask in segs:
        e = ecce(s, y, w, mask)
        sd = sigma(s, w, mask)
        z = zscore(e, sd)
        rows.append(
            {
                "subset": subset,
                "levels": levels,
                "rows": frozenset(order[mask].tolist()),
                "ecce": e,
                "sigma": sd,
                "z": z,
                "p": pvalue(z),
            }
        )
    sigma0 = rows[0]["sigma"]
    pi = float(np.sum(w * y) / np.sum(w))
    pi_star = min(pi, 1 - pi)
    mce_sigma = max(r["z"] for r in rows)
    return {
        "segments": rows,
        "mce_sigma": mce_sigma,
        "mce": mce_sigma * sigma0,
        "mce_relative": 100 * mce_sigma * sigma0 / pi_star,
        "mce_pvalue": min(r["p"] for r in rows),
        "mde": 5 * sigma0,
        "mde_relative": 100 * 5 * sigma0 / pi_star,
        "global_ecce": rows[0]["ecce"],
        "global_ecce_sigma": rows[0]["z"],
    }


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, written out."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p[i]))
        out[i] = running
    return out
