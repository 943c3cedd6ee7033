"""docs/index.md shows what `cumdev demo` prints, and it fits a terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polars_cumdev.cli.main import main

INDEX = Path(__file__).resolve().parents[2] / "docs" / "index.md"


@pytest.mark.slow
def test_index_shows_the_demo_output(capsys: pytest.CaptureFixture[str]) -> None:
    text = INDEX.read_text(encoding="utf-8")
    shown = re.search(r"```text\n(Screening response 'has_internet'.*?)```", text, re.S)
    assert shown, "docs/index.md lost its demo output block"
    assert main(["demo"]) == 0
    printed = capsys.readouterr().out
    assert printed == shown.group(1)
    assert max(len(line) for line in printed.splitlines()) <= 100
    # Only the significant counties get a located stretch.
    assert printed.count("not significant") == 8


def test_examples_page_lists_every_example() -> None:
    root = INDEX.parents[1]
    page = (root / "docs" / "examples.md").read_text(encoding="utf-8")
    scripts = sorted(p.name for p in (root / "examples").glob("*.py"))
    assert scripts and all(f"| `{name}` |" in page for name in scripts), scripts
