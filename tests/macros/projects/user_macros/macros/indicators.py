from sqlglot import exp

from dagster_sparkmesh import macro
from macros.utils import SUFFIX


@macro()
def make_indicators(evaluator, string_column, values):
    cases = []
    for value in values.expressions:
        cases.append(f"CASE WHEN {string_column} = '{value}' THEN 1 ELSE 0 END AS {string_column}_{value}{SUFFIX}")
    return cases


@macro()
def between_where(evaluator, column, low, high):
    return column.between(low, high)


@macro("double_it")
def twice(evaluator, value: int) -> exp.Expression:
    return exp.Literal.number(value * 2)


@macro()
def since_start(evaluator, column):
    # Reads the interval: waits for rendering.
    return f"{column} >= '{evaluator.locals['start_ds']}'"


@macro()
def table_of(evaluator, name: str):
    return exp.to_table(f"shop.{name}")
