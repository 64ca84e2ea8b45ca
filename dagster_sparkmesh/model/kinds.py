"""Model kinds as a discriminated union on ``name`` (SQLMesh's spelling, upper case).

Every field of a kind is data-affecting and therefore part of the fingerprint, except the ones listed in
``METADATA_KIND_FIELDS`` (they change how work is batched, not what the table contains).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Annotated, ClassVar, Literal, Union, get_args

from pydantic import Field, PositiveInt, field_validator

from dagster_sparkmesh.model.interval_units import ScheduleCron
from dagster_sparkmesh.model.seed_settings import CsvSettings
from dagster_sparkmesh.records import Record

OnDestructiveChange = Literal["error", "warn", "allow"]
OnAdditiveChange = Literal["error", "warn", "allow", "ignore"]
"""What a forward-only change that adds columns does: alter the table (allow, warn), refuse the plan (error), or
keep the table's columns (ignore), as SQLMesh's ``on_additive_change``."""

# Kind fields that only change scheduling; kept out of the data hash, included in the metadata hash.
METADATA_KIND_FIELDS = frozenset(
    {"batch_size", "lookback", "batch_concurrency", "auto_restatement_cron", "auto_restatement_intervals"}
)

SCHEMA_CHANGE_CHOICES: dict[str, tuple[str, ...]] = {
    "on_destructive_change": get_args(OnDestructiveChange), "on_additive_change": get_args(OnAdditiveChange),
}
"""What a forward-only change may do to the table's columns: each policy's choices."""
_SCHEMA_CHANGE_POLICIES = frozenset(SCHEMA_CHANGE_CHOICES)
VALIDITY_TYPES = ("TIMESTAMP", "TIMESTAMP_NTZ", "DATE")
"""The Spark types an SCD type 2 history's validity columns may have (``time_data_type``)."""


class KindBase(Record):
    """What every kind answers about its behaviour, so that callers ask the kind instead of comparing names.

    The traits are class-level: a stored snapshot knows only its kind's name, and ``kind_type`` gives the class.
    An unknown name (stored by another release) gets this base, where every trait is False."""

    has_physical_layer: ClassVar[bool] = False
    """We write its physical table or view (EMBEDDED is inlined by its readers, EXTERNAL is someone else's)."""
    physical_is_view: ClassVar[bool] = False
    """Its physical layer is a view over its parents' tables: dropped as a view, holds no rows of its own."""
    inlined: ClassVar[bool] = False
    """Readers inline its query as a subquery; it has no table."""
    external: ClassVar[bool] = False
    """A table the project reads by its own name and never writes."""
    from_seed_file: ClassVar[bool] = False
    """Its rows come from a CSV file: complete for all time once loaded."""
    has_query: ClassVar[bool] = True
    incremental_by_interval: ClassVar[bool] = False
    """Computed per cron interval (Dagster time partitions, batch sizes, a start date)."""
    has_time_column: ClassVar[bool] = False
    """An interval write replaces exactly that time range of its time column."""
    rebuilt_each_run: ClassVar[bool] = False
    """Every run recomputes the whole table: any missing interval means all of them."""
    restates_whole_table: ClassVar[bool] = False
    """It cannot rewrite one time range, so a restatement restates the whole table."""
    upserts: ClassVar[bool] = False
    """Rows are merged by unique key: computing earlier time after later would put old rows over new ones."""
    keeps_history: ClassVar[bool] = False
    """Each run merges the query's rows into the kept history (SCD type 2): the table adds history columns."""
    may_be_forward_only: ClassVar[bool] = False
    """A change may keep the existing table (forward-only) instead of rebuilding it."""
    needs_partitioned_by: ClassVar[bool] = False
    audit_only: ClassVar[bool] = False
    """No table: its query returns offending rows, and the loader turns the model into a standalone audit."""
    lakehouse_table: ClassVar[bool] = False
    """Its table can be an Iceberg or Delta table (``model.table_formats``): a write strategy exists for it."""
    has_kind_dialect: ClassVar[bool] = False
    """SQLMesh's kind takes a ``dialect`` of its own: the one its SQL properties are written in."""
    without_effect: ClassVar[frozenset[str]] = frozenset()
    """SQLMesh's properties of the kind that change nothing here: read (a malformed value is still an error), kept
    nowhere."""
    project_defaults: ClassVar[frozenset[str]] = frozenset()
    """The kind's fields that the project's ``model_defaults`` set where the model's kind leaves them out, as
    SQLMesh passes them (``with_project_defaults``)."""

    @property
    def plain_view(self) -> bool:
        """A view whose rows are its parents' tables read now (not materialized)."""
        return False

    @property
    def managed_columns(self) -> tuple[tuple[str, str], ...]:
        """(name, Spark type) of the columns the kind adds to its table itself, which the model's query does not
        return."""
        return ()

    def stored_columns(
        self, columns: Sequence[tuple[str, str]], table_columns: Sequence[tuple[str, str]] = ()
    ) -> list[tuple[str, str]]:
        """(name, type) of the query's ``columns`` as the kind's table keeps them; ``table_columns``: the (name,
        type) of the table the kind already wrote, if any."""
        return list(columns)


class FullKind(KindBase):
    name: Literal["FULL"] = "FULL"
    has_physical_layer = True
    rebuilt_each_run = True
    restates_whole_table = True
    lakehouse_table = True


class ViewKind(KindBase):
    name: Literal["VIEW"] = "VIEW"
    materialized: bool = False
    has_physical_layer = True
    physical_is_view = True
    rebuilt_each_run = True
    restates_whole_table = True

    @property
    def plain_view(self) -> bool:
        return not self.materialized


class IncrementalByTimeRangeKind(KindBase):
    name: Literal["INCREMENTAL_BY_TIME_RANGE"] = "INCREMENTAL_BY_TIME_RANGE"
    project_defaults = frozenset({"batch_size", "batch_concurrency", *_SCHEMA_CHANGE_POLICIES})
    has_kind_dialect = True
    without_effect = frozenset({"partition_by_time_column"})  # (a time-range table here is always a period table)
    has_physical_layer = True
    incremental_by_interval = True
    has_time_column = True
    may_be_forward_only = True
    lakehouse_table = True
    time_column: str
    time_column_format: str = "yyyy-MM-dd"
    lookback: int = 0
    batch_size: int | None = None
    batch_concurrency: PositiveInt | None = None
    """SQLMesh's limit on the model's batches running at once: met by any value, since a run computes one model's
    batches one after the other (metadata)."""
    forward_only: bool = False
    disable_restatement: bool = False
    on_destructive_change: OnDestructiveChange = "error"
    on_additive_change: OnAdditiveChange = "allow"
    auto_restatement_cron: ScheduleCron = None
    auto_restatement_intervals: PositiveInt | None = None
    """How many of the latest intervals a scheduled restatement recomputes (None: everything recorded)."""


class IncrementalByUniqueKeyKind(KindBase):
    name: Literal["INCREMENTAL_BY_UNIQUE_KEY"] = "INCREMENTAL_BY_UNIQUE_KEY"
    project_defaults = frozenset({"batch_size", *_SCHEMA_CHANGE_POLICIES})  # (one batch at a time: no concurrency)
    has_kind_dialect = True
    has_physical_layer = True
    incremental_by_interval = True
    restates_whole_table = True
    upserts = True
    may_be_forward_only = True
    lakehouse_table = True
    unique_key: tuple[str, ...]
    when_matched: str | None = None
    """SQLMesh's ``when_matched``: the WHEN MATCHED clauses (Spark SQL over ``source`` and ``target``) a matched key
    goes through instead of taking the new row (``model.merge_clauses``)."""
    merge_filter: str | None = None
    """SQLMesh's ``merge_filter``: a condition a key match must meet too, as written (macros rendered per write)."""
    batch_size: int | None = None
    forward_only: bool = False
    disable_restatement: bool = False
    on_destructive_change: OnDestructiveChange = "error"
    on_additive_change: OnAdditiveChange = "allow"
    auto_restatement_cron: ScheduleCron = None


class IncrementalByPartitionKind(KindBase):
    """Each run replaces exactly the partitions (the model's ``partitioned_by`` values, required) its rows hold.

    Always forward-only, as in SQLMesh; restating it rebuilds the whole table (no time range to rewrite)."""

    name: Literal["INCREMENTAL_BY_PARTITION"] = "INCREMENTAL_BY_PARTITION"
    project_defaults = _SCHEMA_CHANGE_POLICIES
    has_physical_layer = True
    restates_whole_table = True
    may_be_forward_only = True
    needs_partitioned_by = True
    lakehouse_table = True
    forward_only: Literal[True] = True
    disable_restatement: bool = False
    on_destructive_change: OnDestructiveChange = "error"
    on_additive_change: OnAdditiveChange = "allow"
    auto_restatement_cron: ScheduleCron = None


class IncrementalUnmanagedKind(KindBase):
    """Each run appends the query's rows (``insert_overwrite``: replaces the partitions they hold instead).

    Forward-only and never restated by default, as in SQLMesh: appended history cannot be recomputed."""

    name: Literal["INCREMENTAL_UNMANAGED"] = "INCREMENTAL_UNMANAGED"
    project_defaults = _SCHEMA_CHANGE_POLICIES
    has_physical_layer = True
    restates_whole_table = True
    may_be_forward_only = True
    lakehouse_table = True
    insert_overwrite: bool = False
    forward_only: bool = True
    disable_restatement: bool = True
    on_destructive_change: OnDestructiveChange = "error"
    on_additive_change: OnAdditiveChange = "allow"
    auto_restatement_cron: ScheduleCron = None


class CustomKind(KindBase):
    """SQLMesh's ``CUSTOM``: a custom materialization class (``project.materializations``) writes each batch of
    missing intervals into the physical table through a Spark adapter (``execution.writes.custom_adapter``).

    Scheduled per cron interval, as in SQLMesh; a restatement hands the restated range to the class again."""

    name: Literal["CUSTOM"] = "CUSTOM"
    project_defaults = frozenset({"batch_size"})
    has_kind_dialect = True
    has_physical_layer = True
    incremental_by_interval = True
    may_be_forward_only = True
    lakehouse_table = True
    materialization: str
    """The class's ``NAME`` (compared case-insensitively, as SQLMesh does)."""
    materialization_properties: tuple[tuple[str, str], ...] = ()
    """(key, value as JSON) in the order written: what the class reads from ``model.kind``."""
    code_digest: str | None = None
    """The materialization class's code (``macros.code_digest``), set when the project loads: an edit of the class
    re-versions the models it writes."""
    batch_size: int | None = None
    batch_concurrency: int | None = None
    lookback: int = 0
    forward_only: bool = False
    disable_restatement: bool = False
    auto_restatement_cron: ScheduleCron = None
    auto_restatement_intervals: PositiveInt | None = None

    @field_validator("materialization_properties", mode="before")
    @classmethod
    def _properties_as_pairs(cls, value: object) -> object:
        """A Python model writes them as a dict of plain values."""
        if isinstance(value, dict):
            return tuple((str(key).lower(), json.dumps(item, default=str)) for key, item in value.items())
        return value

    def properties(self) -> dict[str, object]:
        return {key: json.loads(value) for key, value in self.materialization_properties}


class _ScdType2Fields(KindBase):
    """What both SCD type 2 kinds share: the table keeps every version of a key, open ones with valid_to NULL.

    Forward-only and never restated by default, as in SQLMesh: a change (of the model or of a parent) keeps the
    history table, whose past versions no query could compute again."""

    unique_key: tuple[str, ...]
    valid_from_name: str = "valid_from"
    valid_to_name: str = "valid_to"
    invalidate_hard_deletes: bool = False
    """Close the open version of a key that vanished from the source (else it stays open)."""
    batch_size: int | None = None
    """Accepted as SQLMesh writes it (metadata): a run merges every missing interval's rows at once, as a unique-key
    model upserts them, and a key repeated across them is refused."""
    time_data_type: str = "TIMESTAMP"
    """The Spark type of the validity columns (SQLMesh's ``time_data_type``): ``TIMESTAMP``, ``TIMESTAMP_NTZ`` or
    ``DATE``; ``updated_at`` is compared, and a version starts, as that type holds it."""
    forward_only: bool = True
    disable_restatement: bool = True
    on_destructive_change: OnDestructiveChange = "error"
    on_additive_change: OnAdditiveChange = "allow"
    auto_restatement_cron: ScheduleCron = None
    has_physical_layer = True
    restates_whole_table = True
    keeps_history = True
    may_be_forward_only = True
    lakehouse_table = True
    project_defaults = _SCHEMA_CHANGE_POLICIES
    has_kind_dialect = True

    @property
    def managed_columns(self) -> tuple[tuple[str, str], ...]:
        return ((self.valid_from_name, self.time_data_type), (self.valid_to_name, self.time_data_type))

    @field_validator("time_data_type", mode="before")
    @classmethod
    def _validity_type(cls, value: object) -> str:
        spark_type = str(value).upper()
        if spark_type not in VALIDITY_TYPES:
            raise ValueError(f"time_data_type {value!r} is not a date or timestamp type Spark has: use one of "
                             f"{', '.join(VALIDITY_TYPES)}")
        return spark_type


class ScdType2ByTimeKind(_ScdType2Fields):
    """A key gets a new version when its ``updated_at`` grows; the new version is valid from that time."""

    name: Literal["SCD_TYPE_2_BY_TIME"] = "SCD_TYPE_2_BY_TIME"
    updated_at_name: str = "updated_at"
    updated_at_as_valid_from: bool = False
    """A key's first version is valid from its ``updated_at``; else from 1970-01-01 (SQLMesh's default)."""

    def stored_columns(
        self, columns: Sequence[tuple[str, str]], table_columns: Sequence[tuple[str, str]] = ()
    ) -> list[tuple[str, str]]:
        """``updated_at`` is kept as the validity type (``engine.scd2``), as SQLMesh creates it; except in a table
        an earlier release created, which kept it as the query typed it when the validity type is TIMESTAMP and
        still does (its history cannot be rebuilt): there a query's other type is refused as before."""
        validity = self.time_data_type.lower()
        held = {name.lower(): data_type.lower() for name, data_type in table_columns}.get(self.updated_at_name)
        if held is not None and held != validity:
            return list(columns)
        return [(name, validity if name.lower() == self.updated_at_name else data_type) for name, data_type in columns]


class ScdType2ByColumnKind(_ScdType2Fields):
    """A key gets a new version when one of ``columns`` changes; the new version is valid from the execution time."""

    name: Literal["SCD_TYPE_2_BY_COLUMN"] = "SCD_TYPE_2_BY_COLUMN"
    without_effect = frozenset({"updated_at_name"})  # (SQLMesh's shared field: a by-column history has no such column)
    columns: tuple[str, ...]
    """The tracked columns; ``("*",)`` tracks every column but the key."""
    execution_time_as_valid_from: bool = False
    """The first load's versions are valid from the execution time; else from 1970-01-01 (SQLMesh's default)."""


class SeedKind(KindBase):
    name: Literal["SEED"] = "SEED"
    has_physical_layer = True
    from_seed_file = True
    has_query = False
    rebuilt_each_run = True
    restates_whole_table = True
    path: str
    """Path of the CSV file, relative to the model file's folder (as SQLMesh resolves it)."""
    batch_size: int | None = None
    """Rows per INSERT in SQLMesh. Kept as metadata only: Spark writes the seed's rows as one DataFrame, so
    there are no statements whose size it could bound."""
    csv_settings: CsvSettings | None = None
    """How the file is read (SQLMesh's ``csv_settings``); None: as pandas reads a CSV by default."""


class EmbeddedKind(KindBase):
    name: Literal["EMBEDDED"] = "EMBEDDED"
    inlined = True


class ExternalKind(KindBase):
    name: Literal["EXTERNAL"] = "EXTERNAL"
    external = True
    has_query = False


class AuditOnlyKind(KindBase):
    """SQLMesh's ``AUDIT_ONLY``: a model file that checks data instead of producing it. It never reaches the
    project's models: ``project.checks.audit_only_models`` loads it as a standalone audit."""

    name: Literal["AUDIT_ONLY"] = "AUDIT_ONLY"
    audit_only = True
    blocking: bool = True
    """Offending rows stop the promotion; ``blocking false`` only warns."""
    max_failing_rows: int = 10
    """How many offending rows a failure shows."""


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
        AuditOnlyKind,
        CustomKind,
    ],
    Field(discriminator="name"),
]

KIND_ALIASES = {"SCD_TYPE_2": "SCD_TYPE_2_BY_TIME"}
"""Other names SQLMesh accepts for a kind (``SCD_TYPE_2`` is its older name of ``SCD_TYPE_2_BY_TIME``)."""

_BY_NAME: dict[str, type[KindBase]] = {kind.model_fields["name"].default: kind for kind in get_args(get_args(ModelKind)[0])}


def kinds_with_field(field_name: str) -> tuple[str, ...]:
    """The names of the kinds that have the field ``field_name``."""
    return tuple(name for name, kind in _BY_NAME.items() if field_name in kind.model_fields)


def kind_type(name: str) -> type[KindBase]:
    """The kind record class named ``name``, for asking a stored snapshot's kind about its behaviour."""
    return _BY_NAME.get(name, KindBase)



def taken_defaults(kind: type[KindBase], defaults: Mapping[str, object], written: Collection[str]) -> dict[str, object]:
    """The project's defaults (field -> value, None: no default) of the fields ``kind`` takes from them
    (``project_defaults``) and the model did not write."""
    return {field: value for field, value in defaults.items()
            if value is not None and field in kind.project_defaults and field not in written}


def with_project_defaults(kind: KindBase, defaults: Mapping[str, object], written: Collection[str]) -> KindBase:
    """``kind`` with the project's defaults it takes (``taken_defaults``)."""
    taken = taken_defaults(type(kind), defaults, written)
    return kind.model_copy(update=taken) if taken else kind
