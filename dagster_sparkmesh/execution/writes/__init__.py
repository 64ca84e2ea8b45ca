"""Write strategies: how each model kind writes its missing intervals, one function per kind and, for lakehouse
tables (``model.table_formats``), per kind with a lakehouse table (``records``: what each returns). ``strategy_for``
picks one; the evaluator (``execution.evaluator``) runs it with retries."""

from __future__ import annotations

from dagster_sparkmesh.execution.writes.additive import write_by_partition, write_unmanaged
from dagster_sparkmesh.execution.writes.custom import write_custom
from dagster_sparkmesh.execution.writes.full import write_full
from dagster_sparkmesh.execution.writes.keyed import write_scd_type_2, write_unique_key
from dagster_sparkmesh.execution.writes.lakehouse import write_lakehouse_full, write_lakehouse_time_range
from dagster_sparkmesh.execution.writes.lakehouse_additive import write_lakehouse_by_partition, write_lakehouse_unmanaged
from dagster_sparkmesh.execution.writes.lakehouse_keyed import write_lakehouse_scd_type_2, write_lakehouse_unique_key
from dagster_sparkmesh.execution.writes.records import WriteStrategy
from dagster_sparkmesh.execution.writes.simple import write_seed, write_view
from dagster_sparkmesh.execution.writes.time_range import write_time_range
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.model.table_formats import lakehouse_format

_STRATEGIES: dict[str, WriteStrategy] = {
    "FULL": write_full,
    "VIEW": write_view,
    "SEED": write_seed,
    "INCREMENTAL_BY_TIME_RANGE": write_time_range,
    "INCREMENTAL_BY_UNIQUE_KEY": write_unique_key,
    "SCD_TYPE_2_BY_TIME": write_scd_type_2,
    "SCD_TYPE_2_BY_COLUMN": write_scd_type_2,
    "INCREMENTAL_BY_PARTITION": write_by_partition,
    "INCREMENTAL_UNMANAGED": write_unmanaged,
    "CUSTOM": write_custom,
}


_LAKEHOUSE_STRATEGIES: dict[str, WriteStrategy] = {
    "FULL": write_lakehouse_full,
    "INCREMENTAL_BY_TIME_RANGE": write_lakehouse_time_range,
    "INCREMENTAL_BY_UNIQUE_KEY": write_lakehouse_unique_key,
    "SCD_TYPE_2_BY_TIME": write_lakehouse_scd_type_2,
    "SCD_TYPE_2_BY_COLUMN": write_lakehouse_scd_type_2,
    "INCREMENTAL_BY_PARTITION": write_lakehouse_by_partition,
    "INCREMENTAL_UNMANAGED": write_lakehouse_unmanaged,
    "CUSTOM": write_custom,  # the class writes; its adapter creates and writes tables of the model's format
}


def strategy_for(model: Model) -> WriteStrategy | None:
    """The strategy of the model's kind and table; None for kinds with no table to write (EMBEDDED, EXTERNAL,
    AUDIT_ONLY)."""
    if lakehouse_format(model) is not None:
        return _LAKEHOUSE_STRATEGIES[model.kind_name]
    return _STRATEGIES.get(model.kind_name)
