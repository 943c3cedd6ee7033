"""Issue 25, Checks: random frames of random dtypes through every public analysis.

For every draw, on both engines where an analysis has two: a result or a
:class:`~polars_cumdev.errors.CumdevError` (never another exception), no
NaN in a float column of the result, the engines agree (1e-12 relative, 1e-15
absolute for statistics at the level of rounding), and the
rows shuffled give the same bits.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_cumdev  # noqa: F401  (registers the namespace)
from polars_cumdev.errors import CumdevError

# Derandomized: the suite draws the same 25 frames on every run, so that a failure
# reproduces. Random runs (derandomize=False, more examples) found a one-row frame
# whose only key was NaN crashing the compiled screen (tests/analyses/test_nan_keys.py).
SETTINGS = settings(
    deadline=None,
    max_examples=25,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SCORE_TYPES = [
    pl.Float64,
    pl.Float32,
    pl.Float16,
    pl.Int32,
    pl.Int64,
    pl.UInt128,
    pl.Decimal(12, 3),
]
RESPONSE_TYPES = [pl.Float64, pl.Boolean, pl.Int8, pl.Int128, pl.Decimal(10, 2)]
WEIGHT_TYPES = [None, pl.Float64, pl.Float32, pl.UInt16]
KEY_TYPES = [pl.String, pl.Int64, pl.Float64, pl.Boolean, pl.Categorical, pl.Int128]


@st.composite
def frames(draw) -> tuple[pl.DataFrame, bool]:
    n = draw(st.integers(1, 80))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    levels = draw(st.integers(1, 40))  # distinct scores: few means many ties
    score = rng.integers(0, levels, n) / levels
    if draw(st.booleans()):
        score = score * draw(st.sampled_from([1e-300, 1e-5, 1.0, 1e5, 1e300]))
    key_dtype = draw(st.sampled_from(KEY_TYPES))
    keys = rng.integers(0, draw(st.integers(1, 4)), n)
    if key_dtype == pl.Float64:
        key = pl.Series("g", np.where(keys == 0, np.nan, keys.astype(float)))
    elif key_dtype in (pl.String, pl.Categorical):
        key = pl.Series("g", [f"k{k}" for k in keys]).cast(key_dtype)
    elif key_dtype == pl.Boolean:
        key = pl.Series("g", keys % 2 == 0)
    else:
        key = pl.Series("g", keys).cast(key_dtype)
    response_dtype = draw(st.sampled_from(RESPONSE_TYPES))
    binary = response_dtype == pl.Boolean or draw(st.booleans())
    raw = rng.random(n) < np.clip(score / max(score.max(), 1e-300), 0.05, 0.95)
    response = raw.astype(float) if binary else rng.integers(0, 5, n).astype(float)
    columns = {
        "g": key,
        "s": pl.Series(score).cast(draw(st.sampled_from(SCORE_TYPES)), strict=False),
        "r": pl.Series(raw) if response_dtype == pl.Boolean else pl.Series(response),
        "r2": pl.Series(rng.integers(0, 2, n).astype(float)),
        "p": pl.Series(np.clip(score / max(score.max(), 1e-300), 0.0, 1.0)),
        "y": pl.Series(raw),
    }
    if response_dtype != pl.Boolean:
        columns["r"] = columns["r"].cast(response_dtype, strict=False)
    weight_dtype = draw(st.sampled_from(WEIGHT_TYPES))
    if weight_dtype is not None:
        w = rng.choice([0.5, 1.0, 3.0, 1e-3, 7.25], n) * draw(st.sampled_from([1.0, 1e-200, 1e200]))
        columns["w"] = pl.Series(w).cast(weight_dtype, strict=False)
    frame = pl.DataFrame(columns)
    return frame, weight_dtype is not None


def _analyses(weighted: bool):
    w = "w" if weighted else None
    two = {
        "screen": lambda f, e: f.cumdev.screen("g", "s", "r", w, engine=e),
        "calibration": lambda f, e: f.cumdev.calibration("p", "y", w, by="g", engine=e),
        "curve": lambda f, e: f.cumdev.curve(
            pl.col("g") == pl.col("g").first(), "s", "r", w, engine=e
        ),
    }
    one = {
        "paired": lambda f: f.cumdev.paired("s", "r", "r2", w, by="g"),
        "corp": lambda f: f.cumdev.corp("p", "y", w, by="g"),
        "compare_all": lambda f: f.cumdev.compare_all(
            "g", f.get_column("g")[0], "s", "r", w, ties="dither"
        ),
    }
    return two, one


def _outcome(run):
    try:
        return run()
    except CumdevError as error:
        return error


def _no_nan(out: pl.DataFrame, what: str) -> None:
    for name, dtype in out.schema.items():
        if dtype.is_float() and name != "g":
            assert not out.get_column(name).is_nan().any(), (what, name)


def _sorted(out: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in ("g", "k") if c in out.columns]
    return out.sort(keys, nulls_last=True) if keys else out


def _agree(a: pl.DataFrame, b: pl.DataFrame, what: str) -> None:
    a, b = _sorted(a), _sorted(b)
    assert a.columns == b.columns and a.height == b.height, what
    for name in a.columns:
        x, y = a.get_column(name), b.get_column(name)
        if x.dtype.is_float() and name != "g":
            assert x.is_null().to_list() == y.is_null().to_list(), (what, name)
            np.testing.assert_allclose(
                x.drop_nulls().to_numpy(),
                y.drop_nulls().to_numpy(),
                rtol=1e-12,
                atol=1e-15,
                err_msg=f"{what} {name}",
            )
        elif name != "note":
            assert x.to_list() == y.to_list() or x.equals(y), (what, name)


@pytest.mark.slow
@SETTINGS
@given(drawn=frames(), seed=st.integers(0, 2**32 - 1))
def test_every_analysis_on_random_frames(drawn, seed):
    frame, weighted = drawn
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    two, one = _analyses(weighted)
    for name, run in two.items():
        plan = _outcome(lambda run=run: run(frame, "polars"))
        compiled = _outcome(lambda run=run: run(frame, "kernel"))
        assert type(plan) is type(compiled), (name, plan, compiled)
        if isinstance(plan, CumdevError):
            assert str(plan) == str(compiled), name
            continue
        _no_nan(plan, name)
        _no_nan(compiled, name)
        _agree(plan, compiled, name)
        for engine, result in (("polars", plan), ("kernel", compiled)):
            again = run(shuffled, engine)
            if name != "curve":  # a curve's first group depends on the row order
                assert _sorted(again).equals(_sorted(result)), (name, engine)
    for name, run in one.items():
        result = _outcome(lambda run=run: run(frame))
        if isinstance(result, CumdevError):
            continue
        _no_nan(result, name)
        if name != "compare_all":  # the reference is the first row's group
            assert _sorted(run(shuffled)).equals(_sorted(result)), name
