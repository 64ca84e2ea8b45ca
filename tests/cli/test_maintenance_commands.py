"""lint / format / check-intervals / destroy / migrate through click; state on SQLite and PostgreSQL, data on Spark."""

from __future__ import annotations

import importlib.util
import uuid
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from dagster_sparkmesh.cli.maintenance_commands import migrate_state
from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.environment_intervals import environment_check_plan
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state import migrations
from dagster_sparkmesh.state.connection import create_state_engine, write_transaction
from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

POSTGRES_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
NOW = datetime(2024, 1, 5, 6)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return harness.write_tiny_project(tmp_path / "tiny")


@pytest.fixture(params=["sqlite", "postgres"])
def state_at(request, tiny: Path):
    """Opens the tiny project's state on SQLite (its own file) or PostgreSQL (a schema of its own)."""
    schema = None if request.param == "sqlite" else f"maint_{uuid.uuid4().hex[:12]}"
    url = None if schema is None else POSTGRES_URL
    yield lambda: open_state_store(url, tiny, schema=schema), url, schema
    if schema is not None:
        engine = sa.create_engine(POSTGRES_URL)
        with engine.begin() as connection:
            connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        engine.dispose()


def record_plan(project_path: Path, state, done: dict[str, list[Interval]], environment: str = "prod") -> None:
    """What applying a plan leaves in the state, without the data: snapshots, some intervals, the promotion."""
    plan = build_plan(load_project(project_path, use_cache=False), state, environment, execution_time=NOW)
    state.push_snapshots(plan.new_snapshots)
    for name, intervals in done.items():
        state.add_intervals(name, plan.version_of(name), intervals)
    state.promote_environment(plan.environment_after, plan.previous_plan_id)


def days(first: int, last: int) -> list[Interval]:
    return [Interval(start=datetime(2024, 1, d), end=datetime(2024, 1, d + 1)) for d in range(first, last + 1)]


# lint ------------------------------------------------------------------------------------------------------------


def test_lint_passes_on_a_clean_project_and_fails_with_locations(tiny):
    clean, factory = invoke(tiny, ["lint"])
    assert clean.exit_code == 0, clean.output
    assert "No lint violations" in clean.output
    assert factory.calls == 0

    (tiny / "models" / "daily.sql").write_text(
        "MODEL (name shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));\n"
        "SELECT ds, SUM(amount) AS total FROM raw.events GROUP BY ds\n"
    )
    failed, _ = invoke(tiny, ["lint"])
    assert failed.exit_code == 1
    assert "models/daily.sql:2:1: [time_filter] shop.daily" in failed.output
    assert "1 lint violation" in failed.output


def test_lint_unknown_rule_is_a_user_error(tiny):
    result, _ = invoke(tiny, ["lint", "--rule", "star"])
    assert result.exit_code == 2
    assert "unknown lint rule 'star'" in result.output


# format ----------------------------------------------------------------------------------------------------------


def test_format_check_then_format_keeps_headers_and_fingerprints(tiny):
    before = load_project(tiny, use_cache=False)
    header = "MODEL (\n  name shop.daily,\n  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),\n  grain ds\n);"
    assert (tiny / "models" / "daily.sql").read_text().startswith("\n" + header)

    check, _ = invoke(tiny, ["format", "--check"])
    assert check.exit_code == 1
    assert "would reformat models/daily.sql" in check.output
    assert (tiny / "models" / "daily.sql").read_text().startswith("\n" + header)

    formatted, _ = invoke(tiny, ["format"])
    assert formatted.exit_code == 0, formatted.output
    text = (tiny / "models" / "daily.sql").read_text()
    assert text.startswith("\n" + header + "\n\nSELECT\n  ds,\n")
    assert "BETWEEN @start_ds AND @end_ds" in text
    after = load_project(tiny, use_cache=False)
    assert {n: m.fingerprint for n, m in after.models.items()} == {n: m.fingerprint for n, m in before.models.items()}

    again, _ = invoke(tiny, ["format", "--check"])
    assert again.exit_code == 0
    assert "0 changed, 2 already formatted" in again.output


# check-intervals -------------------------------------------------------------------------------------------------


def test_check_intervals_lists_what_the_environment_lacks(tiny, state_at):
    open_state, _, _ = state_at
    with open_state() as state:
        record_plan(tiny, state, {"raw.events": days(1, 4), "shop.daily": days(1, 2)})
        plan = environment_check_plan(state, "PROD", config=load_project(tiny).config, project_path=tiny, execution_time=NOW)
    assert plan.missing_intervals == {"shop.daily": tuple(days(3, 4))}
    assert not plan.has_changes and not plan.new_snapshots


def test_check_intervals_ignores_edits_to_the_files(tiny, state_at):
    open_state, _, _ = state_at
    with open_state() as state:
        record_plan(tiny, state, {"raw.events": days(1, 4), "shop.daily": days(1, 4)})
        # An edit that is not planned yet does not make prod incomplete.
        daily = tiny / "models" / "daily.sql"
        daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(*) AS orders, 1 AS extra"))
        plan = environment_check_plan(state, "prod", config=load_project(tiny).config, project_path=tiny, execution_time=NOW)
        assert plan.missing_intervals == {}
        with pytest.raises(PlanError, match="no environment named 'dev'"):
            environment_check_plan(state, "dev", config=load_project(tiny).config, project_path=tiny, execution_time=NOW)


def test_check_intervals_command(tiny):
    with open_state_store(None, tiny) as state:
        record_plan(tiny, state, {"raw.events": days(1, 4), "shop.daily": [*days(1, 1), *days(3, 3)]})
    result, factory = invoke(tiny, ["check-intervals", "prod", "--execution-time", "2024-01-05 06:00"])
    assert result.exit_code == 0, result.output
    assert "shop.daily: 2 missing" in result.output
    assert "2024-01-02 00:00 - 2024-01-03 00:00" in result.output
    assert "2024-01-04 00:00 - 2024-01-05 00:00" in result.output
    assert "raw.events" not in result.output
    assert factory.calls == 0

    unknown, _ = invoke(tiny, ["check-intervals", "dev"])
    assert unknown.exit_code == 2 and "no environment named 'dev'" in unknown.output


def test_check_intervals_names_models_computed_from_incomplete_parents(tiny):
    """shop.daily holds 01-03 and 01-04 although raw.events never had them: complete on paper only."""
    with open_state_store(None, tiny) as state:
        record_plan(tiny, state, {"raw.events": days(1, 2), "shop.daily": days(1, 4)})
    result, _ = invoke(tiny, ["check-intervals", "prod", "--execution-time", "2024-01-05 06:00"])
    assert result.exit_code == 0, result.output
    assert "shop.daily: computed from incomplete parents (raw.events lacks [2024-01-03, 2024-01-05 06:00))" in result.output
    assert "every interval is complete" not in result.output


# migrate ---------------------------------------------------------------------------------------------------------


def _v1_state(url: str | None, project: Path, schema: str | None) -> None:
    """A state store as the first release left it: schema v1 only."""
    from dagster_sparkmesh.state.connection import ensure_schema
    from dagster_sparkmesh.state.store import default_state_url

    engine = create_state_engine(url or default_state_url(project), schema)
    with write_transaction(engine) as connection:
        ensure_schema(connection, schema)
        migrations.MIGRATIONS[0](connection)
        connection.execute(
            sa.insert(migrations.schema.versions).values(
                id=1, schema_version=1, sqlglot_version="1.0.0", package_version="0.0.1", updated_at="2024-01-01T00:00:00.000000"
            )
        )
    engine.dispose()


def test_migrate_state_from_v1(tiny, state_at):
    _, url, schema = state_at
    _v1_state(url, tiny, schema)
    result = migrate_state(url, tiny, schema=schema)
    assert result.migrated
    assert (result.before.schema_version, result.after.schema_version) == (1, migrations.SCHEMA_VERSION)
    assert result.after.sqlglot_version == "1.0.0"  # fingerprints were not recomputed: the stamp says so
    assert not migrate_state(url, tiny, schema=schema).migrated


def test_migrate_command(tiny):
    _v1_state(None, tiny, None)
    first, _ = invoke(tiny, ["migrate"])
    second, factory = invoke(tiny, ["migrate"])
    assert first.exit_code == 0, first.output
    assert f"State schema migrated from v1 to v{migrations.SCHEMA_VERSION}" in first.output
    assert "computed with sqlglot 1.0.0" in first.output
    assert f"already at v{migrations.SCHEMA_VERSION}" in second.output
    assert factory.calls == 0


# destroy (real Spark) --------------------------------------------------------------------------------------------


def _databases(spark) -> set[str]:
    return {row[0] for row in spark.sql("SHOW DATABASES").collect()} - {"default"}


def test_destroy_asks_then_drops_everything_the_project_created(tiny, engine, spark, clean_catalog):
    window = ["--start", "2024-01-01", "--end", "2024-01-03"]
    assert invoke(tiny, ["plan", "prod", "--auto-apply", *window], engine)[0].exit_code == 0
    # Nothing changed in dev: without --include-unmodified it would have no views to destroy.
    assert invoke(tiny, ["plan", "dev", "--auto-apply", "--include-unmodified", *window], engine)[0].exit_code == 0
    spark.sql("CREATE TABLE shop.kept_by_user (id INT) USING parquet")
    assert {"shop", "shop__dev", "raw", "sparkmesh__shop", "sparkmesh__raw"} <= _databases(spark)

    declined, _ = invoke(tiny, ["destroy"], engine, input="n\n")
    assert "Nothing destroyed" in declined.output
    assert spark.sql("SELECT COUNT(*) FROM shop.daily").collect()[0][0] == 3

    result, _ = invoke(tiny, ["destroy"], engine, input="y\n")
    assert result.exit_code == 0, result.output
    assert "environments removed: dev, prod" in result.output or "environments removed: prod, dev" in result.output
    assert "schema shop kept" in result.output
    assert _databases(spark) == {"shop"}
    assert [row.tableName for row in spark.sql("SHOW TABLES IN shop").collect() if not row.isTemporary] == ["kept_by_user"]
    with open_state_store(None, tiny) as state:
        assert state.list_environments() == [] and state.all_snapshots() == []

    replanned, _ = invoke(tiny, ["plan", "prod", "--no-prompts", *window])
    assert "Added" in replanned.output  # the project starts from nothing again


# selectors in plan --restate-model ---------------------------------------------------------------------------------


def test_plan_restate_model_takes_selectors_and_reports_typos(tiny):
    typo, factory = invoke(tiny, ["plan", "--no-prompts", "--restate-model", "shop.dayly"])
    assert typo.exit_code == 2
    assert "no model matches 'shop.dayly'" in typo.output and "did you mean shop.daily" in typo.output
    assert factory.calls == 0
    shown, _ = invoke(tiny, ["plan", "--no-prompts", "--restate-model", "raw*+", "--start", "2024-01-01", "--end", "2024-01-02"])
    assert shown.exit_code == 0, shown.output
