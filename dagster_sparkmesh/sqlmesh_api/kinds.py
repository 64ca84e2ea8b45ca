"""``sqlmesh.core.model.kind``: ``ModelKindName`` and the kind classes, as project files use them.

A kind object only records its name and keyword arguments; the Python model loader validates it through the
same path as ``kind=dict(name=..., ...)`` so both spellings give the same record and the same errors.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ModelKindName(StrEnum):
    """Every kind name SQLMesh defines; the ones sparkmesh cannot build are refused when a model uses them."""

    INCREMENTAL_BY_TIME_RANGE = "INCREMENTAL_BY_TIME_RANGE"
    INCREMENTAL_BY_UNIQUE_KEY = "INCREMENTAL_BY_UNIQUE_KEY"
    INCREMENTAL_BY_PARTITION = "INCREMENTAL_BY_PARTITION"
    INCREMENTAL_UNMANAGED = "INCREMENTAL_UNMANAGED"
    SCD_TYPE_2 = "SCD_TYPE_2"
    SCD_TYPE_2_BY_TIME = "SCD_TYPE_2_BY_TIME"
    SCD_TYPE_2_BY_COLUMN = "SCD_TYPE_2_BY_COLUMN"
    VIEW = "VIEW"
    FULL = "FULL"
    SEED = "SEED"
    EMBEDDED = "EMBEDDED"
    EXTERNAL = "EXTERNAL"
    CUSTOM = "CUSTOM"
    MANAGED = "MANAGED"
    AUDIT_ONLY = "AUDIT_ONLY"


class OnDestructiveChange(StrEnum):
    """What a forward-only change that drops or retypes columns does (a kind's or ``model_defaults``' setting)."""

    ERROR = "ERROR"
    WARN = "WARN"
    ALLOW = "ALLOW"
    IGNORE = "IGNORE"


class OnAdditiveChange(StrEnum):
    """What a forward-only change that adds columns does (a kind's or ``model_defaults``' setting)."""

    ERROR = "ERROR"
    WARN = "WARN"
    ALLOW = "ALLOW"
    IGNORE = "IGNORE"


class KindSpec:
    """A kind written as an object: ``IncrementalByTimeRangeKind(time_column="ds")``."""

    kind_name: ModelKindName = ModelKindName.FULL

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    @property
    def name(self) -> ModelKindName:
        return self.kind_name

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.kind_name.value, **self.fields}

    def __repr__(self) -> str:
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.fields.items())
        return f"{type(self).__name__}({arguments})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KindSpec) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]


class TimeColumn:
    """``TimeColumn(column="ds", format="%Y-%m-%d")``: a time column with the format of its values (strftime codes,
    as SQLMesh takes them); the Python model loader turns it into the kind's ``time_column`` and its format."""

    def __init__(self, *, column: str, format: str | None = None) -> None:  # noqa: A002 - SQLMesh's field name
        self.column = column
        self.format = format

    def __repr__(self) -> str:
        return f"TimeColumn(column={self.column!r}, format={self.format!r})"


def _kind_class(class_name: str, kind_name: ModelKindName) -> type[KindSpec]:
    return type(class_name, (KindSpec,), {"kind_name": kind_name, "__module__": __name__})


FullKind = _kind_class("FullKind", ModelKindName.FULL)
ViewKind = _kind_class("ViewKind", ModelKindName.VIEW)
SeedKind = _kind_class("SeedKind", ModelKindName.SEED)
EmbeddedKind = _kind_class("EmbeddedKind", ModelKindName.EMBEDDED)
ExternalKind = _kind_class("ExternalKind", ModelKindName.EXTERNAL)
IncrementalByTimeRangeKind = _kind_class("IncrementalByTimeRangeKind", ModelKindName.INCREMENTAL_BY_TIME_RANGE)
IncrementalByUniqueKeyKind = _kind_class("IncrementalByUniqueKeyKind", ModelKindName.INCREMENTAL_BY_UNIQUE_KEY)
IncrementalByPartitionKind = _kind_class("IncrementalByPartitionKind", ModelKindName.INCREMENTAL_BY_PARTITION)
IncrementalUnmanagedKind = _kind_class("IncrementalUnmanagedKind", ModelKindName.INCREMENTAL_UNMANAGED)
SCDType2Kind = _kind_class("SCDType2Kind", ModelKindName.SCD_TYPE_2)
SCDType2ByTimeKind = _kind_class("SCDType2ByTimeKind", ModelKindName.SCD_TYPE_2_BY_TIME)
SCDType2ByColumnKind = _kind_class("SCDType2ByColumnKind", ModelKindName.SCD_TYPE_2_BY_COLUMN)


class CustomKind(KindSpec):
    """``CUSTOM``: a materialization class's name and properties; a class may read them through a subclass of this
    (``CustomMaterialization[MyKind]``), which then is the type of ``model.kind`` it receives."""

    kind_name = ModelKindName.CUSTOM

    @property
    def materialization(self) -> str:
        return str(self.fields.get("materialization", ""))

    @property
    def materialization_properties(self) -> dict[str, Any]:
        return dict(self.fields.get("materialization_properties") or {})


ManagedKind = _kind_class("ManagedKind", ModelKindName.MANAGED)

__all__ = [
    "ModelKindName", "KindSpec", "TimeColumn", "FullKind", "ViewKind", "SeedKind", "EmbeddedKind", "ExternalKind",
    "IncrementalByTimeRangeKind", "IncrementalByUniqueKeyKind", "IncrementalByPartitionKind",
    "IncrementalUnmanagedKind", "SCDType2Kind", "SCDType2ByTimeKind", "SCDType2ByColumnKind", "CustomKind",
    "ManagedKind", "OnDestructiveChange", "OnAdditiveChange",
]  # fmt: skip
