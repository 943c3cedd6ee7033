"""CORP: the isotonic reliability diagram and the decomposition of the Brier score.

- :mod:`.decomposition`: :func:`corp`, the Brier score and its parts per group;
- :mod:`.diagram`: :func:`corp_curve`, the isotonic reliability diagram and its band;
- :mod:`.isotonic`: the pool-adjacent-violators fit and its consistency band.

T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability diagrams
for probabilistic classifiers", PNAS 118 (2021) e2016191118.
"""

from __future__ import annotations

from polars_cumdev.corp.decomposition import CORP_COLUMNS, CORP_CURVE_COLUMNS, corp
from polars_cumdev.corp.diagram import corp_curve

__all__ = ["CORP_COLUMNS", "CORP_CURVE_COLUMNS", "corp", "corp_curve"]
