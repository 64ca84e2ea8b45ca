"""The session catalog's metadata read in the JVM (``engine.direct_catalog``): the same answers as the statements
they replace (``DESCRIBE TABLE``, ``DESCRIBE TABLE EXTENDED``, ``SHOW TABLES``, the catalog API's ``getTable``),
which are the referee here, and no statement issued for them."""

from __future__ import annotations

import os

import pytest

from dagster_sparkmesh.engine.catalog import SparkCatalog
from dagster_sparkmesh.engine.direct_catalog import DirectCatalog
from dagster_sparkmesh.errors import EngineError
from tests.conftest import CONNECT_ENV


@pytest.fixture
def direct(spark, served_table_format) -> DirectCatalog:
    found = DirectCatalog.of(spark)
    if os.environ.get(CONNECT_ENV) == "connect" or served_table_format is not None:
        assert found is None  # no JVM in a Connect client; a lakehouse format's catalog holds its own objects
        pytest.skip("the shared session is a Spark Connect client or serves a lakehouse catalog: no direct look-ups")
    assert found is not None
    return found


@pytest.fixture
def by_statement(spark) -> SparkCatalog:
    catalog = SparkCatalog(spark)
    catalog._direct_catalog = None  # (the statements' answers: the referee)
    return catalog


@pytest.fixture
def objects(spark, schema) -> list[str]:
    spark.sql(
        f"CREATE TABLE {schema}.events__data (a DECIMAL(10,2), b STRUCT<x: INT, `y z`: STRING>, "
        "c ARRAY<MAP<STRING, DOUBLE>>, d TIMESTAMP_NTZ, e VARCHAR(10), f CHAR(3), "
        "`h i` BIGINT COMMENT 'sparkmesh: dropped by a forward-only change', ds DATE, "
        "sparkmesh_month STRING) USING parquet PARTITIONED BY (sparkmesh_month)"
    )
    spark.sql(f"CREATE TABLE {schema}.plain USING parquet AS SELECT 1 AS id, 'x' AS name")
    wide = ", ".join(f"'f{i}', {i}" for i in range(30))  # a struct DESCRIBE prints cut short ("... more fields")
    spark.sql(f"CREATE TABLE {schema}.wide USING parquet AS SELECT named_struct({wide}) AS s, 1 AS id")
    spark.sql(
        f"CREATE VIEW {schema}.events WITH SCHEMA EVOLUTION AS SELECT a, ds FROM {schema}.events__data "
        "WHERE sparkmesh_month IN ('20240101T000000_20240201T000000_1732670000123a1b2c3d')"
    )
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW plain AS SELECT 2 AS other")  # a temp view is no catalog object
    yield [
        f"{schema}.events__data", f"{schema}.plain", f"{schema}.events", f"spark_catalog.{schema}.plain", f"{schema}.wide"
    ]
    spark.catalog.dropTempView("plain")


def test_look_ups_answer_what_the_statements_answer(spark, schema, objects, direct, by_statement):
    catalog = SparkCatalog(spark)
    missing = [f"{schema}.nothing", f"no_such_schema_{schema}.nothing"]
    for name in [*objects, *missing]:
        assert catalog.view_text(name) == by_statement.view_text(name), name
        assert catalog.object_type(name) == by_statement.object_type(name), name
        assert catalog.catalog_columns_if_exists(name) == by_statement.catalog_columns_if_exists(name), name
    for listed in (schema, f"no_such_schema_{schema}"):
        assert catalog.list_schema(listed) == by_statement.list_schema(listed)
    assert catalog.list_schema(schema) == {"events__data", "plain", "events", "wide"}
    assert "more fields" in catalog.columns(f"{schema}.wide")[0][1]  # (as DESCRIBE prints it)
    assert catalog.view_text(f"{schema}.events").endswith("IN ('20240101T000000_20240201T000000_1732670000123a1b2c3d')")
    data = catalog.catalog_columns(f"{schema}.events__data")
    assert [(c.name, c.is_partition) for c in data][-1] == ("sparkmesh_month", True)
    assert data[6].comment == "sparkmesh: dropped by a forward-only change"
    assert [c.name for c in data if c.padded] == ["f"]  # char(3) pads what is written; varchar(10) does not
    assert catalog.catalog_columns_if_exists(f"{schema}.nothing") is None


def test_spark_functions_are_those_the_statement_lists(spark, direct, by_statement):
    listed = direct.system_functions()
    assert listed == by_statement.system_functions()
    assert {"pmod", "coalesce", "explode", "range"} <= listed and "my_udf" not in listed


def test_the_look_ups_issue_no_statement(spark, schema, objects, direct, monkeypatch):
    catalog = SparkCatalog(spark)
    statements: list[str] = []
    issue = spark.sql
    monkeypatch.setattr(spark, "sql", lambda text, *args, **kwargs: statements.append(text) or issue(text, *args, **kwargs))
    catalog.view_text(f"{schema}.events")
    catalog.catalog_columns(f"{schema}.events__data")
    catalog.object_type(f"{schema}.plain")
    catalog.list_schema(schema)
    catalog.view_text(f"{schema}.nothing")
    catalog.system_functions()
    assert statements == []
    catalog.catalog_columns(f"{schema}.events")  # a view's columns: as DESCRIBE resolves them
    assert statements == [f"DESCRIBE TABLE `{schema}`.`events`"]


def test_only_names_of_the_session_catalog_are_served(direct, schema):
    assert direct.serves(f"{schema}.events") and direct.serves(f"spark_catalog.{schema}.events")
    assert not direct.serves(f"lake.{schema}.events")
    assert direct.serves_schema(schema) and not direct.serves_schema(f"lake.{schema}")


def test_a_session_whose_current_catalog_is_another_is_asked_by_statement(spark, direct, schema, objects):
    """A model's ``USE`` of another catalog resolves two-part names there for its turn: not the session catalog's."""
    spark.conf.set("spark.sql.catalog.elsewhere", "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog")
    spark.conf.set("spark.sql.catalog.elsewhere.url", "jdbc:derby:memory:elsewhere;create=true")
    try:
        spark.sql("USE elsewhere")
        assert not direct.serves(f"{schema}.events")
    finally:
        spark.sql("USE spark_catalog.default")
        spark.conf.unset("spark.sql.catalog.elsewhere")
        spark.conf.unset("spark.sql.catalog.elsewhere.url")
    assert direct.serves(f"{schema}.events")


def test_a_failing_look_up_is_an_engine_error(spark, direct, monkeypatch):
    """A failure other than "not found" (here py4j's, as when the driver's JVM is gone) is an EngineError, as the
    statement's was."""
    from py4j.protocol import Py4JError

    class GoneSession:
        """Stands for the JVM session of a driver that died."""

        def sessionState(self):
            raise Py4JError("An error occurred while calling o1.sessionState")

    catalog = SparkCatalog(spark)
    monkeypatch.setattr(catalog._direct, "_session", GoneSession())
    with pytest.raises(EngineError, match="current catalog"):
        catalog.view_text("some_schema.some_view")
