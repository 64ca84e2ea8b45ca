"""Two renders of one model compared in one canonical form, built by the same sqlglot (sparkmesh's) for both:
parsed in the dialect each tool wrote, catalogs dropped (physical and default-catalog names are no part of the
comparison), then the optimizer steps SQLMesh applies to its own renders (qualify with the models' schema, type
annotation, simplification), written as Spark SQL without comments. SQLMesh's render is already in that form, so
the steps leave it as it is; sparkmesh's render is brought to it.

sparkmesh rounds a number cast to an integer in the dialects that round (DuckDB, PostgreSQL, Snowflake, BigQuery),
which SQLMesh's render for Spark leaves to Spark's truncating cast: where the typed value is a whole number already,
the two casts are the same and compare equal; where it may hold a fraction, they stay apart. Its reading of a
hexadecimal string in such a cast (DuckDB, BigQuery) is a branch taken only for a string: where the value is typed
otherwise, it is left out."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.simplify import simplify

Schema = dict[str, dict[str, dict[str, str]]]
"""schema -> table -> column -> Spark type: the columns SQLMesh knows, used to qualify both renders."""


def canonical_sql(sql: str, dialect: str, schema: Schema) -> str:
    tree = sqlglot.parse_one(sql, read=dialect)
    for table in tree.find_all(exp.Table):
        table.set("catalog", None)
    try:
        annotated = annotate_types(qualify(tree, dialect="spark", schema=schema, validate_qualify_columns=False,
                                           quote_identifiers=False), schema=schema, dialect="spark")
        tree = simplify(_plain_whole_number_casts(_without_hex_branches(annotated)), dialect="spark")
    except sqlglot.errors.SqlglotError:
        # As SQLMesh does, a query the optimizer cannot qualify is left unqualified; it is still simplified, so
        # that it compares with the other tool's qualified render of it (simplify rewrites BETWEEN, for one).
        tree = _simplified(tree)
    for identifier in tree.find_all(exp.Identifier):  # Spark's names are case-insensitive: quotes say nothing
        identifier.set("quoted", False)
    return tree.sql(dialect="spark", comments=False, normalize=True, identify=True)


_WHOLE = (exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.BIGINT)


def _plain_whole_number_casts(tree: exp.Expression) -> exp.Expression:
    """sparkmesh's rounded cast ``CAST([CASE WHEN TYPEOF(x) ... THEN BROUND(..) ELSE] ROUND(CAST(x AS DECIMAL(38, 18)))
    [END] AS INT)`` as the plain ``CAST(x AS INT)`` where ``x`` is typed a whole number."""
    for cast in list(tree.find_all(exp.Cast)):
        rounded = cast.this.args.get("default") if isinstance(cast.this, exp.Case) else cast.this
        exact = rounded.this if isinstance(rounded, exp.Round) else None
        if isinstance(exact, exp.Cast) and exact.to.is_type(exp.DataType.Type.DECIMAL) and exact.this.type \
                and exact.this.type.is_type(*_WHOLE):
            cast.set("this", exact.this.copy())
    return tree


def _without_hex_branches(tree: exp.Expression) -> exp.Expression:
    """sparkmesh's ``CASE WHEN TYPEOF(x) = 'string' AND <x reads as hex> THEN <from hex> ELSE <cast> END`` as the
    ``<cast>`` where ``x`` is typed other than a string (the branch is never taken)."""
    for case in list(tree.find_all(exp.Case)):
        ifs, default = case.args.get("ifs") or [], case.args.get("default")
        condition = ifs[0].this if len(ifs) == 1 else None
        if default is None or not isinstance(condition, exp.And):
            continue
        if not isinstance(condition.expression, exp.RegexpLike):
            continue
        typeof = condition.this
        if isinstance(typeof, exp.EQ) and isinstance(typeof.this, exp.Typeof) and typeof.expression.name == "string":
            value_type = typeof.this.this.type
            if value_type and not value_type.is_type(*exp.DataType.TEXT_TYPES, exp.DataType.Type.UNKNOWN):
                case.replace(default.copy())
    return tree


def _simplified(tree: exp.Expression) -> exp.Expression:
    try:
        return simplify(tree, dialect="spark")
    except sqlglot.errors.SqlglotError:
        return tree


def schema_of(columns_by_model: dict[str, dict[str, str]]) -> Schema:
    schema: Schema = {}
    for name, columns in columns_by_model.items():
        if not columns or name.count(".") != 1:
            continue
        db, table = name.split(".")
        schema.setdefault(db, {})[table] = columns
    return schema


def first_difference(left: str, right: str, width: int = 60) -> str:
    """Where two canonical texts part, with a little context: the one-line reason of a non-equal render."""
    at = next((i for i, (a, b) in enumerate(zip(left, right)) if a != b), min(len(left), len(right)))
    begin = max(0, at - 20)
    return f"SQLMesh …{left[begin:at + width]}… / sparkmesh …{right[begin:at + width]}…"
