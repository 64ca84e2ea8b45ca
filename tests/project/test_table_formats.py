"""SQLMesh's table_format / storage_format as a project declares them: read from MODEL headers, Python models and
model_defaults; a lakehouse format versions the model (its table is another table); one format per project."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.engine.lakehouse import (
    DELTA_PACKAGE, ICEBERG_PACKAGE, SESSION_CATALOGS, lakehouse_settings, require_format_served, with_lakehouse,
)
from dagster_sparkmesh.errors import EngineError, ProjectError
from dagster_sparkmesh.execution.writes.lakehouse_table import table_partitioning
from dagster_sparkmesh.model.table_formats import lakehouse_format, project_lakehouse_format
from dagster_sparkmesh.project.loader import load_project


def _project(root: Path, defaults: str = "", **models: str) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text(f"model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n{defaults}")
    for name, text in models.items():
        (root / "models" / f"{name}").write_text(text)
    return root


FULL = "MODEL (name s.full, kind FULL{extra});\nSELECT 1 AS x"
TIMED = "MODEL (name s.timed, kind INCREMENTAL_BY_TIME_RANGE (time_column ds){extra});\nSELECT DATE '2024-01-01' AS ds"
KEYED = "MODEL (name s.keyed, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key x){extra});\nSELECT 1 AS x"
PLAIN_VIEW = "MODEL (name s.plain_view, kind VIEW{extra});\nSELECT 1 AS x"


def test_model_defaults_give_every_model_the_format_and_a_header_overrides_it(tmp_path):
    project = load_project(_project(
        tmp_path, "  table_format: ICEBERG\n",
        **{"full.sql": FULL.format(extra=""), "timed.sql": TIMED.format(extra=", table_format hive")},
    ), use_cache=False)

    assert project.models["s.full"].table_format == "iceberg"  # lower-cased, as SQLMesh compares it
    assert lakehouse_format(project.models["s.full"]) == "iceberg"
    assert project.models["s.timed"].table_format == "hive"
    assert lakehouse_format(project.models["s.timed"]) is None


def test_storage_format_delta_is_a_delta_table_as_on_sqlmesh_spark(tmp_path):
    project = load_project(_project(tmp_path, **{"full.sql": FULL.format(extra=", storage_format delta")}), use_cache=False)

    assert project.models["s.full"].storage_format == "delta"
    assert lakehouse_format(project.models["s.full"]) == "delta"


def test_a_python_model_takes_the_format_argument(tmp_path):
    root = _project(tmp_path)
    (root / "models" / "py.py").write_text(
        "import typing as t\nfrom sqlmesh import ExecutionContext, model\n\n"
        "@model('s.py', kind='FULL', columns={'x': 'int'}, table_format='delta')\n"
        "def execute(context: ExecutionContext, **kwargs: t.Any):\n    return context.spark.sql('SELECT 1 AS x')\n"
    )
    assert lakehouse_format(load_project(root, use_cache=False).models["s.py"]) == "delta"


def test_the_format_versions_the_model_and_no_format_keeps_the_fingerprint(tmp_path):
    plain = load_project(_project(tmp_path / "a", **{"full.sql": FULL.format(extra="")}), use_cache=False)
    hive = load_project(_project(tmp_path / "b", **{"full.sql": FULL.format(extra=", table_format hive")}), use_cache=False)
    iceberg = load_project(_project(tmp_path / "c", **{"full.sql": FULL.format(extra=", table_format iceberg")}), use_cache=False)
    delta = load_project(_project(tmp_path / "d", **{"full.sql": FULL.format(extra=", table_format delta")}), use_cache=False)

    prints = [p.models["s.full"].fingerprint for p in (plain, hive, iceberg, delta)]
    assert prints[0] == prints[1]  # a value with no effect here leaves the version (and the table) alone
    assert len({prints[0], prints[2], prints[3]}) == 3


def test_a_kind_without_lakehouse_tables_keeps_its_layout_and_its_version(tmp_path):
    plain = load_project(_project(tmp_path / "a", **{"plain_view.sql": PLAIN_VIEW.format(extra="")}), use_cache=False)
    asked = load_project(_project(tmp_path / "b", **{"plain_view.sql": PLAIN_VIEW.format(extra=", table_format iceberg")}), use_cache=False)

    assert lakehouse_format(asked.models["s.plain_view"]) is None
    assert asked.models["s.plain_view"].fingerprint == plain.models["s.plain_view"].fingerprint


def test_keyed_kinds_get_lakehouse_tables_and_a_version_of_their_own(tmp_path):
    plain = load_project(_project(tmp_path / "a", **{"keyed.sql": KEYED.format(extra="")}), use_cache=False)
    asked = load_project(_project(tmp_path / "b", **{"keyed.sql": KEYED.format(extra=", table_format iceberg")}), use_cache=False)

    assert lakehouse_format(asked.models["s.keyed"]) == "iceberg"
    assert asked.models["s.keyed"].fingerprint != plain.models["s.keyed"].fingerprint


def test_a_project_asking_for_both_formats_is_refused_at_load_with_the_file(tmp_path):
    root = _project(tmp_path, **{
        "full.sql": FULL.format(extra=", table_format iceberg"), "timed.sql": TIMED.format(extra=", table_format delta"),
    })
    with pytest.raises(ProjectError, match="both Iceberg .s.full. and Delta .s.timed.") as raised:
        load_project(root, use_cache=False)
    assert raised.value.path == root / "models" / "timed.sql"
    assert "one table_format" in (raised.value.hint or "")


def test_project_format_is_the_one_format_asked_for(tmp_path):
    project = load_project(_project(tmp_path, "  table_format: delta\n", **{"full.sql": FULL.format(extra="")}), use_cache=False)
    assert project_lakehouse_format(project.models.values()) == "delta"


def test_a_session_serves_the_format_with_its_jars_and_the_users_settings_win():
    iceberg = lakehouse_settings("iceberg")
    assert iceberg["spark.jars.packages"] == ICEBERG_PACKAGE
    assert iceberg["spark.sql.catalog.spark_catalog"] == SESSION_CATALOGS["iceberg"]
    assert iceberg["spark.sql.catalog.spark_catalog.cache-enabled"] == "false"
    delta = lakehouse_settings("delta")
    assert delta["spark.jars.packages"] == DELTA_PACKAGE
    assert "org.apache.hadoop:hadoop-client-api" in delta["spark.jars.excludes"]
    assert delta["spark.databricks.delta.delta.log.cacheSize"] == "50"  # a bounded heap (engine.lakehouse)

    mirrored = with_lakehouse({"spark.jars.packages": "my.mirror:iceberg:1"}, "iceberg")
    assert mirrored["spark.jars.packages"] == "my.mirror:iceberg:1"
    assert mirrored["spark.sql.extensions"].endswith("IcebergSparkSessionExtensions")
    assert with_lakehouse({"a": "b"}, None) == {"a": "b"}


def test_a_session_that_does_not_serve_the_format_is_refused_with_what_to_do():
    require_format_served({"spark.sql.catalog.spark_catalog": SESSION_CATALOGS["delta"]}, "delta")
    with pytest.raises(EngineError, match="does not serve iceberg tables") as raised:
        require_format_served({}, "iceberg")
    assert "sparkmesh spark stop" in (raised.value.hint or "")


def test_a_models_own_catalog_must_be_declared_and_an_iceberg_one_for_iceberg_tables():
    iceberg_lake = {"spark.sql.catalog.lake": "org.apache.iceberg.spark.SparkCatalog"}
    require_format_served(iceberg_lake, "iceberg", "lake")
    require_format_served({"spark.sql.catalog.uc": "io.unitycatalog.spark.UCSingleCatalog"}, "delta", "uc")
    with pytest.raises(EngineError, match="in catalog lake: spark.sql.catalog.lake is not set") as raised:
        require_format_served({"spark.sql.catalog.spark_catalog": SESSION_CATALOGS["iceberg"]}, "iceberg", "lake")
    assert "spark.sql.catalog.lake" in (raised.value.hint or "")
    with pytest.raises(EngineError, match="in catalog uc"):
        require_format_served({"spark.sql.catalog.uc": "io.unitycatalog.spark.UCSingleCatalog"}, "iceberg", "uc")


@pytest.mark.parametrize(
    ("time_type", "cron", "table_format", "expected"),
    [
        ("date", "@daily", "iceberg", "`ds`, `region`"),
        ("string", "@daily", "delta", "`ds`, `region`"),
        ("timestamp", "@daily", "iceberg", "days(`ds`), `region`"),
        ("timestamp", "@hourly", "iceberg", "hours(`ds`), `region`"),
        ("timestamp", "@daily", "delta", "`region`"),
    ],
)
def test_a_time_range_table_is_partitioned_by_its_time_column_first(tmp_path, time_type, cron, table_format, expected):
    model_text = (
        f"MODEL (name s.timed, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), cron '{cron}', "
        "partitioned_by (region, ds));\nSELECT DATE '2024-01-01' AS ds, 'north' AS region"
    )
    model = load_project(_project(tmp_path, **{"timed.sql": model_text}), use_cache=False).models["s.timed"]

    assert table_partitioning(model, {"ds": time_type, "region": "string"}, table_format).sql() == expected


PROPERTIES = (
    "MODEL (name s.full, kind FULL, table_format iceberg,\n"
    "  physical_properties (\"write.format.default\" = 'orc', `commit.retry.num-retries` = 7, sm_flag = true));\n"
    "SELECT 1 AS x"
)


def test_physical_properties_are_read_as_sqlmesh_writes_them_and_merged_over_the_defaults(tmp_path):
    root = _project(tmp_path, "  physical_properties:\n    sm_flag: false\n    sm_team: analytics\n", **{"full.sql": PROPERTIES})
    model = load_project(root, use_cache=False).models["s.full"]

    assert dict(model.physical_properties) == {
        "sm_flag": "true", "sm_team": "analytics", "write.format.default": "orc", "commit.retry.num-retries": "7",
    }


def test_a_python_model_takes_physical_properties(tmp_path):
    root = _project(tmp_path, "  physical_properties: {sm_team: analytics}\n")
    (root / "models" / "py.py").write_text(
        "import typing as t\nfrom sqlmesh import ExecutionContext, model\n\n"
        "@model('s.py', kind='FULL', columns={'x': 'int'}, table_format='delta', "
        "physical_properties={'delta.columnMapping.mode': 'name', 'sm_flag': True})\n"
        "def execute(context: ExecutionContext, **kwargs: t.Any):\n    return context.spark.sql('SELECT 1 AS x')\n"
    )
    model = load_project(root, use_cache=False).models["s.py"]
    assert dict(model.physical_properties) == {"sm_team": "analytics", "delta.columnMapping.mode": "name", "sm_flag": "true"}


def test_physical_properties_version_a_lakehouse_table_only(tmp_path):
    def fingerprint(folder: str, extra: str) -> str:
        text = f"MODEL (name s.full, kind FULL{extra});\nSELECT 1 AS x"
        return load_project(_project(tmp_path / folder, **{"full.sql": text}), use_cache=False).models["s.full"].fingerprint

    iceberg = fingerprint("a", ", table_format iceberg")
    assert fingerprint("b", ", table_format iceberg, physical_properties (sm_team = 'a')") != iceberg
    assert fingerprint("c", "") == fingerprint("d", ", physical_properties (sm_team = 'a')")  # no effect, no version


def test_a_property_without_a_value_is_refused_at_its_line_and_column(tmp_path):
    root = _project(tmp_path, **{"full.sql": "MODEL (name s.full, kind FULL,\n  physical_properties (sm_team));\nSELECT 1 AS x"})
    with pytest.raises(ProjectError, match="expected key = value, got 'sm_team'") as raised:
        load_project(root, use_cache=False)
    assert (raised.value.line, raised.value.col) == (2, 24)


def test_a_storage_format_beside_a_table_format_is_the_files_format_as_on_sqlmesh_spark(tmp_path):
    root = _project(tmp_path, "  table_format: iceberg\n", **{
        "full.sql": FULL.format(extra=", storage_format ORC"),
        "timed.sql": TIMED.format(extra=", storage_format orc, physical_properties ('write.format.default' = 'avro')"),
        "keyed.sql": KEYED.format(extra=""),
    })
    (root / "models" / "py.py").write_text(
        "import typing as t\nfrom sqlmesh import ExecutionContext, model\n\n"
        "@model('s.py', kind='FULL', columns={'x': 'int'}, storage_format='orc')\n"
        "def execute(context: ExecutionContext, **kwargs: t.Any):\n    return context.spark.sql('SELECT 1 AS x')\n"
    )
    models = load_project(root, use_cache=False).models

    assert dict(models["s.full"].physical_properties) == {"write.format.default": "orc"}
    assert dict(models["s.py"].physical_properties) == {"write.format.default": "orc"}
    assert dict(models["s.timed"].physical_properties) == {"write.format.default": "avro"}  # the model's own wins
    assert models["s.keyed"].physical_properties == ()  # no storage format: Iceberg's own default


def test_sqlmeshs_clustering_and_tool_settings_load_and_change_nothing(tmp_path):
    plain = load_project(_project(tmp_path / "plain", **{"full.sql": FULL.format(extra="")}), use_cache=False)
    tuned = load_project(_project(tmp_path / "tuned", **{"full.sql": FULL.format(
        extra=", clustered_by (x), optimize_query false, formatting false, ignored_rules (noselectstar)"
    )}), use_cache=False)

    assert tuned.models["s.full"].fingerprint == plain.models["s.full"].fingerprint


def test_a_stamp_makes_a_new_version_as_in_sqlmesh(tmp_path):
    python_model = ("import typing as t\nfrom sqlmesh import ExecutionContext, model\n\n"
                    "@model('s.py', kind='FULL', columns={{'x': 'int'}}{stamp})\n"
                    "def execute(context: ExecutionContext, **kwargs: t.Any):\n    return context.spark.sql('SELECT 1 AS x')\n")

    def fingerprints(folder: str, stamp: str | None) -> dict[str, str]:
        root = _project(tmp_path / folder, **{"full.sql": FULL.format(extra=f", stamp '{stamp}'" if stamp else "")})
        (root / "models" / "py.py").write_text(python_model.format(stamp=f", stamp='{stamp}'" if stamp else ""))
        return {name: model.fingerprint for name, model in load_project(root, use_cache=False).models.items()}

    plain, first, again, second = (fingerprints(folder, stamp) for folder, stamp in
                                   (("plain", None), ("first", "v1"), ("again", "v1"), ("second", "v2")))
    for name in ("s.full", "s.py"):
        assert len({plain[name], first[name], second[name]}) == 3, name
        assert first[name] == again[name]
