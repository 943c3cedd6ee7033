"""`cumdev` never overwrites its input, checks outputs first, and stops on a closed pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from read_only import read_only

import polars_cumdev
from polars_cumdev.cli import main
from polars_cumdev.datasets import census

ROOT = Path(polars_cumdev.__file__).resolve().parents[1]  # the copy under test
SCREEN = ["--by", "county", "--score", "log10_income", "--response", "has_internet"]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("outputs")
    census(n=5000).write_csv(folder / "data.csv")
    return folder


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("how", ["same path", "relative path", "symbolic link", "hard link"])
def test_output_that_is_the_input_is_refused(
    data: Path, tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "data.csv"
    source.write_bytes((data / "data.csv").read_bytes())
    before = source.read_bytes()
    output = {
        "same path": source,
        "relative path": Path(os.path.relpath(source)),
        "symbolic link": tmp_path / "link.csv",
        "hard link": tmp_path / "hard.csv",
    }[how]
    if how == "symbolic link":
        output.symlink_to(source)
    elif how == "hard link":
        os.link(source, output)
    code, err = _run(["screen", str(source), *SCREEN, "--output", str(output)], capsys)
    assert code == 2
    assert "is the input" in err and err.count("\n") == 1
    assert "screening" not in err  # refused before any work
    assert source.read_bytes() == before


def test_output_inside_an_input_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    census(n=2000).write_parquet(folder / "part-0.parquet")
    code, err = _run(
        ["curve", str(folder), "--score", "log10_income", "--response", "has_internet",
         "--subpop-column", "county", "--subpop-value", "Cedar", "--out",
         str(folder / "points.parquet")],
        capsys,
    )  # fmt: skip
    assert code == 2 and "is the input" in err
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet"]


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    """A directory nobody can write into (as root: immutable, or a read-only bind mount)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    with read_only([folder]):
        yield folder


@pytest.mark.parametrize("flag, name", [("--output", "table.csv"), ("--out", "chart.svg")])
def test_unwritable_directory_is_found_before_computing(
    data: Path, locked: Path, flag: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if flag == "--output":
        args = ["screen", str(data / "data.csv"), *SCREEN]
    else:
        args = ["curve", str(data / "data.csv"), *SCREEN[2:], "--subpop-column", "county",
                "--subpop-value", "Cedar"]  # fmt: skip
    code, err = _run([*args, flag, str(locked / name)], capsys)
    assert code == 2
    assert "not writable" in err and str(locked) in err
    assert "screening" not in err and "computing" not in err  # nothing was computed


def _child(args: list[str], **popen: object) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-m", "polars_cumdev.cli", *args],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        **popen,  # type: ignore[call-overload]
    )


@pytest.mark.slow
def test_a_reader_that_goes_away_gives_a_nonzero_exit_without_traceback(data: Path) -> None:
    process = _child(["screen", str(data / "data.csv"), *SCREEN], stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.close()  # like `| head` exiting before anything was printed
    err = process.stderr.read() if process.stderr else ""
    assert process.wait(timeout=300) == 141
    assert "broken pipe" in err and "Traceback" not in err and "Exception" not in err


@pytest.mark.slow
def test_closed_stdout_is_refused(data: Path) -> None:
    process = _child(
        ["screen", str(data / "data.csv"), *SCREEN],
        stdout=subprocess.DEVNULL,
        preexec_fn=lambda: os.close(1),
    )
    err = process.stderr.read() if process.stderr else ""
    assert process.wait(timeout=300) == 2
    assert "standard output is closed" in err and "Traceback" not in err
    assert "screening" not in err


def test_an_ordinary_output_still_works(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _run(
        ["screen", str(data / "data.csv"), *SCREEN, "--output", str(tmp_path / "t.csv")], capsys
    )
    assert code == 0
    assert pl.read_csv(tmp_path / "t.csv").height == 41
    assert not list(tmp_path.glob(".cumdev-*"))  # the writability probe is removed
