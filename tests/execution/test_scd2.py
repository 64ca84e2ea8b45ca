"""SCD type 2 kinds on real Spark: a customer dimension changing over three daily runs, through plan + apply.

One project holds six history models over the same source table, so the three runs cover both kinds with and
without ``invalidate_hard_deletes``, and with each kind's own start of a key's first version (Spark tests are
slow: few runs, many assertions). As in SQLMesh, a key's first version is valid from 1970-01-01 (BY_TIME always,
BY_COLUMN in the first load) unless ``updated_at_as_valid_from`` / ``execution_time_as_valid_from``.

Run 1 (2024-01-02): keys 1 and 2 appear.
Run 2 (2024-01-03): key 1 changes name and updated_at, key 3 appears.
Run 3 (2024-01-04): key 2 is deleted; key 3 changes name without a newer updated_at (BY_TIME ignores that).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.cli.plan_view import model_line
from dagster_sparkmesh.engine.scd2 import history_columns, merge_history
from dagster_sparkmesh.model.kinds import ScdType2ByTimeKind
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.state.store import open_state_store

D1, D2, D3 = datetime(2024, 1, 2), datetime(2024, 1, 3), datetime(2024, 1, 4)
T_A, T_B = datetime(2024, 1, 1, 10), datetime(2024, 1, 2, 9)
T_C = datetime(2024, 1, 2, 11)
EPOCH = datetime(1970, 1, 1)

SOURCES = {
    D1: [(1, "ann", T_A), (2, "bob", T_A)],
    D2: [(1, "anna", T_B), (2, "bob", T_A), (3, "cy", T_C)],
    D3: [(1, "anna", T_B), (3, "cyd", T_C)],
}

MODELS = {
    "by_time": "SCD_TYPE_2_BY_TIME (unique_key id)",
    "by_time_deletes": "SCD_TYPE_2_BY_TIME (unique_key id, invalidate_hard_deletes true)",
    "by_column": "SCD_TYPE_2_BY_COLUMN (unique_key id, columns [name])",
    "by_column_deletes": (
        "SCD_TYPE_2_BY_COLUMN (unique_key id, columns *, invalidate_hard_deletes true, "
        "valid_from_name starts, valid_to_name ends)"
    ),
    "by_time_updated": "SCD_TYPE_2_BY_TIME (unique_key id, updated_at_as_valid_from true)",
    "by_column_executed": "SCD_TYPE_2_BY_COLUMN (unique_key id, columns [name], execution_time_as_valid_from true)",
}

EXPECTED_BY_TIME = [
    (1, "ann", EPOCH, T_B),
    (1, "anna", T_B, None),
    (2, "bob", EPOCH, None),
    (3, "cy", EPOCH, None),
]
EXPECTED_BY_COLUMN = [
    (1, "ann", EPOCH, D2),
    (1, "anna", D2, None),
    (2, "bob", EPOCH, None),
    (3, "cy", D2, D3),  # a new key after the first load: from the execution time
    (3, "cyd", D3, None),
]
FIRST_VERSIONS_FROM_THEIR_TIME = {(1, "ann"): (T_A, D1), (2, "bob"): (T_A, D1), (3, "cy"): (T_C, D2)}


def _write_project(root: Path) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: 2024-01-01\n  cron: '@daily'\n")
    (root / "external_models.yaml").write_text(
        "- name: src.customers\n  columns:\n    id: INT\n    name: STRING\n    updated_at: TIMESTAMP\n"
    )
    for name, kind in MODELS.items():
        (root / "models" / f"{name}.sql").write_text(
            f"MODEL (name dim.{name}, kind {kind});\nSELECT id, name, updated_at FROM src.customers\n"
        )
    return root


def _load_source(spark, rows) -> None:
    spark.sql("CREATE SCHEMA IF NOT EXISTS src")
    frame = spark.createDataFrame(rows, "id INT, name STRING, updated_at TIMESTAMP")
    frame.write.mode("overwrite").format("parquet").saveAsTable("src.customers")


def _history(spark, view: str, valid_from: str = "valid_from", valid_to: str = "valid_to") -> list[tuple]:
    query = f"SELECT id, name, {valid_from}, {valid_to} FROM {view} ORDER BY id, {valid_from}"
    return [tuple(row) for row in spark.sql(query).collect()]


@pytest.fixture
def run_on(engine, tmp_path, clean_catalog):
    project_dir = _write_project(tmp_path / "scd")
    stores = []

    def run(day: datetime) -> ExecutionContext:
        store = open_state_store(None, project_dir)
        stores.append(store)
        ctx = ExecutionContext(
            project=load_project(project_dir),
            state=store,
            environment="prod",
            engine_factory=lambda: engine,
            clock=lambda: day,
        )
        run.applied = apply_plan(ctx, plan_for(ctx))  # the last run's results
        return ctx

    yield run
    for store in stores:
        store.close()


def test_history_over_three_runs_for_both_kinds(spark, engine, run_on):
    for day, rows in SOURCES.items():
        _load_source(spark, rows)
        ctx = run_on(day)

    deleted_key_closed = (2, "bob", EPOCH, D3)
    assert _history(spark, "dim.by_time") == EXPECTED_BY_TIME
    assert _history(spark, "dim.by_time_deletes") == [
        row if row[0] != 2 else (2, "bob", EPOCH, D3) for row in EXPECTED_BY_TIME
    ]
    by_time_own, by_column_own = _first_versions_from_their_time(0), _first_versions_from_their_time(1)
    assert _history(spark, "dim.by_time_updated") == [by_time_own(row) for row in EXPECTED_BY_TIME]
    assert _history(spark, "dim.by_column_executed") == [by_column_own(row) for row in EXPECTED_BY_COLUMN]
    assert _history(spark, "dim.by_column") == EXPECTED_BY_COLUMN
    assert _history(spark, "dim.by_column_deletes", "starts", "ends") == [
        row if row[0] != 2 else deleted_key_closed for row in EXPECTED_BY_COLUMN
    ]
    # The tracked-but-unchanged columns travel with each version.
    assert spark.sql("SELECT updated_at FROM dim.by_column WHERE name = 'cyd'").collect()[0][0] == T_C

    # Each run recorded the days it merged.
    intervals = ctx.state.get_intervals("dim.by_time", _version(ctx, "dim.by_time"))
    assert (intervals[0].start, intervals[-1].end) == (datetime(2024, 1, 1), D3)

    # Merging the last run's source again changes nothing (a retried merge is idempotent).
    model = ctx.project.models["dim.by_column_deletes"]
    table = physical_table(model.name, _version(ctx, model.name))
    before = _history(spark, table, "starts", "ends")
    merge_history(engine, table, model, "SELECT id, name, updated_at FROM src.customers", D3)
    assert _history(spark, table, "starts", "ends") == before


def _first_versions_from_their_time(which: int):
    """The expected row with its first version starting at its updated_at (0) or its first run (1)."""

    def row(expected: tuple) -> tuple:
        own = FIRST_VERSIONS_FROM_THEIR_TIME.get(expected[:2])
        return expected if own is None or expected[2] != EPOCH else (*expected[:2], own[which], expected[3])

    return row


def _version(ctx: ExecutionContext, name: str) -> str:
    return next(s.version for s in ctx.state.get_environment("prod").snapshots if s.name == name)


def test_a_repeated_key_keeps_one_row_the_same_every_run_with_a_warning(spark, run_on):
    # SQLMesh keeps one row of a repeated key (DISTINCT ON, unspecified which) and runs; a dlt-loaded source repeats
    # an unchanged row once per load. Here: BY_TIME keeps the latest updated_at, BY_COLUMN the row whose other
    # columns sort first; a unique key (2) is merged as ever.
    _load_source(spark, [(1, "bea", T_A), (1, "ann", T_B), (1, "ann", T_A), (2, "bob", T_A)])
    run_on(D1)
    assert _history(spark, "dim.by_time") == [(1, "ann", EPOCH, None), (2, "bob", EPOCH, None)]
    assert spark.sql("SELECT updated_at FROM dim.by_time WHERE id = 1").collect()[0][0] == T_B
    assert _history(spark, "dim.by_column") == [(1, "ann", EPOCH, None), (2, "bob", EPOCH, None)]
    assert spark.sql("SELECT updated_at FROM dim.by_column WHERE id = 1").collect()[0][0] == T_A
    # The warning travels with the model's result: the CLI prints it under the model, a Dagster step logs it.
    warnings = {result.model: result.warnings for result in run_on.applied.models}
    [by_column] = warnings["dim.by_column"]
    assert by_column.startswith("dim.by_column (") and "several rows for unique_key id, e.g. (1,)" in by_column
    assert "the row whose other columns sort first" in by_column and "by_column.sql:1)" in by_column
    [by_time] = warnings["dim.by_time"]
    assert by_time.startswith("dim.by_time (") and "the latest updated_at, then" in by_time
    assert "several rows" in model_line(next(r for r in run_on.applied.models if r.model == "dim.by_time")).plain

    # The next run, the rows in another order, keeps the same rows: nothing changes.
    _load_source(spark, [(2, "bob", T_A), (1, "ann", T_A), (1, "ann", T_B), (1, "bea", T_A)])
    run_on(D2)
    assert _history(spark, "dim.by_time") == [(1, "ann", EPOCH, None), (2, "bob", EPOCH, None)]
    assert _history(spark, "dim.by_column") == [(1, "ann", EPOCH, None), (2, "bob", EPOCH, None)]


@pytest.mark.parametrize(("held", "stored"), [
    ((), "timestamp"),  # a new history: as SQLMesh 0.236.4 creates it
    ((("updated_at", "timestamp"),), "timestamp"),
    ((("updated_at", "date"),), "date"),  # a history an earlier release wrote keeps the query's type
])
def test_a_date_updated_at_is_kept_as_the_validity_type_unless_the_table_holds_another(held, stored):
    """What the forward-only check compares the query with (``stored_columns``) and what the write casts to
    (``history_columns``) agree with the table: neither kind of table sees a change of column type."""
    kind = ScdType2ByTimeKind(unique_key=("id",))
    query = [("id", "int"), ("updated_at", "date")]
    assert kind.stored_columns(query, (("id", "int"), *held)) == [("id", "int"), ("updated_at", stored)]
    if held:
        table = [("id", "int"), *held, ("valid_from", "timestamp"), ("valid_to", "timestamp")]
        assert history_columns(kind, table) == (["id", "updated_at"], stored)
