"""Run a Python model: call its function with a context and the interval, expose the DataFrame to SQL.

The DataFrame becomes a session temp view, so Python models are written by exactly the same code paths
(interval overwrite, upsert, full replace) as SQL models.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.naming import quote, quote_identifier
from dagster_sparkmesh.snapshot.records import Interval


@dataclass(frozen=True)
class PythonModelContext:
    """What a Python model's function receives as ``context``."""

    spark: Any
    start: datetime
    end: datetime
    execution_time: datetime
    variables: Mapping[str, object]
    _table_for: Callable[[str], str]

    def table(self, model_name: str) -> str:
        """The quoted physical table to read for a parent model (never an environment view)."""
        return quote(self._table_for(model_name.lower()))

    def var(self, name: str, default: object = None) -> object:
        return self.variables.get(name, default)


def python_model_select(
    ctx: ExecutionContext, model: Model, interval: Interval, table_for: Callable[[str], str]
) -> str:
    from dagster_sparkmesh.project.python_models import resolve_python_entrypoint

    function = resolve_python_entrypoint(model.python_entrypoint or "")
    context = PythonModelContext(
        spark=ctx.engine.spark,
        start=interval.start,
        end=interval.end,
        execution_time=ctx.clock(),
        variables=ctx.project.config.variables,
        _table_for=table_for,
    )
    try:
        frame = function(context, interval.start, interval.end, context.execution_time)
    except Exception as error:  # the user's code: report it as their error, with the model's file
        raise ExecutionError(
            f"Python model {model.name} raised {type(error).__name__}: {error}", path=model.path
        ) from error
    if frame is None or not hasattr(frame, "createOrReplaceTempView"):
        raise ExecutionError(
            f"Python model {model.name} returned {type(frame).__name__}, not a Spark DataFrame",
            path=model.path,
            hint="return the DataFrame built from context.spark",
        )
    view = f"sparkmesh_python_{uuid.uuid4().hex[:12]}"
    frame.createOrReplaceTempView(view)
    return f"SELECT * FROM {quote_identifier(view)}"
