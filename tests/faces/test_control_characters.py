"""Group keys holding control characters reach charts and reports without aborting.

XML 1.0 forbids most C0 control characters; vl-convert's renderer aborted the
whole process (a Rust panic, exit 134) on a label holding one. Every case runs
in a child process, so that an abort fails the test instead of ending pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev
from polars_cumdev.charts.export import xml_safe

ROOT = Path(polars_cumdev.__file__).resolve().parents[1]  # the copy under test
CONTROLS = [chr(code) for code in [*range(32), 127]]

API_CHILD = r"""
import sys
from pathlib import Path
import polars as pl
import polars_cumdev
from polars_cumdev import charts

out = Path(sys.argv[1])
frame = pl.read_parquet(out / "data.parquet")
table = frame.cumdev.screen("g", "s", "r", "w")
assert table.height == frame["g"].n_unique()
for suffix in (".svg", ".png", ".pdf", ".html"):
    charts.save(charts.screen(table, by=["g"]), out / f"screen{suffix}")
key = table["g"][0]
points = frame.cumdev.curve(pl.col("g") == key, "s", "r", "w")
charts.save(charts.cumulative(points, subject=f"g = {key}"), out / "curve.svg")
calibration = frame.cumdev.calibration("p", "r", "w", by="g")
assert calibration.height == table.height
frame.cumdev.report("g", "s", "r", "w", path=out / "report.html", top=40)
print("CHILD OK")
"""


def _frame() -> pl.DataFrame:
    """One group per control character (plus a plain one), each with 40 rows."""
    keys = [f"k{c}x" for c in CONTROLS] + ["plain"]
    rng = np.random.default_rng(3)
    n = 40 * len(keys)
    score = rng.uniform(size=n)
    return pl.DataFrame(
        {
            "g": np.repeat(keys, 40),
            "s": score,
            "p": score,
            "r": (rng.uniform(size=n) < score).astype(float),
            "w": rng.uniform(0.5, 2.0, n),
        }
    )


def _child(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_xml_safe_maps_each_forbidden_character_to_a_distinct_visible_one() -> None:
    mapped = [xml_safe(c) for c in CONTROLS]
    assert len(set(mapped)) == len(CONTROLS)
    for original, safe in zip(CONTROLS, mapped, strict=True):
        if original in "\t\n\r\x7f":
            assert safe == original  # legal in XML: kept
        else:
            assert safe == chr(0x2400 + ord(original))
    nested = xml_safe({"a\x00": ["b\x01", ("c\x1f", 3)], "n": None})
    assert nested == {"a\u2400": ["b\u2401", ["c\u241f", 3]], "n": None}


@pytest.mark.slow
def test_every_control_character_in_a_key_through_the_api(tmp_path: Path) -> None:
    _frame().write_parquet(tmp_path / "data.parquet")
    done = _child("-c", API_CHILD, str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "CHILD OK" in done.stdout
    svg = (tmp_path / "screen.svg").read_text(encoding="utf-8")
    assert "k\u2400x" in svg and "k\u241bx" in svg  # NUL and ESC, made visible
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "\x00" not in page and "\x01" not in page


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["calibration", "--score", "p", "--response", "r", "--weight", "w", "--by", "g"],
        ["paired", "--score", "s", "--first", "r", "--second", "p", "--by", "g"],
        ["report", "--score", "s", "--response", "r", "--by", "g", "--top", "40"],
    ],
    ids=["calibration", "paired", "report"],
)
def test_every_control_character_in_a_key_through_the_cli(
    tmp_path: Path, command: list[str]
) -> None:
    _frame().write_parquet(tmp_path / "data.parquet")
    out = "w.html" if command[0] == "report" else "w.svg"
    done = _child(
        "-m", "polars_cumdev.cli", command[0], "data.parquet", *command[1:], "--out", out,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    text = (tmp_path / out).read_text(encoding="utf-8")
    assert "\x00" not in text and "\x1b" not in text
