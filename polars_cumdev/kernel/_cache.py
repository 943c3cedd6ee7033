"""Where the kernel's compiled code is cached, and recovering from a damaged cache.

Numba caches a ``cache=True`` function in ``NUMBA_CACHE_DIR`` when that is set
and writable, else beside its source (``__pycache__``), else in the user's cache
directory (``~/.cache/numba``). With a read-only install, a read-only home *and*
no writable ``NUMBA_CACHE_DIR``, none of these can be written, and Numba refuses
to define the function at all (``RuntimeError: cannot cache function ...: no locator
available``). :data:`CACHE` is decided once, before the kernel's first function
is defined:

* when Numba finds a place, it is used as before;
* otherwise a new private temporary directory becomes Numba's cache directory
  (compiled again in each process), said in one line on stderr;
* when not even that can be created, the kernel compiles without a cache
  (``CACHE`` is False), said in one line on stderr.

A wheel built from the source (``pip install .``) carries the kernel compiled
on the machine that built it, in :data:`SHIPPED` (``setup.py`` runs
``warm_kernel.py`` on the built copy). Every function looks there when its own
cache has no entry: read only, so it serves a read-only install and an empty
``NUMBA_CACHE_DIR`` alike. Numba's keys (the source's content, the bytecode,
the Numba version, the CPU) make an entry built elsewhere a miss, never a
wrong function: the kernel then compiles as without it.

Cache files cut short (a full disk, a killed process, a copy interrupted) make
Numba's unpickling fail on every call until they are deleted.
:func:`tolerate_damage` makes the kernel's functions treat such a file as
absent: the function compiles again and the entry is written anew.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from types import ModuleType

from numba.core import caching, config
from numba.core.dispatcher import Dispatcher

__all__ = ["CACHE", "SHIPPED", "tolerate_damage"]

_NOTE = "polars-cumdev:"

#: Where a built wheel carries Numba's cache files of the kernel (absent in a checkout).
SHIPPED = Path(__file__).resolve().parent / "_compiled"


def _probe() -> None:
    """A function of this directory: Numba locates its cache as the kernel's."""


def _choose() -> bool:
    """Whether to compile with ``cache=True``; points Numba to a usable directory."""
    try:
        caching.FunctionCache(_probe)  # NUMBA_CACHE_DIR, beside the source, or the home
        return True
    except RuntimeError:
        pass
    places = "the package and the home directory are"
    if config.CACHE_DIR:
        places = f"NUMBA_CACHE_DIR ({config.CACHE_DIR}), the package and the home directory are"
    try:
        folder = tempfile.mkdtemp(prefix="polars-cumdev-numba-")
    except OSError as exc:
        print(
            f"{_NOTE} no writable place for Numba's cache ({exc.strerror}); compiling without "
            "a cache (set NUMBA_CACHE_DIR to a writable directory to keep the compiled kernel)",
            file=sys.stderr,
        )
        return False
    config.CACHE_DIR = folder
    print(
        f"{_NOTE} {places} read-only; caching the compiled kernel in {folder} for this "
        "process (set NUMBA_CACHE_DIR to a writable directory to keep it)",
        file=sys.stderr,
    )
    return True


CACHE = _choose()


class _TolerantCacheFile(caching.IndexDataCacheFile):
    """Numba's index and data files, with a damaged file read as a missing one.

    An entry missing from them is looked for in the wheel's files (:data:`SHIPPED`).
    """

    _shipped: caching.IndexDataCacheFile | None = None

    def load(self, key: object) -> object:
        data = super().load(key)
        if data is None and self._shipped is not None:
            try:
                data = self._shipped.load(key)
            except OSError:
                return None
        return data

    def _load_index(self) -> dict[object, str]:
        try:
            return super()._load_index()
        except OSError:
            raise
        except Exception:  # any unpickling failure: a file cut short
            return {}  # compiled again; saving writes a whole index

    def _load_data(self, name: str) -> object:
        try:
            return super()._load_data(name)
        except OSError:
            raise
        except Exception as exc:  # any unpickling failure: a file cut short
            raise OSError(f"damaged Numba cache file {name}") from exc  # load() -> None


def tolerate_damage(*modules: ModuleType) -> None:
    """Make every cached compiled function of ``modules`` recover from damaged cache files."""
    for module in modules:
        for value in vars(module).values():
            if not isinstance(value, Dispatcher):
                continue
            cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
            if type(cache_file) is caching.IndexDataCacheFile:
                cache_file.__class__ = _TolerantCacheFile
                if SHIPPED.is_dir():
                    shipped = caching.IndexDataCacheFile(
                        cache_path=str(SHIPPED),
                        filename_base=cache_file._index_name.removesuffix(".nbi"),
                        source_stamp=cache_file._source_stamp,
                    )
                    shipped.__class__ = _TolerantCacheFile  # damaged: a miss
                    cache_file._shipped = shipped
