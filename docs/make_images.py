"""Draw the pictures shown in README.md and the docs from the bundled data.

Run from the repository root: ``python docs/make_images.py [OUTPUT_DIR]``
(default ``docs/images``). Everything is deterministic: the data are generated
with fixed seeds, so the pictures change only when the method or the charts do.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

import polars_cumdev  # noqa: F401  (registers the `cumdev` namespace)
from polars_cumdev import charts
from polars_cumdev.binned import smooth_ece
from polars_cumdev.datasets import calibration_oscillating, census, weekly_predictions
from polars_cumdev.drift import calibration_drift

COLUMNS = {"score": "log10_income", "response": "has_internet", "weight": "WGTP"}


def main(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    households = census().lazy()
    ranked = households.cumdev.screen(by="county", **COLUMNS).collect()
    county = ranked["county"][0]
    subpop = pl.col("county") == county
    points = households.cumdev.curve(subpop, **COLUMNS).collect()
    bins = households.cumdev.reliability(subpop=subpop, bins=10, resamples=20, **COLUMNS)
    predictions = calibration_oscillating()
    sweep = predictions.cumdev.ece_sweep("score", "response")
    ecce = predictions.cumdev.calibration("score", "response")
    calibration_points = predictions.cumdev.calibration_curve("score", "response")
    corp_curve = predictions.cumdev.corp_curve("score", "response")
    corp = predictions.cumdev.corp("score", "response")
    with_age = census(age=True).lazy()
    oakridge = with_age.cumdev.curve(
        pl.col("county") == "Oakridge", ["log10_income", "age"], "broadband", "WGTP"
    ).collect()
    pictures = {
        "screen.svg": charts.screen(ranked, by="county"),
        "cumulative.svg": charts.cumulative(
            points,
            subject=f"county = {county}",
            score_label="log10_income",
            y_label="cumulative difference in has_internet",
        ),
        "reliability.svg": charts.reliability(
            bins.collect(), title=f"reliability diagram: {county} (black) vs all (gray)"
        ),
        "ece_sweep.svg": charts.ece_sweep(
            sweep, ecce=ecce, smooth=smooth_ece(predictions, "score", "response")
        ),
        "calibration_band.svg": charts.cumulative(
            calibration_points,
            kind="calibration",
            score_label="predicted probability",
            band=0.05,
            max_points=1200,
        ),
        "corp.svg": charts.corp(corp_curve, summary=corp),
        "covariate_map.svg": charts.covariate_map(oakridge, max_points=1500),
        "drift.svg": charts.drift(
            calibration_drift(weekly_predictions(seed=0), "score", "response", time="ts")
        ),
    }
    pictures["sklearn_display.svg"] = _sklearn_display().plot(band=0.05)
    return [charts.save(chart, out / name) for name, chart in pictures.items()]


def _sklearn_display():  # the [sklearn] extra (part of the test extra)
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from polars_cumdev.sklearn import CumulativeCalibrationDisplay

    x, y = load_breast_cancer(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(x, y, random_state=0)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    model.fit(x_train, y_train)
    return CumulativeCalibrationDisplay.from_estimator(model, x_test, y_test)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "images"
    for path in main(target):
        print(path)
