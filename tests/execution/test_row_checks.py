"""Audits that are conditions on single rows are counted by the write of a new table (``execution.row_checks``):
the same results as reading the table back, without the audit job; every other audit still reads the table."""

import pytest

from dagster_sparkmesh.engine.catalog import SparkCatalog
from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.row_checks import offending_condition, write_row_checks
from tests.execution.test_apply import END, START

ROWS = "`sparkmesh_audited_rows`"


@pytest.mark.parametrize(
    ("audit", "condition"),
    [
        (f"SELECT * FROM {ROWS} WHERE ds IS NULL OR total IS NULL", "ds IS NULL OR total IS NULL"),
        (f"SELECT * FROM {ROWS} AS t WHERE NOT (t.total BETWEEN 0 AND 10)", "NOT (total BETWEEN 0 AND 10)"),
        (f"SELECT * FROM {ROWS} WHERE kind NOT IN ('a', 'b')", "NOT kind IN ('a', 'b')"),
        (f"SELECT * FROM {ROWS} WHERE total > (SELECT AVG(total) FROM {ROWS})", None),  # reads other rows
        (f"SELECT * FROM {ROWS} WHERE id IN (SELECT id FROM shop.other)", None),
        (f"SELECT id FROM {ROWS} WHERE id IS NULL", None),  # not every column: not the audited rows as such
        (f"SELECT * FROM {ROWS} WHERE id IS NULL LIMIT 5", None),
        (f"SELECT * FROM {ROWS} JOIN shop.other AS o ON o.id = id WHERE o.id IS NULL", None),
        (f"SELECT * FROM {ROWS} WHERE rand() < 0.1", None),
        (f"SELECT * FROM {ROWS} WHERE ds > current_date()", None),
        (f"SELECT * FROM {ROWS} WHERE other.id IS NULL", None),  # another table's column
        (f"SELECT * FROM {ROWS}", None),  # no condition: no row check (number_of_rows and the like)
        ("SELECT * FROM shop.other WHERE id IS NULL", None),
        ("SELECT id, COUNT(*) FROM x GROUP BY id HAVING COUNT(*) > 1", None),
    ],
)
def test_only_a_condition_on_one_row_of_the_audited_rows_is_counted_by_the_write(audit, condition):
    assert offending_condition(audit) == condition


def _edit(project, model_file: str, old: str, new: str) -> None:
    path = project / "models" / model_file
    path.write_text(path.read_text().replace(old, new))


def _offending_queries(monkeypatch) -> list[str]:
    ran: list[str] = []
    original = SparkCatalog.query_rows
    monkeypatch.setattr(SparkCatalog, "query_rows", lambda self, sql: (ran.append(sql), original(self, sql))[1])
    return ran


def test_a_new_tables_row_audits_are_counted_by_its_write(mini_project, make_context, monkeypatch):
    calls = "audits (not_null(columns := (days)), number_of_rows(threshold := 0))"  # (it has 1 row: more than 0)
    _edit(mini_project, "summary.sql", "kind FULL\n", f"kind FULL,\n  {calls}\n")
    ctx = make_context(mini_project)
    ran = _offending_queries(monkeypatch)
    result = apply_plan(ctx, plan_for(ctx, START, END))
    audits = {(m.model, a.name): a for m in result.models for a in m.audits}
    assert {key: a.failing_rows for key, a in audits.items()} == {
        ("shop.daily", "not_null"): 0, ("shop.summary", "not_null"): 0, ("shop.summary", "number_of_rows"): 0,
    }
    assert "IS NULL" in audits["shop.daily", "not_null"].query  # the rendered audit is reported as before
    audit_jobs = [sql for sql in ran if "AS offending" in sql]
    assert len(audit_jobs) == 1 and "row_count" in audit_jobs[0]  # number_of_rows only: no row check


def test_offending_rows_counted_by_the_write_fail_the_audit_with_a_sample(mini_project, make_context, monkeypatch):
    nulls = "CASE WHEN ds < DATE'2024-01-03' THEN NULL ELSE SUM(amount) END AS total"
    _edit(mini_project, "daily.sql", "SUM(amount) AS total", nulls)
    ctx = make_context(mini_project)
    ran = _offending_queries(monkeypatch)
    plan = plan_for(ctx, START, END)
    with pytest.raises(ExecutionError, match="found 2 offending row"):  # January 1 and 2
        apply_plan(ctx, plan)
    assert not [sql for sql in ran if sql.startswith("SELECT COUNT(*) FROM") and "AS offending" in sql]
    assert [sql for sql in ran if "AS offending LIMIT" in sql]  # the sample is read from the table
    assert ctx.state.get_intervals("shop.daily", plan.version_of("shop.daily")) == []


def test_a_write_into_an_existing_table_of_the_querys_types_counts_its_audits(mini_project, make_context, monkeypatch):
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, START, END.replace(day=4)))
    ran = _offending_queries(monkeypatch)
    result = apply_plan(ctx, plan_for(ctx, START, END))  # days 4 and 5 into the table the first plan created
    [daily] = [m for m in result.models if m.model == "shop.daily"]
    assert [a.failing_rows for a in daily.audits] == [0] and daily.intervals
    assert not [sql for sql in ran if sql.startswith("SELECT COUNT(*) FROM") and "AS offending" in sql]


def test_a_full_tables_new_generation_counts_its_audits_when_its_types_are_the_querys(
    mini_project, make_context, monkeypatch
):
    _edit(mini_project, "summary.sql", "kind FULL\n", "kind FULL,\n  audits (not_null(columns := (days)))\n")
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, START, END.replace(day=4)))
    ran = _offending_queries(monkeypatch)
    result = apply_plan(ctx, plan_for(ctx, START, END))  # a new generation of shop.summary, over days 1-5
    [summary] = [m for m in result.models if m.model == "shop.summary"]
    assert [a.failing_rows for a in summary.audits] == [0]  # (audited: not kept, its input changed)
    assert not [sql for sql in ran if "AS offending" in sql]


def test_an_empty_string_partition_value_is_audited_as_the_null_the_table_keeps(mini_project, make_context):
    """Spark stores '' in a string partition column as NULL: counted on the written rows, ``not_null`` would see
    ''; the table's readers see NULL, and so must the audit."""
    path = mini_project / "models" / "summary.sql"
    path.write_text(
        "MODEL (\n  name shop.summary,\n  kind FULL,\n  partitioned_by (region),\n"
        "  audits (not_null(columns := (region)))\n);\n\n"
        "SELECT SUM(total) AS grand_total, '' AS region FROM shop.daily\n"
    )
    ctx = make_context(mini_project)
    with pytest.raises(ExecutionError, match="found 1 offending row"):
        apply_plan(ctx, plan_for(ctx, START, END))


def test_row_checks_are_offered_to_writes_that_can_tell_what_their_table_keeps(mini_project, make_context):
    """A created table, or a period table (whose write counts them only when the query keeps its types); not a
    model with partition columns of its own."""
    ctx = make_context(mini_project)
    plan = plan_for(ctx, START, END)
    apply_plan(ctx, plan)
    model, table = ctx.project.models["shop.daily"], plan.tables(())["shop.daily"]
    assert write_row_checks(ctx, model, table, False).conditions == {0: "ds IS NULL OR total IS NULL"}
    assert write_row_checks(ctx, model, f"{table}_absent", False) is None  # no period table to tell
    assert write_row_checks(ctx, model, f"{table}_absent", True) is not None  # created from the query itself
    partitioned = model.model_copy(update={"partitioned_by": ("ds",)})
    assert write_row_checks(ctx, partitioned, table, True) is None


def test_one_audit_called_twice_gets_each_call_its_own_count(mini_project, make_context, monkeypatch):
    calls = "audits (forall_non_blocking(criteria := (days > 100)), forall_non_blocking(criteria := (days > 0)))"
    _edit(mini_project, "summary.sql", "kind FULL\n", f"kind FULL,\n  {calls}\n")
    ctx = make_context(mini_project)
    ran = _offending_queries(monkeypatch)
    result = apply_plan(ctx, plan_for(ctx, START, END))
    [summary_result] = [m for m in result.models if m.model == "shop.summary"]
    assert [a.failing_rows for a in summary_result.audits] == [1, 0]  # 5 days: not above 100, above 0
    assert not [sql for sql in ran if sql.startswith("SELECT COUNT(*) FROM") and "AS offending" in sql]
