"""A package module that can also be called, like the function it is named after.

``polars_cumdev.calibration`` and ``polars_cumdev.compare`` are subpackages
(``from polars_cumdev.calibration import calibration_curve`` and their
submodules keep working), and calling them, ``pc.calibration(df, ...)``,
calls the function of the same name, as ``pc.screen(...)`` does: without it,
Python said "'module' object is not callable".
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["make_callable"]


class _CallableModule(types.ModuleType):
    """A module whose call forwards to its function ``__call_target__``."""

    __call_target__: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__call_target__(*args, **kwargs)


def make_callable(module_name: str, function: Callable[..., Any]) -> None:
    """Make the module ``module_name`` (already in ``sys.modules``) call ``function``.

    The module keeps its attributes, docstring and submodules; only its class
    changes, which Python allows for modules.
    """
    module = sys.modules[module_name]
    module.__class__ = _CallableModule
    module.__call_target__ = function  # type: ignore[attr-defined]
