"""The Display's curves drawn with matplotlib, for scikit-learn's ``plot(ax=...)``.

The Display (:mod:`polars_cumdev.sklearn_display`) draws Altair charts by
default; given a matplotlib Axes it draws there instead, as scikit-learn's own
displays do. This module holds that second way of drawing: the check that
``ax`` is an Axes (matplotlib is imported only then, so the ``[sklearn]``
extra does not need it), and the curves of a calibration frame drawn against
A_k, each with the triangle of +- 2 sigma at the origin that the Altair chart
also shows (method.md 2).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_cumdev.errors import InvalidParameterError

__all__ = ["draw_curves", "matplotlib_axes"]


def matplotlib_axes(ax: Any) -> Any:
    """``ax`` if it is a matplotlib Axes; matplotlib is imported only here, when ``ax`` is given."""
    try:
        from matplotlib.axes import Axes
    except ImportError:
        raise InvalidParameterError(
            "`ax=` draws into a matplotlib Axes, and matplotlib is not installed: "
            "`pip install matplotlib`, or leave `ax` out for the Altair chart"
        ) from None
    if not isinstance(ax, Axes):
        raise InvalidParameterError(
            f"`ax` must be a matplotlib Axes, got {type(ax).__name__}; to put several "
            "displays on one Altair chart, add them: (display_a + display_b).plot()"
        )
    return ax


def draw_curves(
    ax: Any, curve: pl.DataFrame, kind: str | None, name: str | None, kwargs: dict[str, Any]
) -> Any:
    """Draw ``curve`` (one curve, or one per ``class`` with ``kind="class-wise"``) into ``ax``.

    Each curve is C_k against A_k, labelled ``name`` (with its class), drawn
    with ``kwargs`` (matplotlib's ``ax.plot`` options), with its triangle of
    +- 2 sigma at the origin in the same colour. Returns the last line drawn
    (None when there is no curve).
    """
    from polars_cumdev.charts._layers import TRIANGLE_APEX

    if kind == "class-wise":
        parts = [
            (
                f"{name}, class {c}" if name else f"class {c}",
                curve.filter(pl.col("class") == c),
            )
            for c in curve.get_column("class").unique(maintain_order=True).to_list()
        ]
    else:
        parts = [(name, curve)]
    last = None
    for label, part in parts:
        (line,) = ax.plot(
            part.get_column("a").to_numpy(),
            part.get_column("cumdiff").to_numpy(),
            label=label,
            **kwargs,
        )
        sigma = part.get_column("sigma").drop_nulls()
        if sigma.len() and sigma[0] > 0:
            s = 2.0 * float(sigma[0])
            ax.plot(
                [0.0, TRIANGLE_APEX, 0.0, 0.0],
                [-s, 0.0, s, -s],
                color=line.get_color(),
                linewidth=0.8,
            )
        last = line
    ax.set_xlabel("cumulative share of the predictions (A_k)")
    ax.set_ylabel("cumulative (outcome minus probability)")
    return last
