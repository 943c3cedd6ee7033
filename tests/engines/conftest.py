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
