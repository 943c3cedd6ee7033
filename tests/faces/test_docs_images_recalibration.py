"""docs/make_recalibration_image.py draws the picture of the recalibration page."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_recalibration_picture_is_drawn_and_committed(tmp_path: Path) -> None:
    module = runpy.run_path(str(ROOT / "docs" / "make_recalibration_image.py"))
    written = module["main"](tmp_path)
    assert [path.name for path in written] == ["recalibration_before_after.svg"]
    assert written[0].read_text(encoding="utf-8").lstrip().startswith("<svg")
    page = (ROOT / "docs" / "workflows" / "recalibration.md").read_text(encoding="utf-8")
    assert "../images/recalibration_before_after.svg" in page
    assert (ROOT / "docs" / "images" / "recalibration_before_after.svg").is_file()
