"""Two subpopulations compared directly, without a common score.

This module implements the numerical contract of ``two-subpopulations.md``,
which follows M. Tygert, "A graphical method of cumulative differences between
two subpopulations", J. Big Data 8 (2021) 158 (arXiv 2108.02666). The steps
cited below ("step 1" to "step 6", "the effect") are that page's.

Everything is expressed as one lazy Polars query. The same machinery serves
three public functions:

* :func:`compare` -- one pair of selections, one row of statistics;
* :func:`compare_curve` -- the same pair, point by point, for a chart;
* :func:`compare_all` -- every group of a column against one reference group,
  all groups in one query, with Benjamini-Hochberg adjustment across groups.

Internally a *group* is one comparison. :func:`compare` is the case of a
single group (a constant group id); :func:`compare_all` uses the values of the
``by`` column. For every group the query

1. merges tied scores inside each subpopulation (method.md 1.1, via
   :func:`polars_cumdev.method.ties.merge_ties`); the second subpopulation (the
   reference of :func:`compare_all`) is merged once and crossed with every
   group id;
2. finds the distinct scores shared by the two subpopulations and, with
   ``ties="dither"``, moves the shared scores of the second subpopulation
   (see :func:`dither_scores`);
3. sorts by score and numbers the maximal runs of one subpopulation
   ("blocks", step 2): a new block starts wherever the subpopulation changes;
   the weights are normalized by the total of both subpopulations (step 1)
   when the blocks' mean weights are taken;
4. aggregates each block and forms the centred difference on every interior
   block from its two neighbours (step 3, a ``shift`` that stops at the
   group's edges);
5. accumulates (step 4), takes the Kuiper and Kolmogorov-Smirnov statistics
   (step 5) and the scale sigma (step 6), and computes the weighted average
   treatment effect from the same blocks.

No Python loop runs over rows or groups; NumPy is used only inside
``map_batches`` for the dither and the p-values.
"""

from polars_cumdev.compare.all_groups import compare_all
from polars_cumdev.compare.api import compare, compare_curve
from polars_cumdev.compare.columns import (
    COMPARE_ALL_COLUMNS,
    COMPARE_COLUMNS,
    COMPARE_CURVE_COLUMNS,
    DITHER,
)
from polars_cumdev.compare.dither import dither_scores
from polars_cumdev.method.callable_module import make_callable

__all__ = [
    "COMPARE_ALL_COLUMNS",
    "COMPARE_COLUMNS",
    "COMPARE_CURVE_COLUMNS",
    "DITHER",
    "compare",
    "compare_all",
    "compare_curve",
    "dither_scores",
]

make_callable(__name__, compare)  # pc.compare(df, ...) is compare(df, ...)
