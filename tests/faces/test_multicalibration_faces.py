"""Faces of the multicalibration audit: the funnel chart, the sentences, the CLI command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.charts import funnel, save
from polars_cumdev.cli import main
from polars_cumdev.errors import CumdevError
from polars_cumdev.multicalibration import multicalibration
from polars_cumdev.multicalibration.words import sentences


def _planted(n: int = 12000, seed: int = 4) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.05, 0.95, n)
    a = rng.choice(["x", "y", "z"], n)
    b = rng.choice(["1", "2", "3"], n)
    p = np.where((a == "x") & (b == "2"), np.clip(s + 0.15, 0, 1), s)
    return pl.DataFrame(
        {"p": s, "y": (rng.random(n) < p).astype(np.int8), "a": a, "b": b, "c": rng.normal(size=n)}
    )


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    family = pc.segments(["a", "b"], ["c"])
    return multicalibration(_planted(), "p", "y", segments=family)


@pytest.mark.slow
def test_funnel_draws_every_defined_segment_and_the_critical_line(table, tmp_path: Path):
    chart = funnel(table)
    spec = chart.to_dict()
    points, rule = spec["layer"]
    values = spec["datasets"][points["data"]["name"]] if "datasets" in spec else None
    values = values or points["data"]["values"]
    assert len(values) == table["ecce_r_z"].drop_nulls().len()
    segment_names = {v["segment"] for v in values}
    assert "a = x & b = 2" in segment_names and "everyone" in segment_names
    line = spec["datasets"][rule["data"]["name"]] if "datasets" in spec else rule["data"]["values"]
    assert line[0]["critical"] == pytest.approx(table["critical_z"][0])
    save(chart, tmp_path / "funnel.svg")
    assert (tmp_path / "funnel.svg").read_text().startswith("<svg")


def test_funnel_refuses_other_frames():
    with pytest.raises(CumdevError):
        funnel(pl.DataFrame({"n": [1]}))


def test_sentences_state_findings_only_where_significant(table):
    lines = sentences(table, ["a", "b", "c"], top=3)
    assert lines[0].startswith("a = x & b = 2 (")
    assert "exceed the scores" in lines[0] and "stronger than its parents" in lines[0]
    assert "concentrated in a = x & b = 2" in lines[1]
    quiet = table.filter(pl.col("p_family") > 0.05).head(1)
    words = sentences(quiet, ["a", "b", "c"], top=1)[0]
    assert "not significant" in words and "exceed" not in words


@pytest.mark.slow
def test_cli_multicalibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "data.parquet"
    _planted().write_parquet(path)
    chart, saved = tmp_path / "f.json", tmp_path / "t.csv"
    code = main(
        [
            "multicalibration", str(path), "--score", "p", "--response", "y",
            "--categorical", "a,b", "--numerical", "c", "--out", str(chart),
            "--output", str(saved), "--rows", "5",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code in (0, None)
    assert "64 segments" in out and "critical z" in out and "mce" in out
    assert "a = x & b = 2 (" in out
    assert json.loads(chart.read_text())["layer"]
    assert pl.read_csv(saved).height == 64


def test_cli_multicalibration_missing_feature(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "data.parquet"
    _planted(200).write_parquet(path)
    code = main(
        ["multicalibration", str(path), "--score", "p", "--response", "y", "--categorical", "nope"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "nope" in err and "Traceback" not in err
