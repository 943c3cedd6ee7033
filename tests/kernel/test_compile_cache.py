"""The compiled kernel on a read-only install, and with its cache files cut short.

Each case runs a fresh Python process on a copy of the package (so that the
copy's cache is the one exercised): a read-only copy with a read-only home
must fall back to a temporary cache with one line on stderr (as root, the
child runs without capabilities, so that file modes bind it), and a cache whose
``.nbi`` and ``.nbc`` files were truncated must compile again instead of
failing every call. Both compile the kernel from scratch, hence ``slow``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import polars_cumdev

PACKAGE = Path(polars_cumdev.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]

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
    """A copy of the package under ``target`` (its caches, and the kernel a wheel
    ships compiled in ``kernel/_compiled``, only if asked)."""
    ignore = None if with_cache else shutil.ignore_patterns("__pycache__", "_compiled")
    shutil.copytree(PACKAGE, target / "polars_cumdev", ignore=ignore)
    return target


def _run(
    root: Path,
    home: Path,
    data: Path,
    *,
    child: str = CHILD,
    wrap: Sequence[str] = (),
    **extra: str,
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_"))}
    env.update(PYTHONPATH=str(root), HOME=str(home), PYTHONDONTWRITEBYTECODE="1", **extra)
    return subprocess.run(
        [*wrap, sys.executable, "-c", child, str(root), str(data)],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=900,
    )


# As root, file modes stop no one (CAP_DAC_OVERRIDE): the child runs without any
# capability, so the directories made read-only below are read-only to it too.
DROP = ("setpriv", "--inh-caps=-all", "--bounding-set=-all") if os.geteuid() == 0 else ()


def _writable(folder: Path) -> bool:
    """Whether a process run under ``DROP`` can create a file in ``folder``."""
    probe = folder / ".probe"
    done = subprocess.run(
        [*DROP, sys.executable, "-c", f"open({str(probe)!r}, 'w').close()"],
        capture_output=True,
    )
    if done.returncode == 0:
        probe.unlink()
        return True
    return False


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    """A copy of the package, a home and a cache directory, read-only to the child."""
    if DROP and shutil.which("setpriv") is None:
        pytest.fail("running as root without setpriv: cannot drop the capabilities")
    root = _copy_package(tmp_path / "install", with_cache=False)
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    folders = [root, home, cache]
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
    try:
        for folder in (root / "polars_cumdev" / "kernel", home, cache):
            assert not _writable(folder), f"{folder} stayed writable to the child"
        yield root, home, cache
    finally:
        for folder in folders:
            for path in [folder, *folder.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)


# One small compiled function: the fallback is decided when the kernel is imported.
SMALL = r"""
import sys
import numpy as np
import polars_cumdev
from polars_cumdev.kernel.prefix import response_facts

assert polars_cumdev.__file__.startswith(sys.argv[1]), polars_cumdev.__file__
assert response_facts(np.array([0.0, 1.0, 1.0])) == (True, 1.0)
assert response_facts(np.array([0.0, -2.5])) == (False, 2.5)
print("CHILD OK")
"""


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
def test_read_only_numba_cache_dir_falls_back_to_a_temporary_cache(
    read_only: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    # Issue 37 item 12: NUMBA_CACHE_DIR, the package and the home all unwritable
    # (an ordinary user on a system-wide install) made Numba refuse to define
    # the kernel's functions ("cannot cache function ...: no locator available").
    root, home, cache = read_only
    done = _run(root, home, tmp_path / "unused", child=SMALL, wrap=DROP, NUMBA_CACHE_DIR=str(cache))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "CHILD OK" in done.stdout
    assert "Traceback" not in done.stderr and "no locator" not in done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("polars-cumdev:")]
    assert len(notes) == 1, done.stderr
    assert "read-only" in notes[0] and f"NUMBA_CACHE_DIR ({cache})" in notes[0]
    assert not any(cache.iterdir())


@pytest.mark.slow
def test_read_only_install_and_home_fall_back_to_a_temporary_cache(
    read_only: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    root, home, _ = read_only
    data = tmp_path / "data"
    data.mkdir()  # the child writes its CSV here, outside the read-only folders
    done = _run(root, home, data / "data.csv", wrap=DROP)
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


# Issue 40 item 1: a first compilation is said once, only when Numba compiles.
ANNOUNCE = r"""
import sys
import numpy as np
from polars_cumdev.cli.main import _compilation_as_one_line
from polars_cumdev.kernel.prefix import response_facts, weight

if sys.argv[1] == "python":
    response_facts(np.array([0.0, 1.0]))
    weight(np.array([2.0]), True, 1.0, 0)  # another function compiles: no word
else:
    with _compilation_as_one_line():
        response_facts(np.array([0.0, 1.0]))
"""


def _announced(mode: str, cache: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    done = subprocess.run(
        [sys.executable, "-c", ANNOUNCE, mode],
        env={**env, "NUMBA_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and done.stdout == "", done.stderr[-3000:]
    return done.stderr.splitlines()


@pytest.mark.slow
def test_a_compilation_is_announced_once_and_a_cache_hit_not_at_all(tmp_path: Path) -> None:
    # Unconfigured logging: Python's last-resort handler prints the message on stderr.
    said = _announced("python", tmp_path / "cache")
    assert len(said) == 1 and said[0].startswith("compiling the compiled kernel once, about"), said
    assert _announced("python", tmp_path / "cache") == []  # loaded from the cache


@pytest.mark.slow
def test_the_command_line_says_a_compilation_in_one_line(tmp_path: Path) -> None:
    said = _announced("cli", tmp_path / "cache")
    assert len(said) == 1 and said[0].startswith("cumdev: compiling the compiled kernel once"), said


# A wheel's kernel compiled at build (warm_kernel.py, setup.py): loaded, never compiled.
SHIPPED_CHILD = r"""
import sys
import numpy as np
from numba.core import event
import polars_cumdev
from polars_cumdev.kernel.prefix import response_facts

assert polars_cumdev.__file__.startswith(sys.argv[1]), polars_cumdev.__file__
compiled = []


class Seen(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__module__)

    def on_end(self, ev):
        pass


event.register("numba:compile", Seen())
assert response_facts(np.array([0.0, 1.0, 1.0])) == (True, 1.0)
print("COMPILED", sorted({m for m in compiled if m.startswith("polars_cumdev")}))
"""


def _ship(package: Path) -> int:
    spec = importlib.util.spec_from_file_location("warm_kernel", REPO / "warm_kernel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ship(package)


@pytest.mark.slow
def test_the_kernel_compiled_at_build_is_loaded_from_any_cache_setting(tmp_path: Path) -> None:
    root = _copy_package(tmp_path / "install", with_cache=False)
    first = _run(root, tmp_path, tmp_path / "unused", child=SHIPPED_CHILD)  # in-tree cache
    assert first.returncode == 0 and "COMPILED ['polars_cumdev.kernel.prefix']" in first.stdout
    assert _ship(root / "polars_cumdev") >= 2  # as setup.py does after warm_kernel.py
    # an empty NUMBA_CACHE_DIR: the shipped files serve, nothing compiles, nothing is said
    cache = tmp_path / "empty"
    again = _run(
        root, tmp_path, tmp_path / "unused", child=SHIPPED_CHILD, NUMBA_CACHE_DIR=str(cache)
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "COMPILED []" in again.stdout and again.stderr == "", again.stderr
    # shipped files cut short: compiled again, said once, no traceback
    for path in (root / "polars_cumdev" / "kernel" / "_compiled").iterdir():
        path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 3)])
    damaged = _run(
        root,
        tmp_path,
        tmp_path / "unused",
        child=SHIPPED_CHILD,
        NUMBA_CACHE_DIR=str(tmp_path / "b"),
    )
    assert damaged.returncode == 0, damaged.stderr[-3000:]
    assert "COMPILED ['polars_cumdev.kernel.prefix']" in damaged.stdout
    assert damaged.stderr.startswith("compiling the compiled kernel once"), damaged.stderr


@pytest.mark.slow
def test_a_read_only_install_loads_the_kernel_compiled_at_build(
    read_only: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    root, home, cache = read_only
    for path in [root, *root.rglob("*")]:  # writable for a moment: fill kernel/_compiled
        path.chmod(path.stat().st_mode | 0o200)
    first = _run(root, tmp_path, tmp_path / "unused", child=SHIPPED_CHILD)
    assert first.returncode == 0 and _ship(root / "polars_cumdev") >= 2
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode & ~0o222)
    done = _run(
        root, home, tmp_path / "unused", child=SHIPPED_CHILD, wrap=DROP, NUMBA_CACHE_DIR=str(cache)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "COMPILED []" in done.stdout
    assert "Traceback" not in done.stderr and "compiling" not in done.stderr
