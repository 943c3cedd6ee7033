"""Issue 25, item 9: the same data give the same bits.

Whatever the row order, the number of Polars threads (1, 2, 4, each in a
fresh process) and the chunks the rows arrive in (one chunk, many chunks,
the streaming engine, a Parquet file of several row groups), every analysis
returns the same bits: results are compared with ``==`` on their printed
``repr`` of every float, never with a tolerance.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np, polars as pl
    import polars_cumdev  # noqa: F401

    def frame(n=60000):
        rng = np.random.default_rng(7)
        return pl.DataFrame({
            "g": rng.integers(0, 6, n),
            "s": np.round(rng.random(n), 3),          # about 60 rows per score: many ties
            "r": rng.random(n).round(1),
            "r2": rng.random(n).round(1),
            "y": rng.random(n) < 0.4,
            "w": rng.lognormal(0.0, 1.0, n),           # uneven weights: order shows in sums
        })

    def digest(out):
        return hashlib.sha1(repr(out.rows()).encode()).hexdigest()

    def analyses(df):
        eager = isinstance(df, pl.DataFrame)
        lazy = df.lazy()
        def run(q):
            return q.collect(engine="streaming") if not eager else q.collect()
        return {
            "screen polars": run(lazy.cumdev.screen("g", "s", "r", "w", engine="polars")),
            "screen kernel": run(lazy.cumdev.screen("g", "s", "r", "w", engine="kernel")),
            "calibration polars": run(
                lazy.cumdev.calibration("s", "y", "w", by="g", engine="polars")),
            "calibration kernel": run(
                lazy.cumdev.calibration("s", "y", "w", by="g", engine="kernel")),
            "paired": run(lazy.cumdev.paired("s", "r", "r2", "w", by="g")),
            "corp": run(lazy.cumdev.corp("s", "y", "w", by="g")),
            "compare_all": run(lazy.cumdev.compare_all("g", 0, "s", "r", "w", ties="dither")),
            "curve": run(lazy.cumdev.curve(pl.col("g") == 1, "s", "r", "w", engine="polars")),
        }

    df = frame()
    path = sys.argv[1]
    configurations = {
        "as given": df,
        "shuffled 1": df.sample(fraction=1.0, shuffle=True, seed=1),
        "shuffled 2": df.sample(fraction=1.0, shuffle=True, seed=2),
        "many chunks": pl.concat(
            [df.slice(i, 6007) for i in range(0, df.height, 6007)], rechunk=False
        ),
    }
    df.sample(fraction=1.0, shuffle=True, seed=3).write_parquet(path, row_group_size=7001)
    out = {}
    for name, data in configurations.items():
        out[name] = {k: digest(v) for k, v in analyses(data).items()}
    out["streamed"] = {
        k: digest(v) for k, v in analyses(df.sample(fraction=1.0, shuffle=True, seed=4).lazy())
        .items()
    }
    out["scanned parquet"] = {k: digest(v) for k, v in analyses(pl.scan_parquet(path)).items()}
    print(json.dumps(out))
    """
)


def _run(threads: int, tmp: Path) -> dict:
    env = {**os.environ, "POLARS_MAX_THREADS": str(threads)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp / f"rows{threads}.parquet")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_same_bits_whatever_order_threads_and_chunks(tmp_path):
    runs = {threads: _run(threads, tmp_path) for threads in (1, 2, 4)}
    reference = runs[1]["as given"]
    differing = [
        (threads, configuration, analysis)
        for threads, run in runs.items()
        for configuration, digests in run.items()
        for analysis, value in digests.items()
        if value != reference[analysis]
    ]
    assert not differing, differing
