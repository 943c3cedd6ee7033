"""Recalibration: the fix that the multicalibration audit proves necessary, as a Polars expression.

:func:`recalibrate` fits a global monotone map of the score (only if the
audit finds the full population miscalibrated) and additive log-odds shifts
of the segments the audit finds miscalibrated family-wise, round after round,
each round's stopping test run on rows the corrections were not fitted on
(docs/method.md, "Recalibration"). The result, a :class:`Recalibration`, is a
Polars expression (:meth:`Recalibration.expr`), a table of corrections with
their evidence, and a versioned JSON file.
"""

from polars_cumdev.recalibration.evaluate import before_after_audits, evaluate
from polars_cumdev.recalibration.fit import recalibrate
from polars_cumdev.recalibration.model import Correction, Recalibration
from polars_cumdev.recalibration.monotone import MonotoneMap

__all__ = [
    "Correction",
    "MonotoneMap",
    "Recalibration",
    "before_after_audits",
    "evaluate",
    "recalibrate",
]
