"""Model kinds as a discriminated union on ``name`` (SQLMesh's spelling, upper case).

Every field of a kind is data-affecting and therefore part of the fingerprint, except the ones listed in
``METADATA_KIND_FIELDS`` (they change how work is batched, not what the table contains).
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from dagster_sparkmesh.records import Record

OnDestructiveChange = Literal["error", "warn", "allow"]

# Kind fields that only change scheduling; kept out of the data hash, included in the metadata hash.
METADATA_KIND_FIELDS = frozenset({"batch_size", "lookback"})


class FullKind(Record):
    name: Literal["FULL"] = "FULL"


class ViewKind(Record):
    name: Literal["VIEW"] = "VIEW"
    materialized: bool = False


class IncrementalByTimeRangeKind(Record):
    name: Literal["INCREMENTAL_BY_TIME_RANGE"] = "INCREMENTAL_BY_TIME_RANGE"
    time_column: str
    time_column_format: str = "yyyy-MM-dd"
    lookback: int = 0
    batch_size: int | None = None
    forward_only: bool = False
    disable_restatement: bool = False
    on_destructive_change: OnDestructiveChange = "error"


class IncrementalByUniqueKeyKind(Record):
    name: Literal["INCREMENTAL_BY_UNIQUE_KEY"] = "INCREMENTAL_BY_UNIQUE_KEY"
    unique_key: tuple[str, ...]
    batch_size: int | None = None
    forward_only: bool = False
    disable_restatement: bool = False
    on_destructive_change: OnDestructiveChange = "error"


class SeedKind(Record):
    name: Literal["SEED"] = "SEED"
    path: str
    """Path of the CSV file, relative to the model file's folder (as SQLMesh resolves it)."""


class EmbeddedKind(Record):
    name: Literal["EMBEDDED"] = "EMBEDDED"


class ExternalKind(Record):
    name: Literal["EXTERNAL"] = "EXTERNAL"


ModelKind = Annotated[
    Union[
        FullKind,
        ViewKind,
        IncrementalByTimeRangeKind,
        IncrementalByUniqueKeyKind,
        SeedKind,
        EmbeddedKind,
        ExternalKind,
    ],
    Field(discriminator="name"),
]

INCREMENTAL_KINDS = frozenset({"INCREMENTAL_BY_TIME_RANGE", "INCREMENTAL_BY_UNIQUE_KEY"})
# Kinds whose physical layer is a table that we write (EMBEDDED and EXTERNAL have no physical layer).
MATERIALIZED_KINDS = frozenset({"FULL", "VIEW", "INCREMENTAL_BY_TIME_RANGE", "INCREMENTAL_BY_UNIQUE_KEY", "SEED"})
