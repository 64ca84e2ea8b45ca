"""``@STAR`` over an external model whose columns ``external_models.yaml`` declares (SQLMesh renders it from those
columns: ``SELECT CAST(id AS INT) AS id, CAST(amount AS DOUBLE) AS amount FROM raw.events``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query


def test_star_over_a_declared_external(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    (tmp_path / "external_models.yaml").write_text(
        "- name: raw.events\n  columns:\n    id: int\n    kind: text\n    amount: double\n"
    )
    (tmp_path / "models" / "star.sql").write_text(
        "MODEL (name m.star, kind FULL);\nSELECT @STAR(raw.events, exclude := [kind]) FROM raw.events\n"
    )
    project = load_project(tmp_path, use_cache=False)
    model = project.models["m.star"]
    sql = render_query(model, start=datetime(2024, 1, 1), end=datetime(2024, 1, 2), execution_time=datetime(2024, 1, 2),
                       table_for=lambda name: name, models=project.models)
    assert sql == "SELECT CAST(id AS INT) AS id, CAST(amount AS DOUBLE) AS amount FROM `raw`.`events` AS events"
    assert model.depends_on == frozenset({"raw.events"})
