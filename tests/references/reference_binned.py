"""A deliberately naive transcription of method.md section 3 (binned metrics).

Plain Python loops over rows and bins, no Polars and nothing from
``polars_cumdev``: the yardstick for ``polars_cumdev.binned``. The
conventions the spec leaves open are the ones documented in that module:

* rows of a population are ordered by (score, response, weight);
* equispaced bin j is (e_j, e_{j+1}] with e_k = lo + (hi - lo) * k / l, the
  first bin closed below, the outer bins unbounded;
* equal-count bins hold q = max(n // l, 1) rows, the last bin the remainder;
* equal-error (Remark 5): U from the first q weights of
  ``default_rng(seed).permutation(n)``; bins 0..l-2 grow row by row until
  sqrt(sum W^2) / sum W <= U, bin l-1 takes the rest; a last bin with fewer
  than half the rows of the one before is merged into it;
* ``bin`` is the bin's index before empty bins are dropped;
* bootstrap: one ``default_rng(seed)``, full population's resamples first,
  each ``integers(0, n, size=n)`` positions in the sorted order; a drawn row
  keeps its observed bin.
"""

from __future__ import annotations

import math

import numpy as np

SUBPOPULATION, FULL = "subpopulation", "full"


def _sorted(s, r, w):
    s = [float(x) for x in s]
    r = [float(x) for x in r]
    w = [1.0] * len(s) if w is None else [float(x) for x in w]
    order = sorted(range(len(s)), key=lambda i: (s[i], r[i], w[i]))
    return [s[i] for i in order], [r[i] for i in order], [w[i] for i in order]


def equispaced_labels(s, bins, unit):
    lo, hi = (0.0, 1.0) if unit else (min(s), max(s))
    labels = []
    for x in s:
        j = 0
        if hi != lo:
            for k in range(1, bins):
                edge = lo + (hi - lo) * k / bins
                if x > edge:
                    j = k
        labels.append(j)
    return labels


def equal_count_labels(n, bins):
    size = max(n // bins, 1)
    return [min(i // size, bins - 1) for i in range(n)]


def equal_error_labels(w, bins, seed):
    n = len(w)
    size = max(n // bins, 1)
    permutation = np.random.default_rng(seed).permutation(n)
    total = 0.0
    squares = 0.0
    for p in permutation[:size]:
        total += w[p]
        squares += w[p] * w[p]
    target = math.sqrt(squares) / total
    groups = []
    i = 0
    while i < n:
        current = []
        if len(groups) == bins - 1:
            current = list(range(i, n))
            i = n
        else:
            a = 0.0
            b = 0.0
            while i < n:
                current.append(i)
                a += w[i]
                b += w[i] * w[i]
                i += 1
                if math.sqrt(b) / a <= target:
                    break
        groups.append(current)
    if len(groups) >= 2 and len(groups[-1]) < len(groups[-2]) / 2:
        groups[-2] = groups[-2] + groups[-1]
        groups.pop()
    labels = [0] * n
    for j, members in enumerate(groups):
        for i in members:
            labels[i] = j
    return labels


def labels_for(s, w, bins, binning, unit, seed):
    if binning == "equispaced":
        return equispaced_labels(s, bins, unit)
    if binning == "equal_count":
        return equal_count_labels(len(s), bins)
    if binning == "equal_error":
        return equal_error_labels(w, bins, seed)
    raise ValueError(binning)


def bin_table(s, r, w, labels, multiplicity=None):
    """{bin: dict(weight, score_mean, response_mean, count, first)} for non-empty bins."""
    table = {}
    for i in range(len(s)):
        m = 1 if multiplicity is None else multiplicity[i]
        if m == 0:
            continue
        j = labels[i]
        entry = table.setdefault(j, {"w": 0.0, "ws": 0.0, "wr": 0.0, "count": 0, "first": s[i]})
        entry["w"] += m * w[i]
        entry["ws"] += m * w[i] * s[i]
        entry["wr"] += m * w[i] * r[i]
        entry["count"] += m
        entry["first"] = min(entry["first"], s[i])
    out = {}
    for j in sorted(table):
        e = table[j]
        out[j] = {
            "weight": e["w"],
            "score_mean": e["ws"] / e["w"],
            "response_mean": e["wr"] / e["w"],
            "count": e["count"],
            "first": e["first"],
        }
    return out


def reliability(s, r, w=None, member=None, *, bins, binning, unit=False, seed=0, resamples=0):
    """List of row dicts in the order of ``polars_cumdev.binned.reliability``."""
    populations = []
    if member is not None:
        keep = [i for i in range(len(s)) if member[i]]
        ws = None if w is None else [w[i] for i in keep]
        populations.append((SUBPOPULATION, [s[i] for i in keep], [r[i] for i in keep], ws))
    populations.append((FULL, list(s), list(r), None if w is None else list(w)))
    prepared = {}
    for name, ps, pr, pw in populations:
        ss, rr, ww = _sorted(ps, pr, pw)
        prepared[name] = (ss, rr, ww, labels_for(ss, ww, bins, binning, unit, seed))
    boot = {name: [] for name, *_ in populations}
    rng = np.random.default_rng(seed)
    for name in (FULL, SUBPOPULATION):
        if name not in prepared:
            continue
        ss, rr, ww, labels = prepared[name]
        n = len(ss)
        for _ in range(resamples):
            drawn = rng.integers(0, n, size=n)
            multiplicity = [0] * n
            for i in drawn:
                multiplicity[int(i)] += 1
            boot[name].append(bin_table(ss, rr, ww, labels, multiplicity))
    rows = []
    for name, *_ in populations:
        ss, rr, ww, labels = prepared[name]
        tables = [(None, bin_table(ss, rr, ww, labels))]
        tables += list(enumerate(boot[name]))
        for resample, table in tables:
            for j, e in table.items():
                rows.append(
                    {
                        "population": name,
                        "bin": j,
                        "score_mean": e["score_mean"],
                        "response_mean": e["response_mean"],
                        "weight": e["weight"],
                        "count": e["count"],
                        "resample": resample,
                    }
                )
    return rows


def ece(s, r, w=None, *, bins, binning, weighting, seed=0):
    """dict(n, bins, ece1, ece2) following method.md 3 and (3)-(4) of the ECE paper."""
    ss, rr, ww = _sorted(s, r, w)
    labels = labels_for(ss, ww, bins, binning, True, seed)
    table = bin_table(ss, rr, ww, labels)
    keys = list(table)
    total = sum(table[j]["weight"] for j in keys)
    ece1 = 0.0
    ece2 = 0.0
    for position, j in enumerate(keys):
        if weighting == "count":
            width = table[j]["weight"] / total
        elif binning == "equispaced":
            width = 1.0 / bins
        else:
            following = table[keys[position + 1]]["first"] if position + 1 < len(keys) else 1.0
            width = following - table[j]["first"]
        gap = table[j]["response_mean"] - table[j]["score_mean"]
        ece1 += width * abs(gap)
        ece2 += width * gap * gap
    return {"n": len(ss), "bins": len(keys), "ece1": ece1, "ece2": ece2}
