"""CUSTOM models on lakehouse tables: the materialization class's tables are of the model's format (SQLMesh writes
``USING <table_format>`` for them too), created by their first rows and then replaced or appended to in one commit
each, partitioned and with the properties the model gives; another engine reads them as Spark's views do."""

from __future__ import annotations

import textwrap
from datetime import datetime

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from tests.lakehouse.conftest import format_project
from tests.lakehouse.outside_spark import commits, provider, rows_outside_spark, spark_rows, table_location

pytestmark = pytest.mark.lakehouse

VISITS = "lh_src.visits"
START, DAY_2, DAY_3 = datetime(2024, 1, 1), datetime(2024, 1, 2), datetime(2024, 1, 3)

MATERIALIZATIONS = '''
from sqlmesh import CustomMaterialization


class Replacing(CustomMaterialization):
    NAME = "replacing"

    def insert(self, table_name, query_or_df, model, is_first_insert, render_kwargs, **kwargs):
        self._replace_query_for_model(model, table_name, query_or_df, render_kwargs)


class Appending(CustomMaterialization):
    NAME = "appending"

    def insert(self, table_name, query_or_df, model, is_first_insert, render_kwargs, **kwargs):
        self.append(table_name, query_or_df, model, render_kwargs)
'''

MODELS = {
    "latest.sql": "MODEL (name lhc.latest, kind CUSTOM (materialization 'replacing'), partitioned_by page, "
    "physical_properties (owner_note = 'custom'));\n"
    f"SELECT page, COUNT(*) AS visits, MAX(ds) AS ds FROM {VISITS} WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY page",
    "log.sql": "MODEL (name lhc.log, kind CUSTOM (materialization 'appending', batch_size 1));\n"
    f"SELECT id, page, ds FROM {VISITS} WHERE ds BETWEEN @start_ds AND @end_ds",
}


@pytest.fixture
def custom_project(tmp_path, table_format, clean_catalog, spark):
    source = (
        VISITS,
        "SELECT * FROM VALUES (1, 'home', DATE '2024-01-01'), (2, 'cart', DATE '2024-01-01'), "
        "(3, 'home', DATE '2024-01-02') AS visits(id, page, ds)",
        "id: int, page: string, ds: date",
    )
    project = format_project(spark, tmp_path / "custom", table_format, source, MODELS)
    (project / "materializations").mkdir()
    (project / "materializations" / "kinds.py").write_text(textwrap.dedent(MATERIALIZATIONS))
    return project


def _run(make_context, project, end: datetime):
    ctx = make_context(project, clock=end)
    plan = plan_for(ctx, START, end)
    apply_plan(ctx, plan)
    return plan


def _partition_columns(spark, table: str) -> list[str]:
    rows = spark.sql(f"DESCRIBE TABLE {table}").collect()
    marker = next(i for i, row in enumerate(rows) if row[0] == "# Partition Information")
    return [row[0] for row in rows[marker + 2:] if row[0] and not row[0].startswith("#")]


def test_a_custom_materialization_writes_tables_of_the_models_format(spark, custom_project, make_context, table_format):
    first = _run(make_context, custom_project, DAY_2)
    tables = {name: physical_table(f"lhc.{name}", first.version_of(f"lhc.{name}")) for name in ("latest", "log")}
    assert {name: provider(spark, table) for name, table in tables.items()} == dict.fromkeys(tables, table_format)
    assert _partition_columns(spark, tables["latest"]) == ["page"]
    properties = dict(spark.sql(f"SHOW TBLPROPERTIES {tables['latest']}").collect())
    assert properties.get("owner_note") == "custom"
    assert spark_rows(spark, "lhc.latest") == [("cart", 1, DAY_2.date().replace(day=1)), ("home", 1, START.date())]
    before = {name: commits(spark, table_format, f"spark_catalog.{table}") for name, table in tables.items()}

    _run(make_context, custom_project, DAY_3)

    # One new day: one commit each, the replacing class's table replaced whole, the appending one's added to.
    assert {name: commits(spark, table_format, f"spark_catalog.{table}") - before[name] for name, table in tables.items()} == {
        "latest": 1, "log": 1,
    }
    assert spark_rows(spark, "lhc.latest") == [("home", 1, DAY_2.date())]
    assert spark_rows(spark, "lhc.log") == [
        (1, "home", START.date()), (2, "cart", START.date()), (3, "home", DAY_2.date()),
    ]
    for name, table in tables.items():
        assert rows_outside_spark(table_format, table_location(spark, table)) == spark_rows(spark, f"lhc.{name}"), name
