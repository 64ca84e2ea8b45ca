"""``external_models.yaml`` keys ``gateway``, ``start`` and ``audits``, and nested ``external_models/`` folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh import load_project
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import AuditCall
from dagster_sparkmesh.project.externals import load_external_models

CONFIG = """
gateways:
  dev:
    connection: {type: spark}
  prod:
    connection: {type: spark}
default_gateway: dev
model_defaults:
  dialect: spark
"""

EXTERNALS = """
- name: raw.everywhere
  columns: {id: int}
- name: dev_db.events
  gateway: dev
  start: 2024-01-01
  audits:
    - name: not_null
      columns: "[customer_id]"
    - name: accepted_range
      column: zip
      min_v: "'00000'"
      max_v: "'99999'"
  columns: {customer_id: int, zip: text}
- name: prod_db.events
  gateway: PROD
  columns: {customer_id: int}
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "config.yaml").write_text(CONFIG)
    (tmp_path / "external_models" / "team" / "deep").mkdir(parents=True)
    (tmp_path / "external_models" / "team" / "deep" / "sources.yaml").write_text(EXTERNALS)
    return tmp_path


def test_only_externals_of_the_current_gateway_are_loaded(tmp_path: Path):
    project = _project(tmp_path)
    assert sorted(load_project(project, use_cache=False).external_models) == ["dev_db.events", "raw.everywhere"]
    assert sorted(load_project(project, use_cache=False, gateway="prod").external_models) == [
        "prod_db.events",
        "raw.everywhere",
    ]


def test_start_and_audits_are_read_as_spark_sql(tmp_path: Path):
    events = load_external_models(_project(tmp_path), gateway="dev")["dev_db.events"]
    assert events.start == "2024-01-01"
    assert events.gateway == "dev"
    assert events.line == 4
    assert events.audits == (
        AuditCall(name="not_null", args=(("columns", "ARRAY(customer_id)"),)),
        AuditCall(name="accepted_range", args=(("column", "zip"), ("min_v", "'00000'"), ("max_v", "'99999'"))),
    )


def test_schema_yaml_is_the_other_name_of_the_file(tmp_path: Path):
    (tmp_path / "schema.yaml").write_text("- name: raw.a\n  columns: {id: int}\n")
    assert list(load_external_models(tmp_path)) == ["raw.a"]


def test_an_unknown_audit_on_an_external_names_its_file_and_line(tmp_path: Path):
    project = _project(tmp_path)
    path = project / "external_models" / "team" / "deep" / "sources.yaml"
    path.write_text(EXTERNALS.replace("name: not_null", "name: not_nul"))
    with pytest.raises(ProjectError) as error:
        load_project(project, use_cache=False)
    assert (error.value.path, error.value.line) == (path, 4)
    assert "not_nul" in str(error.value) and "did you mean not_null" in str(error.value)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("  start: someday\n", "invalid start 'someday'"),
        ("  audits: not_null\n", "must be a list of mappings with a name"),
        ("  audits:\n    - columns: '[a]'\n", "must be a list of mappings with a name"),
    ],
)
def test_bad_start_or_audits_are_errors_with_a_line(tmp_path: Path, entry: str, message: str):
    (tmp_path / "external_models.yaml").write_text("- name: raw.a\n" + entry)
    with pytest.raises(ProjectError) as error:
        load_external_models(tmp_path)
    assert message in str(error.value)
    assert error.value.line == 2 or error.value.line == 3
