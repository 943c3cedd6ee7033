"""No subcommand overwrites its input (issue 37, item 6).

``cumdev multicalibration ... --output data.parquet`` used to overwrite its
own input and exit 0, its output path checked only after computing. The check
is now one, shared by every subcommand and run before any work: an output
(``--output``/``-o``, ``--out``, ``--report``, calibration's ``FILE-corp``
beside ``--out``) that is the input, by the same path, through ``..``, a
symbolic link or a hard link, is refused; so are two outputs naming one file.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_cumdev.cli import main

COLUMNS = ["--score", "p", "--response", "y"]
COMMANDS = {
    "screen": ["screen", "--by", "g", *COLUMNS],
    "curve": ["curve", *COLUMNS, "--subpop-column", "g", "--subpop-value", "a"],
    "report": ["report", "--by", "g", *COLUMNS],
    "calibration": ["calibration", *COLUMNS],
    "drift": ["calibration", *COLUMNS, "--by-time", "t", "--every", "1w"],
    "paired": ["paired", "--score", "p", "--first", "y", "--second", "y2"],
    "multicalibration": ["multicalibration", *COLUMNS, "--categorical", "g", "--depth", "1"],
}
# The flag that writes a file of the input's own suffix (report writes .html only).
FLAGS = {"report": "--out", "curve": "--out", "drift": "--out"}


def _data(folder: Path, suffix: str) -> Path:
    rng = np.random.default_rng(6)
    n = 400
    p = rng.uniform(size=n)
    frame = pl.DataFrame(
        {
            "p": p,
            "y": (rng.uniform(size=n) < p).astype(np.int64),
            "y2": (rng.uniform(size=n) < p).astype(np.int64),
            "g": rng.choice(["a", "b", "c"], size=n),
        }
    ).with_columns(t=pl.datetime(2026, 1, 1) + pl.duration(hours=pl.int_range(400) * 3))
    path = folder / f"data{suffix}"
    frame.write_parquet(path) if suffix == ".parquet" else frame.write_csv(path)
    return path


def _alias(source: Path, how: str) -> Path:
    folder = source.parent
    if how == "dot-dot":
        (folder / "sub").mkdir(exist_ok=True)
        return folder / "sub" / ".." / source.name
    alias = folder / f"alias{source.suffix}"
    if how == "symbolic link":
        alias.symlink_to(source)
    elif how == "hard link":
        os.link(source, alias)
    else:
        return source
    return alias


@pytest.mark.parametrize("how", ["same path", "dot-dot", "symbolic link", "hard link"])
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"report"}))  # .html only: below
def test_no_subcommand_writes_over_its_input(
    tmp_path: Path, command: str, suffix: str, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _data(tmp_path, suffix)
    before = source.read_bytes()
    flag = FLAGS.get(command, "--output")
    argv = [COMMANDS[command][0], str(source), *COMMANDS[command][1:]]
    code = main([*argv, flag, str(_alias(source, how))])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "is the input" in err and err.count("\n") == 1
    assert source.read_bytes() == before


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_html_input_is_spared_too(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report flags: an input read as CSV but named .html is not overwritten either."""
    source = _data(tmp_path, ".csv").rename(tmp_path / "data.html")
    before = source.read_bytes()
    flag = "--out" if command in ("report", "screen", "curve") else "--report"
    if command in ("paired", "drift"):
        flag = "--out"
    argv = [COMMANDS[command][0], str(source), *COMMANDS[command][1:]]
    code = main([*argv, flag, str(source)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert source.read_bytes() == before


def test_multicalibration_takes_dash_o_and_checks_it_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _data(tmp_path, ".parquet")
    argv = ["multicalibration", str(source), *COMMANDS["multicalibration"][1:]]
    assert main([*argv, "-o", str(tmp_path / "table.csv")]) == 0
    assert pl.read_csv(tmp_path / "table.csv").height > 1
    capsys.readouterr()
    assert main([*argv, "-o", str(source)]) == 2
    err = capsys.readouterr().err
    assert "is the input" in err and "auditing" not in err  # refused before any work


def test_two_outputs_naming_one_file_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _data(tmp_path, ".parquet")
    chart = tmp_path / "c.json"
    argv = ["multicalibration", str(source), *COMMANDS["multicalibration"][1:]]
    assert main([*argv, "--output", str(chart), "--out", str(chart)]) == 2
    assert "also the output" in capsys.readouterr().err
    assert not chart.exists()
