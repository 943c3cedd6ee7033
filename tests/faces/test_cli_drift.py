"""``cumdev calibration --by-time ts --every 1w`` (issue 24, item 4): drift from a file."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from polars_cumdev.cli import main
from polars_cumdev.datasets import weekly_predictions

BASE = ["--score", "score", "--response", "response", "--by-time", "ts"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("drift")
    drifted, calm = weekly_predictions(seed=0), weekly_predictions(drift_week=None, seed=0)
    paths = {
        "csv": folder / "weekly.csv",
        "parquet": folder / "weekly.parquet",
        "calm": folder / "calm.parquet",
    }
    drifted.write_csv(paths["csv"])
    drifted.write_parquet(paths["parquet"])
    calm.write_parquet(paths["calm"])
    return paths


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.slow
def test_the_planted_week_is_named_and_charted(
    kind: str, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "drift.json"
    code, out, err = run(
        ["calibration", str(files[kind]), *BASE, "--every", "1w", "--out", str(target)], capsys
    )
    assert code == 0, err
    assert "miscalibrated at the family-wise level 0.05 (Holm, 12 windows): 2024-02-26\n" in out
    spec = json.loads(target.read_text())
    names = {layer.get("name") for layer in spec["layer"]}
    assert {"critical_line", "windows", "flagged_names", "holm_thresholds"} <= names
    assert "2024-02-26" in json.dumps(spec["title"])


@pytest.mark.slow
def test_no_drift_no_window_and_the_table_written(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "windows.csv"
    args = ["calibration", str(files["calm"]), *BASE, "--adjustment", "bonferroni"]
    code, out, err = run([*args, "--out", str(target)], capsys)
    assert code == 0, err
    assert "no window miscalibrated at the family-wise level 0.05 (Bonferroni, 12 windows)" in out
    table = pl.read_csv(target)
    assert table.height == 12 and not table["flagged"].any()
    code, out, err = run([*args, "--period", "4w", "--out", str(target)], capsys)
    assert code == 0, err
    assert "(Bonferroni, 9 windows)" in out  # the complete 4-week windows of 12 weeks
    assert pl.read_csv(target)["n"].to_list() == [8000] * 9


def test_mistakes_get_one_line(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(files["parquet"])
    code, _, err = run(["calibration", path, *BASE, "--every", "weekly"], capsys)
    assert code == 2 and "`every` must be a Polars duration" in err
    code, _, err = run(
        ["calibration", path, "--score", "score", "--response", "response", "--by-time", "score"],
        capsys,
    )
    assert code == 2 and "--by-time column 'score' has dtype Float64" in err
    code, _, err = run(
        ["calibration", path, "--score", "score", "--response", "response", "--by-time", "when"],
        capsys,
    )
    assert code == 2 and "--by-time column 'when' not found" in err
    code, _, err = run(["calibration", path, *BASE, "--corp"], capsys)
    assert code == 2 and "cannot be combined" in err


def test_unparsable_text_dates_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.csv"
    weekly_predictions(weeks=2, per_week=50, drift_week=None).with_columns(
        pl.when(pl.int_range(pl.len()) < 3)
        .then(pl.lit("yesterday"))
        .otherwise(pl.col("ts").cast(pl.String))
        .alias("ts")
    ).write_csv(path)
    code, _, err = run(["calibration", str(path), *BASE], capsys)
    assert code == 2 and "3 value(s) that do not parse as dates" in err
