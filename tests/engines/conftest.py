"""Fixtures shared by the engine tests."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="module")
def spark():
    """A ``local[2]`` Spark session for the module, or a skip naming what is missing."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Spark needs Java (apt-get install openjdk-17-jre-headless)")
    import polars_cumdev.spark as cspark

    session = cspark.local_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def client():
    """A Dask client of a two-worker ``LocalCluster`` for the module, or a skip."""
    pytest.importorskip("dask.dataframe", reason="the dask extra is not installed")
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    import polars_cumdev.dask as cdask

    client = cdask.local_cluster(2)
    yield client
    cluster = client.cluster
    client.close()
    cluster.close()
