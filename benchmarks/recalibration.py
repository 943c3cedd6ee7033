"""Recalibration against its peers: held-out mce, significance, log-loss, Brier, fit time.

The issue's planted data, at ``rows`` training rows and as many held out:
the log-odds shrunk by 0.8 and shifted in three places (the cell a = 2 &
b = 1 by +0.7, c = 0 by -0.5, x > 1 by +0.4), with features a, b, c (6
values each) and x (numerical, 6 levels), audited to depth 3: 1,105 segments.
On the same pre-computed scores, side by side in one process:

* ``raw``: the scores as given;
* ``isotonic`` and ``sigmoid``: scikit-learn's ``CalibratedClassifierCV``
  (``method="isotonic"`` / ``"sigmoid"``) around ``FrozenEstimator`` of a
  pass-through estimator whose ``decision_function`` is logit(score) (so
  the sigmoid is Platt's fit on the log-odds; the isotonic fit is the same
  on the score or its log-odds); these see the score only, no segment;
* ``MCGrad``: MCGrad 0.1.5's default ``MCGrad()`` fitted on the score and
  the features a, b, c (categorical) and x (numerical), in its own virtual
  environment (``--mcgrad-python``, default ``$MCGRAD_PYTHON``), which runs
  ``mcgrad_fit_run.py`` on the same rows written to Parquet files;
* ``cumdev``: ``frame.cumdev.recalibrate`` (defaults: two folds, Holm at 5%).

Held out: MCGrad's ``mce`` (``multicalibration.summary``: the largest
segment z times the full population's sigma), the number of segments
significant family-wise (Holm at 5%), log-loss and Brier score; and the fit
time (MCGrad's as its runner measures it around ``fit``, without the
interpreter's start and the Parquet reads; LightGBM and PyTorch on one
OpenMP thread unless ``OMP_NUM_THREADS`` says otherwise: on this shared
2-core machine their default threads spin against the other jobs, and one
thread fitted 1e5 rows in 48 s where the default took 235 s, so one thread
is MCGrad's better case). ``--apply ROWS`` instead times
applying a fix (fitted on 1e5 rows) to ROWS new rows against one sort of
them by score (the issue's target: at most one sort's time).

    python benchmarks/recalibration.py              # 1e5 rows
    python benchmarks/recalibration.py 100000 1000000 --mcgrad-python /work/venv-mcgrad/bin/python
    python benchmarks/recalibration.py --apply 10000000
    python benchmarks/recalibration.py --shrinkage  # the ridge penalty's effect

``--shrinkage``: held-out log-loss and Brier score (40,000 rows) of fixes
fitted on 8,000 rows (the family of tests/analyses/test_recalibration.py:
depth 2, 6 levels), at ``shrinkage`` 1e-9 (none), 1, 10 and 100, mean of
five seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from common import best_of, machine, markdown_table

import polars_cumdev as pc
from polars_cumdev.multicalibration import summary

HERE = Path(__file__).resolve().parent
FAMILY = pc.segments(["a", "b", "c"], ["x"], depth=3, levels=6)


def planted(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a, b, c = rng.integers(0, 6, n), rng.integers(0, 6, n), rng.integers(0, 6, n)
    x = rng.normal(size=n)
    t = 1.2 * rng.normal(size=n) + 0.3 * x
    truth = t + 0.7 * ((a == 2) & (b == 1)) - 0.5 * (c == 0) + 0.4 * (x > 1)
    y = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(np.int64)
    return pl.DataFrame({"a": a, "b": b, "c": c, "x": x, "p": 1 / (1 + np.exp(-0.8 * t)), "y": y})


def scikit_learn(train: pl.DataFrame, method: str) -> tuple[float, object]:
    """``CalibratedClassifierCV(FrozenEstimator(scores), method=method)`` fitted on ``train``."""
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    class Scores(ClassifierMixin, BaseEstimator):
        """The pre-computed score (column 0 of X) as the model; its log-odds as the decision."""

        def fit(self, X, y):  # noqa: N803
            self.classes_ = np.array([0, 1])
            return self

        def decision_function(self, X):  # noqa: N803
            p = np.clip(np.asarray(X)[:, 0], 1e-15, 1 - 1e-15)
            return np.log(p) - np.log1p(-p)

        def predict_proba(self, X):  # noqa: N803
            p = np.asarray(X)[:, 0]
            return np.column_stack([1 - p, p])

        def predict(self, X):  # noqa: N803
            return (np.asarray(X)[:, 0] >= 0.5).astype(np.int64)

    model = Scores().fit(None, None)
    start = time.perf_counter()
    fitted = CalibratedClassifierCV(FrozenEstimator(model), method=method).fit(
        train.select("p").to_numpy(), train["y"].to_numpy()
    )
    return time.perf_counter() - start, fitted


def mcgrad(train: pl.DataFrame, test: pl.DataFrame, python: str) -> tuple[dict, np.ndarray] | None:
    """MCGrad's default fit on ``train`` under ``python``: its figures and held-out scores."""
    with tempfile.TemporaryDirectory() as folder:
        paths = [str(Path(folder) / f) for f in ("train.parquet", "test.parquet", "q.parquet")]
        train.write_parquet(paths[0])
        test.write_parquet(paths[1])
        done = subprocess.run(
            [python, str(HERE / "mcgrad_fit_run.py"), *paths],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")},
        )
        if done.returncode != 0:
            print(f"  MCGrad failed under {python}:\n{done.stderr[-2000:]}")
            return None
        q = pl.read_parquet(paths[2]).get_column("q").to_numpy()
    return json.loads(done.stdout.strip().splitlines()[-1]), q


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


def run(rows: int, python: str | None) -> None:
    train, test = planted(rows, 1), planted(rows, 2)
    planted(20_000, 9).cumdev.recalibrate("p", "y", segments=FAMILY)  # compile every kernel, warm
    start = time.perf_counter()
    fix = train.cumdev.recalibrate("p", "y", segments=FAMILY)
    ours = time.perf_counter() - start
    lines = [figures("raw", test, test["p"].to_numpy(), None)]
    for method in ("isotonic", "sigmoid"):
        seconds, calibrated = scikit_learn(train, method)
        q = calibrated.predict_proba(test.select("p").to_numpy())[:, 1]
        lines.append(figures(f"{method} (scikit-learn)", test, q, seconds))
    theirs = None if python is None else mcgrad(train, test, python)
    if theirs is not None:
        lines.append(figures("MCGrad 0.1.5 default", test, theirs[1], theirs[0]["fit_seconds"]))
    lines.append(
        figures("cumdev recalibrate", test, test.select(fix.expr()).to_series().to_numpy(), ours)
    )
    print(f"\n{rows:,} training rows, {rows:,} held out; {fix.table.height} corrections:")
    print(fix.table.select("segment", "change", "z", "p_family", "level"))
    print(markdown_table(lines, list(lines[0])))
    if theirs is None:
        print("MCGrad not run (no --mcgrad-python)")
        return
    facts, _ = theirs
    mine, mc = lines[-1], lines[-2]
    print(
        f"MCGrad: fit {facts['fit_seconds']:.2f} s ({facts['rounds']} rounds), predict "
        f"{facts['predict_seconds']:.2f} s; cumdev fit {ours:.2f} s: "
        f"{facts['fit_seconds'] / ours:.1f}x faster (target >= 10x at 1e6 rows)"
    )
    print(
        f"held-out mce: cumdev {mine['mce']} against MCGrad {mc['mce']}; significant: "
        f"{mine['significant']} against {mc['significant']}; log-loss cumdev / MCGrad "
        f"{float(mine['log_loss']) / float(mc['log_loss']):.4f} (target <= 1.005)"
    )


def apply_time(rows: int) -> None:
    """One fix (fitted on 1e5 rows) applied to ``rows`` new rows against one sort by score."""
    fix = planted(100_000, 1).cumdev.recalibrate("p", "y", segments=FAMILY)
    big = planted(rows, 3)
    big.head(1000).select(fix.expr())  # warm
    apply = best_of(lambda: big.select(fix.expr()), 2)
    sort = best_of(lambda: big.sort("p"), 2)
    print(
        f"{len(fix.corrections)} corrections and a {len(fix.monotone.knots) if fix.monotone else 0}"
        f"-knot map applied to {big.height:,} rows: {apply:.3f} s; one sort of the frame by "
        f"score: {sort:.3f} s (ratio {apply / sort:.2f}; best of two each)"
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


def main(sizes: list[int], python: str | None) -> None:
    print(machine())
    for rows in sizes:
        run(rows, python)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000])
    parser.add_argument("--shrinkage", action="store_true", help="the ridge penalty's effect")
    parser.add_argument("--apply", type=int, help="time applying a fix to this many rows")
    parser.add_argument("--mcgrad-python", default=os.environ.get("MCGRAD_PYTHON"))
    arguments = parser.parse_args()
    if arguments.shrinkage:
        shrinkage_sweep()
    elif arguments.apply:
        print(machine())
        apply_time(arguments.apply)
    else:
        main(arguments.sizes, arguments.mcgrad_python)
