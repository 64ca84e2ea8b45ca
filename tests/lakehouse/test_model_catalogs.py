"""Models named ``catalog.schema.table`` of a catalog the connection declares live in that Spark catalog: an
Iceberg catalog of its own (not the session's), registered on the shared session as the connection's config
declares it. Tables, views, development environments, write-audit-publish and the janitor all work there, and a
model of Spark's own catalog reads across."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from dagster_sparkmesh.engine.lakehouse import ICEBERG_PACKAGE
from dagster_sparkmesh.errors import ExecutionError, ProjectError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.janitor import run_janitor
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.records import Interval
from tests.conftest import SQLITE_JDBC_PACKAGE
from tests.lakehouse.conftest import EXECUTION_TIME, SOURCE, run_sparkmesh
from tests.lakehouse.outside_spark import provider, rows_outside_spark, spark_rows, table_location

pytestmark = [pytest.mark.lakehouse, pytest.mark.iceberg_only]

START, END = datetime(2024, 1, 1), datetime(2024, 1, 6)
ORDERS = "lake.sales.orders"


@pytest.fixture(scope="session")
def lake_files(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lake")


@pytest.fixture
def lake(spark, lake_files: Path):
    """An Iceberg catalog ``lake`` beside the session's (Iceberg's JDBC catalog in a SQLite file, which the shared
    Iceberg session can open), with the settings a connection's config declares it by. Spark keeps a catalog it
    opened for the session's life, so the catalog is one for all tests: each test's objects are dropped after it."""
    settings = {
        "spark.sql.catalog.lake": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lake.type": "jdbc",
        "spark.sql.catalog.lake.uri": f"jdbc:sqlite:{lake_files / 'catalog.db'}",
        "spark.sql.catalog.lake.jdbc.schema-version": "V1",
        "spark.sql.catalog.lake.warehouse": str(lake_files / "warehouse"),
    }
    for key, value in settings.items():
        spark.conf.set(key, value)
    yield settings
    for (namespace,) in spark.sql("SHOW NAMESPACES IN lake").collect():
        for view in _names(spark, f"SHOW VIEWS IN lake.{namespace}"):
            spark.sql(f"DROP VIEW lake.{namespace}.{view}")
        for table in _names(spark, f"SHOW TABLES IN lake.{namespace}"):
            spark.sql(f"DROP TABLE lake.{namespace}.{table} PURGE")
        spark.sql(f"DROP NAMESPACE lake.{namespace}")


def _project(spark, folder: Path, lake: dict[str, str], orders_filter: str = "TRUE", declared: bool = True) -> Path:
    spark.sql("CREATE DATABASE IF NOT EXISTS lh_src")
    if not spark.catalog.tableExists(SOURCE):
        spark.sql(f"CREATE TABLE {SOURCE} USING parquet AS SELECT id, DATE '2024-01-01' + CAST(id % 5 AS INT) AS ds, "
                  "id * 10 AS amount FROM range(40)")
    (folder / "models").mkdir(parents=True, exist_ok=True)
    settings = "".join(f"        {key}: {value}\n" for key, value in lake.items()) if declared else ""
    connection = "gateways:\n  local:\n    connection:\n      type: spark\n      config:\n" + settings if declared else ""
    (folder / "config.yaml").write_text(connection + "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (folder / "external_models.yaml").write_text(f"- name: {SOURCE}\n  columns: {{id: bigint, ds: date, amount: bigint}}\n")
    (folder / "models" / "orders.sql").write_text(
        f"MODEL (name {ORDERS}, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), "
        "audits (accepted_range(column := total, min_v := 0)));\n"
        f"SELECT ds, COUNT(*) AS orders, SUM(amount) AS total FROM {SOURCE} "
        f"WHERE ds BETWEEN @start_ds AND @end_ds AND {orders_filter} GROUP BY ds"
    )
    (folder / "models" / "summary.sql").write_text(
        f"MODEL (name shop.summary, kind FULL);\nSELECT COUNT(*) AS days, SUM(total) AS total FROM {ORDERS}"
    )
    return folder


def _applied(make_context, project: Path, environment: str = "prod", clock: datetime = EXECUTION_TIME):
    ctx = make_context(project, environment, clock)
    plan = plan_for(ctx, START, END)
    apply_plan(ctx, plan)
    return ctx, plan


def _names(spark, statement: str) -> set[str]:
    return {row[1] for row in spark.sql(statement).collect()}


def test_a_model_of_a_declared_catalog_lives_there_and_another_catalog_reads_it(
    spark, lake, tmp_path, make_context, clean_catalog
):
    project = _project(spark, tmp_path / "project", lake)
    model = load_project(project, use_cache=False).models[ORDERS]
    assert (model.catalog, model.table_format) == ("lake", "iceberg")  # Iceberg's catalog: an Iceberg table

    ctx, plan = _applied(make_context, project)

    table = plan.physical_table_of(ORDERS)
    assert table.startswith("lake.sparkmesh__sales.sales__orders__")
    assert table.rsplit(".", 1)[1] in _names(spark, "SHOW TABLES IN lake.sparkmesh__sales")
    assert "orders" in _names(spark, "SHOW VIEWS IN lake.sales")  # the environment's view, in the model's catalog
    assert not {"lake__sales", "sparkmesh__lake__sales"} & {row[0] for row in spark.sql("SHOW DATABASES").collect()}
    assert provider(spark, table) == "iceberg"
    assert spark_rows(spark, ORDERS, "ds, orders, total")[0] == (datetime(2024, 1, 1).date(), 8, 1400)
    assert rows_outside_spark("iceberg", table_location(spark, table)) == spark_rows(spark, ORDERS)
    assert spark_rows(spark, "shop.summary") == [(5, 7800)]  # a model of Spark's catalog read the lake's table


def test_a_development_environment_and_the_janitor_work_in_the_models_catalog(
    spark, lake, tmp_path, make_context, clean_catalog
):
    project = _project(spark, tmp_path / "project", lake)
    _, prod_plan = _applied(make_context, project)
    _project(spark, project, lake, orders_filter="amount >= 100")  # a breaking change, planned in dev

    dev, dev_plan = _applied(make_context, project, "dev")

    dev_table = dev_plan.physical_table_of(ORDERS)
    assert dev_table != prod_plan.physical_table_of(ORDERS)
    assert spark_rows(spark, "lake.sales__dev.orders", "SUM(orders)") == [(30,)]
    assert spark_rows(spark, ORDERS, "SUM(orders)") == [(40,)]  # prod untouched
    assert spark_rows(spark, "shop__dev.summary", "days") == [(5,)]

    dev.state.invalidate_environment("dev")
    later = make_context(project, "dev", EXECUTION_TIME + timedelta(days=3650))
    report = run_janitor(later)

    assert "lake.sales__dev.orders" in report.views_dropped
    assert dev_table in report.tables_dropped
    assert "sales__dev" not in {row[0] for row in spark.sql("SHOW NAMESPACES IN lake").collect()}  # emptied: gone
    assert dev_table.rsplit(".", 1)[1] not in _names(spark, "SHOW TABLES IN lake.sparkmesh__sales")
    assert spark_rows(spark, ORDERS, "SUM(orders)") == [(40,)]


def test_a_catalog_declared_later_moves_the_model_there_and_its_old_view_goes(
    spark, lake, tmp_path, make_context, clean_catalog
):
    project = _project(spark, tmp_path / "project", lake, declared=False)
    _applied(make_context, project)
    assert spark_rows(spark, "lake__sales.orders", "SUM(orders)") == [(40,)]  # undeclared: folded, Spark's catalog

    _project(spark, project, lake)  # the connection now declares the catalog
    _, plan = _applied(make_context, project)

    assert plan.physical_table_of(ORDERS).startswith("lake.sparkmesh__sales.")
    assert spark_rows(spark, ORDERS, "SUM(orders)") == [(40,)]
    assert not spark.catalog.tableExists("lake__sales.orders")  # the folded view went with the move
    assert spark_rows(spark, "shop.summary") == [(5, 7800)]


def test_a_failing_blocking_audit_leaves_the_models_catalog_table_as_readers_saw_it(
    spark, lake, tmp_path, make_context, clean_catalog
):
    project = _project(spark, tmp_path / "project", lake)
    ctx, plan = _applied(make_context, project)
    table = plan.physical_table_of(ORDERS)
    before = spark_rows(spark, ORDERS)
    spark.sql(f"CREATE TABLE lh_src.negative USING parquet AS SELECT id, ds, "
              f"IF(ds = DATE '2024-01-03', -amount, amount) AS amount FROM {SOURCE}")
    spark.sql(f"INSERT OVERWRITE TABLE {SOURCE} SELECT * FROM lh_src.negative")

    restate = make_context(project)
    window = Interval(start=datetime(2024, 1, 3), end=datetime(2024, 1, 4))
    with pytest.raises(ExecutionError, match="accepted_range"):
        apply_plan(restate, plan_for(restate, START, END, restate_models=(ORDERS,), restate_within=window))

    assert spark_rows(spark, ORDERS) == before
    assert [row[0] for row in spark.sql(f"SELECT name FROM {table}.refs").collect()] == ["main"]  # branch dropped


def test_a_kind_without_a_lakehouse_table_in_a_declared_catalog_is_refused_at_load(spark, lake, tmp_path):
    project = _project(spark, tmp_path / "project", lake)
    (project / "models" / "recent.sql").write_text("MODEL (name lake.sales.recent, kind VIEW);\nSELECT 1 AS a")

    with pytest.raises(ProjectError, match="cannot live in catalog lake") as raised:
        load_project(project, use_cache=False)
    assert raised.value.path is not None and raised.value.path.name == "recent.sql"


def test_dagster_materializes_a_declared_catalogs_model_by_partitions_and_promotes_its_view_there(
    spark, lake, tmp_path, clean_catalog
):
    import dagster as dg

    from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, promotion_key, sparkmesh_assets
    from dagster_sparkmesh.dagster.promotion import promotion_asset

    project = _project(spark, tmp_path / "project", lake)
    orders_file = project / "models" / "orders.sql"
    orders_file.write_text(orders_file.read_text().replace("(time_column ds),", "(time_column ds), end '2024-01-05',"))
    loaded = load_project(project, use_cache=False)
    specs = build_sparkmesh_specs(loaded)
    assets = [*sparkmesh_assets(project=loaded, specs=specs), promotion_asset(loaded, specs)]
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    resource = SparkMeshResource(project_dir=str(project), spark_config={"spark.sql.warehouse.dir": warehouse})
    orders, summary = dg.AssetKey(["lake", "sales", "orders"]), dg.AssetKey(["shop", "summary"])
    spec = next(spec for spec in specs.model_specs if spec.key == orders)
    assert (spec.metadata["dagster/table_name"], spec.group_name) == ("lake.sales.orders", "sales")

    def materialize(selection, tags=None):
        return dg.materialize(assets, selection=selection, resources={"sparkmesh": resource}, instance=instance,
                              tags=tags or {}, raise_on_error=False)

    with dg.instance_for_test() as instance:
        ranged = materialize([orders], {"dagster/asset_partition_range_start": "2024-01-01",
                                        "dagster/asset_partition_range_end": "2024-01-05"})
        assert ranged.success
        written = [e.materialization for e in ranged.get_asset_materialization_events()]
        assert sorted(m.partition for m in written) == [f"2024-01-0{day}" for day in range(1, 6)]
        table = written[0].metadata["sparkmesh/physical_table"].value
        assert table.startswith("lake.sparkmesh__sales.sales__orders__")
        assert not _namespace(spark, "sales")  # no view before the promotion
        assert materialize([summary]).success
        assert materialize([promotion_key("prod")]).success

    assert "orders" in _names(spark, "SHOW VIEWS IN lake.sales")  # promoted: the view, in the model's catalog
    assert spark_rows(spark, ORDERS, "SUM(orders)") == [(40,)]
    assert spark_rows(spark, "shop.summary") == [(5, 7800)]


def _namespace(spark, name: str) -> bool:
    return name in {row[0] for row in spark.sql("SHOW NAMESPACES IN lake").collect()}


@pytest.mark.slow
def test_a_catalog_declared_in_config_yaml_holds_the_models_tables_for_every_command_and_pyiceberg(tmp_path):
    """As a user types it: each command its own process and JVM, the catalog declared in the connection's config
    (Iceberg's JDBC catalog in a SQLite file), PyIceberg reading the physical table from the same catalog."""
    project = tmp_path / "shop"
    (project / "models").mkdir(parents=True)
    (project / "config.yaml").write_text(f"""gateways:
  local:
    connection:
      type: spark
      mode: local
      config:
        spark.jars.packages: {ICEBERG_PACKAGE},{SQLITE_JDBC_PACKAGE}
        spark.sql.catalog.lake: org.apache.iceberg.spark.SparkCatalog
        spark.sql.catalog.lake.type: jdbc
        spark.sql.catalog.lake.uri: jdbc:sqlite:{tmp_path / 'lake.db'}
        spark.sql.catalog.lake.jdbc.schema-version: V1
        spark.sql.catalog.lake.warehouse: {tmp_path / 'warehouse'}
model_defaults:
  dialect: spark
  start: '2024-01-01'
""")
    orders = ("MODEL (name lake.sales.orders, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), end '2024-01-03');\n"
              "SELECT ds, COUNT(*) AS orders FROM (SELECT id, DATE '2024-01-01' + CAST(id % 3 AS INT) AS ds "
              "FROM range(30)) WHERE ds BETWEEN @start_ds AND @end_ds AND {where} GROUP BY ds")
    (project / "models" / "orders.sql").write_text(orders.format(where="TRUE"))
    (project / "models" / "summary.sql").write_text(
        "MODEL (name shop.summary, kind FULL);\nSELECT SUM(orders) AS orders FROM lake.sales.orders"
    )

    built = run_sparkmesh(project, "plan", "--auto-apply", "--no-prompts")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (project / "models" / "orders.sql").write_text(orders.format(where="id >= 3"))
    dev = run_sparkmesh(project, "plan", "dev", "--auto-apply", "--no-prompts")
    assert dev.returncode == 0, dev.stdout[-3000:] + dev.stderr[-3000:]
    read = run_sparkmesh(project, "fetchdf", "--json", "SELECT (SELECT orders FROM shop.summary) AS prod, "
                      "(SELECT SUM(orders) FROM lake.sales__dev.orders) AS dev, "
                      "(SELECT orders FROM shop__dev.summary) AS dev_summary")
    assert read.returncode == 0, read.stderr[-3000:]
    assert json.loads(read.stdout) == [{"prod": 30, "dev": 27, "dev_summary": 27}]
    diff = run_sparkmesh(project, "table-diff", "prod:dev", "lake.sales.orders", "--on", "ds")
    assert diff.returncode == 0, diff.stderr[-3000:]
    assert "lake.sales.orders" in diff.stdout and "lake.sales__dev.orders" in diff.stdout

    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'lake.db'}", warehouse=str(tmp_path / "warehouse"))
    tables = sorted(name for _, name in catalog.list_tables("sparkmesh__sales"))
    assert len(tables) == 2 and all(name.startswith("sales__orders__") for name in tables)  # prod's and dev's
    totals = {sum(row["orders"] for row in catalog.load_table(f"sparkmesh__sales.{name}").scan().to_arrow().to_pylist())
              for name in tables}
    assert totals == {30, 27}

    destroyed = run_sparkmesh(project, "destroy", "--yes")
    assert destroyed.returncode == 0, destroyed.stderr[-3000:]
    assert catalog.list_namespaces() == []  # tables, views and schemas of the lake: all gone
