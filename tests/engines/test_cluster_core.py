"""The engine-neutral pieces of the cluster screen, run by a plain loop over batches.

No engine here: :func:`run_screen` moves the frames the way Spark and Dask
do (per-batch summaries, planning, split by range, range steps, finish), so
these tests pin the decomposition itself, the checks that do not add up
over batches, and the lazy import of the engines.
"""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest
from cluster_cases import assert_same, expected_error, make_data, planted, screen_expected
from engine_cases import rare_groups

from polars_cumdev import CumdevError
from polars_cumdev.engines.cluster import EngineMissingError, finite, steps
from polars_cumdev.engines.cluster.checks import count_below
from polars_cumdev.engines.cluster.request import make_request
from polars_cumdev.engines.partitioned import SAMPLE_SIZE


def run_screen(
    batches: list[pl.DataFrame], ranges, weight="w", calls: dict | None = None
) -> pl.DataFrame:
    request = make_request("screen", batches[0].schema, "g", "s", "r", weight)
    samples = [steps.sample_scores(b, request, SAMPLE_SIZE) for b in batches]
    cuts = steps.cuts_from_sample(samples, ranges)
    parts = [steps.summarize_part(b, request, cuts) for b in batches]

    def below(threshold: float) -> int:
        return sum(count_below(b, weight, threshold) for b in batches)

    plan = steps.plan_screen(request, parts, cuts, below)
    split = [steps.split_part(b, request, plan.cuts) for b in batches]
    results = []
    for r in range(plan.ranges):
        rows = pl.concat([s[r] for s in split])
        results.append(steps.run_range(rows, steps.task_plan(plan, r), r) if rows.height else None)

    def map_batches(function):  # as an engine's: each batch's standardized rows, all ranges
        found = [[p for p in pieces if p.height] for pieces in split]
        return [function(pl.concat(f)) if f else None for f in found]

    def points(locating) -> list:  # as Spark's pass 3: the ranges holding a flagged cell
        outputs = []
        for r in sorted(locating.ranges) if locating is not None else ():
            rows = pl.concat([s[r] for s in split])
            cells = locating.for_range(r)
            outputs.append(steps.run_points(rows, steps.task_plan(plan, r), r, cells))
        return outputs

    if calls is None:
        stats, locating = finite.combine_ranges(plan, results, map_batches)
        return steps.finish_screen(plan, stats, locating, points(locating))

    def counted_points(locating) -> list:
        calls["points"] = calls.get("points", 0) + 1
        return points(locating)

    def sums_and_points(cut, superset) -> tuple[list, list]:  # one pass for both
        calls["superset"] = superset
        return map_batches(lambda rows: finite.sum_intervals(rows, cut)), points(superset)

    stats, locating, outputs = finite.combine_and_locate(
        plan, results, map_batches, counted_points, sums_and_points
    )
    return steps.finish_screen(plan, stats, locating, outputs)


def batches_of(df: pl.DataFrame, count: int) -> list[pl.DataFrame]:
    size = -(-df.height // count)
    return [df.slice(i * size, size) for i in range(count)]


@pytest.mark.parametrize("ranges", [1, 2, 7, 64])
@pytest.mark.parametrize("count", [1, 3])
@pytest.mark.slow
def test_loop_over_batches_matches_in_process(ranges, count):
    df = make_data(11)
    assert_same(screen_expected(df), run_screen(batches_of(df, count), ranges), ["g"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "ranges",
    [1, pytest.param(2, marks=pytest.mark.slow), 7, pytest.param(64, marks=pytest.mark.slow)],
)
def test_loop_locates_like_in_process(ranges):
    df = planted(1)
    expected = screen_expected(df)
    assert expected["share"].null_count() < expected.height - 2
    assert_same(expected, run_screen(batches_of(df, 3), ranges), ["g"])


@pytest.mark.parametrize("seed", [7, 8])
def test_sums_read_with_the_second_steps_give_the_same_bits(seed):
    # Spark reads the population's sums between the midpoints in the job of the
    # second steps, which steps every group that could be flagged (each group that
    # may be simulated at p = 0), before the simulated p-values decide: the
    # screen is the one of the separate passes, bit for bit, with no third pass.
    df = rare_groups(seed).with_columns(pl.col("r").cast(pl.Float64))
    batches = batches_of(df, 3)
    separate = run_screen(batches, 5)
    assert "simulated" in separate["p_method"].to_list()
    assert separate["share"].null_count() < separate.height
    calls: dict = {}
    assert run_screen(batches, 5, calls=calls).equals(separate)
    assert calls["superset"] is not None and "points" not in calls
    located = separate.filter(pl.col("share").is_not_null()).height
    assert calls["superset"].groups.height >= located


def test_weight_spread_is_judged_against_the_largest_weight_of_all_batches():
    """Per batch, 1 is not too small; against 1e200 in another batch it is (2 rows)."""
    df = make_data(3, rows=60).with_columns(pl.lit(1.0).alias("w"))
    df = df.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(1e-160).otherwise(pl.col("w")).alias("w")
    )
    big = df.head(1).with_columns(pl.lit(1e200).alias("w"))
    full = pl.concat([df, big])
    kind, message = expected_error(lambda: screen_expected(full))
    assert "has 60 value(s)" in message
    with pytest.raises(kind) as info:
        run_screen([df, big], 3)
    assert str(info.value) == message


def test_a_row_outside_its_range_is_refused():
    df = make_data(11)
    request = make_request("screen", df.schema, "g", "s", "r", "w")
    cuts = steps.cuts_from_sample([steps.sample_scores(df, request, SAMPLE_SIZE)], 4)
    plan = steps.plan_screen(request, [steps.summarize_part(df, request, cuts)], cuts, len)
    rows = steps.split_part(df, request, plan.cuts)
    with pytest.raises(CumdevError, match="routed to score range 0"):
        steps.run_range(pl.concat([rows[0], rows[1].head(1)]), plan, 0)


@pytest.mark.slow
def test_importing_the_package_imports_no_engine():
    code = (
        "import sys, polars_cumdev, polars_cumdev.spark, polars_cumdev.dask, "
        "polars_cumdev.engines.cluster.steps\n"
        "bad = [m for m in ('pyspark', 'dask', 'distributed', 'pandas', 'pyarrow') "
        "if m in sys.modules]\n"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(("module", "extra"), [("pyspark", "spark"), ("distributed", "dask")])
def test_a_missing_engine_names_the_extra(monkeypatch, module, extra):
    import polars_cumdev.dask as cdask
    import polars_cumdev.spark as cspark

    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    df = make_data(3, rows=50)
    call = cspark.screen if extra == "spark" else cdask.screen
    with pytest.raises(EngineMissingError, match=rf'pip install "polars-cumdev\[{extra}\]"'):
        call(df, "g", "s", "r")


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (0, 1),
        (5, 1),
        (100_000, 1),
        (100_001, 2),
        (10**6, 10),
        (10**7, 32),
        (128 * 10**6, 32),
        (10**9, 250),
    ],
)
def test_default_ranges_depend_on_the_rows_alone(rows, expected):
    """One range per 100,000 rows up to 32, then one per 4,000,000 rows; no slots involved."""
    assert steps.default_ranges(rows) == expected


@pytest.mark.parametrize(
    ("rows", "copies", "expected"),
    [
        (0, 16, 1),
        (200_000, 16, 2),  # 3.2e6 copies: one range each 100,000 rows shuffled
        (10**6, 16, 10),  # not 32: 1.6e7 copies, but 1e6 rows shuffled
        (10**7, 16, 40),  # 1.6e8 copies: one range per 4,000,000 of them
        (10**7, 1, 32),
    ],
)
def test_default_ranges_of_repeated_rows(rows, copies, expected):
    """Rows repeated in their range's task: the tasks counted by the rows shuffled, a range's
    size by the copies walked."""
    assert steps.default_ranges(rows, copies) == expected
