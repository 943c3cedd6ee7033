"""The compiled kernel on a read-only install, and with its cache files cut short.

Each case runs a fresh Python process on a copy of the package (so that the
copy's cache is the one exercised): a read-only copy with a read-only home
must fall back to a temporary cache with one line on stderr, and a cache whose
``.nbi`` and ``.nbc`` files were truncated must compile again instead of
failing every call. Both compile the kernel from scratch, hence ``slow``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import polars_cumdev

PACKAGE = Path(polars_cumdev.__file__).resolve().parent

CHILD = r"""
import sys
import numpy as np
import polars as pl
import polars_cumdev
from polars_cumdev.cli import main
from polars_cumdev.covariates import ranking

assert polars_cumdev.__file__.startswith(sys.argv[1]), polars_cumdev.__file__
rng = np.random.default_rng(5)
n = 600
frame = pl.DataFrame({
    "g": rng.choice(["a", "b", "c"], n),
    "s": rng.integers(0, 40, n) / 4.0,
    "r": rng.uniform(size=n),
    "w": rng.uniform(0.5, 2.0, n),
})
kernel = frame.cumdev.screen("g", "s", "r", "w", engine="kernel").sort("g")
plain = frame.cumdev.screen("g", "s", "r", "w", engine="polars").sort("g")
for name in ("kuiper", "ks", "sigma"):
    assert np.allclose(kernel[name], plain[name], rtol=1e-9, atol=0), name
ranking.COMPILED_ROWS = 1  # the compiled Hilbert index, on a small frame
compiled = frame.select(polars_cumdev.hilbert_index("s", "r").alias("h"))["h"]
ranking.COMPILED_ROWS = 10**18
numpy_way = frame.select(polars_cumdev.hilbert_index("s", "r").alias("h"))["h"]
assert compiled.equals(numpy_way)
frame.write_csv(sys.argv[2])
code = main(["screen", sys.argv[2], "--by", "g", "--score", "s", "--response", "r",
             "--engine", "kernel", "--rows", "0"])
assert code == 0, code
print("CHILD OK")
"""


def _copy_package(target: Path, *, with_cache: bool) -> Path:
    """A copy of the package under ``target`` (its ``__pycache__`` only if asked)."""
    ignore = None if with_cache else shutil.ignore_patterns("__pycache__")
    shutil.copytree(PACKAGE, target / "polars_cumdev", ignore=ignore)
    return target


def _run(root: Path, home: Path, data: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_"))}
    env.update(PYTHONPATH=str(root), HOME=str(home), PYTHONDONTWRITEBYTECODE="1", **extra)
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(data)],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _writable(folder: Path) -> bool:
    probe = folder / ".probe"
    try:
        probe.write_text("x")
    except OSError:
        return False
    probe.unlink()
    return True


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A copy of the package and a home directory, both read-only (immutable as root)."""
    root = _copy_package(tmp_path / "install", with_cache=False)
    home = tmp_path / "home"
    home.mkdir()
    folders = [root, home]
    as_root = os.geteuid() == 0
    if as_root:
        done = [
            subprocess.run(["chattr", "-R", "+i", str(f)], capture_output=True) for f in folders
        ]
        if any(r.returncode for r in done):
            pytest.skip("running as root without chattr: cannot make a directory read-only")
    else:
        for folder in folders:
            for path in [folder, *folder.rglob("*")]:
                path.chmod(path.stat().st_mode & ~0o222)
    try:
        if _writable(root / "polars_cumdev" / "kernel") or _writable(home):
            pytest.skip("this file system does not make the copy read-only")
        yield root, home
    finally:
        if as_root:
            for folder in folders:
                subprocess.run(["chattr", "-R", "-i", str(folder)], capture_output=True)
        else:
            for folder in folders:
                for path in [folder, *folder.rglob("*")]:
                    path.chmod(path.stat().st_mode | 0o200)


@pytest.mark.slow
def test_read_only_install_and_home_fall_back_to_a_temporary_cache(
    read_only: tuple[Path, Path], tmp_path: Path
) -> None:
    root, home = read_only
    done = _run(root, home, tmp_path / "data.csv")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "CHILD OK" in done.stdout
    assert "Traceback" not in done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("polars-cumdev:")]
    assert len(notes) == 1, done.stderr
    assert "read-only" in notes[0] and "NUMBA_CACHE_DIR" in notes[0]


@pytest.mark.slow
def test_truncated_cache_files_are_compiled_again(tmp_path: Path) -> None:
    root = _copy_package(tmp_path / "install", with_cache=False)
    cache = tmp_path / "numba-cache"
    first = _run(root, tmp_path, tmp_path / "data.csv", NUMBA_CACHE_DIR=str(cache))
    assert first.returncode == 0, first.stderr[-3000:]
    damaged = sorted([*cache.rglob("*.nbi"), *cache.rglob("*.nbc")])
    assert len(damaged) > 10, damaged
    for path in damaged:
        path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 3)])
    again = _run(root, tmp_path, tmp_path / "data.csv", NUMBA_CACHE_DIR=str(cache))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "CHILD OK" in again.stdout and "Traceback" not in again.stderr
    # the entries were written anew: a third process loads them whole
    repaired = {p: p.stat().st_size for p in damaged}
    assert all(size > 0 for size in repaired.values())
    third = _run(root, tmp_path, tmp_path / "data.csv", NUMBA_CACHE_DIR=str(cache))
    assert third.returncode == 0, third.stderr[-3000:]


def test_every_compiled_module_recovers_from_damaged_cache_files() -> None:
    # A kernel module left out of kernel/__init__'s tolerate_damage call would fail
    # on a cut-short cache file instead of compiling again.
    import importlib
    import pkgutil

    from numba.core import caching
    from numba.core.dispatcher import Dispatcher

    import polars_cumdev.kernel as kernel

    left_out = []
    for info in pkgutil.iter_modules(kernel.__path__):
        module = importlib.import_module(f"polars_cumdev.kernel.{info.name}")
        for name, value in vars(module).items():
            if not isinstance(value, Dispatcher) or value.__module__ != module.__name__:
                continue
            cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
            if type(cache_file) is caching.IndexDataCacheFile:  # not made tolerant
                left_out.append(f"{info.name}.{name}")
    assert not left_out
