"""Every script in examples/ runs, exits 0, and writes what it says, into a temp dir only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# script -> files it must write into the output directory
EXPECTED = {
    "screen_lazy.py": ["households.parquet", "flagged_counties.csv"],
    "drill_down.py": ["curve.svg", "zoom.svg"],
    "export_report.py": ["cedar.vl.json", "cedar.html", "report.html"],
    "compare_groups.py": ["compare.svg"],
    "calibration_audit.py": ["calibration_worst_county.svg", "recalibrated.parquet"],
    "controlling_for_age.py": ["hilbert.svg", "covariate_map.svg"],
}


def _run(script: str, out: Path, *, via: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    args = [sys.executable, str(EXAMPLES / script)]
    if via == "argv":
        args.append(str(out))
    else:
        env["CUMDEV_EXAMPLES_OUT"] = str(out)
    # Run from an empty working directory: nothing may be written outside `out`.
    cwd = out.parent / f"cwd-{script}"
    cwd.mkdir()
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert list(cwd.iterdir()) == [], f"{script} wrote into its working directory"
    return result


def test_every_script_is_listed() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.slow  # each script in a fresh interpreter
@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_example_runs(script: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    via = "env" if script == "screen_lazy.py" else "argv"
    result = _run(script, out, via=via)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    for name in EXPECTED[script]:
        target = out / name
        assert target.is_file() and target.stat().st_size > 0, f"{script} did not write {name}"
        if name.endswith(".svg"):
            assert target.read_text().lstrip().startswith("<svg")
    assert result.stdout.strip(), "examples explain what they found"
