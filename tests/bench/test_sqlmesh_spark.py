"""The row comparison of two fresh Spark builds (``bench/sqlmesh_spark``): the digest, the verdicts, the
non-determinism rule. Pure, except the one slow test that digests real tables on the suite's Spark session."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def mesh():
    sys.path.insert(0, str(BENCH))  # the folder is imported by its name, as when run by hand
    try:
        from sqlmesh_spark import compare, digest, nondeterminism, records

        yield compare, digest, nondeterminism, records
    finally:
        sys.path.remove(str(BENCH))


def _digest(mesh, rows=3, checksums=(("a", "1"), ("b", "2")), row_checksum="9", types=("int", "string")):
    digest = mesh[1]
    columns = tuple(zip((name for name, _ in checksums), types))
    return digest.Digest(columns=columns, rows=rows, column_checksums=tuple(checksums), row_checksum=row_checksum)


def test_equal_digests_are_equal_rows(mesh):
    compare = mesh[0]
    assert compare.row_difference(_digest(mesh), _digest(mesh)) == ""


@pytest.mark.parametrize(
    ("ours", "expected"),
    [
        ({"rows": 4}, "rows: SQLMesh 3, sparkmesh 4"),
        ({"checksums": (("a", "1"), ("c", "2"))}, "columns: only in SQLMesh ['b'], only in sparkmesh ['c']"),
        ({"checksums": (("a", "1"), ("b", "7"))}, "values differ in ['b'] (3 rows each)"),
        ({"row_checksum": "8"}, "every column's values equal, paired differently across rows"),
    ],
)
def test_each_kind_of_row_difference_is_named(mesh, ours, expected):
    compare = mesh[0]
    assert compare.row_difference(_digest(mesh), _digest(mesh, **ours)) == expected


def test_a_type_difference_with_equal_values_is_a_note_not_a_row_difference(mesh):
    compare, _, _, records = mesh
    theirs = records.BuildOutcome(error="", digests={"m.t": _digest(mesh, types=("bigint", "string"))})
    ours = records.BuildOutcome(error="", digests={"m.t": _digest(mesh)})
    [verdict] = compare.compare_builds(theirs, ours, {}).verdicts
    assert verdict.outcome == records.EQUAL
    assert verdict.type_note == "types (SQLMesh / sparkmesh): a bigint / int"


def test_verdicts_cover_both_sides_and_the_rule(mesh):
    compare, _, _, records = mesh
    theirs = records.BuildOutcome(error="", digests={"m.same": _digest(mesh), "m.random": _digest(mesh),
                                                     "m.failed": "AnalysisException: boom"})
    ours = records.BuildOutcome(error="", digests={"m.same": _digest(mesh), "m.random": _digest(mesh, rows=5),
                                                   "m.failed": _digest(mesh), "m.extra": _digest(mesh)})
    result = compare.compare_builds(theirs, ours, {"m.random": "query calls rand"})
    outcomes = {v.model: v.outcome for v in result.verdicts}
    assert outcomes == {"m.same": "equal", "m.random": "excluded", "m.failed": "unreadable", "m.extra": "unreadable"}
    assert (result.compared, result.count(records.EXCLUDED)) == (1, 1)
    reasons = {v.model: v.reason for v in result.verdicts}
    assert reasons["m.extra"] == "SQLMesh: no such model; sparkmesh: 3 rows"


def test_digest_round_trips_through_json(mesh):
    digest = mesh[1]
    original = _digest(mesh)
    assert digest.Digest.from_json(original.to_json()) == original


def test_digest_query_hashes_text_rounds_inexact_numbers_and_orders_columns_by_name(mesh):
    digest = mesh[1]
    query = digest.digest_query("`s`.`t`", [("b", "double"), ("A", "bigint"), ("c`x", "string")])
    assert query.startswith("SELECT COUNT(*), ")
    assert query.endswith(" FROM `s`.`t`")
    a, b, c = "CAST(`A` AS STRING)", "CAST(ROUND(CAST(`b` AS DOUBLE), 6) AS STRING)", "CAST(`c``x` AS STRING)"
    assert query.index(f"xxhash64({a})") < query.index(f"xxhash64({b})") < query.index(f"xxhash64({c})")
    assert f"xxhash64({a}, {b}, {c})" in query


def test_digest_from_row_pairs_checksums_with_names_in_sorted_order(mesh):
    digest = mesh[1]
    result = digest.digest_from_row([("b", "int"), ("A", "int")], [2, "10", "20", "30"])
    assert result.rows == 2
    assert result.columns == (("b", "int"), ("a", "int"))
    assert result.column_checksums == (("a", "10"), ("b", "20"))
    assert result.row_checksum == "30"


def _source(mesh, text, python=False, depends_on=()):
    records = mesh[3]
    return records.ModelSource(kind="FULL", python=python, depends_on=tuple(depends_on), source=text)


def test_rule_names_clock_and_random_sql_and_their_readers(mesh):
    rule = mesh[2]
    sources = {
        "m.clock": _source(mesh, "SELECT CURRENT_TIMESTAMP AS at"),
        "m.random": _source(mesh, "SELECT RAND() AS r"),
        "m.planned": _source(mesh, "SELECT @execution_ds AS ds, random_column FROM t"),
        "m.reader": _source(mesh, "SELECT * FROM m.clock", depends_on=["m.clock"]),
        "m.far_reader": _source(mesh, "SELECT * FROM m.reader", depends_on=["m.reader", "m.planned"]),
    }
    assert rule.nondeterministic_models(sources) == {
        "m.clock": "query calls current_timestamp",
        "m.random": "query calls rand",
        "m.reader": "reads m.clock, non-deterministic",
        "m.far_reader": "reads m.reader, non-deterministic",
    }


def test_rule_keeps_seeded_python_and_names_unseeded_or_clock_reading_python(mesh):
    rule = mesh[2]
    sources = {
        "py.seeded": _source(mesh, "import random\nrandom.seed(7)\nrandom.randint(1, 2)", python=True),
        "py.unseeded": _source(mesh, "from faker import Faker\nFaker().name()", python=True),
        "py.clock": _source(mesh, "random.seed(1)\ndatetime.now()", python=True),
        "py.plain": _source(mesh, "def execute(context, start, end):\n    return df", python=True),
    }
    assert rule.nondeterministic_models(sources) == {
        "py.clock": "Python model reads the wall clock",
        "py.unseeded": "Python model draws from Faker without seeding it",
    }


def test_rule_names_a_source_left_unseeded_beside_a_seeded_one_and_draws_over_unordered_reads(mesh):
    rule = mesh[2]
    # sushi.raw_marketing seeds numpy only and draws with Python's random; sushi.order_items seeds both (through
    # its helper) but samples rows it read without ORDER BY.
    marketing = "np.random.seed(seed)\nn = random.randint(30, 100)\nnp.random.choice(['a', 'b'], size=n)"
    items = "random.seed(ts)\nnp.random.seed(ts)\nitems = context.fetchdf(exp.select('*').from_(t))\nitems.sample(n=2)"
    ordered = items.replace("from_(t)", "from_(t).order_by('id')")
    sources = {
        "py.marketing": _source(mesh, marketing, python=True),
        "py.items": _source(mesh, items, python=True),
        "py.ordered": _source(mesh, ordered, python=True),
        "py.own_rng": _source(mesh, "rng = random.Random()\nrng.seed(3)\nrng.randint(1, 5)", python=True),
        "py.ids": _source(mesh, "import uuid\nuuid.uuid4()", python=True),
    }
    assert rule.nondeterministic_models(sources) == {
        "py.ids": "Python model calls uuid",
        "py.items": "Python model draws random values over rows read without ORDER BY",
        "py.marketing": "Python model draws from Python's random without seeding it",
    }


def test_window_clock_is_the_midnight_after_the_last_day(mesh):
    records = mesh[3]
    assert records.Window(end="2024-02-29").execution_time == "2024-03-01"


def test_digest_ignores_row_order_and_integer_width_and_sees_swapped_values(mesh, spark):
    try:
        _digest_checks(mesh[1], spark)
    finally:  # the suite shares the session: temporary views would show in every later listing of tables
        for name in ("d_int", "d_long", "d_swapped"):
            spark.catalog.dropTempView(name)


def _digest_checks(digest, spark) -> None:
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW d_int AS SELECT * FROM VALUES (1, 'x', 0.1D), (2, 'y', 0.2D) AS t(a, b, c)")
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW d_long AS SELECT * FROM VALUES "
              "(CAST(2 AS BIGINT), 'y', 0.2D), (CAST(1 AS BIGINT), 'x', 0.30000000000000004D - 0.2D) AS t(a, b, c)")
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW d_swapped AS SELECT * FROM VALUES (1, 'y', 0.1D), (2, 'x', 0.2D) AS t(a, b, c)")
    base, reordered, swapped = (digest.digest_table(spark, name) for name in ("d_int", "d_long", "d_swapped"))
    assert base.column_checksums == reordered.column_checksums and base.row_checksum == reordered.row_checksum
    assert base.columns != reordered.columns  # int against bigint: kept for the type note
    assert base.column_checksums == swapped.column_checksums
    assert base.row_checksum != swapped.row_checksum


def test_the_compat_score_counts_unreadable_models_against_equal_ones_and_excluded_apart(mesh):
    _, _, _, records = mesh
    sys.path.insert(0, str(BENCH))
    try:
        from sqlmesh_compat.records import Count, ProjectScore
        from sqlmesh_compat.spark_rows import with_spark_rows
    finally:
        sys.path.remove(str(BENCH))
    score = ProjectScore("p", True, True, True, Count(1, 1), Count(1, 1), Count(0, 0), Count(0, 0), 0, 0, ())
    comparison = records.SparkComparison("", "plan (exit 2): refused", (
        records.ModelVerdict("a.same", records.EQUAL, type_note="types (SQLMesh / sparkmesh): x int / bigint"),
        records.ModelVerdict("a.clock", records.EXCLUDED, "query calls now"),
        records.ModelVerdict("a.gone", records.UNREADABLE, "SQLMesh: 3 rows; sparkmesh: no such model"),
    ))
    scored = with_spark_rows(score, comparison)
    assert str(scored.spark_rows) == "1/2 (1 excluded)"
    assert [d.item for d in scored.differences] == [
        "spark a.clock", "spark a.gone", "spark types a.same", "spark plan (sparkmesh)"]


def test_lifecycle_referee_copy_drops_sparkmesh_state_and_the_batch_size_default(mesh, tmp_path):
    sys.path.insert(0, str(BENCH))
    try:
        from sqlmesh_spark import lifecycle_referee
    finally:
        sys.path.remove(str(BENCH))
    project = tmp_path / "project"
    (project / ".sparkmesh").mkdir(parents=True)
    (project / "models").mkdir()
    (project / "models" / "a.sql").write_text("SELECT 1 AS x")
    (project / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  batch_size: 2\n  cron: '@daily'\n")
    copy = lifecycle_referee.referee_copy(project, tmp_path / "copy")
    assert (copy / "config.yaml").read_text() == "model_defaults:\n  dialect: spark\n  cron: '@daily'\n"
    assert (copy / "models" / "a.sql").exists() and not (copy / ".sparkmesh").exists()
    row = (date(2024, 1, 2), 100, None, "o'k")
    assert lifecycle_referee._values(row) == "(DATE'2024-01-02', 100, NULL, 'o''k')"


@pytest.mark.slow
def test_sparkmesh_build_runs_the_setup_sql_in_the_projects_catalog_before_its_plan(mesh, tmp_path):
    """The ``--spark`` stage's sparkmesh side: the external table a project reads is created first, in the catalog
    its build then reads (a fresh build refuses a plan whose external table is missing)."""
    from sqlmesh_spark.records import Window
    from sqlmesh_spark.sparkmesh_build import sparkmesh_build

    project = tmp_path / "probe"
    (project / "models").mkdir(parents=True)
    (project / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (project / "external_models.yaml").write_text("- name: raw.events\n  columns: {id: int, kind: string}\n")
    (project / "models" / "kinds.sql").write_text(
        "MODEL (name m.kinds, kind FULL);\nSELECT kind, COUNT(*) AS events FROM raw.events GROUP BY kind\n"
    )
    setup = ("CREATE DATABASE IF NOT EXISTS raw",
             "CREATE TABLE raw.events USING parquet AS SELECT * FROM VALUES (1, 'a'), (2, 'b'), (3, 'a') AS t(id, kind)")
    window = Window(end="2024-01-02")
    env = {**__import__("os").environ, "PYSPARK_PYTHON": sys.executable}

    outcome = sparkmesh_build(Path(sys.executable), [project], window, env, setup_sql=setup)

    assert outcome.error == ""
    assert outcome.digests["m.kinds"].rows == 2
