"""Typed model records: kinds, audits, unit tests, the Model itself."""

from dagster_sparkmesh.model.kinds import (
    CustomKind,
    EmbeddedKind,
    ExternalKind,
    FullKind,
    IncrementalByPartitionKind,
    IncrementalByTimeRangeKind,
    IncrementalByUniqueKeyKind,
    IncrementalUnmanagedKind,
    ModelKind,
    ScdType2ByColumnKind,
    ScdType2ByTimeKind,
    SeedKind,
    ViewKind,
)
from dagster_sparkmesh.model.records import (
    AuditCall,
    AuditDefinition,
    ExternalModel,
    Model,
    ModelSource,
    UnitTest,
)

__all__ = [
    "AuditCall",
    "AuditDefinition",
    "CustomKind",
    "EmbeddedKind",
    "ExternalKind",
    "ExternalModel",
    "FullKind",
    "IncrementalByPartitionKind",
    "IncrementalByTimeRangeKind",
    "IncrementalByUniqueKeyKind",
    "IncrementalUnmanagedKind",
    "Model",
    "ModelKind",
    "ModelSource",
    "ScdType2ByColumnKind",
    "ScdType2ByTimeKind",
    "SeedKind",
    "UnitTest",
    "ViewKind",
]
