"""Shared, seeded data generators for the test suite.

Every generator is deterministic in its ``seed``. Scores come from a small
dyadic grid (multiples of 1/16) so that exact ties are common inside every
group, and so that midpoints between two subpopulation scores are computed
exactly and often coincide with other full-population scores (exercising the
"a score equal to a midpoint belongs to the lower bin" rule).

The generators are plain functions, exposed to the tests through session
fixtures (``make_frame``, ``make_columns``, ``arrays``).
"""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest

GRID = np.arange(16) / 16.0  # 0, 1/16, ..., 15/16: exactly representable

# Group label -> (share of the rows, how the scores are drawn).
# "single" has one distinct score; "pair" has exactly two distinct scores.
GROUP_LAYOUT = {
    "big": 0.58,
    "mid": 0.25,
    "small": 0.10,
    "tiny": 0.01,
    "pair": 0.03,
    "single": 0.03,
}


def _scores(rng: np.random.Generator, label: str, size: int, kind: str) -> np.ndarray:
    if label == "single":
        return np.full(size, 7.0 / 16.0)
    if label == "pair":
        return rng.choice(np.array([3.0 / 16.0, 11.0 / 16.0]), size=size)
    if kind == "grid":
        # Groups favour different parts of the grid so that their bins differ.
        shift = {"big": 0, "mid": 4, "small": 8, "tiny": 2}[label]
        probabilities = np.roll(np.linspace(1.0, 3.0, GRID.size), shift)
        probabilities /= probabilities.sum()
        return rng.choice(GRID, size=size, p=probabilities)
    if kind == "mixed":
        # Half from the grid, half continuous (distinct with probability 1).
        grid_part = rng.choice(GRID, size=size)
        continuous = rng.uniform(0.0, 1.0, size=size)
        return np.where(rng.random(size) < 0.5, grid_part, continuous)
    if kind == "continuous":
        return rng.uniform(0.0, 1.0, size=size)
    raise ValueError(kind)


def _responses(rng: np.random.Generator, scores: np.ndarray, label: str, kind: str) -> np.ndarray:
    # The "small" group deviates from the others at high scores.
    bump = 0.25 * (scores > 0.5) if label == "small" else 0.0
    if kind == "bernoulli":
        probability = np.clip(0.15 + 0.6 * scores + bump, 0.0, 1.0)
        return (rng.random(scores.size) < probability).astype(np.float64)
    if kind == "count":
        return rng.poisson(1.0 + 4.0 * scores + 6.0 * bump)  # stays an integer column
    if kind == "continuous":
        return np.round(2.0 * scores + 3.0 * bump + rng.normal(0.0, 0.7, scores.size), 6)
    raise ValueError(kind)


def _weights(rng: np.random.Generator, size: int, kind: str) -> np.ndarray | None:
    if kind == "none":
        return None
    if kind == "float":
        return rng.lognormal(0.0, 0.8, size=size)
    if kind == "int":
        return rng.integers(1, 6, size=size)  # stays an integer column
    raise ValueError(kind)


def frame_columns(
    seed: int,
    n_rows: int = 800,
    *,
    response: str = "bernoulli",
    weights: str = "float",
    scores: str = "grid",
) -> dict[str, np.ndarray]:
    """Columns g (group), h (second key), s, r and (unless weights="none") w.

    ``response`` is "bernoulli" (0/1 floats), "count" (Poisson, integer dtype)
    or "continuous"; ``weights`` is "none", "float" (log-normal) or "int"
    (1..5, integer dtype); ``scores``
    is "grid", "mixed" or "continuous". Groups have very different sizes;
    group "single" has one distinct score, "pair" two.
    """
    rng = np.random.default_rng(seed)
    labels = list(GROUP_LAYOUT)
    sizes = [max(2, round(share * n_rows)) for share in GROUP_LAYOUT.values()]
    sizes[0] += n_rows - sum(sizes)
    g = np.concatenate([np.full(size, label) for label, size in zip(labels, sizes, strict=True)])
    s = np.concatenate(
        [_scores(rng, label, size, scores) for label, size in zip(labels, sizes, strict=True)]
    )
    r = np.concatenate([_responses(rng, s[g == label], label, response) for label in labels])
    order = rng.permutation(n_rows)  # interleave the groups
    out = {
        "g": g[order].astype(object),
        "h": rng.choice(np.array(["x", "y"]), size=n_rows).astype(object),
        "s": s[order],
        "r": r[order],
    }
    w = _weights(rng, n_rows, weights)
    if w is not None:
        out["w"] = w
    return out


def build_frame(seed: int, n_rows: int = 800, **kwargs) -> pl.DataFrame:
    """:func:`frame_columns` as a Polars DataFrame (g and h as strings)."""
    cols = frame_columns(seed, n_rows, **kwargs)
    return pl.DataFrame(
        {
            name: (
                pl.Series(name, values.tolist(), dtype=pl.String) if name in ("g", "h") else values
            )
            for name, values in cols.items()
        }
    )


def arrays_of(df: pl.DataFrame, weight: str | None = "w"):
    """(s, r, w) as float64 arrays from a frame; w is None when ``weight`` is None."""
    s = df["s"].to_numpy().astype(np.float64)
    r = df["r"].to_numpy().astype(np.float64)
    w = None if weight is None else df[weight].to_numpy().astype(np.float64)
    return s, r, w


@pytest.fixture(scope="session")
def make_frame():
    """The :func:`build_frame` generator."""
    return build_frame


@pytest.fixture(scope="session")
def make_columns():
    """The :func:`frame_columns` generator."""
    return frame_columns


@pytest.fixture(scope="session")
def arrays():
    """The :func:`arrays_of` helper."""
    return arrays_of


def pure_bins_frame(seed: int, levels: int = 40) -> pl.DataFrame:
    """Groups a, b, c each holding every score k / levels once; R = [score >= 1/2].

    Every bin of every group then holds the rows of one score only, so it is
    pure (all 0 or all 1) and sigma is exactly 0. Weights are lognormal, so
    running totals of them are inexact. Rows are in a seeded random order.
    """
    rng = np.random.default_rng(seed)
    scores = np.repeat(np.arange(levels) / levels, 3)
    frame = pl.DataFrame(
        {
            "g": np.tile(["a", "b", "c"], levels),
            "s": scores,
            "r": (scores >= 0.5).astype(np.float64),
            "w": rng.lognormal(0.0, 1.0, scores.size),
        }
    )
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


@pytest.fixture(scope="session")
def pure_bins():
    """The :func:`pure_bins_frame` factory."""
    return pure_bins_frame


def covariate_data(
    n: int = 1500, seed: int = 0, corner: float = 0.0, q: float = 0.75, ties: bool = True
) -> pl.DataFrame:
    """Two covariates, five groups; group 'a' deviates by ``corner`` above both q-quantiles."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = rng.exponential(size=n)
    if ties:
        y = y.round(1)
    g = rng.choice(list("abcde"), size=n)
    hot = (g == "a") & (x > np.quantile(x, q)) & (y > np.quantile(y, q))
    p = 0.3 + corner * hot
    r = (rng.uniform(size=n) < p).astype(np.int64)
    w = rng.uniform(0.5, 2.0, size=n)
    return pl.DataFrame({"x": x, "y": y, "g": g, "r": r, "w": w})


@pytest.fixture(scope="module")
def spark():
    """A ``local[2]`` Spark session for the module, or a skip naming what is missing
    (test files may define their own)."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Spark needs Java (apt-get install openjdk-17-jre-headless)")
    import polars_cumdev.spark as cspark

    session = cspark.local_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def client():
    """A Dask client of a two-worker ``LocalCluster`` for the module, or a skip."""
    pytest.importorskip("dask.dataframe", reason="the dask extra is not installed")
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    import polars_cumdev.dask as cdask

    client = cdask.local_cluster(2)
    yield client
    cluster = client.cluster
    client.close()
    cluster.close()


# Under CI=true, a skip for a missing service (Java, Chromium, ...) fails (issue 37, item 14).
from ci_skips import (  # noqa: E402, F401
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_terminal_summary,
)
