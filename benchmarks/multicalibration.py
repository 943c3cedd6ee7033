"""Multicalibration audit: time and memory against one sort of the frame, per resample, MCGrad.

The configuration of multicalibration-mcgrad.md (f): 4 categorical features of
5 values and 3 numerical ones, continuous scores, weights, depth 3, MCGrad's
segment rules and its default cap of 1,000 segments (the same segments as
MCGrad). Prints, side by side in one run, the time of one ``sort`` of the
frame by score, of the audit (Holm), their ratio, the bootstrap's cost per
resample, and the added peak memory (resident set, sampled) against the size
of the input columns.

MCGrad 0.1.5 is timed at 1e6 rows or fewer (at 1e7 it runs out of 24 GB,
spec (f)) when it can be run: in this process when ``mcgrad`` is importable,
else under ``--mcgrad-python PATH`` (or ``$MCGRAD_PYTHON``), an interpreter
that has it (MCGrad needs PyTorch, 6.7 GB, so it lives in its own virtual
environment), which runs ``mcgrad_run.py`` on the same rows written to a
Parquet file, right after our audit. Its ``mce_sigma``, ``mce`` and ``mde``
are printed beside ours (MCGrad's default float32 arithmetic: expect ~1e-7).
Without either, the script says MCGrad was not timed.

    python benchmarks/multicalibration.py                      # 1e6 and 1e7 rows
    python benchmarks/multicalibration.py 1000000 --mcgrad-python /work/venv-mcgrad/bin/python
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl

import polars_cumdev as pc
from polars_cumdev.multicalibration import multicalibration, summary

HERE = Path(__file__).resolve().parent


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


class Peak:
    """Largest resident set seen while the block runs, sampled every 10 ms."""

    def __enter__(self):
        self.base, self.peak, self.done = _rss(), _rss(), False

        def watch():
            while not self.done:
                self.peak = max(self.peak, _rss())
                time.sleep(0.01)

        self.thread = threading.Thread(target=watch, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done = True
        self.thread.join()
        self.added = self.peak - self.base


def frame(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 5.0, n)
    columns = {"s": s, "y": (rng.random(n) < s).astype(np.int8), "w": rng.uniform(0.5, 2.0, n)}
    for k in range(4):
        columns[f"c{k}"] = rng.integers(0, 5, n).astype(np.int32)
    for k in range(3):
        columns[f"x{k}"] = rng.normal(size=n)
    return pl.DataFrame(columns)


def best(function, repeats: int = 2) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def mcgrad(data: pl.DataFrame, python: str | None) -> dict | None:
    """MCGrad's time and figures on ``data`` (in process, or under ``python``), or None."""
    if importlib.util.find_spec("mcgrad") is not None:
        sys.path.insert(0, str(HERE))
        import mcgrad_run

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "frame.parquet"
            data.write_parquet(path)
            from contextlib import redirect_stdout
            from io import StringIO

            text = StringIO()
            with redirect_stdout(text):
                mcgrad_run.main(str(path))
        return json.loads(text.getvalue())
    if python is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "frame.parquet"
        data.write_parquet(path)
        done = subprocess.run(
            [python, str(HERE / "mcgrad_run.py"), str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        print(f"  MCGrad failed under {python}:\n{done.stderr[-2000:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(sizes: list[int], python: str | None) -> None:
    family = pc.segments(
        [f"c{k}" for k in range(4)],
        [f"x{k}" for k in range(3)],
        depth=3,
        rules="mcgrad",
        max_segments=1000,
    )
    where = "in this process" if importlib.util.find_spec("mcgrad") else python
    print(f"load average {os.getloadavg()}; MCGrad timed: {where or 'NO'}")
    if where is None:
        print(
            "  MCGrad is not importable here and no --mcgrad-python was given: not timed "
            "(spec (f) measured 29.9 s at 1e6 on this machine class, another day: indicative)"
        )
    warm = frame(20_000)
    multicalibration(warm, "s", "y", "w", segments=family)
    multicalibration(warm, "s", "y", "w", segments=family, method="bootstrap", resamples=2)
    for n in sizes:
        data = frame(n)
        size = data.estimated_size()
        with Peak() as peak:
            table = multicalibration(data, "s", "y", "w", segments=family)
        # the peak first: the sorts timed below would leave freed pages in the allocator
        sort = best(lambda data=data: data.sort("s"))
        audit = best(lambda data=data: multicalibration(data, "s", "y", "w", segments=family), 3)
        b = 32
        boot = best(
            lambda data=data, b=b: multicalibration(
                data, "s", "y", "w", segments=family, method="bootstrap", resamples=b
            ),
            1,
        )
        per = (boot - audit) / b
        print(
            f"rows {n:>10,}  segments {table.height:>5}  sort {sort:7.3f} s  "
            f"audit {audit:7.3f} s  = {audit / sort:5.1f} sorts  "
            f"bootstrap {per:6.3f} s/resample = {per / sort:5.2f} sorts  "
            f"added peak {peak.added / 1e9:5.2f} GB = {peak.added / size:4.2f} x input "
            f"({size / 1e9:.2f} GB)"
        )
        if n > 1_000_000 or where is None:
            continue
        theirs = mcgrad(data, python)
        if theirs is None:
            continue
        ours = summary(table).row(0, named=True)
        again = best(lambda data=data: multicalibration(data, "s", "y", "w", segments=family), 3)
        print(
            f"  MCGrad 0.1.5 ({theirs['precision']}): {theirs['seconds']:7.2f} s, "
            f"{theirs['segments']} segments, added peak {theirs['added_peak_bytes'] / 1e9:.2f} GB; "
            f"ours {audit:.3f} s before it, {again:.3f} s after it (best of 3 each): "
            f"{theirs['seconds'] / max(audit, again):5.1f}x faster (worse of the two)"
        )
        for name in ("mce_sigma", "mce", "mde"):
            gap = abs(ours[name] - theirs[name]) / abs(theirs[name])
            print(f"    {name}: ours {ours[name]:.10g}  MCGrad {theirs[name]:.10g}  rel {gap:.1e}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1_000_000, 10_000_000])
    parser.add_argument("--mcgrad-python", default=os.environ.get("MCGRAD_PYTHON"))
    arguments = parser.parse_args()
    main(arguments.sizes, arguments.mcgrad_python)
