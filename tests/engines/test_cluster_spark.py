"""The Spark screen equals the in-process screen, on one local[2] session (all marked slow).

Java comes from Debian's openjdk-17-jre-headless (``.ci/run`` installs it);
without Java or PySpark the tests skip with the reason.
"""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from cluster_cases import (
    BAD_CASES,
    DATASETS,
    assert_frames_close,
    assert_same,
    bad_frame,
    calibration_expected,
    expected_error,
    make_data,
    null_keys,
    planted,
    rare_groups,
    screen_expected,
)
from engine_cases import soft_groups

from polars_cumdev import CumdevError

pytestmark = pytest.mark.slow

#: The range counts of these tests. The other engines' tests take 1, 2, 7 and
#: 64 (``cluster_cases.RANGES``); on Spark each range is a task of each of up
#: to four passes, at about a quarter second a task in ``local[2]``, so 64
#: ranges cost about 30 s a call (seven calls here). 16 keeps what 64 tests:
#: more ranges than partitions (4) and than groups (7), and a planted group
#: spread over many ranges.
RANGES = [1, 2, 7, 16]

pytest.importorskip("pyspark", reason="the spark extra is not installed")
pytest.importorskip("pyarrow", reason="the spark extra is not installed")
if shutil.which("java") is None:  # pragma: no cover - CI installs Java
    pytest.skip(
        "Spark needs Java (apt-get install openjdk-17-jre-headless)", allow_module_level=True
    )

import polars_cumdev.spark as cspark  # noqa: E402
from polars_cumdev.engines.cluster import steps  # noqa: E402
from polars_cumdev.engines.partitioned import cuts as cutting  # noqa: E402
from polars_cumdev.partitioned import screen_partitioned  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    session = cspark.local_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def to_spark(spark, df: pl.DataFrame, partitions: int = 4):
    return spark.createDataFrame(df.to_arrow()).repartition(partitions)


@pytest.mark.parametrize(("seed", "response", "weighted"), DATASETS)
def test_screen_matches_in_process_for_1_2_7_16_ranges(spark, seed, response, weighted):
    df = make_data(seed, response=response, weighted=weighted)
    weight = "w" if weighted else None
    expected = screen_expected(df, weight)
    source = to_spark(spark, df)
    for ranges in RANGES:
        actual = cspark.screen(source, "g", "s", "r", weight, ranges=ranges)
        assert_same(expected, actual, ["g"])


def test_located_like_in_process(spark):
    # Planted deviations: one crossing several ranges, one inside a range, a fall;
    # pass 3 lays out only the flagged groups' curves.
    for seed, weighted in ((1, True), (2, False)):
        df = planted(seed, weighted=weighted)
        weight = "w" if weighted else None
        # Level 1: every stretch found is stated (the search across ranges is tested).
        expected = screen_expected(df, weight, level=1.0)
        assert expected["share"].null_count() < expected.height - 2
        source = to_spark(spark, df)
        for ranges in RANGES:
            actual = cspark.screen(source, "g", "s", "r", weight, ranges=ranges, level=1.0)
            assert_same(expected, actual, ["g"])
        # The default level: only the significant groups are located, as in process.
        actual = cspark.screen(source, "g", "s", "r", weight, ranges=RANGES[-1])
        assert_same(screen_expected(df, weight), actual, ["g"])


def test_default_ranges_and_parquet(spark, tmp_path):
    df = make_data(14, response="continuous")
    df.write_parquet(tmp_path / "data.parquet", row_group_size=100)
    source = spark.read.parquet(str(tmp_path / "data.parquet"))
    assert_same(screen_expected(df), cspark.screen(source, "g", "s", "r", "w"), ["g"])


def test_null_keys_and_two_keys(spark):
    df = null_keys().with_columns((pl.col("s") > 0.5).alias("h"))
    actual = cspark.screen(to_spark(spark, df), "g", "s", "r", "w", ranges=5)
    assert actual["g"].null_count() == 1
    assert_same(screen_expected(df), actual, ["g"])
    expected = screen_expected(df, by=["g", "h"])
    actual = cspark.screen(to_spark(spark, df), ["g", "h"], "s", "r", "w", ranges=3)
    assert_same(expected, actual, ["g", "h"])


@pytest.mark.parametrize("name", list(BAD_CASES))
def test_bad_input_gives_the_in_process_error(spark, name):
    df = bad_frame(name)
    expected = expected_error(lambda: screen_expected(df))
    with pytest.raises(CumdevError) as info:
        cspark.screen(to_spark(spark, df), "g", "s", "r", "w")
    assert (type(info.value), str(info.value)) == expected


def test_schema_errors(spark):
    df = make_data(3, rows=100)
    for arguments in (("g", "nope", "r", "w"), ("g", "g", "r", "w")):
        expected = expected_error(lambda a=arguments: df.lazy().cumdev.screen(*a))
        with pytest.raises(CumdevError) as info:
            cspark.screen(to_spark(spark, df), *arguments)
        assert (type(info.value), str(info.value)) == expected


@pytest.mark.parametrize("by", ["g", None])
def test_calibration_per_group(spark, by):
    df = make_data(17, rows=900).with_columns(pl.col("r").cast(pl.Float64))
    expected = calibration_expected(df, by)
    actual = cspark.calibration(to_spark(spark, df), "s", "r", "w", by=by)
    assert_frames_close(expected, actual, ["g"] if by else ["n"])


def test_files_spark_cannot_read_give_one_line_naming_the_file(spark, tmp_path):
    """Issue 25, item 12: a Spark DataFrame over files Spark fails to read: no Java stack."""
    from test_parquet_files import _write

    path, _ = _write(tmp_path / "data", "damaged data page")
    for call in (
        lambda sdf: cspark.screen(sdf, "g", "s", "r", "w"),
        lambda sdf: cspark.calibration(sdf, "s", "r", "w", by="g"),
    ):
        with pytest.raises(CumdevError) as info:
            call(spark.read.parquet(path))
        message = str(info.value)
        assert message.startswith("Spark could not read or process the input: "), message
        assert "b.parquet" in message and "\n" not in message and " at org." not in message


@pytest.mark.parametrize("ranges", [4, None])
def test_same_bits_under_shuffles_and_partitions(spark, monkeypatch, ranges):
    """Issue 25, item 9: the Spark screen's bits do not depend on row order or partitioning.

    More distinct scores than the (here small) sample of the cut points: a
    sample that depends on the partitioning (Spark's seeded Bernoulli sample
    of each partition) would change the last bits. With the same cuts the
    in-process partitioned screen, hence the Dask screen, gives the same bits.
    """
    monkeypatch.setattr(cutting, "SAMPLE_SIZE", 500)
    df = make_data(13, rows=3000)
    assert df["s"].n_unique() > 500
    first = None
    for k, partitions in [(0, 1), (1, 3), (2, 7)]:
        shuffled = df.sample(fraction=1.0, shuffle=True, seed=k)
        frame = to_spark(spark, shuffled, partitions)
        out = cspark.screen(frame, "g", "s", "r", "w", ranges=ranges).sort("g", nulls_last=True)
        if first is None:
            first = out
        assert out.equals(first), (k, partitions, ranges)
    count = steps.default_ranges(df.height) if ranges is None else ranges
    local = screen_partitioned(df, "g", "s", "r", "w", ranges=count)
    assert local.sort("g", nulls_last=True).equals(first)
    assert_frames_close(screen_expected(df), first, ["g"])


@pytest.mark.parametrize(
    "case", ["float32 score", "string score", "missing weight", "corrupt file", "extra column"]
)
def test_parquet_files_get_the_in_process_decision_and_message(spark, tmp_path, case):
    """Issue 25, item 12: Spark upcast a Float32 file among Float64 ones without a word.

    The files behind ``spark.read.parquet(folder)`` are checked as the
    in-process Parquet screen checks them: the same error class and message,
    naming the file, or (an extra, unused column) the same result.
    """
    from test_parquet_files import _write

    from polars_cumdev.partitioned import screen_parquet

    path, words = _write(tmp_path / "data", case)
    try:
        expected = screen_parquet(path, "g", "s", "r", "w", ranges=3)
    except CumdevError as exc:
        expected = exc
    if not isinstance(expected, CumdevError):
        actual = cspark.screen(spark.read.parquet(path), "g", "s", "r", "w", ranges=3)
        assert_frames_close(expected, actual, ["g"])
        return
    for call in (
        lambda sdf: cspark.screen(sdf, "g", "s", "r", "w", ranges=3),
        lambda sdf: cspark.calibration(sdf, "s", "r", "w", by="g"),
    ):
        with pytest.raises(CumdevError) as info:
            call(spark.read.parquet(path))
        assert (type(info.value), str(info.value)) == (type(expected), str(expected))
        assert words in str(info.value)


def test_partition_columns_and_joins_are_not_refused(spark, tmp_path):
    """The check looks only at columns the files hold, and only at one Parquet relation."""
    df = make_data(13, rows=600)
    folder = tmp_path / "parts"
    df.write_parquet(folder, partition_by="g")  # g lives in the directory names only
    expected = screen_expected(df)
    actual = cspark.screen(spark.read.parquet(str(folder)), "g", "s", "r", "w")
    assert_frames_close(expected, actual, ["g"])
    scores = spark.read.parquet(str(folder)).select("g", "s", "r", "w")
    joined = scores.join(spark.createDataFrame([("g00", 1)], ["g", "flag"]), "g", "left")
    assert_frames_close(expected, cspark.screen(joined, "g", "s", "r", "w"), ["g"])


@pytest.mark.parametrize("ranges", [1, 5])
def test_rare_outcome_small_groups_are_simulated_as_in_process(spark, ranges):
    # Some groups' p-values are simulated in-process; the Spark screen gathers those
    # groups' rows and the population's sums between their midpoints to the driver
    # and gives the same p-values and p_method (assert_same compares p_method).
    df = rare_groups(7)
    expected = screen_expected(df)
    simulated = expected.filter(pl.col("p_method") == "simulated").sort("g")
    assert simulated.height >= 3
    actual = cspark.screen(to_spark(spark, df), "g", "s", "r", "w", ranges=ranges)
    assert_same(expected, actual, ["g"])
    mine = actual.filter(pl.col("p_method") == "simulated").sort("g")
    assert mine.select("kuiper_p", "ks_p").equals(simulated.select("kuiper_p", "ks_p"))


@pytest.mark.parametrize("by", ["g", None])
def test_rare_outcome_calibration_is_simulated_as_in_process(spark, by):
    # Calibration of a rare outcome in small groups: the groups meeting the criterion
    # send their rows to the driver, which simulates them as in-process.
    df = rare_groups(7) if by else rare_groups(7).filter(pl.col("g") == "g00")
    expected = calibration_expected(df, by)
    assert "simulated" in expected["p_method"].to_list()
    actual = cspark.calibration(to_spark(spark, df), "s", "r", "w", by=by)
    assert_frames_close(expected, actual, ["g"] if by else ["n"])


def test_real_responses_in_small_groups_are_resampled_as_in_process(spark):
    # Soft labels near 0 in groups of 10-30 rows: the candidates' rows and the
    # population reach the driver, which resamples as in-process
    # (tests/analyses/test_screen_resampled.py): the same p-values and p_method.
    df = soft_groups(3)
    expected = screen_expected(df)
    resampled = expected.filter(pl.col("p_method") == "resampled").sort("g")
    assert resampled.height >= 1
    actual = cspark.screen(to_spark(spark, df, 3), "g", "s", "r", "w", ranges=4)
    assert_same(expected, actual, ["g"])
    mine = actual.filter(pl.col("p_method") == "resampled").sort("g")
    assert mine.select("kuiper_p", "ks_p").equals(resampled.select("kuiper_p", "ks_p"))


def test_a_few_groups_rows_are_filtered_before_python(spark):
    # A function reading a few groups' rows (finite.OfGroups) gets only the rows whose
    # keys are among theirs, filtered in the JVM: a null key and a second key included.
    # A key whose values may change on their way to Polars (a double) is not filtered.
    from polars_cumdev.engines.cluster import finite
    from polars_cumdev.engines.cluster import spark_jobs as jobs
    from polars_cumdev.method import _names as nm

    df = pl.DataFrame(
        {
            "g": ["a", "b", None, "a", "c", None, "b"],
            "h": [1, 1, 2, 2, 1, 2, 2],
            "x": [0.5, 1.5, 0.5, 1.5, 0.5, 0.5, 1.5],
            "s": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
            "r": [0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0],
        }
    )
    source = to_spark(spark, df, 3)

    def seen(by: list[str], groups: pl.DataFrame) -> pl.DataFrame:
        request = jobs.spark_request("screen", source, by, "s", "r", None, "auto")
        rows = jobs.batches(source, request)(finite.OfGroups(lambda rows: rows, groups))
        found = pl.concat([p for p in rows if p is not None])
        return found.select(*by, nm.SCORE).sort(nm.SCORE)

    picked = pl.DataFrame({"g": ["a", None]})
    assert seen(["g"], picked)[nm.SCORE].to_list() == [0.1, 0.3, 0.4, 0.6]
    both = pl.DataFrame({"g": ["a", "b"], "h": [2, 1]})  # each key on its own: a superset
    assert seen(["g", "h"], both)[nm.SCORE].to_list() == [0.1, 0.2, 0.4, 0.7]
    assert seen(["x"], pl.DataFrame({"x": [0.5]})).height == df.height
    everything = jobs.batches(
        source, jobs.spark_request("screen", source, "g", "s", "r", None, "auto")
    )
    assert sum(p.height for p in everything(lambda rows: rows) if p is not None) == df.height
