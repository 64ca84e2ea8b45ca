"""Preflight: refuse, before anything is written, a plan whose models would fail on their inputs at run time.

It runs first in ``apply_plan`` (before the plan-log row) and in ``run_models`` (before snapshots are pushed), over
the models that have intervals to compute, and changes nothing: no state row, no table, no schema.

1. Every external model they read (also through EMBEDDED models) has its table in the catalog now: one listing
   per schema (``SparkEngine.list_schema``), so a missing schema and a missing table are told apart. Then their
   audits (``audits:`` in ``external_models.yaml``) run: a blocking failure refuses the plan.
2. Every SQL INCREMENTAL_BY_TIME_RANGE model is analyzed (Spark resolves the query's columns and types without
   running a job) and its time column must exist with a type the interval writer can compare with the interval
   bounds (``time_column_problem``). Its parents must be readable now: an external, an existing physical table, or
   a parent new in this plan whose output is known without running it: a SQL model (a session temp view of its
   rendered query, itself analyzed the same way) or a seed (a temp view of its columns). Temp views live in the
   session only and are dropped before returning.

What is left for run time: a model reading a new Python model, a new SCD type 2 model (its table adds history
columns to its query's) or its own new table (``@this_model``), and Python INCREMENTAL_BY_TIME_RANGE models (their
output exists only once their code ran). The evaluator checks those before the model's first write
(``check_time_column``), so the error comes before anything *of that model* is written.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from dagster_sparkmesh.errors import EngineError, ExecutionError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.external_audits import audit_externals
from dagster_sparkmesh.execution.results import AuditResult
from dagster_sparkmesh.model.kinds import IncrementalByTimeRangeKind
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.intervals import batches
from dagster_sparkmesh.project.rendering import render_query
from dagster_sparkmesh.snapshot.records import Interval

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

# How the interval writer compares a time column with the bounds (``engine.partition_sql._bound``): dates and
# timestamps as such, strings as text in ``time_column_format``, integers as that text cast to a number.
DATE_TYPES = frozenset({"date", "timestamp", "timestamp_ntz"})
INTEGER_TYPES = frozenset({"tinyint", "smallint", "int", "bigint"})
_STRING_TYPE = re.compile(r"^(string|varchar\(\d+\)|char\(\d+\))$")
# An integer can only hold a period written with digits, largest unit first: 20240131, 2024013105, 2024.
_DIGITS_ONLY_FORMAT = re.compile(r"^(?:yyyy|MM|dd|HH|mm|ss)+$")
_THIS_MODEL = re.compile(r"@this_model\b", re.IGNORECASE)


class PreflightError(ExecutionError):
    """A model would fail on its inputs: raised before anything (of that model) is written."""


class MissingExternalTable(PreflightError):
    """An external model read by a model to compute has no table (or no schema) in the catalog."""


class BadTimeColumn(PreflightError):
    """An INCREMENTAL_BY_TIME_RANGE model's query lacks its time column, or returns it in a type that cannot hold
    a period."""


class UnanalyzableQuery(PreflightError):
    """Spark refused to analyze a model's query (a missing column or table, a type error)."""


@dataclass(frozen=True)
class FirstQuery:
    """A model's first batch, the query the preflight rendered for it, and the query's (column, Spark type) pairs
    when the preflight analyzed it: the evaluator runs that text, and creates the table from those columns,
    instead of rendering and analyzing it again."""

    interval: Interval
    sql: str
    columns: tuple[tuple[str, str], ...] | None = None

    def columns_for(self, batch: Interval) -> tuple[tuple[str, str], ...] | None:
        """The analyzed columns of the batch's query, if this is it."""
        return self.columns if batch == self.interval else None


@dataclass(frozen=True)
class PreflightReport:
    time_columns_checked: frozenset[str] = frozenset()
    """Models whose time column was verified now; the others are verified before their first write."""
    externals_checked: frozenset[str] = frozenset()
    external_audits: tuple[tuple[str, AuditResult], ...] = ()
    """(external model, result) of the audits of the externals read (``external_models.yaml``): all passed or
    non-blocking (a blocking failure raises)."""
    seconds: float = 0.0
    first_queries: Mapping[str, FirstQuery] = field(default_factory=dict)
    """Model → its first batch's query where the preflight read the tables the evaluator reads (with temp views of
    parents not built yet, the preflight's text is not what runs, and is not kept)."""


def run_preflight(ctx: ExecutionContext, plan: Plan, to_compute: Collection[str]) -> PreflightReport:
    """Check the inputs of the models in ``to_compute`` (names with intervals to compute); raise the problems found.

    A plan with nothing to compute returns at once, without opening a Spark session."""
    began = time.monotonic()
    models = [ctx.project.models[name] for name in ctx.project.models if name in to_compute]
    if not models:
        return PreflightReport()
    externals = _check_externals(ctx, models)
    external_audits = audit_externals(ctx, externals)
    inputs = _Inputs(ctx, plan)
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
    problem = time_column_problem(model.kind, _analyze(engine, model, query_sql))
    if problem is not None:
        raise _time_column_error(model, *problem)


# -- externals ---------------------------------------------------------------------------------------------------


def _check_externals(ctx: ExecutionContext, models: list[Model]) -> dict[str, list[str]]:
    """External model name → the models that read it, once every one of them has its table."""
    externals = ctx.project.external_models
    created = created_by_pre_statements(ctx.project.models.values())
    readers: dict[str, list[Model]] = {}
    for model in models:
        for name in sorted(_reads(model, ctx.project.models)):
            if name in externals and name not in created:
                readers.setdefault(name, []).append(model)
    by_schema: dict[str, list[str]] = {}
    for name in sorted(readers):
        by_schema.setdefault(name.split(".", 1)[0].lower(), []).append(name)
    problems = []
    for schema, names in by_schema.items():
        listing = ctx.engine.list_schema(schema)  # one catalog round trip per schema
        for name in names:
            if listing is None or name.split(".", 1)[1].lower() not in listing:
                missing = _missing_external(externals[name], readers[name], ctx.project.path, listing is not None)
                problems.append(missing)
    _raise_all(problems)
    return {name: [model.name for model in models] for name, models in readers.items()}


def _missing_external(
    external: ExternalModel, readers: list[Model], root: Path, schema_exists: bool
) -> MissingExternalTable:
    schema, table = external.name.split(".", 1)
    what = f"schema {schema} has no table {table}" if schema_exists else f"schema {schema} does not exist"
    reading = ", ".join(f"{m.name} ({_relative(m.path, root)})" for m in readers)
    return MissingExternalTable(
        f"external model {external.name} has no table in the catalog: {what}; read by {reading}",
        path=external.path,
        hint=f"create {external.name} (or correct its name in {external.path.name}) before applying; "
        "nothing was written",
    )


def created_by_pre_statements(models: Iterable[Model]) -> frozenset[str]:
    """Tables that models' pre-statements create (``CREATE TABLE IF NOT EXISTS raw.x AS ...`` before a query that
    reads raw.x, as SQLMesh's sushi example does): they exist only once those statements ran, at run time."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    created = set()
    for model in models:
        for statement in model.pre_statements:
            if statement.lstrip()[:6].upper() != "CREATE":
                continue
            try:
                parsed = sqlglot.parse_one(statement, dialect="spark")
            except SqlglotError:  # a statement sqlglot cannot read creates nothing this check can name
                continue
            target = parsed.this if isinstance(parsed, exp.Create) else None
            target = target.this if isinstance(target, exp.Schema) else target
            if isinstance(target, exp.Table) and target.db:
                created.add(f"{target.db}.{target.name}".lower())
    return frozenset(created)


def _relative(path: Path, root: Path) -> Path:
    return path.relative_to(root) if path.is_relative_to(root) else path


def _reads(model: Model, models: Mapping[str, Model], seen: frozenset[str] = frozenset()) -> set[str]:
    """The models and externals ``model`` reads, looking through EMBEDDED models (rendering inlines them)."""
    reads = set()
    for name in model.depends_on:
        parent = models.get(name)
        if parent is not None and parent.kind.inlined and name not in seen:
            reads |= _reads(parent, models, seen | {model.name})
        else:
            reads.add(name)
    return reads


# -- time columns ------------------------------------------------------------------------------------------------


def _check_time_columns(ctx: ExecutionContext, inputs: _Inputs, models: list[Model]) -> list[str]:
    checked, problems = [], []
    for model in models:
        if not model.kind.has_time_column or model.source != "sql":
            continue
        columns = inputs.columns(model)
        if columns is None:
            continue  # a parent's output is known only once it ran: checked before this model's first write
        problem = time_column_problem(model.kind, columns)
        if problem is not None:
            problems.append(_time_column_error(model, *problem))
        checked.append(model.name)
    _raise_all(problems)
    return checked


def _time_column_error(model: Model, what: str, hint: str) -> BadTimeColumn:
    return BadTimeColumn(
        f"model {model.name}: {what}",
        path=model.path,
        line=model.line,
        hint=f"{hint}; nothing of {model.name} was written",
    )


class _Inputs:
    """What the analyzed queries read: externals, existing physical tables, and temp views of new parents."""

    def __init__(self, ctx: ExecutionContext, plan: Plan) -> None:
        self.ctx = ctx
        self.plan = plan
        self.tables = plan.tables(ctx.project.external_models)
        self._created = created_by_pre_statements(ctx.project.models.values())
        self._listings: dict[str, set[str] | None] = {}
        self._sources: dict[str, str | None] = {}
        self._columns: dict[str, dict[str, str] | None] = {}
        self._views: list[str] = []
        self.first_queries: dict[str, tuple[Interval, str]] = {}

    def columns(self, model: Model) -> dict[str, str] | None:
        """The model's output columns (name → Spark type), or None when they are known only at run time."""
        if model.name not in self._columns:
            query = self._render(model)
            self._columns[model.name] = None if query is None else _analyze(self.ctx.engine, model, query)
        return self._columns[model.name]

    def first_query(self, name: str) -> FirstQuery:
        columns = self._columns.get(name)
        return FirstQuery(*self.first_queries[name], columns=tuple(columns.items()) if columns else None)

    def drop_views(self) -> None:
        for view in self._views:
            self.ctx.engine.drop_temp_view(view)
        self._views.clear()

    def _render(self, model: Model) -> str | None:
        parents = _reads(model, self.ctx.project.models) - {model.name}  # its own table is @this_model's business
        reads = {name: self._source(name) for name in parents}
        if None in reads.values():
            return None
        own = self.tables.get(model.name)
        if model.depends_on_self or _THIS_MODEL.search(model.query or ""):
            if own is None or not self._exists(own):
                return None  # reads its own table, which this plan creates
            reads[model.name] = own
        interval = _some_interval(self.plan, model)
        query = render_query(
            model,
            start=interval.start,
            end=interval.end,
            execution_time=self.ctx.clock(),
            table_for=reads,
            models=self.ctx.project.models,
            variables=self.ctx.project.config.variables,
        )
        if all(source == self.tables.get(name, name) for name, source in reads.items()):
            self.first_queries[model.name] = (interval, query)
        return query

    def _source(self, name: str) -> str | None:
        """The table or temp view to read for a model or external name; None when unknown before run time."""
        if name not in self._sources:
            self._sources[name] = self._find_source(name)
        return self._sources[name]

    def _find_source(self, name: str) -> str | None:
        if name in self.ctx.project.external_models:
            # Its table exists (``_check_externals`` ran first), unless a pre-statement creates it at run time.
            return None if name in self._created else name
        model, table = self.ctx.project.models.get(name), self.tables.get(name)
        if model is None or table is None:
            return None
        if self._exists(table):
            return table
        if model.source == "seed":
            return self._seed_view(model)
        if model.source != "sql" or model.kind.keeps_history:
            return None  # a Python model's output needs its code run; SCD type 2 tables add history columns
        query = self._render(model)
        if query is None:
            return None
        view = _view_name()
        try:
            self.ctx.engine.create_query_view(view, query)
        except EngineError as error:
            _refused_by_spark(model, error)
        self._views.append(view)
        return view

    def _seed_view(self, model: Model) -> str:
        from dagster_sparkmesh.project.seeds import seed_columns

        columns = seed_columns((model.path.parent / model.kind.path).resolve(), model.columns)
        view = _view_name()
        self.ctx.engine.create_temp_view(view, columns, [])
        self._views.append(view)
        return view

    def _exists(self, qualified: str) -> bool:
        schema, table = qualified.split(".", 1)
        if schema not in self._listings:
            self._listings[schema] = self.ctx.engine.list_schema(schema)
        listing = self._listings[schema]
        return listing is not None and table in listing


def _analyze(engine: SparkEngine, model: Model, query_sql: str) -> dict[str, str]:
    try:
        return dict(engine.query_schema(query_sql))
    except EngineError as error:
        _refused_by_spark(model, error)


def _refused_by_spark(model: Model, error: EngineError) -> NoReturn:
    """Spark's refusal of the query becomes the model's error; anything else (a lost session) stays as it is."""
    if not error.refusal:
        raise error
    raise UnanalyzableQuery(
        f"model {model.name}: Spark cannot analyze its query: {error.spark_message or error.message}",
        path=model.path,
        line=model.line,
        snippet=error.snippet,
        hint=f"fix the query (or the tables it reads); nothing of {model.name} was written",
    ) from error


def _some_interval(plan: Plan, model: Model) -> Interval:
    """The model's first batch as the evaluator writes it (analysis does not depend on the bounds' values)."""
    missing = plan.missing_intervals.get(model.name)
    if missing:
        return batches(list(missing), 1 if model.depends_on_self else getattr(model.kind, "batch_size", None))[0]
    return Interval(start=plan.start, end=max(plan.end, plan.start + timedelta(days=1)))


def _view_name() -> str:
    return f"sparkmesh_preflight_{uuid.uuid4().hex[:12]}"


def _raise_all(problems: Iterable[PreflightError]) -> None:
    """Raise the first problem, listing the others too: one refused apply should show every reason."""
    problems = list(problems)
    if not problems:
        return
    first = problems[0]
    if len(problems) == 1:
        raise first
    raise type(first)(
        f"{first.message} (and {len(problems) - 1} more problem(s), all listed below)",
        path=first.path,
        line=first.line,
        snippet="\n".join(problem.message for problem in problems),
        hint=first.hint,
    )
