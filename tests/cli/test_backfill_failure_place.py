"""A model that fails in the backfill is reported at its file and line (the Spark error alone named no place), and
the models not run because of it are named as such."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke


def test_a_model_failing_in_the_backfill_is_reported_at_its_file(tmp_path, engine, clean_catalog):
    project = tmp_path / "p"
    (project / "models").mkdir(parents=True)
    (project / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (project / "models" / "ok.sql").write_text("MODEL (name rel.ok, kind FULL);\nSELECT 1 AS id\n")
    (project / "models" / "bad.sql").write_text("MODEL (name rel.bad, kind FULL);\nSELECT CAST('x' AS INT) AS id FROM rel.ok\n")
    (project / "models" / "after.sql").write_text("MODEL (name rel.after, kind FULL);\nSELECT id FROM rel.bad\n")
    failed, _ = invoke(project, ["plan", "--auto-apply", "--end", "2024-01-02"], engine)
    assert failed.exit_code == 2
    assert f"{project / 'models' / 'bad.sql'}:1" in failed.output and "backfill failed for rel.bad" in failed.output
    assert "not run, since a model they read failed: rel.after" in failed.output
