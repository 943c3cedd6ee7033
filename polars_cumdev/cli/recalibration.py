"""``cumdev recalibrate`` and ``cumdev apply``: fit the fix the audit proves, and apply it.

``cumdev recalibrate PATH --score p --response y --categorical a,b --numerical x
--output fix.json`` fits :func:`polars_cumdev.recalibration.recalibrate` (without
features, on the full population alone; ``--target mean`` for predicted means), prints
its table of corrections (with the evidence of each) and how the fitting
stopped, and writes the JSON file. ``cumdev apply fix.json PATH --output
scored.parquet`` reads the file back and writes the data with the recalibrated
score added, streaming; neither ever writes over its input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from polars_cumdev.cli.arguments import data_arguments, level_value, positive_int
from polars_cumdev.cli.input import check_columns, check_out, read_columns, scan
from polars_cumdev.cli.output import say, show
from polars_cumdev.errors import CumdevError

__all__ = ["add_commands"]

_WRITTEN = (".parquet", ".csv", ".ipc", ".arrow", ".ndjson")


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _recalibrate(args: argparse.Namespace) -> None:
    import polars_cumdev as pc
    from polars_cumdev.recalibration import recalibrate

    target = check_out(args.output, (".json",), source=args.path)
    categorical, numerical = _names(args.categorical), _names(args.numerical)
    frame = read_columns(args.path, args.score, args.response, args.weight)
    family = None  # no feature named: the full population alone is audited
    audited = "the full population only (no --categorical or --numerical)"
    if categorical or numerical:
        family = pc.segments(
            categorical, numerical, depth=args.depth, levels=args.levels, min_rows=args.min_rows
        )
        audited = f"audit depth {args.depth}"
    say(f"fitting the recalibration of {args.target}s ({audited}, method {args.method}) ...")
    fix = recalibrate(
        frame,
        args.score,
        args.response,
        args.weight,
        segments=family,
        level=args.level,
        method=args.method,
        folds=args.folds,
        shrinkage=args.shrinkage,
        max_corrections=args.max_corrections,
        seed=args.seed,
        target=args.target,
    )
    facts = dict(fix.fitting)
    steps = len(fix.corrections) + (fix.monotone is not None)
    print(
        f"{steps} correction(s) at family-wise level {args.level:g}; stopped after "
        f"{facts['rounds']} round(s): {facts['stopped']} (cross-fitted scores: largest z "
        f"{facts['crossfit_max_z']:.3f}, smallest p_family {facts['crossfit_min_p_family']:.3g})"
    )
    if steps:
        show(fix.table, list(fix.table.columns), args.rows)
    else:
        print("no segment is miscalibrated family-wise: the fix is the identity")
    if target is None:
        print(fix.to_json())
    else:
        target.write_text(fix.to_json() + "\n", encoding="utf-8")
        say(f"wrote {target}")


def _apply(args: argparse.Namespace) -> None:
    from polars_cumdev.recalibration import Recalibration

    target = check_out(args.output, _WRITTEN, source=args.path)
    if target is None:  # required by the parser; kept for type checkers
        raise CumdevError("--output is required")
    if Path(args.fix).resolve() == target.resolve():
        raise CumdevError(f"cannot write {args.output}: it is the fix file {args.fix}")
    try:
        text = Path(args.fix).read_text(encoding="utf-8")
    except OSError as exc:
        raise CumdevError(f"cannot read {args.fix}: {exc.strerror or exc}") from None
    fix = Recalibration.from_json(text)
    frame = scan(args.path)
    check_columns(frame, args.path, [fix.score])
    scored = fix.apply(frame, args.name)
    say(f"writing {target} ...")
    suffix = target.suffix.lower()
    if suffix == ".parquet":
        scored.sink_parquet(target)
    elif suffix == ".csv":
        scored.sink_csv(target)
    elif suffix == ".ndjson":
        scored.sink_ndjson(target)
    else:
        scored.sink_ipc(target)
    say(f"wrote {target}")


def add_commands(commands: Any) -> None:
    """Register ``recalibrate`` and ``apply`` on the subcommand parsers of ``cumdev``."""
    fit = commands.add_parser(
        "recalibrate",
        help="fit the recalibration that the multicalibration audit proves necessary",
    )
    data_arguments(fit, by=False, several=False)
    fit.add_argument(
        "--target",
        choices=("probability", "mean"),
        default="probability",
        help="what the score is: a probability (log-odds steps) or a predicted mean "
        "(steps in its own units; --method holm only)",
    )
    fit.add_argument("--categorical", default=None, help="categorical features, a,b,c")
    fit.add_argument("--numerical", default=None, help="numerical features, cut at quantiles")
    fit.add_argument("--depth", type=positive_int, default=2, help="features per segment")
    fit.add_argument(
        "--levels",
        type=positive_int,
        default=None,
        help="levels per feature (default: the audit's rule, as in `cumdev multicalibration`)",
    )
    fit.add_argument("--min-rows", type=positive_int, default=10, help="smallest segment")
    fit.add_argument("--level", type=level_value, default=0.05, help="family-wise level")
    fit.add_argument("--method", choices=("holm", "bootstrap", "stepdown"), default="holm")
    fit.add_argument("--folds", type=positive_int, default=2, help="cross-fitting folds")
    fit.add_argument("--shrinkage", type=_positive, default=1.0, help="ridge penalty of shifts")
    fit.add_argument("--max-corrections", type=positive_int, default=30, help="budget")
    fit.add_argument("--seed", type=positive_int, default=0, help="fold split's seed")
    fit.add_argument("--rows", type=positive_int, default=20, help="table rows printed")
    fit.add_argument(
        "--output", default=None, metavar="FIX.json", help="write the fix (else printed)"
    )
    fit.set_defaults(run=_recalibrate)

    apply = commands.add_parser(
        "apply", help="add the recalibrated score of a fix file to a data file"
    )
    apply.add_argument("fix", help="a fix written by `cumdev recalibrate --output`")
    apply.add_argument("path", help="a .csv, .tsv, .parquet, .ipc/.arrow or .ndjson file")
    apply.add_argument(
        "--output", required=True, metavar="FILE", help="the scored data (.parquet, .csv, ...)"
    )
    apply.add_argument("--name", default="recalibrated", help="the new column's name")
    apply.set_defaults(run=_apply)
