"""config.yaml: SQLMesh keys that apply, warnings for those that don't, errors (with lines) for typos."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config import ProjectConfig
from dagster_sparkmesh.project.config.loader import load_config

SQLMESH_CONFIG = """\
project: shop
gateways:
  spark:
    connection:
      type: spark
      mode: connect
      remote: sc://127.0.0.1:15002
      catalog: spark_catalog
      config:
        spark.sql.shuffle.partitions: 4
        spark.sql.adaptive.enabled: true
        spark.driver.extraJavaOptions: -Dx=1
    state_connection:
      type: postgres
      host: 127.0.0.1
      port: 5432
      user: postgres
      password: "p@ss word"
      database: test
  other:
    connection:
      type: spark
    state_connection:
      type: duckdb
      database: state.db
default_gateway: spark
model_defaults:
  dialect: duckdb
  start: 2024-01-01
  cron: '@hourly'
  owner: data
  batch_size: 10
  kind: VIEW
environment_ttl: in 2 weeks
snapshot_ttl: in 3 weeks
variables:
  Region: EU
  limit: 5
ui:
  format_on_save: true
format:
  normalize: true
"""


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> Path:
    (tmp_path / name).write_text(text)
    return tmp_path


def test_a_missing_config_gives_defaults(tmp_path):
    loaded = load_config(tmp_path)
    assert loaded.config == ProjectConfig()
    assert loaded.warnings == ()


def test_sqlmesh_config_is_read(tmp_path):
    loaded = load_config(write(tmp_path, SQLMESH_CONFIG))
    config = loaded.config
    assert config.default_gateway == "spark"
    assert config.connection.mode == "connect"
    assert config.connection.remote == "sc://127.0.0.1:15002"
    assert config.connection.config == {  # Spark's keys keep their case: Spark would ignore a folded one
        "spark.sql.shuffle.partitions": "4", "spark.sql.adaptive.enabled": "true", "spark.driver.extraJavaOptions": "-Dx=1",
    }
    assert config.state.type == "postgres"
    url = make_url(config.state.url)
    assert (url.drivername, url.username, url.password, url.host, url.port, url.database) == (
        "postgresql+psycopg2", "postgres", "p@ss word", "127.0.0.1", 5432, "test",
    )
    assert config.gateways["other"].state_connection is None
    defaults = config.model_defaults
    assert (defaults.dialect, defaults.start, defaults.cron, defaults.owner, defaults.batch_size) == (
        "duckdb", "2024-01-01", "@hourly", "data", 10,
    )
    assert (config.environment_ttl, config.snapshot_ttl) == ("in 2 weeks", "in 3 weeks")
    assert config.variables == {"region": "EU", "limit": 5}


def test_sqlmesh_keys_that_do_not_apply_are_warnings(tmp_path):
    warnings = load_config(write(tmp_path, SQLMESH_CONFIG)).warnings
    text = "\n".join(warnings)
    for key in ("'project'", "'ui'", "'format'", "connection.catalog"):
        assert key in text
    duckdb = next(w for w in warnings if "duckdb" in w)
    assert "default SQLite state is used" in duckdb and "config.yaml:24" in duckdb


def test_config_yml_and_env_vars(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_TEST_HOST", "db.internal")
    text = "state_connection:\n  type: postgres\n  host: \"{{ env_var('SM_TEST_HOST') }}\"\n  database: \"{{ env_var('SM_NOPE', 'fallback') }}\"\n"
    config = load_config(write(tmp_path, text, "config.yml")).config
    assert config.state.url == "postgresql+psycopg2://db.internal/fallback"


def test_postgres_state_url_connects_to_the_test_database(tmp_path):
    import sqlalchemy

    text = "state_connection:\n  type: postgres\n  host: 127.0.0.1\n  port: 5432\n  user: postgres\n  database: test\n"
    engine = sqlalchemy.create_engine(load_config(write(tmp_path, text)).config.state.url)
    try:
        with engine.connect() as connection:
            assert connection.execute(sqlalchemy.text("SELECT current_database()")).scalar() == "test"
    finally:
        engine.dispose()


def test_sqlite_state_database_is_relative_to_the_project(tmp_path):
    config = load_config(write(tmp_path, "state_connection:\n  type: sqlite\n  database: st/state.db\n")).config
    assert config.state.url == f"sqlite:///{tmp_path.resolve() / 'st' / 'state.db'}"


@pytest.mark.parametrize(
    ("text", "line", "fragment", "hint"),
    [
        ("model_defaults:\n  dialect: spark\nmodel_default:\n  cron: '@daily'\n", 3, "unknown key 'model_default'", "did you mean model_defaults"),
        ("model_defaults:\n  dialect: spark\n  crn: '@daily'\n", 3, "unknown key 'crn' in model_defaults", "did you mean cron"),
        ("model_defaults:\n  dialect: sparky\n", 2, "unknown dialect 'sparky'", "dialect"),
        ("model_defaults:\n  cron: 'every day'\n", 2, "invalid cron", "@daily"),
        ("model_defaults:\n  cron: '* * * * *'\n", 2, "ticks more often than every 5 minutes", "*/5 * * * *"),
        ("model_defaults:\n  interval_unit: week\n", 2, "unknown interval_unit 'week'", "five_minute"),
        ("model_defaults:\n  allow_partials: often\n", 2, "allow_partials must be true or false", "allow_partials: true"),
        ("model_defaults:\n  cron_tz: Pacific/Nowhere\n", 2, "unknown cron_tz 'Pacific/Nowhere'", "IANA time zone"),
        ("model_defaults:\n  enabled: sometimes\n", 2, "model_defaults.enabled must be true or false", "enabled: true"),
        ("model_defaults:\n  audits: {not_null: id}\n", 2, "model_defaults.audits must be a list of audit calls",
         "not_null(columns := [id])"),
        ("model_defaults:\n  kind: FULLL\n", 2, "model_defaults.kind 'FULLL' is not a model kind", "kind: FULL"),
        ("model_defaults:\n  on_destructive_change: drop\n", 2, "invalid model_defaults.on_destructive_change 'drop'",
         "error, warn, allow"),
        ("model_defaults:\n  dialect: spark\n  on_additive_change: sometimes\n", 3,
         "invalid model_defaults.on_additive_change 'sometimes'", "error, warn, allow, ignore"),
        ("model_defaults:\n  batch_concurrency: 0\n", 2, "batch_concurrency must be a whole number of at least 1",
         "batch_concurrency: 1"),
        ("model_defaults:\n  pre_statements: {a: 1}\n", 2, "model_defaults.pre_statements must be a list of SQL statements",
         "pre_statements: ['SET x = 1']"),
        ("model_defaults:\n  session_properties: [ansi]\n", 2, "model_defaults.session_properties must map keys to single values",
         "spark.sql.ansi.enabled"),
        ("gateways:\n  local:\n    connection:\n      type: sprak\n", 4, "connection type 'sprak' is not supported", "type: spark"),
        ("gateways:\n  local:\n    connecton: {}\n", 3, "unknown key 'connecton'", "did you mean connection"),
        ("variables:\n  a: !!set {x}\n", 2, "variable 'a' must be a string, number, boolean, list or mapping", "plain"),
        ("model_defaults: [1\n", 2, "invalid YAML", "indentation"),
        ("environment_ttl: {{ env_var('SM_SURELY_UNSET') }}\n", 1, "SM_SURELY_UNSET is not set", "default"),
        ("environment_ttl: in 1 week\npreview_days: 0\n", 2, "preview_days must be a whole number", "preview_days: 3"),
        ("plan:\n  include_unmodified: sometimes\n", 2, "plan.include_unmodified must be true or false", "views of"),
        ("plan:\n  include_unmodifed: true\n", 2, "unknown key 'include_unmodifed' in plan", "did you mean include_unmodified"),
    ],
)
def test_config_errors_name_the_line(tmp_path, text, line, fragment, hint):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    error = caught.value
    assert fragment in error.message
    assert error.line == line
    assert hint in error.hint
    assert error.path.name == "config.yaml"


def test_model_defaults_interval_unit_is_read(tmp_path):
    config = load_config(write(tmp_path, "model_defaults:\n  dialect: spark\n  interval_unit: HOUR\n")).config
    assert config.model_defaults.interval_unit == "hour"


def test_model_defaults_allow_partials_is_read(tmp_path):
    loaded = load_config(write(tmp_path, "model_defaults:\n  dialect: spark\n  allow_partials: true\n"))
    assert loaded.config.model_defaults.allow_partials is True
    as_text = load_config(write(tmp_path, "model_defaults:\n  dialect: spark\n  allow_partials: 'False'\n"))
    assert as_text.config.model_defaults.allow_partials is False  # SQLMesh's str | bool
    assert not any("allow_partials" in warning for warning in loaded.warnings)  # read, not ignored


def test_model_defaults_kind_is_read_as_header_text(tmp_path):
    loaded = load_config(write(tmp_path, "model_defaults:\n  kind:\n    name: INCREMENTAL_BY_TIME_RANGE\n    time_column: ds\n"))
    assert loaded.config.model_defaults.kind == "INCREMENTAL_BY_TIME_RANGE (time_column ds)"
    assert load_config(write(tmp_path, "model_defaults:\n  kind: full\n")).config.model_defaults.kind == "full"


def test_model_defaults_schema_change_policies_and_batch_concurrency_are_read_and_gateway_is_a_warning(tmp_path):
    text = ("model_defaults:\n  dialect: spark\n  on_destructive_change: ALLOW\n  on_additive_change: ignore\n"
            "  batch_concurrency: 3\n  gateway: local\n")
    loaded = load_config(write(tmp_path, text))
    defaults = loaded.config.model_defaults
    assert (defaults.on_destructive_change, defaults.on_additive_change, defaults.batch_concurrency) == ("allow", "ignore", 3)
    assert [w for w in loaded.warnings if "model_defaults" in w] == [
        "config.yaml:6: model_defaults.gateway is not used by sparkmesh; ignored"
    ]


GATEWAY_DEFAULTS = """\
gateways:
  local:
    connection:
      type: spark
      wap_enabled: true
    model_defaults:
      on_destructive_change: warn
  other:
    connection:
      type: spark
    model_defaults:
      batch_concurrency: 5
default_gateway: local
physical_table_naming_convention: hash_md5
model_defaults:
  dialect: spark
  start: '2024-01-01'
  on_destructive_change: allow
  batch_concurrency: 2
"""


def test_the_used_gateways_model_defaults_win_key_by_key_and_sqlmesh_only_keys_are_warnings(tmp_path):
    # As SQLMesh 0.236.4 merges the same file (checked against it, with DuckDB gateways): the gateway's keys over
    # the project's, the others kept; another gateway's only when the project runs on it (``--gateway``).
    write(tmp_path, GATEWAY_DEFAULTS)
    loaded = load_config(tmp_path)
    used = loaded.config.model_defaults
    assert (used.on_destructive_change, used.batch_concurrency, used.start, used.dialect) == ("warn", 2, "2024-01-01", "spark")
    other = load_config(tmp_path, gateway="other").config.model_defaults
    assert (other.on_destructive_change, other.batch_concurrency) == ("allow", 5)
    assert [w.split(": ", 1)[0] for w in loaded.warnings] == ["config.yaml:5", "config.yaml:14"]
    assert "write-audit-publish" in loaded.warnings[0] and "physical_table_naming_convention" in loaded.warnings[1]


def test_model_defaults_on_destructive_change_ignore_loads_with_a_warning_and_sets_nothing(tmp_path):
    loaded = load_config(write(tmp_path, "model_defaults:\n  dialect: spark\n  on_destructive_change: IGNORE\n"))
    assert loaded.config.model_defaults.on_destructive_change is None  # each kind's own applies
    assert any("config.yaml:3" in w and "'ignore' is not supported" in w for w in loaded.warnings), loaded.warnings


def test_model_defaults_cron_tz_is_read(tmp_path):
    loaded = load_config(write(tmp_path, "model_defaults:\n  dialect: spark\n  cron_tz: Europe/Berlin\n"))
    assert loaded.config.model_defaults.cron_tz == "Europe/Berlin"
    assert not any("cron_tz" in warning for warning in loaded.warnings)


def test_preview_days_is_read(tmp_path):
    assert ProjectConfig().preview_days == 1
    assert load_config(write(tmp_path, "preview_days: 3\n")).config.preview_days == 3


def test_plan_include_unmodified_is_read_and_other_plan_keys_are_warnings(tmp_path):
    assert ProjectConfig().plan.include_unmodified is False  # SQLMesh's default
    loaded = load_config(write(tmp_path, "plan:\n  include_unmodified: true\n  enable_preview: false\n"))
    assert loaded.config.plan.include_unmodified is True
    assert any("plan.enable_preview" in w and "config.yaml:3" in w for w in loaded.warnings), loaded.warnings


def test_gateways_of_other_engines_are_left_out_with_a_warning(tmp_path):
    text = ("gateways:\n  duck:\n    connection:\n      type: duckdb\n  spark:\n    connection:\n      type: spark\n"
            "      master: local[1]\ndefault_gateway: duck\nmodel_defaults: {dialect: spark}\n")
    loaded = load_config(write(tmp_path, text))

    assert list(loaded.config.gateways) == ["spark"] and loaded.config.connection.master == "local[1]"
    assert loaded.warnings == (
        "config.yaml:3: gateway 'duck' connects to duckdb, not Spark; left out",
        "config.yaml:1: default_gateway 'duck' is not a Spark gateway; 'spark' is used",
    )


def test_variables_may_be_lists_and_mappings(tmp_path):
    text = "variables:\n  regions: [eu, us]\n  limits: {eu: 1, us: 2}\n  day: 2024-01-31\n"
    assert load_config(write(tmp_path, text)).config.variables == {
        "regions": ["eu", "us"], "limits": {"eu": 1, "us": 2}, "day": "2024-01-31",
    }  # fmt: skip


def test_the_projects_dotenv_is_loaded_before_the_config_reads_the_environment(tmp_path, monkeypatch):
    # As SQLMesh loads <project>/.env (a user's project kept its credentials and region there).
    monkeypatch.setenv("SHOP_REGION", "us")  # .env wins, as SQLMesh's override=True
    monkeypatch.setenv("SHOP_NAME", "")  # so that the test puts both back as they were
    (tmp_path / ".env").write_text("# the shop\nexport SHOP_REGION=eu\nSHOP_NAME='north shop'\n")
    (tmp_path / "config.yaml").write_text(
        "variables:\n  region: \"{{ env_var('SHOP_REGION') }}\"\n  name: \"{{ env_var('SHOP_NAME') }}\"\n")
    assert load_config(tmp_path).config.variables == {"region": "eu", "name": "north shop"}
