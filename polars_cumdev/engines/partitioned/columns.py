"""Internal column names and the engine type of the partitioned screen."""

from __future__ import annotations

from typing import Literal

from polars_cumdev.method import _names as nm

__all__ = [
    "EVENT_SUMS",
    "MIDPOINT",
    "QUERY",
    "RANGE",
    "TOTAL_WEIGHT",
    "Engine",
]

Engine = Literal["auto", "in-memory", "streaming"]

RANGE = f"{nm.PREFIX}range"
QUERY = f"{nm.PREFIX}query"
MIDPOINT = f"{nm.PREFIX}midpoint"
TOTAL_WEIGHT = f"{nm.PREFIX}total_weight"
LO = f"{nm.PREFIX}lo"  # first distinct score of a cell
HI = f"{nm.PREFIX}hi"  # last distinct score of a cell
RSUM = f"{nm.PREFIX}rsum"
WMAX = f"{nm.PREFIX}wmax"  # largest weight of a cell
RMAX = f"{nm.PREFIX}rabsmax"  # largest |response| of a cell
RLOW = f"{nm.PREFIX}rlow"  # smallest response of a cell
RHIGH = f"{nm.PREFIX}rhigh"  # largest response of a cell
NONBINARY = f"{nm.PREFIX}nonbinary"
Q_LO = f"{nm.PREFIX}q_lo"  # query answering the lower midpoint of a cell's first point
Q_HI = f"{nm.PREFIX}q_hi"  # query answering the upper midpoint of a cell's last point
GID = f"{nm.PREFIX}gid"  # group number inside one range
#: A cell's columns for its group's effective events (``kernel.walks.event_terms``): the
#: interior points' two terms, and the sums of W^3 and W^4 of its first and last points.
EVENT_SUMS = ("s_3", "s_4", "f_w3", "f_w4", "l_w3", "l_w4")
