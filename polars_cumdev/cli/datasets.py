"""``cumdev datasets``: the bundled example data, listed or written to a file.

``cumdev datasets`` lists the examples with their columns and a line on
each; ``cumdev datasets NAME --output FILE`` writes one to a CSV, Parquet,
JSON, NDJSON or Arrow IPC file (the suffix picks the format), ready for the
other subcommands: ``cumdev datasets census --output census.csv`` then
``cumdev screen census.csv --by county ...``. Every example is generated
deterministically (:mod:`polars_cumdev.datasets`): nothing is downloaded.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev.cli.output import say
from polars_cumdev.errors import InvalidParameterError

__all__ = ["EXAMPLES", "add_command", "write_example"]

_FORMATS = {
    ".csv": "write_csv",
    ".parquet": "write_parquet",
    ".json": "write_json",
    ".ndjson": "write_ndjson",
    ".jsonl": "write_ndjson",
    ".ipc": "write_ipc",
    ".arrow": "write_ipc",
    ".feather": "write_ipc",
}


def _census() -> pl.DataFrame:
    from polars_cumdev.datasets import census

    return census()


def _census_age() -> pl.DataFrame:
    from polars_cumdev.datasets import census

    return census(age=True)


def _loader(name: str) -> Callable[[], pl.DataFrame]:
    def load() -> pl.DataFrame:
        from polars_cumdev import datasets

        frame: pl.DataFrame = getattr(datasets, name)()
        return frame

    return load


#: Name -> (loader, what it holds and which subcommand tries it).
EXAMPLES: dict[str, tuple[Callable[[], pl.DataFrame], str]] = {
    "census": (
        _census,
        "survey-like households, 41 counties, weights WGTP: "
        "cumdev screen FILE --by county --score log10_income --response has_internet "
        "--weight WGTP",
    ),
    "census_age": (_census_age, "the census households with age and broadband (covariates)"),
    "census_scored": (
        _loader("census_scored"),
        "the census households with a model's score for has_internet (cumdev multicalibration)",
    ),
    "calibration_oscillating": (
        _loader("calibration_oscillating"),
        "predicted probabilities whose miscalibration changes sign (cumdev calibration)",
    ),
    "calibration_linear": (_loader("calibration_linear"), "probabilities off by a linear trend"),
    "calibration_overconfident": (
        _loader("calibration_overconfident"),
        "overconfident probabilities (too close to 0 and 1)",
    ),
    "weekly_predictions": (
        _loader("weekly_predictions"),
        "a model's predictions week by week, drift in one week (cumdev calibration --by-time ts)",
    ),
    "paired_models": (_loader("paired_models"), "two models' scores of the same units (paired)"),
    "paired_synthetic": (_loader("paired_synthetic"), "two responses per unit (cumdev paired)"),
    "notch": (_loader("notch"), "synthetic subpopulation with a notch (the paper's figure 1)"),
    "smooth_oscillation": (_loader("smooth_oscillation"), "synthetic, smooth oscillation"),
    "step_oscillation": (_loader("step_oscillation"), "synthetic, step oscillation"),
    "weighted_outliers": (_loader("weighted_outliers"), "synthetic, heavily weighted outliers"),
}


def _check_name(name: str) -> None:
    if name not in EXAMPLES:
        raise InvalidParameterError(
            f"no example named {name!r}; the examples are: {', '.join(EXAMPLES)}"
        )


def write_example(name: str, path: str | Path) -> Path:
    """Write the bundled example ``name`` to ``path``, in the format its suffix names.

    Raises
    ------
    InvalidParameterError
        If ``name`` is not an example or the suffix is not a known format.
    """
    _check_name(name)
    target = Path(path)
    writer = _FORMATS.get(target.suffix.lower())
    if writer is None:
        raise InvalidParameterError(
            f"cannot write {target.name!r}: the suffix must be one of {', '.join(_FORMATS)}"
        )
    frame = EXAMPLES[name][0]()
    getattr(frame, writer)(target)
    return target


def _run(args: argparse.Namespace) -> None:
    if args.name is None:
        width = max(map(len, EXAMPLES))
        for name, (_, about) in EXAMPLES.items():
            print(f"{name:<{width}}  {about}")
        return
    _check_name(args.name)
    if args.output is None:
        frame = EXAMPLES[args.name][0]()
        print(f"{args.name}: {frame.height:,} rows")
        print(frame.head(5))
        print("write it with --output FILE (.csv, .parquet, .json, .ndjson or .ipc)")
        return
    path = write_example(args.name, args.output)
    say(f"wrote {path}")


def add_command(commands: Any) -> None:
    """Register ``cumdev datasets``."""
    parser = commands.add_parser(
        "datasets",
        help="list the bundled example data, or write one to a file",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument(
        "name", nargs="?", default=None, metavar="NAME", help="an example (none: list them)"
    )
    parser.add_argument(
        "--output",
        "-o",
        default=None,
        metavar="FILE",
        help="write the example here; the suffix picks the format (.csv, .parquet, ...)",
    )
    parser.set_defaults(run=_run)
