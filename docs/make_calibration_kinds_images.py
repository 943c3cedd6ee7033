"""Draw the pictures of the multiclass and quantile sections of the calibration page.

Run from the repository root: ``python docs/make_calibration_kinds_images.py
[OUTPUT_DIR]`` (default ``docs/images``). Needs scikit-learn (the
``[sklearn]`` extra): a Gaussian naive Bayes classifier on scikit-learn's
bundled digits, and a gradient-boosted 0.9-quantile on its bundled diabetes
data, both with 5-fold out-of-sample predictions. Deterministic: the folds are
not shuffled and the booster has a fixed seed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
from sklearn.datasets import load_diabetes, load_digits
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.model_selection import cross_val_predict
from sklearn.naive_bayes import GaussianNB

import polars_cumdev  # noqa: F401  (registers the `cumdev` namespace)
from polars_cumdev import charts


def main(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    x, y = load_digits(return_X_y=True)
    proba = cross_val_predict(GaussianNB(), x, y, cv=5, method="predict_proba")
    digits = pl.DataFrame({"p": proba, "label": y})
    top = digits.cumdev.calibration_curve("p", "label", kind="top-label")
    worst = digits.cumdev.calibration("p", "label", kind="class-wise")["class"].head(3)
    curves = digits.cumdev.calibration_curve("p", "label", kind="class-wise")
    x, y = load_diabetes(return_X_y=True)
    booster = GradientBoostingRegressor(loss="quantile", alpha=0.9, random_state=0)
    q90 = cross_val_predict(booster, x, y, cv=5)
    quantile = pl.DataFrame({"q90": q90, "y": y}).cumdev.calibration_curve(
        "q90", "y", target="quantile", alpha=0.9
    )
    pictures = {
        "digits_top_label.svg": charts.cumulative(
            top,
            kind="calibration",
            subject="naive Bayes on digits, top label",
            score_label="top probability",
            y_label="cumulative share right minus top probability",
            max_points=1200,
        ),
        "digits_classes.svg": charts.calibration_classes(
            curves.filter(pl.col("class").is_in(worst.to_list()))
        ),
        "diabetes_q90.svg": charts.cumulative(
            quantile,
            kind="calibration",
            subject="0.9-quantile of diabetes progression",
            score_label="predicted 0.9-quantile",
            y_label="cumulative share at or below, minus 0.9",
        ),
    }
    return [charts.save(chart, out / name) for name, chart in pictures.items()]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "images"
    for path in main(target):
        print(path)
