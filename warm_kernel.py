"""Compile the kernel into the package being built, so that its first call loads instead.

Run by ``setup.py`` (``build_py``) with the built copy of the package first on
``sys.path`` and no ``NUMBA_CACHE_DIR``: Numba writes each compiled function
beside its source (``polars_cumdev/kernel/__pycache__``); :func:`ship` moves
those files to ``polars_cumdev/kernel/_compiled``
(:data:`polars_cumdev.kernel._cache.SHIPPED`, which a checkout's own cache never
fills), and the wheel carries them. Numba keys them by the source's content, the function's
bytecode, the Numba version and the CPU: a wheel installed on the machine
that built it (``pip install .``) loads them; anywhere else they miss and the
kernel compiles on first use as without them (announced, then cached).

Usage: ``python -c "$RUN" warm_kernel.py BUILT_PACKAGE``, where ``$RUN`` is
``setup.py``'s ``_WARM`` (runpy: unlike ``python warm_kernel.py``, this keeps
the source tree, this file's directory, off ``sys.path``); it refuses to run on
any other copy of the package than ``BUILT_PACKAGE``.

The calls are those a first use makes at 1.2e6 rows (both threads' paths):
the screen by group, calibration by group and the multicalibration audit,
with and without weights; then the same on the bundled ``census_scored``
data (integer weights, string features, small segments whose p-values are
simulated), as the README and the docs first use them.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import polars as pl

import polars_cumdev as pc
from polars_cumdev.calibration import calibration
from polars_cumdev.multicalibration import multicalibration


def frame(n: int = 1_200_000) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    s = rng.beta(2.0, 5.0, n)
    columns = {
        "g": rng.integers(0, 50, n).astype(np.int32),
        "s": s,
        "y": (rng.random(n) < s).astype(np.int8),
        "w": rng.uniform(0.5, 2.0, n),
    }
    for k in range(4):
        columns[f"c{k}"] = rng.integers(0, 5, n).astype(np.int32)
    for k in range(3):
        columns[f"x{k}"] = rng.normal(size=n)
    return pl.DataFrame(columns)


def ship(package: Path) -> int:
    """Move Numba's files of ``package``'s kernel to ``kernel/_compiled``; how many."""
    kernel = package / "kernel"
    shipped = kernel / "_compiled"
    shutil.rmtree(shipped, ignore_errors=True)
    shipped.mkdir()
    files = sorted((kernel / "__pycache__").glob("*.nb[ic]"))
    for path in files:
        shutil.move(path, shipped / path.name)
    return len(files)


def main(expected: str | None = None) -> None:
    package = Path(pc.__file__).resolve().parent
    if expected is not None and package != Path(expected).resolve():
        raise SystemExit(f"warm_kernel: imported {package}, not the build copy {expected}")
    data = frame()
    family = pc.segments(
        [f"c{k}" for k in range(4)],
        [f"x{k}" for k in range(3)],
        depth=3,
        rules="mcgrad",
        max_segments=1000,
    )
    for weight in ("w", None):
        data.cumdev.screen(by="g", score="s", response="y", weight=weight)
        calibration(data, "s", "y", weight, by="g")
        multicalibration(data, "s", "y", weight, segments=family)
    # A predicted mean's small groups, off by 0.5: their residuals' signs are redrawn.
    biased = data.head(2000).with_columns(pl.col("y") + 0.5)
    calibration(biased, "s", "y", by="g", target="mean")
    # Soft labels in small groups, scores near 0, every other group off: half of them get
    # the conservative bound (issue 36).
    soft = data.head(3000).with_columns(pl.col("s") / 10.0)
    soft = soft.with_columns(((0.5 * pl.col("y") + pl.col("s")) * (pl.col("g") % 2)).alias("y"))
    calibration(soft, "s", "y", "w", by="g")
    # Two halves on coarse scores: compare's permutation p-values (issue 36).
    coarse = data.head(600).with_columns((pl.col("s") * 4).round() / 4)
    half = pl.int_range(pl.len()) % 2 == 0
    pc.compare(coarse, half, ~half, "s", "y", ties="dither").collect()
    # Real responses in small groups (60 rows each): redrawn from the population's
    # bins, weighted and not (issue 36, the screen's resampled p-values).
    real = data.head(3000).with_columns((2.5 * pl.col("y") + pl.col("s")).alias("y"))
    for weight in ("w", None):
        real.cumdev.screen(by="g", score="s", response="y", weight=weight)
    # The bundled data, as the README and the docs use it first: integer weights,
    # string features, and segments small enough for finite-sample p-values.
    from polars_cumdev.datasets import census_scored

    census = census_scored()
    for engine in ("kernel", "auto"):
        census.cumdev.screen(
            by="county", score="score", response="has_internet", weight="WGTP", engine=engine
        )
        calibration(census, "score", "has_internet", "WGTP", by="county", engine=engine)
    multicalibration(
        census,
        "score",
        "has_internet",
        "WGTP",
        segments=pc.segments(["county"], ["log10_income"]),
    )
    package = Path(pc.__file__).resolve().parent
    print(
        f"warm_kernel: {ship(package)} files of the compiled kernel in {package}", file=sys.stderr
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
