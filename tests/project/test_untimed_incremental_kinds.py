"""INCREMENTAL_BY_PARTITION / INCREMENTAL_UNMANAGED headers as SQLMesh writes them; CUSTOM refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model import IncrementalByPartitionKind, IncrementalUnmanagedKind
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.sql.model import parse_sql_model


def _model(header: str, defaults: ModelDefaults | None = None):
    text = f"MODEL (\n  name db.m,\n  {header}\n);\nSELECT 'eu' AS region, 'x' AS department, 1 AS n"
    return parse_sql_model(Path("m.sql"), text, defaults or ModelDefaults(), {}).model


def test_by_partition_with_a_compound_key():
    model = _model("kind INCREMENTAL_BY_PARTITION,\n  partitioned_by (region, department)")
    assert model.kind == IncrementalByPartitionKind()
    assert model.partitioned_by == ("region", "department")


def test_by_partition_accepts_forward_only_true_and_restatement_settings():
    header = "kind INCREMENTAL_BY_PARTITION (forward_only true, disable_restatement true),\n  partitioned_by region"
    model = _model(header)
    assert model.kind == IncrementalByPartitionKind(disable_restatement=True)


def test_by_partition_is_never_made_not_forward_only():
    with pytest.raises(ProjectError, match="always forward-only") as caught:
        _model("kind INCREMENTAL_BY_PARTITION (forward_only false),\n  partitioned_by region")
    assert caught.value.line == 3


def test_unmanaged_defaults_and_insert_overwrite():
    assert _model("kind INCREMENTAL_UNMANAGED").kind == IncrementalUnmanagedKind()
    kind = _model("kind INCREMENTAL_UNMANAGED (insert_overwrite true, disable_restatement false)").kind
    assert kind == IncrementalUnmanagedKind(insert_overwrite=True, disable_restatement=False)
    assert kind.forward_only and not IncrementalUnmanagedKind().insert_overwrite


def test_a_project_batch_size_default_does_not_reach_the_untimed_kinds():
    model = _model("kind INCREMENTAL_UNMANAGED", ModelDefaults(batch_size=7))
    assert "batch_size" not in model.kind.model_dump()


def test_managed_tables_are_refused_with_the_model_name():
    with pytest.raises(ProjectError, match=r"model db\.m has kind MANAGED, which sparkmesh does not support"):
        _model("kind MANAGED")


def test_a_custom_kind_reads_its_materialization_and_properties_and_needs_the_name():
    kind = _model("kind CUSTOM (materialization 'my_mat', materialization_properties (tag = 'x', n = 2), batch_size 3)").kind
    assert (kind.materialization, kind.properties(), kind.batch_size) == ("my_mat", {"tag": "x", "n": 2}, 3)
    with pytest.raises(ProjectError, match=r"kind CUSTOM needs materialization"):
        _model("kind custom")


def test_python_models_take_both_kinds_and_ignore_a_project_batch_size():
    from dagster_sparkmesh.project.python.kind_options import build_kind
    from dagster_sparkmesh.project.python.options import Where
    from dagster_sparkmesh.sqlmesh_api.kinds import IncrementalByPartitionKind as SqlmeshByPartition
    from dagster_sparkmesh.sqlmesh_api.kinds import IncrementalUnmanagedKind as SqlmeshUnmanaged

    where, defaults = Where("db.m", Path("m.py"), 3), ModelDefaults(batch_size=7)
    assert build_kind(SqlmeshByPartition(), where, defaults) == IncrementalByPartitionKind()
    kind = build_kind(SqlmeshUnmanaged(insert_overwrite=True), where, defaults)
    assert kind == IncrementalUnmanagedKind(insert_overwrite=True)
