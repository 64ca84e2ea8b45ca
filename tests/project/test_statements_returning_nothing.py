"""Macro calls as pre/post-statements (SQLMesh's sushi): a macro that returns None leaves no statement, as SQLMesh
skips it (``@ASSERT_HAS_COLUMNS(...)`` on marketing); a Python model's ``pre_statements=["@noop()"]`` is a macro
call, rendered with the project's macros, not SQL where ``@`` reads as an operator."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_statements


def _project(root: Path) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "macros").mkdir()
    (root / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n")
    (root / "macros" / "__init__.py").write_text(
        "from sqlmesh import macro\n"
        "@macro()\n"
        "def noop(evaluator):\n"
        "    return 'SELECT 1'\n"
        "@macro()\n"
        "def check_only(evaluator, model):\n"
        "    if evaluator.runtime_stage == 'creating':\n"
        "        pass\n"
        "    return None\n"
    )
    (root / "models" / "a.sql").write_text("MODEL (name s.a, kind FULL);\nSELECT 1 AS id;\n@check_only(s.a);\n")
    (root / "models" / "b.py").write_text(
        "from sqlmesh import model\n"
        "@model('s.b', is_sql=True, kind='FULL', pre_statements=['@noop()'])\n"
        "def entrypoint(evaluator):\n"
        "    return 'SELECT 1 AS id'\n"
    )
    return root


def _render(project, name: str, statements: tuple[str, ...]) -> list[str]:
    return render_statements(project.models[name], statements, start=datetime(2024, 1, 1), end=datetime(2024, 1, 2),
                             execution_time=datetime(2024, 1, 2), table_for=lambda n: n, models=project.models)


def test_a_statement_macro_returning_none_renders_to_no_statement(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path), use_cache=False)
    model = project.models["s.a"]
    assert _render(project, "s.a", model.post_statements) == []


def test_a_python_models_statement_is_a_macro_call(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path), use_cache=False)
    assert _render(project, "s.b", project.models["s.b"].pre_statements) == ["SELECT 1"]
