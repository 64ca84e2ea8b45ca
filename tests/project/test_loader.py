"""load_project on small real projects: models in order, fingerprints, seeds, externals, disabled models."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.loader import load_project


def write_project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


SHOP = {
    "config.yaml": "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\nvariables:\n  min_amount: 5\n",
    "external_models.yaml": "- name: raw.events\n  columns:\n    id: INT\n    ds: STRING\n",
    "seeds/customers.csv": "id,name\n1,ann\n2,bob\n",
    "models/raw/customers.sql": "MODEL (name raw.customers, kind SEED (path '../../seeds/customers.csv'));\n",
    "models/shop/orders.sql": (
        "MODEL (name shop.orders, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));\n"
        "SELECT e.id, c.name, e.ds FROM raw.events e JOIN raw.customers c ON c.id = e.id\n"
        "WHERE e.ds BETWEEN @start_ds AND @end_ds AND e.id >= @min_amount\n"
    ),
    "models/shop/summary.sql": "MODEL (name shop.summary, kind FULL);\nSELECT COUNT(*) AS n FROM shop.orders\n",
    "models/shop/old.sql": "MODEL (name shop.old, enabled false);\nSELECT * FROM shop.summary\n",
}


def test_loads_models_in_dependency_order(tmp_path):
    project = load_project(write_project(tmp_path, SHOP))
    assert list(project.models) == ["raw.customers", "shop.orders", "shop.summary"]
    orders = project.models["shop.orders"]
    assert orders.depends_on == {"raw.events", "raw.customers"}
    assert "e.id >= 5" in orders.query and "@start_ds" in orders.query
    assert orders.start == "2024-01-01"
    assert all(model.fingerprint and model.data_hash and model.metadata_hash for model in project.models.values())
    assert set(project.external_models) == {"raw.events"}
    seed = project.models["raw.customers"]
    assert seed.seed_content_hash and [name for name, _ in seed.columns] == ["id", "name"]


def test_a_seed_csv_change_changes_fingerprints_downstream(tmp_path):
    root = write_project(tmp_path, SHOP)
    before = load_project(root).models
    (root / "seeds/customers.csv").write_text("id,name\n1,ann\n2,bob\n3,cy\n")
    after = load_project(root).models
    assert all(before[name].fingerprint != after[name].fingerprint for name in before)


def test_formatting_changes_do_not_change_fingerprints_but_a_variable_does(tmp_path):
    root = write_project(tmp_path, SHOP)
    before = load_project(root).models
    path = root / "models/shop/orders.sql"
    path.write_text("-- reformatted\n" + path.read_text().upper().replace("@START_DS", "@start_ds").replace("@END_DS", "@end_ds")
                    .replace("@MIN_AMOUNT", "@min_amount").replace("'../../SEEDS", "'../../seeds"))
    assert load_project(root).models["shop.orders"].fingerprint == before["shop.orders"].fingerprint
    (root / "config.yaml").write_text(SHOP["config.yaml"].replace("min_amount: 5", "min_amount: 6"))
    assert load_project(root).models["shop.orders"].fingerprint != before["shop.orders"].fingerprint


def test_duplicate_model_names_name_both_files(tmp_path):
    files = {**SHOP, "models/shop/summary_copy.sql": SHOP["models/shop/summary.sql"]}
    with pytest.raises(ProjectError) as caught:
        load_project(write_project(tmp_path, files))
    assert "summary.sql" in caught.value.message and "summary_copy.sql" in caught.value.message


def test_an_empty_folder_is_an_empty_project(tmp_path):
    project = load_project(tmp_path)
    assert project.models == {} and project.warnings == ()


def test_a_missing_folder_is_an_error(tmp_path):
    with pytest.raises(ProjectError, match="does not exist"):
        load_project(tmp_path / "nope")


def test_config_warnings_reach_the_project(tmp_path):
    project = load_project(write_project(tmp_path, {"config.yaml": "project: shop\n"}))
    assert project.warnings == (
        "config.yaml:1: 'project' is a SQLMesh setting that sparkmesh does not use; ignored",
        "config.yaml:1: model_defaults.dialect is not set (SQLMesh requires it): models are read as spark SQL; "
        "set it, e.g. 'model_defaults: {dialect: spark}' (or the dialect your models are written in)",
    )


def generate(root: Path, count: int) -> Path:
    files = {"config.yaml": "model_defaults:\n  dialect: spark\n"}
    files["models/m/m0.sql"] = "MODEL (name m.m0, kind FULL);\nSELECT 1 AS id, 'a' AS name"
    for index in range(1, count):
        parent = f"m.m{index // 2}"
        files[f"models/m/m{index}.sql"] = (
            f"MODEL (name m.m{index}, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), owner 'team', tags (t{index % 7}));\n"
            f"WITH base AS (SELECT id, name, ds FROM {parent} WHERE ds BETWEEN @start_ds AND @end_ds)\n"
            f"SELECT id, UPPER(name) AS name, ds, COUNT(*) OVER (PARTITION BY id) AS n FROM base WHERE id > {index}\n"
        )
    return write_project(root, files)


def test_one_thousand_models_load_the_same_cold_and_warm(tmp_path):
    # How fast is bench/load_bench.py's to say (targets: cold < 2 s, warm < 0.5 s): a timed assertion here failed
    # a CI rehearsal on a busy machine (4.1 s against a 4 s bound) without saying anything about the code.
    root = generate(tmp_path, 1000)
    cold = load_project(root)
    assert any((root / ".sparkmesh" / "cache").rglob("*")), "the cold load wrote no parse cache"
    warm = load_project(root)
    assert len(warm.models) == 1000 and warm.models == cold.models
