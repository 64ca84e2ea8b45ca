"""``@DEDUPLICATE(relation, [partition_by...], ['order_by desc', ...])``: one row per partition, the first by order."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, items


@builtin
def deduplicate(evaluator: Any, relation: Any, partition_by: Any, order_by: Any) -> exp.Expression:
    partitions = ", ".join(item.sql(dialect="spark") for item in items(partition_by))
    orders = ", ".join(item.this if isinstance(item, exp.Literal) else item.sql(dialect="spark") for item in items(order_by))
    if not partitions or not orders:
        raise evaluator.error("@DEDUPLICATE needs partition_by and order_by", relation,
                              "write @DEDUPLICATE(table, [key], ['updated_at DESC'])")
    source = relation.sql(dialect="spark")
    window = f"ROW_NUMBER() OVER (PARTITION BY {partitions} ORDER BY {orders})"
    # Not ``QUALIFY``: sqlglot writes it for Spark as a subquery whose ``SELECT *`` leaks the rank column. The
    # row travels as one struct and is unpacked, so exactly the relation's columns come out.
    text = (
        f"SELECT _sparkmesh_row.* FROM (SELECT STRUCT(*) AS _sparkmesh_row, {window} AS _sparkmesh_rank "
        f"FROM {source}) AS _sparkmesh_dedup WHERE _sparkmesh_rank = 1"
    )
    return sqlglot.parse_one(text, dialect="spark")
