"""Recalibration against scikit-learn's isotonic calibration: held-out mce, log-loss, Brier, time.

The issue's planted data, at ``rows`` training rows and as many held out:
the log-odds shrunk by 0.8 and shifted in three places (the cell a = 2 &
b = 1 by +0.7, c = 0 by -0.5, x > 1 by +0.4), with features a, b, c (6
values each) and x (numerical, 6 levels), audited to depth 3: 1,050 segments or so.
On the same pre-computed scores, side by side in one process:

* ``raw``: the scores as given;
* ``isotonic``: scikit-learn's ``CalibratedClassifierCV(method="isotonic")``
  around a frozen pass-through estimator (the scores are the model);
* ``cumdev``: ``frame.cumdev.recalibrate`` (defaults: two folds, Holm at 5%).

Held out: MCGrad's ``mce`` (``multicalibration.summary``: the largest
segment z times the full population's sigma), the number of segments
significant family-wise, log-loss and Brier score; and the fit time. Then the
time of applying the fix's expression to the held-out rows against one sort
of them by score (the issue's target: at most one sort's time).

MCGrad is not run: it needs its own virtual environment (PyTorch, LightGBM),
and none exists on this machine (``benchmarks/multicalibration.py`` shows how
it would be driven).

    python benchmarks/recalibration.py              # 1e5 rows
    python benchmarks/recalibration.py 100000 1000000
    python benchmarks/recalibration.py --shrinkage  # the ridge penalty's effect

``--shrinkage``: held-out log-loss and Brier score (40,000 rows) of fixes
fitted on 8,000 rows (the family of tests/analyses/test_recalibration.py:
depth 2, 6 levels), at ``shrinkage`` 1e-9 (none), 1, 10 and 100, mean of
five seeds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl
from common import best_of, machine, markdown_table

import polars_cumdev as pc
from polars_cumdev.multicalibration import summary

FAMILY = pc.segments(["a", "b", "c"], ["x"], depth=3, levels=6)


def planted(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a, b, c = rng.integers(0, 6, n), rng.integers(0, 6, n), rng.integers(0, 6, n)
    x = rng.normal(size=n)
    t = 1.2 * rng.normal(size=n) + 0.3 * x
    truth = t + 0.7 * ((a == 2) & (b == 1)) - 0.5 * (c == 0) + 0.4 * (x > 1)
    y = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(np.int64)
    return pl.DataFrame({"a": a, "b": b, "c": c, "x": x, "p": 1 / (1 + np.exp(-0.8 * t)), "y": y})


def isotonic(train: pl.DataFrame) -> tuple[float, object]:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    class Scores(ClassifierMixin, BaseEstimator):
        """The pre-computed score (column 0 of X) as the model's probability."""

        def fit(self, X, y):  # noqa: N803
            self.classes_ = np.array([0, 1])
            return self

        def predict_proba(self, X):  # noqa: N803
            p = np.asarray(X)[:, 0]
            return np.column_stack([1 - p, p])

        def predict(self, X):  # noqa: N803
            return (np.asarray(X)[:, 0] >= 0.5).astype(np.int64)

    model = Scores().fit(None, None)
    start = time.perf_counter()
    fitted = CalibratedClassifierCV(FrozenEstimator(model), method="isotonic").fit(
        train.select("p").to_numpy(), train["y"].to_numpy()
    )
    return time.perf_counter() - start, fitted


def figures(name: str, test: pl.DataFrame, p: np.ndarray, seconds: float | None) -> dict:
    y = test["y"].to_numpy()
    q = np.clip(p, 1e-15, 1 - 1e-15)
    table = test.with_columns(pl.Series("q", p)).cumdev.multicalibration("q", "y", segments=FAMILY)
    facts = summary(table).row(0, named=True)
    return {
        "scores": name,
        "segments": facts["segments"],
        "significant": facts["significant"],
        "mce": f"{facts['mce']:.5f}",
        "mce_sigma": f"{facts['mce_sigma']:.2f}",
        "log_loss": f"{-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)):.5f}",
        "brier": f"{np.mean((p - y) ** 2):.5f}",
        "fit_s": "-" if seconds is None else f"{seconds:.2f}",
    }


def run(rows: int) -> None:
    train, test = planted(rows, 1), planted(rows, 2)
    train.cumdev.recalibrate("p", "y", segments=pc.segments(["a"], depth=1))  # compile, warm
    start = time.perf_counter()
    fix = train.cumdev.recalibrate("p", "y", segments=FAMILY)
    ours = time.perf_counter() - start
    theirs, calibrated = isotonic(train)
    q_iso = calibrated.predict_proba(test.select("p").to_numpy())[:, 1]
    q_ours = test.select(fix.expr()).to_series().to_numpy()
    lines = [
        figures("raw", test, test["p"].to_numpy(), None),
        figures("isotonic (scikit-learn)", test, q_iso, theirs),
        figures("cumdev recalibrate", test, q_ours, ours),
    ]
    print(f"\n{rows:,} training rows, {rows:,} held out; {fix.table.height} corrections:")
    print(fix.table.select("segment", "change", "z", "p_family", "level"))
    print(markdown_table(lines, list(lines[0])))
    big = pl.concat([test] * max(1, 1_000_000 // rows)) if rows < 1_000_000 else test
    apply = best_of(lambda: big.select(fix.expr()), 3)
    sort = best_of(lambda: big.sort("p"), 3)
    print(
        f"apply the expression to {big.height:,} rows: {apply:.3f} s; one sort by score: "
        f"{sort:.3f} s (ratio {apply / sort:.2f})"
    )


def shrinkage_sweep() -> None:
    family = pc.segments(["a", "b", "c"], ["x"], depth=2, levels=6)
    results: dict[float, list[tuple[float, float, int]]] = {}
    for seed in range(5):
        train, test = planted(8000, 100 + seed), planted(40_000, 200 + seed)
        y = test["y"].to_numpy()
        for lam in (1e-9, 1.0, 10.0, 100.0):
            fix = train.cumdev.recalibrate("p", "y", segments=family, shrinkage=lam)
            q = np.clip(test.select(fix.expr()).to_series().to_numpy(), 1e-15, 1 - 1e-15)
            loss = float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))
            results.setdefault(lam, []).append(
                (loss, float(np.mean((q - y) ** 2)), len(fix.corrections))
            )
    lines = [
        {
            "shrinkage": f"{lam:g}",
            "log_loss": f"{np.mean([r[0] for r in rs]):.6f}",
            "brier": f"{np.mean([r[1] for r in rs]):.6f}",
            "corrections": f"{np.mean([r[2] for r in rs]):.1f}",
        }
        for lam, rs in results.items()
    ]
    print(markdown_table(lines, list(lines[0])))


def main(sizes: list[int]) -> None:
    print(machine())
    for rows in sizes:
        run(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000])
    parser.add_argument("--shrinkage", action="store_true", help="the ridge penalty's effect")
    arguments = parser.parse_args()
    if arguments.shrinkage:
        shrinkage_sweep()
    else:
        main(arguments.sizes)
