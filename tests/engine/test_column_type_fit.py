"""Which type changes a forward-only change may write into an existing column (pure: the spelling of types)."""

import pytest

from dagster_sparkmesh.engine.column_additions import _fits, _normalized


@pytest.mark.parametrize(("query_type", "table_type"), [
    ("DECIMAL(10, 2)", "decimal(10,2)"),  # sqlglot's spelling against the catalog's
    ("STRUCT<a: INT>", "struct<a:int>"),
    ("MAP<STRING, INT>", "map<string,int>"),
    ("string", "varchar(3)"),
    ("int", "bigint"),  # widening: nothing changes on write
    ("float", "double"),
    ("void", "int"),  # NULL AS c
])
def test_types_that_hold_the_values_unchanged_fit(query_type, table_type):
    assert _fits(_normalized(query_type), _normalized(table_type))


@pytest.mark.parametrize(("query_type", "table_type"), [
    ("double", "int"), ("bigint", "int"), ("string", "int"), ("timestamp", "date"), ("decimal(12,2)", "decimal(10,2)"),
])
def test_types_whose_values_would_be_cast_do_not_fit(query_type, table_type):
    assert not _fits(_normalized(query_type), _normalized(table_type))
