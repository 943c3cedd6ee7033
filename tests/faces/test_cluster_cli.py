"""``cumdev screen --engine``: in-process choices and the cluster engines in one option."""

from __future__ import annotations

import polars as pl
import pytest
from cluster_cases import make_data

from polars_cumdev.cli import main

ARGS = ["--by", "g", "--score", "s", "--response", "r", "--weight", "w"]


@pytest.fixture
def data(tmp_path):
    df = make_data(11)
    df.write_parquet(tmp_path / "data.parquet")
    df.write_csv(tmp_path / "data.csv")
    return tmp_path


def screened(data, capsys, *extra: str) -> pl.DataFrame:
    out = data / f"out{len(extra)}.csv"
    code = main(["screen", str(data / "data.parquet"), *ARGS, "-o", str(out), *extra])
    assert code == 0, capsys.readouterr().err
    return pl.read_csv(out).sort("g")


@pytest.mark.parametrize("engine", ["polars", "kernel"])
@pytest.mark.slow
def test_in_process_engines(data, capsys, engine):
    default = screened(data, capsys)
    chosen = screened(data, capsys, "--engine", engine)
    assert chosen["g"].to_list() == default["g"].to_list()
    assert chosen["kuiper_z"].to_list() == pytest.approx(default["kuiper_z"].to_list(), rel=1e-12)


def test_cluster_engines_read_parquet_only(data, capsys):
    code = main(["screen", str(data / "data.csv"), *ARGS, "--engine", "spark"])
    assert code == 2
    assert "--engine spark reads Parquet" in capsys.readouterr().err


def test_unknown_engine_is_refused(data, capsys):
    with pytest.raises(SystemExit):
        main(["screen", str(data / "data.parquet"), *ARGS, "--engine", "ray"])
    assert "invalid choice: 'ray'" in capsys.readouterr().err


@pytest.mark.slow
def test_dask_engine_matches_in_process(data, capsys):
    pytest.importorskip("distributed")
    default = screened(data, capsys)
    cluster = screened(data, capsys, "--engine", "dask", "--ranges", "5")
    assert cluster["g"].to_list() == default["g"].to_list()
    assert cluster["kuiper_z"].to_list() == pytest.approx(default["kuiper_z"].to_list(), rel=1e-12)
