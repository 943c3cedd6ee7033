"""What the compiled kernel costs a fresh process: import, compilation, the on-disk cache.

Usage::

    python benchmarks/kernel_start.py              # 3 fresh processes per case
    python benchmarks/kernel_start.py --repeat 5

Every case runs in its own fresh Python process and prints, as measured
there:

* ``import polars_cumdev`` (which imports neither Numba nor the kernel);
* the census-sized screen (134,094 rows, the bundled data) with
  ``engine="auto"``, which keeps the Polars plan below
  ``polars_cumdev.method.compiled.KERNEL_ROWS`` rows: its first call and its best of
  five;
* the same screen forced onto the kernel (``engine="kernel"``) with an empty
  Numba cache (``NUMBA_CACHE_DIR`` pointing to a new directory: every
  function compiles), then again with that cache filled (the functions load
  from disk);
* the kernel from a copy of the package on a read-only bind mount (needs
  root), with no cache beside it and no ``NUMBA_CACHE_DIR``: Numba then
  caches in its user-wide directory (under ``$HOME/.cache``); the case says
  what it cached there.

Times are medians over ``--repeat`` fresh processes.

``--first-calls`` measures instead the first call of ``screen(by=)``,
``calibration(by=)`` and ``multicalibration`` at ``--rows`` rows (1.2e6, 50
groups; issue 40), each in a fresh process, three ways taken in turn (so that
a load on the machine falls on all three alike; rows are printed as they come):

* **empty cache**: the checkout, ``NUMBA_CACHE_DIR`` a new directory: every
  function the call needs compiles;
* **later process**: the checkout's own cache (no ``NUMBA_CACHE_DIR``),
  filled by a call made just before;
* **fresh install** (with ``--wheel PATH``, or ``--wheel build`` to build one
  with ``pip wheel . --no-deps``): the wheel installed with ``pip install
  --no-deps --target`` into a new directory and a new empty
  ``NUMBA_CACHE_DIR``: what a first use after ``pip install .`` costs (the
  wheel carries the kernel compiled at build, ``setup.py``).

It prints the first call's wall and CPU seconds, its ratio to the later
process's, the load average around each run, and the functions whose
compilation took longest (outermost compilations, seconds, in the empty
cache's first run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import common

CHILD = r"""
import json, sys, time
start = time.perf_counter()
import polars_cumdev
imported = time.perf_counter() - start
from polars_cumdev.datasets import census
frame = census()
engine = sys.argv[1]

def screen():
    return frame.cumdev.screen(
        by="county", score="log10_income", response="has_internet", weight="WGTP",
        engine=engine,
    )

start = time.perf_counter()
screen()
first = time.perf_counter() - start
best = min(
    (lambda s: (screen(), time.perf_counter() - s)[1])(time.perf_counter()) for _ in range(5)
)
print(json.dumps({"import": imported, "first": first, "best": best,
                  "numba": "numba" in sys.modules}))
"""


FIRST = r"""
import json, os, sys, time
from numba.core import event
start = time.perf_counter()
import numpy as np
import polars as pl
import polars_cumdev as pc
from polars_cumdev.calibration import calibration
from polars_cumdev.multicalibration import multicalibration
imported = time.perf_counter() - start
which, n = sys.argv[1], int(float(sys.argv[2]))
rng = np.random.default_rng(0)
s = rng.beta(2.0, 5.0, n)
columns = {"g": rng.integers(0, 50, n).astype(np.int32), "s": s,
           "y": (rng.random(n) < s).astype(np.int8), "w": rng.uniform(0.5, 2.0, n)}
for k in range(4):
    columns[f"c{k}"] = rng.integers(0, 5, n).astype(np.int32)
for k in range(3):
    columns[f"x{k}"] = rng.normal(size=n)
frame = pl.DataFrame(columns)
family = pc.segments([f"c{k}" for k in range(4)], [f"x{k}" for k in range(3)], depth=3,
                     rules="mcgrad", max_segments=1000)

def call():
    if which == "screen":
        return frame.cumdev.screen(by="g", score="s", response="y", weight="w")
    if which == "calibration":
        return calibration(frame, "s", "y", "w", by="g")
    return multicalibration(frame, "s", "y", "w", segments=family)

class Outermost(event.Listener):
    depth, began, seconds = 0, 0.0, None
    def on_start(self, ev):
        if self.depth == 0:
            self.began = time.perf_counter()
        self.depth += 1
    def on_end(self, ev):
        self.depth -= 1
        f = ev.data["dispatcher"].py_func
        if self.depth == 0:
            name = f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}"
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - self.began
listener = Outermost()
listener.seconds = {}
event.register("numba:compile", listener)
load = os.getloadavg()[0]
cpu, start = time.process_time(), time.perf_counter()
call()
first, first_cpu = time.perf_counter() - start, time.process_time() - cpu
start = time.perf_counter()
call()
again = time.perf_counter() - start
print(json.dumps({"import": imported, "first": first, "cpu": first_cpu, "again": again,
                  "load": load, "compiled": listener.seconds,
                  "from": os.path.dirname(pc.__file__)}))
"""


def first_calls(rows: int, repeat: int, wheel: str | None, calls: list[str]) -> None:
    """The first call of each function, empty cache / later process / fresh install."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    checkout = {**base, "PYTHONPATH": str(common.REPO)}
    installed = None
    if wheel == "build":
        folder = tempfile.mkdtemp(prefix="cumdev-wheel-")
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-w", folder, "-q"],
            cwd=common.REPO,
            check=True,
        )
        wheel = str(next(Path(folder).glob("*.whl")))
    if wheel:
        installed = tempfile.mkdtemp(prefix="cumdev-installed-")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--no-deps",
                "-q",
                "--target",
                installed,
                wheel,
            ],
            check=True,
        )

    def child(which: str, env: dict[str, str]) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", FIRST, which, str(rows)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),
            check=False,
        )
        if done.returncode != 0:
            return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
        return json.loads(done.stdout.strip().splitlines()[-1])

    print(common.machine())
    print(f"rows {rows:,}, 50 groups; medians of {repeat} fresh processes per case")
    columns = ["call", "case", "first call s", "CPU s", "x later process"]
    columns += ["outermost compilations", "compile s", "load avg", "note"]
    print("| " + " | ".join(columns) + " |\n" + "|---" * len(columns) + "|", flush=True)
    slowest = []
    for which in calls:
        # the later process reads the checkout's own cache (filled beforehand), so
        # that each case stands alone and the empty cache can come last
        child(which, checkout)
        runs: dict[str, list[dict]] = {"later process": [], "fresh install": [], "empty cache": []}
        for _ in range(repeat):
            runs["later process"].append(child(which, checkout))
            if installed:
                env = {**base, "PYTHONPATH": installed, "HOME": tempfile.mkdtemp()}
                env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="cumdev-numba-")
                runs["fresh install"].append(child(which, env))
            cache = tempfile.mkdtemp(prefix="cumdev-numba-")
            runs["empty cache"].append(child(which, {**checkout, "NUMBA_CACHE_DIR": cache}))
        later = statistics.median(r["first"] for r in runs["later process"] if "first" in r)
        for case, results in runs.items():
            ok = [r for r in results if "first" in r]
            if not results:
                continue
            first = statistics.median(r["first"] for r in ok) if ok else float("nan")
            row = {
                "call": which,
                "case": case,
                "first call s": f"{first:.2f}",
                "CPU s": f"{statistics.median(r['cpu'] for r in ok):.2f}" if ok else "",
                "x later process": f"{first / later:.1f}",
                "outermost compilations": str(max((len(r["compiled"]) for r in ok), default=0)),
                "compile s": f"{max((sum(r['compiled'].values()) for r in ok), default=0):.1f}",
                "load avg": ", ".join(f"{r['load']:.1f}" for r in ok),
                "note": next((r["error"] for r in results if "error" in r), ""),
            }
            print("| " + " | ".join(row[c] for c in columns) + " |", flush=True)
        compiled = next((r["compiled"] for r in runs["empty cache"] if "compiled" in r), {})
        top = sorted(compiled.items(), key=lambda item: -item[1])[:6]
        slowest.append(
            {
                "call": which,
                "compile s (all outermost)": f"{sum(compiled.values()):.1f}",
                "longest": "; ".join(f"{name} {sec:.1f}" for name, sec in top),
            }
        )
    print()
    print(common.markdown_table(slowest, ["call", "compile s (all outermost)", "longest"]))


def run(engine: str, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, engine],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),  # not the checkout: PYTHONPATH decides the package
        check=False,
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def median(results: list[dict], key: str) -> str:
    values = [r[key] for r in results if key in r]
    return f"{statistics.median(values):.3f}" if values else "failed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--first-calls", action="store_true", help="issue 40's first calls")
    parser.add_argument("--rows", type=float, default=1.2e6)
    parser.add_argument("--wheel", help="a built wheel to install fresh, or 'build'")
    parser.add_argument("--calls", default="screen,calibration,multicalibration")
    args = parser.parse_args()
    if args.first_calls:
        first_calls(int(args.rows), args.repeat, args.wheel, args.calls.split(","))
        return
    base = {**os.environ, "PYTHONPATH": str(common.REPO)}
    rows = []

    def case(name: str, engine: str, env: dict[str, str], fresh_cache: bool = False) -> None:
        results = []
        for _ in range(args.repeat):
            if fresh_cache:
                env = {**env, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="cumdev-numba-")}
            results.append(run(engine, env))
        errors = [r["error"] for r in results if "error" in r]
        rows.append(
            {
                "case": name,
                "import s": median(results, "import"),
                "first screen s": median(results, "first"),
                "best screen s": median(results, "best"),
                "numba imported": str(any(r.get("numba") for r in results)),
                "note": errors[0] if errors else "",
            }
        )

    case("census, engine=auto (Polars plan)", "auto", base)
    case("census, engine=polars", "polars", base)
    case("census, engine=kernel, empty cache (compiles)", "kernel", base, fresh_cache=True)
    warm = {**base, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="cumdev-numba-warm-")}
    run("kernel", warm)  # fill the cache once
    case("census, engine=kernel, cache filled", "kernel", warm)

    # A copy of the package with no cache beside it, on a read-only bind mount
    # (file modes do not stop root), and no NUMBA_CACHE_DIR: Numba must then
    # cache in its user-wide directory.
    copy = Path(tempfile.mkdtemp(prefix="cumdev-copy-"))
    mount = Path(tempfile.mkdtemp(prefix="cumdev-readonly-"))
    home = Path(tempfile.mkdtemp(prefix="cumdev-home-"))
    shutil.copytree(
        common.REPO / "polars_cumdev",
        copy / "polars_cumdev",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    mounted = (
        subprocess.run(["mount", "--bind", str(copy), str(mount)], check=False).returncode == 0
        and subprocess.run(["mount", "-o", "remount,bind,ro", str(mount)], check=False).returncode
        == 0
    )
    if mounted:
        env = {k: v for k, v in base.items() if k != "NUMBA_CACHE_DIR"}
        env.update(PYTHONPATH=str(mount), HOME=str(home))
        case("census, engine=kernel, read-only install", "kernel", env)
        cached = sorted(home.rglob("*.nbi"))
        rows[-1]["note"] = rows[-1]["note"] or (
            f"{len(cached)} cache files under {cached[0].parent.relative_to(home)} in $HOME"
            if cached
            else "nothing cached"
        )
        subprocess.run(["umount", str(mount)], check=False)
    else:
        rows.append({"case": "census, engine=kernel, read-only install", "note": "no mount"})
    for path in (copy, mount, home):
        shutil.rmtree(path, ignore_errors=True)

    print(common.machine())
    print(
        common.markdown_table(
            rows, ["case", "import s", "first screen s", "best screen s", "numba imported", "note"]
        )
    )


if __name__ == "__main__":
    main()
