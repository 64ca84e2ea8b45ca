"""``@UNION(...)`` as a model's whole query (SQLMesh renders it from the relations' columns, inferred when they are
not declared: ``SELECT CAST(id AS INT) AS id, ... FROM m.src UNION SELECT ... FROM m.src2``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query


def test_union_as_the_whole_query(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    (tmp_path / "models" / "src.sql").write_text("MODEL (name m.src, kind FULL);\nSELECT 1 AS id, 'a' AS status\n")
    (tmp_path / "models" / "src2.sql").write_text("MODEL (name m.src2, kind FULL);\nSELECT 2 AS id, 'b' AS status\n")
    (tmp_path / "models" / "union.sql").write_text("MODEL (name m.unioned, kind FULL);\n@UNION('distinct', m.src, m.src2)\n")
    project = load_project(tmp_path, use_cache=False)
    model = project.models["m.unioned"]
    assert model.depends_on == frozenset({"m.src", "m.src2"})
    sql = render_query(model, start=datetime(2024, 1, 1), end=datetime(2024, 1, 2), execution_time=datetime(2024, 1, 2),
                       table_for=lambda name: name, models=project.models)
    assert sql == (
        "SELECT CAST(id AS INT) AS id, CAST(status AS STRING) AS status FROM `m`.`src` AS src "
        "UNION SELECT CAST(id AS INT) AS id, CAST(status AS STRING) AS status FROM `m`.`src2` AS src2"
    )
