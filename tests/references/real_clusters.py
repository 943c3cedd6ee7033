"""Real clusters for the tests: a Spark standalone master and workers, a Dask scheduler and
workers, each a separate process on the loopback address, reached over the network as users
reach theirs.

The executables come from the Python running the tests, never from PATH: Dask's scheduler and
worker run as ``sys.executable -m distributed.cli.dask_scheduler`` (the same code as the
``dask scheduler`` command), Spark's master and worker as ``<pyspark>/bin/spark-class`` of the
installed ``pyspark`` package (``SPARK_HOME`` set to that package). A fresh CI venv
(``pip install ".[test]"``) has both; only Java comes from Debian (``.ci/run``).

Each process starts in a session (process group) of its own, so that :meth:`Processes.kill`
ends it with everything it spawned (a Spark worker's executor and its Python workers, a Dask
nanny's worker), and :meth:`Processes.close` (run by the context managers however the test
ends) kills every group left and waits for it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Processes", "dask_processes", "free_port", "spark_class", "spark_standalone"]

#: Seconds a process may take to say it is ready (a cold JVM on a loaded 2-core machine).
READY = 120.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Processes:
    """Processes started for one cluster, by name; each the leader of its own process group."""

    logs: Path
    started: dict[str, subprocess.Popen] = field(default_factory=dict)

    def start(self, name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen:
        out = open(self.logs / f"{name}.log", "wb")
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        out.close()
        self.started[name] = process
        return process

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_for(self, name: str, text: str, timeout: float = READY) -> None:
        """Wait until ``text`` appears in the log of ``name``; fail with the log's tail."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.log(name):
                return
            if self.started[name].poll() is not None:
                break
            time.sleep(0.2)
        tail = "\n".join(self.log(name).splitlines()[-30:])
        raise RuntimeError(
            f"{name} did not say {text!r} (exit {self.started[name].poll()}):\n{tail}"
        )

    def kill(self, name: str) -> None:
        """SIGKILL the process group of ``name`` (the process and all it spawned); reap it."""
        process = self.started[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def close(self) -> None:
        """Stop every process group: SIGTERM, then SIGKILL whatever is left after 10 s."""
        for process in self.started.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        end = time.monotonic() + 10
        for process in self.started.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, end - time.monotonic()))
            with contextlib.suppress(ProcessLookupError):  # the group, even if its leader died
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)


def _environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(POLARS_MAX_THREADS="1", PYSPARK_PYTHON=sys.executable, **extra)
    return env


@contextlib.contextmanager
def dask_processes(logs: Path, workers: int = 2) -> Iterator[tuple[str, Processes]]:
    """A Dask scheduler and ``workers`` workers (one thread each), as separate processes.

    Yields the scheduler's address (``tcp://127.0.0.1:PORT``) and the processes (named
    ``scheduler``, ``worker0``, ``worker1``...). Everything is killed on exit.
    """
    logs.mkdir(parents=True, exist_ok=True)
    procs = Processes(logs)
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = _environment()
    python = [sys.executable, "-m"]
    try:
        procs.start(
            "scheduler",
            [*python, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
             str(port), "--no-dashboard", "--no-show"],
            env,
        )  # fmt: skip
        procs.wait_for("scheduler", "Scheduler at:")
        for k in range(workers):
            procs.start(
                f"worker{k}",
                [*python, "distributed.cli.dask_worker", address, "--nthreads", "1",
                 "--nworkers", "1", "--memory-limit", "1GiB", "--no-dashboard", "--name",
                 f"worker{k}", "--local-directory", str(logs / f"worker{k}")],
                env,
            )  # fmt: skip
        for k in range(workers):
            procs.wait_for(f"worker{k}", "Registered to:")
        yield address, procs
    finally:
        procs.close()


def spark_class() -> tuple[Path, Path]:
    """``spark-class`` of the installed pyspark package, and that package (``SPARK_HOME``)."""
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    return home / "bin" / "spark-class", home


@contextlib.contextmanager
def spark_standalone(logs: Path, workers: int = 2) -> Iterator[tuple[str, Processes]]:
    """A Spark standalone master and ``workers`` workers (1 core, 1 GiB each), as processes.

    Yields the master URL (``spark://127.0.0.1:PORT``) and the processes (``master``,
    ``worker0``, ``worker1``...). Everything is killed on exit, executors included.
    """
    logs.mkdir(parents=True, exist_ok=True)
    procs = Processes(logs)
    script, home = spark_class()
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    env = _environment(
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_DAEMON_MEMORY="256m",
        SPARK_LOG_DIR=str(logs),
        SPARK_NO_DAEMONIZE="1",
    )
    try:
        procs.start(
            "master",
            [str(script), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(free_port())],
            env,
        )  # fmt: skip
        procs.wait_for("master", "I have been elected leader")
        for k in range(workers):
            procs.start(
                f"worker{k}",
                [str(script), "org.apache.spark.deploy.worker.Worker", url, "--host",
                 "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port",
                 str(free_port()), "--work-dir", str(logs / f"worker{k}")],
                env,
            )  # fmt: skip
        for k in range(workers):
            procs.wait_for(f"worker{k}", "Successfully registered with master")
        yield url, procs
    finally:
        procs.close()


def spark_session(url: str):
    """A SparkSession on the standalone master at ``url`` (two 1-core executors of 512 MiB)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master(url)
        .appName("polars-cumdev-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.executor.cores", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.executorEnv.POLARS_MAX_THREADS", "1")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session
