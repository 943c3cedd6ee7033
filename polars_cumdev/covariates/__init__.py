"""Several covariates as one score: the Hilbert-curve ordering behind ``score=[...]``.

- :mod:`.hilbert`: :func:`hilbert_index`, the position along a Hilbert curve;
- :mod:`.tables`: the curve's state tables;
- :mod:`.ranking`: the dense ranks of the covariates (compiled from 10^6 rows);
- :mod:`.ordering`: how an analysis turns ``score=[...]`` into one score.
"""

from __future__ import annotations

from polars_cumdev.covariates.hilbert import hilbert_index
from polars_cumdev.covariates.ordering import (
    ORDERING,
    Ordering,
    Score,
    covariate_names,
    resolve_score,
)

__all__ = ["ORDERING", "Ordering", "Score", "covariate_names", "hilbert_index", "resolve_score"]
