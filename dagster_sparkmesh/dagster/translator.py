"""How a model looks in Dagster: asset key, group, partitions, metadata, owners, tags, kinds, code version.

Override any ``get_*`` method in a subclass to customise one aspect. The translator keeps no state of its own,
so a subclass may define ``__init__`` without calling ``super().__init__()``; everything a method needs is
passed in.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import dagster as dg

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.dagster.partitions import time_window_partitions
from dagster_sparkmesh.errors import ProjectError, SparkMeshError
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.plan.dates import parse_datetime
from dagster_sparkmesh.plan.windows import model_end
from dagster_sparkmesh.project.sql.header import split_model_file
from dagster_sparkmesh.snapshot.naming import physical_schema, split_model_name, view_name

_TAG_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
_TAG_MAX = 63
_KINDS_BY_SOURCE = {"sql": "sql", "python": "python", "seed": "csv"}


def code_as_written(model: Model) -> str | None:
    """A SQL model's file after its MODEL header, a Python model's source; the canonical query as a fallback.

    The canonical text (one line, comments dropped) is what is hashed, not what a reader wants to see."""
    if model.source == "python":
        return getattr(model, "python_code", None) or model.python_source
    if model.source != "sql" or model.query is None:
        return None
    try:
        body = split_model_file(model.path.read_text(encoding="utf-8"), model.path).body
    except (OSError, UnicodeDecodeError, SparkMeshError):
        return model.query  # the file moved or changed since the project was loaded
    return body.strip() or model.query


class SparkMeshTranslator:
    """Maps project models and external models to Dagster asset properties."""

    def get_asset_key(self, model: Model | ExternalModel) -> dg.AssetKey:
        """One key part per name part: ``["db", "orders"]``, or ``["ecommerce", "silver", "orders"]``."""
        return dg.AssetKey(model.name.split("."))

    def get_group_name(self, model: Model | ExternalModel) -> str | None:
        """The schema of the model's views (a catalog folded in: ``ecommerce__silver``)."""
        return split_model_name(model.name)[0]

    def get_partitions_def(self, model: Model, default_start: str | None = None) -> dg.PartitionsDefinition | None:
        """Time partitions for incremental models (one partition per cron interval); None for the others.

        FULL, VIEW and SEED models are rebuilt whole, so a partition of theirs would mean nothing.
        """
        if not model.kind.incremental_by_interval:
            return None
        start = model.start or default_start
        if start is None:
            raise ProjectError(
                f"model {model.name} has no start date, which its partitions need",
                path=model.path,
                line=model.line,
                snippet=f"cron {model.cron}",
                hint="set `start` in the MODEL header or `model_defaults.start` in config.yaml",
            )
        # Relative dates ('1 year ago') are read once, at definition load: partitions need a fixed first key.
        now = self.get_load_time()
        return time_window_partitions(model.cron, parse_datetime(start, now=now), model_end(model, now))

    def get_load_time(self) -> datetime:
        """The clock of definition load (naive UTC), which relative start and end dates are read against."""
        return utc_now()

    def get_automation_condition(self, model: Model) -> dg.AutomationCondition | None:
        """None by default: the git sensor requests exactly the missing intervals after each commit."""
        return None

    def get_metadata(self, model: Model | ExternalModel, environment: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {"sparkmesh/model": model.name}
        if isinstance(model, ExternalModel):
            metadata["dagster/table_name"] = model.name
            metadata["sparkmesh/path"] = dg.MetadataValue.path(str(model.path))
            if model.start:  # recorded from external_models.yaml: when the table's data begins
                metadata["sparkmesh/start"] = model.start
        else:
            metadata["dagster/table_name"] = view_name(model.name, environment)
            metadata["sparkmesh/kind"] = model.kind_name
            metadata["sparkmesh/cron"] = model.cron
            metadata["sparkmesh/fingerprint"] = model.fingerprint
            metadata["sparkmesh/path"] = dg.MetadataValue.path(str(model.path))
            # The table is named after the version, which the plan decides; the materialization reports it.
            metadata["sparkmesh/physical_schema"] = physical_schema(model.name)
        schema = self.get_column_schema(model)
        if schema is not None:
            metadata["dagster/column_schema"] = schema
        return metadata

    def get_column_schema(self, model: Model | ExternalModel) -> dg.TableSchema | None:
        if not model.columns:
            return None
        descriptions = dict(getattr(model, "column_descriptions", ()))
        return dg.TableSchema(
            columns=[
                dg.TableColumn(name=name, type=type_, description=descriptions.get(name))
                for name, type_ in model.columns
            ]
        )

    def get_description(self, model: Model | ExternalModel) -> str | None:
        """The model's description, then its code as the author wrote it (formatting and comments kept)."""
        text = model.description or ""
        code = code_as_written(model) if isinstance(model, Model) else None
        if code:
            language = "python" if model.source == "python" else "sql"
            text = f"{text}\n\n```{language}\n{code}\n```".strip()
        return text or None

    def get_owners(self, model: Model) -> list[str]:
        """Dagster accepts e-mail addresses or ``team:<name>``; a bare owner name is taken as a team."""
        if not model.owner:
            return []
        owner = model.owner.strip()
        return [owner if "@" in owner or owner.startswith("team:") else f"team:{owner}"]

    def get_tags(self, model: Model) -> dict[str, str]:
        """Model tags as Dagster tag keys with empty values (Dagster restricts the characters of a key)."""
        return {_TAG_CHARS.sub("_", tag)[:_TAG_MAX]: "" for tag in model.tags if tag.strip()}

    def get_kinds(self, model: Model | ExternalModel) -> set[str]:
        source = getattr(model, "source", None)
        return {"spark", _KINDS_BY_SOURCE[source]} if source else {"spark"}

    def get_code_version(self, model: Model) -> str:
        """The fingerprint: it moves exactly when the data the model produces may change."""
        return model.fingerprint

    def get_check_name(self, model: Model, index: int) -> str:
        """The asset check of ``model.audits[index]``; a repeated audit gets its position as a suffix."""
        call = model.audits[index]
        earlier = sum(1 for other in model.audits[:index] if other.name == call.name)
        return call.name if earlier == 0 else f"{call.name}_{earlier + 1}"
