"""Preflight: refuse, before anything is written, a plan whose models would fail on their inputs at run time.

It runs first in ``apply_plan`` (before the plan-log row) and in ``run_models`` (before snapshots are pushed), over
the models that have intervals to compute, and changes nothing: no state row, no table, no schema.

1. Every external model they read (also through EMBEDDED models) has its table in the catalog now: one listing
   per schema (``SparkCatalog.list_schema``), so a missing schema and a missing table are told apart. Then their
   audits (``audits:`` in ``external_models.yaml``) run: a blocking failure refuses the plan.
2. Every SQL INCREMENTAL_BY_TIME_RANGE model is analyzed (Spark resolves the query's columns and types without
   running a job) and its time column must exist with a type the interval writer can compare with the interval
   bounds (``time_column_problem``). Its parents must be readable now: an external, an existing physical table, or
   a parent new in this plan whose output is known without running it: a SQL model (a session temp view of its
   rendered query, itself analyzed the same way) or a seed (a temp view of its columns). Temp views live in the
   session only and are dropped before returning. Not a model whose query already wrote intervals into its own
   table (``PreflightInputs.ran_before``: a daily run's models): it was checked before that first write, and its
   fingerprint chains its inputs' versions; an external table altered outside the project fails at its write.

What is left for run time: a model reading a new Python model, a new SCD type 2 model (its table adds history
columns to its query's) or its own new table (``@this_model``), and Python INCREMENTAL_BY_TIME_RANGE models (their
output exists only once their code ran). The evaluator checks those before the model's first write
(``check_time_column``), so the error comes before anything *of that model* is written.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.external_audits import audit_externals
from dagster_sparkmesh.execution.preflight_errors import (  # noqa: F401 - the preflight's errors, importable here
    BadTimeColumn, MissingExternalTable, PreflightError, UnanalyzableQuery, raise_all,
)
from dagster_sparkmesh.execution.preflight_inputs import (
    FirstQuery, PreflightInputs, analyze_query, created_by_pre_statements, model_reads,
)
from dagster_sparkmesh.execution.results import AuditResult
from dagster_sparkmesh.model.kinds import IncrementalByTimeRangeKind
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.snapshot.records import IntervalsToCompute

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

# How the interval writer compares a time column with the bounds (``engine.partition_sql._bound``): dates and
# timestamps as such, strings as text in ``time_column_format``, integers as that text cast to a number.
DATE_TYPES = frozenset({"date", "timestamp", "timestamp_ntz"})
INTEGER_TYPES = frozenset({"tinyint", "smallint", "int", "bigint"})
_STRING_TYPE = re.compile(r"^(string|varchar\(\d+\)|char\(\d+\))$")
# An integer can only hold a period written with digits, largest unit first: 20240131, 2024013105, 2024.
_DIGITS_ONLY_FORMAT = re.compile(r"^(?:yyyy|MM|dd|HH|mm|ss)+$")


@dataclass(frozen=True)
class PreflightReport:
    time_columns_checked: frozenset[str] = frozenset()
    """Models whose time column was verified now, or before the first write of their query (``ran_before``); the
    others are verified before their first write."""
    externals_checked: frozenset[str] = frozenset()
    external_audits: tuple[tuple[str, AuditResult], ...] = ()
    """(external model, result) of the audits of the externals read (``external_models.yaml``): all passed or
    non-blocking (a blocking failure raises)."""
    seconds: float = 0.0
    first_queries: Mapping[str, FirstQuery] = field(default_factory=dict)
    """Model → its first batch's query where the preflight read the tables the evaluator reads (with temp views of
    parents not built yet, the preflight's text is not what runs, and is not kept)."""
    output_columns: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Model → its query's (column, type) pairs as analyzed, also over temp views of parents not built yet."""
    absent_tables: frozenset[str] = frozenset()
    """Models whose physical table the catalog did not list during the preflight: their first write creates it
    (a creation that finds the table there after all writes into it like into any existing table)."""


def run_preflight(ctx: ExecutionContext, plan: Plan, intervals: IntervalsToCompute) -> PreflightReport:
    """Check the inputs of the models with intervals to compute in ``intervals`` (the backfill stage's); raise the
    problems found.

    A plan with nothing to compute returns at once, without opening a Spark session."""
    began = time.monotonic()
    models = [ctx.project.models[name] for name in ctx.project.models if intervals.get(name)]
    if not models:
        return PreflightReport()
    externals = _check_externals(ctx, models)
    external_audits = audit_externals(ctx, externals)
    inputs = PreflightInputs(ctx, plan, intervals)
    try:
        checked = _check_time_columns(ctx, inputs, models)
    finally:
        inputs.drop_views()
    return PreflightReport(
        time_columns_checked=frozenset(checked),
        externals_checked=frozenset(externals),
        external_audits=external_audits,
        seconds=round(time.monotonic() - began, 3),
        first_queries={name: inputs.first_query(name) for name in checked if name in inputs.first_queries},
        output_columns=inputs.output_columns(),
        absent_tables=inputs.absent(models),
    )


def time_column_problem(kind: IncrementalByTimeRangeKind, columns: Mapping[str, str]) -> tuple[str, str] | None:
    """(what is wrong, what to do) with the time column among a query's output ``columns`` (name → Spark simple
    type), or None when the interval writer can compare it with the interval bounds."""
    found = {name.lower(): data_type.lower() for name, data_type in columns.items()}
    column, data_type = kind.time_column, found.get(kind.time_column.lower())
    if data_type is None:
        return (
            f"its query returns no column {column}, its time column (it returns: {', '.join(columns) or 'nothing'})",
            f"select {column} in the query, or name the right column: kind INCREMENTAL_BY_TIME_RANGE (time_column ...)",
        )
    if data_type in DATE_TYPES or _STRING_TYPE.match(data_type):
        return None
    if data_type in INTEGER_TYPES:
        if _DIGITS_ONLY_FORMAT.match(kind.time_column_format):
            return None
        return (
            f"its time column {column} is an integer ({data_type}) but its format {kind.time_column_format!r} "
            "does not write a period with digits only",
            f"cast {column} to a DATE, or give its format: time_column ({column}, '%Y%m%d')",
        )
    return (
        f"its time column {column} is a {data_type}, which cannot hold a period",
        f"return {column} as a DATE or TIMESTAMP (or a string/integer in the format of "
        f"time_column ({column}, '<format>')); accepted: date, timestamp, timestamp_ntz, string, integers",
    )


def check_time_column(engine: SparkEngine, model: Model, query_sql: str) -> None:
    """The run-time check of a model the preflight could not analyze: raise before its first write."""
    problem = time_column_problem(model.kind, analyze_query(engine, model, query_sql))
    if problem is not None:
        raise _time_column_error(model, *problem)


# -- externals ---------------------------------------------------------------------------------------------------


def _check_externals(ctx: ExecutionContext, models: list[Model]) -> dict[str, list[str]]:
    """External model name → the models that read it, once every one of them has its table."""
    externals = ctx.project.external_models
    created = created_by_pre_statements(ctx.project.models.values())
    readers: dict[str, list[Model]] = {}
    for model in models:
        for name in sorted(model_reads(model, ctx.project.models)):
            if name in externals and name not in created:
                readers.setdefault(name, []).append(model)
    by_schema: dict[str, list[str]] = {}
    for name in sorted(readers):
        by_schema.setdefault(name.rsplit(".", 1)[0].lower(), []).append(name)
    problems = []
    for schema, names in by_schema.items():
        listing = ctx.engine.catalog.list_schema(schema)  # one catalog round trip per schema
        for name in names:
            if listing is None or name.rsplit(".", 1)[1].lower() not in listing:
                missing = _missing_external(externals[name], readers[name], ctx.project.path, listing is not None)
                problems.append(missing)
    raise_all(problems)
    return {name: [model.name for model in models] for name, models in readers.items()}


def _missing_external(
    external: ExternalModel, readers: list[Model], root: Path, schema_exists: bool
) -> MissingExternalTable:
    schema, table = external.name.rsplit(".", 1)
    what = f"schema {schema} has no table {table}" if schema_exists else f"schema {schema} does not exist"
    reading = ", ".join(f"{m.name} ({_relative(m.path, root)})" for m in readers)
    return MissingExternalTable(
        f"external model {external.name} has no table in the catalog: {what}; read by {reading}",
        path=external.path,
        hint=f"create {external.name} (or correct its name in {external.path.name}) before applying; "
        "nothing was written",
    )


def _relative(path: Path, root: Path) -> Path:
    return path.relative_to(root) if path.is_relative_to(root) else path


# -- time columns ------------------------------------------------------------------------------------------------


def _check_time_columns(ctx: ExecutionContext, inputs: PreflightInputs, models: list[Model]) -> list[str]:
    checked, problems = [], []
    timed = [model for model in models if model.kind.has_time_column and model.source == "sql"]
    ran_before = {model.name for model in inputs.analyze(timed, written=models)}
    checked.extend(sorted(ran_before))
    for model in timed:
        if model.name in ran_before:
            continue
        columns = inputs.columns(model)
        if columns is None:
            continue  # a parent's output is known only once it ran: checked before this model's first write
        problem = time_column_problem(model.kind, columns)
        if problem is not None:
            problems.append(_time_column_error(model, *problem))
        checked.append(model.name)
    raise_all(problems)
    return checked


def _time_column_error(model: Model, what: str, hint: str) -> BadTimeColumn:
    return BadTimeColumn(
        f"model {model.name}: {what}",
        path=model.path,
        line=model.line,
        hint=f"{hint}; nothing of {model.name} was written",
    )
