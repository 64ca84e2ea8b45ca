"""The names of a model's unaliased columns, as SQLMesh gives them.

SQLMesh qualifies a model's query before it runs it, and that names each projection that has no alias and no name of
its own (``UPPER(name)``, ``id + 1``, ``COUNT(*) OVER ()``, a scalar subquery) ``_col_<position>``; a column keeps its
name, a cast of a column the column's, a literal its text. Spark would name them by their text (``upper(name)``,
``(id + 1)``), so the table a project built in SQLMesh would have other columns here, and a reader selecting
``_col_1`` would fail. Done on the query as parsed, before the dialect's functions are rewritten, so a rewritten
projection keeps the name SQLMesh gives the expression as written.

Where a ``*`` comes before such a projection its position depends on the columns the star expands to, which only
the tables tell, and so after a macro left for render time (``@STAR(...)`` gives several columns): from there on the
projections keep Spark's names (a known difference).
"""

from __future__ import annotations

from sqlglot import exp

from dagster_sparkmesh.macros.nodes import is_deferred


def with_output_names(statement: exp.Expression) -> exp.Expression:
    """``statement``, when a query, with its unnamed projections aliased as SQLMesh names them (those of the first
    SELECT of a set operation: the table takes its names)."""
    select = statement
    while isinstance(select, (exp.SetOperation, exp.Subquery)):
        select = select.this
    if not isinstance(select, exp.Select):
        return statement
    for position, projection in enumerate(select.expressions):
        if isinstance(projection, (exp.Alias, exp.Aliases)):
            continue
        if projection.is_star or is_deferred(projection):
            break
        if not projection.output_name:
            projection.replace(exp.alias_(projection.copy(), f"_col_{position}"))
    return statement
