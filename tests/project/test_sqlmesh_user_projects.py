"""Issue 33: what projects written by SQLMesh users rely on: variables under a gateway (even a gateway of another
engine, the one they run) and Jinja's `{% do %}`."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.project.loader import load_project

CONFIG = """
gateways:
  duck:
    connection:
      type: duckdb
    variables:
      schema_name: omop
      rows: 3
default_gateway: duck
variables:
  rows: 1
  kept: yes
model_defaults:
  dialect: duckdb
  start: '2024-01-01'
"""


def _project(folder: Path, model: str | None = None, *, config: str = CONFIG, files: dict[str, str] | None = None) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(config)
    for name, text in (files or {"m.sql": model or ""}).items():
        (folder / "models" / name).write_text(text)
    return folder


def test_the_default_gateways_variables_are_read_over_the_projects(tmp_path):
    project = load_project(_project(tmp_path / "p", "MODEL (name s.m, kind FULL);\n\nSELECT @rows AS n, @VAR('schema_name') AS s\n"),
                           use_cache=False)
    assert project.config.variables == {"rows": 3, "kept": True, "schema_name": "omop"}
    assert project.models["s.m"].query == "SELECT 3 AS n, 'omop' AS s"


def test_jinja_do_statements_work(tmp_path):
    model = ("MODEL (name s.m, kind FULL);\n\nJINJA_QUERY_BEGIN;\n{% set cols = [] %}{% do cols.append('a') %}"
             "{% do cols.append('b') %}\nSELECT {{ cols | join(', ') }} FROM (SELECT 1 AS a, 2 AS b) AS t\nJINJA_END;\n")
    project = load_project(_project(tmp_path / "p", model), use_cache=False)
    assert project.models["s.m"].query == "SELECT a, b FROM (SELECT 1 AS a, 2 AS b) AS t"


def test_variables_inside_model_names_and_table_references(tmp_path):
    folder = _project(tmp_path / "p", config="variables:\n  schema: omop\n  db: cdm\nmodel_defaults:\n  dialect: spark\n", files={
        "person.sql": "MODEL (name @schema.person, kind FULL);\n\nSELECT 1 AS id\n",
        "visit.sql": "MODEL (name @{db}.visit, kind FULL);\n\n"
                     "SELECT p.id FROM @schema.person AS p JOIN `@schema`.person AS q ON p.id = q.id\n",
    })
    project = load_project(folder, use_cache=False)
    assert set(project.models) == {"omop.person", "cdm.visit"}
    assert project.models["cdm.visit"].depends_on == frozenset({"omop.person"})
    assert project.models["cdm.visit"].query == "SELECT p.id FROM omop.person AS p JOIN omop.person AS q ON p.id = q.id"


def test_a_dialect_with_settings_is_a_dialect(tmp_path):
    folder = _project(tmp_path / "p", "MODEL (name s.m, kind FULL);\n\nSELECT 1 AS Id\n",
                      config="model_defaults:\n  dialect: 'duckdb, normalization_strategy=case_sensitive'\n")
    project = load_project(folder, use_cache=False)
    assert project.models["s.m"].dialect.startswith("duckdb")
