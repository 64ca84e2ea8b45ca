"""SparkMeshProjectComponent: a project in a defs.yaml, with Dagster's own component test cases (translation, op
customization), the example loading through its component, and real `dg` calls (list, scaffold)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import pytest
from dagster.components.testing import create_defs_folder_sandbox
from dagster.components.testing.test_cases import TestOpCustomization, TestTranslation, TranslationTestCase, test_cases

from dagster_sparkmesh import SparkMeshProjectComponent
from dagster_sparkmesh.dagster import SparkMeshResource
from dagster_sparkmesh.dagster.component_scaffolder import init_project

REPO = Path(__file__).resolve().parents[2]
SHOP = Path(__file__).parent / "projects" / "shop"
DG = Path(sys.executable).with_name("dg")
COMPONENT = "dagster_sparkmesh.SparkMeshProjectComponent"
DAILY = dg.AssetKey(["shop", "daily"])


def _load(sandbox, project: Path, **attributes):
    path = sandbox.scaffold_component(
        component_cls=SparkMeshProjectComponent,
        defs_path="mesh",
        defs_yaml_contents={"type": COMPONENT, "attributes": {"project": str(project), **attributes}},
    )
    return sandbox.load_component_and_build_defs(defs_path=path)


def test_the_component_builds_the_projects_definitions():
    with create_defs_folder_sandbox() as sandbox, _load(
        sandbox, SHOP, environment="dev", select=["+shop.daily"], sensor={"enabled": False},
        backfill_policy={"type": "multi_run", "max_partitions_per_run": 7}, retry_policy={"max_retries": 2},
        engine={"mode": "local", "spark_config": {"spark.sql.shuffle.partitions": "2"}},
    ) as (component, defs):
        assert isinstance(component, SparkMeshProjectComponent)
        graph = defs.resolve_asset_graph()
        keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
        assert keys == {"raw/events", "shop/daily", "sparkmesh/promote_dev"}  # selected: shop.daily and its parent
        assert graph.get(DAILY).code_version == graph.get(DAILY).metadata["sparkmesh/fingerprint"]
        daily = defs.resolve_assets_def(DAILY)
        assert daily.backfill_policy == dg.BackfillPolicy.multi_run(7)
        assert daily.op.retry_policy == dg.RetryPolicy(max_retries=2)
        assert [sensor.name for sensor in defs.sensors] == ["sparkmesh_dev_restated_readers", "sparkmesh_dev_automation"]
        resource = defs.resources["sparkmesh_shop"]  # named after the project folder
        assert (resource.project_dir, resource.engine_mode) == (str(SHOP.resolve()), "local")
        assert resource.spark_config == {"spark.sql.shuffle.partitions": "2"}


_WITHOUT_PARTITIONS = [case for case in test_cases if case.name != "partitions_defs"]


class TestSparkMeshTranslation(TestTranslation):
    """Dagster's translation cases, except replacing partitions: a model's partitions are its cron intervals."""

    @pytest.fixture(params=_WITHOUT_PARTITIONS, ids=[case.name for case in _WITHOUT_PARTITIONS])
    def translation_test_case(self, request) -> TranslationTestCase:
        return request.param

    def test_translation(self, attributes, assertion, key_modifier) -> None:
        with create_defs_folder_sandbox() as sandbox, _load(sandbox, SHOP, translation=attributes) as (_, defs):
            key = key_modifier(DAILY) if key_modifier else DAILY
            assert assertion(defs.resolve_assets_def(key).get_asset_spec(key))


def test_translation_templates_see_the_model_and_keys_stay_consistent():
    translation = {"key_prefix": "mesh", "tags": {"cron": "{{ node.cron | replace('@', '') }}"},
                   "group_name": "{{ node.schema }}_models"}
    with create_defs_folder_sandbox() as sandbox, _load(sandbox, SHOP, translation=translation) as (_, defs):
        graph = defs.resolve_asset_graph()
        daily = graph.get(dg.AssetKey(["mesh", "shop", "daily"]))
        assert (daily.group_name, daily.tags["cron"]) == ("shop_models", "daily")
        # The dependency, the promotion and the checks name the translated keys.
        assert dg.AssetKey(["mesh", "raw", "events"]) in daily.parent_keys
        promote = graph.get(dg.AssetKey(["sparkmesh", "promote_prod"]))
        assert dg.AssetKey(["mesh", "shop", "summary"]) in promote.parent_keys
        assert {check.asset_key for check in graph.asset_check_keys} <= set(graph.get_all_asset_keys())


def test_translating_partitions_away_is_a_clear_error():
    translation = {"partitions_def": {"type": "static", "partition_keys": ["a"]}}
    with create_defs_folder_sandbox() as sandbox:
        with pytest.raises(Exception) as raised:
            with _load(sandbox, SHOP, translation=translation):
                pass
    chain, error = [], raised.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__
    assert any("raw.events changes its partitions" in text and "events.sql:1" in text for text in chain), chain


class TestSparkMeshOpCustomization(TestOpCustomization):
    def test_op_customization(self, attributes, assertion, tmp_path) -> None:
        init_project(tmp_path / "one_model")  # one FULL model: one step, whose op the case names
        with create_defs_folder_sandbox() as sandbox, _load(sandbox, tmp_path / "one_model", op=attributes) as (_, defs):
            built = defs.resolve_assets_def(dg.AssetKey(["example", "numbers"]))
            # What the case checks, read from the built step: its op's name and tags, its backfill policy.
            assert assertion(SimpleNamespace(name=built.op.name, tags=built.op.tags, backfill_policy=built.backfill_policy))


def test_the_example_loads_through_its_component_as_through_definitions_py(monkeypatch):
    example = REPO / "example_project"
    monkeypatch.syspath_prepend(str(example))
    through_component = importlib.import_module("shop_dagster.definitions").defs()
    spec = importlib.util.spec_from_file_location("example_definitions", example / "definitions.py")
    python_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(python_module)

    def summary(defs: dg.Definitions):
        graph = defs.resolve_asset_graph()
        return (
            {key: graph.get(key).code_version for key in graph.get_all_asset_keys()},
            set(graph.asset_check_keys),
            sorted(sensor.name for sensor in defs.sensors),
            [r.csv_sources for r in defs.resources.values() if isinstance(r, SparkMeshResource)],
        )

    component_summary = summary(through_component)
    assert component_summary == summary(python_module.defs)
    assert len(component_summary[0]) == 17 and component_summary[3] == [{"raw.web_events": "external_data"}]


@pytest.fixture
def dg_project(tmp_path) -> Path:
    """An empty dg project (its package under src/), with a copy of the shop project beside it."""
    (tmp_path / "src" / "proj" / "defs").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "proj"\nversion = "0.1"\n\n[tool.dg]\ndirectory_type = "project"\n\n'
        '[tool.dg.project]\nroot_module = "proj"\n'
    )
    (tmp_path / "src" / "proj" / "__init__.py").write_text("")
    (tmp_path / "src" / "proj" / "defs" / "__init__.py").write_text("")
    (tmp_path / "src" / "proj" / "definitions.py").write_text(
        "from pathlib import Path\n\nimport dagster as dg\n\n\n@dg.definitions\ndef defs():\n"
        "    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)\n"
    )
    shutil.copytree(SHOP, tmp_path / "shop")
    return tmp_path


def _dg(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "DAGSTER_HOME": str(project / "home")}
    done = subprocess.run([str(DG), *args], cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_dg_lists_scaffolds_and_loads_the_component(dg_project):
    listed = json.loads(_dg(dg_project, "list", "components", "--json").stdout)
    assert COMPONENT in {item["key"] for item in listed["items"]}

    _dg(dg_project, "scaffold", "defs", COMPONENT, "shop_models", "--project-path", "shop")
    defs_yaml = (dg_project / "src" / "proj" / "defs" / "shop_models" / "defs.yaml").read_text()
    assert f"type: {COMPONENT}" in defs_yaml and "project: '{{ context.project_root }}/shop'" in defs_yaml

    loaded = json.loads(_dg(dg_project, "list", "defs", "--json").stdout)
    assert {asset["asset_key"] for asset in loaded["assets"]} == {
        "raw/events", "shop/daily", "shop/daily_flags", "shop/summary", "sparkmesh/promote_prod"
    }
    daily = next(asset for asset in loaded["assets"] if asset["asset_key"] == "shop/daily")
    assert daily["source"] == "shop/models/daily.sql:1"  # the code reference, relative to the project


def test_dg_scaffold_init_creates_a_project_that_loads(dg_project):
    _dg(dg_project, "scaffold", "defs", COMPONENT, "fresh", "--init", "true")
    folder = dg_project / "src" / "proj" / "defs" / "fresh"
    assert (folder / "project" / "models" / "example" / "numbers.sql").is_file()
    with create_defs_folder_sandbox() as sandbox, _load(sandbox, folder / "project") as (_, defs):
        assert dg.AssetKey(["example", "numbers"]) in defs.resolve_asset_graph().get_all_asset_keys()


def test_dg_scaffold_init_with_a_project_path_creates_the_project_there(dg_project):
    _dg(dg_project, "scaffold", "defs", COMPONENT, "placed", "--init", "true", "--project-path", "warehouse/new_project")
    assert (dg_project / "warehouse" / "new_project" / "models" / "example" / "numbers.sql").is_file()
    assert not (dg_project / "src" / "proj" / "defs" / "placed" / "project").exists()
    defs_yaml = (dg_project / "src" / "proj" / "defs" / "placed" / "defs.yaml").read_text()
    assert "project: '{{ context.project_root }}/warehouse/new_project'" in defs_yaml


def test_two_projects_share_one_code_location(dg_project, tmp_path):
    """Each component's resource has a key of its own: the code location loads both projects, with both in it."""
    loaded = _two_components(dg_project, tmp_path, lambda name: f"  environment: {name}\n")
    keys = {asset["asset_key"] for asset in loaded["assets"]}
    assert {"shop/daily", "example/numbers", "sparkmesh/promote_shop", "sparkmesh/promote_numbers"} <= keys
    assert {"sparkmesh_shop", "sparkmesh_numbers"} <= {resource["name"] for resource in loaded["resources"]}


def test_two_projects_in_the_same_environment_are_told_apart_by_their_namespace(dg_project, tmp_path):
    loaded = _two_components(dg_project, tmp_path, lambda name: f"  namespace: {name}\n  sensor:\n    approval: none\n")
    keys = {asset["asset_key"] for asset in loaded["assets"]}
    assert {"sparkmesh/shop/promote_prod", "sparkmesh/numbers/promote_prod"} <= keys
    sensors = {sensor["name"] for sensor in loaded["sensors"]}
    assert {"sparkmesh_shop_prod_git_sensor", "sparkmesh_numbers_prod_git_sensor", "sparkmesh_shop_prod_automation",
            "sparkmesh_numbers_prod_restated_readers"} <= sensors


def _two_components(dg_project: Path, tmp_path: Path, attributes) -> dict:
    """The shop and a new `numbers` project as two components of the code location (``attributes(name)``: the
    YAML lines after ``project``); what `dg list defs` loads."""
    second = tmp_path / "numbers"
    init_project(second)
    defs_dir = dg_project / "src" / "proj" / "defs"
    for name, project in (("shop", dg_project / "shop"), ("numbers", second)):
        (defs_dir / name).mkdir(parents=True)
        (defs_dir / name / "defs.yaml").write_text(f"type: {COMPONENT}\nattributes:\n  project: {project}\n" + attributes(name))
    return json.loads(_dg(dg_project, "list", "defs", "--json").stdout)
