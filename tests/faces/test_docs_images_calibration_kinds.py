"""docs/make_calibration_kinds_images.py draws the multiclass and quantile pictures."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["digits_top_label.svg", "digits_classes.svg", "diabetes_q90.svg"]


@pytest.mark.slow
def test_pictures_are_drawn_and_committed(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    module = runpy.run_path(str(ROOT / "docs" / "make_calibration_kinds_images.py"))
    written = module["main"](tmp_path)
    assert [path.name for path in written] == NAMES
    page = (ROOT / "docs" / "workflows" / "calibration.md").read_text(encoding="utf-8")
    for path in written:
        assert path.read_text(encoding="utf-8").lstrip().startswith("<svg")
        assert f"../images/{path.name}" in page
        assert (ROOT / "docs" / "images" / path.name).is_file()
