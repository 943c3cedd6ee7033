"""Progress of long work: the stages of a report, the ranges of a screen, the first compilation.

Off by default in the API; a function taking ``progress`` accepts ``True``
(lines on stderr) or a callable taking one line of text (e.g. ``print``, or
a logger's ``info``). The command line turns it on when stderr is a terminal
(``--progress`` / ``--no-progress`` decide otherwise).

While a function with progress on runs, :func:`say` reaches its reporter from
any depth (a context variable), so the engines and the loading of the
compiled kernel speak without every layer passing the reporter along. Each
line starts with the time elapsed since progress was switched on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeAlias

from polars_cumdev.errors import InvalidParameterError

__all__ = ["Progress", "reporter", "reporting", "say"]

#: What a ``progress`` argument accepts: off (``False``/``None``), stderr (``True``), a callable.
Progress: TypeAlias = bool | Callable[[str], None] | None

_ACTIVE: ContextVar[Callable[[str], None] | None] = ContextVar("cumdev_progress", default=None)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def reporter(progress: Progress) -> Callable[[str], None] | None:
    """The callable a ``progress`` argument stands for (``None`` when off)."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return _stderr
    if callable(progress):
        return progress
    raise InvalidParameterError(
        f"`progress` must be True, False or a callable taking one line of text, got {progress!r}"
    )


@contextmanager
def reporting(progress: Progress) -> Iterator[Callable[[str], None]]:
    """Switch progress on for the block (when ``progress`` asks for it); yields :func:`say`.

    Nested blocks keep the outermost reporter and clock; a block with
    progress off inside one with it on does not silence it.
    """
    target = reporter(progress)
    if target is None or _ACTIVE.get() is not None:
        yield say
        return
    start = time.perf_counter()

    def timed(line: str) -> None:
        target(f"[cumdev {time.perf_counter() - start:7.1f} s] {line}")

    token = _ACTIVE.set(timed)
    try:
        yield say
    finally:
        _ACTIVE.reset(token)


def say(line: str) -> None:
    """Report one line of progress, when some caller switched progress on."""
    target = _ACTIVE.get()
    if target is not None:
        target(line)
