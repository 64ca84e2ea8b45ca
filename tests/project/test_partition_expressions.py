"""``partitioned_by`` expressions over one column (BigQuery's ``DATE(ts)``, Iceberg's ``bucket(4, id)``), which
SQLMesh accepts: the project loads; an Iceberg table partitions by the transform they mean, any other table is
not partitioned by them, with a warning naming the file and line. No Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.execution.writes.lakehouse_table import table_partitioning
from dagster_sparkmesh.model.records import PartitionExpression
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.sql.model import parse_sql_model
from dagster_sparkmesh.plan.categorize import categorize_model_change
from dagster_sparkmesh.snapshot.fingerprint import data_hash
from dagster_sparkmesh.snapshot.records import ChangeCategory


def _model(header: str, dialect: str = "bigquery"):
    text = f"MODEL (\n  name s.m,\n  {header}\n);\nSELECT 'a' AS team, 1 AS id, TIMESTAMP '2024-01-02 10:00:00' AS ts"
    return parse_sql_model(Path("m.sql"), text, ModelDefaults(dialect=dialect), {}).model


def test_an_expression_is_read_with_its_column_line_and_iceberg_transform():
    model = _model("kind FULL,\n  partitioned_by DATE(ts),\n  clustered_by team")
    assert model.partitioned_by == ()
    assert model.partition_expressions == (
        PartitionExpression(written="DATE(ts)", column="ts", line=4, iceberg=("days", "ts", None)),
    )


@pytest.mark.parametrize(
    ("written", "dialect", "iceberg"),
    [
        ("TIMESTAMP_TRUNC(ts, DAY)", "bigquery", ("days", "ts", None)),
        ("TIMESTAMP_TRUNC(ts, HOUR)", "bigquery", ("hours", "ts", None)),
        ("DATE_TRUNC(ts, MONTH)", "bigquery", ("months", "ts", None)),
        ("day(ts)", "duckdb", ("days", "ts", None)),
        ("DATE(ts)", "spark", ("days", "ts", None)),  # (a cast there)
        ("DATE(ts)", "snowflake", ("days", "ts", None)),
        ("DATE(ts + INTERVAL 1 DAY)", "duckdb", None),
        ("years(ts)", "spark", ("years", "ts", None)),
        ("bucket(4, id)", "duckdb", ("bucket", "id", 4)),
        ("UPPER(team)", "duckdb", None),
    ],
)
def test_the_iceberg_transform_an_expression_means(written, dialect, iceberg):
    (expression,) = _model(f"kind FULL,\n  partitioned_by ({written})", dialect).partition_expressions
    assert (expression.written, expression.iceberg) == (written, iceberg)


def test_columns_and_expressions_together():
    model = _model("kind FULL,\n  partitioned_by (team, TIMESTAMP_TRUNC(ts, DAY), \"Id\")")
    assert model.partitioned_by == ("team", "id")
    assert [e.written for e in model.partition_expressions] == ["TIMESTAMP_TRUNC(ts, DAY)"]


@pytest.mark.parametrize(
    ("written", "problem"),
    [("id + ts_id", "contains multiple columns"), ("CURRENT_DATE()", "does not contain a column")],
)
def test_an_expression_must_read_exactly_one_column_as_in_sqlmesh(written, problem):
    with pytest.raises(ProjectError) as caught:
        _model(f"kind FULL,\n  partitioned_by {written}", "duckdb")
    assert problem in caught.value.message and written in caught.value.message
    assert (caught.value.path, caught.value.line) == (Path("m.sql"), 4)


@pytest.mark.parametrize(
    "kind", ["INCREMENTAL_BY_PARTITION", "INCREMENTAL_UNMANAGED (insert_overwrite true)"]
)
def test_kinds_that_replace_partitions_refuse_an_expression_with_what_to_do(kind):
    with pytest.raises(ProjectError) as caught:
        _model(f"kind {kind},\n  partitioned_by (team, DATE(ts))")
    assert "replaces the partitions its rows hold" in caught.value.message
    assert caught.value.line == 4
    assert "DATE(ts) AS part" in (caught.value.hint or "")


def _project(root: Path, **models: str) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: bigquery\n  start: '2024-01-01'\n")
    for name, text in models.items():
        (root / "models" / f"{name}.sql").write_text(text)
    return root


PLAIN = "MODEL (\n  name s.plain,\n  kind FULL,\n  partitioned_by DATE(ts)\n);\nSELECT TIMESTAMP '2024-01-02 10:00:00' AS ts"
LAKE = (
    "MODEL (\n  name s.lake,\n  kind INCREMENTAL_BY_TIME_RANGE (time_column ts),\n  table_format iceberg,\n"
    "  partitioned_by (team, TIMESTAMP_TRUNC(ts, DAY), bucket(4, id), UPPER(team))\n);\n"
    "SELECT 'a' AS team, 1 AS id, TIMESTAMP '2024-01-02 10:00:00' AS ts"
)


def test_the_project_loads_with_a_warning_for_what_the_table_is_not_partitioned_by(tmp_path):
    project = load_project(_project(tmp_path, plain=PLAIN, lake=LAKE), use_cache=False)
    assert sorted(w for w in project.warnings if "partitioned_by" in w) == [
        "lake.sql:5: partitioned_by UPPER(team) of s.lake: the table is not partitioned by it (an Iceberg table has "
        "no transform for it; SQLMesh's DuckDB ignores partitioning too): the rows are the same",
        "plain.sql:4: partitioned_by DATE(ts) of s.plain: the table is not partitioned by it (a Spark table "
        "partitions by columns; SQLMesh's DuckDB ignores partitioning too): the rows are the same",
    ]
    lake = project.models["s.lake"]
    # The day of the time column is its partition already: the second day transform would be redundant.
    assert table_partitioning(lake, {"ts": "timestamp"}, "iceberg").sql() == "days(`ts`), `team`, bucket(4, `id`)"
    assert table_partitioning(lake, {"ts": "timestamp"}, "delta").sql() == "`team`"
    plain = project.models["s.plain"]
    assert table_partitioning(plain, {}, "iceberg").sql() == "days(`ts`)"


def test_an_expression_is_part_of_the_version_and_its_line_is_not():
    plain = _model("kind FULL")
    partitioned = _model("kind FULL,\n  partitioned_by DATE(ts)")
    moved = _model("kind FULL,\n  owner x,\n  partitioned_by DATE(ts)")
    assert data_hash(plain) != data_hash(partitioned)
    assert data_hash(moved) == data_hash(partitioned)
    assert categorize_model_change(plain, partitioned) == ChangeCategory.BREAKING
