"""docs/make_images.py draws every picture the README and the docs show."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_make_images_draws_every_picture_the_readme_shows(tmp_path: Path) -> None:
    module = runpy.run_path(str(ROOT / "docs" / "make_images.py"))
    written = module["main"](tmp_path)
    names = {path.name for path in written}
    shown = set(re.findall(r"docs/images/([\w.]+\.svg)", (ROOT / "README.md").read_text()))
    assert shown and shown <= names
    for path in written:
        assert path.read_text(encoding="utf-8").lstrip().startswith("<svg")
        assert (ROOT / "docs" / "images" / path.name).is_file(), f"{path.name} is not committed"
