"""Directories this process cannot write, as root in a container too (issue 37, item 14).

An ordinary user gets them by removing the write bits. Root ignores file
modes (CAP_DAC_OVERRIDE), so as root each directory is made immutable with
``chattr +i`` where the file system supports it, or else bind-mounted onto
itself and remounted read-only (``mount --bind`` then ``mount -o
remount,ro,bind``), which works in a container with CAP_SYS_ADMIN on any
file system (overlayfs included). Only when neither works does the test skip,
and under ``CI=true`` the suite's conftest turns that skip into a failure.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

__all__ = ["METHODS", "read_only", "writable"]

#: How root makes a directory read-only, in the order tried.
METHODS = ("chattr", "bind mount")


def writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (created and removed again)."""
    try:
        handle, probe = tempfile.mkstemp(dir=folder)
    except OSError:
        return False
    os.close(handle)
    os.unlink(probe)
    return True


def _run(*argv: str) -> bool:
    return subprocess.run(list(argv), capture_output=True, check=False).returncode == 0


def _lock(folder: Path, method: str) -> bool:
    if method == "chattr":
        return _run("chattr", "-R", "+i", str(folder))
    if not _run("mount", "--bind", str(folder), str(folder)):
        return False
    if _run("mount", "-o", "remount,ro,bind", str(folder)):
        return True
    _run("umount", str(folder))
    return False


def _unlock(folder: Path, method: str) -> None:
    if method == "chattr":
        _run("chattr", "-R", "-i", str(folder))
    else:
        _run("umount", str(folder))


@contextlib.contextmanager
def read_only(folders: Sequence[Path], methods: Sequence[str] = METHODS) -> Iterator[str]:
    """Within the block nothing can be written under ``folders``; yields the method used.

    The method is ``"chmod"`` for an ordinary user, else the first of
    ``methods`` that works for every folder. Everything is undone on exit.
    """
    if os.geteuid() != 0:
        paths = [p for folder in folders for p in [folder, *folder.rglob("*")]]
        for path in paths:
            path.chmod(path.stat().st_mode & ~0o222)
        try:
            if any(writable(f) for f in folders):
                pytest.skip("this file system does not make a directory read-only by its mode")
            yield "chmod"
        finally:
            for path in paths:
                path.chmod(path.stat().st_mode | 0o200)
        return
    tried = []
    for method in methods:
        locked = []
        for folder in folders:
            if not _lock(folder, method):
                break
            locked.append(folder)
        if len(locked) == len(folders) and not any(writable(f) for f in folders):
            try:
                yield method
            finally:
                for folder in locked:
                    _unlock(folder, method)
            return
        for folder in locked:
            _unlock(folder, method)
        tried.append(method)
    pytest.skip(f"running as root, cannot make a directory read-only (tried {', '.join(tried)})")
