"""The ``cumdev`` command.

Subcommands:

* ``cumdev demo`` screens the bundled census-like data (and, with ``--out``,
  writes an HTML report and SVG charts);
* ``cumdev screen PATH`` ranks every group of a CSV, Parquet, IPC or NDJSON file;
* ``cumdev curve PATH`` (alias ``cumdev plot``) draws the drill-down of one group;
* ``cumdev calibration PATH`` measures the calibration of predicted probabilities
  (:mod:`polars_cumdev.cli.calibration`);
* ``cumdev report PATH`` writes a self-contained HTML report;
* ``cumdev paired PATH`` compares two responses of the same units
  (:mod:`polars_cumdev.cli.paired`);
* ``cumdev multicalibration PATH`` audits the calibration of every intersection
  of a few features (:mod:`polars_cumdev.cli.multicalibration`);
* ``cumdev datasets [NAME --output FILE]`` lists the bundled example data or
  writes one to a file (:mod:`polars_cumdev.cli.datasets`).

Progress goes to stderr, results to stdout; so does the one line saying that
the compiled kernel compiles (first use with an empty cache). Any problem with the input (a
missing file or column, unusable values) prints a single line
``cumdev: error: ...`` on stderr and exits with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import polars as pl

from polars_cumdev.cli.arguments import (
    CommandParser,
    score_names,
)
from polars_cumdev.cli.calibration import add_command as add_calibration_command
from polars_cumdev.cli.datasets import add_command as add_datasets_command
from polars_cumdev.cli.input import (
    check_outputs_spare_input,
    explain_polars_error,
)
from polars_cumdev.cli.multicalibration import add_command as add_multicalibration_command
from polars_cumdev.cli.paired import add_command as add_paired_command
from polars_cumdev.cli.recalibration import add_commands as add_recalibration_commands
from polars_cumdev.cli.subpopulation import add_commands as add_subpopulation_commands
from polars_cumdev.cli.terminal import visible, visible_controls
from polars_cumdev.errors import CumdevError, first_line
from polars_cumdev.progress import reporting

__all__ = ["main"]


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    from polars_cumdev import __version__

    parser = CommandParser(
        prog="cumdev",
        description=(
            "Cumulative deviation of subpopulations from the full population, and "
            "calibration of predicted probabilities, without bins."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_subpopulation_commands(commands)
    add_calibration_command(commands)
    add_paired_command(commands)
    add_multicalibration_command(commands)
    add_recalibration_commands(commands)
    add_datasets_command(commands)
    return parser


def _broken_pipe() -> int:
    """The reader of stdout went away (e.g. ``| head``): stop, say so once, exit 141.

    stdout is pointed at the null device so that Python's final flush does not
    raise again at exit (which would print a traceback-like warning).
    """
    try:
        sys.stdout.flush()
    except OSError:
        pass
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a descriptor
        pass
    print("cumdev: error: standard output was closed (broken pipe)", file=sys.stderr)
    return 128 + 13  # as a process ended by SIGPIPE


def _progress(args: argparse.Namespace) -> bool:
    """Show progress? ``--progress`` / ``--no-progress``, else whether stderr is a terminal."""
    chosen = getattr(args, "progress", None)
    if chosen is not None:
        return bool(chosen)
    return sys.stderr.isatty()


@contextmanager
def _compilation_as_one_line() -> Iterator[None]:
    """The library's log messages (the kernel's first compilation) as ``cumdev: ...`` on stderr."""
    logger = logging.getLogger("polars_cumdev")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("cumdev: %(message)s"))
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``cumdev`` command line and return the exit status.

    Parameters
    ----------
    argv
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 when the input cannot be used (a one-line message is
        printed on stderr; also when stdout is closed from the start), 141 when
        the reader of stdout goes away (broken pipe), 130 when interrupted.
    """
    import polars_cumdev  # noqa: F401  (registers the namespace)

    args = _parser().parse_args(argv)
    if sys.stdout is None or sys.stdout.closed:
        print("cumdev: error: standard output is closed; nowhere to print results", file=sys.stderr)
        return 2
    try:
        if isinstance(getattr(args, "score", None), list):  # --score given with action="append"
            args.score = score_names(args.score, args.several_scores)
        check_outputs_spare_input(args)  # every subcommand, before any work
        with reporting(_progress(args)), visible_controls(), _compilation_as_one_line():
            args.run(args)
        sys.stdout.flush()  # a closed pipe is found here, not in Python's exit
    except BrokenPipeError:
        return _broken_pipe()
    except CumdevError as exc:
        print(f"cumdev: error: {visible(first_line(exc))}", file=sys.stderr)
        return 2
    except pl.exceptions.PolarsError as exc:
        message = explain_polars_error(exc, getattr(args, "path", None))
        print(f"cumdev: error: {visible(message)}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"cumdev: error: {visible(first_line(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cumdev: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not _memory_exhausted(exc):
            raise
        print(
            "cumdev: error: out of memory (a Python allocation failed); give the process more "
            "memory, or convert the input to Parquet and screen it range by range",
            file=sys.stderr,
        )
        return 2
    return 0


def _memory_exhausted(exc: BaseException | None) -> bool:
    """Whether ``exc`` is, or was caused by, a MemoryError (Polars wraps one from a callback)."""
    for _ in range(20):
        if exc is None:
            return False
        if isinstance(exc, MemoryError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
