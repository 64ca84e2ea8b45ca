"""``ExecutionContext``: what a Python model's function receives as ``context``, on Spark.

It offers what SQLMesh's context offers on Spark (``spark``, ``resolve_table``/``table``, ``fetchdf``,
``fetch_pyspark_df``, ``var``, ``blueprint_var``, ``gateway``, ``default_catalog``, ``with_variables``). Table
names resolve to the physical table of the parent's version (never an environment view), so a model reads
exactly the data its plan computed. Pyspark is not imported: ``spark`` is whatever session the runner passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from dagster_sparkmesh.errors import ExecutionError


@dataclass(frozen=True)
class ExecutionContext:
    spark: Any
    table_for: Callable[[str], str]
    """Model name (lower case) → quoted physical table name."""
    start: datetime | None = None
    end: datetime | None = None
    execution_time: datetime | None = None
    variables: Mapping[str, object] = field(default_factory=dict)
    blueprint_variables: Mapping[str, object] = field(default_factory=dict)
    gateway: str | None = None
    default_catalog: str | None = None

    def resolve_table(self, model_name: str) -> str:
        """The quoted physical table to read for a parent model."""
        return self.table_for(_model_key(model_name))

    def table(self, model_name: str) -> str:
        return self.resolve_table(model_name)

    def fetchdf(self, query: object, quote_identifiers: bool = False) -> Any:
        """Run Spark SQL and return a pandas DataFrame (collected to the driver: keep it small)."""
        return self.fetch_pyspark_df(query).toPandas()

    def fetch_pyspark_df(self, query: object, quote_identifiers: bool = False) -> Any:
        text = query.sql(dialect="spark") if hasattr(query, "sql") else str(query)
        return self.spark.sql(text)

    def var(self, name: str, default: object = None) -> object:
        return self.variables.get(name.lower(), self.variables.get(name, default))

    def blueprint_var(self, name: str, default: object = None) -> object:
        return self.blueprint_variables.get(name.lower(), self.blueprint_variables.get(name, default))

    def with_variables(
        self, variables: Mapping[str, object], blueprint_variables: Mapping[str, object] | None = None
    ) -> ExecutionContext:
        return replace(
            self,
            variables={**self.variables, **variables},
            blueprint_variables={**self.blueprint_variables, **(blueprint_variables or {})},
        )

    @property
    def engine_adapter(self) -> Any:
        """Only its ``dialect``: models read it to build SQL with sqlglot in the engine's dialect (SQLMesh's sushi
        example does); anything else an adapter has is a clear error."""
        return _SparkAdapter()


class _SparkAdapter:
    dialect = "spark"

    def __getattr__(self, name: str) -> Any:
        raise ExecutionError(
            f"context.engine_adapter.{name} is not available: sparkmesh runs models on Spark without SQLMesh's "
            "adapters (only engine_adapter.dialect is)",
            hint="use context.spark (a SparkSession), context.fetchdf(sql) or context.fetch_pyspark_df(sql)",
        )


def _model_key(model_name: str) -> str:
    # The same normalization as the loader's, so `Raw`.`Items` and raw.items name the same parent.
    from dagster_sparkmesh.project.externals import normalize_table_name

    return normalize_table_name(model_name, path=None)  # type: ignore[arg-type]


__all__ = ["ExecutionContext"]
