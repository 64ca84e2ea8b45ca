"""Reading SQLMesh's ``when_matched`` and ``merge_filter`` of a unique-key model (SQL header or Python kind): parsed in
the model's dialect, checked (``model.merge_clauses``) and kept as canonical Spark SQL, so that formatting does not
make a new version, as SQLMesh hashes its generated SQL.

``merge_filter`` may call macros (``target.ds > @start_ds``): they stay in the text as the query's do, and are
rendered for each write. ``when_matched`` may not: SQLMesh evaluates them once, when the model loads, with no
interval, so a time macro there would compare with a fixed date."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from dagster_sparkmesh.macros import expansion, syntax
from dagster_sparkmesh.model.merge_clauses import Error, check_condition, check_when_matched, with_standard_aliases

_SENTINELS = (syntax.CALL, syntax.VARIABLE, "__smi_")


def read_when_matched(text: str, dialect: str, error: Error) -> str:
    body = text.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]  # SQLMesh writes the clauses in parentheses
    try:
        whens = sqlglot.parse_one(syntax.prepare(body, syntax.Source(None)), into=exp.Whens, read=dialect)
    except (ParseError, TokenError, ValueError) as problem:
        raise error(f"when_matched is not WHEN MATCHED clauses ({str(problem).splitlines()[0]})",
                    "write when_matched (WHEN MATCHED THEN UPDATE SET target.v = source.v)") from None
    if any(_is_macro(node) for node in whens.walk()):
        raise error("when_matched cannot use macros (SQLMesh evaluates them once, with no interval)",
                    "put conditions on the interval in merge_filter, which is rendered for each write")
    whens = with_standard_aliases(whens)
    check_when_matched(whens, error)
    return _canonical(whens)


def read_merge_filter(text: str, dialect: str, error: Error) -> str:
    try:
        [condition] = expansion.parse(text.strip(), dialect, syntax.Source(None))
    except (ParseError, TokenError, ValueError) as problem:
        raise error(f"merge_filter is not one condition ({str(problem).splitlines()[0]})",
                    "write merge_filter target.ds > @start_ds") from None
    condition = with_standard_aliases(condition)
    check_condition(condition.copy().transform(_macro_variable_as_null), error, "merge_filter")
    return _canonical(condition)


def _canonical(node: exp.Expression) -> str:
    from dagster_sparkmesh.project.sql.model import canonical_sql  # (it imports the header, which imports this)

    return canonical_sql(node)


def _is_macro(node: exp.Expression) -> bool:
    name = node.name if isinstance(node, (exp.Column, exp.Identifier, exp.Anonymous)) else ""
    return isinstance(name, str) and name.lower().startswith(_SENTINELS)


def _macro_variable_as_null(node: exp.Expression) -> exp.Expression:
    """A macro variable's sentinel column is a value, not a column of source or target."""
    if isinstance(node, exp.Column) and node.name.lower().startswith((syntax.VARIABLE, "__smi_")):
        return exp.null()
    return node
