"""docs/make_multicalibration_image.py draws the picture of the multicalibration page."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_multicalibration_picture_is_drawn_and_committed(tmp_path: Path) -> None:
    module = runpy.run_path(str(ROOT / "docs" / "make_multicalibration_image.py"))
    written = module["main"](tmp_path)
    assert [path.name for path in written] == ["multicalibration_funnel.svg"]
    assert written[0].read_text(encoding="utf-8").lstrip().startswith("<svg")
    page = (ROOT / "docs" / "workflows" / "multicalibration.md").read_text(encoding="utf-8")
    assert "../images/multicalibration_funnel.svg" in page
    assert (ROOT / "docs" / "images" / "multicalibration_funnel.svg").is_file()
