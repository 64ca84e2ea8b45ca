"""An AUDIT_ONLY model is a Dagster asset check (on the last model it reads), never an asset. No Spark."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from dagster_sparkmesh.dagster import build_sparkmesh_specs
from dagster_sparkmesh.dagster.specs import dagster_name
from dagster_sparkmesh.dagster.standalone_checks import standalone_check_specs
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.project.loader import load_project

PROJECT = Path(__file__).parents[1] / "execution" / "projects" / "audit_only"
CUSTOMERS, ORDERS = dg.AssetKey(["bistro", "customers"]), dg.AssetKey(["bistro", "orders"])


def test_an_audit_only_model_is_a_check_not_an_asset():
    project = load_project(PROJECT, use_cache=False)
    specs = standalone_check_specs(project, SparkMeshTranslator(), frozenset(project.models))

    check = specs["checks.orders_have_customers"]
    assert check.key == dg.AssetCheckKey(ORDERS, dagster_name("checks.orders_have_customers"))
    assert check.blocking and [dep.asset_key for dep in check.additional_deps] == [CUSTOMERS]
    assert specs["checks.large_orders"].blocking is False
    assert set(build_sparkmesh_specs(project).key_by_model) == {"bistro.customers", "bistro.orders"}
