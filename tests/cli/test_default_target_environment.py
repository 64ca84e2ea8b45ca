"""``default_target_environment``: the environment ``plan`` and ``run`` act on when the command names none, as in
SQLMesh; it was ignored with a warning, so a plain `plan` of such a project went to prod."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke


def test_plan_and_run_without_an_environment_act_on_the_configured_one(tmp_path, engine, clean_catalog):
    project = tmp_path / "p"
    (project / "models").mkdir(parents=True)
    (project / "config.yaml").write_text(
        "default_target_environment: Dev\nmodel_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (project / "models" / "m.sql").write_text("MODEL (name t.m, kind FULL);\nSELECT 1 AS n\n")
    planned, _ = invoke(project, ["plan", "--auto-apply", "--end", "2024-01-02"], engine)
    assert planned.exit_code == 0, planned.output
    assert "for `dev`" in planned.output
    ran, _ = invoke(project, ["run"], engine)
    assert ran.exit_code == 0 and "`dev` is up to date" in ran.output, ran.output
    with open_state_store(None, project) as state:
        assert state.get_environment("dev") is not None and state.get_environment("prod") is None
    explicit, _ = invoke(project, ["plan", "prod", "--auto-apply", "--end", "2024-01-02"], engine)
    assert explicit.exit_code == 0 and "for `prod`" in explicit.output
