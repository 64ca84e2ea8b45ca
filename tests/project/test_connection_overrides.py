"""SPARKMESH_SPARK_* environment variables point a project at another Spark without editing its files."""

from __future__ import annotations

import pytest

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config import ProjectConfig
from dagster_sparkmesh.project.config.loader import load_config
from dagster_sparkmesh.project.config.connection_overrides import apply_connection_overrides

CONFIG = """\
gateways:
  laptop:
    connection:
      type: spark
      master: local[4]
      config:
        spark.sql.shuffle.partitions: 8
        spark.executor.memory: 1g
  other:
    connection:
      type: spark
default_gateway: laptop
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    for name in ("SPARKMESH_SPARK_MODE", "SPARKMESH_SPARK_MASTER", "SPARKMESH_SPARK_REMOTE",
                 "SPARKMESH_SPARK_CONNECT_PORT", "SPARKMESH_SPARK_CONF", "SPARKMESH_SPARK_IDLE_TIMEOUT",
                 "SPARKMESH_SPARK_DEFAULT_MODE", "SPARKMESH_SPARK_CONCURRENT_TASKS"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "config.yaml").write_text(CONFIG)
    return tmp_path


def test_without_variables_the_file_decides(project):
    connection = load_config(project).config.connection
    # The default engine: the project's managed Connect server, stopped after 30 idle minutes.
    assert (connection.mode, connection.master, connection.remote) == ("managed", "local[4]", None)
    assert connection.idle_timeout == 1800


def test_idle_timeout_from_the_file_and_the_environment(project, monkeypatch):
    (project / "config.yaml").write_text(CONFIG.replace("      master: local[4]\n", "      master: local[4]\n      idle_timeout: 60\n"))
    assert load_config(project).config.connection.idle_timeout == 60
    monkeypatch.setenv("SPARKMESH_SPARK_IDLE_TIMEOUT", "0")
    assert load_config(project).config.connection.idle_timeout == 0
    monkeypatch.setenv("SPARKMESH_SPARK_IDLE_TIMEOUT", "10m")
    with pytest.raises(ConfigError, match="SPARKMESH_SPARK_IDLE_TIMEOUT"):
        load_config(project)


def test_concurrent_tasks_from_the_environment(project, monkeypatch):
    assert load_config(project).config.connection.workers == 4  # managed: the default
    monkeypatch.setenv("SPARKMESH_SPARK_CONCURRENT_TASKS", "1")
    assert load_config(project).config.connection.workers == 1
    monkeypatch.setenv("SPARKMESH_SPARK_CONCURRENT_TASKS", "0")
    with pytest.raises(ConfigError, match="SPARKMESH_SPARK_CONCURRENT_TASKS"):
        load_config(project)


def test_variables_replace_the_default_gateways_connection_fields(project, monkeypatch):
    monkeypatch.setenv("SPARKMESH_SPARK_MODE", "managed")
    monkeypatch.setenv("SPARKMESH_SPARK_MASTER", "spark://127.0.0.1:7077")
    monkeypatch.setenv("SPARKMESH_SPARK_CONNECT_PORT", "15123")
    monkeypatch.setenv("SPARKMESH_SPARK_CONF", '{"spark.executor.memory": "512m", "spark.dynamicAllocation.enabled": false}')
    config = load_config(project).config
    connection = config.connection
    assert (connection.mode, connection.master, connection.connect_port) == ("managed", "spark://127.0.0.1:7077", 15123)
    assert connection.config == {
        "spark.sql.shuffle.partitions": "8",  # kept from the file
        "spark.executor.memory": "512m",  # replaced
        "spark.dynamicAllocation.enabled": "false",  # added, as a Spark string
    }
    assert config.gateways["other"].connection.master == "local[2]"  # only the default gateway


def test_connect_url_from_the_environment(project, monkeypatch):
    monkeypatch.setenv("SPARKMESH_SPARK_MODE", "connect")
    monkeypatch.setenv("SPARKMESH_SPARK_REMOTE", "sc://spark-connect.internal:15002")
    connection = load_config(project).config.connection
    assert (connection.mode, connection.remote) == ("connect", "sc://spark-connect.internal:15002")


def test_empty_variables_are_unset():
    config = ProjectConfig()
    assert apply_connection_overrides(config, {"SPARKMESH_SPARK_MODE": " ", "SPARKMESH_SPARK_MASTER": ""}) is config


@pytest.mark.parametrize(
    ("variable", "value", "hint"),
    [
        ("SPARKMESH_SPARK_MODE", "cluster", "use one of local, managed, connect"),
        ("SPARKMESH_SPARK_REMOTE", "http://host:15002", "sc://host:15002"),
        ("SPARKMESH_SPARK_CONNECT_PORT", "70000", "between 1 and 65535"),
        ("SPARKMESH_SPARK_CONF", "spark.executor.memory=2g", "JSON object"),
        ("SPARKMESH_SPARK_CONF", '["spark.executor.memory"]', "JSON object"),
    ],
)
def test_a_bad_value_names_its_variable(project, monkeypatch, variable, value, hint):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as raised:
        load_config(project)
    assert f"environment variable {variable}" in raised.value.message
    assert f"{variable}={value}" in str(raised.value) and hint in raised.value.hint


def test_the_cli_reports_a_bad_variable_as_a_user_error(project):
    from click.testing import CliRunner

    from dagster_sparkmesh.cli.main import main

    result = CliRunner().invoke(main, ["-p", str(project), "info"], env={"SPARKMESH_SPARK_MODE": "cluster"})
    assert result.exit_code == 2
    assert "environment variable SPARKMESH_SPARK_MODE" in result.output and "SPARKMESH_SPARK_MODE=cluster" in result.output


def test_concurrent_tasks_is_how_many_models_compute_at_once(project):
    from dagster_sparkmesh.project.config import SparkConnection

    (project / "config.yaml").write_text(CONFIG.replace("      master: local[4]\n", "      master: local[4]\n      concurrent_tasks: 3\n"))
    assert load_config(project).config.connection.workers == 3
    assert SparkConnection(mode="managed").workers == 4  # round trips to a server overlap
    assert SparkConnection(mode="local").workers == 2


def test_a_machine_chooses_the_default_mode_and_a_configured_mode_wins(project, monkeypatch):
    monkeypatch.setenv("SPARKMESH_SPARK_DEFAULT_MODE", "local")
    assert load_config(project).config.connection.mode == "local"  # config.yaml sets none
    (project / "config.yaml").write_text(CONFIG.replace("      master: local[4]\n", "      mode: managed\n      master: local[4]\n"))
    assert load_config(project).config.connection.mode == "managed"
    monkeypatch.setenv("SPARKMESH_SPARK_DEFAULT_MODE", "cluster")
    with pytest.raises(ConfigError, match="SPARKMESH_SPARK_DEFAULT_MODE"):
        load_config(project)
