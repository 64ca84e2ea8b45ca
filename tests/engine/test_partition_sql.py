from datetime import datetime

from dagster_sparkmesh.engine.partition_sql import drop_partition_statements, string_literal, window_predicate

START, END = datetime(2024, 1, 2), datetime(2024, 1, 4)


def test_window_compares_dates_and_timestamps_with_timestamp_literals():
    assert window_predicate("ds", "date", START, END, "yyyy-MM-dd") == (
        "`ds` >= TIMESTAMP '2024-01-02 00:00:00' AND `ds` < TIMESTAMP '2024-01-04 00:00:00'"
    )


def test_window_formats_bounds_for_string_and_integer_columns():
    assert window_predicate("ds", "string", START, END, "yyyyMMdd").startswith(
        "`ds` >= date_format(TIMESTAMP '2024-01-02 00:00:00', 'yyyyMMdd')"
    )
    assert "CAST(date_format(" in window_predicate("ds", "int", START, END, "yyyyMMdd")


def test_drop_statements_list_partitions_in_batches():
    specs = [(f"2024-01-{day:02d}", "x'y") for day in range(1, 31)] * 4
    statements = drop_partition_statements("s.t", ["ds", "region"], specs)
    assert len(statements) == 2
    first = "ALTER TABLE `s`.`t` DROP IF EXISTS PARTITION (`ds` = '2024-01-01', `region` = 'x\\'y')"
    assert statements[0].startswith(first)


def test_string_literal_escapes_quotes_and_backslashes():
    assert string_literal("a'b\\c") == "'a\\'b\\\\c'"


def test_a_backtick_in_a_column_name_cannot_end_its_quoting():
    import sqlglot
    from sqlglot import exp

    from dagster_sparkmesh.engine.partition_sql import column_list, partition_spec

    hostile = "ds` >= 0; DROP DATABASE default; --"
    predicate = window_predicate(hostile, "date", START, END, "yyyy-MM-dd")
    assert predicate.startswith("`ds`` >= 0; DROP DATABASE default; --` >= TIMESTAMP")
    statements = sqlglot.parse(f"SELECT {column_list([hostile, 'x'])} FROM t WHERE {predicate}", dialect="spark")
    assert len(statements) == 1, "no second statement escaped the identifier"
    columns = [c.name for c in statements[0].find_all(exp.Column)]
    assert columns == [hostile, "x", hostile, hostile]
    assert partition_spec([hostile], ["1"]) == "PARTITION (`ds`` >= 0; DROP DATABASE default; --` = '1')"


def test_a_formatted_time_column_is_compared_up_to_the_ends_last_microsecond_as_sqlmeshs_between():
    # Whole days: the same rows as `< '2024-01-04'`; a partial day (allow_partials) keeps its day instead of none.
    assert window_predicate("ds", "string", START, END, "yyyy-MM-dd") == (
        "`ds` >= date_format(TIMESTAMP '2024-01-02 00:00:00', 'yyyy-MM-dd') AND "
        "`ds` <= date_format(TIMESTAMP '2024-01-03 23:59:59.999999', 'yyyy-MM-dd')"
    )
    partial = window_predicate("ds", "int", START, datetime(2024, 1, 2, 11), "yyyyMMdd")
    assert partial.endswith("`ds` <= CAST(date_format(TIMESTAMP '2024-01-02 10:59:59.999999', 'yyyyMMdd') AS BIGINT)")
