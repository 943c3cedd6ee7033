"""Importing the package, and building a lazy query, must stay light (issue 12, item 8).

Each check runs in a fresh interpreter: the test process itself has long
since imported SciPy, Altair and the rest. The child imports the same copy of
the package as this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import polars_cumdev

HEAVY = (
    "scipy",
    "altair",
    "vl_convert",
    "pyspark",
    "dask",
    "numba",
    "sklearn",
    "pandas",
    "pyarrow",
)
PACKAGE_ROOT = Path(polars_cumdev.__file__).resolve().parent.parent

PRELUDE = """
import json, sys
heavy = {heavy!r}
def loaded():
    return [name for name in heavy if name in sys.modules]
stages = {{}}
import polars as pl
import polars_cumdev
stages["import"] = loaded()
stages["file"] = [polars_cumdev.__file__]
"""


def run_fresh(body: str) -> dict[str, list[str]]:
    """Run the prelude and ``body`` in a new interpreter; return its ``stages``."""
    code = PRELUDE.format(heavy=HEAVY) + body + "\nprint(json.dumps(stages))\n"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PACKAGE_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_import_and_lazy_queries_load_no_heavy_module():
    stages = run_fresh(
        """
frame = pl.LazyFrame(
    {"g": ["a", "b", None] * 4, "s": [1.0, 2.0, 3.0, 4.0] * 3, "r": [0, 1, 1] * 4}
)
frame.cumdev.screen(by="g", score="s", response="r")
stages["screen"] = loaded()
frame.cumdev.curve(subpop=pl.col("g") == "a", score="s", response="r")
stages["curve"] = loaded()
frame.cumdev.calibration(score="s", response="r", by="g")
stages["calibration"] = loaded()
frame.cumdev.calibration(score="s", response="r", by=pl.col("g").str.to_uppercase())
stages["by expression"] = loaded()
"""
    )
    assert Path(stages.pop("file")[0]).resolve() == Path(polars_cumdev.__file__).resolve()
    assert stages == {
        "import": [],
        "screen": [],
        "curve": [],
        "calibration": [],
        "by expression": [],
    }


@pytest.mark.slow
def test_a_computed_small_screen_loads_neither_scipy_nor_numba():
    # Issue 22: a fresh process's first small screen pays for neither import
    # (the p-values' normal tail is Polars' erfc; "auto" keeps small frames on
    # the Polars plan). The deviation planted in group "b" puts its p-value in
    # the tail series (z well above the crossovers).
    stages = run_fresh(
        """
n = 4000
frame = pl.DataFrame(
    {
        "g": ["a", "b"] * (n // 2),
        "s": [i / n for i in range(n)],
        "r": [int(i % 2 == 1 or i % 3 == 0) for i in range(n)],
    }
)
result = frame.cumdev.screen(by="g", score="s", response="r")
stages["z"] = [str(result["kuiper_z"].max() > 5.0)]
stages["screen"] = loaded()
"""
    )
    assert stages["import"] == []
    assert stages["z"] == ["True"]
    assert stages["screen"] == []


@pytest.mark.slow
def test_a_critical_value_does_load_scipy():
    # The checks above can fail: a critical value needs SciPy's root finder.
    stages = run_fresh(
        """
from polars_cumdev.method.pvalues import kuiper_critical
assert 3.0 < kuiper_critical(1e-4) < 6.0
stages["critical"] = loaded()
"""
    )
    assert stages["import"] == []
    assert "scipy" in stages["critical"]
