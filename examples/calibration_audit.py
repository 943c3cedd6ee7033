"""Audit the calibration of a small classifier, overall and group by group.

The classifier is a logistic regression written with NumPy only, in the
fit / predict_proba style of scikit-learn (no scikit-learn needed). It is
trained on half of the bundled census-like survey to predict internet access
from household features that do not include the county, then audited on the
other half: close to calibrated overall, yet the counties that were built to
deviate are clearly miscalibrated. A second part recalibrates miscalibrated scores (Platt scaling
with the same class) and audits them before and after.

Usage: python examples/calibration_audit.py [OUTPUT_DIR]
(or set CUMDEV_EXAMPLES_OUT; by default a new temporary directory is used).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

import polars_cumdev  # noqa: F401  (registers the `cumdev` namespace)
from polars_cumdev import charts
from polars_cumdev.datasets import calibration_linear, census


class LogisticRegression:
    """Binary logistic regression fitted by Newton's method (IRLS), NumPy only."""

    def __init__(self, steps: int = 8, ridge: float = 1e-6) -> None:
        self.steps = steps  # a handful of Newton steps is plenty here
        self.ridge = ridge  # a tiny ridge keeps the Hessian invertible
        self.coef_: np.ndarray | None = None

    @staticmethod
    def _design(x: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(x)), x])  # intercept first

    def fit(self, x: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None):
        design = self._design(x)
        w = np.ones(len(y)) if sample_weight is None else sample_weight / sample_weight.mean()
        beta = np.zeros(design.shape[1])
        for _ in range(self.steps):
            p = 1.0 / (1.0 + np.exp(-design @ beta))
            gradient = design.T @ (w * (y - p))
            hessian = (design * (w * p * (1 - p))[:, None]).T @ design
            hessian += self.ridge * np.eye(len(beta))
            beta += np.linalg.solve(hessian, gradient)
        self.coef_ = beta
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        assert self.coef_ is not None, "call fit first"
        p = 1.0 / (1.0 + np.exp(-self._design(x) @ self.coef_))
        return np.column_stack([1 - p, p])  # columns: class 0, class 1


def output_dir() -> Path:
    chosen = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CUMDEV_EXAMPLES_OUT")
    path = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="cumdev-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def audit_by_county(out: Path) -> None:
    data = census().with_columns(
        (pl.int_range(pl.len()) % 2 == 0).alias("train")  # a fixed 50/50 split
    )
    features = ["log10_income", "rooms", "vehicles", "children"]
    train, test = data.filter("train"), data.filter(~pl.col("train"))

    model = LogisticRegression().fit(
        train.select(features).to_numpy(),
        train["has_internet"].to_numpy(),
        sample_weight=train["WGTP"].to_numpy().astype(float),
    )
    test = test.with_columns(
        pl.Series("p_internet", model.predict_proba(test.select(features).to_numpy())[:, 1])
    )

    # Overall: ECCE-R and ECCE-MAD with their z-values and p-values.
    overall = test.cumdev.calibration(score="p_internet", response="has_internet", weight="WGTP")
    print("overall calibration on the held-out half:")
    print(overall.select("n", "ecce_r", "ecce_r_z", "ecce_r_p"))

    # Group by group: the model never saw the county, so deviating counties show up.
    by_county = test.cumdev.calibration(
        score="p_internet", response="has_internet", weight="WGTP", by="county"
    )
    print("worst calibrated counties:")
    print(by_county.select("county", "n", "ecce_r", "ecce_r_z", "ecce_r_q", "delta").head(4))

    # Drill down into the worst county and save its cumulative plot.
    worst = by_county["county"][0]
    points = test.filter(pl.col("county") == worst).cumdev.calibration_curve(
        score="p_internet", response="has_internet", weight="WGTP"
    )
    target = out / "calibration_worst_county.svg"
    chart = charts.cumulative(points, kind="calibration", score_label="predicted probability")
    charts.save(chart, target)
    print(f"wrote {target}")


def recalibrate(out: Path) -> None:
    # Scores that are too high above 0.1 (appendix A's linear example), split in two.
    data = calibration_linear(10_000).with_columns((pl.int_range(pl.len()) % 2 == 0).alias("fit"))
    fit, audit = data.filter("fit"), data.filter(~pl.col("fit"))

    # Platt scaling: a logistic regression on the log-odds of the raw score.
    def logit(s: pl.Series) -> np.ndarray:
        s = s.to_numpy().clip(1e-6, 1 - 1e-6)
        return np.log(s / (1 - s))[:, None]

    platt = LogisticRegression().fit(logit(fit["score"]), fit["response"].to_numpy())
    audit = audit.with_columns(
        pl.Series("recalibrated", platt.predict_proba(logit(audit["score"]))[:, 1])
    )
    before = audit.cumdev.calibration(score="score", response="response")
    after = audit.cumdev.calibration(score="recalibrated", response="response")
    print(
        f"raw scores:   ECCE-R z = {before['ecce_r_z'][0]:.1f}\n"
        f"recalibrated: ECCE-R z = {after['ecce_r_z'][0]:.1f}"
    )
    audit.write_parquet(out / "recalibrated.parquet")


def main() -> None:
    out = output_dir()
    audit_by_county(out)
    recalibrate(out)


if __name__ == "__main__":
    main()
