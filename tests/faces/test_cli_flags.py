"""One meaning per flag, no prefix matching, the subcommand's usage, and input named plainly.

``--out`` is a chart or report file, ``--output`` a table file, in every
subcommand; a prefix of a flag is not taken for the flag; errors in a
subcommand's arguments print that subcommand's usage; files whose content
does not match their name are refused in the user's terms.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from polars_cumdev.cli import main
from polars_cumdev.datasets import calibration_linear, census

DATA_ARGS = ["--score", "log10_income", "--response", "has_internet", "--weight", "WGTP"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli-flags")
    households = census(n=5_000)
    households.write_parquet(folder / "households.parquet")
    calibration_linear(1000).with_columns((pl.int_range(pl.len()) % 3).alias("fold")).write_parquet(
        folder / "predictions.parquet"
    )
    return folder


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exit:  # argparse's errors
        code = int(exit.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_screen_out_writes_the_overview_chart(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "ranked.svg"
    source = str(data_dir / "households.parquet")
    code, out, err = run(
        ["screen", source, "--by", "county", *DATA_ARGS, "--out", str(chart)], capsys
    )
    assert code == 0, err
    text = chart.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<svg") and "Marlow" in text
    assert "kuiper_z" in out


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["screen", "X", "--by", "county", *DATA_ARGS, "--outp", "t.csv"], "screen"),
        (["screen", "X", "--by", "county", "--sco", "log10_income", "--response", "r"], "screen"),
        (["calibration", "X", "--score", "s", "--response", "r", "--bogus", "1"], "calibration"),
        (["curve", "X", *DATA_ARGS, "--subpop-col", "county", "--subpop-value", "M"], "curve"),
        (["paired", "X", "--score", "s", "--first", "a", "--second", "b", "--outp", "x"], "paired"),
    ],
)
def test_no_prefix_matching_and_the_subcommands_usage(
    args: list[str], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(args, capsys)
    assert code == 2
    assert f"usage: cumdev {command}" in err, err
    assert "error:" in err


def test_calibration_writes_its_table_and_prints_q_values(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "calibration.csv"
    source = str(data_dir / "predictions.parquet")
    code, out, err = run(
        [
            *["calibration", source, "--score", "score", "--response", "response"],
            *["--by", "fold", "--output", str(table)],
        ],
        capsys,
    )
    assert code == 0, err
    assert "ecce_r_q" in out
    saved = pl.read_csv(table)
    assert saved.height == 3 and "ecce_r_q" in saved.columns
    expected = pl.read_parquet(source).cumdev.calibration("score", "response", by="fold")[
        "ecce_r_q"
    ]
    assert saved["ecce_r_q"].to_list() == pytest.approx(expected.to_list(), rel=1e-12)


def test_an_empty_csv_with_one_column_as_score_and_response(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n", encoding="utf-8")
    code, _, err = run(
        ["screen", str(empty), "--by", "b", "--score", "a", "--response", "a"], capsys
    )
    assert code == 2
    assert err.strip().splitlines()[-1] == f"cumdev: error: {empty} has no data rows"


def test_a_parquet_file_named_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wrong = tmp_path / "households.csv"
    census(n=200).write_parquet(wrong)
    code, _, err = run(["screen", str(wrong), "--by", "county", *DATA_ARGS], capsys)
    assert code == 2
    assert err.count("\n") == 1
    assert "is a Parquet file" in err and "rename it to households.parquet" in err
    assert "PAR1" not in err.split("(")[0]  # no binary garbage as column names


def test_a_txt_file_is_not_read_as_csv_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "households.txt"
    census(n=200).write_csv(text)
    code, _, err = run(["screen", str(text), "--by", "county", *DATA_ARGS], capsys)
    assert code == 2
    assert "unknown suffix '.txt'" in err and ".csv" in err


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["screen", "households.parquet", "--by", "county", *DATA_ARGS],
        ["calibration", "predictions.parquet", "--score", "score", "--response", "response"],
    ],
    ids=["screen", "calibration"],
)
def test_reading_and_wrote_follow_the_progress_switch(
    data_dir: Path, tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = data_dir / command[1]
    target = tmp_path / "table.csv"
    args = [command[0], str(path), *command[2:], "--output", str(target)]
    # stderr is not a terminal under pytest: quiet unless --progress asks
    for switch in ([], ["--no-progress"]):
        code, out, err = run([*args, *switch], capsys)
        assert code == 0 and target.is_file() and out
        assert err == "", err
    code, _, err = run([*args, "--progress"], capsys)
    assert code == 0
    lines = err.splitlines()
    assert any(line.endswith(f"] reading {path} ...") for line in lines), err
    assert any(line.endswith(f"] wrote {target}") for line in lines), err
    assert all(line.startswith("[cumdev ") for line in lines), err
