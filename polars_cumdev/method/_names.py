"""Names of the internal columns shared by the pipeline stages.

The prefix keeps them clear of user columns; the public functions rename
them to the tidy output names just before returning.
"""

from __future__ import annotations

PREFIX = "_cd_"

SCORE = f"{PREFIX}score"
#: The score the library makes of several covariates (their Hilbert rank); a
#: name the preparation accepts although it has the internal prefix.
HILBERT_RANK = f"{PREFIX}hilbert_rank"
RESPONSE = f"{PREFIX}response"
WEIGHT = f"{PREFIX}weight"
MEMBER = f"{PREFIX}member"

# Merged points (one per distinct score of a subpopulation), method.md 1.1.
ROWS = f"{PREFIX}rows"
TIE = f"{PREFIX}tie"

# Midpoint bins in the full population, method.md 1.2-1.3.
BIN_WEIGHT = f"{PREFIX}bin_weight"
BIN_ROWS = f"{PREFIX}bin_rows"
REFERENCE = f"{PREFIX}reference"
BIN_VARIANCE = f"{PREFIX}bin_variance"
# Bounds of the rounding errors of REFERENCE, of REFERENCE (1 - REFERENCE)
# and of BIN_VARIANCE (polars_cumdev.method.bins.BinMoments).
REFERENCE_ERROR = f"{PREFIX}reference_error"
BERNOULLI_ERROR = f"{PREFIX}bernoulli_error"
VARIANCE_ERROR = f"{PREFIX}variance_error"
OVERFLOW = f"{PREFIX}overflow"

# Accumulation, method.md 1.4.
K = f"{PREFIX}k"
N = f"{PREFIX}n"
A_STEP = f"{PREFIX}a_step"
A = f"{PREFIX}a"
CUMDIFF = f"{PREFIX}cumdiff"

GROUP = f"{PREFIX}group"
BINARY = f"{PREFIX}binary"
OK = f"{PREFIX}ok"
