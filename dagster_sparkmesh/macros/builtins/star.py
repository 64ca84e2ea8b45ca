"""``@STAR(relation[, alias, except, prefix, suffix, quote_identifiers])``: the relation's columns, cast to their types.

The columns come from the relation's declared schema (``columns (...)`` of a model, ``external_models.yaml``);
while loading a single file it is not known yet, so the call waits for rendering.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, flag, items, option

CAST_TO_OWN_TYPE = "sparkmesh_cast_to_own_type"
"""Marks @STAR's casts in their ``meta``: each column to the type it is declared with."""


def relation_name(relation: Any) -> str:
    if isinstance(relation, exp.Literal):
        return str(relation.this).lower()
    return relation.sql(dialect="spark").replace("`", "").lower()


@builtin
def star(
    evaluator: Any,
    relation: Any,
    alias: Any = None,
    exclude: Any = None,
    prefix: Any = None,
    suffix: Any = None,
    quote_identifiers: Any = None,
    **kwargs: Any,
) -> list[exp.Expression]:
    exclude = kwargs.pop("except", exclude)
    columns = evaluator.columns_to_types(relation_name(relation))
    excluded = {item.name.lower() for item in items(exclude)}
    qualifier = option(alias, None) if alias is not None else None
    qualifier = alias.name if isinstance(alias, exp.Expression) and not isinstance(alias, exp.Literal) else qualifier
    quoted = flag(quote_identifiers, True)
    projections = []
    for name, data_type in columns.items():
        if name.lower() in excluded:
            continue
        column = exp.column(name, table=qualifier, quoted=quoted)
        cast = exp.cast(column, exp.DataType.build(str(data_type), dialect="spark"))
        cast.meta[CAST_TO_OWN_TYPE] = True  # a column cast to its declared type: nothing for a dialect to round
        target = f"{option(prefix, '')}{name}{option(suffix, '')}"
        projections.append(exp.alias_(cast, exp.to_identifier(target, quoted=quoted)))
    return projections
