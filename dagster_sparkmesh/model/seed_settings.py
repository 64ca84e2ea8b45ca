"""A SEED kind's ``csv_settings``: how its CSV file is read, as SQLMesh hands them to ``pandas.read_csv``.

Only settings that differ from pandas' defaults are kept, and the marker lists are sorted, so that two ways of
writing the same reading are one record (and one fingerprint): the record is part of the kind's data hash.
"""

from __future__ import annotations

from pydantic import field_validator

from dagster_sparkmesh.records import Record

PANDAS_DEFAULTS: dict[str, object] = {
    "delimiter": ",", "quotechar": '"', "doublequote": True, "escapechar": None, "skipinitialspace": False,
    "lineterminator": None, "encoding": "utf-8", "keep_default_na": True,
}
"""What ``read_csv`` does when a setting is not given: such a setting is dropped from the record."""
ColumnMarkers = tuple[tuple[str, tuple[str, ...]], ...]


class CsvSettings(Record):
    delimiter: str | None = None
    quotechar: str | None = None
    doublequote: bool | None = None
    escapechar: str | None = None
    skipinitialspace: bool | None = None
    lineterminator: str | None = None
    encoding: str | None = None
    """The codec's canonical name (``latin-1`` → ``iso8859-1``)."""
    na_values: tuple[str, ...] | None = None
    """Markers read as missing in every column, beside pandas' own unless ``keep_default_na`` is false."""
    column_na_values: ColumnMarkers | None = None
    """(CSV header cell, markers) pairs: the ``na_values = (col := [...])`` form, markers of those columns only."""
    keep_default_na: bool | None = None

    @field_validator("na_values", mode="after")
    @classmethod
    def _sorted_markers(cls, markers: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return tuple(sorted(set(markers))) if markers is not None else None

    @field_validator("column_na_values", mode="after")
    @classmethod
    def _sorted_columns(cls, pairs: ColumnMarkers | None) -> ColumnMarkers | None:
        if pairs is None:
            return None
        return tuple(sorted((column, tuple(sorted(set(markers)))) for column, markers in pairs))


def canonical_csv_settings(written: dict[str, object]) -> CsvSettings | None:
    """The record of the settings as written, without those pandas' defaults already give; None when none is left
    (a seed that spells out the defaults reads, and hashes, as one without settings)."""
    kept = {key: value for key, value in written.items() if value is not None and PANDAS_DEFAULTS.get(key, ...) != value}
    return CsvSettings(**kept) if kept else None
