"""A table that models read but nobody declares (SQLMesh's multi_hybrid reads ``dbt_repo.e`` from the dbt project
beside it): as in SQLMesh, an external table with a warning, not an error that stops the project."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.project.loader import load_project


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    for name, text in files.items():
        (root / "models" / name).write_text(text)
    return root


def test_an_undeclared_table_is_an_external_with_a_warning(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path, {
        "a.sql": "MODEL (name sqlmesh_repo.a);\nSELECT col_a, col_b\nFROM dbt_repo.e;\n",
        "b.sql": "MODEL (name sqlmesh_repo.b);\nSELECT col_a FROM sqlmesh_repo.a JOIN dbt_repo.e USING (col_a)\n",
    }), use_cache=False)
    assert project.models["sqlmesh_repo.a"].depends_on == frozenset({"dbt_repo.e"})
    assert "dbt_repo.e" in project.external_models and project.external_models["dbt_repo.e"].columns == ()
    [warning] = [w for w in project.warnings if "dbt_repo.e" in w]
    assert "a.sql:3" in warning and "external_models.yaml" in warning


def test_a_reader_of_a_model_that_did_not_load_is_still_set_aside(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path, {
        "a.sql": "MODEL (name s.a);\nSELECT FROM WHERE (\n",
        "b.sql": "MODEL (name s.b);\nSELECT * FROM s.a\n",
        "c.sql": "MODEL (name s.c);\nSELECT 1 AS x\n",
    }), use_cache=False, set_aside_broken=True)
    assert list(project.models) == ["s.c"] and "s.a" not in project.external_models
    assert {item.name for item in project.broken} == {"s.a", "s.b"}
