"""Table diff and rollback on lakehouse tables: a dev change of a model is compared with prod over the tables of
the format, promoted to prod without recomputing, and rolled back to prod's previous tables (views only)."""

from __future__ import annotations

from datetime import datetime

import pytest

from dagster_sparkmesh.engine.table_diff import table_diff
from dagster_sparkmesh.execution.apply import apply_plan, promote_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.plan.rollback import rollback_plan
from dagster_sparkmesh.snapshot.naming import physical_table
from tests.lakehouse.outside_spark import provider, spark_rows

pytestmark = pytest.mark.lakehouse

START, END = datetime(2024, 1, 1), datetime(2024, 1, 6)


def _applied(make_context, project, environment):
    ctx = make_context(project, environment)
    result = apply_plan(ctx, plan_for(ctx, START, END))
    return ctx, result


def test_a_dev_change_is_diffed_promoted_and_rolled_back(spark, lakehouse_project, make_context, table_format):
    prod, _ = _applied(make_context, lakehouse_project, "prod")
    before = spark_rows(spark, "lhm.daily", "ds, orders, total")
    model_file = lakehouse_project / "models" / "daily.sql"
    model_file.write_text(model_file.read_text().replace("SUM(amount) AS total", "SUM(amount) * 2 AS total"))

    dev, _ = _applied(make_context, lakehouse_project, "dev")
    prod_relation = prod.state.get_environment("prod").relation_of("lhm.daily")
    dev_relation = dev.state.get_environment("dev").relation_of("lhm.daily")
    dev_version = next(s.version for s in dev.state.get_environment("dev").snapshots if s.name == "lhm.daily")
    assert provider(spark, physical_table("lhm.daily", dev_version)) == table_format
    diff = table_diff(dev.engine, dev.project.models["lhm.daily"], prod_relation, dev_relation, on=["ds"])
    assert (diff.source_rows, diff.target_rows, diff.matched) == (5, 5, 5)
    assert dict(diff.mismatches) == {"orders": 0, "total": 5}

    promoted, result = _applied(make_context, lakehouse_project, "prod")
    assert (result.intervals_processed, result.rows_written) == (0, 0)  # dev's tables, views switched
    assert spark_rows(spark, "lhm.daily", "ds, orders, total") == [(ds, n, 2 * t) for ds, n, t in before]

    current = promoted.state.get_environment("prod")
    previous = promoted.state.environment_history("prod")[0]
    promote_plan(promoted, rollback_plan(current, previous, now=promoted.clock(), ttl=None))
    assert spark_rows(spark, "lhm.daily", "ds, orders, total") == before
