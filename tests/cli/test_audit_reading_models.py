"""A custom audit that names another model reads the table of the version its model reads, as SQLMesh renders it:
on the first plan (no view exists yet) and in a development environment (not prod's view). Found in a SQLMesh
user's project (a relationship audit), which failed with TABLE_OR_VIEW_NOT_FOUND."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

B = """MODEL (name rel.b, kind FULL, audits (ids_known_to_a));
SELECT id FROM rel.a;

AUDIT (name ids_known_to_a);
SELECT * FROM @this_model AS b WHERE b.id NOT IN (SELECT a.id FROM rel.a)
"""


def test_a_relationship_audit_reads_the_parent_version_being_built(tmp_path, engine, clean_catalog):
    project = tmp_path / "p"
    (project / "models").mkdir(parents=True)
    (project / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n")
    (project / "models" / "a.sql").write_text("MODEL (name rel.a, kind FULL);\nSELECT 1 AS id\n")
    (project / "models" / "b.sql").write_text(B)
    prod, _ = invoke(project, ["plan", "--auto-apply", "--end", "2024-01-02"], engine)
    assert prod.exit_code == 0, prod.output
    assert "ids_known_to_a" in prod.output

    (project / "models" / "a.sql").write_text("MODEL (name rel.a, kind FULL);\nSELECT 2 AS id\n")
    dev, _ = invoke(project, ["plan", "dev", "--auto-apply", "--end", "2024-01-02"], engine)
    # b's new version reads a's new version (id 2); prod's view of a still serves id 1, which would fail it.
    assert dev.exit_code == 0, dev.output
    assert [tuple(r) for r in engine.catalog.query_rows("SELECT id FROM rel__dev.b")] == [(2,)]
    assert [tuple(r) for r in engine.catalog.query_rows("SELECT id FROM rel.a")] == [(1,)]


def test_two_model_files_may_each_define_an_audit_of_the_same_name(tmp_path, engine, clean_catalog):
    # As in SQLMesh, where inline audits belong to their model (a user's project had one in two model files).
    project = tmp_path / "p"
    (project / "models").mkdir(parents=True)
    (project / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n")
    (project / "models" / "a.sql").write_text("MODEL (name rel.a, kind FULL, audits (nn));\nSELECT 1 AS id;\n\n"
                                              "AUDIT (name nn);\nSELECT * FROM @this_model WHERE id IS NULL\n")
    # b's own nn passes on its NULL id; a's would fail it.
    (project / "models" / "b.sql").write_text("MODEL (name rel.b, kind FULL, audits (nn));\nSELECT CAST(NULL AS INT) AS id;\n\n"
                                              "AUDIT (name nn);\nSELECT * FROM @this_model WHERE id = 5\n")
    applied, _ = invoke(project, ["plan", "--auto-apply", "--end", "2024-01-02"], engine)
    assert applied.exit_code == 0, applied.output
    assert [tuple(r) for r in engine.catalog.query_rows("SELECT id FROM rel.b")] == [(None,)]

