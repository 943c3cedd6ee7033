"""The cluster engines against clusters of separate processes reached over TCP (issue 39, item 4).

A Spark standalone master with two workers (``spark-class ...deploy.master.Master`` and
``...deploy.worker.Worker`` of the installed pyspark, 1 core and 1 GiB each) and a Dask
scheduler with two workers (``python -m distributed.cli.dask_scheduler`` /
``dask_worker tcp://127.0.0.1:PORT``, one thread each), started by
tests/references/real_clusters.py on 127.0.0.1 and killed after the module, however it
ends. Against them: screen, calibration(by=), calibration_drift and apply give the in-process
results; then one worker of each is killed (its whole process group: a lost machine) while a
screen runs, and the screen still gives the in-process result. Slow: starting a JVM cluster
takes about a minute on a loaded 2-core machine.
"""

from __future__ import annotations

import shutil
import threading
import time

import polars as pl
import pytest
from cluster_cases import (
    assert_drift_same,
    assert_frames_close,
    assert_same,
    assert_scores_same,
    calibration_expected,
    drift_data,
    drift_expected,
    fix_case,
    make_data,
    screen_expected,
)
from real_clusters import dask_processes, spark_session, spark_standalone

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    import distributed

    with dask_processes(tmp_path_factory.mktemp("dask")) as (address, procs):
        client = distributed.Client(address)
        try:
            client.wait_for_workers(2, timeout=120)
            yield client, procs
        finally:
            client.close()


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory):
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Spark needs Java (apt-get install openjdk-17-jre-headless)")
    with spark_standalone(tmp_path_factory.mktemp("spark")) as (url, procs):
        session = spark_session(url)
        try:
            yield session, procs
        finally:
            session.stop()


def to_dask(df: pl.DataFrame, parts: int = 4):
    import dask.dataframe as dd

    return dd.from_pandas(df.to_pandas(use_pyarrow_extension_array=True), npartitions=parts)


def test_dask_processes_screen_calibration_drift_apply(dask_cluster):
    import polars_cumdev.dask as cdask

    client, _ = dask_cluster
    assert len(client.scheduler_info()["workers"]) == 2
    df = make_data(21, rows=3000)
    actual = cdask.screen(to_dask(df), "g", "s", "r", "w", ranges=5, scheduler=client)
    assert_same(screen_expected(df), actual, ["g"])
    floats = df.with_columns(pl.col("r").cast(pl.Float64))
    actual = cdask.calibration(to_dask(floats), "s", "r", "w", by="g", scheduler=client)
    assert_frames_close(calibration_expected(floats, "g"), actual, ["g"])
    drifting = drift_data(6)
    actual = cdask.calibration_drift(
        to_dask(drifting), "score", "response", "w", time="ts", by="g", scheduler=client
    )
    assert_drift_same(drift_expected(drifting, by="g"), actual, ["g", "ts"])
    fix, rows = fix_case()
    scored = cdask.apply(to_dask(rows), fix, scheduler=client).compute()
    assert_scores_same(fix.apply(rows), pl.from_pandas(scored))


def test_spark_standalone_screen_calibration_drift_apply(spark_cluster):
    import polars_cumdev.spark as cspark

    spark, _ = spark_cluster
    assert spark.sparkContext.master.startswith("spark://127.0.0.1:")
    df = make_data(22, rows=3000)
    source = spark.createDataFrame(df.to_arrow()).repartition(4)
    assert_same(screen_expected(df), cspark.screen(source, "g", "s", "r", "w", ranges=5), ["g"])
    floats = df.with_columns(pl.col("r").cast(pl.Float64))
    actual = cspark.calibration(spark.createDataFrame(floats.to_arrow()), "s", "r", "w", by="g")
    assert_frames_close(calibration_expected(floats, "g"), actual, ["g"])
    drifting = drift_data(7)
    source = spark.createDataFrame(drifting.to_arrow()).repartition(3)
    actual = cspark.calibration_drift(source, "score", "response", "w", time="ts", by="g")
    assert_drift_same(drift_expected(drifting, by="g"), actual, ["g", "ts"])
    fix, rows = fix_case()
    scored = cspark.apply(spark.createDataFrame(rows.to_arrow()).repartition(3), fix)
    assert_scores_same(fix.apply(rows), pl.from_arrow(scored.toArrow()))


def test_dask_processes_multicalibration(dask_cluster):
    """One small audit (issue 39, item 1) against the scheduler and workers as processes."""
    from segment_cases import MIXED, assert_family_same, expected, mixed_features

    import polars_cumdev.dask as cdask

    client, _ = dask_cluster
    df = mixed_features(8, rows=1500)
    actual = cdask.multicalibration(to_dask(df), "s", "y", "w", segments=MIXED, scheduler=client)
    assert_family_same(expected(df, MIXED), actual)


def _kill_mid_run(run, kill, delay: float) -> object:
    """Run ``run()`` in a thread, call ``kill()`` after ``delay`` seconds; its result (or error)."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["table"] = run()
        except BaseException as exc:  # reported by the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    time.sleep(delay)
    assert thread.is_alive(), "the run ended before the kill: make the data slower"
    kill()
    thread.join(timeout=900)
    assert not thread.is_alive()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["table"]


# The kill tests run last in the module: each leaves its cluster with one worker.


def test_dask_worker_killed_mid_screen(dask_cluster):
    import polars_cumdev.dask as cdask

    client, procs = dask_cluster
    df = make_data(23, rows=4000)

    def slow(part):  # each partition takes a while, so that the kill lands mid-run
        time.sleep(0.5)
        return part

    source = to_dask(df, 16).map_partitions(slow)

    def run():
        return cdask.screen(source, "g", "s", "r", "w", scheduler=client)

    table = _kill_mid_run(run, lambda: procs.kill("worker0"), delay=3.0)
    assert_same(screen_expected(df), table, ["g"])
    assert len(client.scheduler_info()["workers"]) == 1  # the worker is really gone


def test_spark_worker_killed_mid_screen(spark_cluster):
    import polars_cumdev.spark as cspark

    spark, procs = spark_cluster
    df = make_data(24, rows=4000)

    def slow(batches):
        for batch in batches:
            time.sleep(0.5)
            yield batch

    data = spark.createDataFrame(df.to_arrow()).repartition(16)
    source = data.mapInArrow(slow, data.schema)

    def run():
        return cspark.screen(source, "g", "s", "r", "w")

    table = _kill_mid_run(run, lambda: procs.kill("worker0"), delay=8.0)
    assert_same(screen_expected(df), table, ["g"])
