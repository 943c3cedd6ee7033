"""Whether the compiled kernel can run, and importing it (and Numba) on first use.

The stages of :mod:`polars_cumdev.method` and the compiled node of
:mod:`polars_cumdev.method.compiled` reach :mod:`polars_cumdev.kernel` only
through these two functions, so that ``import polars_cumdev`` never loads
Numba and a missing Numba is said in the user's terms.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

from polars_cumdev import progress
from polars_cumdev.errors import CumdevError

__all__ = ["available", "cached", "kernel"]

_loaded = False  # whether this process has loaded the kernel (then nothing is announced)


def available() -> bool:
    """Whether Numba can be imported (the kernel can run)."""
    return importlib.util.find_spec("numba") is not None


def kernel() -> ModuleType:
    """Import :mod:`polars_cumdev.kernel` (and Numba) on first use."""
    if not available():
        raise CumdevError(
            "engine='kernel' needs Numba, which is not installed: pip install numba "
            "(or use engine='polars')"
        )
    global _loaded
    if not _loaded and not cached():
        progress.say(
            "compiling the kernel (first use in this environment: about a minute, "
            "cached on disk afterwards)"
        )
    from polars_cumdev import kernel as module

    _loaded = True
    return module


def cached() -> bool:
    """Whether Numba's on-disk cache holds compiled kernel functions (a guess, for progress).

    Looks for Numba's index files beside the kernel's modules and under
    ``NUMBA_CACHE_DIR``; finding none means the first calls compile.
    """
    spec = importlib.util.find_spec("polars_cumdev.kernel")
    places = []
    if spec is not None and spec.submodule_search_locations:
        places += [Path(p) / "__pycache__" for p in spec.submodule_search_locations]
    if os.environ.get("NUMBA_CACHE_DIR"):
        places.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    return any(next(place.rglob("*.nbi"), None) is not None for place in places if place.is_dir())
