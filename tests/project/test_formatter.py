from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.sql.formatter import format_model_text

SOURCE = """-- Orders per day.
MODEL (
  name   shop.daily,   -- aligned by hand: kept as written
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds)
);

select ds, count(*) as n, @VAR('min_amount', 3) as floor
from shop.orders   where ds between @start_ds and @end_ds group by ds
"""


def test_body_is_pretty_printed_and_header_kept_verbatim():
    formatted = format_model_text(SOURCE, Path("daily.sql"))
    header = SOURCE[: SOURCE.index(");") + 2]
    assert formatted.startswith(header + "\n\nSELECT\n  ds,\n  COUNT(*) AS n,\n")
    assert "@VAR('min_amount', 3) AS floor" in formatted
    assert "ds BETWEEN @start_ds AND @end_ds" in formatted
    assert formatted.endswith("GROUP BY\n  ds\n")


def test_formatting_is_idempotent():
    once = format_model_text(SOURCE, Path("daily.sql"))
    assert format_model_text(once, Path("daily.sql")) == once


def test_several_statements_keep_their_order():
    text = "MODEL (name a.b, kind FULL);\nset x = 1; select 1 as one"
    assert format_model_text(text, Path("b.sql")).endswith("\n\nSET x = 1;\n\nSELECT\n  1 AS one\n")


def test_unsupported_macro_is_refused_with_its_location():
    with pytest.raises(ProjectError) as caught:
        format_model_text("MODEL (name a.b, kind FULL);\nSELECT @{x} AS y", Path("b.sql"))
    assert (caught.value.line, caught.value.col) == (2, 8)
