"""The census-sized screen on continuous scores: warm time per engine, and the work per call.

Usage::

    python benchmarks/small_screen.py [--repeat 5]
    python benchmarks/small_screen.py --before PATH   # also another checkout's first screen

Data: :func:`polars_cumdev.datasets.census` (134,094 households, 41
counties), whose ``log10_income`` has only 2,607 distinct values, with a
seeded normal noise of standard deviation 1e-4 added so that every score is
distinct (the shape issue 22 asks about). For each engine the screen
(location included) is run once, then ``repeat`` times; the best and the
median are printed, with the number of queries one screen runs
(``LazyFrame.collect`` calls, nested ones and those of eager DataFrame
methods included) and the load average. A fresh
interpreter's first screen is timed too (import of the package and the
data excluded), with the default engine and with ``engine="kernel"`` (the
kernel's disk cache warm: the runs before compiled it), and whether it
imported Numba or SciPy.

``--before PATH`` adds a fresh process's first screen with ``engine="auto"``
of the package under ``PATH`` (another checkout, e.g. the one of the day
issue 22 was filed) beside this checkout's, on the census as shipped
(tie-heavy: 2,607 distinct scores, the data of the issue's 0.14 s) and with
the noise, alternating the two checkouts run by run (``--rounds``, median
printed), so that the load of a shared machine falls on both alike.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import common
import numpy as np
import polars as pl

FIRST = """
import sys, time, numpy as np, polars as pl
ENGINE, KIND = sys.argv[1], sys.argv[2]
from polars_cumdev.datasets import census
from polars_cumdev.subpopulation import screen
df = census()
if KIND == "continuous":
    noise = np.random.default_rng(0).normal(0.0, 1e-4, df.height)
    df = df.with_columns(pl.col("log10_income") + pl.Series(noise))
start = time.perf_counter()
out = screen(df, "county", "log10_income", "has_internet", "WGTP", engine=ENGINE)
out = out.collect() if isinstance(out, pl.LazyFrame) else out
elapsed = time.perf_counter() - start
print("numba" in sys.modules, "scipy" in sys.modules)
print(elapsed)
"""


def frame() -> pl.DataFrame:
    from polars_cumdev.datasets import census

    df = census()
    noise = np.random.default_rng(0).normal(0.0, 1e-4, df.height)
    return df.with_columns(pl.col("log10_income") + pl.Series(noise))


def first_screen(engine: str, kind: str, path: Path) -> tuple[float, str]:
    """A fresh interpreter's first screen of the package under ``path``: seconds, imports."""
    done = subprocess.run(
        [sys.executable, "-c", FIRST, engine, kind],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),  # (not this checkout: the path given comes first)
        env={**os.environ, "PYTHONPATH": str(path)},
    )
    lines = done.stdout.strip().splitlines()
    numba, scipy = lines[-2].split()
    imported = ", ".join(n for n, y in (("numba", numba), ("scipy", scipy)) if y == "True")
    return float(lines[-1]), imported or "neither numba nor scipy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another checkout to time beside this one")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per checkout")
    args = parser.parse_args()
    from polars_cumdev.subpopulation import screen

    df = frame()
    print(common.machine())
    print(f"rows {df.height}, distinct scores {df['log10_income'].n_unique()}")
    print(f"load average before: {os.getloadavg()}")
    calls = {"n": 0}
    original = pl.LazyFrame.collect
    eager = pl.LazyFrame._collect_eager  # what DataFrame methods run a query through

    def counted(self, *a, **k):
        calls["n"] += 1
        return original(self, *a, **k)

    def counted_eager(self, *a, **k):
        calls["n"] += 1
        return eager(self, *a, **k)

    rows = []
    for engine in ("auto", "polars", "kernel"):

        def run(engine=engine):
            out = screen(df, "county", "log10_income", "has_internet", "WGTP", engine=engine)
            return out.collect() if isinstance(out, pl.LazyFrame) else out  # eager in, eager out

        run()
        times = [common.timed(run)[0] for _ in range(args.repeat)]
        pl.LazyFrame.collect, pl.LazyFrame._collect_eager = counted, counted_eager
        calls["n"] = 0
        run()
        pl.LazyFrame.collect, pl.LazyFrame._collect_eager = original, eager
        rows.append(
            {
                "engine": engine,
                "best ms": f"{1000 * min(times):.1f}",
                "median ms": f"{1000 * float(np.median(times)):.1f}",
                "collect calls": calls["n"],
            }
        )
    for engine in ("auto", "kernel"):  # (the kernel's disk cache is warm: run() compiled it)
        firsts = [first_screen(engine, "continuous", common.REPO) for _ in range(3)]
        rows.append({"engine": f"{engine}, fresh process (median of 3)", "best ms": ""})
        rows[-1]["median ms"] = f"{1000 * float(np.median([t for t, _ in firsts])):.1f}"
        rows[-1]["collect calls"] = f"imports: {firsts[-1][1]}"
    if args.before is not None:
        for kind in ("tie-heavy", "continuous"):
            paired: dict[str, list[tuple[float, str]]] = {"before": [], "this checkout": []}
            for _ in range(args.rounds):
                paired["before"].append(first_screen("auto", kind, args.before))
                paired["this checkout"].append(first_screen("auto", kind, common.REPO))
            for name, runs in paired.items():
                times = [t for t, _ in runs]
                rows.append({"engine": f"auto, fresh, {kind}, {name} (median of {args.rounds})"})
                rows[-1]["best ms"] = f"{1000 * min(times):.1f}"
                rows[-1]["median ms"] = f"{1000 * float(np.median(times)):.1f}"
                rows[-1]["collect calls"] = f"imports: {runs[-1][1]}"
    print(f"load average after: {os.getloadavg()}")
    columns = ("engine", "best ms", "median ms", "collect calls")
    print(common.markdown_table(rows, columns))


if __name__ == "__main__":
    main()
