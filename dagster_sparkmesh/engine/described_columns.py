"""A table's columns as ``DESCRIBE TABLE`` lists them: one SQL statement, about a third of what the catalog API's
``listColumns`` costs for the same answer (measured 0.08-0.2 s against 0.3-0.7 s per table in a local session);
every interval write into a period table asks once per process."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_PARTITION_SECTION = "# Partition Information"
_FIXED_LENGTH_STRING = re.compile(r"\b(?:var)?char\(\d+\)", re.IGNORECASE)
_PADDED_STRING = re.compile(r"\bchar\(\d+\)", re.IGNORECASE)


@dataclass(frozen=True)
class CatalogColumn:
    name: str
    data_type: str
    """Spark's type, as the catalog API reports it (``varchar(n)`` and ``char(n)`` are ``string`` there too)."""
    is_partition: bool
    comment: str | None
    padded: bool = False
    """A ``char(n)`` (also inside a struct or array): the table pads the strings written into it to n characters."""


def columns_from_describe(rows: Iterable[tuple[str, str, str | None]]) -> list[CatalogColumn]:
    """The (name, type, comment) rows of ``DESCRIBE TABLE`` as columns in table order: the rows before the first
    ``#`` section, each marked as a partition column when the partition section names it."""
    columns: list[tuple[str, str, str | None]] = []
    partitions: set[str] = set()
    section = "columns"
    for name, data_type, comment in rows:
        if _is_header(name, data_type):
            if name != "# col_name":
                section = "partitions" if name == _PARTITION_SECTION else "other"
            continue
        if section == "columns":
            columns.append((name, data_type, comment))
        elif section == "partitions":
            partitions.add(name)
    return [
        CatalogColumn(name, plain_string_type(data_type), name in partitions, comment or None, pads_strings(data_type))
        for name, data_type, comment in columns
    ]


def plain_string_type(data_type: str) -> str:
    """A type with ``varchar(n)`` and ``char(n)`` as ``string``, as the catalog API reports them."""
    return _FIXED_LENGTH_STRING.sub("string", data_type)


def pads_strings(data_type: str) -> bool:
    """The type holds a ``char(n)``, which pads what is written into it (a ``varchar(n)`` keeps it as it is)."""
    return _PADDED_STRING.search(data_type) is not None


def _is_header(name: str, data_type: str) -> bool:
    """A section's title (``# Partition Information``, type empty), its column titles (``# col_name``, type
    ``data_type``) or a blank row; a column whose name starts with ``#`` has a real type."""
    return not name or (name.startswith("#") and data_type in ("", "data_type"))
