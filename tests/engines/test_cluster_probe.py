"""Workers that cannot import polars_cumdev get a CumdevError saying how to fix it.

Real workers, no mocks:

- Spark: a session in a fresh process whose executors run a Python without
  the package. ``PYSPARK_PYTHON`` points to a two-line wrapper that starts
  this interpreter with ``-S`` (no site-packages: neither polars nor
  polars_cumdev can be imported; PySpark's own worker code comes from the
  PYTHONPATH that Spark gives its workers). This is the user's case of a
  session started without activating the venv.
- Dask: a LocalCluster whose worker process runs a ``preload`` script that
  takes ``polars_cumdev`` off the import system (a meta-path finder that
  raises ModuleNotFoundError for it), so that the worker's ``import
  polars_cumdev`` fails as it does where the package is not installed. (A
  worker on another interpreter does not work here: the package is
  installed in the very site-packages that Dask itself is imported from.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from polars_cumdev.datasets import census

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

BLOCKER = '''
import sys

class _NoCumdev:
    """Finds polars_cumdev nowhere, as on a worker where it is not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "polars_cumdev":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoCumdev())
for loaded in [m for m in sys.modules if m.split(".")[0] == "polars_cumdev"]:
    del sys.modules[loaded]
'''


def test_dask_workers_without_the_package(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    pytest.importorskip("pyarrow", reason="the dask extra is not installed")
    import distributed

    import polars_cumdev.dask as cdask
    from polars_cumdev.engines.cluster.probe import WorkersCannotImportError

    blocker = tmp_path / "no_cumdev.py"
    blocker.write_text(BLOCKER, encoding="utf-8")
    source = tmp_path / "households.parquet"
    census().write_parquet(source)
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        preload=[str(blocker)],
    )
    try:
        with distributed.Client(cluster) as client:
            # The worker really lacks the package (not a mock of the probe).
            def imports() -> str:
                try:
                    import polars_cumdev  # noqa: F401
                except ModuleNotFoundError as exc:
                    return str(exc)
                return "imported"

            assert "No module named 'polars_cumdev'" in next(iter(client.run(imports).values()))
            for call in (cdask.screen, cdask.calibration):
                kwargs = {"by": "county"} if call is cdask.calibration else {}
                args = (
                    ("log10_income", "has_internet", "WGTP")
                    if call is cdask.calibration
                    else ("county", "log10_income", "has_internet", "WGTP")
                )
                with pytest.raises(WorkersCannotImportError) as caught:
                    call(str(source), *args, scheduler=client, **kwargs)
                message = str(caught.value)
                assert "Dask workers cannot import polars_cumdev" in message
                assert "No module named 'polars_cumdev'" in message
                assert "Install polars-cumdev" in message
    finally:
        cluster.close()


SPARK_SCRIPT = """
import os, sys
import polars_cumdev.spark as cspark
from polars_cumdev import CumdevError
from polars_cumdev.datasets import census
from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("OFF")
sdf = spark.createDataFrame(census().head(300).to_arrow())
for call, args, kwargs in [
    (cspark.screen, ("county", "log10_income", "has_internet", "WGTP"), {}),
    (cspark.calibration, ("log10_income", "has_internet", "WGTP"), {"by": "county"}),
]:
    try:
        call(sdf, *args, **kwargs)
    except CumdevError as exc:
        print("CAUGHT", type(exc).__name__, exc)
    else:
        print("NO ERROR")
spark.stop()
"""


def test_spark_executors_without_the_package(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Spark needs Java (apt-get install openjdk-17-jre-headless)")
    bare = tmp_path / "bare-python"
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n', encoding="utf-8")
    bare.chmod(0o755)
    # The wrapped interpreter really cannot import the package.
    check = subprocess.run(
        [str(bare), "-c", "import polars_cumdev"], capture_output=True, text=True, timeout=60
    )
    assert check.returncode != 0 and "ModuleNotFoundError" in check.stderr
    script = tmp_path / "user_session.py"
    script.write_text(textwrap.dedent(SPARK_SCRIPT), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PYSPARK_PYTHON"] = str(bare)
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith(("CAUGHT", "NO "))]
    assert len(lines) == 2, result.stdout + result.stderr[-2000:]
    for line in lines:
        assert line.startswith("CAUGHT WorkersCannotImportError"), line
        assert "Spark executors cannot import polars_cumdev" in line
        assert sys.executable in line  # names the Python the executors ran (the wrapped one)
        assert "ModuleNotFoundError" in line
        for fix in ("PYSPARK_PYTHON", "spark.pyspark.python", "spark.archives"):
            assert fix in line
    assert "Py4JJavaError" not in result.stdout


class CommClosedError(OSError):
    """Named as distributed's: what ``client.run`` raises when a worker dies meanwhile."""


class _Flaky:
    """A stand-in for a ``distributed.Client`` whose first ``lost`` runs lose a worker."""

    def __init__(self, lost: int) -> None:
        self.lost, self.calls = lost, 0

    def scheduler_info(self) -> dict:
        return {"workers": {f"tcp://w{self.lost}-{id(self)}": {}}}

    def run(self, check):
        self.calls += 1
        if self.calls <= self.lost:
            raise CommClosedError("in <TCP (closed) ...>: Stream is closed")
        return {"tcp://w": check()}


def test_a_worker_lost_during_the_check_is_asked_again_then_named() -> None:
    from polars_cumdev.engines.cluster import probe
    from polars_cumdev.errors import CumdevError

    again = _Flaky(lost=1)
    probe.probe_dask(again)  # the workers alive then answer: no error
    assert again.calls == 2
    gone = _Flaky(lost=10)
    with pytest.raises(CumdevError, match="a Dask worker was lost") as caught:
        probe.probe_dask(gone)
    assert not isinstance(caught.value, probe.WorkersCannotImportError)
    assert gone.calls == probe._ATTEMPTS
