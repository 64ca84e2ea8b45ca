"""The click group: error handling, command registration, and the installed ``sparkmesh`` script."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from dagster_sparkmesh.cli import main
from dagster_sparkmesh.cli.main import SparkMeshGroup
from dagster_sparkmesh.cli.time_arguments import interval_from_options
from dagster_sparkmesh.errors import PlanError

SCRIPT = Path(sys.executable).parent / "sparkmesh"


def _group_with(command: click.Command) -> click.Group:
    # A fresh group, registered the way command modules register into ``main``.
    @click.group(cls=SparkMeshGroup)
    def group() -> None:
        pass

    group.add_command(command)
    return group


def test_a_sparkmesh_error_is_one_message_and_exit_code_2():
    @click.command()
    def fails() -> None:
        raise PlanError("cannot plan", path="models/a.sql", line=3, col=7, snippet="SELECT x", hint="do y")

    result = CliRunner().invoke(_group_with(fails), ["fails"])
    assert result.exit_code == 2
    assert result.output == "Error: models/a.sql:3:7: cannot plan\n    SELECT x\n  hint: do y\n"


def test_an_unexpected_exception_keeps_its_traceback_and_exit_code_1():
    @click.command()
    def bug() -> None:
        raise RuntimeError("a bug")

    result = CliRunner().invoke(_group_with(bug), ["bug"])
    assert result.exit_code == 1
    assert isinstance(result.exception, RuntimeError)


def test_main_registers_the_project_commands():
    assert {"info", "render", "dag", "clean"} <= set(main.commands)


def test_interval_options():
    assert interval_from_options("2024-01-01", "2024-01-31") == (datetime(2024, 1, 1), datetime(2024, 2, 1))
    assert interval_from_options("2024-01-01 05:00", "2024-01-01 06:00") == (
        datetime(2024, 1, 1, 5),
        datetime(2024, 1, 1, 6),
    )
    assert interval_from_options("2024-01-01T00:00:00+01:00", None) == (datetime(2023, 12, 31, 23), datetime(2024, 1, 1, 23))
    assert interval_from_options(None, None, today=date(2024, 3, 1)) == (datetime(2024, 2, 29), datetime(2024, 3, 1))
    with pytest.raises(click.BadParameter, match="before the start"):
        interval_from_options("2024-01-02", "2024-01-01 00:00")


def test_installed_script_exit_codes(shop_project: Path, broken_project: Path):
    broken = subprocess.run([str(SCRIPT), "-p", str(broken_project), "info"], capture_output=True, text=True, timeout=60)
    assert broken.returncode == 2
    assert "bad.sql:3" in broken.stderr
    assert "Traceback" not in broken.stderr + broken.stdout

    ok = subprocess.run([str(SCRIPT), "-p", str(shop_project), "info", "--json"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert set(json.loads(ok.stdout)["models"]) == {"shop.orders", "shop.items", "shop.daily_sales", "shop.top_items"}

    cleaned = subprocess.run([str(SCRIPT), "-p", str(broken_project), "clean"], capture_output=True, text=True, timeout=60)
    assert cleaned.returncode == 0, cleaned.stderr


def test_relative_times_read_as_sqlmesh_reads_them():
    from dagster_sparkmesh.cli.time_arguments import parse_time

    now = datetime(2024, 3, 10, 15, 30)
    assert parse_time("1 week ago", "--start", now=now) == datetime(2024, 3, 3, 15, 30)
    assert parse_time("yesterday", "--start", now=now) == datetime(2024, 3, 9)
    assert parse_time("2024-01-02", "--start", now=now) == datetime(2024, 1, 2)
    with pytest.raises(click.BadParameter, match="'sometime' is not a date or timestamp"):
        parse_time("sometime", "--start", now=now)


def test_gateway_option_selects_the_configs_gateway(tmp_path: Path):
    """`sparkmesh --gateway NAME` as `sqlmesh --gateway NAME`: the project runs on that gateway's connection."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "a.sql").write_text("MODEL (name s.a, kind FULL); SELECT 1 AS x")
    (tmp_path / "config.yaml").write_text(
        "gateways:\n"
        "  small:\n    connection:\n      type: spark\n      master: local[1]\n"
        "  big:\n    connection:\n      type: spark\n      master: local[2]\n"
        "default_gateway: small\n"
    )
    from dagster_sparkmesh.cli.context import CliContext

    chosen = CliContext(project_path=tmp_path, gateway="big").project()
    assert chosen.config.connection.master == "local[2]"
    assert CliContext(project_path=tmp_path).project().config.connection.master == "local[1]"
    result = CliRunner().invoke(main, ["-p", str(tmp_path), "--gateway", "nowhere", "info"])
    assert result.exit_code == 2 and "nowhere" in result.output


def test_a_date_past_what_datetime_holds_is_a_clear_error():
    with pytest.raises(click.BadParameter, match="past the last date"):
        interval_from_options("9999-12-31", None)
