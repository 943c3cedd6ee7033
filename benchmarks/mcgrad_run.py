"""Time MCGrad 0.1.5's ``MulticalibrationError`` on a Parquet file (run by multicalibration.py).

Runs under the interpreter that has MCGrad (its own virtual environment:
MCGrad pulls in PyTorch, which polars-cumdev's environment has not got), so
it imports neither polars nor polars_cumdev. Prints one JSON line: the
seconds to build the metric and compute ``mce_sigma`` (which evaluates every
segment), the figures to cross-check, the number of segments and the added
peak resident memory.

    /work/venv-mcgrad/bin/python benchmarks/mcgrad_run.py frame.parquet [float32|float64]
"""

from __future__ import annotations

import json
import resource
import sys
import time

import pandas as pd
from mcgrad.metrics import MulticalibrationError


def main(path: str, precision: str = "float32") -> None:
    frame = pd.read_parquet(path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    metric = MulticalibrationError(
        frame,
        label_column="y",
        score_column="s",
        weight_column="w",
        categorical_segment_columns=[c for c in frame.columns if c.startswith("c")],
        numerical_segment_columns=[c for c in frame.columns if c.startswith("x")],
        precision_dtype=precision,
    )
    mce_sigma = float(metric.mce_sigma)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    figures = {
        "seconds": seconds,
        "mce_sigma": mce_sigma,
        "mce": float(metric.mce),
        "mde": float(metric.mde),
        "segments": len(metric.segments_ecce),
        "added_peak_bytes": int(peak - before),
        "precision": precision,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main(*sys.argv[1:])
