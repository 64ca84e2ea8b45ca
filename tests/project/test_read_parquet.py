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
    assert _rendered(tmp_path, "SELECT * FROM READ_PARQUET(['data/a.parquet'])") == "SELECT * FROM parquet.`data/a.parquet`"


def test_several_paths_are_unioned(tmp_path: Path) -> None:
    assert _rendered(tmp_path, "SELECT id FROM READ_PARQUET(['a.parquet', 'b.parquet']) AS t") == (
        "SELECT id FROM (SELECT * FROM parquet.`a.parquet` UNION ALL SELECT * FROM parquet.`b.parquet`) AS t"
    )


def test_a_spark_file_table_is_no_table_of_the_project(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (tmp_path / "models" / "m.sql").write_text("MODEL (name s.m, kind FULL);\nSELECT * FROM parquet.`/data/A.parquet`\n")
    project = load_project(tmp_path, use_cache=False)
    assert project.models["s.m"].depends_on == frozenset() and not project.external_models
