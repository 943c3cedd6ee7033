"""Screen the counties at the same income and age: several covariates on a Hilbert curve.

Usage: python examples/controlling_for_age.py [OUTPUT_DIR]
(or set CUMDEV_EXAMPLES_OUT; by default a new temporary directory is used).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import polars as pl

from polars_cumdev import charts
from polars_cumdev.datasets import census


def output_dir() -> Path:
    chosen = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CUMDEV_EXAMPLES_OUT")
    path = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="cumdev-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def main() -> None:
    out = output_dir()
    households = census(age=True).lazy()  # adds the householder's age and broadband use
    shown = ["county", "n", "kuiper_z", "kuiper_p", "delta"]

    # At the same income only: older counties look low, since broadband use falls with age.
    by_income = households.cumdev.screen("county", "log10_income", "broadband", "WGTP")
    print("controlling for income:")
    print(by_income.select(shown).head(3).collect())

    # At the same income and age: a list of covariates orders the households
    # along a Hilbert curve through (income, age).
    both = households.cumdev.screen("county", ["log10_income", "age"], "broadband", "WGTP")
    top = both.select(*shown, "from_age", "to_age").head(3).collect()
    print("controlling for income and age:")
    print(top)

    county = top["county"][0]
    points = households.cumdev.curve(
        pl.col("county") == county, ["log10_income", "age"], "broadband", "WGTP"
    ).collect()
    charts.save(charts.cumulative(points, title=f"{county}: broadband"), out / "hilbert.svg")
    charts.save(charts.covariate_map(points), out / "covariate_map.svg")
    print(f"wrote {out / 'hilbert.svg'} and {out / 'covariate_map.svg'}")


if __name__ == "__main__":
    main()
