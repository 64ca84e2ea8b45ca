"""DuckDB's ``READ_PARQUET(['a.parquet', ...])`` in a model: sqlglot writes a list of paths as ``parquet.`` ``
(an empty path), so the model read nothing it names. Transpiled here: one path is ``parquet.`a.parquet```, several
are those tables unioned (positionally, as DuckDB reads a list without ``union_by_name``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query


def _rendered(root: Path, query: str) -> str:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    (root / "models" / "m.sql").write_text(f"MODEL (name s.m, kind FULL);\n{query}\n")
    project = load_project(root, use_cache=False)
    model = project.models["s.m"]
    assert model.depends_on == frozenset() and not project.external_models  # files, not tables of the project
    return render_query(model, start=datetime(2024, 1, 1), end=datetime(2024, 1, 2), execution_time=datetime(2024, 1, 2),
                        table_for=lambda name: name if name in project.models else None, models=project.models)


def test_one_path_in_a_list(tmp_path: Path) -> None:
    assert _rendered(tmp_path, "SELECT * FROM READ_PARQUET(['data/a.parquet'])") == (
        f"SELECT * FROM parquet.`{tmp_path.resolve()}/data/a.parquet`"  # relative: from the project folder
    )


def test_several_paths_are_unioned(tmp_path: Path) -> None:
    assert _rendered(tmp_path, "SELECT id FROM READ_PARQUET(['/d/a.parquet', '/d/b.parquet']) AS t") == (
        "SELECT id FROM (SELECT * FROM parquet.`/d/a.parquet` UNION ALL SELECT * FROM parquet.`/d/b.parquet`) AS t"
    )


def test_a_spark_file_table_is_no_table_of_the_project(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (tmp_path / "models" / "m.sql").write_text("MODEL (name s.m, kind FULL);\nSELECT * FROM parquet.`/data/A.parquet`\n")
    project = load_project(tmp_path, use_cache=False)
    assert project.models["s.m"].depends_on == frozenset() and not project.external_models


def test_a_relative_path_is_rendered_against_the_project_folder(tmp_path: Path) -> None:
    """Where SQLMesh users run ``sqlmesh``; a Spark server would read it from its own working directory."""
    rendered = _rendered(tmp_path, "SELECT * FROM READ_PARQUET('data/t.parquet') AS t JOIN read_parquet('s3://b/u.parquet') AS u "
                                   "ON t.id = u.id JOIN read_parquet('/abs/v.parquet') AS v ON t.id = v.id")
    assert rendered == (
        f"SELECT * FROM parquet.`{tmp_path.resolve()}/data/t.parquet` AS t JOIN parquet.`s3://b/u.parquet` AS u "
        "ON t.id = u.id JOIN parquet.`/abs/v.parquet` AS v ON t.id = v.id"
    )


def test_two_checkouts_of_a_project_get_the_same_fingerprint(tmp_path: Path) -> None:
    """The project's folder is no part of the model's data: the stored query keeps the path as written."""
    fingerprints = []
    for checkout in ("a", "b"):
        root = tmp_path / checkout
        (root / "models").mkdir(parents=True)
        (root / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
        (root / "models" / "m.sql").write_text("MODEL (name s.m, kind FULL);\nSELECT * FROM read_parquet('data/t.parquet')\n")
        model = load_project(root, use_cache=False).models["s.m"]
        assert model.query == "SELECT * FROM parquet.`data/t.parquet`"
        fingerprints.append(model.fingerprint)
    assert fingerprints[0] == fingerprints[1]
