"""One model that does not load leaves the code location standing: the others load, the broken one and its readers
are assets carrying the error (file, line, column first), and nothing can be promoted until it is fixed."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from dagster_sparkmesh.dagster import build_sparkmesh_definitions, promotion_key
from dagster_sparkmesh.dagster.broken_assets import LOAD_ERROR
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.loader import load_project

SHOP = Path(__file__).parent / "projects" / "shop"


@pytest.fixture
def broken_shop(tmp_path) -> Path:
    target = tmp_path / "shop"
    shutil.copytree(SHOP, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    daily = target / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("SUM(amount) AS total", "SUM(amount AS total"))
    return target


def test_the_cli_still_stops_at_the_error(broken_shop):
    with pytest.raises(ProjectError, match=r"daily\.sql:9:"):
        load_project(broken_shop, use_cache=False)


def test_the_other_models_load_and_the_broken_ones_carry_their_error(broken_shop):
    defs = build_sparkmesh_definitions(broken_shop, git_link=None)
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == {
        "raw/events", "shop/daily", "shop/daily_flags", "shop/summary", "sparkmesh/promote_prod"
    }
    daily = graph.get(dg.AssetKey(["shop", "daily"]))
    assert daily.description.startswith(f"Does not load: {broken_shop / 'models' / 'daily.sql'}:9:")
    assert "sparkmesh/fingerprint" not in daily.metadata and LOAD_ERROR in daily.metadata
    flags = graph.get(dg.AssetKey(["shop", "daily_flags"]))
    assert flags.description.endswith("shop.daily_flags reads shop.daily, which does not load")
    assert {k.to_user_string() for k in flags.parent_keys} == {"shop/daily"}
    events = graph.get(dg.AssetKey(["raw", "events"]))
    assert events.code_version is not None  # a model that does not read the broken one is an ordinary asset
    promote = graph.get(promotion_key("prod"))
    assert {k.to_user_string() for k in promote.parent_keys} == {"raw/events"}


def test_materializing_a_broken_model_or_the_promotion_fails_with_the_message(broken_shop):
    defs = build_sparkmesh_definitions(broken_shop, git_link=None, sensor=False, automation_sensor_status=None)
    job = defs.resolve_implicit_global_asset_job_def()
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(
            instance=instance, asset_selection=[dg.AssetKey(["shop", "daily"])], raise_on_error=False
        )
        [failure] = [e for e in result.all_events if e.is_step_failure]
        assert "shop.daily does not load: " in failure.step_failure_data.error.message
        assert ":9:" in failure.step_failure_data.error.message
        promoted = job.execute_in_process(instance=instance, asset_selection=[promotion_key("prod")], raise_on_error=False)
        [refusal] = [e for e in promoted.all_events if e.is_step_failure]
        assert "3 model(s) do not load; fix them first:\n- shop.daily: " in refusal.step_failure_data.error.message
