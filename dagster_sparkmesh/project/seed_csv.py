"""How a seed file becomes cells under its kind's ``csv_settings``, as ``pandas.read_csv`` reads it for SQLMesh:
the text decoded, split into records and fields, and the markers each column reads as missing."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.seed_settings import CsvSettings

PANDAS_MISSING_MARKERS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA",
    "NULL", "NaN", "None", "n/a", "nan", "null",
})
"""pandas' default ``na_values``: what ``read_csv`` reads as missing (compared with the whole cell, as pandas does)."""
# A custom line terminator makes '\n' and '\r' data: they stand in as characters no CSV holds while the csv module,
# which ends records at them, splits the text.
_NEWLINE_STANDINS = {"\n": "\ue000", "\r": "\ue001"}


def decode_seed(csv_path: Path, data: bytes, settings: CsvSettings | None) -> str:
    """The file's text. SQLMesh always reads a seed as UTF-8 (its ``encoding`` reaches pandas with the text, where
    it changes nothing): a file that is UTF-8 reads so whatever the setting; one that is not is read with the
    encoding it names, where SQLMesh would fail."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        if settings is not None and settings.encoding is not None:
            return _decode_with(csv_path, data, settings.encoding)
        raise _not_utf8(csv_path, data, error) from error


def _decode_with(csv_path: Path, data: bytes, encoding: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        raise _not_utf8(csv_path, data, error, encoding) from error


def _not_utf8(csv_path: Path, data: bytes, error: UnicodeDecodeError, encoding: str | None = None) -> ProjectError:
    line = data[: error.start].count(b"\n") + 1
    col = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    bad = data.splitlines()[line - 1] if data.splitlines() else b""
    return ProjectError(
        f"seed file is not valid {'UTF-8' if encoding is None else f'UTF-8 nor {encoding}'} (byte 0x{data[error.start]:02x})",
        path=csv_path,
        line=line,
        col=col,
        snippet=bad.decode("utf-8", errors="replace"),
        hint="re-save the CSV as UTF-8" if encoding is None else "check the encoding in csv_settings, or re-save the CSV as UTF-8",
    )


class SeedRecords:
    """The file's records as lists of fields; ``line_num`` is the record terminator count read so far."""

    def __init__(self, text: str, settings: CsvSettings | None) -> None:
        self._standins = settings is not None and settings.lineterminator not in (None, "\n", "\r")
        if self._standins:
            assert settings is not None and settings.lineterminator is not None
            for newline, standin in _NEWLINE_STANDINS.items():
                text = text.replace(newline, standin)
            text = text.replace(settings.lineterminator, "\n")
        self._reader = csv.reader(io.StringIO(text, newline=""), **_dialect(settings))

    @property
    def line_num(self) -> int:
        return self._reader.line_num

    def __iter__(self) -> Iterator[list[str]]:
        for row in self._reader:
            yield [_restore_newlines(cell) for cell in row] if self._standins else row


def _restore_newlines(cell: str) -> str:
    for newline, standin in _NEWLINE_STANDINS.items():
        cell = cell.replace(standin, newline)
    return cell


def _dialect(settings: CsvSettings | None) -> dict[str, object]:
    """The csv module's parameters of the settings (they are named as pandas names them)."""
    if settings is None:
        return {}
    given = {
        "delimiter": settings.delimiter, "quotechar": settings.quotechar, "doublequote": settings.doublequote,
        "escapechar": settings.escapechar, "skipinitialspace": settings.skipinitialspace,
    }
    return {key: value for key, value in given.items() if value is not None}


def column_markers(header: list[str], settings: CsvSettings | None) -> list[frozenset[str]]:
    """The cells each column (by its header cell as written) reads as missing, by pandas' rules: the defaults
    unless ``keep_default_na`` is false, plus the ``na_values`` of every column, plus the column's own."""
    if settings is None:
        return [PANDAS_MISSING_MARKERS] * len(header)
    defaults = PANDAS_MISSING_MARKERS if settings.keep_default_na is not False else frozenset()
    shared = frozenset(settings.na_values or ())
    own = dict(settings.column_na_values or ())
    return [defaults | shared | frozenset(own.get(name, ())) for name in header]
