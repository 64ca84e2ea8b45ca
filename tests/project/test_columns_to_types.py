"""``evaluator.columns_to_types`` in ``is_sql`` models (SQLMesh's sushi ``waiters.py`` pattern): the function builds
its projection from another model's columns, so it runs once the models it asks about are loaded."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest
from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.column_schema import ModelColumns
from dagster_sparkmesh.project.loader import load_project

FIXTURE = Path(__file__).parent / "fixtures" / "columns_to_types"
START, END = datetime(2024, 1, 1), datetime(2024, 1, 3)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "project", ignore=shutil.ignore_patterns(".sparkmesh")))


def test_an_is_sql_model_builds_its_projection_from_another_models_columns(project: Path) -> None:
    models = load_project(project, use_cache=False).models

    hosts = models["inn.hosts"]
    assert hosts.query == (
        "SELECT DISTINCT CAST(host_id AS INT), CAST(`date` AS DATE) FROM inn.bookings AS b "
        "WHERE `date` BETWEEN @start_ds AND @end_ds"
    )
    assert hosts.kind.name == "EMBEDDED" and hosts.owner == "ops" and hosts.source == "sql"
    assert hosts.depends_on == frozenset({"inn.bookings"})  # from the returned query, as for any SQL model
    # One is_sql model may ask about another: it is loaded in a later round.
    assert models["inn.busy_days"].depends_on == frozenset({"inn.hosts"})
    assert models["inn.host_nights"].depends_on == frozenset({"inn.hosts", "inn.bookings"})


def test_columns_are_the_declared_ones_or_those_sqlglot_derives(project: Path) -> None:
    loaded = load_project(project, use_cache=False)
    columns = ModelColumns(loaded.models, loaded.external_models, final=True)

    declared = columns.types("inn_raw.bookings")
    derived = columns.types("inn.bookings")

    assert declared is not None and declared["stay_date"] == exp.DataType.build("DATE")
    assert derived is not None and list(derived) == ["booking_id", "guest_id", "host_id", "date", "price", "nights"]
    assert derived["price"] == exp.DataType.build("DECIMAL(10, 2)") and derived["date"] == exp.DataType.build("DATE")
    assert columns.types("inn.nobody") is None


def test_an_unknown_model_is_an_error_at_the_line_asking_for_it(project: Path) -> None:
    hosts = project / "models" / "hosts.py"
    hosts.write_text(hosts.read_text().replace('columns_to_types("inn.bookings")', 'columns_to_types("inn.bookngs")'))
    asking = next(n for n, text in enumerate(hosts.read_text().splitlines(), 1) if "inn.bookngs" in text)

    with pytest.raises(ProjectError, match="there is no model or external model inn.bookngs") as raised:
        load_project(project, use_cache=False)

    assert raised.value.path == hosts.resolve() and raised.value.line == asking


def test_two_models_asking_for_each_others_columns_are_an_error_not_a_loop(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    for name, other in (("a", "b"), ("b", "a")):
        (tmp_path / "models" / f"{name}.py").write_text(
            "from sqlmesh import model\n\n\n"
            f"@model('db.{name}', is_sql=True)\ndef entrypoint(evaluator):\n"
            f"    return 'SELECT ' + ', '.join(evaluator.columns_to_types('db.{other}')) + ' FROM db.{other}'\n"
        )

    cycle = "is_sql models wait for each other.s columns: db.a asks for those of db.b, db.b asks for those of db.a"
    with pytest.raises(ProjectError, match=cycle):
        load_project(tmp_path, use_cache=False)


def test_plans_and_applies_on_spark(project: Path, spark, engine, clean_catalog) -> None:
    from dagster_sparkmesh.execution.apply import apply_plan
    from dagster_sparkmesh.execution.context import ExecutionContext
    from dagster_sparkmesh.execution.plans import plan_for
    from dagster_sparkmesh.state.store import open_state_store

    store = open_state_store(None, project)
    try:
        ctx = ExecutionContext(
            project=load_project(project), state=store, environment="prod",
            engine_factory=lambda: engine, clock=lambda: END,
        )  # fmt: skip
        apply_plan(ctx, plan_for(ctx, START, END))
    finally:
        store.close()

    query = "SELECT host_id, CAST(`date` AS STRING), nights FROM inn.host_nights"
    rows = sorted(tuple(row) for row in spark.sql(query).collect())
    assert rows == [(100, "2024-01-01", 3), (101, "2024-01-02", 4)]
    assert spark.sql("SELECT COUNT(*) FROM inn.busy_days").collect()[0][0] == 2
