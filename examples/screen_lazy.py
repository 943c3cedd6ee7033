"""Screen every county of a Parquet file lazily, with the streaming engine.

Usage: python examples/screen_lazy.py [OUTPUT_DIR]
(or set CUMDEV_EXAMPLES_OUT; by default a new temporary directory is used).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import polars as pl

import polars_cumdev  # noqa: F401  (registers the `cumdev` namespace)
from polars_cumdev.datasets import census


def output_dir() -> Path:
    """Where to write: argv[1], else $CUMDEV_EXAMPLES_OUT, else a fresh temp dir."""
    chosen = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CUMDEV_EXAMPLES_OUT")
    path = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="cumdev-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def main() -> None:
    out = output_dir()

    # A stand-in for your own data: write the bundled survey to Parquet.
    source = out / "households.parquet"
    census().write_parquet(source)

    # Nothing is read here: scan_parquet only builds a query plan ...
    query = (
        pl.scan_parquet(source)
        .cumdev.screen(by="county", score="log10_income", response="has_internet", weight="WGTP")
        # ... and further Polars steps simply extend it.
        .filter(pl.col("kuiper_q") < 0.05)
        .select("county", "n", "kuiper", "kuiper_z", "kuiper_q", "delta")
    )

    # Run it with the streaming engine: the file is read in batches, and only
    # the four columns the screen needs are loaded.
    flagged = query.collect(engine="streaming")
    print(f"{flagged.height} counties deviate at a false discovery rate of 5%:")
    print(flagged)

    flagged.write_csv(out / "flagged_counties.csv")
    print(f"wrote {out / 'flagged_counties.csv'}")


if __name__ == "__main__":
    main()
