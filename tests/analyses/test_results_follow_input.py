"""Every public analysis function returns what it was given, as ``frame.cumdev`` does.

The functions are found, not listed: every name in the ``__all__`` of
``polars_cumdev`` and of its top-level modules that is a function taking a
frame (or a table) first and annotated to return a LazyFrame. Each must have
a call in ``CALLS`` below (a new analysis without one fails
``test_every_public_function_has_a_call``), and each call gives a DataFrame
for a DataFrame and a LazyFrame for a LazyFrame, with the same values.
"""

from __future__ import annotations

import datetime as dt
import importlib
import inspect
import pkgutil
from collections.abc import Callable

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_cumdev as pc
from polars_cumdev import binned, calibration, compare, corp, drift, multicalibration, paired


def public_functions() -> dict[str, Callable]:
    """``module.name`` -> function, for every public analysis function of the package."""
    names = ["polars_cumdev"] + [
        f"polars_cumdev.{m.name}"
        for m in pkgutil.iter_modules(pc.__path__)
        if not m.name.startswith("_")
    ]
    found: dict[str, Callable] = {}
    for name in names:
        module = importlib.import_module(name)
        for attribute in getattr(module, "__all__", []):
            value = getattr(module, attribute)
            if not inspect.isfunction(value):
                continue
            signature = inspect.signature(value)
            first = next(iter(signature.parameters), None)
            if first in ("frame", "table") and "pl.LazyFrame" in str(signature.return_annotation):
                found.setdefault(value.__name__, value)  # re-exports counted once
    return found


def data() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = 240
    s = rng.uniform(0.05, 0.95, n)
    start = dt.datetime(2024, 1, 1)
    return pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c"], n),
            "s": s,
            "y": (rng.random(n) < s).astype(np.float64),
            "y2": (rng.random(n) < s).astype(np.float64),
            "w": rng.uniform(0.5, 2.0, n),
            "ts": [start + dt.timedelta(days=int(d)) for d in rng.integers(0, 28, n)],
        }
    )


def calibration_table() -> pl.DataFrame:
    return calibration.calibration(data(), "s", "y", by="g")


def multicalibration_table() -> pl.DataFrame:
    family = multicalibration.segments(["g"], min_rows=5)
    return multicalibration.multicalibration(data(), "s", "y", segments=family)


A, B = pl.col("g") == "a", pl.col("g") == "b"

# function name -> (the input frame, the call)
CALLS: dict[str, tuple[Callable[[], pl.DataFrame], Callable]] = {
    "screen": (data, lambda f: pc.screen(f, "g", "s", "y", "w")),
    "curve": (data, lambda f: pc.curve(f, A, "s", "y", "w")),
    "ece": (data, lambda f: binned.ece(f, "s", "y", "w", by="g")),
    "ece_sweep": (data, lambda f: binned.ece_sweep(f, "s", "y", bins=(2, 5))),
    "reliability": (data, lambda f: binned.reliability(f, "s", "y", "w")),
    "calibration": (data, lambda f: calibration.calibration(f, "s", "y", "w", by="g")),
    "calibration_curve": (data, lambda f: calibration.calibration_curve(f, "s", "y", "w")),
    "compare": (
        data,
        lambda f: compare.compare(f, A, B, "s", "y", ties="dither"),
    ),
    "compare_all": (data, lambda f: compare.compare_all(f, "g", "a", "s", "y", ties="dither")),
    "compare_curve": (
        data,
        lambda f: compare.compare_curve(f, A, B, "s", "y", ties="dither"),
    ),
    "corp": (data, lambda f: corp.corp(f, "s", "y", "w", by="g")),
    "corp_curve": (data, lambda f: corp.corp_curve(f, "s", "y", resamples=5)),
    "paired": (data, lambda f: paired.paired(f, "s", "y", "y2", "w", by="g")),
    "paired_curve": (data, lambda f: paired.paired_curve(f, "s", "y", "y2", "w")),
    "calibration_drift": (data, lambda f: drift.calibration_drift(f, "s", "y", time="ts")),
    "rolling_windows": (data, lambda f: drift.rolling_windows(f, "ts", every="1w", period="2w")),
    "family_wise": (calibration_table, drift.family_wise),
    "multicalibration": (
        data,
        lambda f: multicalibration.multicalibration(
            f, "s", "y", "w", segments=multicalibration.segments(["g"], min_rows=5)
        ),
    ),
    "summary": (multicalibration_table, multicalibration.summary),
}


@pytest.mark.slow
def test_every_public_function_has_a_call() -> None:
    found = set(public_functions())
    assert found >= {"screen", "calibration", "calibration_drift", "multicalibration"}
    assert found - set(CALLS) == set(), "add these public functions to CALLS"
    assert set(CALLS) - found == set(), "CALLS names functions that are not public"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_dataframe_gives_a_dataframe_and_a_lazyframe_a_lazyframe(name: str) -> None:
    make, call = CALLS[name]
    frame = make()
    assert isinstance(frame, pl.DataFrame), name
    eager = call(frame)
    assert isinstance(eager, pl.DataFrame), f"{name}: DataFrame in, {type(eager).__name__} out"
    lazy = call(frame.lazy())
    assert isinstance(lazy, pl.LazyFrame), f"{name}: LazyFrame in, {type(lazy).__name__} out"
    assert_frame_equal(lazy.collect(), eager)
