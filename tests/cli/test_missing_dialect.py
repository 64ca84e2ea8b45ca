"""A config without ``model_defaults.dialect`` (which SQLMesh requires) loads with a warning that says spark is
assumed and how to set it; ``sparkmesh info`` shows it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from dagster_sparkmesh.cli import main
from dagster_sparkmesh.project.loader import load_project

WARNING = "config.yaml:1: model_defaults.dialect is not set (SQLMesh requires it): models are read as spark SQL"


def _project(tmp_path: Path, config: str) -> Path:
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text(config)
    (tmp_path / "models" / "a.sql").write_text("MODEL (name db.a, kind FULL);\nSELECT 1 AS x\n")
    return tmp_path


def test_a_missing_dialect_is_a_warning_shown_by_info(tmp_path: Path):
    project = _project(tmp_path, "model_defaults:\n  start: 2024-01-01\n")
    assert [w for w in load_project(project, use_cache=False).warnings if WARNING in w]
    result = CliRunner().invoke(main, ["-p", str(project), "info"])
    assert result.exit_code == 0, result.output
    assert "warning: " + WARNING in result.output
    assert "model_defaults: {dialect: spark}" in result.output


def test_no_warning_once_the_dialect_is_set(tmp_path: Path):
    project = _project(tmp_path, "model_defaults:\n  dialect: duckdb\n")
    assert load_project(project, use_cache=False).warnings == ()
