"""Binned summaries: reliability diagrams and expected calibration errors (method.md 3).

These are the classical, *binned* counterparts of the cumulative statistics
elsewhere in the package. They are here so that the two can be put side by
side; the papers' point is that the binned summaries depend on a choice of
bins (see :func:`ece_sweep`) while the cumulative ones do not.

Reliability diagrams follow Remark 4 of M. Tygert, "Cumulative deviation of a
subpopulation from the full population" (J. Big Data 8, 2021): per bin, the
weighted average of the scores, X_k of (36) and Xt_k of (37), against the
weighted average of the responses, Y_k of (34) and Yt_k of (35), for the
subpopulation and for the full population, each binned on its own. The expected
calibration errors are the Riemann sums (3) (ECE2) and (4) (ECE1) of
Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu, "Metrics of calibration for
probabilistic predictions" (J. Mach. Learn. Res. 23, 2022).

Three binnings are offered, all applied to the rows of one population (or
group) in increasing order of score:

``"equispaced"``
    l intervals of equal width; bin j is (e_j, e_{j+1}] with
    e_j = lo + (hi - lo) j / l, except that the first bin is closed below and,
    as in the papers' convention B_0 = -inf and B_l = +inf, unbounded on the
    outer sides. [lo, hi] is [0, 1] for probabilities, else the range of the
    scores being binned.
``"equal_count"``
    l bins of q = max(floor(n / l), 1) consecutive rows each, the last bin
    taking the remainder.
``"equal_error"``
    Remark 5: bins over which ||W||_2 / ||W||_1, equation (38) or (39), is
    about the target U of equation (40).

Empty bins are dropped, never returned as NaN.

Ordering and ties. Within a population the rows are put in increasing order
of (score, response, weight). Rows equal in all three are interchangeable, so
every result is independent of the order of the input rows. Equal-count and
equal-error bins are made of *rows* (method.md 3), so rows sharing a score may
straddle the boundary between two bins; they are then split by response and
weight, deterministically.

Reproducibility. Floating-point sums are accumulated in that sorted order
(never in an engine-dependent order), and the only randomness, the
permutation of (40) and the bootstrap draws, comes from
``numpy.random.default_rng(seed)``: the same call gives the same bits.

Where the work is done. Equispaced and equal-count bins are Polars
expressions over the lazy frame. Equal-error bins need a sequential scan
(each bin starts where the previous one stopped), done in NumPy inside
:meth:`polars.LazyFrame.map_batches`, as are the bootstrap resamples, whose
random draws are NumPy's.
"""

from polars_cumdev.binned.binnings import equal_error_labels
from polars_cumdev.binned.calibration_errors import ece, ece_sweep
from polars_cumdev.binned.diagrams import reliability
from polars_cumdev.binned.options import (
    BINNINGS,
    DEFAULT_SWEEP,
    ECE_COLUMNS,
    RELIABILITY_COLUMNS,
    WEIGHTINGS,
)
from polars_cumdev.binned.smooth import smooth_ece, smooth_ece_at

__all__ = [
    "BINNINGS",
    "DEFAULT_SWEEP",
    "ECE_COLUMNS",
    "RELIABILITY_COLUMNS",
    "WEIGHTINGS",
    "ece",
    "ece_sweep",
    "equal_error_labels",
    "reliability",
    "smooth_ece",
    "smooth_ece_at",
]
