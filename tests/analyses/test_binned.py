"""Reliability diagrams and ECEs (method.md 3) against a naive loop transcription."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from reference_binned import ece as ece_reference
from reference_binned import reliability as reliability_reference

from polars_cumdev.binned import BINNINGS, ece, ece_sweep, equal_error_labels, reliability
from polars_cumdev.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    EmptySubpopulationError,
    InvalidParameterError,
    InvalidValuesError,
)

RTOL = 1e-9
BIN_COUNTS = (1, 3, 10, 37)
FLOATS = ("score_mean", "response_mean", "weight")


def make_data(n: int = 420, seed: int = 7) -> pl.DataFrame:
    """Weighted data with many ties: half the scores on a 1/16 grid (edges of several
    equispaced binnings), responses mostly 0/1, some soft; a few duplicated rows."""
    rng = np.random.default_rng(seed)
    grid = rng.choice(np.arange(17) / 16.0, n)
    scores = np.where(rng.random(n) < 0.5, grid, rng.uniform(0.0, 1.0, n))
    responses = (rng.random(n) < 0.2 + 0.6 * scores).astype(np.float64)
    soft = rng.random(n) < 0.1
    responses[soft] = rng.choice([0.25, 0.5, 0.75], soft.sum())
    weights = rng.choice([0.5, 1.0, 1.5, 2.5], n) * np.where(rng.random(n) < 0.3, 1.0, 1.3)
    member = rng.random(n) < 0.35
    frame = pl.DataFrame(
        {
            "s": scores,
            "r": responses,
            "w": weights,
            "member": member,
            "g": rng.choice(["a", "b", "c"], n),
        }
    )
    return pl.concat([frame, frame.head(25)])  # exact duplicates of whole rows


DATA = make_data()


def _columns(df: pl.DataFrame) -> tuple:
    return tuple(df.get_column(c).to_list() for c in ("s", "r", "w", "member"))


def assert_matches(got: pl.DataFrame, expected: list[dict]) -> None:
    assert got.height == len(expected)
    assert got.columns == [
        "population",
        "bin",
        "score_mean",
        "response_mean",
        "weight",
        "count",
        "resample",
    ]
    want = pl.DataFrame(expected, schema=got.schema)
    for column in ("population", "bin", "count", "resample"):
        assert got.get_column(column).to_list() == want.get_column(column).to_list(), column
    for column in FLOATS:
        np.testing.assert_allclose(
            got.get_column(column).to_numpy(), want.get_column(column).to_numpy(), rtol=RTOL
        )


@pytest.mark.parametrize("binning", BINNINGS)
@pytest.mark.parametrize("bins", BIN_COUNTS)
@pytest.mark.parametrize("subpop", [None, "member"])
@pytest.mark.parametrize("calibration", [False, True])
def test_reliability_matches_reference(binning, bins, subpop, calibration):
    s, r, w, member = _columns(DATA)
    got = reliability(
        DATA, "s", "r", "w", subpop=subpop, bins=bins, binning=binning, calibration=calibration
    )
    expected = reliability_reference(
        s,
        r,
        w,
        member if subpop else None,
        bins=bins,
        binning=binning,
        unit=calibration,
    )
    assert_matches(got, expected)


@pytest.mark.parametrize("binning", BINNINGS)
def test_reliability_unweighted_matches_reference(binning):
    s, r, _, member = _columns(DATA)
    got = reliability(DATA.lazy(), "s", "r", subpop=pl.col("member"), bins=7, binning=binning)
    assert isinstance(got, pl.LazyFrame)
    assert_matches(
        got.collect(), reliability_reference(s, r, None, member, bins=7, binning=binning)
    )


@pytest.mark.parametrize("binning", BINNINGS)
@pytest.mark.parametrize("bins", BIN_COUNTS)
def test_reliability_any_scale_and_tiny_populations(binning, bins):
    # Scores far from [0, 1] (equispaced over [min, max]) and a 5-row subpopulation,
    # fewer rows than bins.
    rng = np.random.default_rng(3)
    frame = DATA.with_columns(
        (pl.col("s") * 1234.5 - 300.25).alias("s"),
        pl.Series("member", np.arange(DATA.height) % 89 == 0),
    )
    s, r, w, member = _columns(frame)
    assert sum(member) == 5
    got = reliability(frame, "s", "r", "w", subpop="member", bins=bins, binning=binning)
    assert_matches(got, reliability_reference(s, r, w, member, bins=bins, binning=binning))
    noisy = frame.with_columns(pl.Series("s", rng.normal(1e6, 1e-3, frame.height)))
    s, r, w, member = _columns(noisy)
    got = reliability(noisy, "s", "r", "w", subpop="member", bins=bins, binning=binning)
    assert_matches(got, reliability_reference(s, r, w, member, bins=bins, binning=binning))


@pytest.mark.parametrize("binning", BINNINGS)
def test_bootstrap_matches_reference_and_is_seeded(binning):
    s, r, w, member = _columns(DATA)
    kwargs = {"subpop": "member", "bins": 6, "binning": binning, "resamples": 4}
    got = reliability(DATA, "s", "r", "w", seed=3, **kwargs)
    expected = reliability_reference(s, r, w, member, bins=6, binning=binning, seed=3, resamples=4)
    assert_matches(got, expected)
    assert got.equals(reliability(DATA, "s", "r", "w", seed=3, **kwargs))
    other = reliability(DATA, "s", "r", "w", seed=4, **kwargs)
    assert not got.equals(other)
    # Resamples draw as many rows as the population holds.
    totals = got.group_by("population", "resample").agg(pl.col("count").sum())
    sizes = {"subpopulation": DATA["member"].sum(), "full": DATA.height}
    for row in totals.iter_rows(named=True):
        assert row["count"] == sizes[row["population"]]
    assert sorted(got["resample"].drop_nulls().unique().to_list()) == [0, 1, 2, 3]


def test_full_population_resamples_do_not_depend_on_subpop():
    with_sub = reliability(DATA, "s", "r", "w", subpop="member", resamples=3)
    without = reliability(DATA, "s", "r", "w", resamples=3)
    assert with_sub.filter(pl.col("population") == "full").equals(without)
    assert set(without["population"]) == {"full"}


@pytest.mark.parametrize("weights", [None, 0.7, 3.0])
@pytest.mark.parametrize("bins", BIN_COUNTS)
@pytest.mark.parametrize("n", [5, 100, 101, 419])
def test_equal_error_with_equal_weights_is_equal_count(weights, bins, n):
    frame = DATA.head(n)
    if weights is not None:
        frame = frame.with_columns(pl.lit(weights).alias("w"))
    weight = None if weights is None else "w"
    common = {"subpop": "member", "bins": bins}
    error = reliability(frame, "s", "r", weight, binning="equal_error", **common)
    count = reliability(frame, "s", "r", weight, binning="equal_count", **common)
    assert error.equals(count)


def test_equal_error_labels_merge_short_last_bin():
    # Target from 2 of 5 unit weights: 1/sqrt(2); bins of 2, 2, then 1 left over,
    # fewer than half of 2 -> merged.
    labels = equal_error_labels(np.ones(5), 2, seed=0)
    assert labels.tolist() == [0, 0, 1, 1, 1]
    # A heavy row closes nothing early: ratio of (1, 100) is ~1 > target.
    labels = equal_error_labels(np.array([1.0, 100.0, 1.0, 1.0, 1.0, 1.0]), 3, seed=1)
    assert labels[0] == labels[1]
    assert np.all(np.diff(labels) >= 0)


def test_empty_bins_are_dropped():
    rng = np.random.default_rng(11)
    scores = np.concatenate([rng.uniform(0.0, 0.2, 60), rng.uniform(0.8, 1.0, 60)])
    frame = pl.DataFrame({"s": scores, "r": (rng.random(120) < scores).astype(float)})
    got = reliability(frame, "s", "r", bins=10, calibration=True)
    assert got["bin"].to_list() == [0, 1, 8, 9]
    assert got.select(pl.col(FLOATS).is_nan().any()).row(0) == (False,) * 3
    assert_matches(
        got,
        reliability_reference(
            scores, frame["r"].to_list(), bins=10, binning="equispaced", unit=True
        ),
    )
    # The ECE sums over the 4 non-empty bins only.
    result = ece(frame, "s", "r", bins=10)
    assert result["bins"].to_list() == [4]


def test_edges_belong_to_the_lower_bin():
    frame = pl.DataFrame({"s": [0.0, 0.25, 0.5, 0.75, 1.0], "r": [0.0, 1.0, 0.0, 1.0, 1.0]})
    got = reliability(frame, "s", "r", bins=4, calibration=True)
    assert got["bin"].to_list() == [0, 1, 2, 3]
    assert got["count"].to_list() == [2, 1, 1, 1]
    # Not calibration: the range [0, 1] again, so the same bins.
    assert reliability(frame, "s", "r", bins=4).equals(got)
    # A constant score is a single bin.
    constant = frame.with_columns(pl.lit(0.3).alias("s"))
    assert reliability(constant, "s", "r", bins=5)["bin"].to_list() == [0]


@pytest.mark.parametrize(("score", "bins", "expected"), [(0.1 * 3, 10, 3), (5 / 6, 6, 4)])
def test_edge_arithmetic_does_not_depend_on_the_frame(score, bins, expected):
    # The edges are lo + (hi - lo) k / l in float64 (method.md 3): 0.1 * 3 is
    # just above 3 / 10, so it is in bin 3; 5 / 6 is the edge itself, so bin 4.
    # A product with the reciprocal of l puts these one bin off, and Polars
    # divides by a scalar that way only for frames of more than one row.
    for others in ([], [0.0], [0.0, 0.05, 0.95]):
        frame = pl.DataFrame({"s": [score, *others], "r": 0.0})
        got = reliability(frame, "s", "r", bins=bins, calibration=True)
        assert got.filter(pl.col("score_mean") == score)["bin"].to_list() == [expected]


@pytest.mark.parametrize("binning", BINNINGS)
def test_row_order_does_not_matter(binning):
    shuffled = DATA.sample(fraction=1.0, shuffle=True, seed=5)
    kwargs = {"subpop": "member", "bins": 10, "binning": binning, "resamples": 2}
    first = reliability(DATA, "s", "r", "w", **kwargs)
    second = reliability(shuffled, "s", "r", "w", **kwargs)
    assert first.equals(second)


@pytest.mark.parametrize("binning", BINNINGS)
@pytest.mark.parametrize("weighting", ["width", "count"])
@pytest.mark.parametrize("bins", BIN_COUNTS)
@pytest.mark.parametrize("weight", [None, "w"])
def test_ece_matches_reference(binning, weighting, bins, weight):
    s, r, w, _ = _columns(DATA)
    got = ece(DATA, "s", "r", weight, bins=bins, binning=binning, weighting=weighting)
    want = ece_reference(
        s, r, w if weight else None, bins=bins, binning=binning, weighting=weighting
    )
    assert got.columns == ["n", "bins", "ece1", "ece2", "binning", "weighting"]
    row = got.row(0, named=True)
    assert (row["n"], row["bins"]) == (want["n"], want["bins"])
    assert (row["binning"], row["weighting"]) == (binning, weighting)
    np.testing.assert_allclose([row["ece1"], row["ece2"]], [want["ece1"], want["ece2"]], rtol=RTOL)
    assert row["ece1"] >= row["ece2"]  # Theorem 3 of the ECE paper


@pytest.mark.parametrize("binning", BINNINGS)
@pytest.mark.parametrize("weighting", ["width", "count"])
def test_ece_by_equals_ece_per_group(binning, weighting):
    kwargs = {"bins": 8, "binning": binning, "weighting": weighting}
    grouped = ece(DATA, "s", "r", "w", by="g", **kwargs)
    assert sorted(grouped["g"].to_list()) == ["a", "b", "c"]
    assert grouped["ece1"].to_list() == sorted(grouped["ece1"].to_list(), reverse=True)
    for row in grouped.iter_rows(named=True):
        alone = ece(DATA.filter(pl.col("g") == row["g"]), "s", "r", "w", **kwargs)
        single = alone.row(0, named=True)
        assert (row["n"], row["bins"]) == (single["n"], single["bins"])
        np.testing.assert_allclose(
            [row["ece1"], row["ece2"]], [single["ece1"], single["ece2"]], rtol=RTOL
        )


@pytest.mark.slow
def test_ece_sweep_rows_equal_ece():
    counts = [1, 2, 5, 10, 37]
    sweep = ece_sweep(DATA, "s", "r", "w", bins=counts, binning="equal_count")
    assert sweep.columns == ["requested", "n", "bins", "ece1", "ece2", "binning", "weighting"]
    assert sweep["requested"].to_list() == counts
    for row in sweep.iter_rows(named=True):
        single = ece(DATA, "s", "r", "w", bins=row["requested"], binning="equal_count")
        np.testing.assert_allclose(
            [row["ece1"], row["ece2"]], [single["ece1"][0], single["ece2"][0]], rtol=RTOL
        )
    default = ece_sweep(DATA.lazy(), "s", "r").collect()
    assert default["requested"].to_list() == list(range(2, 101, 2))
    assert default["ece1"].n_unique() > 1  # the ECE moves with the number of bins


def test_sweep_by_groups():
    sweep = ece_sweep(DATA, "s", "r", by="g", bins=[3, 9])
    assert sweep.columns[:2] == ["g", "requested"]
    assert sweep.height == 6


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10", None])
def test_bad_bins(bad):
    with pytest.raises(InvalidParameterError, match="bins"):
        reliability(DATA, "s", "r", bins=bad)
    with pytest.raises(InvalidParameterError, match="bins"):
        ece(DATA, "s", "r", bins=bad)
    with pytest.raises(InvalidParameterError, match="bins"):
        ece_sweep(DATA, "s", "r", bins=[4, bad])


def test_bad_parameters():
    with pytest.raises(InvalidParameterError, match="binning"):
        reliability(DATA, "s", "r", binning="quantile")
    with pytest.raises(InvalidParameterError, match="binning"):
        ece(DATA, "s", "r", binning="equal-count")
    with pytest.raises(InvalidParameterError, match="weighting"):
        ece(DATA, "s", "r", weighting="rows")
    with pytest.raises(InvalidParameterError, match="resamples"):
        reliability(DATA, "s", "r", resamples=-1)
    with pytest.raises(InvalidParameterError, match="seed"):
        reliability(DATA, "s", "r", seed=-1)
    with pytest.raises(InvalidParameterError, match="bins"):
        ece_sweep(DATA, "s", "r", bins=[])
    with pytest.raises(ColumnNotFoundError, match="nope"):
        reliability(DATA, "nope", "r")
    with pytest.raises(ColumnTypeError, match="g"):
        reliability(DATA, "s", "r", subpop="g")
    with pytest.raises(InvalidParameterError, match="bins"):
        ece(DATA.with_columns(pl.col("g").alias("bins")), "s", "r", by="bins")


def test_values_out_of_unit_interval():
    shifted = DATA.with_columns((pl.col("s") * 2).alias("score2"), (pl.col("r") + 1).alias("resp2"))
    with pytest.raises(InvalidValuesError, match=r"'score2'.*outside \[0, 1\]"):
        ece(shifted, "score2", "r")
    with pytest.raises(InvalidValuesError, match=r"'resp2'.*outside \[0, 1\]"):
        ece(shifted, "s", "resp2")
    with pytest.raises(InvalidValuesError, match="'score2'"):
        ece_sweep(shifted, "score2", "r", bins=[2, 3])
    with pytest.raises(InvalidValuesError, match="calibration=True"):
        reliability(shifted, "score2", "r", calibration=True)
    # Without calibration any real score is fine.
    assert reliability(shifted, "score2", "resp2").height > 0


@pytest.mark.parametrize("binning", BINNINGS)
@pytest.mark.parametrize(
    ("column", "value", "pattern"),
    [
        ("w", 0.0, r"'w'.*non-positive"),
        ("w", -1.0, r"'w'.*non-positive"),
        ("w", float("nan"), r"'w'.*NaN"),
        ("s", None, r"'s'.*null"),
        ("r", float("inf"), r"'r'.*infinite"),
    ],
)
def test_bad_values_raise_the_library_error(binning, column, value, pattern):
    hit = pl.int_range(pl.len()) < 3
    bad = DATA.with_columns(
        pl.when(hit).then(pl.lit(value, dtype=pl.Float64)).otherwise(pl.col(column)).alias(column)
    )
    with pytest.raises(InvalidValuesError, match=pattern):
        reliability(bad, "s", "r", "w", subpop="member", binning=binning, resamples=2)
    with pytest.raises(InvalidValuesError, match=pattern):
        ece(bad, "s", "r", "w", binning=binning)


def test_empty_inputs():
    with pytest.raises(EmptySubpopulationError):
        reliability(DATA, "s", "r", subpop=pl.col("s") > 5)
    for binning in BINNINGS:
        with pytest.raises(EmptySubpopulationError):
            reliability(DATA.clear(), "s", "r", binning=binning, resamples=2)
