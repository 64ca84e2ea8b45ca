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


class IncrementalByPartitionKind(Record):
    """Each run replaces exactly the partitions (the model's ``partitioned_by`` values, required) its rows hold.

    Always forward-only, as in SQLMesh; restating it rebuilds the whole table (no time range to rewrite)."""

    name: Literal["INCREMENTAL_BY_PARTITION"] = "INCREMENTAL_BY_PARTITION"
    forward_only: Literal[True] = True
    disable_restatement: bool = False
    on_destructive_change: OnDestructiveChange = "error"


class IncrementalUnmanagedKind(Record):
    """Each run appends the query's rows (``insert_overwrite``: replaces the partitions they hold instead).

    Forward-only and never restated by default, as in SQLMesh: appended history cannot be recomputed."""

    name: Literal["INCREMENTAL_UNMANAGED"] = "INCREMENTAL_UNMANAGED"
    insert_overwrite: bool = False
    forward_only: bool = True
    disable_restatement: bool = True
    on_destructive_change: OnDestructiveChange = "error"


class _ScdType2Fields(Record):
    """What both SCD type 2 kinds share: the table keeps every version of a key, open ones with valid_to NULL."""

    unique_key: tuple[str, ...]
    valid_from_name: str = "valid_from"
    valid_to_name: str = "valid_to"
    invalidate_hard_deletes: bool = False
    """Close the open version of a key that vanished from the source (else it stays open)."""
    disable_restatement: bool = False


class ScdType2ByTimeKind(_ScdType2Fields):
    """A key gets a new version when its ``updated_at`` grows; the new version is valid from that time."""

    name: Literal["SCD_TYPE_2_BY_TIME"] = "SCD_TYPE_2_BY_TIME"
    updated_at_name: str = "updated_at"


class ScdType2ByColumnKind(_ScdType2Fields):
    """A key gets a new version when one of ``columns`` changes; the new version is valid from the execution time."""

    name: Literal["SCD_TYPE_2_BY_COLUMN"] = "SCD_TYPE_2_BY_COLUMN"
    columns: tuple[str, ...]
    """The tracked columns; ``("*",)`` tracks every column but the key."""


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
        IncrementalByPartitionKind,
        IncrementalUnmanagedKind,
        ScdType2ByTimeKind,
        ScdType2ByColumnKind,
        SeedKind,
        EmbeddedKind,
        ExternalKind,
    ],
    Field(discriminator="name"),
]

KIND_ALIASES = {"SCD_TYPE_2": "SCD_TYPE_2_BY_TIME"}
"""Other names SQLMesh accepts for a kind (``SCD_TYPE_2`` is its older name of ``SCD_TYPE_2_BY_TIME``)."""

INCREMENTAL_KINDS = frozenset({"INCREMENTAL_BY_TIME_RANGE", "INCREMENTAL_BY_UNIQUE_KEY"})
# Incremental kinds not tied to time: no Dagster time partitions, no time batches (one write per run).
UNTIMED_INCREMENTAL_KINDS = frozenset({"INCREMENTAL_BY_PARTITION", "INCREMENTAL_UNMANAGED"})
# History kinds: each run merges the query's current rows into the kept history (unpartitioned, never by time).
SCD_TYPE_2_KINDS = frozenset({"SCD_TYPE_2_BY_TIME", "SCD_TYPE_2_BY_COLUMN"})
# Kinds whose physical layer is a table that we write (EMBEDDED and EXTERNAL have no physical layer).
MATERIALIZED_KINDS = frozenset(
    {"FULL", "VIEW", "INCREMENTAL_BY_TIME_RANGE", "INCREMENTAL_BY_UNIQUE_KEY", "SEED"}
    | SCD_TYPE_2_KINDS
    | UNTIMED_INCREMENTAL_KINDS
)
