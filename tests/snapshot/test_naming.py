"""Names of the objects a model owns when its name carries a catalog (see snapshot/naming.py)."""

from __future__ import annotations

import pytest

from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.snapshot.naming import (
    folded_name,
    physical_schema,
    physical_table,
    qualified_name,
    schema_of,
    view_name,
    view_schema,
)


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (["Shop", "Orders"], "shop.orders"),
        (["spark_catalog", "shop", "orders"], "shop.orders"),
        (["SPARK_CATALOG", "shop", "orders"], "shop.orders"),
        (["ecommerce", "Silver", "orders"], "ecommerce.silver.orders"),
        (["Orders"], "default.orders"),
    ],
)
def test_qualified_name_drops_only_the_default_catalog(parts, expected):
    assert qualified_name(parts) == expected


@pytest.mark.parametrize("parts", [[], [""], ["a", "b", "c", "d"], ["a-b", "c"], ["cat", "", "c"]])
def test_qualified_name_refuses_other_shapes(parts):
    with pytest.raises(SparkMeshError):
        qualified_name(parts)


def test_a_catalog_is_folded_into_the_schema_of_tables_and_views():
    name = "ecommerce.silver.orders"
    assert folded_name(name) == "ecommerce__silver.orders"
    assert physical_schema(name) == "sparkmesh__ecommerce__silver"
    assert physical_table(name, "abc123") == "sparkmesh__ecommerce__silver.ecommerce__silver__orders__abc123"
    assert view_schema(name, "prod") == "ecommerce__silver"
    assert view_name(name, "prod") == "ecommerce__silver.orders"
    assert view_name(name, "dev") == "ecommerce__silver__dev.orders"


def test_two_part_names_are_unchanged():
    assert physical_table("shop.orders", "abc123") == "sparkmesh__shop.shop__orders__abc123"
    assert view_name("shop.orders", "dev") == "shop__dev.orders"
    assert folded_name("shop.orders") == "shop.orders"


def test_a_declared_catalog_holds_the_tables_and_views_of_its_models():
    name = "lake.sales.orders"
    assert physical_schema(name, "lake") == "lake.sparkmesh__sales"
    assert physical_table(name, "abc123", "lake") == "lake.sparkmesh__sales.sales__orders__abc123"
    assert view_schema(name, "prod", "lake") == "lake.sales"
    assert view_name(name, "prod", "lake") == "lake.sales.orders"
    assert view_name(name, "dev", "lake") == "lake.sales__dev.orders"
    assert schema_of(view_name(name, "dev", "lake")) == "lake.sales__dev"
    assert schema_of(view_name(name, "dev")) == "lake__sales__dev"  # undeclared: folded


@pytest.mark.parametrize("name", ["sales.orders", "other.sales.orders"])
def test_a_model_must_be_named_with_the_catalog_it_lives_in(name):
    with pytest.raises(SparkMeshError, match="does not name the catalog 'lake'"):
        physical_table(name, "abc123", "lake")
