"""config.yaml is a Jinja template, rendered before YAML reads it, as SQLMesh renders it (sqlmesh/utils/yaml.py)."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config.loader import load_config

_FAST = "{% if env_var('SM_FAST', 'true').lower() in ('true', '1', 'yes') %}2{% else %}1{% endif %}"


def _variables(tmp_path: Path, text: str) -> dict[str, object]:
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n" + text)
    return load_config(tmp_path).config.variables


def _error(tmp_path: Path, text: str) -> ConfigError:
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    return caught.value


@pytest.mark.parametrize(("value", "expected"), [(None, 2), ("YES", 2), ("no", 1)])
def test_an_if_block_with_a_string_method(tmp_path, monkeypatch, value, expected):
    # The project this comes from (KennispuntTwente/SQLMESH_2_GGM) did not load at all.
    if value is None:
        monkeypatch.delenv("SM_FAST", raising=False)
    else:
        monkeypatch.setenv("SM_FAST", value)
    assert _variables(tmp_path, f"variables:\n  workers: {_FAST}\n") == {"workers": expected}


def test_filters_comments_var_and_user(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_PORT", "5433")
    monkeypatch.setenv("SM_SECRET", "aGVsbG8=")
    monkeypatch.delenv("SM_UNSET", raising=False)
    text = (
        "variables:  {# Jinja comments are dropped #}\n"
        "  port: {{ env_var('SM_PORT') | int + 1 }}\n"
        "  secret: {{ env_var('SM_SECRET') | b64decode }}\n"
        "  fallback: {{ env_var('SM_UNSET') | default('d') }}\n"
        "  tested: {% if env_var('SM_UNSET') %}set{% else %}unset{% endif %}\n"
        "  region: {{ var('region', 'eu') }}\n"
        "  who: {{ user() }}\n"
    )
    assert _variables(tmp_path, text) == {
        "port": 5434, "secret": "hello", "fallback": "d", "tested": "unset", "region": "eu", "who": getpass.getuser(),
    }


def test_blocks_over_lines_and_loops(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_ENV", "prod")
    text = (
        "variables:\n"
        "{% if env_var('SM_ENV') == 'prod' %}\n"
        "  schema: analytics\n"
        "{% else %}\n"
        "  schema: dev\n"
        "{% endif %}\n"
        "  regions:\n"
        "{% for region in ['eu', 'us'] %}\n"
        "    - {{ region }}\n"
        "{% endfor %}\n"
    )
    assert _variables(tmp_path, text) == {"schema": "analytics", "regions": ["eu", "us"]}


def test_a_jinja_syntax_error_names_the_line(tmp_path):
    error = _error(tmp_path, "model_defaults:\n  dialect: spark\nvariables:\n  a: {% if env_var('X', 'a') == 'a' %}1\n")
    assert error.path.name == "config.yaml"
    assert error.line == 4
    assert "invalid Jinja" in error.message and "endif" in error.message
    assert error.snippet == "a: {% if env_var('X', 'a') == 'a' %}1"
    assert "rendered as a Jinja template" in error.hint
    assert error.exit_code == 2


def test_an_unclosed_expression_names_its_line(tmp_path):
    error = _error(tmp_path, "model_defaults:\n  dialect: spark\nvariables:\n  a: {{ env_var('X', 'a') \n  b: 1\n")
    assert "invalid Jinja" in error.message
    assert error.line in (4, 5)


def test_a_failing_expression_names_its_line(tmp_path, monkeypatch):
    monkeypatch.delenv("SM_UNSET", raising=False)
    error = _error(tmp_path, "model_defaults:\n  dialect: spark\nvariables:\n  a: {{ env_var('SM_UNSET').lower() }}\n")
    assert error.line == 4
    assert "Jinja rendering failed" in error.message
    assert "env_var('SM_UNSET').lower()" in (error.snippet or "")


def test_an_unset_variable_written_into_the_yaml_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("SM_UNSET", raising=False)
    error = _error(tmp_path, "model_defaults:\n  dialect: spark\nvariables:\n  a: 1\n  b: {{ env_var('SM_UNSET') }}\n")
    assert (error.line, error.path.name) == (5, "config.yaml")
    assert "SM_UNSET is not set" in error.message and "env_var('SM_UNSET', 'value')" in error.hint


def test_lines_stay_right_after_a_one_line_block(tmp_path):
    error = _error(tmp_path, f"variables:\n  a: {_FAST}\nmodel_defaults:\n  dialect: spark\n  crn: '@daily'\n")
    assert error.line == 5 and "unknown key 'crn'" in error.message
    assert "rendered by Jinja" not in error.message


def test_lines_of_a_rendered_text_that_moved_say_so(tmp_path):
    text = "model_defaults:\n  dialect: spark\n{% if true\n   %}\n  crn: '@daily'\n{% endif %}\n"
    error = _error(tmp_path, text)
    assert "unknown key 'crn'" in error.message
    assert "as rendered by Jinja" in error.message
    assert error.snippet == "  crn: '@daily'"


def test_the_personal_configuration_is_rendered_too(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("variables:\n  tier: {{ env_var('SM_TIER', 'gold') | upper }}\n")
    monkeypatch.setenv("SQLMESH_HOME", str(home))
    monkeypatch.delenv("SM_TIER", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    assert load_config(project).config.variables == {"tier": "GOLD"}
