"""What the ``cumdev`` command prints shows control characters instead of sending them.

Group keys and column values are user data. A NUL, an escape sequence or a
carriage return in one, printed raw, is invisible, or rewrites the terminal
(colours, the title, the line already printed). While a subcommand runs, its
standard output and error pass through :class:`VisibleControls`: each C0
control character other than newline and tab becomes its Unicode control
picture (NUL -> U+2400, ESC -> U+241B), DEL becomes U+2421 and a C1 control
its ``\\x85``-style escape, as chart labels already show them
(:func:`polars_cumdev.charts.export.xml_safe`).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["VisibleControls", "visible", "visible_controls"]

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"\\x{code:02x}"


def visible(text: str) -> str:
    """``text`` with its control characters (but newline and tab) made visible."""
    return _CONTROLS.sub(_picture, text)


class VisibleControls:
    """A text stream that writes :func:`visible` text to the stream it wraps."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, closed, isatty, ...
        return getattr(self._stream, name)


@contextlib.contextmanager
def visible_controls() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` show control characters."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleControls(out), VisibleControls(err)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
