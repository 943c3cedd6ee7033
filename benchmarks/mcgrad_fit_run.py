"""Fit MCGrad 0.1.5's default ``MCGrad()`` on Parquet rows, score others (run by recalibration.py).

Runs under the interpreter that has MCGrad (its own virtual environment:
PyTorch, LightGBM), so it imports neither polars nor polars_cumdev. Reads the
training and held-out rows (score ``p``, label ``y``, categorical features
``a``, ``b``, ``c``, numerical ``x``), times ``MCGrad().fit`` (its default
hyperparameters: early stopping on 5-fold cross-validation), writes the
held-out predictions to ``out`` (Parquet, one column ``q``) and prints one
JSON line: the fit's seconds, the predict's, the rounds kept.

    /work/venv-mcgrad/bin/python benchmarks/mcgrad_fit_run.py train.parquet test.parquet out.parquet
"""

from __future__ import annotations

import json
import sys
import time

import pandas as pd
from mcgrad.methods import MCGrad

CATEGORICAL = ["a", "b", "c"]
NUMERICAL = ["x"]


def main(train_path: str, test_path: str, out_path: str) -> None:
    train, test = pd.read_parquet(train_path), pd.read_parquet(test_path)
    model = MCGrad()
    start = time.perf_counter()
    model.fit(
        train,
        prediction_column_name="p",
        label_column_name="y",
        categorical_feature_column_names=CATEGORICAL,
        numerical_feature_column_names=NUMERICAL,
    )
    fit = time.perf_counter() - start
    start = time.perf_counter()
    q = model.predict(
        test,
        prediction_column_name="p",
        categorical_feature_column_names=CATEGORICAL,
        numerical_feature_column_names=NUMERICAL,
    )
    predict = time.perf_counter() - start
    pd.DataFrame({"q": q.astype("float64")}).to_parquet(out_path)
    rounds = len(getattr(model, "mr", []) or [])
    print(json.dumps({"fit_seconds": fit, "predict_seconds": predict, "rounds": rounds}))


if __name__ == "__main__":
    main(*sys.argv[1:])
