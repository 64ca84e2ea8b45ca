"""Models named catalog.schema.table load: golden renderings, dependencies, asset keys and the refusals."""

from __future__ import annotations

import re
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import physical_tables, render_query

PROJECT = Path(__file__).parents[1] / "execution" / "projects" / "catalog_names"
FIXTURES = Path(__file__).parent / "fixtures" / "catalog_names.sql"


def _cases() -> list[tuple[str, str, str]]:
    blocks = re.split(r"^(?=-- title: )", FIXTURES.read_text(), flags=re.MULTILINE)[1:]
    cases = []
    for block in blocks:
        title = re.search(r"^-- title: (.+)$", block, re.MULTILINE).group(1)
        model = re.search(r"^-- model: (.+)$", block, re.MULTILINE).group(1).strip()
        expected = block.split("-- expected:\n")[1]
        cases.append((title, model, " ".join(line.strip() for line in expected.splitlines() if line.strip())))
    return cases


@pytest.fixture(scope="module")
def project():
    return load_project(PROJECT)


def test_names_are_read_with_the_default_catalog_dropped(project):
    assert sorted(project.models) == ["gold.revenue", "gold.top_region", "shopcat.bronze.raw_orders",
                                      "shopcat.silver.orders"]
    assert sorted(project.external_models) == ["crm.customers"]
    assert project.models["shopcat.silver.orders"].depends_on == {"shopcat.bronze.raw_orders", "crm.customers"}
    assert project.models["gold.revenue"].depends_on == {"shopcat.silver.orders"}
    assert project.models["gold.top_region"].depends_on == {"gold.revenue"}


@pytest.mark.parametrize(("title", "model", "expected"), _cases(), ids=[case[0] for case in _cases()])
def test_golden(project, title, model, expected):
    table_for = physical_tables(project.models, project.external_models, lambda _: "v1")
    rendered = render_query(
        project.models[model],
        start=datetime(2024, 1, 1),
        end=datetime(2024, 1, 2),
        execution_time=datetime(2024, 1, 3),
        table_for=table_for,
        models=project.models,
    )
    assert rendered == expected


def test_asset_keys_keep_every_name_part(project):
    from dagster_sparkmesh.dagster.translator import SparkMeshTranslator

    translator = SparkMeshTranslator()
    model = project.models["shopcat.silver.orders"]
    assert translator.get_asset_key(model).path == ["shopcat", "silver", "orders"]
    assert translator.get_group_name(model) == "shopcat__silver"


def test_a_two_part_model_owning_the_same_objects_is_refused(tmp_path):
    target = tmp_path / "project"
    shutil.copytree(PROJECT, target)
    (target / "models" / "clash.sql").write_text("MODEL (name shopcat__silver.orders, kind FULL);\nSELECT 1 AS id\n")
    with pytest.raises(ProjectError) as error:
        load_project(target)
    assert "would share the table and views of shopcat__silver.orders" in error.value.message
    assert error.value.path is not None and error.value.path.name in {"clash.sql", "orders.sql"}


@pytest.mark.parametrize("name", ["a.b.c.d", "cat..t"])
def test_other_shapes_are_still_invalid_model_names(tmp_path, name):
    target = tmp_path / "project"
    shutil.copytree(PROJECT, target)
    (target / "models" / "bad.sql").write_text(f"MODEL (name {name}, kind FULL);\nSELECT 1 AS id\n")
    with pytest.raises(ProjectError) as error:
        load_project(target)
    assert "invalid model name" in error.value.message
    assert error.value.path.name == "bad.sql"


def _declaring_shopcat(tmp_path: Path) -> Path:
    target = tmp_path / "declared"
    shutil.copytree(PROJECT, target)
    config = (target / "config.yaml").read_text()
    (target / "config.yaml").write_text(
        "gateways:\n  local:\n    connection:\n      type: spark\n      config:\n"
        "        spark.sql.catalog.shopcat: org.apache.iceberg.spark.SparkCatalog\n"
        "        spark.sql.catalog.shopcat.type: hadoop\n"
        "        spark.sql.catalog.spark_catalog.type: hive\n" + config
    )
    return target


def test_models_of_a_declared_catalog_live_there_and_are_read_there(tmp_path, project):
    declared = load_project(_declaring_shopcat(tmp_path), use_cache=False)

    orders = declared.models["shopcat.silver.orders"]
    assert (orders.catalog, orders.table_format) == ("shopcat", "iceberg")  # an Iceberg catalog: Iceberg tables
    assert declared.models["gold.revenue"].catalog is None  # spark_catalog's options declare no catalog
    assert orders.fingerprint != project.models["shopcat.silver.orders"].fingerprint  # another place, another table
    table_for = physical_tables(declared.models, declared.external_models, lambda _: "v1")
    rendered = {
        name: render_query(declared.models[name], start=datetime(2024, 1, 1), end=datetime(2024, 1, 2),
                           execution_time=datetime(2024, 1, 3), table_for=table_for, models=declared.models)
        for name in ("shopcat.silver.orders", "gold.revenue")
    }
    assert "FROM `shopcat`.`sparkmesh__bronze`.`bronze__raw_orders__v1` AS o" in rendered["shopcat.silver.orders"]
    assert "FROM `shopcat`.`sparkmesh__silver`.`silver__orders__v1` AS orders" in rendered["gold.revenue"]

    from dagster_sparkmesh.dagster.translator import SparkMeshTranslator

    assert SparkMeshTranslator().get_group_name(orders) == "silver"
