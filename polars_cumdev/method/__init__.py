"""The stages every analysis shares, in the order of the method.

One module per stage (M. Tygert, "Cumulative deviation of a subpopulation
from the full population", J. Big Data 8 (2021) 117; the arithmetic in
``docs/method.md``):

- :mod:`.prepare`, :mod:`.masks`, :mod:`.weights`: checked columns, the
  subpopulation's membership, the weights rescaled exactly;
- :mod:`.sums`, :mod:`.ties`, :mod:`.bins`, :mod:`.prefix_sums`: exact ties
  merged, the full population's bins between midpoints, their sums;
- :mod:`.accumulate`: the cumulative differences C_k against A_k;
- :mod:`.statistics` (with :mod:`.resolution`, :mod:`.normalization`,
  :mod:`.significance`, :mod:`.pvalues`): Kuiper and KS statistics, sigma,
  z and p-values;
- :mod:`.location`, :mod:`.curves`, :mod:`.groups`: where the deviation is,
  the drill-down frames and group selection;
- :mod:`.compiled` (with :mod:`.kernel_loader`): the same stages run as one
  compiled node of the plan (:mod:`polars_cumdev.kernel`).

Nothing here imports an analysis, an engine or a face (``docs/architecture.md``).
"""
