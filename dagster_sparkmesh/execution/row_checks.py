"""Audits a write evaluates on the rows it writes, instead of a Spark job reading the table back afterwards.

Most audits are a condition on single rows: ``not_null``, ``accepted_values``, ``forall``, ``accepted_range``, a
custom ``SELECT * FROM @this_model WHERE <condition>``. Counting the rows for which the condition holds is an
aggregate the write's own tasks can compute while they write (``engine.counted_writes``): the audit costs no job
(a Spark job per audit was ~0.25 s of a small model's ~1 s write). An audit is evaluated this way only when the
answer is the same as reading the table: the rendered audit selects every column of the audited rows with a
condition that reads nothing else (no subquery, aggregate, window or other table) and is repeatable (no
``rand``, ``uuid``...), and the write's rows are the rows the table keeps, value for value (a table the write
just created from the query, or a period table whose column types the query has, which its write finds out). Any
other audit reads the table after the write, as before; and so does one whose count the write did not deliver.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.engine.counted_writes import RowChecks
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.unchanged_inputs import changes_between_runs
from dagster_sparkmesh.model.builtin_audits import render_audit_query
from dagster_sparkmesh.model.records import Model

_AUDITED = "sparkmesh_audited_rows"
"""The name the audits are rendered against, to find their condition: no model's table can be named so."""
_NOT_ONE_ROW = (exp.Subquery, exp.Select, exp.AggFunc, exp.Window, exp.Table)


def row_checks(ctx: ExecutionContext, model: Model) -> RowChecks | None:
    """The model's audits that are conditions on single rows, for a write to evaluate; None when there is none
    (or the model has post-statements, which run between the write and the audits and may change the table)."""
    if not model.audits or model.post_statements:
        return None
    conditions = {}
    for position, call in enumerate(model.audits):  # by position: a model may call one audit twice
        try:
            rendered = render_audit_query(call, f"`{_AUDITED}`", ctx.project.audits_for(model.name))
        except ProjectError:  # it needs the interval's time values: not a condition for every write; audited after
            continue
        condition = offending_condition(rendered)
        if condition is not None:
            conditions[position] = condition
    return RowChecks(conditions) if conditions else None


def write_row_checks(ctx: ExecutionContext, model: Model, table: str, created: bool) -> RowChecks | None:
    """The row checks of a time-range write whose rows are the rows its table keeps, value for value: into a table
    created from the query, or a period table, whose write counts them only when the query has the table's column
    types (``engine.period_tables``; else they stay uncounted and the audits read the table). Not for a model
    reading its own table (its table's types are the declared ones), nor for one with partition columns of its own
    (a string partition column stores '' as NULL)."""
    if model.depends_on_self or model.partitioned_by:
        return None
    checks = row_checks(ctx, model)
    if checks is None or not created and ctx.engine.period_layout(table) is None:  # (the write asks it anyway)
        return None
    return checks


def offending_condition(audit_sql: str) -> str | None:
    """The condition on one row that makes it offending, when the audit query is ``SELECT * FROM <audited rows>
    WHERE <condition>`` with a condition reading that row alone; else None."""
    try:
        query = sqlglot.parse_one(audit_sql, dialect="spark")
    except SqlglotError:
        return None
    if not isinstance(query, exp.Select) or not _selects_every_column_of_the_audited_rows(query):
        return None
    condition = query.args.get("where")
    if condition is None or any(condition.this.find_all(*_NOT_ONE_ROW)):
        return None
    if changes_between_runs(condition.this):
        return None
    names = {_AUDITED, query.args["from_"].this.alias_or_name}
    columns = list(condition.this.find_all(exp.Column))
    if any(column.table and column.table not in names for column in columns):
        return None
    for column in columns:
        column.set("table", None)
    return condition.this.sql(dialect="spark")


def _selects_every_column_of_the_audited_rows(query: exp.Select) -> bool:
    source = query.args.get("from_")
    table = source.this if source is not None else None
    plain = all(not query.args.get(part) for part in ("joins", "group", "having", "qualify", "order", "limit",
                                                         "distinct", "with", "laterals", "offset"))
    return (
        plain
        and len(query.expressions) == 1
        and isinstance(query.expressions[0], exp.Star)
        and isinstance(table, exp.Table)
        and table.name == _AUDITED
        and not table.args.get("db")
    )
