from sqlglot import exp

from sqlmesh import SQL, macro


@macro()
def between(evaluator, value, start, end):
    return value.between(start, end)


@macro()
def add_one(evaluator, value: int):
    return value + 1


@macro()
def as_text(evaluator, column: SQL):
    # The argument's SQL text in the model's dialect; returned as SQL, parsed back.
    return f"CAST({column} AS TEXT)"


@macro()
def incremental_by_day(evaluator, column: exp.Column):
    return between(evaluator, column, evaluator.locals["start_date"], evaluator.locals["end_date"])
