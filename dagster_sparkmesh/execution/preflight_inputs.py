"""What the preflight analyzes the models' queries against (``execution.preflight``): the externals, the physical
tables that exist, and session temp views of the parents new in the plan (their rendered queries, or a seed's
columns), dropped once the preflight is done; and the first batch's query it hands to the evaluator."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, NoReturn

from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.preflight_errors import UnanalyzableQuery
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.model.table_formats import lakehouse_format
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.intervals import batches
from dagster_sparkmesh.plan.versions import new_version
from dagster_sparkmesh.project.rendering import render_query
from dagster_sparkmesh.snapshot.naming import DEFAULT_CATALOG
from dagster_sparkmesh.snapshot.records import Interval, IntervalsToCompute

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

_THIS_MODEL = re.compile(r"@this_model\b", re.IGNORECASE)


@dataclass(frozen=True)
class FirstQuery:
    """A model's first batch and the query the preflight rendered for it from the tables the evaluator reads: the
    evaluator runs that text instead of rendering it again, and the preflight's analysis of it
    (``PreflightReport.output_columns``) types that very query."""

    interval: Interval
    sql: str


class PreflightInputs:
    """What the analyzed queries read: externals, existing physical tables, and temp views of new parents."""

    def __init__(self, ctx: ExecutionContext, plan: Plan, intervals: IntervalsToCompute) -> None:
        self.ctx = ctx
        self.plan = plan
        self.intervals = intervals
        self.tables = plan.tables(ctx.project.external_models)
        self._created = created_by_pre_statements(ctx.project.models.values())
        self._listings: dict[str, set[str] | None] = {}
        self._sources: dict[str, str | None] = {}
        self._columns: dict[str, dict[str, str] | None] = {}
        self._views: list[str] = []
        self.first_queries: dict[str, tuple[Interval, str]] = {}
        self._changed = frozenset((*plan.added, *plan.directly_modified, *plan.indirectly_modified))

    def columns(self, model: Model) -> dict[str, str] | None:
        """The model's output columns (name → Spark type), or None when they are known only at run time."""
        if model.name not in self._columns:
            query = self._render(model)
            self._columns[model.name] = None if query is None else analyze_query(self.ctx.engine, model, query)
        return self._columns[model.name]

    def analyze(self, models: list[Model], written: Sequence[Model] = ()) -> list[Model]:
        """Analyze the models' queries, ``max_workers`` at a time: each is a round trip to Spark, and none waits
        for another once the temp views of the new parents exist (created while rendering, in order). The schemas
        of the ``written`` models' own tables are listed with those the queries read (``absent``). Returns the
        models left out because their query ran before (``ran_before``)."""
        with ThreadPoolExecutor(max(1, self.ctx.max_workers), thread_name_prefix="sparkmesh-preflight") as pool:
            self._list_schemas(models, written, pool)
            ran = [model for model in models if self.ran_before(model)]
            ran_names = {model.name for model in ran}
            models = [model for model in models if model.name not in ran_names]
            rendered = [(model, self._render(model)) for model in models if model.name not in self._columns]
            todo = [(model, query) for model, query in rendered if query is not None]
            # The first refusal in the models' order is raised.
            analyzed = list(pool.map(lambda item: analyze_query(self.ctx.engine, *item), todo))
        self._columns.update({model.name: None for model, query in rendered if query is None})
        self._columns.update({model.name: columns for (model, _), columns in zip(todo, analyzed)})
        return ran

    def ran_before(self, model: Model) -> bool:
        """The model is unchanged against the environment it was promoted in, and its query wrote intervals into a
        table of its version, which is its fingerprint's own: its output and time column were checked before that
        first write, against inputs of the versions the fingerprint chains. Analyzing it again would check nothing
        new (a daily run's models); what it cannot see, an external table altered outside the project, fails at the
        model's write. Not for a lakehouse table, whose write takes the time column's type from the analysis."""
        snapshot = self.plan.environment_after.snapshot_for(model.name)
        table = self.tables.get(model.name)
        if snapshot is None or table is None or snapshot.fingerprint != model.fingerprint:
            return False
        if model.name in self._changed or lakehouse_format(model) is not None:
            return False
        if snapshot.version != new_version(model.name, snapshot.fingerprint) or not self._exists(table):
            return False  # a forward-only or non-breaking change shares the table of another query
        return bool(self.ctx.state.get_intervals(model.name, snapshot.version))

    def _list_schemas(self, models: list[Model], written: Sequence[Model], pool: ThreadPoolExecutor) -> None:
        """The schemas of the physical tables the models (and their new parents) may read, and of the ``written``
        models' own tables, listed side by side."""
        models_read = {name for model in models for name in model_reads(model, self.ctx.project.models)}
        models_read |= {model.name for model in written}
        tables = [self.tables[name] for name in models_read if name in self.ctx.project.models and name in self.tables]
        schemas = sorted({table.rsplit(".", 1)[0] for table in tables} - self._listings.keys())
        self._listings.update(zip(schemas, pool.map(self.ctx.engine.catalog.list_schema, schemas)))

    def absent(self, models: Sequence[Model]) -> frozenset[str]:
        """The models whose physical table the catalog did not list (a listing taken for this preflight)."""
        return frozenset(m.name for m in models if m.name in self.tables and not self._exists(self.tables[m.name]))

    def output_columns(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Model → its query's (column, type) pairs as analyzed, also over temp views of new parents."""
        return {name: tuple(columns.items()) for name, columns in self._columns.items() if columns}

    def first_query(self, name: str) -> FirstQuery:
        return FirstQuery(*self.first_queries[name])

    def drop_views(self) -> None:
        """Drop the temp views, side by side: each is a round trip, and the first write waits for them."""
        if self._views:
            with ThreadPoolExecutor(max(1, self.ctx.max_workers), thread_name_prefix="sparkmesh-preflight") as pool:
                list(pool.map(self.ctx.engine.catalog.drop_temp_view, self._views))
        self._views.clear()

    def _render(self, model: Model) -> str | None:
        parents = model_reads(model, self.ctx.project.models) - {model.name}  # its own table is @this_model's business
        reads = {name: self._source(name) for name in parents}
        if None in reads.values():
            return None
        own = self.tables.get(model.name)
        if model.depends_on_self or _THIS_MODEL.search(model.query or ""):
            if own is None or not self._exists(own):
                return None  # reads its own table, which this plan creates
            reads[model.name] = own
        interval = _some_interval(self.plan, self.intervals, model)
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
            self.ctx.engine.catalog.create_query_view(view, query)
        except EngineError as error:
            _refused_by_spark(model, error)
        self._views.append(view)
        return view

    def _seed_view(self, model: Model) -> str:
        from dagster_sparkmesh.project.seeds import seed_columns

        columns = seed_columns((model.path.parent / model.kind.path).resolve(), model.columns, model.kind.csv_settings)
        view = _view_name()
        self.ctx.engine.catalog.create_temp_view(view, columns, [])
        self._views.append(view)
        return view

    def _exists(self, qualified: str) -> bool:
        schema, table = qualified.rsplit(".", 1)  # (the schema with its catalog, if any)
        if schema not in self._listings:
            self._listings[schema] = self.ctx.engine.catalog.list_schema(schema)
        listing = self._listings[schema]
        return listing is not None and table in listing


def analyze_query(engine: SparkEngine, model: Model, query_sql: str) -> dict[str, str]:
    """The query's output columns (name → Spark type); Spark's refusal becomes the model's error."""
    try:
        return dict(engine.catalog.query_schema(query_sql))
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


def _some_interval(plan: Plan, intervals: IntervalsToCompute, model: Model) -> Interval:
    """The model's first batch as the evaluator writes it (analysis does not depend on the bounds' values)."""
    missing = intervals.get(model.name)
    if missing:
        return batches(list(missing), 1 if model.depends_on_self else getattr(model.kind, "batch_size", None))[0]
    return Interval(start=plan.start, end=max(plan.end, plan.start + timedelta(days=1)))


def _view_name() -> str:
    return f"sparkmesh_preflight_{uuid.uuid4().hex[:12]}"


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
                parts = [part.name.lower() for part in target.parts]  # (with its catalog, as externals are named)
                created.add(".".join(parts[1:] if parts[0] == DEFAULT_CATALOG and len(parts) == 3 else parts))
    return frozenset(created)


def model_reads(model: Model, models: Mapping[str, Model], seen: frozenset[str] = frozenset()) -> set[str]:
    """The models and externals ``model`` reads, looking through EMBEDDED models (rendering inlines them)."""
    reads = set()
    for name in model.depends_on:
        parent = models.get(name)
        if parent is not None and parent.kind.inlined and name not in seen:
            reads |= model_reads(parent, models, seen | {model.name})
        else:
            reads.add(name)
    return reads
