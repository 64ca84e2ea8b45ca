"""Issue 32, item 2: a forward-only change that adds a column alters the table (as SQLMesh does on Spark), so
prod shows the column from the effective date on; ``on_additive_change`` decides what happens otherwise."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.cli.sparkmesh_harness import invoke


HEADER = "MODEL (name db.fo, kind INCREMENTAL_BY_TIME_RANGE (time_column ds{options}), start '2024-01-01');\n"
SOURCE = "FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-10', INTERVAL 1 DAY)) AS ds)\n"
WHERE = "WHERE ds BETWEEN @start_ds AND @end_ds\n"
CHILD = "MODEL (name db.child, kind VIEW);\nSELECT * FROM db.fo\n"


def _write(project: Path, projection: str, options: str = "") -> None:
    (project / "models" / "fo.sql").write_text(HEADER.format(options=options) + projection + SOURCE + WHERE)


def _project(folder: Path, options: str = "") -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    _write(folder, "SELECT ds, dayofmonth(ds) AS amount\n", options)
    (folder / "models" / "child.sql").write_text(CHILD)
    return folder


def _plan(project: Path, engine, *extra: str):
    args = ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-06", *extra]
    result, _ = invoke(project, args, engine)
    return result


def _columns(spark, table: str) -> list[str]:
    return [name for name, _ in spark.table(table).dtypes]


def test_an_added_column_reaches_prod_from_the_effective_date(tmp_path, spark, engine, clean_catalog):
    project = _project(tmp_path / "p")
    built = _plan(project, engine)
    assert built.exit_code == 0, built.output
    _write(project, "SELECT ds, dayofmonth(ds) AS amount, dayofmonth(ds) * 2 AS doubled\n")
    forward = _plan(project, engine, "--forward-only", "--effective-from", "2024-01-04")
    assert forward.exit_code == 0, forward.output

    for view in ("db.fo", "db.child"):
        assert _columns(spark, view) == ["ds", "amount", "doubled"], view
    rows = spark.sql("SELECT dayofmonth(ds), doubled FROM db.child ORDER BY ds").collect()
    # Before the effective date the rows keep their old values (no column then); from it on, recomputed.
    assert [tuple(r) for r in rows] == [(1, None), (2, None), (3, None), (4, 8), (5, 10), (6, 12)]


def test_an_added_column_from_the_start_matches_a_fresh_build(tmp_path, spark, engine, clean_catalog):
    project = _project(tmp_path / "p")
    built = _plan(project, engine)
    assert built.exit_code == 0, built.output
    _write(project, "SELECT ds, dayofmonth(ds) AS amount, dayofmonth(ds) * 2 AS doubled\n")
    assert _plan(project, engine, "--forward-only", "--effective-from", "2024-01-01").exit_code == 0
    rows = spark.sql("SELECT dayofmonth(ds), amount, doubled FROM db.fo ORDER BY ds").collect()
    assert [tuple(r) for r in rows] == [(d, d, 2 * d) for d in range(1, 7)]


def test_on_additive_change_error_refuses_the_plan(tmp_path, spark, engine, clean_catalog):
    project = _project(tmp_path / "p", options=", on_additive_change error")
    built = _plan(project, engine)
    assert built.exit_code == 0, built.output
    _write(project, "SELECT ds, dayofmonth(ds) AS amount, 1 AS extra\n", ", on_additive_change error")
    refused = _plan(project, engine, "--forward-only")
    assert refused.exit_code == 2, refused.output
    assert "additive" in refused.output and "extra" in refused.output and "on_additive_change" in refused.output
    assert _columns(spark, "db.fo") == ["ds", "amount"]


def test_on_additive_change_ignore_keeps_the_table_as_it_is(tmp_path, spark, engine, clean_catalog):
    project = _project(tmp_path / "p", options=", on_additive_change ignore")
    built = _plan(project, engine)
    assert built.exit_code == 0, built.output
    _write(project, "SELECT ds, dayofmonth(ds) AS amount, 1 AS extra\n", ", on_additive_change ignore")
    kept = _plan(project, engine, "--forward-only", "--effective-from", "2024-01-01")
    assert kept.exit_code == 0, kept.output
    assert _columns(spark, "db.fo") == ["ds", "amount"]
    assert spark.sql("SELECT COUNT(*) FROM db.fo").collect()[0][0] == 6


def test_a_dropped_column_is_hidden_and_can_come_back(tmp_path, spark, engine, clean_catalog):
    allow = ", on_destructive_change allow"
    project = _project(tmp_path / "p", options=allow)
    _write(project, "SELECT ds, dayofmonth(ds) AS amount, 7 AS extra\n", allow)
    assert _plan(project, engine).exit_code == 0
    _write(project, "SELECT ds, dayofmonth(ds) AS amount\n", allow)
    dropped = _plan(project, engine, "--forward-only", "--effective-from", "2024-01-01")
    assert dropped.exit_code == 0, dropped.output
    for view in ("db.fo", "db.child"):  # as a fresh build of these files: no such column
        assert _columns(spark, view) == ["ds", "amount"], view
    assert spark.sql("SELECT SUM(amount), COUNT(*) FROM db.fo").collect()[0] == (21, 6)

    _write(project, "SELECT ds, dayofmonth(ds) AS amount, 8 AS extra\n", allow)
    back = _plan(project, engine, "--forward-only", "--effective-from", "2024-01-04")
    assert back.exit_code == 0, back.output
    rows = spark.sql("SELECT dayofmonth(ds), extra FROM db.fo ORDER BY ds").collect()
    assert [tuple(r) for r in rows] == [(1, None), (2, None), (3, None), (4, 8), (5, 8), (6, 8)]


def test_a_dropped_column_of_a_unique_key_table_is_refused_clearly(tmp_path, spark, engine, clean_catalog):
    (tmp_path / "p" / "models").mkdir(parents=True)
    project = tmp_path / "p"
    (project / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    model = project / "models" / "latest.sql"
    header = "MODEL (name db.latest, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id, on_destructive_change allow), "
    header += "start '2024-01-01');\n"
    model.write_text(header + "SELECT 1 AS id, 2 AS amount\n")
    assert _plan(project, engine).exit_code == 0
    model.write_text(header + "SELECT 1 AS id\n")
    refused = _plan(project, engine, "--forward-only")
    assert refused.exit_code == 2, refused.output
    flat = " ".join(refused.output.split())
    assert "drops column(s) amount of its table" in flat and "Parquet" in flat
    assert "latest.sql:1" in flat  # the model's file and line
    assert _columns(spark, "db.latest") == ["id", "amount"]


def test_the_projects_model_defaults_decide_where_the_kind_does_not(tmp_path, spark, engine, clean_catalog):
    """SQLMesh's ``model_defaults.on_destructive_change`` / ``on_additive_change``: a dropped column goes through
    because the project allows it, an added one is refused because the project says so."""
    project = _project(tmp_path / "p")
    (project / "config.yaml").write_text(
        "model_defaults:\n  dialect: spark\n  on_destructive_change: allow\n  on_additive_change: error\n"
    )
    _write(project, "SELECT ds, dayofmonth(ds) AS amount, 7 AS extra\n")
    assert _plan(project, engine).exit_code == 0
    _write(project, "SELECT ds, dayofmonth(ds) AS amount\n")
    dropped = _plan(project, engine, "--forward-only", "--effective-from", "2024-01-01")
    assert dropped.exit_code == 0, dropped.output
    assert _columns(spark, "db.fo") == ["ds", "amount"]
    _write(project, "SELECT ds, dayofmonth(ds) AS amount, 1 AS added\n")
    refused = _plan(project, engine, "--forward-only")
    assert refused.exit_code == 2, refused.output
    assert "on_additive_change" in refused.output and "added" in refused.output
    assert _columns(spark, "db.fo") == ["ds", "amount"]


def test_reverting_a_forward_only_column_takes_it_away_again(tmp_path, spark, engine, clean_catalog):
    allow = ", on_destructive_change allow"
    project = _project(tmp_path / "p", options=allow)
    assert _plan(project, engine).exit_code == 0
    _write(project, "SELECT ds, dayofmonth(ds) AS amount, 1 AS extra\n", allow)
    assert _plan(project, engine, "--forward-only", "--effective-from", "2024-01-01").exit_code == 0
    assert _columns(spark, "db.fo") == ["ds", "amount", "extra"]
    _write(project, "SELECT ds, dayofmonth(ds) AS amount\n", allow)  # back to the first files
    reverted = _plan(project, engine, "--forward-only")  # the first snapshot again, on the same table
    assert reverted.exit_code == 0, reverted.output
    for view in ("db.fo", "db.child"):  # as a fresh build of these files
        assert _columns(spark, view) == ["ds", "amount"], view


@pytest.mark.parametrize("options", ["", ", on_destructive_change allow"])
def test_a_retyped_column_is_refused_before_anything_is_written(tmp_path, spark, engine, clean_catalog, options):
    """Spark would cast the new values into the old column (0.5 -> 0): refused under any policy instead."""
    project = _project(tmp_path / "p", options=options)
    assert _plan(project, engine).exit_code == 0
    _write(project, "SELECT ds, CAST(dayofmonth(ds) AS DOUBLE) / 2 AS amount\n", options)
    refused = _plan(project, engine, "--forward-only", "--effective-from", "2024-01-01")
    assert refused.exit_code == 2, refused.output
    assert "changes the type of column(s) amount from int to double" in refused.output
    assert "fo.sql" in refused.output and "rebuilds the table" in refused.output
    assert dict(spark.table("db.fo").dtypes) == {"ds": "date", "amount": "int"}
    assert [r[0] for r in spark.sql("SELECT amount FROM db.child ORDER BY ds").collect()] == [1, 2, 3, 4, 5, 6]

    _write(project, "SELECT ds, dayofmonth(ds) / 2 AS amount\n", options)
    rebuilt = _plan(project, engine)  # a breaking change, as the hint says: a new table
    assert rebuilt.exit_code == 0, rebuilt.output
    assert [r[0] for r in spark.sql("SELECT amount FROM db.child ORDER BY ds").collect()] == [d / 2 for d in range(1, 7)]
