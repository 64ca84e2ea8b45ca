"""``sqlmesh.CustomMaterialization`` and the model a materialization class is handed, as project code uses them.

A class subclasses ``CustomMaterialization`` (optionally ``CustomMaterialization[MyKind]`` with ``MyKind`` a
``CustomKind`` subclass reading ``materialization_properties``), names itself with ``NAME`` and implements
``insert``; ``self.adapter`` is the Spark adapter of ``execution.writes.custom_adapter`` (SQLMesh's adapter method names,
the ones that map onto Spark). ``project.materializations`` finds the classes, ``execution.writes.custom`` runs them.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from sqlglot import exp

from dagster_sparkmesh.sqlmesh_api.kinds import CustomKind

KindT = TypeVar("KindT", bound=CustomKind)


class CustomMaterialization(Generic[KindT]):
    """Base of a project's custom materialization classes."""

    NAME: ClassVar[str] = ""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter

    def insert(
        self, table_name: str, query_or_df: Any, model: Any, is_first_insert: bool, render_kwargs: dict[str, Any],
        **kwargs: Any,
    ) -> None:
        raise NotImplementedError(f"custom materialization {type(self).__name__} must implement insert()")

    def append(self, table_name: str, query_or_df: Any, model: Any, render_kwargs: dict[str, Any], **kwargs: Any) -> None:
        self.adapter.insert_append(table_name, query_or_df)

    def _replace_query_for_model(
        self, model: Any, name: str, query_or_df: Any, render_kwargs: dict[str, Any], **kwargs: Any
    ) -> None:
        # The adapter makes the model's tables as the model says; a call's physical_properties go over its own.
        overrides = {"table_properties": kwargs["physical_properties"]} if "physical_properties" in kwargs else {}
        self.adapter.replace_query(name, query_or_df, **overrides)


class MaterializedModel:
    """What ``insert`` receives as ``model``: the model's name, kind (an instance of the class's kind type) and
    table settings, under SQLMesh's attribute names. Any other attribute is refused with the list of these."""

    _PROVIDED = (
        "name", "kind", "dialect", "columns_to_types", "columns_to_types_or_raise", "annotated", "partitioned_by",
        "clustered_by", "physical_properties", "description", "column_descriptions", "owner", "tags", "cron",
        "start", "is_seed", "table_format", "storage_format", "interval_unit",
    )  # fmt: skip

    def __init__(self, *, name: str, kind: CustomKind, columns: tuple[tuple[str, str], ...], settings: dict[str, Any]):
        self.name = name
        self.kind = kind
        self.dialect = "spark"
        self.columns_to_types = {column: exp.DataType.build(data_type, dialect="spark") for column, data_type in columns} or None
        self.annotated = bool(columns)
        self.is_seed = False
        self.table_format = self.storage_format = None
        self.__dict__.update(settings)

    @property
    def columns_to_types_or_raise(self) -> dict[str, exp.DataType]:
        if not self.columns_to_types:
            raise ValueError(f"model {self.name} declares no columns (add a columns property to its MODEL header)")
        return self.columns_to_types

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"model.{name} is not available to custom materializations in sparkmesh; available: {', '.join(self._PROVIDED)}"
        )


Model = MaterializedModel
QueryOrDF = Any

__all__ = ["CustomMaterialization", "CustomKind", "MaterializedModel", "Model", "QueryOrDF"]
