"""External models over folders of CSV files, for development: a project reads ``raw.web_events``, which in
production is someone else's table; locally it is a CSV table created on first use, typed from the external
model's declared columns (``external_models.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dagster_sparkmesh.errors import ConfigError, EngineError
from dagster_sparkmesh.model.records import ExternalModel


def csv_table_ddl(external: ExternalModel, location: Path) -> str:
    """``CREATE TABLE IF NOT EXISTS`` of an external model over CSV files (with a header line)."""
    columns = ", ".join(f"`{name}` {data_type}" for name, data_type in external.columns)
    return (
        f"CREATE TABLE IF NOT EXISTS {external.name} ({columns}) "
        f"USING csv OPTIONS (header 'true') LOCATION '{location.as_posix()}'"
    )


def register_csv_sources(engine, externals: Mapping[str, ExternalModel], folders: Mapping[str, Path]) -> None:
    """Create the CSV tables that don't exist yet (idempotent; safe when several runs start at once)."""
    for name, location in folders.items():
        external = externals.get(name)
        if external is None or not external.columns:
            raise ConfigError(
                f"CSV source {name!r} is not an external model with declared columns",
                snippet=name,
                hint="declare it with its columns in external_models.yaml, or remove it from csv_sources",
            )
        if engine.catalog.table_exists(name):
            continue
        engine.catalog.create_schema(name.rpartition(".")[0])
        try:
            engine.catalog.execute(csv_table_ddl(external, location))
        except EngineError:
            # Two runs may both have seen no table: the loser's CREATE fails although the table is there.
            if not engine.catalog.table_exists(name):
                raise
