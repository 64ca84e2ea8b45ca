"""The examples of SQLMesh's macro documentation (``docs/concepts/macros/sqlmesh_macros.md`` and the predefined
variables of ``macro_variables.md``), each restated here as one model of a small project: the macro call of the
example is kept; the tables it reads are qualified into ``docs_src`` and declared as external models (the page's
``FROM table`` names no table, and sparkmesh wants every table a model reads declared as ``schema.name``); the
Python macros the page shows are written again in ``PYTHON_MACROS`` with the behaviour it describes.

``macro_goldens.py`` renders every case with SQLMesh and records the result in ``tests/macros/goldens/``; the test
``tests/macros/test_sqlmesh_macro_goldens.py`` renders the same files with sparkmesh.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DocCase:
    name: str
    """The model's name is ``docs.<name>``; also the case's id in the golden file."""
    section: str
    """The documentation section the example comes from."""
    query: str
    """The model file after its ``MODEL`` block: ``@DEF`` statements, the query, pre/post-statements."""
    dialect: str = "spark"
    model_block: str = ""
    """A whole ``MODEL (...)`` block, when the example's own one matters (blueprints); else one is written."""

    def model_file(self) -> str:
        block = self.model_block or f"MODEL (name docs.{self.name}, kind FULL, dialect {self.dialect});"
        return f"{block}\n\n{self.query.strip()}\n"


CONFIG = """\
gateways:
  local:
    connection:
      type: duckdb
default_gateway: local
model_defaults:
  dialect: spark
  start: '2023-01-01'
variables:
  my_variable: col
  int_var: 1
  float_var: 2.0
  bool_var: true
  str_var: cat
  list_var: [1, 2, 3]
"""

# The tables the examples read but no case builds: sparkmesh wants every table a model reads declared.
EXTERNAL_MODELS = """\
- name: docs_src.some_table
- name: docs_src.foo
- name: docs_src.rides
- name: docs_src.my_table
- name: docs_src.all_cities
- name: docs_src.city
- name: docs_src.country
- name: docs_src.incremental_model
- name: raw.foo
  columns: {a: string, b: string, c: string, d: int}
- name: raw.union_foo
  columns: {a: int, b: string, c: string}
- name: raw.union_bar
  columns: {a: int, b: int, c: string}
"""

PARENT_MODEL = "MODEL (name docs_src.parent, kind FULL);\n\nSELECT 1 AS id, 'x' AS label, 2.5 AS score\n"

PYTHON_MACROS = '''\
"""The Python macros of SQLMesh's macro documentation, written again for the golden cases."""

from typing import List

from sqlglot import exp

from sqlmesh import SQL, macro


@macro()
def print_text(evaluator):
    return "text"


@macro()
def print_text_quoted(evaluator):
    return "'text'"


@macro()
def arg_in_123_untyped(evaluator, my_arg):
    # The argument arrives as a parsed expression, never equal to a Python int.
    return my_arg in [1, 2, 3]


@macro()
def arg_in_123(evaluator, my_arg: int):
    return my_arg in [1, 2, 3]


@macro()
def add_args(evaluator, argument_1: int = 1, argument_2: int = 2, argument_3: int = 3):
    return argument_1 + argument_2 + argument_3


@macro()
def add_all(evaluator, *args: int):
    return sum(args)


@macro()
def make_indicators(evaluator, string_column, values):
    return [
        f"CASE WHEN {string_column} = '{value}' THEN '{value}' ELSE NULL END AS {string_column}_{value}"
        for value in values.expressions
    ]


@macro()
def get_execution_epoch(evaluator):
    return evaluator.locals["execution_epoch"]


@macro()
def get_macro_var(evaluator, macro_var):
    return evaluator.locals[macro_var]


@macro()
def global_or_default(evaluator):
    return exp.Tuple(expressions=[
        exp.convert(evaluator.var("int_var")),
        exp.convert(evaluator.var("missing_var", "fallback")),
    ])


@macro()
def prefix_columns(evaluator, model_name, prefix: str):
    names = evaluator.columns_to_types(model_name.sql())
    return [exp.column(name).as_(prefix + name) for name in names]


@macro()
def between_where(evaluator, column_name: SQL, low_val: SQL, high_val: SQL):
    return f"{column_name} BETWEEN {low_val} AND {high_val}"


@macro()
def between_where_expression(evaluator, column, low_val, high_val):
    return column.between(low_val, high_val)


@macro()
def repeat_string(evaluator, text: str, count: int):
    return exp.Literal.string(text * count)


@macro()
def stamped(evaluator, query: exp.Select) -> exp.Subquery:
    # A fixed stamp instead of the clock, so that the render is reproducible.
    return query.select(exp.Literal.string("2023-01-02").as_("stamp")).subquery()


@macro()
def with_dev_catalog(evaluator, table: exp.Table) -> exp.Table:
    assert isinstance(table, exp.Table)
    table.set("catalog", exp.to_identifier("dev"))
    return table


@macro()
def sum_integers(evaluator, numbers: List[int]) -> int:
    return sum(numbers)
'''

_ITEMS = "SELECT item_id, count(distinct id) AS num_orders FROM docs_src.incremental_model"

CASES: tuple[DocCase, ...] = (
    # Embedding variables in strings; global variables.
    DocCase("variable_as_literal", "embedding variables in strings", "SELECT @my_variable AS the_column"),
    DocCase("variable_as_identifier", "embedding variables in strings", "SELECT @{my_variable} AS the_column"),
    DocCase("global_variable", "global variables", "SELECT * FROM docs_src.some_table WHERE int_variable = @INT_VAR"),
    DocCase("global_variable_var", "global variables", "SELECT * FROM docs_src.some_table WHERE int_variable = "
            "@VAR('int_var')"),
    DocCase("global_variable_default", "global variables",
            "SELECT * FROM docs_src.some_table WHERE some_value = @VAR('missing_var', 0)"),
    DocCase("global_variable_kinds", "global variables",
            "SELECT @float_var AS f, @bool_var AS b, @str_var AS s, @EACH(@list_var, x -> x * 2) FROM "
            "docs_src.some_table"),
    DocCase("blueprints", "blueprint variables",
            "SELECT @field_a, @{field_b} AS field_b, @field_c AS @{field_c} FROM @customer.some_source",
            model_block="MODEL (\n  name @customer.some_table,\n  kind FULL,\n  blueprints (\n"
                        "    (customer := customer1, field_a := x, field_b := y, field_c := 'foo'),\n"
                        "    (customer := customer2, field_a := z, field_b := w, field_c := 'bar')\n  )\n);"),
    DocCase("local_variable", "local variables",
            f"@DEF(size, 1);\n\n{_ITEMS}\nWHERE item_size > @size\nGROUP BY item_id"),
    # Inline macro functions.
    DocCase("inline_function", "macro functions",
            "@DEF(rank_to_int, x -> case when left(x, 1) = 'A' then 1 when left(x, 1) = 'B' then 2 "
            "when left(x, 1) = 'C' then 3 end);\n\n"
            "SELECT id, cust_rank_1, @rank_to_int(cust_rank_1) AS cust_rank_1_int, "
            "@rank_to_int(cust_rank_2) AS cust_rank_2_int FROM some.model"),
    DocCase("inline_function_two_args", "macro functions",
            "@DEF(pythag, (x,y) -> sqrt(pow(x, 2) + pow(y, 2)));\n\n"
            "SELECT sideA, sideB, @pythag(sideA, sideB) AS sideC FROM some.triangle"),
    DocCase("inline_function_three_args", "macro functions",
            "@DEF(nrr, (starting_mrr, expansion_mrr, churned_mrr) -> "
            "(starting_mrr + expansion_mrr - churned_mrr) / starting_mrr);\n\n"
            "SELECT @nrr(fy21_mrr, fy21_expansions, fy21_churns) AS fy21_net_retention_rate, "
            "@nrr(fy22_mrr, fy22_expansions, fy22_churns) AS fy22_net_retention_rate FROM some.revenue"),
    DocCase("inline_function_nested", "macro functions",
            "@DEF(area, r -> pi() * r * r);\n@DEF(container_volume, (r, h) -> @area(@r) * h);\n\n"
            "SELECT container_id, @container_volume((cont_di / 2), cont_hi) AS volume FROM some.containers"),
    # @EACH.
    DocCase("each_identity", "@EACH", "SELECT @EACH([4, 5, 6], number -> number) FROM docs_src.some_table"),
    DocCase("each_numbers", "@EACH",
            "SELECT @EACH([4,5,6], x -> CASE WHEN favorite_number = x THEN 1 ELSE 0 END as column) FROM "
            "docs_src.some_table"),
    DocCase("each_strings", "@EACH",
            "SELECT @EACH(['4','5','6'], x -> CASE WHEN favorite_number = x THEN 1 ELSE 0 END as column) "
            "FROM docs_src.some_table"),
    DocCase("each_alias_suffix", "@EACH",
            "SELECT @EACH(['4','5','6'], x -> CASE WHEN favorite_number = x THEN 1 ELSE 0 END as column_@x) "
            "FROM docs_src.some_table"),
    DocCase("each_alias_braces", "@EACH",
            "SELECT @EACH([4, 5], x -> x AS @{x}_column), @EACH([4, 5], x -> x AS my_@{x}_column) FROM "
            "docs_src.some_table"),
    # @IF.
    DocCase("if_true", "@IF", "SELECT col1, @IF(1 > 0, sensitive_col) FROM docs_src.some_table"),
    DocCase("if_false_no_else", "@IF", "SELECT col1, @IF(1 > 2, sensitive_col) FROM docs_src.some_table"),
    DocCase("if_false_else", "@IF", "SELECT col1, @IF(1 > 2, sensitive_col, nonsensitive_col) FROM "
            "docs_src.some_table"),
    DocCase("if_conditions", "@IF",
            "SELECT @IF('a' = 'a', 1, 0) AS c1, @IF('a' != 'b', 1, 0) AS c2, @IF(0 < 1, 1, 0) AS c3, "
            "@IF(1 >= 1, 1, 0) AS c4, @IF(2 BETWEEN 1 AND 3, 1, 0) AS c5, @IF('a' IN ('a', 'b'), 1, 0) AS c6"),
    DocCase("if_post_statement", "@IF pre/post-statements",
            f"{_ITEMS}\nGROUP BY item_id\nORDER BY item_id;\n\n"
            "@IF(\n  @runtime_stage = 'evaluating',\n"
            "  ALTER TABLE docs.if_post_statement ALTER item_id TYPE VARCHAR\n);"),
    # @EVAL, @FILTER, @REDUCE.
    DocCase("eval", "@EVAL", "@DEF(x, 1);\n\nSELECT @EVAL(5 + @x) as my_six FROM docs_src.some_table"),
    DocCase("filter", "@FILTER", "SELECT @EACH(@FILTER([1,2,3], x -> x > 1), x -> x) FROM docs_src.some_table"),
    DocCase("reduce_sum", "@REDUCE", "SELECT @REDUCE([1,2,3,4], (x, y) -> x + y) AS total FROM docs_src.some_table"),
    DocCase("reduce_each", "@REDUCE",
            "SELECT my_column FROM docs_src.some_table\n"
            "WHERE @REDUCE(@EACH([col1, col2, col3], x -> x = 1), (x, y) -> x AND y)"),
    # @STAR.
    DocCase("star", "@STAR", "SELECT @STAR(raw.foo, bar, [c], 'baz_', '_qux') FROM raw.foo AS bar"),
    DocCase("star_twice", "@STAR",
            "SELECT @STAR(raw.foo, bar, exclude := [c, d], 'ab_pre_'), "
            "@STAR(raw.foo, bar, exclude := [a, b, c], 'd_pre_'), my_column FROM raw.foo AS bar"),
    # @GENERATE_SURROGATE_KEY, @SAFE_*.
    DocCase("surrogate_key", "@GENERATE_SURROGATE_KEY",
            "SELECT @GENERATE_SURROGATE_KEY(a, b, c) AS col FROM docs_src.foo"),
    DocCase("surrogate_key_sha256", "@GENERATE_SURROGATE_KEY",
            "SELECT @GENERATE_SURROGATE_KEY(a, b, c, hash_function := 'SHA256') AS col FROM docs_src.foo"),
    DocCase("safe_add", "@SAFE_ADD", "SELECT @SAFE_ADD(a, b, c) FROM docs_src.foo"),
    DocCase("safe_sub", "@SAFE_SUB", "SELECT @SAFE_SUB(a, b, c) FROM docs_src.foo"),
    DocCase("safe_div", "@SAFE_DIV", "SELECT @SAFE_DIV(a, b) FROM docs_src.foo"),
    # @UNION.
    DocCase("union_distinct", "@UNION", "@UNION('distinct', raw.union_foo, raw.union_bar)"),
    DocCase("union_default_all", "@UNION", "@UNION(raw.union_foo, raw.union_bar)"),
    DocCase("union_condition_true", "@UNION", "@UNION(1 > 0, 'all', raw.union_foo, raw.union_bar)"),
    DocCase("union_condition_false", "@UNION", "@UNION(1 > 2, 'all', raw.union_foo, raw.union_bar)"),
    # @HAVERSINE_DISTANCE, @PIVOT, @DEDUPLICATE, @DATE_SPINE.
    DocCase("haversine", "@HAVERSINE_DISTANCE",
            "SELECT @HAVERSINE_DISTANCE(driver_y, driver_x, passenger_y, passenger_x, 'mi') AS dist FROM "
            "docs_src.rides"),
    DocCase("haversine_km", "@HAVERSINE_DISTANCE",
            "SELECT @HAVERSINE_DISTANCE(driver_y, driver_x, passenger_y, passenger_x, 'km') AS dist FROM "
            "docs_src.rides"),
    DocCase("pivot", "@PIVOT",
            "SELECT date_day, @PIVOT(status, ['cancelled', 'completed']) FROM docs_src.rides GROUP BY 1"),
    DocCase("pivot_keywords", "@PIVOT",
            "SELECT date_day, @PIVOT(status, ['cancelled', 'completed'], cmp := '<') FROM docs_src.rides GROUP BY 1"),
    DocCase("deduplicate", "@DEDUPLICATE",
            "with raw_data as (\n@deduplicate(docs_src.my_table, [id, cast(event_date as date)], "
            "['event_date DESC', 'status ASC'])\n)\n\nselect * from raw_data", dialect="duckdb"),
    DocCase("deduplicate_spark", "@DEDUPLICATE",
            "with raw_data as (\n@deduplicate(docs_src.my_table, [id, cast(event_date as date)], "
            "['event_date DESC', 'status ASC'])\n)\n\nselect * from raw_data"),
    DocCase("date_spine", "@DATE_SPINE",
            "WITH discount_promotion_dates AS (\n  @date_spine('day', '2024-01-01', '2024-01-16')\n)\n\n"
            "SELECT * FROM discount_promotion_dates", dialect="duckdb"),
    DocCase("date_spine_spark", "@DATE_SPINE",
            "WITH discount_promotion_dates AS (\n  @date_spine('day', '2024-01-01', '2024-01-16')\n)\n\n"
            "SELECT * FROM discount_promotion_dates"),
    # @RESOLVE_TEMPLATE, @AND, @OR, @SQL.
    DocCase("resolve_template_table", "@RESOLVE_TEMPLATE",
            "SELECT * FROM @resolve_template('@{catalog_name}.@{schema_name}.@{table_name}$properties', "
            "mode := 'table')"),
    DocCase("and_operator", "@AND", "SELECT @AND(TRUE, NULL) AS c FROM docs_src.some_table"),
    DocCase("or_operator", "@OR", "SELECT @OR(TRUE, NULL) AS c FROM docs_src.some_table"),
    DocCase("sql", "@SQL", "@DEF(c, amount);\n\nSELECT @SQL('@{c} + 1') AS y FROM docs_src.some_table"),
    # SQL clause operators.
    DocCase("where_true", "SQL clause operators",
            f"@DEF(size, 1);\n\n{_ITEMS}\n@WHERE(TRUE) item_id > @size\nGROUP BY item_id"),
    DocCase("where_false", "SQL clause operators",
            f"@DEF(size, 1);\n\n{_ITEMS}\n@WHERE(FALSE) item_id > @size\nGROUP BY item_id"),
    DocCase("where_comparison", "SQL clause operators",
            f"@DEF(size, 1);\n\n{_ITEMS}\n@WHERE(1 < 2) item_id > @size\nGROUP BY item_id"),
    DocCase("where_variables", "SQL clause operators",
            f"@DEF(left_number, 1);\n@DEF(right_number, 2);\n@DEF(size, 1);\n\n{_ITEMS}\n"
            "@WHERE(@left_number < @right_number) item_id > @size\nGROUP BY item_id"),
    DocCase("with_operator", "SQL clause operators",
            "@WITH(True) all_cities as (select * from docs_src.city)\nselect *\nFROM all_cities"),
    DocCase("join_operator", "SQL clause operators",
            "select *\nFROM docs_src.all_cities\nLEFT OUTER @JOIN(True) docs_src.country\n  ON city.country = "
            "country.name"),
    DocCase("join_operator_false", "SQL clause operators",
            "select *\nFROM docs_src.all_cities\nLEFT OUTER @JOIN(False) docs_src.country\n  ON city.country = "
            "country.name"),
    DocCase("where_operator", "SQL clause operators",
            "SELECT *\nFROM docs_src.all_cities\n@WHERE(True) city_name = 'Toronto'"),
    DocCase("group_by_operator", "SQL clause operators", "SELECT *\nFROM docs_src.all_cities\n@GROUP_BY(True) city_id"),
    DocCase("having_operator", "SQL clause operators",
            "SELECT\ncount(city_pop) as population\nFROM docs_src.all_cities\nGROUP BY city_id\n"
            "@HAVING(True) population > 1000"),
    DocCase("order_by_operator", "SQL clause operators", "SELECT *\nFROM docs_src.all_cities\n@ORDER_BY(True) "
            "city_pop"),
    DocCase("limit_operator", "SQL clause operators", "SELECT *\nFROM docs_src.all_cities\n@LIMIT(True) 10"),
    # User-defined Python macro functions.
    DocCase("python_print_text", "Python macro basics", "SELECT @print_text() as my_text FROM docs_src.some_table"),
    DocCase("python_print_text_quoted", "Python macro basics",
            "SELECT @print_text_quoted() as my_text FROM docs_src.some_table"),
    DocCase("python_untyped_argument", "argument data types", "SELECT @arg_in_123_untyped(1) AS c"),
    DocCase("python_typed_argument", "argument data types", "SELECT @arg_in_123(1) AS c"),
    DocCase("python_positional_arguments", "positional and keyword arguments",
            "SELECT @add_args(5, 6, 7) AS all_given, @add_args(5, 6) AS last_default, "
            "@add_args(5, argument_3 := 8) AS keyword"),
    DocCase("python_variable_arguments", "variable-length arguments",
            "SELECT @add_all(1) AS one, @add_all(1, 2) AS two, @add_all(1, 2, 3) AS three"),
    DocCase("python_list_result", "returning more than one value",
            "SELECT @make_indicators(vehicle, [truck, bus]) FROM docs_src.some_table"),
    DocCase("python_predefined_variable", "accessing predefined and local variable values",
            "SELECT @get_execution_epoch() as execution_epoch FROM docs_src.some_table"),
    DocCase("python_local_variable", "accessing predefined and local variable values",
            "@DEF(my_macro_var, 1);\n\nSELECT @get_macro_var('my_macro_var') as macro_var_value FROM "
            "docs_src.some_table"),
    DocCase("python_global_variable", "accessing global variable values",
            "SELECT @global_or_default() AS pair FROM docs_src.some_table"),
    DocCase("python_model_schema", "accessing model schemas",
            "SELECT @prefix_columns(docs_src.parent, 'stg_') FROM docs_src.parent"),
    DocCase("python_sql_typed", "using SQLGlot expressions",
            "SELECT a FROM docs_src.some_table WHERE @between_where(a, 1, 3)"),
    DocCase("python_expression_builder", "using SQLGlot expressions",
            "SELECT a FROM docs_src.some_table WHERE @between_where_expression(a, 1, 3)"),
    DocCase("python_typed_string", "typed macros", "SELECT @repeat_string('SQLMesh ', 3) as repeated_string "
            "FROM docs_src.some_table"),
    DocCase("python_coerce_select", "typed macros", "SELECT * FROM @stamped('SELECT a, b, c')"),
    DocCase("python_coerce_table_string", "typed macros", "SELECT * FROM @with_dev_catalog('some.tbl')"),
    DocCase("python_coerce_table", "typed macros", "SELECT * FROM @with_dev_catalog(some.tbl)"),
    DocCase("python_generic_list", "advanced typed macros",
            "SELECT @sum_integers([1, 2, 3, 4, 5]) as total FROM docs_src.some_table"),
    # Predefined variables (macro_variables.md).
    DocCase("predefined_variables", "predefined variables (macro_variables.md)",
            "SELECT ds, @start_ds AS start_ds, @end_ds AS end_ds, @execution_ds AS execution_ds, "
            "@start_date AS start_date, @start_ts AS start_ts, @end_ts AS end_ts, @start_epoch AS start_epoch, "
            "@start_millis AS start_millis, @execution_dt AS execution_dt FROM docs_src.some_table "
            "WHERE ds BETWEEN @start_ds AND @end_ds",
            model_block="MODEL (\n  name docs.predefined_variables,\n"
                        "  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),\n  dialect spark\n);"),
    DocCase("runtime_and_gateway", "predefined variables (macro_variables.md)",
            "SELECT @runtime_stage AS stage, @gateway AS gateway FROM docs_src.some_table AS s\n"
            "LEFT ANTI JOIN @this_model AS t ON s.id = t.id"),
)
