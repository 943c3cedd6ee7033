"""Screen of the bundled census-like data against per-subpopulation code run once per group.

Usage::

    python benchmarks/census_vs_naive.py [--repeat 7]

Data: :func:`polars_cumdev.datasets.census` (134,094 households, 41 counties,
integer weights ``WGTP``, score ``log10_income`` with ties, response
``has_internet``). Compared, all in this process:

* the screen, ``census().lazy().cumdev.screen(...).collect(engine=...)``, for
  both engines, and the range-partitioned screen (8 ranges);
* ``naive``: a per-subpopulation function written straight from method.md
  section 1 with NumPy masks (merge ties with ``np.unique``, then for every
  merged score one boolean mask over the whole population for its bin),
  called once per county;
* ``per-group vectorized``: a per-subpopulation function a careful NumPy user
  would write (sort the population, prefix sums, ``np.searchsorted`` for the
  midpoints), called once per county; it still sorts the population at
  every call because it sees one subpopulation at a time.

All three must agree; the script prints the largest relative difference of
the Kuiper and Kolmogorov-Smirnov statistics and of sigma.
"""

from __future__ import annotations

import argparse
import os

import common
import numpy as np


def _merge(s: np.ndarray, r: np.ndarray, w: np.ndarray):
    scores, inverse = np.unique(s, return_inverse=True)
    weight = np.bincount(inverse, weights=w)
    response = np.bincount(inverse, weights=w * r) / weight
    tie = np.bincount(inverse, weights=w * w) / (weight * weight)
    return scores, weight, response, tie


def _stats(weight, response, tie, ref, var, binary) -> tuple[float, float, float, float]:
    a = weight / weight.sum()
    c = np.concatenate([[0.0], np.cumsum(a * (response - ref))])
    kuiper = c.max() - c.min()
    ks = np.abs(c[1:]).max()
    terms = ref * (1.0 - ref) if binary else var
    sigma = float(np.sqrt(max(0.0, float(np.sum(a * a * tie * terms)))))
    return kuiper, ks, c[-1], sigma


def naive(s, r, w, mask, binary) -> tuple[float, float, float, float]:
    """One subpopulation, bins found by masking the whole population (method.md 1)."""
    scores, weight, response, tie = _merge(s[mask], r[mask], w[mask])
    bounds = np.concatenate([[-np.inf], (scores[:-1] + scores[1:]) / 2.0, [np.inf]])
    ref = np.empty(scores.size)
    var = np.empty(scores.size)
    for k in range(scores.size):
        inside = (s > bounds[k]) & (s <= bounds[k + 1])
        wb, rb = w[inside], r[inside]
        sw, sww = wb.sum(), (wb * wb).sum()
        ref[k] = (wb * rb).sum() / sw
        spread = (wb * rb * rb).sum() / sw - ref[k] ** 2
        var[k] = sw * sw / (sw * sw - sww) * spread if inside.sum() > 1 else 0.0
    return _stats(weight, response, tie, ref, var, binary)


def vectorized(s, r, w, mask, binary) -> tuple[float, float, float, float]:
    """One subpopulation, bins by binary search in the sorted population."""
    order = np.argsort(s, kind="stable")
    ss, rs, ws = s[order], r[order], w[order]
    centre = np.round(2.0 * r.mean()) / 2.0
    rc = rs - centre
    prefix = [np.concatenate([[0.0], np.cumsum(x)]) for x in (ws, ws * ws, ws * rc, ws * rc * rc)]
    count = np.arange(ss.size + 1)
    scores, weight, response, tie = _merge(s[mask], r[mask], w[mask])
    bounds = np.concatenate([[-np.inf], (scores[:-1] + scores[1:]) / 2.0, [np.inf]])
    at = np.searchsorted(ss, bounds, side="right")
    sw, sww, swr, swrr = (np.diff(p[at]) for p in prefix)
    rows = np.diff(count[at])
    mean_c = swr / sw
    ref = centre + mean_c
    with np.errstate(divide="ignore", invalid="ignore"):
        unbias = np.where(rows > 1, sw * sw / (sw * sw - sww), 0.0)
    var = unbias * (swrr / sw - mean_c * mean_c)
    return _stats(weight, response, tie, ref, var, binary)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    import polars_cumdev  # noqa: F401  (registers the namespace)
    from polars_cumdev.datasets import census
    from polars_cumdev.partitioned import screen_partitioned

    print(common.machine())
    print(f"load average before: {os.getloadavg()}")
    df = census()
    cols = {"by": "county", "score": "log10_income", "response": "has_internet"}
    s = df["log10_income"].to_numpy().astype(np.float64)
    r = df["has_internet"].to_numpy().astype(np.float64)
    w = df["WGTP"].to_numpy().astype(np.float64)
    county = df["county"].to_numpy()
    binary = bool(np.all((r == 0) | (r == 1)))
    labels = sorted(set(county.tolist()))
    distinct = df["log10_income"].n_unique()
    print(f"{df.height} rows, {len(labels)} groups, {distinct} distinct scores")

    timings = {}
    results = {}
    for engine in ("in-memory", "streaming"):

        def run(engine=engine):
            return df.lazy().cumdev.screen(**cols, weight="WGTP").collect(engine=engine)

        results[engine] = run()
        timings[f"screen ({engine})"] = common.best_of(run, args.repeat)
    timings["screen_partitioned (8 ranges)"] = common.best_of(
        lambda: screen_partitioned(df, **cols, weight="WGTP", ranges=8), args.repeat
    )
    timings["df.sort(score)"] = common.best_of(lambda: df.sort("log10_income"), args.repeat)

    def per_group(function):
        return {g: function(s, r, w, county == g, binary) for g in labels}

    timings["per-group vectorized x 41"], vec = common.timed(lambda: per_group(vectorized))
    timings["naive x 41"], nai = common.timed(lambda: per_group(naive))

    screen_out = results["in-memory"].select("county", "kuiper", "ks", "sigma").rows()
    worst = {"kuiper": 0.0, "ks": 0.0, "sigma": 0.0}
    for g, kuiper, ks, sigma in screen_out:
        for other in (vec[g], nai[g]):
            for name, mine, theirs in (
                ("kuiper", kuiper, other[0]),
                ("ks", ks, other[1]),
                ("sigma", sigma, other[3]),
            ):
                worst[name] = max(worst[name], abs(mine - theirs) / abs(theirs))
    print("largest relative difference screen vs per-group code:", worst)
    base = timings["screen (in-memory)"]
    rows = [
        {"method": k, "seconds": f"{v:.4f}", "x screen (in-memory)": f"{v / base:.1f}"}
        for k, v in timings.items()
    ]
    print(f"load average after: {os.getloadavg()}")
    print(common.markdown_table(rows, ["method", "seconds", "x screen (in-memory)"]))


if __name__ == "__main__":
    main()
