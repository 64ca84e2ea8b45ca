"""Run a Python model: call its function with SQLMesh's contract, expose the result to SQL as a temp view.

The function is called with keyword arguments (``context``, ``start``, ``end``, ``execution_time``, and each
config variable that it names as a parameter, as SQLMesh passes them). It may return a Spark DataFrame, a pandas
DataFrame or a generator of either (no items: no rows). pandas results become Spark DataFrames typed by the
model's ``columns`` through Arrow. The DataFrame becomes a session temp view, so Python models are written by
exactly the same code paths (interval overwrite, upsert, full replace) as SQL models.
"""

from __future__ import annotations

import inspect
import json
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlglot import exp
from sqlglot.dialects.spark import Spark

from dagster_sparkmesh.engine.failures import spark_errors, spark_message
from dagster_sparkmesh.errors import EngineError, ExecutionError, SparkMeshError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.naming import quote_identifier
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.sqlmesh_api.execution_context import ExecutionContext as ModelContext
from dagster_sparkmesh.user_exit import ExitCalled, exit_error, exits_refused

# Kept for code written against the first Python model API: the context's type.
PythonModelContext = ModelContext

_RESERVED = frozenset({"context", "start", "end", "execution_time"})
_KEYWORDS = frozenset(word.lower() for word in Spark.tokenizer_class.KEYWORDS if word.replace("_", "").isalpha())


def python_model_select(
    ctx: ExecutionContext, model: Model, interval: Interval, table_for: Callable[[str], str]
) -> str:
    view = f"sparkmesh_python_{uuid.uuid4().hex[:12]}"
    expose_frame(python_model_frame(ctx, model, interval, table_for), view, model)
    return f"SELECT * FROM {quote_identifier(view)}"


def expose_frame(frame: Any, view: str, model: Model) -> None:
    """The model's DataFrame as the session temp view ``view``. Over Spark Connect this is where Spark first
    analyzes the DataFrame the model built: a column or table it cannot resolve is the model's error, reported at
    its file; a lost session stays an EngineError (transient: the write may be retried)."""
    try:
        with spark_errors(f"the DataFrame of Python model {model.name}"):
            frame.createOrReplaceTempView(view)
    except EngineError as error:
        if error.transient:
            raise
        raise ExecutionError(
            f"Python model {model.name} returned a DataFrame Spark cannot run: {error.spark_message}",
            path=model.path,
            line=model.line,
            hint="fix the DataFrame the model builds (the columns and tables it names)",
        ) from error


def python_model_frame(
    ctx: ExecutionContext,
    model: Model,
    interval: Interval,
    table_for: Callable[[str], str],
    execution_time: datetime | None = None,
    variables: Mapping[str, object] | None = None,
) -> Any:
    """The model's rows for ``interval`` as one Spark DataFrame; ``execution_time`` defaults to the run's clock
    (a unit test gives its own, and its own ``variables`` over the project's)."""
    from dagster_sparkmesh.project.python.models import resolve_python_entrypoint

    function = resolve_python_entrypoint(model.python_entrypoint or "")
    config = ctx.project.config
    context = ModelContext(
        spark=ctx.engine.spark,
        table_for=lambda name: table_reference(table_for(name)),
        start=interval.start,
        # Inclusive, as SQLMesh passes it and as @end_ds renders: real projects iterate over
        # ``range((end - start).days + 1)`` days (SQLMesh's sushi example).
        end=interval.end - timedelta(microseconds=1),
        execution_time=execution_time or ctx.clock(),
        variables={**config.variables, **(variables or {})},
        blueprint_variables={name: json.loads(value) for name, value in model.blueprint_variables},
        gateway=config.default_gateway,
    )
    frames = _call(function, context, model)
    try:
        return _one_frame(frames, context.spark, model)
    except SparkMeshError:
        raise
    except Exception as error:  # pandas or Spark refusing what the model returned (e.g. frames of other columns)
        raise ExecutionError(
            f"Python model {model.name}: Spark cannot take the DataFrames it returned: {spark_message(error)}",
            path=model.path,
            line=model.line,
            hint="return DataFrames of the same columns, of values Spark can type",
        ) from error


def table_reference(qualified_name: str) -> str:
    """A table name for the model's own SQL: quoted only where needed, so that it also reads back in sqlglot's
    default dialect (SQLMesh models build queries with ``exp.select("*").from_(context.table(...))``)."""
    return ".".join(part if _plain(part) else quote_identifier(part) for part in qualified_name.split("."))


def _plain(part: str) -> bool:
    return exp.SAFE_IDENTIFIER_RE.match(part) is not None and part.lower() not in _KEYWORDS


def _call(function: Callable[..., Any], context: ModelContext, model: Model) -> list[Any]:
    """The function's DataFrames, in order; a generator is run to its end (its post-statements run too)."""
    arguments = dict(context=context, start=context.start, end=context.end, execution_time=context.execution_time)
    arguments.update(_variable_arguments(function, context))
    try:
        with exits_refused():
            result = function(**arguments)
            frames = list(result) if inspect.isgenerator(result) or isinstance(result, Iterator) else [result]
    except (SystemExit, ExitCalled) as error:  # fails like any other error: state and locks as after one
        raise exit_error(error, f"Python model {model.name}", kind=ExecutionError) from None
    except ExecutionError:
        raise
    except Exception as error:  # the user's code: report it as their error, at the model's line that raised
        raise _model_raised(error, model) from error
    for frame in frames:
        if not (_is_spark(frame) or _is_pandas(frame)):
            raise ExecutionError(
                f"Python model {model.name} returned {type(frame).__name__}, not a Spark or pandas DataFrame",
                path=model.path,
                line=model.line,
                hint="return (or yield) a DataFrame: context.spark.createDataFrame(...), context.fetch_pyspark_df(sql) or pandas",
            )
    return frames


def _model_raised(error: Exception, model: Model) -> ExecutionError:
    """The error of a model whose code raised ``error``: the line of the model's file it was raised through (the
    call of a helper that raised, say), else the model's own line; Spark's message without its JVM stack."""
    frame = _frame_in(error, model.path)
    return ExecutionError(
        f"Python model {model.name} raised {type(error).__name__}: {spark_message(error) if str(error) else ''}",
        path=model.path,
        line=frame.lineno if frame else model.line,
        snippet=frame.line if frame else None,
        hint=_hint(error),
    )


def _frame_in(error: BaseException, path: Path | None) -> traceback.FrameSummary | None:
    """The innermost frame of ``error``'s traceback in the file ``path``."""
    if path is None:
        return None
    frames = traceback.extract_tb(error.__traceback__)
    wanted = path.resolve()
    return next((frame for frame in reversed(frames) if Path(frame.filename).resolve() == wanted), None)


def _hint(error: Exception) -> str | None:
    if isinstance(error, ModuleNotFoundError):
        # sqlmesh and the project's own modules resolve while the file is imported, not while the model runs.
        return "import sqlmesh names and project helper modules at the top of the model file, not inside the function"
    return None


def _variable_arguments(function: Callable[..., Any], context: ModelContext) -> dict[str, object]:
    """Config variables the function names as parameters (SQLMesh does not pass them through ``**kwargs``)."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return {}
    named = [name for name, p in parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    return {name: context.var(name) for name in named if name not in _RESERVED and context.var(name) is not None}


def _is_spark(frame: object) -> bool:
    return hasattr(frame, "createOrReplaceTempView")


def _is_pandas(frame: object) -> bool:
    return type(frame).__module__.startswith("pandas") and hasattr(frame, "to_records")


def _one_frame(frames: list[Any], spark: Any, model: Model) -> Any:
    spark_frames = [frame if _is_spark(frame) else _from_pandas(frame, spark, model) for frame in frames]
    if not spark_frames:
        return spark.createDataFrame([], _schema(model))
    result = spark_frames[0]
    for frame in spark_frames[1:]:
        result = result.unionByName(frame)
    return result


def _from_pandas(frame: Any, spark: Any, model: Model) -> Any:
    if not model.columns:
        return spark.createDataFrame(frame)
    declared = [name for name, _ in model.columns]
    lowered = {str(column).lower(): column for column in frame.columns}
    missing = [name for name in declared if name not in lowered]
    if missing:
        raise ExecutionError(
            f"Python model {model.name} returned a pandas DataFrame without the declared columns {missing}",
            path=model.path,
            line=model.line,
            hint=f"the DataFrame has {list(frame.columns)}; return every column declared in columns=",
        )
    ordered = frame[[lowered[name] for name in declared]]
    ordered.columns = declared
    # Arrow converts column by column to the declared types (the row path would infer, then fail on mixes).
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    try:
        return spark.createDataFrame(ordered, _schema(model))
    except Exception as error:  # Arrow refuses values that don't fit the declared types
        raise ExecutionError(
            f"Python model {model.name}: the pandas DataFrame does not fit the declared columns: {error}",
            path=model.path,
            line=model.line,
            hint="make the values match the types in columns= (e.g. datetime.date for DATE)",
        ) from error


def _schema(model: Model) -> str:
    if not model.columns:
        raise ExecutionError(
            f"Python model {model.name} produced no DataFrame and declares no columns",
            path=model.path,
            line=model.line,
            hint="declare columns= so that an empty result has a schema",
        )
    return ", ".join(f"{quote_identifier(name)} {kind}" for name, kind in model.columns)
