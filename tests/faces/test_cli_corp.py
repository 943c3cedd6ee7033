"""The command line: ``calibration --corp/--report/--band`` and ``curve --band``."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_cumdev  # noqa: F401
from polars_cumdev.cli import main
from polars_cumdev.datasets import calibration_oscillating, census

CALIBRATION = ["--score", "score", "--response", "response"]


@pytest.fixture(scope="module")
def predictions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli_corp") / "predictions.parquet"
    frame = calibration_oscillating(1500).with_columns(fold=pl.int_range(pl.len()) % 3)
    frame.write_parquet(path)
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_corp_prints_the_decomposition(predictions: Path, capsys) -> None:
    code, out, err = run(["calibration", str(predictions), *CALIBRATION, "--corp"], capsys)
    assert code == 0, err
    assert "MCB (miscalibration)" in out
    for name in ("brier", "mcb", "dsc", "unc", "blocks"):
        assert name in out
    want = pl.read_parquet(predictions).cumdev.corp("score", "response").row(0, named=True)
    assert f"{want['mcb']:.4f}" in out and f"{want['dsc']:.4f}" in out


@pytest.mark.slow
def test_corp_per_group_and_charts(predictions: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "worst.svg"
    args = ["calibration", str(predictions), *CALIBRATION, "--by", "fold", "--corp"]
    code, out, err = run([*args, "--out", str(target), "--band", "0.05"], capsys)
    assert code == 0, err
    table = out.split("MCB (miscalibration)")[1]
    assert table.count("│ 0 ") + table.count("│ 1 ") + table.count("│ 2 ") == 3
    assert target.read_text().lstrip().startswith("<svg")
    beside = tmp_path / "worst-corp.svg"
    assert beside.read_text().lstrip().startswith("<svg")
    assert "KS p" in target.read_text()  # the band's verdict is in the subtitle


def test_corp_data_output_is_the_corp_curve(predictions: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "corp.csv"
    args = ["calibration", str(predictions), *CALIBRATION, "--corp", "--resamples", "10"]
    code, _, err = run([*args, "--out", str(target)], capsys)
    assert code == 0, err
    written = pl.read_csv(target)
    assert {"score", "fitted", "lower", "upper"} <= set(written.columns)
    assert written["resamples"].unique().to_list() == [10]


@pytest.mark.slow  # the page itself is tested in test_calibration_report.py
def test_calibration_report(predictions: Path, tmp_path: Path, capsys) -> None:
    page = tmp_path / "calibration.html"
    args = ["calibration", str(predictions), *CALIBRATION, "--by", "fold", "--report", str(page)]
    code, _, err = run([*args, "--resamples", "20"], capsys)
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert "CORP reliability diagram" in text and "fold = 0" in text


@pytest.mark.parametrize(
    "extra", [["--band", "1.5"], ["--level", "0"], ["--resamples", "-1"], ["--report", "x.txt"]]
)
def test_bad_options(predictions: Path, extra: list[str], capsys) -> None:
    args = ["calibration", str(predictions), *CALIBRATION, *extra]
    try:
        code = main(args)
    except SystemExit as stop:  # argparse rejects the value
        code = stop.code
    assert code == 2


@pytest.mark.slow
def test_curve_band(tmp_path: Path, capsys) -> None:
    path = tmp_path / "households.parquet"
    census(n=5000).write_parquet(path)
    target = tmp_path / "cedar.svg"
    code, _, err = run(
        [
            "curve",
            str(path),
            "--subpop-column",
            "county",
            "--subpop-value",
            "Cedar",
            "--score",
            "log10_income",
            "--response",
            "has_internet",
            "--weight",
            "WGTP",
            "--band",
            "0.05",
            "--out",
            str(target),
        ],
        capsys,
    )
    assert code == 0, err
    assert "KS p" in target.read_text()
