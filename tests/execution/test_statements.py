"""Pre- and post-statements run around the model's write, rendered like its query (``@this_model``), on Spark."""

from datetime import datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

LOGGED = """
MODEL (name shop.logged, kind FULL);

CREATE SCHEMA IF NOT EXISTS statement_log;
CREATE TABLE IF NOT EXISTS statement_log.writes (model STRING, n BIGINT) USING parquet;

SELECT ds, total FROM shop.daily;

INSERT INTO statement_log.writes SELECT 'logged', COUNT(*) FROM @this_model;
"""


def test_pre_statements_prepare_and_post_statements_see_the_written_table(spark, mini_project, make_context):
    (mini_project / "models" / "logged.sql").write_text(LOGGED)
    ctx = make_context(mini_project)
    model = ctx.project.models["shop.logged"]
    assert len(model.pre_statements) == 2 and len(model.post_statements) == 1
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 4)))
    # The pre-statement created the log table; the post-statement counted the freshly written rows (3 days).
    assert [tuple(r) for r in spark.sql("SELECT model, n FROM statement_log.writes").collect()] == [("logged", 3)]
