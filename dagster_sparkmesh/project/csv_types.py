"""The column types DuckDB's CSV sniffer gives a file (``READ_CSV('f.csv', header = true)``), read by Python.

Spark's ``inferSchema`` types a CSV differently: whole numbers are INT where they fit (DuckDB's are BIGINT, so
``id * 10`` overflows on Spark), and codes written with leading zeros (``007``, zip codes, account numbers) become
the number 7, where DuckDB keeps the text: a filter or a join on the code then silently matches nothing. So a CSV
read is rendered as a read of text (``inferSchema`` false) with each column cast to the type found here, from the
file's first ``SAMPLE_ROWS`` rows, as DuckDB samples them: the first of BOOLEAN (true/false/t/f), BIGINT, DOUBLE,
DATE, TIMESTAMP (with an offset too: an instant, as DuckDB's TIMESTAMP WITH TIME ZONE) that every value of the
column reads as, else STRING; a number with a leading zero or a sign ``+``
is text, as DuckDB's sniffer reads it; a column without values is STRING.

Dates and timestamps are the ISO forms only (DuckDB also guesses other date formats; those stay text here).
"""

from __future__ import annotations

import csv
import itertools
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

SAMPLE_ROWS = 20_480
"""DuckDB's default ``sample_size``."""

_INTEGER = re.compile(r"^-?(0|[1-9]\d*)$")
_DOUBLE = re.compile(r"^-?(0|[1-9]\d*)?(\.\d*)?([eE][+-]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$")
"""ISO timestamps, also with an offset: DuckDB's TIMESTAMP WITH TIME ZONE, an instant, as Spark's TIMESTAMP is."""
_BOOLEANS = frozenset({"true", "false", "t", "f"})
_CACHE: dict[tuple, tuple[tuple[str, str], ...] | None] = {}


@dataclass(frozen=True)
class CsvDialect:
    """How a file is written: Spark's ``sep``, ``quote`` and ``nullValue`` options (DuckDB's defaults)."""

    delimiter: str = ","
    quote: str = '"'
    null_value: str = ""


def sniffed_columns(path: Path, dialect: CsvDialect) -> tuple[tuple[str, str], ...] | None:
    """(header name, Spark type) of each column of the file, or None when it cannot be read here (missing, not a
    local file, a header without a name or with a name twice): Spark's own inference then."""
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_size, stat.st_mtime_ns, dialect)
    if key not in _CACHE:
        _CACHE[key] = _sniffed(path, dialect)
    return _CACHE[key]


def _sniffed(path: Path, dialect: CsvDialect) -> tuple[tuple[str, str], ...] | None:
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            reader = csv.reader(file, delimiter=dialect.delimiter, quotechar=dialect.quote, doublequote=True)
            header = next(reader, None)
            rows = list(itertools.islice(reader, SAMPLE_ROWS))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    names = [name.strip() for name in header or ()]
    if not names or not all(names) or len({name.lower() for name in names}) != len(names):
        return None
    columns = [[row[index].strip() for row in rows if index < len(row)] for index in range(len(names))]
    return tuple(
        (name, column_type([value for value in values if value and value != dialect.null_value]))
        for name, values in zip(names, columns)
    )


def column_type(values: list[str]) -> str:
    """The type DuckDB's sniffer gives a column of these (non-empty) values."""
    if not values:
        return "STRING"
    if all(value.lower() in _BOOLEANS for value in values):
        return "BOOLEAN"
    if all(_INTEGER.match(value) and -(2**63) <= int(value) < 2**63 for value in values):
        return "BIGINT"
    if all(_DOUBLE.match(value) and any(c.isdigit() for c in value) for value in values):
        return "DOUBLE"
    if all(_DATE.match(value) and _parses(date.fromisoformat, value) for value in values):
        return "DATE"
    if all(_TIMESTAMP.match(value) and _parses(date.fromisoformat, value[:10]) for value in values):
        return "TIMESTAMP"
    return "STRING"


def _parses(parse, value: str) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


def first_row(path: Path, dialect: CsvDialect) -> list[str] | None:
    """The file's first row, or None when it cannot be read here."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            return next(csv.reader(file, delimiter=dialect.delimiter, quotechar=dialect.quote, doublequote=True), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None


def is_header(row: list[str], declared: list[tuple[str, str]]) -> bool:
    """Whether a first row is a header where ``columns = {...}`` declares the columns, as DuckDB sniffs it: a value
    that is no value of its column's type, or the declared names themselves."""
    values = [value.strip() for value in row]
    if [value.lower() for value in values] == [name.lower() for name, _ in declared]:
        return True
    return not all(_fits(value, data_type) for value, (_, data_type) in zip(values, declared))


def _fits(value: str, data_type: str) -> bool:
    kind = data_type.upper().split("(")[0]
    if not value or kind in ("STRING", "VARCHAR", "CHAR"):
        return True
    if kind in ("BIGINT", "INT", "SMALLINT", "TINYINT"):
        return bool(re.match(r"^[+-]?\d+$", value))
    if kind in ("DOUBLE", "FLOAT", "DECIMAL"):
        return bool(_DOUBLE.match(value.lstrip("+"))) and any(c.isdigit() for c in value)
    if kind == "BOOLEAN":
        return value.lower() in _BOOLEANS
    if kind == "DATE":
        return bool(_DATE.match(value)) and _parses(date.fromisoformat, value)
    if kind.startswith("TIMESTAMP"):
        return bool(_TIMESTAMP.match(value) or _DATE.match(value))
    return True
