"""``@RESOLVE_TEMPLATE('@{catalog_name}.@{schema_name}.@{table_name}_x'[, mode := 'table'])``: a name built from
the model's own physical table, known only when rendering."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, option


@builtin
def resolve_template(evaluator: Any, template: Any, mode: Any = None) -> exp.Expression:
    table = exp.to_table(evaluator.this_model, dialect="spark")
    parts = {"catalog_name": table.catalog, "schema_name": table.db, "table_name": table.name}
    text = str(option(template, ""))
    for key, value in parts.items():
        text = text.replace("@{" + key + "}", value)
    if str(option(mode, "literal")).lower() == "table":
        return exp.to_table(text.strip("."), dialect="spark")
    return exp.Literal.string(text)
