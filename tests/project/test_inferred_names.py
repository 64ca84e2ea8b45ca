"""``model_naming: {infer_names: true}``: a SQL model without a name is named after its folder and file, as SQLMesh
names it (``models/shop/orders.sql`` is ``shop.orders``); a user's project was written this way and did not load."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.loader import load_project


def _project(root: Path, files: dict[str, str], infer: str = "true") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(f"model_naming:\n  infer_names: {infer}\nmodel_defaults:\n  dialect: duckdb\n")
    for name, text in files.items():
        (root / "models" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "models" / name).write_text(text)
    return root


def test_a_model_without_a_name_is_named_after_its_folder_and_file(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path, {
        "shop/orders.sql": "MODEL (kind FULL);\nSELECT 1 AS order_id\n",
        "shop/order_count.sql": "MODEL (kind FULL);\nSELECT COUNT(*) AS n FROM shop.orders\n",
        "platinum/dimensions/customers.sql": "MODEL (kind FULL);\nSELECT 1 AS id\n",
        "shop/named.sql": "MODEL (name shop.other_name, kind FULL);\nSELECT 1 AS id\n",
    }), use_cache=False)
    assert sorted(project.models) == [
        "platinum.dimensions.customers", "shop.order_count", "shop.orders", "shop.other_name"]
    assert project.models["shop.order_count"].depends_on == {"shop.orders"}


def test_a_file_directly_in_models_is_in_the_schema_default_and_without_the_setting_a_name_is_required(
    tmp_path: Path,
) -> None:
    project = load_project(_project(tmp_path / "a", {"orders.sql": "MODEL (kind FULL);\nSELECT 1 AS id\n"}),
                           use_cache=False)
    assert list(project.models) == ["default.orders"]  # SQLMesh names it orders, in the schema default
    with pytest.raises(ProjectError, match="cannot name the model after its file") as error:
        load_project(_project(tmp_path / "c", {"my-orders.sql": "MODEL (kind FULL);\nSELECT 1 AS id\n"}), use_cache=False)
    assert "folder named after its schema" in (error.value.hint or "")
    with pytest.raises(ProjectError, match="the MODEL header has no name"):
        load_project(_project(tmp_path / "b", {"shop/orders.sql": "MODEL (kind FULL);\nSELECT 1 AS id\n"}, "false"),
                     use_cache=False)
