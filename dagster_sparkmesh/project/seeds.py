"""Seeds: CSV files loaded as tables. Parsed and type-checked here, in pure Python, so that a bad file is a
project error at load time (with its line) rather than a Spark failure in the middle of a run.

Declared column types win; other columns get the type SQLMesh's pandas reads them with (empty cells are NULL;
whole numbers with one are DOUBLE, dates are text).
A cell holding one of the markers pandas reads as missing by default (``NA``, ``N/A``, ``NULL``, ``nan``, ...) is
NULL too, as SQLMesh (which reads seeds with pandas) loads it, quoted or not and whatever the column's type.
The kind's ``csv_settings`` change how the file is split and which cells are missing (``project.seed_csv``).
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.seed_settings import CsvSettings
from dagster_sparkmesh.project.externals import spark_type
from dagster_sparkmesh.project.seed_csv import SeedRecords, column_markers, decode_seed
from dagster_sparkmesh.records import Record

_INT = re.compile(r"^[+-]?\d+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_BOOLEANS = {"true": True, "false": False}
_PANDAS_BOOLEANS = frozenset({"True", "TRUE", "true", "False", "FALSE", "false"})
"""The cells pandas reads as booleans (its default ``true_values`` and ``false_values``)."""
_MARKERS_READ_AS_NULL = b"seed cells read as NULL: pandas' markers\0"


class SeedData(Record):
    """A seed ready to load: (column, Spark type) pairs and rows of Python values of those types."""

    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[Any, ...], ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)


@dataclass(frozen=True)
class _Table:
    """The raw cells of a CSV file, with the file line of each record (quoted fields may span lines)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]
    """The cells, None where a column's missing marker (the empty cell by default) was."""
    lines: tuple[int, ...]
    blank_is_missing: tuple[bool, ...]
    """Per column, whether an empty cell is missing (pandas' default), so that a blank one is too."""
    marked: bool = False
    """Whether a cell held a missing marker other than the empty cell."""


def seed_content_hash(csv_path: Path, settings: CsvSettings | None = None) -> str:
    """sha256 of the file's bytes: any edit of the seed changes the model's data hash. A file with cells that are
    missing markers is hashed with a salt: its rows changed when those cells began to be read as NULL, so a table
    written before holds other rows and its version must not be reused; other files keep their hash."""
    csv_path = Path(csv_path).resolve()
    data = _read_bytes(csv_path)
    salt = _MARKERS_READ_AS_NULL if _parse(csv_path, settings).marked else b""
    return hashlib.sha256(salt + data).hexdigest()


def seed_columns(
    csv_path: Path, declared: Iterable[tuple[str, str]] | Mapping[str, str] = (), settings: CsvSettings | None = None
) -> tuple[tuple[str, str], ...]:
    """(column, Spark type) for every CSV column: the declared type if any, else the type inferred from values.

    Reads and checks the whole file, so every error a load would hit is raised here.
    """
    return read_seed(csv_path, declared, settings).columns


def read_seed(
    csv_path: Path, columns: Iterable[tuple[str, str]] | Mapping[str, str] = (), settings: CsvSettings | None = None
) -> SeedData:
    """The seed's rows converted to Python values of the column types (``columns`` are the declared ones)."""
    csv_path = Path(csv_path).resolve()  # errors name the file without the model folder's '..'
    table, typed_columns, converters = _typed(csv_path, columns, settings)
    rows = []
    for cells, line in zip(table.rows, table.lines):
        rows.append(tuple(_convert(csv_path, line, index, cells, typed_columns, converters) for index in range(len(cells))))
    return SeedData.model_construct(columns=typed_columns, rows=tuple(rows))


def _typed(
    csv_path: Path, declared: Iterable[tuple[str, str]] | Mapping[str, str], settings: CsvSettings | None
) -> tuple[_Table, tuple[tuple[str, str], ...], list[Callable[[str], Any]]]:
    """The parsed file, its (column, type) pairs and how each column's cells become values."""
    table = _parse(csv_path, settings)
    declared_types = _declared(csv_path, declared, table.header)
    columns, converters = [], []
    for index, name in enumerate(table.header):
        if name in declared_types:
            kind, converter = declared_types[name], _converter(declared_types[name])
        else:
            values = [row[index] for row in table.rows]
            blank_is_missing = table.blank_is_missing[index]
            kind = _infer(values, blank_is_missing)
            converter = _inferred_converter(values, blank_is_missing) if kind == "STRING" else _converter(kind)
        columns.append((name, kind))
        converters.append(converter)
    return table, tuple(columns), converters


def _declared(csv_path: Path, declared: Iterable[tuple[str, str]] | Mapping[str, str], header: tuple[str, ...]) -> dict[str, str]:
    pairs = declared.items() if isinstance(declared, Mapping) else declared
    result = {name.lower(): spark_type(kind, path=csv_path) for name, kind in pairs}
    missing = [name for name in result if name not in header]
    if missing:
        raise ProjectError(
            f"declared column(s) {', '.join(missing)} not in the CSV header",
            path=csv_path,
            line=1,
            snippet=",".join(header),
            hint="declare only columns of the CSV header, or add them to the file",
        )
    return result


def _read_bytes(csv_path: Path) -> bytes:
    try:
        return csv_path.read_bytes()
    except FileNotFoundError as error:
        raise ProjectError(
            f"seed file {csv_path.name} does not exist", path=csv_path, hint="check the seed path (relative to the model file)"
        ) from error
    except IsADirectoryError as error:
        raise ProjectError(f"seed path {csv_path.name} is a folder, not a CSV file", path=csv_path) from error


def _parse(csv_path: Path, settings: CsvSettings | None) -> _Table:
    text = decode_seed(csv_path, _read_bytes(csv_path), settings)
    if not text.strip():
        raise ProjectError("seed file is empty", path=csv_path, hint="add a header row and data rows")
    reader = SeedRecords(text, settings)
    records_of_file = iter(reader)
    try:
        header = next(records_of_file)
        records = [(row, reader.line_num) for row in records_of_file if row]
    except csv.Error as error:
        raise ProjectError(f"malformed CSV: {error}", path=csv_path, line=reader.line_num) from error
    header_names = _header(csv_path, header)
    for row, line in records:
        if len(row) != len(header_names):
            raise ProjectError(
                f"row has {len(row)} field(s) but the header has {len(header_names)}",
                path=csv_path,
                line=line,
                snippet=_source_line(text, line),
                hint="every row needs one value per header column (quote values that contain commas)",
            )
    markers = column_markers(header, settings)
    rows = tuple(tuple(None if cell in markers[index] else cell for index, cell in enumerate(row)) for row, _ in records)
    marked = any(cell and cell in markers[index] for row, _ in records for index, cell in enumerate(row))
    blank_is_missing = tuple("" in column for column in markers)
    return _Table(header_names, rows, tuple(line for _, line in records), blank_is_missing, marked)


def _header(csv_path: Path, header: list[str]) -> tuple[str, ...]:
    names = [cell.strip().lower() for cell in header]
    snippet = ",".join(header)
    if not any(names) or any(_INT.match(name) or _DATE.match(name) for name in names):
        raise ProjectError(
            "seed file has no header row",
            path=csv_path,
            line=1,
            snippet=snippet,
            hint="the first line must name the columns, e.g. id,name,ds",
        )
    # A column without a name (pandas' ``to_csv`` writes its index so) is named as SQLMesh's pandas names it.
    names = [name or f"unnamed: {index}" for index, name in enumerate(names)]
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            raise ProjectError(
                f"duplicate column {name!r} in the header",
                path=csv_path,
                line=1,
                col=_column_offset(header, index),
                snippet=snippet,
                hint="column names must be unique (case-insensitively)",
            )
        seen.add(name)
    return tuple(names)


def _present(values: list[str | None], blank_is_missing: bool) -> list[str]:
    """The cells that are not missing, stripped: a blank cell is missing where an empty one is (pandas' numbers
    ignore spaces), and text where the settings keep the empty cell (``keep_default_na = false``)."""
    if blank_is_missing:
        return [value.strip() for value in values if value is not None and value.strip()]
    return [value.strip() for value in values if value is not None]


def _infer(values: list[str | None], blank_is_missing: bool = True) -> str:
    """The type SQLMesh's pandas gives a column of these cells: whole numbers int64 (BIGINT) and booleans bool only
    when no cell is missing (a missing one makes them float64 and object), numbers float64 (DOUBLE), a column of
    missing cells float64, and text for the rest: pandas parses no dates, so dates and timestamps stay text."""
    present = _present(values, blank_is_missing)
    if not values:
        return "STRING"
    if not present:
        return "DOUBLE"
    complete = len(present) == len(values)
    if all(_INT.match(value) for value in present):
        return "BIGINT" if complete else "DOUBLE"  # BIGINT: a user's ids times ten overflowed an INT
    if all(_is_float(value) for value in present):
        return "DOUBLE"
    if complete and all(value in _PANDAS_BOOLEANS for value in present):
        return "BOOLEAN"
    return "STRING"


def _inferred_converter(values: list[str | None], blank_is_missing: bool = True) -> Callable[[str], Any]:
    """How an inferred text column's cells are written: booleans with missing cells as DuckDB writes pandas' True
    and False as text (``true``, ``false``); any other text as it is."""
    present = _present(values, blank_is_missing)
    if present and all(value in _PANDAS_BOOLEANS for value in present):
        return str.lower
    return str


def _is_float(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return value.lower() not in {"nan", "inf", "-inf", "+inf", "infinity", "-infinity"}


def _converter(spark_type_text: str) -> Callable[[str], Any]:
    kind = exp.DataType.build(spark_type_text, dialect="spark").this
    types = exp.DataType.Type
    if kind in {types.TINYINT, types.SMALLINT, types.INT, types.BIGINT}:
        return _to_int
    if kind in {types.FLOAT, types.DOUBLE}:
        return float
    if kind == types.DECIMAL:
        return Decimal
    if kind == types.BOOLEAN:
        return _to_bool
    if kind == types.DATE:
        return date.fromisoformat
    if kind in {types.TIMESTAMP, types.TIMESTAMPTZ, types.TIMESTAMPNTZ, types.TIMESTAMPLTZ}:
        return datetime.fromisoformat
    return str


def _to_int(value: str) -> int:
    if not _INT.match(value):
        raise ValueError(value)
    return int(value)


def _to_bool(value: str) -> bool:
    return _BOOLEANS[value.lower()]


def _convert(
    csv_path: Path,
    line: int,
    index: int,
    cells: tuple[str | None, ...],
    columns: tuple[tuple[str, str], ...],
    converters: list[Callable[[str], Any]],
) -> Any:
    raw = cells[index]
    name, kind = columns[index]
    if raw is None:
        return None
    if converters[index] is str:
        return raw  # strings keep their spaces: trimming is the models' business
    value = raw.strip()
    if not value:
        return None
    try:
        return converters[index](value)
    except (ValueError, KeyError, InvalidOperation) as error:
        raise ProjectError(
            f"value {raw!r} of column {name} is not a valid {kind}",
            path=csv_path,
            line=line,
            col=_column_offset(cells, index),
            snippet=",".join(cell or "" for cell in cells),
            hint=f"fix the value or declare column {name} with another type",
        ) from error


def _column_offset(cells: list[str] | tuple[str | None, ...], index: int) -> int:
    """1-based character column of a field, assuming unquoted fields (good enough to find it in an editor)."""
    return sum(len(cell or "") + 1 for cell in cells[:index]) + 1


def _source_line(text: str, line: int) -> str | None:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None
