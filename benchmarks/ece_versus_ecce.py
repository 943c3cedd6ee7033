"""ECEs hit a noise floor; ECCEs shrink like 1/sqrt(n) (after figs. 8-9 of
"Metrics of calibration for probabilistic predictions", Arrieta-Ibarra, Gujral,
Tannen, Tygert and Xu, J. Mach. Learn. Res. 23, 2022).

For each sample size n, draw 9 data sets whose scores are equispaced,
equispaced then squared, or square-rooted, and whose responses are Bernoulli
with success probability equal to the score (perfect calibration), or equal to
a miscalibrated curve (the score plus a smooth oscillation). Report averages
of ECE1 and ECE2 with equal-count bins of 16 observations each (so the number
of bins grows like n / 16, as in the paper's figure 8), and of ECCE-MAD and
ECCE-R. Under perfect calibration the ECEs stay put while the ECCEs fall like
1/sqrt(n); under miscalibration both stay away from 0, so only the ECCEs tell
the two cases apart as n grows.

Run: python benchmarks/ece_versus_ecce.py [--max-log2 17]
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl

import polars_cumdev  # noqa: F401  (registers the namespace)

SHAPES = {
    "equispaced": lambda t: t,
    "squared": lambda t: t**2,
    "square rooted": np.sqrt,
}


def draw(n: int, shape: str, calibrated: bool, rng: np.random.Generator) -> pl.DataFrame:
    s = SHAPES[shape]((np.arange(n) + 0.5) / n)
    p = s if calibrated else np.clip(s + 0.1 * np.sin(2 * np.pi * s) * s * (1 - s) * 4, 0, 1)
    return pl.DataFrame({"s": s, "r": (rng.uniform(size=n) < p).astype(np.float64)})


def measure(frame: pl.DataFrame) -> dict[str, float]:
    bins = max(frame.height // 16, 1)
    ece = frame.cumdev.ece("s", "r", bins=bins, binning="equal_count").row(0, named=True)
    ecce = frame.cumdev.calibration("s", "r").row(0, named=True)
    return {
        "ece1": ece["ece1"],
        "ece2": ece["ece2"],
        "ecce_mad": ecce["ecce_mad"],
        "ecce_r": ecce["ecce_r"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-log2", type=int, default=17, help="largest n is 2**this")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    rng = np.random.default_rng(20220326)
    rows = []
    for calibrated in (True, False):
        for shape in SHAPES:
            for log2 in range(10, args.max_log2 + 1, 2):
                n = 2**log2
                runs = [measure(draw(n, shape, calibrated, rng)) for _ in range(args.repeats)]
                means = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
                rows.append({"calibrated": calibrated, "scores": shape, "n": n, **means})
    table = pl.DataFrame(rows)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, float_precision=5, tbl_hide_column_data_types=True):
        print(table)
    perfect = table.filter(pl.col("calibrated"))
    first, last = perfect["n"].min(), perfect["n"].max()
    for name in ("ece1", "ece2", "ecce_mad", "ecce_r"):
        ratio = (
            perfect.filter(pl.col("n") == first)[name].mean()
            / perfect.filter(pl.col("n") == last)[name].mean()
        )
        print(
            f"perfect calibration, {name}: n={first} -> n={last} shrinks by {ratio:.2f}x "
            f"(1/sqrt(n) would give {np.sqrt(last / first):.2f}x)"
        )


if __name__ == "__main__":
    main()
