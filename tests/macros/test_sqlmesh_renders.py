"""Macro renders that SQLMesh 0.236.4 itself gives (found by ``bench/sqlmesh_compat``'s macro project, rendered by
SQLMesh in its own virtualenv): each expected text here is SQLMesh's render, written as Spark SQL."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.macros import MacroEvaluator, expansion
from dagster_sparkmesh.macros.syntax import Source


def expand(sql: str) -> str:
    evaluator = MacroEvaluator(variables={}, locals={"gateway": "local"}, gateway="local",
                               deferred=expansion.RENDER_TIME, source=Source(Path("m.sql"), 1, sql))
    statements = expansion.expand(expansion.parse(sql, "spark", evaluator.source), evaluator)
    return "; ".join(statement.sql(dialect="spark", comments=False) for statement in statements)


def test_pivot_aliases_are_the_values_text_without_their_quotes() -> None:
    # SQLMesh: SUM(CASE WHEN "src"."status" = 'a' THEN 1 ELSE 0 END) AS "a"
    assert expand("SELECT @PIVOT(status, ['a', 'b']) FROM src") == (
        "SELECT SUM(CASE WHEN status = 'a' THEN 1 ELSE 0 END) AS `a`, "
        "SUM(CASE WHEN status = 'b' THEN 1 ELSE 0 END) AS `b` FROM src"
    )
    assert expand("SELECT @PIVOT(n, [1, 2], prefix := 'n_', suffix := '_x', quote := FALSE) FROM src") == (
        "SELECT SUM(CASE WHEN n = 1 THEN 1 ELSE 0 END) AS n_1_x, SUM(CASE WHEN n = 2 THEN 1 ELSE 0 END) AS n_2_x FROM src"
    )


def test_filter_compares_column_references_as_written() -> None:
    # SQLMesh: SELECT "src"."a" AS "a", "src"."b" AS "b" FROM "memory"."m"."src" AS "src"
    assert expand("SELECT @FILTER([a, b, c], x -> x <> c) FROM src") == "SELECT a, b FROM src"
    assert expand("SELECT @FILTER([a, b, c], x -> x = b) FROM src") == "SELECT b FROM src"


def test_date_spine_has_sqlmeshs_shape() -> None:
    # SQLMesh (DuckDB model, written as Spark SQL): SELECT _exploded.date_day AS date_day
    #   FROM EXPLODE(CAST(SEQUENCE(CAST('2024-01-01' AS DATE), ...) AS ARRAY<DATE>)) AS _exploded(date_day)
    assert expand("@DATE_SPINE('day', '2024-01-01', '2024-01-03')") == (
        "SELECT _exploded.date_day AS date_day FROM EXPLODE(CAST(SEQUENCE(CAST('2024-01-01' AS DATE), "
        "CAST('2024-01-03' AS DATE), INTERVAL '1' DAY) AS ARRAY<DATE>)) AS _exploded(date_day)"
    )
