"""``pc.calibration`` and ``pc.compare`` are callable like ``pc.screen`` (issue 40, item 5).

They stay the subpackages every documented import path names.
"""

from __future__ import annotations

import numpy as np
import polars as pl

import polars_cumdev as pc
import polars_cumdev.calibration
import polars_cumdev.compare
from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.calibration.cumulative import CALIBRATION_COLUMNS
from polars_cumdev.compare import compare


def _frame() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    p = rng.uniform(size=400)
    return pl.DataFrame(
        {"p": p, "y": (rng.uniform(size=400) < p).astype(np.int64), "g": ["a", "b"] * 200}
    )


def test_calibration_module_is_callable() -> None:
    frame = _frame()
    assert pc.calibration(frame, "p", "y").equals(calibration(frame, "p", "y"))
    assert pc.calibration(frame, "p", "y", by="g").equals(calibration(frame, "p", "y", by="g"))
    assert polars_cumdev.calibration.calibration is calibration
    assert polars_cumdev.calibration.calibration_curve is calibration_curve
    assert CALIBRATION_COLUMNS


def test_compare_module_is_callable() -> None:
    frame = _frame()
    first, second = pl.col("g") == "a", pl.col("g") == "b"
    assert pc.compare(frame, first, second, "p", "y").equals(
        compare(frame, first, second, "p", "y")
    )
    assert polars_cumdev.compare.compare is compare
