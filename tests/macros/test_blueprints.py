"""A SQL model with ``blueprints (...)`` becomes one model per blueprint (SQLMesh's blueprinting)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh import load_project
from dagster_sparkmesh.errors import ProjectError

MODEL = """MODEL (
  name @customer.some_table,
  kind FULL,
  blueprints (
    (customer := customer1, field_a := x, field_b := 'y'),
    (customer := customer2, field_a := z, field_b := 'w')
  )
);

SELECT
  @field_a AS field_a,
  @{field_b} AS field_b,
  @BLUEPRINT_VAR('field_b') AS label
FROM @customer.some_source
"""


def _project(tmp_path: Path, model: str) -> Path:
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (tmp_path / "models" / "m.sql").write_text(model)
    (tmp_path / "external_models.yaml").write_text(
        "- name: customer1.some_source\n  columns:\n    x: int\n- name: customer2.some_source\n  columns:\n    z: int\n"
    )
    return tmp_path


def test_one_model_per_blueprint(tmp_path: Path):
    models = load_project(_project(tmp_path, MODEL)).models
    assert sorted(models) == ["customer1.some_table", "customer2.some_table"]
    assert models["customer1.some_table"].query == "SELECT x AS field_a, y AS field_b, 'y' AS label FROM customer1.some_source"
    assert models["customer2.some_table"].query == "SELECT z AS field_a, w AS field_b, 'w' AS label FROM customer2.some_source"
    assert models["customer2.some_table"].depends_on == frozenset({"customer2.some_source"})
    assert models["customer1.some_table"].fingerprint != models["customer2.some_table"].fingerprint
    # The cache holds both models of the file.
    assert sorted(load_project(tmp_path).models) == sorted(models)


def test_a_malformed_blueprint_is_an_error(tmp_path: Path):
    broken = MODEL.replace("(customer := customer2, field_a := z, field_b := 'w')", "(customer2)")
    with pytest.raises(ProjectError, match="a blueprint entry must be name := value"):
        load_project(_project(tmp_path, broken), use_cache=False)
