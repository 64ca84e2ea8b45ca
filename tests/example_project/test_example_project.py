"""The example shop: its data is what the generator writes, and it is the project the README describes."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "example_project"

EXPECTED_KINDS = {
    "raw.customers": "SEED",
    "raw.products": "SEED",
    "raw.orders": "SEED",
    "staging.customers": "VIEW",
    "staging.products": "VIEW",
    "staging.orders": "VIEW",
    "staging.web_events": "VIEW",
    "shop.fct_orders": "INCREMENTAL_BY_TIME_RANGE",
    "shop.daily_revenue": "INCREMENTAL_BY_TIME_RANGE",
    "shop.daily_category_sales": "INCREMENTAL_BY_TIME_RANGE",
    "shop.daily_funnel": "INCREMENTAL_BY_TIME_RANGE",
    "shop.customer_status": "INCREMENTAL_BY_UNIQUE_KEY",
    "shop.customers": "FULL",
    "shop.product_performance": "FULL",
    "shop.customer_segments": "FULL",
}


def test_committed_data_is_exactly_what_the_generator_writes(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate_example_seeds.py"), "--out", str(tmp_path)], check=True
    )
    written = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*.csv"))
    assert written == [
        Path("external_data/raw_web_events.csv"),
        Path("seeds/raw_customers.csv"),
        Path("seeds/raw_orders.csv"),
        Path("seeds/raw_products.csv"),
    ]
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (EXAMPLE / relative).read_bytes(), relative


def test_orders_cover_january_2024_and_reference_known_customers_and_products() -> None:
    def rows(name: str) -> list[dict[str, str]]:
        with (EXAMPLE / "seeds" / name).open(encoding="utf-8") as handle:
            return list(csv.DictReader(handle))

    orders, customers, products = rows("raw_orders.csv"), rows("raw_customers.csv"), rows("raw_products.csv")
    assert len(orders) == 300
    assert {order["ordered_at"][:10] for order in orders} == {f"2024-01-{day:02d}" for day in range(1, 32)}
    assert {order["customer_id"] for order in orders} < {customer["customer_id"] for customer in customers}
    assert {order["product_id"] for order in orders} <= {product["product_id"] for product in products}


def test_unit_tests_name_models_of_the_project() -> None:
    for path in sorted((EXAMPLE / "tests").glob("*.yaml")):
        for name, test in yaml.safe_load(path.read_text()).items():
            assert test["model"] in EXPECTED_KINDS, (path.name, name)
            assert set(test["inputs"]) <= set(EXPECTED_KINDS), (path.name, name)


def test_loads_with_the_kinds_and_dependencies_the_readme_describes() -> None:
    loader = pytest.importorskip("dagster_sparkmesh.project.loader")
    project = loader.load_project(EXAMPLE, use_cache=False)
    assert {name: model.kind_name for name, model in project.models.items()} == EXPECTED_KINDS
    assert set(project.external_models) == {"raw.web_events"}
    assert project.models["shop.daily_funnel"].depends_on == {"staging.web_events", "shop.daily_revenue"}
    assert project.models["shop.customers"].depends_on == {
        "staging.customers",
        "shop.fct_orders",
        "shop.customer_status",
    }
    assert {call.name for call in project.models["shop.fct_orders"].audits} == {
        "not_null",
        "unique_values",
        "accepted_values",
        "assert_positive_amounts",
    }
    assert "assert_positive_amounts" in project.audits
    assert len(project.unit_tests) >= 3
