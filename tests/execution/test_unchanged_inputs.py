"""A run keeps a FULL model's table when its query and every table it reads are unchanged since its last write;
any change of an input, a restatement, or a query that can give other rows on the same inputs recomputes it."""

from datetime import datetime

import pytest
import sqlglot

from dagster_sparkmesh.errors import AuditFailure
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.backfill import BackfillFailed
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.unchanged_inputs import _repeatable, inputs_digest
from tests.execution.test_apply import START


def _by_model(result) -> dict:
    return {r.model: r for r in result.models}


def _view_text(ctx, plan, model: str) -> str:
    return ctx.engine.catalog.view_text(plan.tables(())[model])


@pytest.fixture
def ran_twice(mini_project, make_context):
    """The mini project built to 2024-01-05, then run for 2024-01-05 (a day with rows): shop.summary reads a new
    day and is recomputed; raw.events reads nothing and is kept from its first write."""
    ctx = make_context(mini_project)
    ctx.clock = lambda: datetime(2024, 1, 9)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 5)))
    second = _by_model(apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 6))))
    assert second["raw.events"].kept and not second["shop.summary"].kept
    assert second["shop.summary"].rows_written == 1
    return ctx


def test_a_day_without_rows_keeps_the_full_tables_that_read_nothing_new(spark, ran_twice):
    ctx = ran_twice
    plan = plan_for(ctx, START, datetime(2024, 1, 7))  # 2024-01-06: raw.events has no rows that day
    before = {m: _view_text(ctx, plan, m) for m in ("raw.events", "shop.daily", "shop.summary")}

    results = _by_model(apply_plan(ctx, plan))

    assert results["raw.events"].kept and results["shop.summary"].kept
    assert results["shop.summary"].rows_written == 0 and results["shop.summary"].audits == ()
    assert not results["shop.daily"].kept  # an interval write: computed, no rows, its view not switched
    assert {m: _view_text(ctx, plan, m) for m in before} == before
    assert [tuple(r) for r in spark.sql("SELECT grand_total, days FROM shop.summary").collect()] == [(300, 5)]
    summary = ctx.state.get_intervals("shop.summary", plan.version_of("shop.summary"))
    assert summary[-1].end == datetime(2024, 1, 7)  # kept is computed: its intervals are recorded


def test_a_changed_input_or_a_restatement_recomputes_the_full_table(spark, ran_twice):
    ctx = ran_twice
    restated = plan_for(ctx, START, datetime(2024, 1, 6), restate_models=["shop.daily"])
    results = _by_model(apply_plan(ctx, restated))
    assert not results["shop.summary"].kept and results["shop.summary"].rows_written == 1  # daily was rewritten

    again = _by_model(apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 6), restate_models=["shop.summary"])))
    assert not again["shop.summary"].kept and again["shop.summary"].rows_written == 1  # restated: recomputed
    assert [tuple(r) for r in spark.sql("SELECT grand_total, days FROM shop.summary").collect()] == [(300, 5)]


def test_a_table_whose_blocking_audit_failed_is_recomputed_not_kept(spark, mini_project, make_context):
    summary = mini_project / "models" / "summary.sql"
    summary.write_text(summary.read_text().replace("kind FULL", "kind FULL,\n  audits (accepted_range(column := days, max_v := 4))"))
    ctx = make_context(mini_project)
    ctx.clock = lambda: datetime(2024, 1, 9)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 5)))  # 4 days: passes
    for end in (datetime(2024, 1, 6), datetime(2024, 1, 7)):  # 5 days: fails, then fails again (not kept)
        with pytest.raises(BackfillFailed) as failed:
            apply_plan(ctx, plan_for(ctx, START, end))
        assert isinstance(failed.value.errors["shop.summary"], AuditFailure)
    version = plan_for(ctx, START, datetime(2024, 1, 7)).version_of("shop.summary")
    assert ctx.state.get_intervals("shop.summary", version)[-1].end == datetime(2024, 1, 5)


def test_no_digest_for_a_query_reading_a_table_no_model_writes(ran_twice):
    ctx = ran_twice
    plan = plan_for(ctx, START, datetime(2024, 1, 6))
    summary = ctx.project.models["shop.summary"]
    tables = plan.tables(())
    read_daily = f"SELECT SUM(total) AS grand_total, COUNT(*) AS days FROM {tables['shop.daily']}"
    assert inputs_digest(ctx, summary, read_daily, tables) is not None
    assert inputs_digest(ctx, summary, read_daily.replace(tables["shop.daily"], "other.daily"), tables) is None
    assert inputs_digest(ctx, summary, read_daily + " WHERE rand() < 2", tables) is None


SPARK_FUNCTIONS = frozenset({"pmod", "hash", "concat", "explode", "sequence", "sum", "coalesce"})


@pytest.mark.parametrize(
    "sql, repeatable",
    [
        ("SELECT PMOD(HASH(a), 10), CONCAT(b, 'x'), COALESCE(c, 0) FROM t", True),
        ("SELECT EXPLODE(SEQUENCE(1, 3)) AS id", True),
        ("SELECT a FROM t WHERE rand() < 0.5", False),
        ("SELECT a, uuid() FROM t", False),
        ("SELECT current_date AS today", False),
        ("SELECT a FROM t WHERE ds < current_timestamp()", False),
        ("SELECT now()", False),
        ("SELECT unix_timestamp()", False),
        ("SELECT unix_timestamp(ds) FROM t", True),
        ("SELECT monotonically_increasing_id() FROM t", False),
        ("SELECT input_file_name() FROM t", False),
        ("SELECT a FROM t TABLESAMPLE (10 PERCENT)", False),
        ("SELECT my_udf(a) FROM t", False),
    ],
)
def test_repeatable_queries(sql, repeatable):
    assert _repeatable(sqlglot.parse_one(sql, read="spark"), lambda: SPARK_FUNCTIONS) is repeatable


def test_spark_is_asked_for_its_functions_only_for_a_function_sqlglot_does_not_know():
    asked = []

    def listing() -> frozenset[str]:
        asked.append(1)
        return SPARK_FUNCTIONS

    assert _repeatable(sqlglot.parse_one("SELECT SUM(a), COALESCE(b, 0) FROM t", read="spark"), listing)
    assert asked == []
    assert not _repeatable(sqlglot.parse_one("SELECT my_udf(a) FROM t", read="spark"), listing)
    assert asked == [1]


def test_a_full_model_reading_a_view_model_follows_it_to_what_it_reads(spark, mini_project, make_context):
    (mini_project / "models" / "big_summary.sql").write_text(
        "MODEL (name shop.big_summary, kind FULL);\n\nSELECT COUNT(*) AS big_days, SUM(total) AS total FROM shop.big_days\n"
    )
    ctx = make_context(mini_project)
    ctx.clock = lambda: datetime(2024, 1, 9)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 5)))
    with_rows = _by_model(apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 6))))  # daily gains 2024-01-05
    assert not with_rows["shop.big_summary"].kept and with_rows["shop.big_summary"].rows_written == 1
    without_rows = _by_model(apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 7))))
    assert without_rows["shop.big_summary"].kept  # the VIEW model's text and daily's segments: all unchanged
    assert [tuple(r) for r in spark.sql("SELECT big_days, total FROM shop.big_summary").collect()] == [(5, 300)]

    tables = plan_for(ctx, START, datetime(2024, 1, 7)).tables(())
    query = f"SELECT COUNT(*) AS big_days, SUM(total) AS total FROM {tables['shop.big_days']}"
    model = ctx.project.models["shop.big_summary"]
    before = inputs_digest(ctx, model, query, tables)
    assert before is not None and inputs_digest(ctx, model, query, tables) == before
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 7), restate_models=["shop.daily"]))
    assert inputs_digest(ctx, model, query, tables) not in (None, before)  # daily, behind the view, was rewritten
