"""Fingerprints: pure sha256 hashes over explicitly listed fields, chained over parents (a Merkle DAG).

- ``data_hash``: what the model computes. Changing it asks for recomputation.
- ``metadata_hash``: what describes or schedules the model. Changing it never triggers a backfill.
- ``fingerprint``: ``data_hash`` plus the parents' fingerprints; it is the Dagster ``code_version``, so it must move
  exactly when the data the model produces may change.

The fields are listed by hand on purpose: adding a field to ``Model`` must not silently change every fingerprint,
and tests pin literal values so that an accidental change to hashing fails loudly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.model.interval_units import INTERVAL_UNIT_CRONS, unit_cron
from dagster_sparkmesh.model.kinds import METADATA_KIND_FIELDS, kinds_with_field
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.model.table_formats import lakehouse_format
from dagster_sparkmesh.model.standalone_audit import StandaloneAudit

HASH_FORMAT_VERSION = "1"

# Kind fields that change behaviour but not the rows of a given interval.
_METADATA_ONLY_KIND_FIELDS = METADATA_KIND_FIELDS | {
    "forward_only", "disable_restatement", "on_destructive_change", "on_additive_change"
}
# Fields added after tables were versioned, hashed only when set to something else than their default: a project
# that does not use them keeps the metadata hashes (and so the plans) of the release before.
_HASHED_UNLESS_DEFAULT = {
    "on_additive_change": "allow", "updated_at_as_valid_from": False, "execution_time_as_valid_from": False
}


# Kind fields added later to some kinds: hashed only when set to another value than the one given here (the
# kind's default), for the same reason.
_ADDED_TO_KINDS_LATER: dict[tuple[str, str], object] = {
    ("INCREMENTAL_BY_TIME_RANGE", "batch_concurrency"): None,
    ("INCREMENTAL_BY_UNIQUE_KEY", "when_matched"): None,
    ("INCREMENTAL_BY_UNIQUE_KEY", "merge_filter"): None,
    ("SEED", "csv_settings"): None,  # (data: another delimiter, other rows)
    **{(scd, field): default for scd in ("SCD_TYPE_2_BY_TIME", "SCD_TYPE_2_BY_COLUMN")
       for field, default in (("forward_only", True), ("on_destructive_change", "error"), ("time_data_type", "TIMESTAMP"),
                                 ("batch_size", None))},
    **{(kind, field): None for field in ("auto_restatement_cron", "auto_restatement_intervals")
       for kind in kinds_with_field(field)},
}

_ANY = object()


def _sha256(payload: object) -> str:
    text = json.dumps(payload, separators=(",", ":"), sort_keys=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _kind_fields(model: Model, *, metadata: bool) -> list[list[object]]:
    fields = model.kind.model_dump()
    return [
        [key, fields[key]]
        for key in sorted(fields)
        if (key in _METADATA_ONLY_KIND_FIELDS) == metadata and _HASHED_UNLESS_DEFAULT.get(key, _ANY) != fields[key]
        and _ADDED_TO_KINDS_LATER.get((model.kind.name, key), _ANY) != fields[key]
    ]


def data_hash(model: Model) -> str:
    return _sha256(
        [
            HASH_FORMAT_VERSION,
            model.name,
            model.kind.name,
            _kind_fields(model, metadata=False),
            model.query,
            list(model.pre_statements),
            list(model.post_statements),
            [list(column) for column in model.columns],
            list(model.partitioned_by),
            model.python_source,
            model.seed_content_hash,
            *_later_data(model),
        ]
    )


def _later_data(model: Model) -> list[object]:
    """Data fields added after the hash format was fixed, hashed only when set (unchanged hashes otherwise). The
    lakehouse format is what the table is written in (``model.table_formats``): another format, another table."""
    later: list[object] = [["macro_code", model.macro_code]] if model.macro_code else []
    if model.stamp is not None:
        later.append(["stamp", model.stamp])
    if model.interval_unit is not None and INTERVAL_UNIT_CRONS[model.interval_unit] != _implied_unit(model.cron):
        later.append(["interval_unit", model.interval_unit])  # (written, and not the one the cron implies)
    if model.catalog is not None:  # (its table lives in that catalog: another catalog, another table)
        later.append(["catalog", model.catalog])
    if model.partition_expressions:  # (as SQLMesh hashes partitioned_by: another partitioning, another table)
        later.append(["partition_expressions", [expression.written for expression in model.partition_expressions]])
    written_format = lakehouse_format(model)
    if written_format is not None:
        later.append(["table_format", written_format])
        if model.physical_properties:  # (set on the table it creates: other properties, another table)
            later.append(["physical_properties", sorted(model.physical_properties)])
    return later


def metadata_hash(model: Model) -> str:
    return _sha256(
        [
            *_later_metadata(model),
            HASH_FORMAT_VERSION,
            _kind_fields(model, metadata=True),
            model.owner,
            model.description,
            model.cron,
            model.start,
            model.end,
            list(model.tags),
            list(model.grains),
            [list(pair) for pair in model.column_descriptions],
            [[call.name, [list(arg) for arg in call.args]] for call in model.audits],
            model.enabled,
        ]
    )


def _later_metadata(model: Model) -> list[object]:
    """Metadata fields added after the hash format was fixed: hashed only when set, so that the metadata hash of a
    model without them stays what it was (an upgrade must not show every model as changed)."""
    later: list[object] = []
    if model.signals:
        later.append(["signals", [[call.name, [list(arg) for arg in call.args]] for call in model.signals]])
    if model.session_properties:
        later.append(["session_properties", [list(pair) for pair in model.session_properties]])
    if model.on_virtual_update:
        later.append(["on_virtual_update", list(model.on_virtual_update)])
    if model.allow_partials:  # metadata, as in SQLMesh: which intervals run, not what an interval holds
        later.append(["allow_partials", True])
    if model.cron_tz:  # metadata, as in SQLMesh: when intervals are due, not what they hold
        later.append(["cron_tz", model.cron_tz])
    return later


def external_fingerprint(external: ExternalModel) -> str:
    return _sha256([HASH_FORMAT_VERSION, "external", external.name, [list(c) for c in external.columns]])


def fingerprint(own_data_hash: str, parent_fingerprints: Mapping[str, str]) -> str:
    return _sha256([HASH_FORMAT_VERSION, own_data_hash, sorted(parent_fingerprints.items())])


def chain_fingerprints(
    models: Mapping[str, Model], externals: Mapping[str, ExternalModel]
) -> dict[str, Model]:
    """Fill ``fingerprint`` (and ``data_hash``/``metadata_hash`` when empty) for models in topological order."""
    known: dict[str, str] = {name: external.fingerprint or external_fingerprint(external) for name, external in externals.items()}
    result: dict[str, Model] = {}
    for name, model in models.items():
        own = model.data_hash or data_hash(model)
        meta = model.metadata_hash or metadata_hash(model)
        parents = {parent: known[parent] for parent in model.depends_on if parent in known}
        missing = model.depends_on - parents.keys()
        if missing:
            raise ValueError(f"models must be in topological order: {name} before {sorted(missing)}")
        fp = fingerprint(own, parents)
        known[name] = fp
        result[name] = model.model_copy(update={"data_hash": own, "metadata_hash": meta, "fingerprint": fp})
    return result


def standalone_audit_fingerprint(audit: StandaloneAudit, parent_fingerprints: Mapping[str, str]) -> str:
    """What a standalone audit checks: its name, its query and the fingerprints of what it reads (its parents').
    ``blocking``, ``skip`` and ``description`` change what is done with its result, not the result: not hashed."""
    return _sha256(
        [HASH_FORMAT_VERSION, "standalone_audit", audit.name, audit.query, sorted(parent_fingerprints.items())]
    )


def _implied_unit(cron: str) -> str | None:
    try:
        return unit_cron(cron)
    except (PlanError, ValueError):  # a cron the plan refuses: the written unit is hashed
        return None
