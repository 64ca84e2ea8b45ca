"""SCD type 2 models keep their history across changes, as in SQLMesh, whose SCD type 2 kinds are forward-only and
never restated by default: a change of the model or of a parent reuses the history table, and the next run merges
the new query's rows into it. (Rebuilding would start the history again from the source's current rows: the past
versions no query can compute again would be lost.)

Checked against SQLMesh 0.236.4 on the same two models (DuckDB): after the parent's change SQLMesh's plan keeps
the history table (the child is forward-only), and its next run closes the old version and opens the new one.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.cli.sparkmesh_harness import invoke

pytestmark = pytest.mark.every_layout  # `./dev test` runs it again on Iceberg and Delta tables

SOURCE = """
MODEL (name s.src, kind FULL);
SELECT 1 AS id, '{value}' AS v, TIMESTAMP'2024-01-0{day} 00:00:00' AS updated_at
"""
HISTORY = "MODEL (name s.hist, kind SCD_TYPE_2_BY_TIME (unique_key id{options}));\nSELECT id, v, updated_at{more} FROM s.src\n"


def _project(folder: Path, table_format: str | None) -> Path:
    (folder / "models").mkdir(parents=True)
    written_format = f"  table_format: {table_format}\n" if table_format else ""
    (folder / "config.yaml").write_text(f"model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n{written_format}")
    _write(folder, value="a", day=1)
    return folder


def _write(project: Path, *, value: str, day: int, options: str = "", more: str = "") -> None:
    (project / "models" / "src.sql").write_text(SOURCE.format(value=value, day=day))
    (project / "models" / "hist.sql").write_text(HISTORY.format(options=options, more=more))


def _plan(project: Path, engine, end: str) -> None:
    result, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", end], engine)
    assert result.exit_code == 0, result.output


def _history(spark, columns: str = "v, valid_from, valid_to") -> list[tuple]:
    rows = spark.sql(f"SELECT {columns} FROM s.hist ORDER BY valid_from").collect()
    return [tuple(str(value) if value is not None else None for value in row) for row in rows]


def test_a_parents_change_and_the_models_own_keep_the_history(tmp_path, spark, engine, clean_catalog, served_table_format):
    project = _project(tmp_path / "p", served_table_format)
    _plan(project, engine, "2024-01-02")
    first = [("a", "1970-01-01 00:00:00", None)]
    assert _history(spark) == first

    _write(project, value="b", day=2)  # the parent changes (breaking): the history table stays and merges its rows
    _plan(project, engine, "2024-01-03")
    assert _history(spark) == [("a", "1970-01-01 00:00:00", "2024-01-02 00:00:00"), ("b", "2024-01-02 00:00:00", None)]

    # The model's own change that adds a column widens the table; the versions before have no value in it.
    _write(project, value="c", day=3, more=", upper(v) AS loud")
    _plan(project, engine, "2024-01-04")
    assert _history(spark, "v, loud, valid_to") == [
        ("a", None, "2024-01-02 00:00:00"), ("b", None, "2024-01-03 00:00:00"), ("c", "C", None),
    ]


def test_forward_only_false_rebuilds_the_history_from_the_current_rows(tmp_path, spark, engine, clean_catalog):
    project = _project(tmp_path / "p", None)
    _write(project, value="a", day=1, options=", forward_only false")
    _plan(project, engine, "2024-01-02")
    _write(project, value="b", day=2, options=", forward_only false")
    _plan(project, engine, "2024-01-03")
    assert _history(spark) == [("b", "1970-01-01 00:00:00", None)]  # a new table: only what the source holds now


@pytest.mark.parametrize("before", ["FULL", "INCREMENTAL_BY_UNIQUE_KEY (unique_key id)"])
def test_a_model_that_becomes_a_history_gets_a_table_of_its_own(tmp_path, spark, engine, clean_catalog, before):
    """Another kind's table has another layout (a generation table, no validity columns): a change of kind is
    never forward-only, whatever the new kind says."""
    project = _project(tmp_path / "p", None)
    (project / "models" / "hist.sql").write_text(f"MODEL (name s.hist, kind {before});\nSELECT id, v, updated_at FROM s.src\n")
    _plan(project, engine, "2024-01-02")
    _write(project, value="b", day=2)
    _plan(project, engine, "2024-01-03")
    assert _history(spark) == [("b", "1970-01-01 00:00:00", None)]


@pytest.mark.parametrize(("option", "after"), [
    (", valid_from_name since", "since TIMESTAMP, valid_to TIMESTAMP"), (", time_data_type DATE", "valid_from DATE, valid_to DATE"),
])
def test_renaming_or_retyping_the_validity_columns_is_refused_when_the_plan_is_built(
    tmp_path, spark, engine, clean_catalog, option, after
):
    project = _project(tmp_path / "p", None)
    _plan(project, engine, "2024-01-02")
    _write(project, value="a", day=1, options=option)
    result, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-03"], engine)
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert f"changes the columns its kind keeps (valid_from TIMESTAMP, valid_to TIMESTAMP to {after})" in flat
    assert "hist.sql:1" in flat and "forward_only false" in flat
    assert _history(spark) == [("a", "1970-01-01 00:00:00", None)]


def test_a_date_history_keeps_days(tmp_path, spark, engine, clean_catalog, served_table_format):
    """``time_data_type DATE``: the validity columns and ``updated_at`` are dates, as SQLMesh 0.236.4 keeps them
    (checked on DuckDB: both columns' type is DATE), and a version starts only when the day grows."""
    project = _project(tmp_path / "p", served_table_format)
    source = "MODEL (name s.src, kind FULL);\nSELECT 1 AS id, '{v}' AS v, TIMESTAMP'{at}' AS updated_at\n"
    history = "MODEL (name s.hist, kind SCD_TYPE_2_BY_TIME (unique_key id, time_data_type DATE));\nSELECT id, v, updated_at FROM s.src\n"
    (project / "models" / "hist.sql").write_text(history)
    for value, at, end in (("a", "2024-01-01 10:00:00", "2024-01-02"), ("b", "2024-01-01 15:00:00", "2024-01-03"),
                           ("c", "2024-01-02 09:00:00", "2024-01-04")):
        (project / "models" / "src.sql").write_text(source.format(v=value, at=at))
        _plan(project, engine, end)
    types = dict(spark.table("s.hist").dtypes)
    assert (types["valid_from"], types["valid_to"], types["updated_at"]) == ("date", "date", "date")
    # b's update is the same day as a's: no new version; c's is the next day.
    assert _history(spark, "v, updated_at, valid_from, valid_to") == [
        ("a", "2024-01-01", "1970-01-01", "2024-01-02"), ("c", "2024-01-02", "2024-01-02", None),
    ]


def test_a_column_dropped_from_a_history_on_a_plain_table_is_refused_with_its_file(tmp_path, spark, engine, clean_catalog):
    project = _project(tmp_path / "p", None)
    _write(project, value="a", day=1, options=", on_destructive_change allow", more=", 7 AS extra")
    _plan(project, engine, "2024-01-02")
    _write(project, value="a", day=1, options=", on_destructive_change allow")
    result, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-03"], engine)
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert "s.hist drops column(s) extra of its table" in flat and "hist.sql:1" in flat
    assert [name for name, _ in spark.table("s.hist").dtypes] == ["id", "v", "updated_at", "extra", "valid_from", "valid_to"]


DATED_SOURCE = "MODEL (name s.src, kind FULL);\nSELECT 1 AS id, '{v}' AS v, DATE'{day}' AS updated_at\n"
"""A source whose ``updated_at`` is a DATE, under the default TIMESTAMP validity."""


def test_a_date_updated_at_takes_the_validity_type(tmp_path, spark, engine, clean_catalog, served_table_format):
    """A new history's ``updated_at`` is created as the validity type (TIMESTAMP by default), as SQLMesh 0.236.4
    creates it: checked on DuckDB with a DATE ``updated_at``, whose history holds ``2020-01-01 00:00:00``
    (TIMESTAMP). The next run, after the parent's change, finds no change of column type (the query's DATE is
    cast to the table's TIMESTAMP, not refused)."""
    project = _project(tmp_path / "p", served_table_format)
    for value, day, end in (("a", "2024-01-01", "2024-01-02"), ("b", "2024-01-02", "2024-01-03")):
        (project / "models" / "src.sql").write_text(DATED_SOURCE.format(v=value, day=day))
        _plan(project, engine, end)
    assert dict(spark.table("s.hist").dtypes)["updated_at"] == "timestamp"
    assert _history(spark, "v, CAST(updated_at AS STRING), valid_from, valid_to") == [
        ("a", "2024-01-01 00:00:00", "1970-01-01 00:00:00", "2024-01-02 00:00:00"),
        ("b", "2024-01-02 00:00:00", "2024-01-02 00:00:00", None),
    ]


def test_a_history_an_earlier_release_wrote_keeps_its_date_column(tmp_path, spark, engine, clean_catalog):
    """A history written before ``updated_at`` took the validity type kept the query's DATE: no upgrade rebuilds
    it (its past versions cannot be computed again), so its next runs go on writing DATE, keep every row, and see
    no change of column type."""
    project = _project(tmp_path / "p", None)
    (project / "models" / "src.sql").write_text(DATED_SOURCE.format(v="a", day="2024-01-01"))
    _plan(project, engine, "2024-01-02")
    _as_an_earlier_release_wrote_it(spark, project)

    for value, day, end in (("b", "2024-01-02", "2024-01-03"), ("c", "2024-01-03", "2024-01-04")):
        (project / "models" / "src.sql").write_text(DATED_SOURCE.format(v=value, day=day))
        _plan(project, engine, end)
    assert dict(spark.table("s.hist").dtypes)["updated_at"] == "date"
    assert _history(spark, "v, CAST(updated_at AS STRING), valid_from, valid_to") == [
        ("a", "2024-01-01", "1970-01-01 00:00:00", "2024-01-02 00:00:00"),
        ("b", "2024-01-02", "2024-01-02 00:00:00", "2024-01-03 00:00:00"),
        ("c", "2024-01-03", "2024-01-03 00:00:00", None),
    ]


def _as_an_earlier_release_wrote_it(spark, project: Path) -> None:
    """The history's physical table and prod's view made again with its rows and ``updated_at`` DATE, as the release
    before kept a DATE ``updated_at`` under a TIMESTAMP validity."""
    from dagster_sparkmesh.snapshot.naming import physical_table
    from dagster_sparkmesh.state.store import open_state_store

    store = open_state_store(None, project)
    try:
        version = next(s.version for s in store.get_environment("prod").snapshots if s.name == "s.hist")
    finally:
        store.close()
    table = physical_table("s.hist", version)
    rows = spark.table(table).collect()
    assert rows and dict(spark.table(table).dtypes)["updated_at"] == "timestamp"
    legacy = spark.createDataFrame(
        [(row.id, row.v, row.updated_at.date(), row.valid_from, row.valid_to) for row in rows],
        "id INT, v STRING, updated_at DATE, valid_from TIMESTAMP, valid_to TIMESTAMP",
    )
    described = {row.col_name: row.data_type for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()}
    spark.sql(f"DROP TABLE {table}")
    # A session serving a lakehouse format leaves a dropped plain table's folder where the new one would go.
    shutil.rmtree(urlparse(described["Location"]).path, ignore_errors=True)
    legacy.write.format(described["Provider"]).saveAsTable(table)
    # and its view, made over that DATE column (a view keeps the types it was made with)
    spark.sql(f"CREATE OR REPLACE VIEW s.hist AS SELECT * FROM {table}")
