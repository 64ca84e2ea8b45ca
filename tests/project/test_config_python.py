"""config.py written for SQLMesh, read into the same typed config as config.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config.loader import load_config

FIXTURE = Path(__file__).parent / "fixtures" / "sqlmesh_python"
IMPORTS = "from sqlmesh.core.config import *\n"


def _project(tmp_path: Path, config_py: str, config_yaml: str | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.py").write_text(IMPORTS + config_py)
    if config_yaml is not None:
        (tmp_path / "config.yaml").write_text(config_yaml)
    return tmp_path


def test_fixture_config_maps_to_the_typed_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQLMESH_HOME", str(FIXTURE.parent / "sqlmesh_home"))
    loaded = load_config(FIXTURE)
    config = loaded.config

    assert (config.model_defaults.dialect, config.model_defaults.start) == ("duckdb", "2024-01-01")
    assert list(config.gateways) == ["spark"] and config.default_gateway == "spark"
    assert config.connection.config == {"spark.sql.shuffle.partitions": "2"}
    assert config.variables == {"discount": 0.5}
    assert any("gateway 'duck' connects to duckdb" in warning for warning in loaded.warnings)
    assert any("'linter' is a SQLMesh setting" in warning for warning in loaded.warnings)


def test_only_non_spark_gateways_fall_back_to_the_default_spark(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SPARKMESH_SPARK_DEFAULT_MODE", raising=False)
    project = _project(tmp_path, "from sqlmesh.core.config import SnowflakeConnectionConfig\nconfig = Config(gateways={'sf': GatewayConfig(connection=SnowflakeConnectionConfig(user='u'),"
                                 " state_connection=PostgresConnectionConfig(host='db', database='state')),"
                                 " 'duck': GatewayConfig(connection=DuckDBConnectionConfig())})\n")
    loaded = load_config(project)

    assert (loaded.config.connection.mode, loaded.config.connection.master) == ("managed", "local[2]")
    assert any("no gateway connects to Spark" in warning for warning in loaded.warnings)


def test_state_connection_and_model_defaults(tmp_path: Path) -> None:
    project = _project(tmp_path, "config = Config(model_defaults=ModelDefaultsConfig(dialect='spark', kind='FULL', batch_size=3),\n"
                                 "    state_connection=PostgresConnectionConfig(host='db', port=5432, user='u', password='p', database='s'),\n"
                                 "    environment_ttl='in 2 weeks', before_all=['SELECT 1'])\n")
    config = load_config(project).config

    assert config.model_defaults.batch_size == 3
    assert config.state.type == "postgres" and config.state.url == "postgresql+psycopg2://u:p@db:5432/s"
    assert config.environment_ttl == "in 2 weeks"
    assert config.before_all == ("SELECT 1",)


def test_plan_config_include_unmodified(tmp_path: Path) -> None:
    project = _project(tmp_path, "config = Config(model_defaults=ModelDefaultsConfig(dialect='spark'),\n"
                                 "    plan=PlanConfig(include_unmodified=True, enable_preview=False))\n")
    loaded = load_config(project)

    assert loaded.config.plan.include_unmodified is True
    assert any("plan.enable_preview" in warning for warning in loaded.warnings)


def test_config_py_overrides_config_yaml(tmp_path: Path) -> None:
    project = _project(tmp_path, "config = Config(variables={'a': 2})\n", "variables:\n  a: 1\n  b: 1\nmodel_defaults:\n  dialect: duckdb\n")
    loaded = load_config(project)

    assert loaded.config.variables == {"a": 2} and loaded.config.model_defaults.dialect == "duckdb"
    assert any("config.py's settings override" in warning for warning in loaded.warnings)


@pytest.mark.parametrize(
    ("config_py", "line", "message"),
    [
        ("x = 1\n", None, "config.py must bind 'config' to a Config(...) object"),
        ("config = {'gateways': {}}\n", None, "not dict"),
        ("\n\nconfig = Config(model_defaults=ModelDefaultsConfig(cron='every day'))\n", 4, "invalid cron 'every day'"),
        ("config = Config(modle_defaults=ModelDefaultsConfig())\n", 2, "unknown key 'modle_defaults'"),
        ("import os\nconfig = Config(variables={'a': os.environ['NO_SUCH_VARIABLE_13']})\n", 3, "raised KeyError"),
        ("config = Config(\n", 2, "syntax error"),
        ("from sqlmesh.core.engine_adapter import X\n", 2, "not part of the SQLMesh API"),
    ],
)
def test_bad_config_py_is_a_clear_error(tmp_path: Path, config_py: str, line: int | None, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(_project(tmp_path, config_py))
    assert message in str(error.value)
    assert error.value.path == tmp_path / "config.py" and error.value.line == line


def test_a_syntax_error_in_an_imported_helper_is_reported_at_the_import(tmp_path: Path) -> None:
    (tmp_path / "settings_helper_13.py").write_text("def broken(:\n")
    with pytest.raises(ConfigError) as error:
        load_config(_project(tmp_path, "import settings_helper_13\n"))
    assert "running config.py raised SyntaxError" in str(error.value) and error.value.line == 2


def _overlay(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text)


def test_a_spark_gateway_from_the_personal_overlay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQLMESH_HOME", str(tmp_path / "home"))
    _overlay(tmp_path / "home", "gateways:\n  cluster:\n    connection:\n      type: spark\n      master: local[1]\n"
                                "default_gateway: cluster\n")
    project = _project(tmp_path / "p", "config = Config(gateways={'duck': GatewayConfig(connection=DuckDBConnectionConfig())},"
                                       " default_gateway='duck')\n")
    loaded = load_config(project)

    assert loaded.config.default_gateway == "cluster" and loaded.config.connection.master == "local[1]"
    assert any("gateway 'duck' connects to duckdb" in warning for warning in loaded.warnings)


def test_sqlmesh_environment_variables_set_nested_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQLMESH_HOME", str(tmp_path / "no_home"))
    monkeypatch.setenv("SQLMESH__GATEWAYS__SPARK__CONNECTION__TYPE", "spark")
    monkeypatch.setenv("SQLMESH__GATEWAYS__SPARK__CONNECTION__CONNECT_PORT", "15099")
    monkeypatch.setenv("SQLMESH__VARIABLES__LIMIT", "3")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "config.yaml").write_text("gateways:\n  duck:\n    connection:\n      type: duckdb\nvariables:\n  a: 1\n")
    loaded = load_config(tmp_path / "p", gateway="spark")

    assert loaded.config.connection.connect_port == 15099 and loaded.config.default_gateway == "spark"
    assert loaded.config.variables == {"a": 1, "limit": 3}


def test_an_error_names_the_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQLMESH_HOME", str(tmp_path / "no_home"))
    monkeypatch.setenv("SQLMESH__MODEL_DEFAULTS__CRON", "every day")
    (tmp_path / "p").mkdir()
    with pytest.raises(ConfigError, match="with the overrides of SQLMESH__MODEL_DEFAULTS__CRON"):
        load_config(tmp_path / "p")


def test_an_unknown_gateway_selection_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    with pytest.raises(ConfigError, match="gateway 'nope' is not among the Spark gateways"):
        load_config(tmp_path, gateway="nope")


def test_sqlmesh_settings_without_use_here_are_reported_as_ignored(tmp_path: Path) -> None:
    project = _project(tmp_path, (
        "from sqlmesh.core.config import AirflowSchedulerConfig, CategorizerConfig\n"
        "from sqlmesh.core.notification_target import SlackWebhookNotificationTarget\n"
        "from sqlmesh.core.user import User, UserRole\n"
        "config = Config(default_connection=DuckDBConnectionConfig(),\n"
        "    auto_categorize_changes=CategorizerConfig(sql=AutoCategorizationMode.SEMI),\n"
        "    default_scheduler=AirflowSchedulerConfig(),\n"
        "    gateways=GatewayConfig(connection=SparkConnectionConfig(config_dir='conf', config={'spark.a': 'b'})),\n"
        "    users=[User(username='admin', roles=[UserRole.REQUIRED_APPROVER])],\n"
        "    notification_targets=[SlackWebhookNotificationTarget(notify_on=['apply_start'], url=None)])\n"
    ))  # fmt: skip
    loaded = load_config(project)

    assert loaded.config.connection.config == {"spark.a": "b"}  # the one unnamed gateway
    ignored = " ".join(loaded.warnings)
    for key in ("default_connection", "auto_categorize_changes", "default_scheduler", "users", "notification_targets",
                "connection.config_dir"):
        assert key in ignored


def test_a_gateways_model_defaults_and_sqlmeshs_change_policy_enums(tmp_path: Path) -> None:
    project = _project(tmp_path, (
        "from sqlmesh.core.model.kind import OnAdditiveChange, OnDestructiveChange\n"
        "config = Config(\n"
        "    gateways={'spark': GatewayConfig(connection=SparkConnectionConfig(wap_enabled=True),\n"
        "                                     model_defaults=ModelDefaultsConfig(on_destructive_change=OnDestructiveChange.WARN))},\n"
        "    model_defaults=ModelDefaultsConfig(dialect='spark', on_destructive_change='allow',\n"
        "                                       on_additive_change=OnAdditiveChange.IGNORE, batch_concurrency=2),\n"
        ")\n"
    ))
    loaded = load_config(project)
    defaults = loaded.config.model_defaults
    assert (defaults.on_destructive_change, defaults.on_additive_change, defaults.batch_concurrency) == ("warn", "ignore", 2)
    assert any("wap_enabled" in warning for warning in loaded.warnings)
