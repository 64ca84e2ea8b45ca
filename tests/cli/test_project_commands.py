"""info, render, dag and clean through click's CliRunner, on the fixture projects in tests/cli/projects/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dagster_sparkmesh.cli import main
from dagster_sparkmesh.plan.versions import new_version
from dagster_sparkmesh.project.loader import load_project


def run(project: Path, *args: str):
    return CliRunner().invoke(main, ["-p", str(project), *args])


def physical(project: Path, name: str) -> str:
    model = load_project(project).models[name]
    schema, table = name.split(".")
    return f"`sparkmesh__{schema}`.`{schema}__{table}__{new_version(name, model.fingerprint)}`"


def test_info_lists_models_by_kind_and_depth(shop_project: Path):
    result = run(shop_project, "info")
    assert result.exit_code == 0, result.output
    for text in ("INCREMENTAL_BY_TIME_RANGE", "EMBEDDED", "shop.daily_sales", "shop.top_items", "DAG depth 3"):
        assert text in result.output
    assert "4 models, 1 external models" in result.output
    assert "warning: config.yaml:2: 'project' is a SQLMesh setting" in result.output


def test_info_json(shop_project: Path):
    result = run(shop_project, "info", "--json")
    assert result.exit_code == 0, result.output
    models = json.loads(result.output)["models"]
    assert list(models) == ["shop.orders", "shop.items", "shop.daily_sales", "shop.top_items"]
    assert models["shop.daily_sales"]["kind"] == "INCREMENTAL_BY_TIME_RANGE"
    assert models["shop.daily_sales"]["depends_on"] == ["raw.events", "shop.items", "shop.orders"]
    assert models["shop.orders"]["depends_on"] == []
    loaded = load_project(shop_project)
    assert {name: entry["fingerprint"] for name, entry in models.items()} == {
        name: model.fingerprint for name, model in loaded.models.items()
    }
    assert all(len(entry["fingerprint"]) == 64 for entry in models.values())


def test_render_incremental_model(shop_project: Path):
    result = run(
        shop_project, "render", "shop.daily_sales", "--start", "2024-01-01", "--end", "2024-01-07",
        "--execution-time", "2024-01-08 06:00:00",
    )
    assert result.exit_code == 0, result.output
    orders = physical(shop_project, "shop.orders")
    assert result.output == (
        "SELECT o.ds, COUNT(DISTINCT e.event_id) AS events, SUM(o.amount) AS amount, '2024-01-08' AS computed_on "
        f"FROM {orders} AS o LEFT JOIN `raw`.`events` AS e ON e.order_id = o.order_id "
        "WHERE o.ds BETWEEN '2024-01-01' AND '2024-01-07' AND o.item_id IN "
        f"(SELECT item_id FROM (SELECT item_id, amount FROM {orders} AS orders WHERE amount >= 10) AS items) "
        "GROUP BY o.ds\n"
    )


@pytest.mark.parametrize(
    ("end", "end_ds"),
    [("2024-01-07", "2024-01-07"), ("2024-01-07 00:00:00", "2024-01-06"), ("2024-01-07T12:00:00", "2024-01-07")],
)
def test_render_end_date_is_inclusive_end_timestamp_exclusive(shop_project: Path, end: str, end_ds: str):
    result = run(shop_project, "render", "shop.daily_sales", "--start", "2024-01-01", "--end", end)
    assert result.exit_code == 0, result.output
    assert f"BETWEEN '2024-01-01' AND '{end_ds}'" in result.output
    assert "@" not in result.output


def test_render_unknown_model_suggests_close_names(shop_project: Path):
    result = run(shop_project, "render", "shop.daily_sale", "--start", "2024-01-01")
    assert result.exit_code == 2
    assert "no model named 'shop.daily_sale'" in result.output
    assert "did you mean shop.daily_sales" in result.output
    assert "Traceback" not in result.output


def test_render_takes_a_selector_and_prints_each_model_it_picks(shop_project: Path):
    result = run(shop_project, "render", "+shop.daily_sales", "--start", "2024-01-01")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("-- shop.orders\n")  # upstream first
    assert "\n-- shop.daily_sales\nSELECT o.ds" in result.output
    assert "-- shop.top_items" not in result.output
    unknown = run(shop_project, "render", "shop.nothing_*", "--start", "2024-01-01")
    assert unknown.exit_code == 2 and "Traceback" not in unknown.output


def test_render_rejects_a_bad_date(shop_project: Path):
    result = run(shop_project, "render", "shop.daily_sales", "--start", "January 1st")
    assert result.exit_code == 2
    assert "'January 1st' is not a date or timestamp" in result.output


def test_dag_text_and_dot(shop_project: Path):
    text = run(shop_project, "dag")
    assert text.exit_code == 0, text.output
    assert text.output.index("level 0") < text.output.index("shop.orders (FULL)") < text.output.index("level 1")
    assert "shop.daily_sales (INCREMENTAL_BY_TIME_RANGE) <- raw.events, shop.items, shop.orders" in text.output
    dot = run(shop_project, "dag", "--dot")
    assert dot.exit_code == 0, dot.output
    assert dot.output.startswith("digraph sparkmesh {")
    assert '"shop.items" -> "shop.daily_sales";' in dot.output
    assert '"raw.events" [shape=ellipse, style=dashed];' in dot.output


def test_broken_project_exits_2_with_file_line_and_no_traceback(broken_project: Path):
    result = run(broken_project, "info")
    assert result.exit_code == 2
    assert "bad.sql:3" in result.output
    assert "FROM shop.ok WHERE" in result.output
    assert "Traceback" not in result.output


def test_clean_removes_caches_of_a_project_that_does_not_load(broken_project: Path):
    generated = broken_project / ".sparkmesh"
    (generated / "cache" / "sql_models").mkdir(parents=True)
    (generated / "cache" / "sql_models" / "entry.json").write_text("{}")
    (generated / "state.db").write_text("state")
    (generated / "warehouse" / "t").mkdir(parents=True)
    assert run(broken_project, "info").exit_code == 2

    result = run(broken_project, "clean")
    assert result.exit_code == 0, result.output
    assert "removed" in result.output
    assert not (generated / "cache").exists()
    assert (generated / "state.db").read_text() == "state"
    assert (generated / "warehouse" / "t").is_dir()


def test_clean_after_a_load_and_twice(shop_project: Path):
    assert run(shop_project, "info").exit_code == 0
    assert any(path.is_file() for path in (shop_project / ".sparkmesh" / "cache").rglob("*"))
    assert run(shop_project, "clean").exit_code == 0
    assert not (shop_project / ".sparkmesh" / "cache").exists()
    again = run(shop_project, "clean")
    assert again.exit_code == 0
    assert "nothing to clean" in again.output


def test_clean_of_a_missing_folder_is_a_user_error(tmp_path: Path):
    result = run(tmp_path / "nope", "clean")
    assert result.exit_code == 2
    assert "does not exist" in result.output
