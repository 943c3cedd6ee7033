"""Directories and globs of Parquet files that do not agree: one check, one message, every engine.

Cases: a file whose score is another dtype (Float32, String), a file missing
the weight column, a file with an extra column (accepted: it is not used), a
file that is not Parquet, a path or glob that names nothing. The in-process
Parquet screen, the Dask engine and the command line (whose Spark engine runs
the same check before starting Spark) must give the same CumdevError, naming
the file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_cumdev.cli import main
from polars_cumdev.errors import CumdevError
from polars_cumdev.partitioned import screen_parquet


def _part(seed: int, n: int = 300) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "g": rng.choice(["a", "b", "c"], n),
            "s": rng.normal(size=n),
            "r": rng.uniform(size=n),
            "w": rng.uniform(0.5, 2.0, n),
        }
    )


def _write(folder: Path, case: str) -> tuple[str, str | None]:
    """The data set of ``case`` in ``folder``: (path to screen, words the error must hold)."""
    folder.mkdir()
    first = _part(1)
    if case == "string score first":
        first = first.with_columns(pl.col("s").cast(pl.String))
    first.write_parquet(folder / "a.parquet")
    odd = folder / "b.parquet"
    second = _part(2)
    if case == "string score first":
        second.write_parquet(odd)
        return str(folder), "column 's' is Float64 in"
    if case == "damaged data page":
        # The footer is sound; the bytes of the column chunks are not.
        second.write_parquet(odd, compression="uncompressed", statistics=False)
        data = bytearray(odd.read_bytes())
        for i in range(8, len(data) // 2):
            data[i] = (data[i] * 7 + 13) % 256
        odd.write_bytes(bytes(data))
        return str(folder), "cannot read"
    if case == "float32 score":
        second.with_columns(pl.col("s").cast(pl.Float32)).write_parquet(odd)
        return str(folder), "column 's' is Float32 in"
    if case == "string score":
        second.with_columns(pl.col("s").cast(pl.String)).write_parquet(odd)
        return str(folder), "column 's' is String in"
    if case == "missing weight":
        second.drop("w").write_parquet(odd)
        return str(folder), "['w'] not found in"
    if case == "extra column":
        second.with_columns(pl.lit(1).alias("extra")).write_parquet(odd)
        return str(folder), None
    if case == "corrupt file":
        odd.write_bytes(b"PAR1 this is not a parquet file")
        return str(folder), "not a readable Parquet file"
    if case == "no such path":
        return str(folder / "nothing.parquet"), "no such file"
    if case == "glob matching nothing":
        return str(folder / "*.pq"), "no file matches"
    raise AssertionError(case)


CASES = [
    "float32 score",
    "string score",
    "string score first",
    "damaged data page",
    "missing weight",
    "extra column",
    "corrupt file",
    "no such path",
    "glob matching nothing",
]


def _expected(folder: Path) -> pl.DataFrame:
    whole = pl.concat([_part(1), _part(2)])
    return whole.cumdev.screen("g", "s", "r", "w").sort("g")


def _check(
    screen: Callable[[str], pl.DataFrame], path: str, words: str | None, folder: Path
) -> None:
    if words is None:
        table = screen(path).sort("g")
        np.testing.assert_allclose(table["kuiper"], _expected(folder)["kuiper"], rtol=1e-9)
        return
    with pytest.raises(CumdevError) as caught:
        screen(path)
    message = str(caught.value)
    assert words in message, message
    if words.endswith(" in") or words == "cannot read":
        assert "b.parquet" in message, message


@pytest.mark.parametrize("case", CASES)
@pytest.mark.slow
def test_in_process(tmp_path: Path, case: str) -> None:
    path, words = _write(tmp_path / "data", case)
    _check(
        lambda p: screen_parquet(p, "g", "s", "r", "w", ranges=3), path, words, tmp_path / "data"
    )


@pytest.mark.parametrize("case", CASES)
def test_command_line_spark_path_checks_before_spark(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, words = _write(tmp_path / "data", case)
    if words is None or case == "damaged data page":
        return  # these need Spark itself (sound footers): see test_cluster_spark.py
    args = ["screen", path, "--by", "g", "--score", "s", "--response", "r", "--weight", "w"]
    code = main([*args, "--engine", "spark"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert words in err and err.count("cumdev: error") == 1 and "Traceback" not in err, err


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_dask(tmp_path: Path, case: str) -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    import polars_cumdev.dask as cdask

    client = cdask.local_cluster(1)
    try:
        path, words = _write(tmp_path / "data", case)
        _check(
            lambda p: cdask.screen(p, "g", "s", "r", "w", ranges=3, scheduler=client),
            path,
            words,
            tmp_path / "data",
        )
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
