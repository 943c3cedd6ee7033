"""Bad input raises a ``CumdevError`` (also a ``ValueError``) naming the culprit.

Columns carry distinctive names so that "the message names the column" is a
meaningful check. On a DataFrame the error must come from the call itself; on
a LazyFrame it may be deferred to ``.collect()``.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

import polars_cumdev

N_ROWS = 200
BAD = 3  # number of bad rows planted, so messages can be checked for "3"
BAD_ROWS = [5, 77, 150]


def base_frame() -> pl.DataFrame:
    rng = np.random.default_rng(2024)
    return pl.DataFrame(
        {
            "grp": rng.choice(["north", "south", "east"], N_ROWS),
            "score_x": rng.choice(np.arange(10) / 8, N_ROWS),
            "resp_y": (rng.random(N_ROWS) < 0.4).astype(np.float64),
            "wt_z": rng.uniform(0.5, 2.0, N_ROWS),
            "flag": rng.random(N_ROWS) < 0.3,
            "label": rng.choice(["p", "q"], N_ROWS),
        }
    )


def plant(df: pl.DataFrame, column: str, value) -> pl.DataFrame:
    """Set ``column`` to ``value`` on the rows BAD_ROWS."""
    hit = pl.int_range(pl.len()).is_in(BAD_ROWS)
    dtype = df.schema[column]
    return df.with_columns(
        pl.when(hit).then(pl.lit(value, dtype=dtype)).otherwise(pl.col(column)).alias(column)
    )


def call(method: str, frame, **overrides):
    kwargs = {"score": "score_x", "response": "resp_y", "weight": "wt_z"}
    if method == "screen":
        kwargs["by"] = "grp"
    else:
        kwargs["subpop"] = pl.col("grp") == "north"
    kwargs.update(overrides)
    return getattr(frame.cumdev, method)(**kwargs)


def expect_error(method: str, lazy: bool, df: pl.DataFrame, fragments, count=None, **overrides):
    frame = df.lazy() if lazy else df
    with pytest.raises(polars_cumdev.CumdevError) as info:
        result = call(method, frame, **overrides)
        if lazy:
            assert isinstance(result, pl.LazyFrame)
            result.collect()
        else:
            pytest.fail(f"a DataFrame call must raise at once, it returned {type(result)}")
    error = info.value
    assert isinstance(error, ValueError)
    message = str(error)
    assert "This error occurred" not in message, f"Polars' context leaked: {message!r}"
    assert "_cd_" not in message, f"an internal column name leaked: {message!r}"
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in message {message!r}"
    if count is not None:
        assert re.search(rf"\b{count}\b", message), f"count {count} not in message {message!r}"
    return error


METHODS = ["screen", "curve"]
KINDS = [pytest.param(False, id="DataFrame"), pytest.param(True, id="LazyFrame")]


@pytest.mark.parametrize("lazy", KINDS)
@pytest.mark.parametrize("method", METHODS)
class TestBadColumns:
    def test_missing_score_column(self, method, lazy):
        expect_error(method, lazy, base_frame(), ["score_nope"], score="score_nope")

    def test_missing_response_column(self, method, lazy):
        expect_error(method, lazy, base_frame(), ["resp_nope"], response="resp_nope")

    def test_missing_weight_column(self, method, lazy):
        expect_error(method, lazy, base_frame(), ["wt_nope"], weight="wt_nope")

    def test_string_score(self, method, lazy):
        df = base_frame().with_columns(pl.col("score_x").cast(pl.String))
        expect_error(method, lazy, df, ["score_x"])

    def test_null_in_score(self, method, lazy):
        df = plant(base_frame(), "score_x", None)
        expect_error(method, lazy, df, ["score_x"], count=BAD)

    def test_nan_in_response(self, method, lazy):
        df = plant(base_frame(), "resp_y", float("nan"))
        expect_error(method, lazy, df, ["resp_y"], count=BAD)

    def test_inf_in_score(self, method, lazy):
        df = plant(base_frame(), "score_x", float("inf"))
        expect_error(method, lazy, df, ["score_x"], count=BAD)

    def test_zero_weight(self, method, lazy):
        df = plant(base_frame(), "wt_z", 0.0)
        expect_error(method, lazy, df, ["wt_z"], count=BAD)

    def test_negative_weight(self, method, lazy):
        df = plant(base_frame(), "wt_z", -1.5)
        expect_error(method, lazy, df, ["wt_z"], count=BAD)

    def test_null_weight(self, method, lazy):
        df = plant(base_frame(), "wt_z", None)
        expect_error(method, lazy, df, ["wt_z"], count=BAD)

    def test_unknown_variance(self, method, lazy):
        error = expect_error(method, lazy, base_frame(), [], variance="gaussian")
        assert "gaussian" in str(error) or "variance" in str(error)


@pytest.mark.parametrize("lazy", KINDS)
def test_screen_missing_by_column(lazy):
    expect_error("screen", lazy, base_frame(), ["grp_nope"], by="grp_nope")


@pytest.mark.parametrize("lazy", KINDS)
def test_curve_missing_subpop_column(lazy):
    expect_error("curve", lazy, base_frame(), ["flag_nope"], subpop="flag_nope")


@pytest.mark.parametrize("lazy", KINDS)
def test_curve_subpop_selecting_no_rows(lazy):
    expect_error("curve", lazy, base_frame(), ["grp"], subpop=pl.col("grp") == "west")


@pytest.mark.parametrize("lazy", KINDS)
def test_curve_subpop_column_all_false(lazy):
    df = base_frame().with_columns(pl.lit(False).alias("flag"))
    expect_error("curve", lazy, df, ["flag"], subpop="flag")


@pytest.mark.parametrize("lazy", KINDS)
def test_curve_subpop_not_boolean(lazy):
    expect_error("curve", lazy, base_frame(), ["label"], subpop="label")


@pytest.mark.parametrize("lazy", KINDS)
def test_curve_subpop_expression_not_boolean(lazy):
    expect_error("curve", lazy, base_frame(), ["score_x"], subpop=pl.col("score_x") * 2)


def test_error_classes_are_value_errors():
    from polars_cumdev import errors

    for name in (
        "ColumnNotFoundError",
        "ColumnTypeError",
        "InvalidValuesError",
        "EmptySubpopulationError",
        "InvalidParameterError",
    ):
        cls = getattr(errors, name)
        assert issubclass(cls, polars_cumdev.CumdevError)
        assert issubclass(cls, ValueError)


@pytest.mark.parametrize("lazy", KINDS)
def test_zoom_that_keeps_no_point(lazy):
    # The subpopulation has 10 distinct scores at most: floor(10 * 0.05) = 0.
    df = base_frame()
    expect_error("curve", lazy, df, ["fraction", "no point"], fraction=0.05)
    frame = df.lazy() if lazy else df
    with pytest.raises(polars_cumdev.InvalidParameterError, match="no point"):
        result = frame.with_columns(pl.col("score_x") / 2).cumdev.calibration_curve(
            "score_x", "resp_y", fraction=0.01
        )
        if lazy:
            result.collect()


@pytest.mark.parametrize("lazy", KINDS)
def test_an_aliased_selection_is_named_by_its_alias(lazy):
    # Messages name a selection as its author wrote it, not as a Polars expression.
    west = (pl.col("grp") == "west").alias("grp = west")
    expected = ["subpop 'grp = west' selects no rows"]
    error = expect_error("curve", lazy, base_frame(), expected, subpop=west)
    assert "col(" not in str(error)
    north = (pl.col("grp") == "north").alias("grp = north")
    expected = ["no point of subpop 'grp = north'"]
    error = expect_error("curve", lazy, base_frame(), expected, subpop=north, fraction=0.05)
    assert "col(" not in str(error)


def test_selection_labels():
    from polars_cumdev.method.groups import selection_label

    assert selection_label("flag") == "subpop column 'flag'"
    assert selection_label((pl.col("g") == 1).alias("g = 1"), "first") == "first 'g = 1'"
    # An alias inside the expression does not name the selection.
    inner = pl.col("g").alias("h") == 1
    assert selection_label(inner) == f"subpop expression {inner}"
    assert selection_label(pl.col("g") == 1).startswith("subpop expression [(col(")


@pytest.mark.parametrize("value", [0.0, -1.0])
@pytest.mark.parametrize("analysis", ["screen", "calibration"])
def test_a_zero_or_negative_weight_is_reported_alone(value: float, analysis: str) -> None:
    """Only the first problem is reported: not also the weights' spread (2^500), which a
    non-positive weight trips as well and which reads as if it were the threshold."""
    df = plant(base_frame(), "wt_z", value)
    call = {
        "screen": lambda: df.cumdev.screen("grp", "score_x", "resp_y", "wt_z"),
        "calibration": lambda: df.cumdev.calibration("score_x", "resp_y", "wt_z"),
    }[analysis]
    with pytest.raises(polars_cumdev.InvalidValuesError) as caught:
        call()
    message = str(caught.value)
    assert message == (
        f"weight column 'wt_z' has {BAD} non-positive value(s) among {N_ROWS} rows; "
        "weights must be > 0"
    )
