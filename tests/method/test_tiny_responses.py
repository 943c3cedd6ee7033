"""Responses too small for double precision are said to be so (issue 37, item 9).

Responses times 1e-300 gave sigma = 0.0 with the note "no spread of responses
within the bins", and predicted means with responses times 1e-160 gave
sigma = 0.0 with "fewer than two distinct predictions": the squares had
underflowed. Below a largest |response| of 2^-400 sigma, z and p are now
null and the note says the values are too small, on both engines; at
ordinary scales (and down to 2^-300) nothing changes but the units.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from polars_cumdev.calibration import calibration
from polars_cumdev.method.statistics import TOO_SMALL


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(9)
    n = 2000
    s = rng.uniform(size=n)
    return pl.DataFrame({"s": s, "r": rng.normal(size=n) + s, "g": rng.choice(["a", "b"], size=n)})


@pytest.mark.parametrize("engine", ["polars", "kernel"])
def test_the_screen_says_the_responses_are_too_small(frame: pl.DataFrame, engine: str) -> None:
    tiny = frame.with_columns(pl.col("r") * 1e-300).cumdev.screen("g", "s", "r", engine=engine)
    assert tiny["note"].to_list() == [TOO_SMALL] * 2
    assert tiny["sigma"].null_count() == tiny["kuiper_z"].null_count() == 2
    # At 2^-300 the statistics are those of the unscaled responses, scaled.
    base = frame.cumdev.screen("g", "s", "r", engine=engine).sort("g")
    small = frame.with_columns(pl.col("r") * 2.0**-300).cumdev.screen("g", "s", "r", engine=engine)
    small = small.sort("g")
    assert small["kuiper_z"].to_list() == pytest.approx(base["kuiper_z"].to_list(), rel=1e-12)
    assert (small["sigma"] * 2.0**300).to_list() == pytest.approx(base["sigma"].to_list())


@pytest.mark.parametrize("engine", ["polars", "auto"])  # the kernel takes probabilities only
def test_predicted_means_say_it_too(frame: pl.DataFrame, engine: str) -> None:
    scaled = frame.select(pl.col("s") * 1e-160, pl.col("r") * 1e-160)
    table = calibration(scaled, "s", "r", target="mean", engine=engine)
    assert table["note"].to_list() == [TOO_SMALL]
    assert table["sigma"].to_list() == [None] and table["ecce_r_z"].to_list() == [None]
