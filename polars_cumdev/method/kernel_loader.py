"""Whether the compiled kernel can run, and importing it (and Numba) on first use.

The stages of :mod:`polars_cumdev.method` and the compiled node of
:mod:`polars_cumdev.method.compiled` reach :mod:`polars_cumdev.kernel` only
through these functions, so that ``import polars_cumdev`` never loads
Numba and a missing Numba is said in the user's terms.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from types import ModuleType

from polars_cumdev.errors import CumdevError

__all__ = ["available", "kernel", "loaded"]


@functools.cache
def available() -> bool:
    """Whether Numba can be imported (the kernel can run): looked up once (a look-up cost
    a small calibration 0.2 ms, each call)."""
    return importlib.util.find_spec("numba") is not None


def kernel() -> ModuleType:
    """Import :mod:`polars_cumdev.kernel` (and Numba) on first use."""
    if not available():
        raise CumdevError(
            "engine='kernel' needs Numba, which is not installed: pip install numba "
            "(or use engine='polars')"
        )
    from polars_cumdev import kernel as module  # says so when its functions compile

    return module


def loaded() -> ModuleType | None:
    """:mod:`polars_cumdev.kernel` if something imported it already, else None (nothing is
    imported: a step that is only faster with the kernel asks this, not :func:`kernel`)."""
    return sys.modules.get("polars_cumdev.kernel")
