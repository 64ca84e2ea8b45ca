"""Pure spec building: keys, deps, code versions, partitions, external assets, checks. No Spark, no state."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import dagster as dg
import pytest

from dagster_sparkmesh.dagster.specs import build_sparkmesh_specs
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model import AuditCall, AuditDefinition, ExternalModel, Model
from dagster_sparkmesh.project.config import ModelDefaults, ProjectConfig
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.fingerprint import chain_fingerprints

def test_column_lineage_is_on_the_spec_through_parents_that_declare_no_columns(tmp_path):
    view = _model("staging.items", "SELECT id, ts FROM raw.events", ("raw.events",), kind={"name": "VIEW"})
    total = _model("shop.totals", "SELECT i.id AS item, MAX(i.ts) AS last_seen FROM staging.items AS i GROUP BY i.id",
                   ("staging.items",))
    project = _project(view, total).model_copy(update={"path": tmp_path})

    def lineage(specs):
        deps = _spec(specs, "shop/totals").metadata["dagster/column_lineage"].deps_by_column
        return {column: [(d.asset_key.to_user_string(), d.column_name) for d in found] for column, found in deps.items()}

    expected = {"item": [("staging/items", "id")], "last_seen": [("staging/items", "ts")]}
    assert lineage(build_sparkmesh_specs(project)) == expected
    assert (tmp_path / ".sparkmesh" / "cache" / "column_lineage" / "records.pack").is_file()
    assert lineage(build_sparkmesh_specs(project)) == expected  # from the cache
    view_lineage = _spec(build_sparkmesh_specs(project), "staging/items").metadata["dagster/column_lineage"]
    assert view_lineage.deps_by_column["ts"] == [dg.TableColumnDep(asset_key=dg.AssetKey(["raw", "events"]), column_name="ts")]


INCREMENTAL = {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"}


def _model(name: str, query: str | None, parents: tuple[str, ...] = (), **fields) -> Model:
    fields.setdefault("kind", {"name": "FULL"})
    fields.setdefault("source", "sql")
    return Model(name=name, path=Path(f"models/{name}.sql"), query=query, depends_on=frozenset(parents), **fields)


def _project(*models: Model, start: str | None = "2024-01-01", end_daily: str | None = None) -> Project:
    externals = {
        "raw.events": ExternalModel(
            name="raw.events", columns=(("id", "BIGINT"), ("ts", "TIMESTAMP")), description="clicks", path=Path("e.yaml")
        )
    }
    base = [
        _model("raw.orders", None, kind={"name": "SEED", "path": "orders.csv"}, source="seed"),
        _model("staging.orders", "SELECT id FROM raw.orders", ("raw.orders",), kind={"name": "VIEW"}),
        _model("staging.inlined", "SELECT id, ts FROM raw.events", ("raw.events",), kind={"name": "EMBEDDED"}),
        _model(
            "shop.daily",
            "SELECT id, ds FROM staging.orders WHERE ds BETWEEN @start_ds AND @end_ds",
            ("staging.orders", "staging.inlined"),
            kind=INCREMENTAL,
            end=end_daily,
            owner="finance",
            tags=("finance", "daily kpi"),
            description="Daily numbers.",
            columns=(("id", "INT"), ("ds", "DATE")),
            column_descriptions=(("id", "the order"),),
            audits=(
                AuditCall(name="not_null", args=(("columns", "(id)"),)),
                AuditCall(name="not_null_non_blocking", args=(("columns", "(ds)"),)),
                AuditCall(name="assert_positive"),
            ),
        ),
    ]
    by_name = {model.name: model for model in (*base, *models)}
    return Project(
        path=Path("/tmp/project"),
        config=ProjectConfig(model_defaults=ModelDefaults(start=start)),
        models=chain_fingerprints(by_name, externals),
        external_models=externals,
        audits={
            "assert_positive": AuditDefinition(
                name="assert_positive", query="SELECT * FROM @this_model WHERE id <= 0", blocking=False, path=Path("a.sql")
            )
        },
    )


def _spec(specs, key: str) -> dg.AssetSpec:
    return next(spec for spec in (*specs.model_specs, *specs.external_specs) if spec.key.to_user_string() == key)


def test_one_spec_per_materialized_model_with_schema_name_keys():
    specs = build_sparkmesh_specs(_project())
    assert {spec.key.to_user_string() for spec in specs.model_specs} == {"raw/orders", "staging/orders", "shop/daily"}
    assert specs.key_by_model["shop.daily"] == dg.AssetKey(["shop", "daily"])
    assert all(spec.skippable for spec in specs.model_specs)
    assert _spec(specs, "shop/daily").group_name == "shop"


def test_deps_follow_the_dag_through_embedded_models_to_external_ones():
    specs = build_sparkmesh_specs(_project())
    deps = {dep.asset_key.to_user_string() for dep in _spec(specs, "shop/daily").deps}
    assert deps == {"staging/orders", "raw/events"}
    assert {d.asset_key.to_user_string() for d in _spec(specs, "staging/orders").deps} == {"raw/orders"}


def test_code_version_is_the_fingerprint_and_moves_only_with_data_changes():
    before = _project()
    specs = build_sparkmesh_specs(before)
    assert _spec(specs, "shop/daily").code_version == before.models["shop.daily"].fingerprint

    metadata_edit = _model("staging.orders", "SELECT id FROM raw.orders", ("raw.orders",), kind={"name": "VIEW"}, owner="x")
    data_edit = _model("staging.orders", "SELECT id + 1 AS id FROM raw.orders", ("raw.orders",), kind={"name": "VIEW"})
    same = build_sparkmesh_specs(_project(metadata_edit))
    changed = build_sparkmesh_specs(_project(data_edit))
    for key in ("raw/orders", "staging/orders", "shop/daily"):
        assert _spec(same, key).code_version == _spec(specs, key).code_version
    assert _spec(changed, "raw/orders").code_version == _spec(specs, "raw/orders").code_version
    assert _spec(changed, "staging/orders").code_version != _spec(specs, "staging/orders").code_version
    assert _spec(changed, "shop/daily").code_version != _spec(specs, "shop/daily").code_version


@pytest.mark.parametrize(
    ("cron", "expected_type", "first_key"),
    [
        ("@daily", dg.DailyPartitionsDefinition, "2024-01-01"),
        ("@hourly", dg.HourlyPartitionsDefinition, "2024-01-01-00:00"),
        ("@weekly", dg.DailyPartitionsDefinition, "2024-01-01"),  # SQLMesh's intervals of @weekly: days
        ("@monthly", dg.MonthlyPartitionsDefinition, "2024-01-01"),
        ("0 6 * * *", dg.DailyPartitionsDefinition, "2024-01-01"),
        ("0 0 * * 1-5", dg.DailyPartitionsDefinition, "2024-01-01"),
        ("0 */6 * * *", dg.HourlyPartitionsDefinition, "2024-01-01-00:00"),
        ("*/15 * * * *", dg.TimeWindowPartitionsDefinition, "2024-01-01-00:00"),
    ],
)
def test_partitions_follow_cron_and_start(cron, expected_type, first_key):
    """A partition per interval of the cron's interval unit (the longest that fits between two ticks)."""
    model = _model("shop.timed", "SELECT 1 AS ds", kind=INCREMENTAL, cron=cron)
    partitions = SparkMeshTranslator().get_partitions_def(model, "2024-01-01")
    assert type(partitions) is expected_type
    assert partitions.get_first_partition_key() == first_key


def test_model_end_is_the_last_partition_included():
    model = _model("shop.timed", "SELECT 1 AS ds", kind=INCREMENTAL, end="2024-01-05")
    partitions = SparkMeshTranslator().get_partitions_def(model, "2024-01-01")
    assert partitions.get_partition_keys() == [f"2024-01-0{day}" for day in range(1, 6)]


def test_relative_dates_are_read_against_the_translators_clock():
    class Pinned(SparkMeshTranslator):
        def get_load_time(self) -> datetime:
            return datetime(2024, 3, 10, 15)

    model = _model("shop.timed", "SELECT 1 AS ds", kind=INCREMENTAL, start="3 days ago", end="1 day ago")
    partitions = Pinned().get_partitions_def(model)
    assert partitions.get_partition_keys() == ["2024-03-08"]  # whole days between 7 Mar 15:00 and 9 Mar 15:00


def test_full_view_and_seed_models_are_unpartitioned_and_incremental_ones_grouped():
    specs = build_sparkmesh_specs(_project(_model("shop.hourly", "SELECT 1 AS ds", kind=INCREMENTAL, cron="@hourly")))
    assert _spec(specs, "raw/orders").partitions_def is None
    assert _spec(specs, "staging/orders").partitions_def is None
    by_group = {group.name: {spec.key.to_user_string() for spec in group.specs} for group in specs.groups}
    assert by_group["sparkmesh_prod_unpartitioned"] == {"raw/orders", "staging/orders"}
    assert by_group["sparkmesh_prod_daily"] == {"shop/daily"}
    assert by_group["sparkmesh_prod_hourly"] == {"shop/hourly"}
    assert sorted(by_group.values(), key=len)[:2] == [{"shop/daily"}, {"shop/hourly"}]
    assert all(group.backfill_policy == dg.BackfillPolicy.single_run() for group in specs.groups)


def test_batch_size_gives_its_own_multi_run_group():
    batched = _model("shop.batched", "SELECT 1 AS ds", kind={**INCREMENTAL, "batch_size": 7})
    group = build_sparkmesh_specs(_project(batched)).group_of("shop.batched")
    assert group.backfill_policy == dg.BackfillPolicy.multi_run(7)
    assert [spec.key.to_user_string() for spec in group.specs] == ["shop/batched"]


def test_model_without_start_is_a_project_error_naming_the_file():
    with pytest.raises(ProjectError) as raised:
        build_sparkmesh_specs(_project(start=None))
    assert "shop.daily" in str(raised.value) and raised.value.path == Path("models/shop.daily.sql")


def test_metadata_owners_tags_kinds_and_description():
    spec = _spec(build_sparkmesh_specs(_project(), environment="dev"), "shop/daily")
    assert spec.metadata["dagster/table_name"] == "shop__dev.daily"
    columns = spec.metadata["dagster/column_schema"].columns
    assert [(c.name, c.type, c.description) for c in columns] == [("id", "INT", "the order"), ("ds", "DATE", None)]
    assert spec.owners == ["team:finance"]
    assert {"finance", "daily_kpi"} <= set(spec.tags)
    assert {"spark", "sql"} <= {tag.removeprefix("dagster/kind/") for tag in spec.tags}
    assert spec.description.startswith("Daily numbers.") and "```sql" in spec.description


def test_external_models_are_plain_non_executable_specs_that_can_be_skipped():
    specs = build_sparkmesh_specs(_project())
    external = _spec(specs, "raw/events")
    assert external.metadata["dagster/table_name"] == "raw.events"
    assert [c.name for c in external.metadata["dagster/column_schema"].columns] == ["id", "ts"]
    defs = dg.Definitions(assets=list(specs.external_specs))
    assert not defs.resolve_assets_def(dg.AssetKey(["raw", "events"])).is_executable

    skipped = build_sparkmesh_specs(_project(), skip_external_keys={dg.AssetKey(["raw", "events"])})
    assert skipped.external_specs == ()
    assert dg.AssetKey(["raw", "events"]) in {d.asset_key for d in _spec(skipped, "shop/daily").deps}


def test_audits_become_check_specs_with_blocking_from_the_call_or_the_audit_file():
    specs = build_sparkmesh_specs(_project())
    checks = {check.name: check.blocking for check in specs.check_specs}
    assert checks == {"not_null": True, "not_null_non_blocking": False, "assert_positive": False}
    assert [key.name for key in specs.check_keys["shop.daily"]] == ["not_null", "not_null_non_blocking", "assert_positive"]


def test_translator_subclass_without_super_init_overrides_keys():
    class Prefixed(SparkMeshTranslator):
        def __init__(self, prefix: str) -> None:
            self.prefix = prefix

        def get_asset_key(self, model):
            return super().get_asset_key(model).with_prefix(self.prefix)

    specs = build_sparkmesh_specs(_project(), Prefixed("lake"))
    assert specs.key_by_model["shop.daily"] == dg.AssetKey(["lake", "shop", "daily"])
    assert dg.AssetKey(["lake", "staging", "orders"]) in {d.asset_key for d in _spec(specs, "lake/shop/daily").deps}


def test_op_names_say_what_the_step_runs_and_tell_equal_cadences_apart_by_their_dates():
    models = (
        _model("shop.late", "SELECT 1 AS ds", kind=INCREMENTAL, start="2024-03-01"),
        _model("shop.batched", "SELECT 1 AS ds", kind={**INCREMENTAL, "batch_size": 7}),
        _model("shop.six", "SELECT 1 AS ds", kind=INCREMENTAL, cron="0 6 * * *"),  # daily intervals, due at 06:00
        _model("shop.quarter", "SELECT 1 AS ds", kind=INCREMENTAL, cron="*/15 * * * *"),
    )
    names = {group.name for group in build_sparkmesh_specs(_project(*models), environment="Dev_1").groups}
    assert names == {
        "sparkmesh_dev_1_unpartitioned",
        "sparkmesh_dev_1_daily_from_20240101",
        "sparkmesh_dev_1_daily_from_20240301",
        "sparkmesh_dev_1_daily_batch7",
        "sparkmesh_dev_1_cron_x_15_x_x_x_x",
    }
    assert names == {group.name for group in build_sparkmesh_specs(_project(*models), environment="Dev_1").groups}


def test_sql_description_is_the_file_as_written_in_a_code_block(tmp_path):
    path = tmp_path / "daily.sql"
    body = "-- one row per day\nSELECT\n  id,   -- the order\n  ds\nFROM staging.orders"
    path.write_text(f"MODEL (\n  name shop.daily,\n  kind FULL\n);\n\n{body}\n")
    model = _model("shop.daily", "SELECT id, ds FROM staging.orders", description="Daily.").model_copy(update={"path": path})
    assert SparkMeshTranslator().get_description(model) == f"Daily.\n\n```sql\n{body}\n```"


def test_python_description_is_the_source_never_an_ast_dump():
    source = "def execute(context):\n    # comment\n    return None\n"
    model = _model("shop.py", None, source="python", python_source=source)
    description = SparkMeshTranslator().get_description(model)
    assert description == f"```python\n{source}\n```" and "Module(" not in description


def test_sql_models_without_columns_get_a_derived_column_schema_through_their_parents():
    seed = _model("raw.items", None, kind={"name": "SEED", "path": "i.csv"}, source="seed",
                  columns=(("id", "INT"), ("price", "DECIMAL(10,2)"), ("day", "DATE")))
    view = _model("staging.items", "SELECT * FROM raw.items", ("raw.items",), kind={"name": "VIEW"})
    total = _model(
        "shop.totals",
        "SELECT i.day AS ds, SUM(i.price) AS revenue, COUNT(*) AS n, e.ts FROM staging.items AS i "
        "JOIN raw.events AS e ON i.id = e.id GROUP BY i.day, e.ts",
        ("staging.items", "raw.events"),
        column_descriptions=(("revenue", "gross"),),
    )
    undeclared = _model("raw.py", None, source="python", python_source="def execute(context): ...")
    unknown = _model("shop.opaque", "SELECT x, y + 1 AS y1 FROM raw.py", ("raw.py",))
    star = _model("shop.star", "SELECT * FROM raw.py", ("raw.py",))
    specs = build_sparkmesh_specs(_project(seed, view, total, undeclared, unknown, star))

    def schema(key):
        columns = _spec(specs, key).metadata.get("dagster/column_schema")
        return columns and [(c.name, c.type, c.description) for c in columns.columns]

    assert schema("staging/items") == [("id", "INT", None), ("price", "DECIMAL(10, 2)", None), ("day", "DATE", None)]
    assert schema("shop/totals") == [
        ("ds", "DATE", None), ("revenue", "DECIMAL(10, 2)", "gross"), ("n", "BIGINT", None), ("ts", "TIMESTAMP", None)
    ]
    assert schema("shop/opaque") == [("x", "unknown", None), ("y1", "unknown", None)]
    assert schema("shop/star") is None
    assert schema("shop/daily") == [("id", "INT", "the order"), ("ds", "DATE", None)]  # declared ones win
