"""pandas and PyArrow frames at the top-level functions, and ``by`` given as expressions.

Issue 24, items 4 and 5: a pandas DataFrame or a PyArrow Table gives the same
numbers as the Polars frame it converts to (returned as an eager Polars
DataFrame), Arrow buffers are shared rather than copied, other objects get a
clear CumdevError; ``by`` accepts expressions, named by their output names.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev
from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.method.frames import is_foreign, polars_frame
from polars_cumdev.method.keys import key_names, with_keys

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")


def frame(seed: int = 0, m: int = 600) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 30, size=m) / 30.0
    return pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c"], size=m),
            "x": rng.normal(size=m),
            "s": s,
            "r": (rng.uniform(size=m) < np.clip(s + 0.1 * np.sin(5 * s), 0, 1)).astype(np.int64),
            "w": rng.lognormal(0, 0.5, size=m),
        }
    )


@pytest.mark.parametrize("convert", ["pandas", "arrow"])
@pytest.mark.slow
def test_foreign_frames_give_the_polars_numbers_as_polars_dataframes(convert: str) -> None:
    df = frame()
    other = df.to_pandas() if convert == "pandas" else df.to_arrow()
    assert is_foreign(other)
    got = polars_cumdev.screen(other, by="g", score="s", response="r", weight="w")
    assert isinstance(got, pl.DataFrame)
    assert got.equals(polars_cumdev.screen(df, by="g", score="s", response="r", weight="w"))
    got = polars_cumdev.curve(other, pl.col("g") == "b", "s", "r", "w")
    assert isinstance(got, pl.DataFrame)
    assert got.equals(polars_cumdev.curve(df, pl.col("g") == "b", "s", "r", "w"))
    got = calibration(other, "s", "r", "w", by="g")
    assert got.equals(calibration(df, "s", "r", "w", by="g"))
    got = calibration_curve(other, "s", "r")
    assert got.equals(calibration_curve(df, "s", "r"))


def test_keyword_frame_and_record_batch_are_accepted() -> None:
    df = frame(1)
    batch = df.to_arrow().to_batches()[0]
    got = polars_cumdev.screen(frame=batch, by="g", score="s", response="r")
    assert got.equals(polars_cumdev.screen(df, by="g", score="s", response="r"))


def test_arrow_columns_are_shared_not_copied() -> None:
    table = frame(2).to_arrow()
    converted = polars_frame(table)
    assert isinstance(converted, pl.DataFrame)
    arrow_address = table.column("x").chunk(0).buffers()[1].address
    polars_address = converted.get_column("x").to_arrow().buffers()[1].address
    assert polars_address == arrow_address


def test_pandas_index_is_not_a_column_and_nullable_columns_convert() -> None:
    pdf = frame(3).to_pandas().set_index("g")
    got = polars_frame(pdf)
    assert "g" not in got.columns
    nullable = pd.DataFrame({"s": pd.array([0.2, None], dtype="Float64"), "r": [0, 1]})
    with pytest.raises(polars_cumdev.InvalidValuesError, match="score column 's' has 1 null"):
        calibration(nullable, "s", "r")


@pytest.mark.parametrize("bad", [{"s": [0.5]}, np.zeros((2, 2)), [[0.5, 1]], "data.csv", None])
def test_other_objects_get_a_clear_error(bad: object) -> None:
    with pytest.raises(polars_cumdev.CumdevError, match="must be a Polars DataFrame or LazyFrame"):
        polars_cumdev.screen(bad, by="g", score="s", response="r")


def test_a_pandas_series_is_refused_by_name() -> None:
    with pytest.raises(polars_cumdev.CumdevError, match=r"pandas.*Series"):
        polars_cumdev.curve(frame()["s"].to_pandas(), "g", "s", "r")


@pytest.mark.slow
def test_expression_keys_match_precomputed_columns() -> None:
    df = frame(4)
    bucket = (pl.col("x") * 2).floor().alias("bucket")
    got = polars_cumdev.screen(df, by=[bucket, "g"], score="s", response="r")
    want = polars_cumdev.screen(
        df.with_columns(bucket), by=["bucket", "g"], score="s", response="r"
    )
    assert got.sort("bucket", "g").equals(want.sort("bucket", "g"))
    assert got.columns[:2] == ["bucket", "g"]
    # Same name as an input column: the expression's values, the user's frame unchanged.
    got = df.cumdev.calibration("s", "r", by=pl.col("g").str.to_uppercase())
    assert sorted(got["g"].to_list()) == ["A", "B", "C"]
    assert sorted(df["g"].unique().to_list()) == ["a", "b", "c"]


def test_key_names_and_errors() -> None:
    assert key_names(None) == []
    assert key_names("g") == ["g"]
    assert key_names([pl.col("ts").dt.truncate("1w"), "g"]) == ["ts", "g"]
    lazy = pl.LazyFrame({"g": [1]})
    same, names = with_keys(lazy, "g")
    assert same is lazy and names == ["g"]
    with pytest.raises(polars_cumdev.CumdevError, match="twice"):
        key_names([pl.col("g"), "g"])
    with pytest.raises(polars_cumdev.CumdevError, match="empty list"):
        key_names([])
    with pytest.raises(polars_cumdev.CumdevError, match="column name, an expression"):
        key_names([3])
    with pytest.raises(polars_cumdev.CumdevError, match="column name, an expression"):
        key_names(3)
    with pytest.raises(polars_cumdev.ColumnNotFoundError, match="missing column"):
        calibration(frame(), "s", "r", by=pl.col("nope").dt.truncate("1w"))


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.slow
def test_expression_keys_agree_between_the_engines(lazy: bool) -> None:
    df = frame(5)
    source = df.lazy() if lazy else df
    bucket = (pl.col("x") * 2).floor()
    for analysis in ("screen", "calibration"):
        runs = []
        for engine in ("polars", "kernel"):
            if analysis == "screen":
                out = polars_cumdev.screen(
                    source, by=bucket, score="s", response="r", engine=engine
                )
            else:
                out = calibration(source, "s", "r", "w", by=bucket, engine=engine)
            runs.append(out.lazy().collect().sort("x"))
        statistic = "kuiper" if analysis == "screen" else "ecce_r"
        assert runs[0]["x"].equals(runs[1]["x"])
        np.testing.assert_allclose(runs[0][statistic], runs[1][statistic], rtol=1e-12)
