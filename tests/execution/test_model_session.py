"""A Python model's session_properties are set around its job, and its on_virtual_update statements run once its
view points at a new table (``@this_model`` = the view), on Spark."""

from datetime import datetime

import pytest

from dagster_sparkmesh.errors import AuditFailure, SparkMeshError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

SESSION_MODEL = '''
import pandas as pd
from dagster_sparkmesh import model


@model(
    "shop.settings_seen",
    kind="FULL",
    columns={"partitions": "string"},
    session_properties={"spark.sql.shuffle.partitions": 7},
    on_virtual_update=[
        "CREATE SCHEMA IF NOT EXISTS vu_log",
        "CREATE TABLE IF NOT EXISTS vu_log.calls (n BIGINT) USING parquet",
        "INSERT INTO vu_log.calls SELECT COUNT(*) FROM @this_model",
    ],
)
def execute(context, start, end, execution_time, **kwargs):
    return pd.DataFrame({"partitions": [context.spark.conf.get("spark.sql.shuffle.partitions")]})
'''


def test_session_properties_and_on_virtual_update(spark, mini_project, make_context):
    (mini_project / "models" / "settings_seen.py").write_text(SESSION_MODEL)
    before = spark.conf.get("spark.sql.shuffle.partitions")
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    assert spark.sql("SELECT partitions FROM shop.settings_seen").collect()[0][0] == "7"
    assert spark.conf.get("spark.sql.shuffle.partitions") == before  # set back after the model's job
    assert [r[0] for r in spark.sql("SELECT n FROM vu_log.calls").collect()] == [1]  # the view, once promoted


SQL_SESSION_MODEL = """MODEL (
  name shop.lenient_cast,
  kind FULL,
  session_properties (
    'spark.sql.ansi.enabled' = false,
    "spark.sql.shuffle.partitions" = 3
  ),
  grants ('select' = ['group:analysts']),
  grants_target_layer 'virtual'
);

SELECT CAST('not a number' AS INT) AS n, '${spark.sql.shuffle.partitions}' AS partitions
"""


def test_a_sql_models_session_properties_are_set_around_its_statements(spark, mini_project, make_context):
    """As SQLMesh writes them in a SQL model's header; its grants load and change nothing (SQLMesh's Spark engine
    applies none)."""
    (mini_project / "models" / "lenient_cast.sql").write_text(SQL_SESSION_MODEL)
    before = spark.conf.get("spark.sql.ansi.enabled"), spark.conf.get("spark.sql.shuffle.partitions")
    ctx = make_context(mini_project)
    assert ctx.project.models["shop.lenient_cast"].session_properties == (
        ("spark.sql.ansi.enabled", "false"), ("spark.sql.shuffle.partitions", "3"),
    )
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    # Under ANSI mode (Spark's default) the cast fails the write; the model's setting makes it NULL.
    assert [tuple(r) for r in spark.sql("SELECT n, partitions FROM shop.lenient_cast").collect()] == [(None, "3")]
    assert (spark.conf.get("spark.sql.ansi.enabled"), spark.conf.get("spark.sql.shuffle.partitions")) == before


SLOW_SETTINGS_MODEL = '''
import time

import pandas as pd
from dagster_sparkmesh import model


@model("shop.a_settings", kind="FULL", columns={"n": "int"}, session_properties={"spark.sql.shuffle.partitions": 7})
def execute(context, start, end, execution_time, **kwargs):
    time.sleep(4)  # holds its settings while the other model would run
    return pd.DataFrame({"n": [1]})
'''


def test_a_model_with_session_settings_runs_alone_so_no_other_model_sees_them(spark, mini_project, make_context):
    """Spark's settings are the whole session's: the model beside it, started meanwhile on the other worker, must
    still run under the session's own settings, not the first one's (with ``spark.sql.ansi.enabled = false`` its
    casts would return NULL where they must fail)."""
    for other in (mini_project / "models").iterdir():  # the two models alone: each has a worker from the start
        other.unlink()
    (mini_project / "models" / "a_settings.py").write_text(SLOW_SETTINGS_MODEL)
    (mini_project / "models" / "b_reader.sql").write_text(
        "MODEL (name shop.b_reader, kind FULL);\n\nSELECT '${spark.sql.shuffle.partitions}' AS partitions\n"
    )
    before = spark.conf.get("spark.sql.shuffle.partitions")
    assert before != "7"
    ctx = make_context(mini_project)
    assert ctx.max_workers == 2
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    assert [r[0] for r in spark.sql("SELECT partitions FROM shop.b_reader").collect()] == [before]
    assert spark.conf.get("spark.sql.shuffle.partitions") == before


def test_a_model_whose_statements_change_the_session_runs_alone_and_its_changes_are_put_back(
    spark, mini_project, make_context
):
    """A pre-statement ``SET`` or ``USE`` changes the session every model shares: no model beside it runs under
    it, and no model after it."""
    for other in (mini_project / "models").iterdir():
        other.unlink()
    spark.sql("CREATE SCHEMA IF NOT EXISTS session_scratch")
    (mini_project / "models" / "a_sets.sql").write_text(
        "MODEL (name shop.a_sets, kind FULL);\n\n"
        "SET spark.sql.shuffle.partitions = 7;\nUSE session_scratch;\n\n"
        "SELECT reflect('java.lang.Thread', 'sleep', CAST(4000 AS BIGINT)) AS slept, "
        "'${spark.sql.shuffle.partitions}' AS partitions\n"
    )
    (mini_project / "models" / "b_wait.sql").write_text(  # b_reader starts a second after a_sets, meanwhile
        "MODEL (name shop.b_wait, kind FULL);\n\nSELECT reflect('java.lang.Thread', 'sleep', CAST(1000 AS BIGINT)) AS slept\n"
    )
    (mini_project / "models" / "b_reader.sql").write_text(
        "MODEL (name shop.b_reader, kind FULL);\n\n"
        "SELECT '${spark.sql.shuffle.partitions}' AS partitions FROM shop.b_wait\n"
    )
    before = spark.conf.get("spark.sql.shuffle.partitions"), spark.catalog.currentDatabase()
    assert before[0] != "7"
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    assert [r[0] for r in spark.sql("SELECT partitions FROM shop.a_sets").collect()] == ["7"]
    assert [r[0] for r in spark.sql("SELECT partitions FROM shop.b_reader").collect()] == [before[0]]
    assert (spark.conf.get("spark.sql.shuffle.partitions"), spark.catalog.currentDatabase()) == before


def test_a_set_statement_sets_the_key_as_written(spark, mini_project, make_context):
    """Spark's keys are case-sensitive and hold keywords (``join``): a SET runs with its key as the file writes it
    (lower-cased, Spark set another key; quoted, it refused the statement), and the session is as before after it."""
    (mini_project / "models" / "joins.sql").write_text(
        "MODEL (name shop.joins, kind FULL);\n\n"
        "SET spark.sql.autoBroadcastJoinThreshold = -1;\nset spark.sql.join.preferSortMergeJoin = false;\n\n"
        "SELECT '${spark.sql.autoBroadcastJoinThreshold}' AS threshold, '${spark.sql.join.preferSortMergeJoin}' AS sort\n"
    )
    keys = ("spark.sql.autoBroadcastJoinThreshold", "spark.sql.join.preferSortMergeJoin")
    before = [spark.conf.get(key, None) for key in keys]
    ctx = make_context(mini_project)
    assert ctx.project.models["shop.joins"].pre_statements == (
        "SET spark.sql.autoBroadcastJoinThreshold = -1", "SET spark.sql.join.preferSortMergeJoin = FALSE",
    )
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    assert [tuple(r) for r in spark.sql("SELECT threshold, sort FROM shop.joins").collect()] == [("-1", "FALSE")]
    assert [spark.conf.get(key, None) for key in keys] == before


def test_model_defaults_session_properties_reach_every_model_under_its_own(spark, mini_project, make_context):
    # SQLMesh's model_defaults.session_properties: merged key by key, the model's own over the project's.
    config = mini_project / "config.yaml"
    config.write_text(config.read_text() + "  session_properties:\n    spark.sql.ansi.enabled: false\n"
                      "    spark.sql.shuffle.partitions: 5\n")
    (mini_project / "models" / "defaulted_cast.sql").write_text(
        "MODEL (name shop.defaulted_cast, kind FULL, session_properties ('spark.sql.shuffle.partitions' = 3));\n"
        "SELECT CAST('not a number' AS INT) AS n, '${spark.sql.shuffle.partitions}' AS partitions\n")
    (mini_project / "models" / "settings_seen.py").write_text(SESSION_MODEL.replace(
        '    session_properties={"spark.sql.shuffle.partitions": 7},\n', ""))
    ctx = make_context(mini_project)
    assert ctx.project.models["shop.defaulted_cast"].session_properties == (
        ("spark.sql.ansi.enabled", "false"), ("spark.sql.shuffle.partitions", "3"),
    )
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    # Without the project's ANSI setting the cast fails the write (Spark's default); with it, NULL.
    assert [tuple(r) for r in spark.sql("SELECT n, partitions FROM shop.defaulted_cast").collect()] == [(None, "3")]
    assert spark.sql("SELECT partitions FROM shop.settings_seen").collect()[0][0] == "5"  # a Python model too


def test_model_defaults_statements_run_before_each_models_own(spark, mini_project, make_context):
    # SQLMesh's model_defaults.pre_statements / post_statements / on_virtual_update: put before each model's own
    # (SQL and Python models), parsed in the model's dialect with its macros.
    config = mini_project / "config.yaml"
    config.write_text(config.read_text() + (
        "  pre_statements:\n    - CREATE TABLE IF NOT EXISTS default.calls (model STRING, stage STRING) USING parquet\n"
        "    - INSERT INTO default.calls SELECT 'project', 'pre'\n"
        "  post_statements: [\"INSERT INTO default.calls SELECT 'project', 'post'\"]\n"
        "  on_virtual_update: [\"INSERT INTO default.calls SELECT 'project', 'virtual'\"]\n"))
    (mini_project / "models" / "with_own.sql").write_text(
        "MODEL (name shop.with_own, kind FULL);\n"
        "INSERT INTO default.calls VALUES ('own', 'pre');\n"
        "SELECT 1 AS n;\n"
        "INSERT INTO default.calls VALUES ('own', 'post');\n")
    (mini_project / "models" / "settings_seen.py").write_text(SESSION_MODEL)
    ctx = make_context(mini_project)
    sql_model, python_model = ctx.project.models["shop.with_own"], ctx.project.models["shop.settings_seen"]
    assert len(sql_model.pre_statements) == len(sql_model.post_statements) + 1 == 3
    assert sql_model.pre_statements[-1].endswith("('own', 'pre')")  # the model's own after the project's
    assert len(python_model.pre_statements) == 2 and len(python_model.on_virtual_update) == 4
    ctx.max_workers = 1  # (every model inserts into the one table: Spark's parquet inserts must not overlap)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    calls = sorted(tuple(r) for r in spark.sql("SELECT model, stage FROM default.calls").collect())
    assert ("own", "post") in calls and ("own", "pre") in calls
    stages = [stage for source, stage in calls if source == "project"]
    assert stages.count("pre") == stages.count("post") >= len(ctx.project.models) - 1  # (each write; the seed too)
    assert stages.count("virtual") >= 2


def test_model_defaults_audits_run_for_every_model(spark, mini_project, make_context):
    # SQLMesh's model_defaults.audits: each model runs them (blocking, as built-in audits are).
    config = mini_project / "config.yaml"
    config.write_text(config.read_text() + "  audits: ['number_of_rows(threshold := 1000000)']\n")
    ctx = make_context(mini_project)
    assert all(model.audits[0].name == "number_of_rows" for model in ctx.project.models.values())
    with pytest.raises(SparkMeshError) as failed:
        apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    assert isinstance(failed.value.__cause__, AuditFailure) and "blocking audit number_of_rows" in str(failed.value)
