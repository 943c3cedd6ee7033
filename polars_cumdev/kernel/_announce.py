"""Saying so when Numba compiles the kernel (a cache miss), once per process.

Numba signals each compilation it actually performs (``numba:compile``: not a
function loaded from its on-disk cache). The first such signal for a function
of this package logs one message, at level WARNING, to the ``polars_cumdev``
logger: that the kernel compiles and for about how long. Later ones say
nothing. With logging left unconfigured, Python prints it on stderr (a
notebook shows it under the cell); ``logging.getLogger("polars_cumdev")
.setLevel(logging.ERROR)`` silences it. The command line prints it as
``cumdev: compiling ...`` (:mod:`polars_cumdev.cli.main`).
"""

from __future__ import annotations

import logging

from numba.core import event

__all__ = ["LOGGER", "SECONDS"]

#: About how long a first call compiles with an empty cache: the CPU seconds of the
#: screen's, calibration's and multicalibration's first calls at 1.2e6 rows were
#: 42-57 s on this project's 2-core machine at load 4 (benchmarks/README.md).
SECONDS = 50.0

#: The logger the announcement goes to (a child of ``polars_cumdev``).
LOGGER = logging.getLogger(__name__)

_PACKAGE = __name__.split(".")[0] + "."


class _FirstCompilation(event.Listener):
    """Announces the first compilation of one of the package's functions."""

    said = False

    def on_start(self, ev: event.Event) -> None:
        if self.said:
            return
        function = getattr(ev.data.get("dispatcher"), "py_func", None)
        if not getattr(function, "__module__", "").startswith(_PACKAGE):
            return
        self.said = True
        LOGGER.warning(
            "compiling the compiled kernel once, about %.0f s (first use with an empty "
            "cache; kept on disk for later runs)",
            SECONDS,
        )

    def on_end(self, ev: event.Event) -> None:
        pass


event.register("numba:compile", _FirstCompilation())  # once: a module is imported once
