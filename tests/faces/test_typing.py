"""Typed users: ``polars_cumdev.cumdev(frame)`` and the functions, checked by mypy.

``df.cumdev`` is registered at run time, so type checkers cannot see it;
``cumdev(df)`` returns the same namespace with its type known. mypy runs in a
subprocess on a small snippet: the right uses pass (a DataFrame gives
DataFrames, a LazyFrame LazyFrames, for the namespace and for the
functions alike) and wrong ones are reported.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

import polars_cumdev as pc

ROOT = Path(__file__).resolve().parents[2]

RIGHT = """
import polars as pl

import polars_cumdev as pc

df = pl.DataFrame({"g": ["a", "b"] * 50, "s": [i / 100 for i in range(100)], "r": [0, 1] * 50})
ranked: pl.DataFrame = pc.cumdev(df).screen(by="g", score="s", response="r")
lazy: pl.LazyFrame = pc.cumdev(df.lazy()).screen(by=pl.col("g"), score="s", response="r")
calibrated: pl.DataFrame = pc.cumdev(df).calibration("s", "r", by="g")
top: pl.DataFrame = pc.screen(df, "g", "s", "r")
top_lazy: pl.LazyFrame = pc.screen(df.lazy(), "g", "s", "r")
reveal_type(pc.cumdev(df))
reveal_type(pc.cumdev(df.lazy()))
reveal_type(pc.curve(df.lazy(), pl.col("g") == "a", "s", "r"))
"""

WRONG = """
import polars as pl

import polars_cumdev as pc

df = pl.DataFrame({"g": ["a", "b"], "s": [0.1, 0.2], "r": [0, 1]})
lazy: pl.LazyFrame = pc.cumdev(df).screen(by="g", score="s", response="r")
pc.cumdev(df).screen(by="g", score=1.5, response="r")
pc.cumdev(df).scren(by="g", score="s", response="r")
eager: pl.DataFrame = pc.screen(df.lazy(), "g", "s", "r")
"""


def _mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(code), encoding="utf-8")
    env = dict(os.environ)
    env["MYPYPATH"] = str(ROOT)  # this checkout's package, whatever is installed
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",  # check the snippet, not the package's own code
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(snippet),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_cumdev_returns_the_namespace_of_its_frame() -> None:
    df = pl.DataFrame({"g": ["a", "b"] * 10, "s": [i / 20 for i in range(20)], "r": [0, 1] * 10})
    assert type(pc.cumdev(df)) is type(df.cumdev)
    assert type(pc.cumdev(df.lazy())) is type(df.lazy().cumdev)
    eager = pc.cumdev(df).screen(by="g", score="s", response="r")
    assert eager.equals(df.cumdev.screen(by="g", score="s", response="r"))
    with pytest.raises(pc.InvalidParameterError, match="DataFrame or LazyFrame"):
        pc.cumdev({"g": [1]})  # type: ignore[call-overload]


@pytest.mark.slow  # mypy reads polars' stubs: about half a minute of CPU
def test_mypy_sees_the_types(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    right = _mypy(tmp_path, RIGHT)
    assert right.returncode == 0, right.stdout + right.stderr
    revealed = re.findall(r'Revealed type is "([^"]+)"', right.stdout)
    assert revealed == [
        "polars_cumdev.namespace.CumdevFrame",
        "polars_cumdev.namespace.CumdevLazyFrame",
        "polars.lazyframe.frame.LazyFrame",
    ]
    wrong = _mypy(tmp_path, WRONG)
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    errors = {int(line.split(":")[1]) for line in wrong.stdout.splitlines() if ": error:" in line}
    assert errors == {7, 8, 9, 10}, wrong.stdout
    assert '"CumdevFrame" has no attribute "scren"' in wrong.stdout
