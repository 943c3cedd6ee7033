"""The documentation site builds with ``mkdocs build --strict``, and its Python runs.

The build needs the documentation tools (mkdocs, mkdocs-material and
mkdocstrings[python]); without them the build test is skipped with that
reason. The Python blocks of every page (except the API reference) run as one
script file per page (``python page.py`` in a fresh process, as a user
pastes it), in a temporary directory; a block right after an
``<!-- no-test -->`` line is left out.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(<!-- no-test -->\n)?```python[^\n]*\n(.*?)^```", re.M | re.S)
PAGES = sorted(
    p.relative_to(DOCS).as_posix()
    for p in DOCS.rglob("*.md")
    if "api" not in p.relative_to(DOCS).parts
)
TOOLS = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _missing_tools() -> list[str]:
    missing = []
    for name in TOOLS:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


def test_every_page_is_in_the_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert page.relative_to(DOCS).as_posix() in config, f"{page} is not in mkdocs.yml's nav"


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    missing = _missing_tools()
    if missing:
        pytest.skip(
            "documentation tools not installed (missing: "
            + ", ".join(missing)
            + "); pip install mkdocs-material 'mkdocstrings[python]'"
        )
    site = tmp_path / "site"
    env = _env()
    env["NO_MKDOCS_2_WARNING"] = "1"  # a notice from mkdocs-material on every build
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert (site / "index.html").is_file()
    assert (site / "method" / "index.html").is_file()
    api = (site / "api" / "subpopulation" / "index.html").read_text(encoding="utf-8")
    assert "screen" in api and "curve" in api
    # The namespace page lists every public method of ``frame.cumdev``.
    from polars_cumdev.namespace import CumdevNamespace

    page = (site / "api" / "namespace" / "index.html").read_text(encoding="utf-8")
    methods = [m for m in dir(CumdevNamespace) if not m.startswith("_")]  # with the mixins
    assert len(methods) >= 10
    for method in methods:
        assert f'id="polars_cumdev.namespace.CumdevNamespace.{method}"' in page, method
    # Offline: the built pages load no fonts or scripts from other hosts.
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in index
    assert not re.search(r"<script[^>]+src=\"https?://", index)


@pytest.mark.slow  # each page's code in a fresh interpreter: 20 s in all
@pytest.mark.parametrize(
    "page", [p for p in PAGES if FENCE.search((DOCS / p).read_text(encoding="utf-8"))]
)
def test_page_code_runs(page: str, tmp_path: Path) -> None:
    blocks = [
        body for skip, body in FENCE.findall((DOCS / page).read_text(encoding="utf-8")) if not skip
    ]
    # Written to a file and run as ``python page.py``, the way a user pastes it:
    # unlike ``python -c``, a script file is re-imported by the worker processes
    # that multiprocessing spawns (Dask's LocalCluster), so a missing
    # ``if __name__ == "__main__":`` guard fails here as it fails for the user.
    script = tmp_path / (Path(page).stem + ".py")
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{page}:\n{result.stderr[-3000:]}"
