"""Numbers as the charts, the reports and the command line print them.

Shared by :mod:`polars_cumdev.charts`, :mod:`polars_cumdev.report` and
:mod:`polars_cumdev.cli`, and so kept here, below all three.
"""

from __future__ import annotations

__all__ = ["number", "p_text", "percent"]


def percent(share: float) -> str:
    """A share as a percentage with two significant digits ("18%", "0.53%")."""
    return f"{100.0 * share:.2g}%"


def p_text(value: float) -> str:
    """A p- or q-value: two significant digits ("0.72", "0.0031"), "< 0.001" below 0.001.

    One notation for every p-value a page shows; the z-score beside it ranks
    the very strong deviations.
    """
    if value < 0.001:
        return "< 0.001"
    return f"{value:.2g}" if value < 1.0 else "1"


def number(value: float) -> str:
    """A score or covariate value with four significant digits ("4.173", "1.2e-05")."""
    return f"{value:.4g}"
