"""Files read by a model (DuckDB's ``READ_PARQUET('t.parquet')``, Spark's ``parquet.`t.parquet```) build on Spark
with their rows: the file reference is no table, so the backfill must not rename it (a dotted name would split
``t.parquet`` into ``t``.``parquet``), and a relative path is read from the project folder, not Spark's."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for


@pytest.fixture
def parquet_project(tmp_path: Path, spark, clean_catalog) -> Path:
    root = tmp_path / "proj.v1"  # a dot in the folder too: no part of the path may be split
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n")
    frame = spark.createDataFrame([(1, "a"), (2, None)], "id INT, v STRING")
    frame.write.parquet(str(root / "data" / "t.parquet"))
    return root


def _rows(spark, table: str) -> list[tuple]:
    return sorted((tuple(row) for row in spark.table(table).collect()), key=lambda row: row[0])


def test_read_parquet_of_an_absolute_path_builds_its_rows(spark, parquet_project, make_context):
    path = parquet_project / "data" / "t.parquet"
    (parquet_project / "models" / "m.sql").write_text(
        f"MODEL (name s.m, kind FULL);\nSELECT * FROM read_parquet('{path}')\n"
    )
    ctx = make_context(parquet_project)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 2)))
    assert _rows(spark, "s.m") == [(1, "a"), (2, None)]


def test_relative_paths_are_read_from_the_project_folder(spark, parquet_project, make_context):
    """The test runs elsewhere (pytest's folder), as a Spark server does: only the project folder has data/."""
    (parquet_project / "models" / "duck.sql").write_text(
        "MODEL (name s.duck, kind FULL);\nSELECT id, v FROM read_parquet('data/t.parquet') WHERE id > 1\n"
    )
    (parquet_project / "models" / "spark.sql").write_text(
        "MODEL (name s.spark, kind FULL, dialect spark);\nSELECT id FROM parquet.`data/t.parquet` AS t\n"
    )
    ctx = make_context(parquet_project)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 2)))
    assert _rows(spark, "s.duck") == [(2, None)]
    assert _rows(spark, "s.spark") == [(1,), (2,)]


def test_duckdb_csv_and_parquet_readers_with_options_read_duckdbs_rows(spark, parquet_project, make_context):
    """The rows SQLMesh on DuckDB reads (checked side by side): header names the columns, types are inferred, an
    empty field is NULL, a doubled quote is a quote; union_by_name fills the columns a file lacks with NULL."""
    (parquet_project / "data" / "z.csv").write_text(
        'id,name,amount,day\n1,"say ""hi""",1.5,2024-01-01\n2,,2,2024-01-02\n3,"c,d",,2024-01-03\n'
    )
    spark.createDataFrame([(3, "w3")], "id INT, w STRING").write.parquet(str(parquet_project / "data" / "u" / "b.parquet"))
    spark.createDataFrame([(4, "a")], "id INT, v STRING").write.parquet(str(parquet_project / "data" / "u" / "a.parquet"))
    (parquet_project / "models" / "csv.sql").write_text(
        "MODEL (name s.csv, kind FULL);\nSELECT id + 1 AS next_id, * FROM read_csv_auto('data/z.csv', header = true)\n"
    )
    (parquet_project / "models" / "merged.sql").write_text(
        "MODEL (name s.merged, kind FULL);\nSELECT id, v, w FROM read_parquet('data/u/*.parquet', union_by_name = true)\n"
    )
    ctx = make_context(parquet_project)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 2)))
    assert _rows(spark, "s.csv") == [
        (2, 1, 'say "hi"', 1.5, date(2024, 1, 1)),
        (3, 2, None, 2.0, date(2024, 1, 2)),
        (4, 3, "c,d", None, date(2024, 1, 3)),
    ]
    assert _rows(spark, "s.merged") == [(3, None, "w3"), (4, "a", None)]
