"""Column arguments take expressions, and every function returns what it was given.

``score``, ``response``, ``weight`` and ``by`` (and paired's ``first`` and
``second``) accept a Polars expression wherever they accept a name: the
result equals the one computed from the same values put in a column first,
and names them by the expression's output name. A DataFrame in gives a
DataFrame out and a LazyFrame a LazyFrame, for the functions as for
``frame.cumdev``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_cumdev as pc
from polars_cumdev import binned, calibration, compare, corp, paired, subpopulation


def frame() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    n = 1200
    s = rng.uniform(0.01, 0.99, n)
    return pl.DataFrame(
        {
            "occupation": rng.choice(["clerk", "nurse", "pilot"], n),
            "x": s * 10.0,  # the score as x / 10
            "y": (rng.random(n) < s).astype(np.int64),
            "y2": (rng.random(n) < s).astype(np.int64),
            "v": rng.uniform(1.0, 3.0, n),  # the weight as v - 0.5
        }
    )


def with_columns(df: pl.DataFrame) -> pl.DataFrame:
    """The same values as the expressions below, put in columns first."""
    return df.with_columns(
        (pl.col("x") / 10.0).alias("score"),
        (pl.col("y") * 1.0).alias("label"),
        (pl.col("y2") * 1.0).alias("label2"),
        (pl.col("v") - 0.5).alias("wt"),
        pl.col("occupation").str.to_uppercase().alias("JOB"),
    )


S = (pl.col("x") / 10.0).alias("score")
R = (pl.col("y") * 1.0).alias("label")
R2 = (pl.col("y2") * 1.0).alias("label2")
W = (pl.col("v") - 0.5).alias("wt")
BY = pl.col("occupation").str.to_uppercase().alias("JOB")
NURSE = pl.col("occupation") == "nurse"
CLERK = pl.col("occupation") == "clerk"

# (name, call with expressions, call with the columns of ``with_columns``)
CASES = [
    (
        "screen",
        lambda f: subpopulation.screen(f, BY, S, R, W),
        lambda f: subpopulation.screen(f, "JOB", "score", "label", "wt"),
    ),
    (
        "screen, by as a bare column",
        lambda f: subpopulation.screen(f, [pl.col("occupation")], S, "y", W),
        lambda f: subpopulation.screen(f, ["occupation"], "score", "y", "wt"),
    ),
    (
        "curve",
        lambda f: subpopulation.curve(f, NURSE, S, R, W),
        lambda f: subpopulation.curve(f, NURSE, "score", "label", "wt"),
    ),
    (
        "compare",
        lambda f: compare.compare(f, NURSE, CLERK, S, R, W, ties="dither"),
        lambda f: compare.compare(f, NURSE, CLERK, "score", "label", "wt", ties="dither"),
    ),
    (
        "compare_all",
        lambda f: compare.compare_all(f, BY, "PILOT", S, R, W, ties="dither"),
        lambda f: compare.compare_all(f, "JOB", "PILOT", "score", "label", "wt", ties="dither"),
    ),
    (
        "paired",
        lambda f: paired.paired(f, S, R, R2, W, by=BY),
        lambda f: paired.paired(f, "score", "label", "label2", "wt", by="JOB"),
    ),
    (
        "calibration",
        lambda f: calibration.calibration(f, S, R, W, by=BY),
        lambda f: calibration.calibration(f, "score", "label", "wt", by="JOB"),
    ),
    (
        "calibration_curve",
        lambda f: calibration.calibration_curve(f, S, R, W),
        lambda f: calibration.calibration_curve(f, "score", "label", "wt"),
    ),
    (
        "corp",
        lambda f: corp.corp(f, S, R, W, by=BY),
        lambda f: corp.corp(f, "score", "label", "wt", by="JOB"),
    ),
    (
        "ece",
        lambda f: binned.ece(f, S, R, W, by=BY),
        lambda f: binned.ece(f, "score", "label", "wt", by="JOB"),
    ),
    (
        "reliability",
        lambda f: binned.reliability(f, S, R, W, subpop=NURSE),
        lambda f: binned.reliability(f, "score", "label", "wt", subpop=NURSE),
    ),
]


@pytest.mark.parametrize(("name", "with_expressions", "with_names"), CASES)
@pytest.mark.slow
def test_expressions_equal_their_columns(name: str, with_expressions, with_names) -> None:
    df = frame()
    want = with_names(with_columns(df))
    got = with_expressions(df)
    assert isinstance(got, pl.DataFrame), name
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12)
    lazy = with_expressions(df.lazy())
    assert isinstance(lazy, pl.LazyFrame), name
    assert_frame_equal(lazy.collect(), want, check_exact=False, rel_tol=1e-12)


@pytest.mark.slow
def test_the_namespace_takes_expressions_too() -> None:
    df = frame()
    got = df.cumdev.screen(by=pl.col("occupation"), score=S, response="y")
    assert got.columns[0] == "occupation"
    want = with_columns(df).cumdev.screen(by="occupation", score="score", response="y")
    assert_frame_equal(got, want)
    lazy = df.lazy().cumdev.calibration(S, R, by=BY)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["JOB"].to_list() != []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: f.cumdev.screen(by=pl.col("occupation", "y"), score=S, response="y"), "one"),
        (
            lambda f: f.cumdev.screen(
                by="occupation", score=pl.col("v") * 2, response="y", weight="v"
            ),
            "named 'v'",
        ),
        (lambda f: f.cumdev.calibration(S, (pl.col("y") * 0.5).alias("score")), "both named"),
    ],
)
def test_ambiguous_expressions_are_refused(call, message: str) -> None:
    with pytest.raises(pc.InvalidParameterError, match=message):
        call(frame())


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.slow
def test_functions_follow_their_input(lazy: bool) -> None:
    df = frame()
    source = df.lazy() if lazy else df
    kind = pl.LazyFrame if lazy else pl.DataFrame
    results = [
        pc.screen(source, "occupation", "x", "y"),
        pc.curve(source, NURSE, "x", "y"),
        calibration.calibration(source.with_columns(S), "score", "y"),
        paired.paired(source, "x", "y", "y2"),
        corp.corp(source.with_columns(S), "score", "y"),
        binned.ece_sweep(source.with_columns(S), "score", "y", bins=[2, 4]),
    ]
    assert all(isinstance(result, kind) for result in results)
    eager = pc.screen(df, "occupation", "x", "y")
    assert_frame_equal(eager, df.cumdev.screen("occupation", "x", "y"))
