"""The namespace's methods for subpopulations: screens, drill-downs, comparisons, reports.

Each forwards to the analysis that implements it (:mod:`polars_cumdev.subpopulation`,
:mod:`polars_cumdev.compare`, :mod:`polars_cumdev.paired`, :mod:`polars_cumdev.report`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from polars_cumdev import compare, subpopulation
from polars_cumdev.method.expressions import Column
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.namespace.base import F, Methods
from polars_cumdev.progress import Progress

__all__ = ["SubpopulationMethods"]


class SubpopulationMethods(Methods[F]):
    """Screens of subpopulations against the full population, and their drill-downs."""

    def screen(
        self,
        by: Column | Sequence[Column],
        score: Column | Sequence[Column],
        response: Column,
        weight: Column | None = None,
        *,
        variance: str = "auto",
        engine: str = "auto",
        level: float = LEVEL,
    ) -> F:
        """Screen every subpopulation of ``by`` against the full population.

        See :func:`polars_cumdev.subpopulation.screen` (equations (12)-(13) of
        M. Tygert, "Cumulative deviation of a subpopulation from the full
        population", (25)-(28), (31)-(32)); ``engine`` picks the Polars plan or
        the compiled kernel (:mod:`polars_cumdev.method.compiled`).
        """
        return self._out(
            subpopulation.screen(
                self._data(by, score, response, weight),
                by,
                score,
                response,
                weight,
                variance=variance,
                engine=engine,
                level=level,
            )
        )

    def curve(
        self,
        subpop: pl.Expr | str,
        score: Column | Sequence[Column],
        response: Column,
        weight: Column | None = None,
        *,
        variance: str = "auto",
        fraction: float = 1.0,
        engine: str = "auto",
        level: float = LEVEL,
    ) -> F:
        """Drill-down frame of cumulative differences for one subpopulation.

        See :func:`polars_cumdev.subpopulation.curve` (equations (25)-(28) of M.
        Tygert, "Cumulative deviation of a subpopulation from the full
        population", Remark 3).
        """
        return self._out(
            subpopulation.curve(
                self._data(subpop, score, response, weight),
                subpop,
                score,
                response,
                weight,
                variance=variance,
                fraction=fraction,
                engine=engine,
                level=level,
            )
        )

    def compare(
        self,
        first: pl.Expr | str,
        second: pl.Expr | str,
        score: Column | Sequence[Column],
        response: Column,
        weight: Column | None = None,
        *,
        variance: str = "empirical",
        ties: str = "error",
        seed: int = 0,
        level: float = LEVEL,
    ) -> F:
        """Two disjoint subpopulations compared directly, "first minus second".

        See :func:`polars_cumdev.compare.compare` (two-subpopulations spec,
        J. Big Data 8 (2021) 158).
        """
        return self._out(
            compare.compare(
                self._data(first, second, score, response, weight),
                first,
                second,
                score,
                response,
                weight,
                variance=variance,
                ties=ties,
                seed=seed,
                level=level,
            )
        )

    def compare_curve(
        self,
        first: pl.Expr | str,
        second: pl.Expr | str,
        score: Column | Sequence[Column],
        response: Column,
        weight: Column | None = None,
        *,
        variance: str = "empirical",
        ties: str = "error",
        seed: int = 0,
        fraction: float = 1.0,
        level: float = LEVEL,
    ) -> F:
        """Drill-down frame of :meth:`compare` (same columns as :meth:`curve`).

        See :func:`polars_cumdev.compare.compare_curve`.
        """
        return self._out(
            compare.compare_curve(
                self._data(first, second, score, response, weight),
                first,
                second,
                score,
                response,
                weight,
                variance=variance,
                ties=ties,
                seed=seed,
                fraction=fraction,
                level=level,
            )
        )

    def compare_all(
        self,
        by: Column,
        reference: object,
        score: Column | Sequence[Column],
        response: Column,
        weight: Column | None = None,
        *,
        variance: str = "empirical",
        ties: str = "error",
        seed: int = 0,
        level: float = LEVEL,
    ) -> F:
        """Every group of ``by`` compared with the group ``reference``, in one query.

        See :func:`polars_cumdev.compare.compare_all`.
        """
        return self._out(
            compare.compare_all(
                self._data(by, score, response, weight),
                by,
                reference,
                score,
                response,
                weight,
                variance=variance,
                ties=ties,
                seed=seed,
                level=level,
            )
        )

    def paired(
        self,
        score: Column | Sequence[Column],
        first: Column,
        second: Column,
        weight: Column | None = None,
        *,
        by: Column | Sequence[Column] | None = None,
        variance: str = "empirical",
        level: float = LEVEL,
    ) -> F:
        """Paired samples: first minus second response of the same units, by score.

        See :func:`polars_cumdev.paired.paired` (the paper's ``cumdiff`` and
        ``expectedvar``; ``paired-and-covariates.md`` section 1); one row per
        group of ``by``, ranked, with Benjamini-Hochberg q-values.
        """
        from polars_cumdev.paired import paired

        return self._out(
            paired(
                self._data(score, first, second, weight, by),
                score,
                first,
                second,
                weight,
                by=by,
                variance=variance,
                level=level,
            )
        )

    def paired_curve(
        self,
        score: Column | Sequence[Column],
        first: Column,
        second: Column,
        weight: Column | None = None,
        *,
        subpop: pl.Expr | str | None = None,
        variance: str = "empirical",
        fraction: float = 1.0,
        level: float = LEVEL,
    ) -> F:
        """Drill-down frame of :meth:`paired` (the layout of :meth:`curve`).

        See :func:`polars_cumdev.paired.paired_curve` (``cumdiff``,
        ``expectedvar``, Remark 3's zoom).
        """
        from polars_cumdev.paired import paired_curve

        return self._out(
            paired_curve(
                self._data(score, first, second, weight, subpop),
                score,
                first,
                second,
                weight,
                subpop=subpop,
                variance=variance,
                fraction=fraction,
                level=level,
            )
        )

    def report(
        self,
        by: Column | Sequence[Column],
        score: Column | Sequence[Column],
        response: Column,
        weight: Column | None = None,
        *,
        path: str | Path,
        top: int = 5,
        variance: str = "auto",
        bins: int = 10,
        level: float = LEVEL,
        progress: Progress = False,
    ) -> Path:
        """Write a self-contained HTML report (screen, then drill-downs of the top groups).

        See :func:`polars_cumdev.report.subpopulation.report`. Runs the queries it needs at
        once, on a LazyFrame too, and returns the path written.
        """
        from polars_cumdev import report

        return report.report(
            self._data(by, score, response, weight),
            by,
            score,
            response,
            weight,
            path=path,
            top=top,
            variance=variance,
            bins=bins,
            level=level,
            progress=progress,
        )
