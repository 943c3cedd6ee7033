"""What ``import polars_cumdev`` costs a fresh interpreter, beside ``import polars``.

Usage::

    python benchmarks/import_time.py                  # 11 fresh interpreters per case
    python benchmarks/import_time.py --repeat 21
    python benchmarks/import_time.py --before ../main # also time another checkout

Every measurement runs in its own fresh Python process, which times its one
import with ``time.perf_counter`` (interpreter start-up is not counted) and
then lists the heavy modules it loaded: after the import, and after building
(not collecting) a lazy screen of a small frame. The cases run interleaved,
one process each in turn, so that a change of load on a shared machine hits
them alike; the figures printed are medians over ``--repeat`` processes.

``--before PATH`` times the package found under ``PATH`` (a checkout or a
``git worktree`` of another commit, put first on ``PYTHONPATH``) in the same
run, which gives a before/after comparison measured side by side. The case
``import numpy (after polars)`` is what NumPy alone adds to a process that
has Polars already: the most that deferring NumPy could save.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HEAVY = ("numpy", "scipy", "numba", "altair", "vl_convert", "pyspark", "dask")

CHILD = r"""
import json, sys, time
heavy = json.loads(sys.argv[2])
if sys.argv[1] == "numpy":
    import polars  # not timed: what NumPy adds on top of Polars
start = time.perf_counter()
if sys.argv[1] == "polars":
    import polars
elif sys.argv[1] == "numpy":
    import numpy
else:
    import polars_cumdev
seconds = time.perf_counter() - start
loaded = [name for name in heavy if name in sys.modules]
built = None
if sys.argv[1] == "polars_cumdev":
    import polars as pl
    frame = pl.LazyFrame({"g": ["a", "b"] * 4, "s": [1.0, 2.0, 3.0, 4.0] * 2, "r": [0, 1] * 4})
    frame.cumdev.screen(by="g", score="s", response="r")
    built = [name for name in heavy if name in sys.modules]
print(json.dumps({"seconds": seconds, "loaded": loaded, "built": built, "file": str(
    getattr(sys.modules.get("polars_cumdev"), "__file__", ""))}))
"""

ROOT = Path(__file__).resolve().parent.parent


def run_child(module: str, tree: Path | None) -> dict:
    """Import ``module`` in a fresh interpreter (with ``tree`` first on the path).

    ``-P`` keeps the working directory off ``sys.path``, so that the package
    comes from ``tree`` wherever the script is started.
    """
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
    done = subprocess.run(
        [sys.executable, "-P", "-c", CHILD, module, json.dumps(HEAVY)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=11, help="fresh interpreters per case")
    parser.add_argument("--before", type=Path, help="another checkout to time beside this one")
    args = parser.parse_args()

    cases = [
        ("import polars", "polars", None),
        ("import numpy (after polars)", "numpy", None),
        ("import polars_cumdev", "polars_cumdev", ROOT),
    ]
    if args.before is not None:
        cases.append(
            (f"import polars_cumdev ({args.before})", "polars_cumdev", args.before.resolve())
        )
    results: dict[str, list[dict]] = {label: [] for label, _, _ in cases}
    for _ in range(args.repeat):
        for label, module, tree in cases:
            results[label].append(run_child(module, tree))

    print(f"load average before printing: {os.getloadavg()[0]:.2f}; {args.repeat} runs per case")
    print("| case | median s | min s | heavy modules after import | ... after building a screen |")
    print("|---|---|---|---|---|")
    for label, runs in results.items():
        times = [run["seconds"] for run in runs]
        loaded = ", ".join(runs[-1]["loaded"]) or "none"
        built = "" if runs[-1]["built"] is None else ", ".join(runs[-1]["built"]) or "none"
        print(
            f"| {label} | {statistics.median(times):.3f} | {min(times):.3f} | {loaded} | {built} |"
        )


if __name__ == "__main__":
    main()
