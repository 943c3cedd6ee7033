"""The README's commands and Python quick start run as written.

Every fenced ``bash`` block is split into commands (on new lines and ``&&``);
``cumdev ...`` and ``python ...`` commands are run in a temporary directory
that holds the data files the README names. ``pip install`` commands are
skipped unless CUMDEV_TEST_README_INSTALL=1 (CI installs the package itself),
``python -m pytest`` is never run from inside the test suite, and
``mkdocs`` commands are left to tests/faces/test_docs.py.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from polars_cumdev.datasets import census

ROOT = Path(__file__).resolve().parents[2]
# CUMDEV_TEST_README checks another copy (e.g. a proposed edit) with the same rules.
README = Path(os.environ.get("CUMDEV_TEST_README", ROOT / "README.md"))
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)


def _blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [body for lang, body in FENCE.findall(text) if lang == language]


def _commands() -> list[str]:
    commands = []
    for block in _blocks("bash"):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            commands += [part.strip() for part in line.split("&&") if part.strip()]
    return commands


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _argv(command: str) -> list[str] | None:
    """The argv to run for a README command, or None when it is skipped here."""
    words = shlex.split(command)
    if words[0] == "python":
        words[0] = sys.executable
    if "pip" in words[:3] and "install" in words:
        if os.environ.get("CUMDEV_TEST_README_INSTALL") != "1":
            return None
        return [*words[:-1], str(ROOT) if words[-1] == "." else words[-1]]
    if "pytest" in words[:3]:
        return None  # the suite itself: not recursively
    if "mkdocs" in words[:3]:
        return None  # the documentation build: tests/faces/test_docs.py runs it
    if words[0] == "cumdev":
        script = Path(sys.executable).with_name("cumdev")
        launcher = [str(script)] if script.exists() else [sys.executable, "-m", "polars_cumdev.cli"]
        return [*launcher, *words[1:]]
    if words[0] == sys.executable:
        return words
    return None


COMMANDS = _commands()


def test_readme_has_commands_and_a_quick_start() -> None:
    assert any(c.startswith("cumdev demo") for c in COMMANDS)
    assert any(c.startswith("cumdev screen") for c in COMMANDS)
    assert _blocks("python"), "the README lost its Python quick start"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory holding every data file the README's commands read."""
    folder = tmp_path_factory.mktemp("readme")
    households = census()
    for command in COMMANDS:
        for word in shlex.split(command):
            if word.endswith(".parquet") and not (folder / word).exists():
                households.write_parquet(folder / word)
            elif word.endswith(".csv") and not (folder / word).exists():
                households.write_csv(folder / word)
    return folder


@pytest.mark.slow  # each command in a fresh process, some render a whole report
@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command(command: str, workdir: Path) -> None:
    argv = _argv(command)
    if argv is None:
        pytest.skip(f"not run from the test suite: {command}")
    result = subprocess.run(
        argv, cwd=workdir, env=_env(), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{command}\n{result.stderr[-2000:]}"
    if command.startswith("cumdev demo") or command.startswith("cumdev screen"):
        assert "Marlow" in result.stdout


@pytest.mark.slow  # in a fresh interpreter
@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_block(index: int, workdir: Path) -> None:
    # As a script file (``python quick_start.py``), the way a user pastes it: worker
    # processes spawned by multiprocessing re-import a script file, not ``-c`` code.
    script = workdir / f"readme_block_{index}.py"
    script.write_text(_blocks("python")[index], encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=workdir,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()


@pytest.mark.slow
def test_quick_start_drills_into_the_top_county() -> None:
    """The county the quick start drills into is the one its screen ranks first."""
    import polars_cumdev  # noqa: F401  (registers the namespace)

    code = _blocks("python")[0]
    chosen = re.findall(r'pl\.col\("county"\) == "([^"]+)"', code)
    ranked = census().cumdev.screen(
        by="county", score="log10_income", response="has_internet", weight="WGTP"
    )
    top = ranked.get_column("county")[0]
    assert chosen == [top]
    assert f"first: {top}" in code
    commands = " ".join(COMMANDS)
    assert f"--subpop-value {top}" in commands
