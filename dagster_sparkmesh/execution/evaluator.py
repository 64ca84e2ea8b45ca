"""Evaluate one model over a list of missing intervals: one function per kind, looked up in a registry.

Every writer follows the same order (architecture invariants 3 and 4): make sure the physical table exists, write the
data for the interval batch, run the audits on it, and only then record the batch's intervals in the state store.
A crash anywhere leaves the intervals missing, so a re-run recomputes exactly them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dagster_sparkmesh.engine.generation_tables import (
    GENERATIONS, create_empty_generation_table, create_generation_table, full_table_layout, replace_generation,
)
from dagster_sparkmesh.engine.counted_writes import RowChecks
from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.engine.scd2 import merge_history
from dagster_sparkmesh.engine.unique_keys import refuse_repeated_keys
from dagster_sparkmesh.errors import AuditFailure
from dagster_sparkmesh.execution.abort import StopRequested
from dagster_sparkmesh.execution.audits import run_audits
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.crashpoints import crashpoint
from dagster_sparkmesh.execution.layouts import generation_tables_enabled, partition_period
from dagster_sparkmesh.execution.preflight import FirstQuery, check_time_column
from dagster_sparkmesh.execution.results import AuditResult, ModelRunResult
from dagster_sparkmesh.execution.retry import with_retries
from dagster_sparkmesh.execution.row_checks import row_checks, write_row_checks
from dagster_sparkmesh.execution.unchanged_inputs import inputs_digest
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.coverage import InputGap, complete_part, input_gaps, lookback_of
from dagster_sparkmesh.project.rendering import render_query, render_statements
from dagster_sparkmesh.snapshot.naming import physical_schema, physical_table, quote_identifier
from dagster_sparkmesh.snapshot.records import Interval


@dataclass(frozen=True)
class ModelTarget:
    """A model as the plan wants it computed: its version (physical table) and the intervals it misses."""

    model: Model
    version: str
    intervals: tuple[Interval, ...]
    table_for: Mapping[str, str]
    """Model or external name → the table to read (parents' physical tables, never views)."""
    should_stop: Callable[[], bool] = field(default=lambda: False, compare=False)
    """Checked between interval batches: a requested stop ends the model after its last recorded batch."""
    time_column_checked: bool = False
    """The preflight verified the time column already; else it is verified before the model's first write."""
    versions: Mapping[str, str] = field(default_factory=dict)
    """Model name → the version the environment reads: where the parents' recorded intervals are looked up."""
    first_query: FirstQuery | None = None
    """The first batch's query as the preflight rendered (and analyzed) it from these very tables: not done again."""
    output_columns: tuple[tuple[str, str], ...] | None = None
    """The query's (column, type) pairs as the preflight analyzed it, also over temp views of parents not written
    yet: they name a new period table's columns (its first write gives it the types the query has then)."""
    listed_absent: bool = False
    """The preflight's catalog listing did not hold the physical table: no look-up before its first write, which
    creates it (a CTAS or CREATE TABLE that finds it there after all falls back to writing into it)."""
    keep_unchanged: bool = False
    """A FULL model whose query and inputs did not change since its last write keeps its table
    (``execution.unchanged_inputs``); False for a restatement, which recomputes whatever it finds."""

    @property
    def table(self) -> str:
        return physical_table(self.model.name, self.version)

    def columns_analyzed_for(self, batch: Interval) -> tuple[tuple[str, str], ...] | None:
        """The batch's query's (column, type) pairs when the preflight analyzed that very text over these tables."""
        return self.output_columns if self.first_query is not None and self.first_query.interval == batch else None


def evaluate_model(ctx: ExecutionContext, target: ModelTarget) -> ModelRunResult:
    began = time.monotonic()
    writer = _WRITERS.get(target.model.kind_name)
    if writer is None or not target.intervals:
        return ModelRunResult(
            model=target.model.name, version=target.version, physical_table=None, skipped=True
        )
    ctx.engine.create_schema(physical_schema(target.model.name))
    # Writers are idempotent per interval and record intervals after the data, so a transient failure can
    # simply run the writer again (intervals it already recorded are rewritten identically).
    incomplete: list[Interval] = []
    kept: list[bool] = []

    def attempt() -> tuple[int, list[AuditResult]]:
        kept.clear()  # what an attempt that failed found says nothing about this one
        return writer(ctx, target, incomplete, kept)

    with ctx.engine.session_settings(target.model.session_properties):
        rows, audits = with_retries(attempt, ctx.retry_policy)
    return ModelRunResult(
        model=target.model.name,
        version=target.version,
        physical_table=target.table,
        intervals=target.intervals,
        rows_written=rows,
        duration_seconds=round(time.monotonic() - began, 3),
        audits=tuple(audits),
        incomplete=tuple(sorted(set(incomplete))),
        kept=bool(kept),
    )


def rendered_query(ctx: ExecutionContext, target: ModelTarget, interval: Interval) -> str:
    """The Spark SQL of a SQL model's query for ``interval``, reading the tables ``target`` names."""
    return render_query(target.model, **_render_context(ctx, target, interval))


def _render_context(ctx: ExecutionContext, target: ModelTarget, interval: Interval) -> dict:
    """What rendering the model's query or statements for ``interval`` needs (one place for both)."""
    return {
        "start": interval.start,
        "end": interval.end,
        "execution_time": ctx.clock(),
        "table_for": _table_lookup(target),
        "models": ctx.project.models,
        "variables": ctx.project.config.variables,
    }


def _table_lookup(target: ModelTarget) -> Callable[[str], str]:
    def table_for(name: str) -> str:
        return target.table if name == target.model.name else target.table_for.get(name, name)

    return table_for


def _run_statements(ctx: ExecutionContext, target: ModelTarget, interval: Interval, statements: tuple[str, ...]) -> None:
    """Pre/post-statements, rendered like the query (macros, ``@this_model`` = the physical table) and run in order."""
    if not statements:
        return
    for statement in render_statements(target.model, statements, **_render_context(ctx, target, interval)):
        ctx.engine.execute(statement)


def _span(intervals: tuple[Interval, ...]) -> Interval:
    return Interval(start=min(i.start for i in intervals), end=max(i.end for i in intervals))


def _commit(
    ctx: ExecutionContext, target: ModelTarget, batch: tuple[Interval, ...], incomplete: list[Interval],
    *, audit: bool = True, checks: RowChecks | None = None,
) -> list[AuditResult]:
    """Run the post-statements, audit the freshly written batch, then record it. A failing post-statement or
    blocking audit leaves the batch unrecorded; ``audit=False``: a kept table, audited when it was written;
    ``checks``: the audits the write counted on the rows of the batch (``execution.row_checks``).

    Only the intervals whose inputs were complete are recorded (``plan.coverage``); the others go to
    ``incomplete`` and stay missing, so the model is computed again once its parents have them."""
    _run_statements(ctx, target, _span(batch), target.model.post_statements)
    counted = checks.holding if checks else {}
    audits = run_audits(ctx, target.model, target.table, written=_span(batch), counted=counted) if audit else []
    failed = [audit for audit in audits if audit.blocking and not audit.passed]
    if failed:
        raise AuditFailure(
            f"{target.model.name}: blocking audit {failed[0].name} found {failed[0].failing_rows} offending row(s)",
            path=target.model.path,
            snippet=failed[0].query,
            hint="fix the model or its data; the interval stays missing and the environment is not promoted",
        ) from _AuditResults(audits)
    crashpoint("before_record_interval")
    gaps = input_gaps(ctx.project, target.model.name, target.versions.get, ctx.state, ctx.clock())
    complete, lacking = complete_part(batch, gaps, lookback_of(target.model))
    incomplete += lacking
    ctx.state.add_intervals(target.model.name, target.version, complete)
    return audits


class _AuditResults(Exception):
    """Carries every audit result of a failed batch to whoever reports it (CLI, Dagster)."""

    def __init__(self, results: list[AuditResult]) -> None:
        super().__init__(f"{len(results)} audit result(s)")
        self.results = results


def audit_results_of(error: BaseException) -> list[AuditResult]:
    cause = error.__cause__
    return cause.results if isinstance(cause, _AuditResults) else []


def _write_full(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool]
) -> tuple[int, list[AuditResult]]:
    """FULL (and Python FULL): recompute the whole table once for all missing intervals."""
    listed_absent = target.listed_absent and not target.model.depends_on_self  # (its empty table: created first)
    layout = None if listed_absent else full_table_layout(ctx.engine, target.table)
    if layout == GENERATIONS or (layout is None and generation_tables_enabled()):
        return _write_generation(ctx, target, incomplete, kept, exists=layout is not None)
    partitioned_by = list(target.model.partitioned_by)
    if target.model.depends_on_self and layout is None:  # it reads its own (empty, at first) table
        ctx.engine.create_table_like_query(target.table, _empty_select(target.model), partitioned_by)
        layout = "table"
    query = _select_for(ctx, target, _span(target.intervals))
    rows = ctx.engine.create_table_with_rows(target.table, query, partitioned_by) if layout is None else None
    if rows is None:
        rows = ctx.engine.replace_full(target.table, query)
    return rows, _commit(ctx, target, target.intervals, incomplete)


def _write_generation(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool], *, exists: bool
) -> tuple[int, list[AuditResult]]:
    """A FULL model's generation table: write a generation and switch the view, or keep the table when its query
    and inputs are unchanged since its last write (``execution.unchanged_inputs``).

    The inputs are read, the table written and its view switched under the table's write lock, so writers of one
    table read their inputs in the order they switch. The digest is forgotten before a write and recorded after its
    audits passed: a recorded digest always describes rows that passed them."""
    partitioned_by = list(target.model.partitioned_by)
    with ctx.state.table_write_lock(target.table):  # a write drops generations no view names: one at a time
        if target.model.depends_on_self and not exists:  # it reads its own (empty, at first) table
            create_empty_generation_table(ctx.engine, target.table, _empty_select(target.model), partitioned_by)
            exists = True
        query = _select_for(ctx, target, _span(target.intervals))
        digest = inputs_digest(ctx, target.model, query, target.table_for)
        if exists and target.keep_unchanged and digest is not None:
            if digest == ctx.state.write_inputs_digest(target.table):
                kept.append(True)  # the same query over the same rows: the table already holds its result
                return 0, _commit(ctx, target, target.intervals, incomplete, audit=False)
        checks = None if exists else row_checks(ctx, target.model)  # a new table has the query's own types
        rows = None if exists else create_generation_table(ctx.engine, target.table, query, partitioned_by, checks)
        if rows is None:  # the table was there, or another writer created it first
            ctx.state.record_write_inputs(target.table, None)
            checks, rows = None, replace_generation(ctx.engine, target.table, query)
    audits = _commit(ctx, target, target.intervals, incomplete, checks=checks)
    if digest is not None:
        ctx.state.record_write_inputs(target.table, digest)
    return rows, audits


def _write_view(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool]
) -> tuple[int, list[AuditResult]]:
    span = _span(target.intervals)
    ctx.engine.ensure_view(target.table, _select_for(ctx, target, span))  # unchanged text: no metastore update
    return 0, _commit(ctx, target, target.intervals, incomplete)


def _write_seed(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool]
) -> tuple[int, list[AuditResult]]:
    from dagster_sparkmesh.project.seeds import read_seed

    seed = read_seed(_seed_path(target.model), target.model.columns)
    ctx.engine.load_seed(target.table, seed.columns, seed.rows)
    return len(seed.rows), _commit(ctx, target, target.intervals, incomplete)


def _write_time_range(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool]
) -> tuple[int, list[AuditResult]]:
    from dagster_sparkmesh.plan.intervals import batches

    kind = target.model.kind
    rows, audits = 0, []
    # Batches never overlap: in a table this step creates, no batch's window can hold stale partitions (a
    # concurrent run writes there only if its range overlaps this one, and then it writes the same rows).
    created = False
    period = partition_period(target.model)
    exists = not target.listed_absent and ctx.engine.physical_exists(target.table)
    # A model that reads itself reads its earlier intervals: one interval at a time, in order, from a table that
    # exists (empty, with the declared columns) before its first query is even analyzed.
    batch_size = 1 if target.model.depends_on_self else kind.batch_size
    if target.model.depends_on_self and not exists:
        first = min(target.intervals)
        window = TimeWindow(kind.time_column, first.start, first.end, kind.time_column_format, period)
        exists, created = True, ctx.engine.create_interval_table(
            target.table, _empty_select(target.model), window, empty_view=True
        )
    for number, batch in enumerate(batches(list(target.intervals), batch_size)):
        if number and target.should_stop():
            raise StopRequested(target.model.name)
        unit_intervals = tuple(i for i in target.intervals if batch.start <= i.start and i.end <= batch.end)
        query = _select_for(ctx, target, batch)
        if not number and not target.time_column_checked:
            check_time_column(ctx.engine, target.model, query)  # its inputs exist only now: before any write
        crashpoint("interval_write")
        window = TimeWindow(kind.time_column, batch.start, batch.end, kind.time_column_format, period)
        covered = _span(unit_intervals) == batch  # the write's rows are the audited ones: it may count checks
        with ctx.state.table_write_lock(target.table):  # a period holds several intervals: writers take turns
            written, checks, created = _write_batch(ctx, target, batch, query, window, exists, created, covered)
            exists = True
        rows += written
        audits = _commit(ctx, target, unit_intervals, incomplete, checks=checks)
    return rows, audits


def _write_batch(
    ctx: ExecutionContext, target: ModelTarget, batch: Interval, query: str, window: TimeWindow,
    exists: bool, created: bool, covered: bool,
) -> tuple[int, RowChecks | None, bool]:
    """One batch's write, holding the table's write lock: (rows written, the row checks it counted, whether this
    step created the table). A new period table is created by its first batch's write; another new table is
    created empty first (False: a concurrent run created it first). Created under the lock, it is known to hold
    nothing yet: its first write reads no view."""
    if not exists:
        checks = write_row_checks(ctx, target.model, target.table, True, None) if covered else None
        first = ctx.engine.write_first_interval(
            target.table, query, window, columns=target.output_columns, checks=checks
        )
        if first is not None:
            return first, checks, True
    columns = target.columns_analyzed_for(batch)
    new = not exists and ctx.engine.create_interval_table(target.table, query, window, columns=columns)
    created = created or new
    checks = write_row_checks(ctx, target.model, target.table, created, columns) if covered else None
    written = ctx.engine.overwrite_interval(target.table, query, window, fresh=created, new=new, checks=checks)
    return written, checks, created


def _write_unique_key(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool]
) -> tuple[int, list[AuditResult]]:
    span = _span(target.intervals)
    query = _select_for(ctx, target, span)
    refuse_repeated_keys(ctx.engine, target.model, query, span)
    rows = None
    if not ctx.engine.table_exists(target.table):  # a new table: the upsert is all the rows
        rows = ctx.engine.create_table_with_rows(target.table, query, list(target.model.partitioned_by))
    if rows is None and not ctx.state.get_intervals(target.model.name, target.version):
        # Nothing of the table counts (restated whole, or written from incomplete inputs): build it as new.
        rows = ctx.engine.replace_full(target.table, query)
    if rows is None:
        rows = ctx.engine.upsert_by_key(target.table, query, list(target.model.kind.unique_key))
    return rows, _commit(ctx, target, target.intervals, incomplete)


def _write_scd_type_2(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool]
) -> tuple[int, list[AuditResult]]:
    """SCD type 2: merge the query's current rows into the history once for all missing intervals."""
    query = _select_for(ctx, target, _span(target.intervals))
    partitioned_by = list(target.model.partitioned_by)
    rows = merge_history(ctx.engine, target.table, target.model, query, ctx.clock(), partitioned_by)
    return rows, _commit(ctx, target, target.intervals, incomplete)


def _write_by_partition(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool]
) -> tuple[int, list[AuditResult]]:
    """INCREMENTAL_BY_PARTITION: the query's rows replace exactly the partitions they hold, once for all missing
    intervals; the table's other partitions keep their rows."""
    query = _select_for(ctx, target, _span(target.intervals))
    rows = _first_write(ctx, target, query)
    if rows is None:
        rows = ctx.engine.overwrite_partitions(target.table, query, list(target.model.partitioned_by))
    return rows, _commit(ctx, target, target.intervals, incomplete)


def _write_unmanaged(
    ctx: ExecutionContext, target: ModelTarget, incomplete: list[Interval], kept: list[bool]
) -> tuple[int, list[AuditResult]]:
    """INCREMENTAL_UNMANAGED: append the query's rows (``insert_overwrite``: replace the partitions they hold).

    An appended interval must never be computed twice, so only the intervals before the first one whose inputs
    are incomplete are computed (the others wait, missing). A crash between the append and the record of its
    intervals appends them again next time, as in SQLMesh."""
    complete, lacking = complete_part(target.intervals, _input_gaps(ctx, target))
    ready = tuple(i for i in sorted(complete) if not lacking or i.start < min(lacking).start)
    incomplete += [i for i in target.intervals if i not in ready]
    if not ready:
        return 0, []
    query = _select_for(ctx, target, _span(ready))
    rows = _first_write(ctx, target, query)
    if rows is None and target.model.kind.insert_overwrite:
        rows = ctx.engine.overwrite_partitions(target.table, query, list(target.model.partitioned_by))
    elif rows is None:
        rows = ctx.engine.append_rows(target.table, query)
    return rows, _commit(ctx, target, ready, incomplete)


def _first_write(ctx: ExecutionContext, target: ModelTarget, query: str) -> int | None:
    """SQLMesh's first insert: the table becomes the query's rows when none of it counts yet (no table, or no
    interval recorded: new, restated whole, or computed from incomplete inputs). None: add to the table."""
    rows = None
    partitioned_by = list(target.model.partitioned_by)
    if not ctx.engine.table_exists(target.table):
        if target.model.depends_on_self:
            # Its query reads the table: create it empty first; adding the rows to it is then the whole write.
            ctx.engine.create_table_like_query(target.table, _empty_select(target.model), partitioned_by)
            return None
        rows = ctx.engine.create_table_with_rows(target.table, query, partitioned_by)
    if rows is None and not ctx.state.get_intervals(target.model.name, target.version):
        rows = ctx.engine.replace_full(target.table, query)
    return rows


def _input_gaps(ctx: ExecutionContext, target: ModelTarget) -> list[InputGap]:
    return input_gaps(ctx.project, target.model.name, target.versions.get, ctx.state, ctx.clock())


def _select_for(ctx: ExecutionContext, target: ModelTarget, interval: Interval) -> str:
    """The SELECT that produces the model's rows for the interval (SQL models) or a temp view over a DataFrame.

    The model's pre-statements run first, for the same interval: they prepare the session the query runs in."""
    _run_statements(ctx, target, interval, target.model.pre_statements)
    if target.first_query is not None and target.first_query.interval == interval:
        return target.first_query.sql
    if target.model.source != "python":
        return rendered_query(ctx, target, interval)
    from dagster_sparkmesh.execution.python_runner import python_model_select

    return python_model_select(ctx, target.model, interval, _table_lookup(target))


def _empty_select(model: Model) -> str:
    """No rows, the model's declared columns: the table a self-referencing model's first interval reads."""
    columns = ", ".join(f"CAST(NULL AS {data_type}) AS {quote_identifier(name)}" for name, data_type in model.columns)
    return f"SELECT {columns} WHERE 1 = 0"


def _seed_path(model: Model):
    return (model.path.parent / model.kind.path).resolve()


_Writer = Callable[[ExecutionContext, ModelTarget, list[Interval], list[bool]], tuple[int, list[AuditResult]]]
"""(context, target, incomplete: intervals computed from incomplete inputs, kept: True appended when the table was
kept as it was) -> (rows written, audit results)."""
_WRITERS: dict[str, _Writer] = {
    "FULL": _write_full,
    "VIEW": _write_view,
    "SEED": _write_seed,
    "INCREMENTAL_BY_TIME_RANGE": _write_time_range,
    "INCREMENTAL_BY_UNIQUE_KEY": _write_unique_key,
    "SCD_TYPE_2_BY_TIME": _write_scd_type_2,
    "SCD_TYPE_2_BY_COLUMN": _write_scd_type_2,
    "INCREMENTAL_BY_PARTITION": _write_by_partition,
    "INCREMENTAL_UNMANAGED": _write_unmanaged,
}

