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
    args = parser.parse_args()
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
