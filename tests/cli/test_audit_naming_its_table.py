"""Issue 33: an audit that names its model's table (`FROM db.order_f`, as SQLMesh's wursthall example writes it)
instead of @this_model audits the version being built, not the one the environment's view still serves."""

from __future__ import annotations

from pathlib import Path


from tests.cli.sparkmesh_harness import invoke


def _project(folder: Path, amount: int) -> Path:
    (folder / "models").mkdir(parents=True, exist_ok=True)
    (folder / "audits").mkdir(exist_ok=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (folder / "models" / "o.sql").write_text(f"MODEL (name db.order_f, kind FULL, audits (positive));\n\nSELECT {amount} AS amount\n")
    (folder / "audits" / "positive.sql").write_text("AUDIT (name positive);\nSELECT * FROM db.order_f WHERE amount <= 0\n")
    return folder


def test_an_audit_naming_its_models_table_audits_the_new_version(tmp_path, spark, engine, clean_catalog):
    project = _project(tmp_path / "p", 1)
    good, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-02"], engine)
    assert good.exit_code == 0, good.output
    _project(project, -1)  # prod's view still serves the good version while the new one is built and audited
    bad, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-02"], engine)
    assert bad.exit_code != 0 and "positive" in bad.output
    assert spark.sql("SELECT amount FROM db.order_f").collect()[0][0] == 1  # not promoted
