"""What the ``cumdev`` command reads and writes, checked in the user's terms.

Every problem found here is a :class:`~polars_cumdev.errors.CumdevError` whose
message names the file, the column, the value and, for a cell that is not a
number, its data row: the command prints it as its one line of error. Output
paths are checked before anything is computed.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from polars_cumdev.cli.output import say
from polars_cumdev.engines.files import check_parquet_files, parquet_files
from polars_cumdev.errors import CumdevError, first_line

__all__ = [
    "READERS",
    "check_columns",
    "check_out",
    "check_outputs_spare_input",
    "explain_polars_error",
    "read_columns",
    "scan",
    "selection",
]

READERS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".ipc": "ipc",
    ".arrow": "ipc",
    ".feather": "ipc",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
}
_TEXT = ("csv", "tsv")  # formats whose numbers are parsed from text
_EXAMPLES = 3  # values shown when a --subpop-value is not found
_INFER_ROWS = 10_000
# Polars' message when a text cell does not parse as the dtype inferred from
# the first rows; the cell and the row are found again by `_bad_cell`.
_PARSE_FAILURE = re.compile(r"could not parse `.*` as dtype `.*` at column '(?P<column>.+)'")


#: Leading bytes of the binary formats, to say what a misnamed file really is.
_MAGIC = {b"PAR1": ("Parquet", ".parquet"), b"ARROW1": ("Arrow IPC", ".arrow")}


def _kind(path: str) -> str | None:
    return READERS.get(Path(path).suffix.lower())


def _check_content(file: Path, kind: str | None) -> None:
    """Refuse a binary file whose name says otherwise (a Parquet file named ``.csv``).

    Reads the first bytes only: Parquet files start with ``PAR1``, Arrow IPC
    files with ``ARROW1``.
    """
    with file.open("rb") as handle:
        head = handle.read(8)
    for magic, (name, suffix) in _MAGIC.items():
        if head.startswith(magic) and READERS.get(suffix) != kind:
            raise CumdevError(
                f"{file} is a {name} file (it starts with {name}'s signature) but its name "
                f"ends in {file.suffix or 'no suffix'}; rename it to {file.stem}{suffix}"
            )


def scan(path: str, *, as_text: Sequence[str] = ()) -> pl.LazyFrame:
    """A lazy scan of ``path``, chosen by its suffix; nothing is read yet.

    ``as_text`` names columns of a CSV or TSV file to read as strings
    (to find a cell that does not parse).
    """
    file = Path(path)
    if file.is_dir() or (not file.exists() and any(ch in path for ch in "*?[")):
        return pl.scan_parquet(parquet_files(path), extra_columns="ignore")
    if not file.exists():
        raise CumdevError(f"no such file: {path}")
    if not file.is_file():
        raise CumdevError(f"not a file: {path}")
    kind = _kind(path)
    _check_content(file, kind)
    overrides = dict.fromkeys(as_text, pl.String) or None
    if kind == "parquet":
        return pl.scan_parquet(file)
    if kind in _TEXT:
        separator = "\t" if kind == "tsv" else ","
        return pl.scan_csv(
            file,
            separator=separator,
            infer_schema_length=_INFER_ROWS,
            schema_overrides=overrides,
        )
    if kind == "ipc":
        return pl.scan_ipc(file)
    if kind == "ndjson":
        return pl.scan_ndjson(file, infer_schema_length=_INFER_ROWS)
    known = ", ".join(sorted(READERS))
    suffix = f"{file.suffix!r}" if file.suffix else "(none)"
    raise CumdevError(
        f"cannot read {path}: unknown suffix {suffix}; the suffix says how to read the file, "
        f"one of {known} (a comma-separated text file is .csv)"
    )


def _bad_cell(path: str, column: str) -> str | None:
    """The message for the first cell of ``column`` that is not a number, if any.

    Reads the column of a CSV or TSV file as text; the data rows are counted
    from 1, the header not included.
    """
    text = scan(path, as_text=[column]).select(pl.col(column))
    found = (
        text.with_row_index("row", offset=1)
        .filter(
            pl.col(column).is_not_null()
            & pl.col(column).str.strip_chars().cast(pl.Float64, strict=False).is_null()
        )
        .head(1)
        .collect()
    )
    if found.height == 0:
        return None
    cell, row = found[column][0], found["row"][0]
    return f"column {column!r} of {path} could not be parsed as numbers: {cell!r} in data row {row}"


def check_columns(frame: pl.LazyFrame, path: str, numeric: Sequence[str | None]) -> None:
    """Check what can be known before computing: the file reads, has rows, holds numbers.

    ``numeric`` are the columns that must hold numbers (score, response,
    weight; None for an absent weight). A column read as text where numbers
    are needed means an empty file (only a header), a column with no value at
    all, or a cell that is not a number; each gets its own message. Anything
    else (a missing column, a wrong dtype in a typed format) is left to the
    library's checks.
    """
    try:
        schema = frame.collect_schema()
    except pl.exceptions.PolarsError as exc:
        raise CumdevError(f"cannot read {path}: {first_line(exc)}") from None
    # One column may be given twice (the same column as score and response).
    texts = list(dict.fromkeys(c for c in numeric if c is not None and schema.get(c) == pl.String))
    if not texts:
        return
    counts = frame.select(pl.len().alias("rows"), *[pl.col(c).count() for c in texts]).collect()
    if counts["rows"][0] == 0:
        raise CumdevError(f"{path} has no data rows")
    for column in texts:
        if counts[column][0] == 0:
            raise CumdevError(f"column {column!r} of {path} is empty in all data rows")
        if _kind(path) in _TEXT and (message := _bad_cell(path, column)) is not None:
            raise CumdevError(message)


def read_columns(path: str, scores: str | Sequence[str], *columns: str | None) -> pl.LazyFrame:
    """Scan ``path`` and check its score(s) and other numeric ``columns`` before computing."""
    frame = scan(path)
    say(f"reading {path} ...")
    names = [scores] if isinstance(scores, str) else list(scores)
    if Path(path).is_dir() or not Path(path).exists():  # a directory or a glob of Parquet
        check_parquet_files(parquet_files(path), [c for c in [*names, *columns] if c])
    check_columns(frame, path, [*names, *columns])
    return frame


def explain_polars_error(exc: pl.exceptions.PolarsError, path: str | None) -> str:
    """The one-line message for a Polars error raised while reading ``path``.

    A cell that does not parse as the number type Polars inferred from the
    first rows is named with its column, file and data row; any other error
    keeps the first line of Polars' message.
    """
    match = _PARSE_FAILURE.search(str(exc))
    if match is not None and path is not None and _kind(path) in _TEXT:
        try:
            message = _bad_cell(path, match["column"])
        except (CumdevError, pl.exceptions.PolarsError):
            message = None
        if message is not None:
            return message
    return first_line(exc)


def _examples(frame: pl.LazyFrame, column: str) -> str:
    values = (
        frame.select(pl.col(column).drop_nulls().unique().sort().head(_EXAMPLES + 1))
        .collect()
        .to_series()
        .to_list()
    )
    if not values:
        return "it has only nulls"
    shown = ", ".join(repr(v) for v in values[:_EXAMPLES])
    return f"it has e.g. {shown}{', ...' if len(values) > _EXAMPLES else ''}"


def selection(frame: pl.LazyFrame, column: str, value: str, path: str) -> pl.Expr:
    """The rows whose ``column`` equals ``value`` (parsed by the column's dtype).

    A null in ``column`` is not selected. The mask is aliased ``column = value``,
    which is how the library's messages name it. Whether any row has the
    value is left to the library's own check, in the same pass over the
    data; :func:`explain_empty` says it in the file's terms when it fails.
    """
    schema = frame.collect_schema()
    if column not in schema:
        raise CumdevError(
            f"subpopulation column {column!r} not found; {path} has columns {schema.names()}"
        )
    dtype = schema[column]
    col = pl.col(column)
    try:
        if dtype == pl.Boolean:
            text = value.strip().lower()
            if text not in ("true", "false", "1", "0"):
                raise ValueError(value)
            mask = col == (text in ("true", "1"))
        elif dtype.is_integer():
            mask = col == int(value)
        elif dtype.is_float():
            mask = col == float(value)
        else:
            mask = col.cast(pl.String) == value
    except ValueError:
        raise CumdevError(
            f"--subpop-value {value!r} is not a valid value of column {column!r} ({dtype})"
        ) from None
    return mask.fill_null(False).alias(f"{column} = {value}")


def explain_empty(
    frame: pl.LazyFrame, mask: pl.Expr, column: str, value: str, path: str
) -> CumdevError | None:
    """After the library found a subpopulation empty: the error naming the file's values.

    None when ``mask`` does select rows (the library's error was about
    something else, e.g. an empty file). Reads the data again, but only on
    this failure.
    """
    if frame.select(mask.any()).collect().item():
        return None
    return CumdevError(
        f"column {column!r} has no row with value {value!r} in {path} ({_examples(frame, column)})"
    )


def _same_data(target: Path, source: str) -> bool:
    """Whether writing ``target`` would overwrite the input ``source`` (or land inside it).

    Links are resolved, and hard links to one file count as the same file; a
    directory of input files (read by the partitioned and cluster engines)
    must not receive the output either.
    """
    data = Path(source)
    if not data.exists():
        return False
    resolved = target.resolve()
    if data.is_dir():
        return data.resolve() in resolved.parents
    if target.exists():
        return os.path.samefile(target, data)
    return resolved == data.resolve()


def _check_writable(path: str, target: Path) -> None:
    """Create (and remove) a file beside ``target``: the way to know it can be written."""
    if target.exists() and not os.access(target, os.W_OK):
        raise CumdevError(f"cannot write {path}: the file is not writable")
    folder = target.parent
    try:
        handle, probe = tempfile.mkstemp(prefix=".cumdev-", dir=folder)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise CumdevError(
            f"cannot write {path}: directory {folder} is not writable ({reason})"
        ) from None
    os.close(handle)
    os.unlink(probe)


def check_out(
    path: str | None,
    allowed: Sequence[str] | None,
    *,
    bare: bool = False,
    source: str | None = None,
) -> Path | None:
    """Validate an output path before any work is done.

    The suffix must be one of ``allowed`` (any suffix when ``allowed`` is
    None; no suffix at all when ``bare``), the directory must exist and be
    writable, and the output must not be the input file ``source`` (the
    same file after resolving links) nor lie inside an input directory.
    """
    if path is None:
        return None
    target = Path(path)
    suffix = target.suffix.lower()
    if allowed is not None and suffix not in allowed and not (bare and suffix == ""):
        raise CumdevError(f"cannot write {path}: the suffix must be one of {', '.join(allowed)}")
    if not target.parent.exists():
        raise CumdevError(f"cannot write {path}: no such directory {target.parent}")
    if target.is_dir():
        raise CumdevError(f"cannot write {path}: it is a directory")
    if source is not None and _same_data(target, source):
        raise CumdevError(f"cannot write {path}: it is the input {source}; choose another file")
    _check_writable(path, target)
    return target


#: Attributes of every subcommand's arguments that name a file it writes.
_OUTPUTS = ("output", "out", "report")


def _written(args: object) -> list[str]:
    """Every file a subcommand will write: its outputs, and calibration's FILE-corp beside --out."""
    paths = [p for p in (getattr(args, name, None) for name in _OUTPUTS) if isinstance(p, str)]
    out = getattr(args, "out", None)
    if getattr(args, "corp", False) and isinstance(out, str):
        target = Path(out)
        paths.append(str(target.with_name(f"{target.stem}-corp{target.suffix}")))
    return paths


def check_outputs_spare_input(args: object) -> None:
    """Refuse, before any work, an output that is the input or another output.

    The one check every subcommand runs (from :func:`polars_cumdev.cli.main`):
    an output must not be the input file (the same file after resolving
    symbolic links, ``..`` and hard links) nor lie inside an input directory,
    and two outputs must not be one file. Suffixes and writability are
    checked by each subcommand with :func:`check_out`.
    """
    source = getattr(args, "path", None)
    seen: dict[Path, str] = {}
    for path in _written(args):
        target = Path(path)
        if isinstance(source, str) and _same_data(target, source):
            raise CumdevError(f"cannot write {path}: it is the input {source}; choose another file")
        resolved = target.resolve()
        if resolved in seen:
            raise CumdevError(f"cannot write {path}: it is also the output {seen[resolved]}")
        seen[resolved] = path
