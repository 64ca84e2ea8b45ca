"""How a model looks in Dagster: asset key, group, partitions, metadata, owners, tags, kinds, code version,
freshness, automation condition, code references.

Override any ``get_*`` method in a subclass to customise one aspect. The translator's only state is its
``SparkMeshTranslatorSettings`` (as dagster-dbt's translator has its settings); a subclass may define ``__init__``
without calling ``super().__init__()`` and gets the default settings.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import dagster as dg

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.dagster.cron import cron_condition, cron_freshness, dagster_cron
from dagster_sparkmesh.dagster.partitions import time_window_partitions
from dagster_sparkmesh.errors import PlanError, ProjectError, SparkMeshError
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.model.interval_units import unit_longer_than_cron
from dagster_sparkmesh.dates import parse_datetime
from dagster_sparkmesh.plan.intervals import due_on_every_interval, interval_cron
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


@dataclass(frozen=True)
class SparkMeshTranslatorSettings:
    """Switches for what the default translator adds to each model asset."""

    automate_on_cron: bool = False
    """Models run when their cron is due, with their parents updated, without a schedule (SQLMesh's ``run``):
    ``AutomationCondition.on_cron`` of the model's cron, external parents ignored. Off: the git sensor and the UI
    request runs."""
    freshness_from_cron: bool = True
    """A ``FreshnessPolicy.cron`` per model: the asset turns red when an interval is one cron period late."""
    enable_code_references: bool = True
    """``dagster/code_references``: each model asset links to its file and line (to git, when linked)."""
    partition_row_counts_up_to: int | None = 92
    """``dagster/partition_row_count`` on each partition of a ranged run of at most this many partitions (None:
    every run; 0: none): one grouped count over the range after the write. Its cost is mostly Spark's first read of
    the new partitions' metadata (2.7-4.7 s for 365 days on 2 cores, half a year's write), so a long backfill
    reports the range's total only, as dagster-dbt counts rows only when asked (``fetch_row_counts``)."""
    pool: str | None = "sparkmesh"
    """Dagster's concurrency pool of every model step (``dagster instance concurrency set sparkmesh 2`` keeps a
    cluster from being flooded); None: no pool."""


class SparkMeshTranslator:
    """Maps project models and external models to Dagster asset properties."""

    def __init__(self, settings: SparkMeshTranslatorSettings | None = None) -> None:
        self._settings = settings or SparkMeshTranslatorSettings()

    @property
    def settings(self) -> SparkMeshTranslatorSettings:
        return getattr(self, "_settings", None) or SparkMeshTranslatorSettings()

    def get_asset_key(self, model: Model | ExternalModel) -> dg.AssetKey:
        """One key part per name part: ``["db", "orders"]``, or ``["ecommerce", "silver", "orders"]``."""
        return dg.AssetKey(model.name.split("."))

    def get_group_name(self, model: Model | ExternalModel) -> str | None:
        """The schema of the model's views (a catalog folded in: ``ecommerce__silver``; not a catalog the model
        lives in); an external model's, as written."""
        return split_model_name(model.name, model.catalog if isinstance(model, Model) else None)[0]

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
        try:
            cron = interval_cron(model)
        except PlanError as error:  # a cron ticking more often than every 5 minutes: located in the model's file
            raise ProjectError(f"{model.name}: {error.message}", path=model.path, line=model.line,
                               snippet=f"cron {model.cron}", hint=error.hint) from None
        except ValueError as error:  # croniter's: a cron that is no 5-field expression, or never ticks
            raise ProjectError(f"{model.name}: invalid cron {model.cron!r} ({error})", path=model.path,
                               line=model.line, snippet=f"cron {model.cron}", hint="use @daily, @hourly... or a 5-field cron") from None
        return time_window_partitions(cron, parse_datetime(start, now=now), model_end(model, now))

    def get_load_time(self) -> datetime:
        """The clock of definition load (naive UTC), which relative start and end dates are read against."""
        return utc_now()

    def get_automation_condition(self, model: Model) -> dg.AutomationCondition | None:
        """None by default: the git sensor requests exactly the missing intervals after each commit. With
        ``automate_on_cron``: the model's latest interval once its cron tick passed and its parents updated since
        (external assets are never materialized here, so they do not hold a model back)."""
        if not self.settings.automate_on_cron:
            return None
        # An unpartitioned model is rebuilt whole at each tick; a partitioned one asks for what its period misses.
        every_interval = not model.kind.incremental_by_interval or due_on_every_interval(model)
        return cron_condition(dagster_cron(model.cron), every_interval, model.cron_tz)

    def get_freshness_policy(self, model: Model) -> dg.FreshnessPolicy | None:
        """Fresh while the latest materialization is at most one cron period older than the last cron tick."""
        if not self.settings.freshness_from_cron:
            return None
        # An interval unit longer than the cron (allow_partials) is materialized in Dagster once per interval.
        longer = unit_longer_than_cron(model.interval_unit, model.cron) is not None
        if longer:  # the interval's cron: UTC's, as the intervals are
            return cron_freshness(interval_cron(model))
        return cron_freshness(model.cron, model.cron_tz)

    def get_pool(self, group_name: str) -> str | None:
        """The concurrency pool of one model step (``group_name``: the step's default op name)."""
        return self.settings.pool

    def get_op_name(self, group_name: str) -> str:
        """The op (step) name of the models of one partitions definition (``sparkmesh_prod_daily``)."""
        return group_name

    def get_op_tags(self, group_name: str) -> dict[str, str]:
        return {"kind": "spark"}

    def get_code_references(self, model: Model) -> dg.CodeReferencesMetadataValue | None:
        if not self.settings.enable_code_references:
            return None
        with warnings.catch_warnings():  # beta in Dagster 1.13, and stable in what it records
            warnings.simplefilter("ignore", dg.BetaWarning)
            reference = dg.LocalFileCodeReference(file_path=str(model.path), line_number=model.line, label=model.name)
            return dg.CodeReferencesMetadataValue(code_references=[reference])

    def get_metadata(self, model: Model | ExternalModel, environment: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {"sparkmesh/model": model.name}
        if isinstance(model, ExternalModel):
            metadata["dagster/table_name"] = model.name
            metadata["sparkmesh/path"] = dg.MetadataValue.path(str(model.path))
            if model.start:  # recorded from external_models.yaml: when the table's data begins
                metadata["sparkmesh/start"] = model.start
        else:
            metadata["dagster/table_name"] = view_name(model.name, environment, model.catalog)
            metadata["sparkmesh/kind"] = model.kind_name
            metadata["sparkmesh/cron"] = model.cron
            if model.cron_tz:
                metadata["sparkmesh/cron_tz"] = model.cron_tz
            metadata["sparkmesh/fingerprint"] = model.fingerprint
            metadata["sparkmesh/path"] = dg.MetadataValue.path(str(model.path))
            # The table is named after the version, which the plan decides; the materialization reports it.
            metadata["sparkmesh/physical_schema"] = physical_schema(model.name, model.catalog)
            references = self.get_code_references(model)
            if references is not None:
                metadata["dagster/code_references"] = references
        metadata["dagster/storage_kind"] = "spark"
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

    def get_asset_spec(self, model: Model, spec: dg.AssetSpec) -> dg.AssetSpec:
        """The last word on a model's spec, after every ``get_*`` above (the Component's ``translation`` hooks in
        here). Partitions must stay the model's: they are its cron intervals."""
        return spec

    def get_check_name(self, model: Model, index: int) -> str:
        """The asset check of ``model.audits[index]``; a repeated audit gets its position as a suffix."""
        call = model.audits[index]
        earlier = sum(1 for other in model.audits[:index] if other.name == call.name)
        return call.name if earlier == 0 else f"{call.name}_{earlier + 1}"
