"""Faults in a real cluster: the screen survives them with the in-process numbers.

* Dask: one of two worker processes of a ``LocalCluster`` is killed while the
  screen runs; its nanny restarts it, the lost tasks run again, and the
  result equals the in-process screen.
* Spark: a task fails on its first attempt (a marker file says whether it
  has failed before); the session of ``local_session`` retries it
  (``local[N]`` runs as ``local[N,4]``), and the result equals the in-process
  screen.

Both start a real cluster, hence ``slow``.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from cluster_cases import assert_same, make_data, screen_expected

pytestmark = pytest.mark.slow


def test_dask_screen_survives_a_killed_worker(tmp_path: Path) -> None:
    dd = pytest.importorskip("dask.dataframe", reason="the dask extra is not installed")
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    import polars_cumdev.dask as cdask

    df = make_data(17, rows=4000)
    expected = screen_expected(df)
    pandas = df.to_pandas(use_pyarrow_extension_array=True)

    def slow_copy(part):  # each partition takes a while: the kill lands mid-screen
        time.sleep(0.5)
        return part

    source = dd.from_pandas(pandas, npartitions=16).map_partitions(slow_copy)
    client = cdask.local_cluster(2)
    try:
        before = client.run(os.getpid)
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                outcome["table"] = cdask.screen(source, "g", "s", "r", "w", scheduler=client)
            except BaseException as exc:  # reported below
                outcome["error"] = exc

        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(2.0)
        assert worker.is_alive(), "the screen ended before the kill: make the data slower"
        victim = sorted(before.values())[0]
        os.kill(victim, signal.SIGKILL)
        worker.join(timeout=600)
        assert not worker.is_alive()
        assert "error" not in outcome, outcome.get("error")
        after = client.run(os.getpid)
        assert victim not in after.values()  # the worker really died (and was replaced)
        table = outcome["table"]
        assert isinstance(table, pl.DataFrame)
        assert_same(expected, table, ["g"])
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()


def test_spark_task_that_fails_once_is_retried(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Spark needs Java")
    from pyspark.sql import SparkSession

    import polars_cumdev.spark as cspark

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    df = make_data(19, rows=2000)
    expected = screen_expected(df)
    marker = str(tmp_path / "failed-once")

    def fail_once(batches):  # the first attempt of the first task to run raises
        if not os.path.exists(marker):
            with open(marker, "w") as handle:
                handle.write(str(os.getpid()))
            raise RuntimeError("a transient worker error (injected once)")
        yield from batches

    spark = cspark.local_session("local[2]")
    spark.sparkContext.setLogLevel("OFF")
    try:
        assert spark.sparkContext.master == "local[2,4]"
        data = spark.createDataFrame(df.to_arrow()).repartition(4)
        flaky = data.mapInArrow(fail_once, data.schema)
        table = cspark.screen(flaky, "g", "s", "r", "w")
        assert os.path.exists(marker)  # the fault did happen
        assert_same(expected, table, ["g"])
    finally:
        spark.stop()
