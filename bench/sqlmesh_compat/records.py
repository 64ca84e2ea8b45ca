"""The records that cross the harness's modules: what each tool says about a project, and the comparison."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SQLMESH_VERSION = "0.236.4"


@dataclass(frozen=True)
class ExampleProject:
    """One SQLMesh-format example: its folders under ``examples/`` (several for a multi-repo project)."""

    name: str
    folders: tuple[str, ...]
    source: Path | None = None
    """The folder the ``folders`` are in; None: SQLMesh's ``examples/``."""
    setup_sql: tuple[str, ...] = ()
    """Spark SQL run in each tool's catalog before its ``--spark`` build: the tables it reads as externals."""


@dataclass(frozen=True)
class Interval:
    """The interval every model is rendered for, by both tools (ISO datetimes; ``end`` exclusive)."""

    start: str = "2023-01-01T00:00:00"
    end: str = "2023-01-02T00:00:00"
    execution_time: str = "2023-01-02T00:00:00"


@dataclass(frozen=True)
class ModelFacts:
    kind: str
    dialect: str
    depends_on: tuple[str, ...]
    sql: str | None
    """The rendered query as the tool wrote it (in ``sql_dialect``); None for models without a SQL query."""
    sql_dialect: str
    render_error: str = ""
    columns: dict[str, str] = field(default_factory=dict)
    statements: tuple[str, ...] | None = None
    """The pre- then post-statements rendered for the interval (in ``sql_dialect``); None: the model has none."""
    """Column name -> Spark type, where the tool knows them (SQLMesh's side: the schema both renders qualify with)."""


@dataclass(frozen=True)
class TestOutcome:
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class SideResult:
    """One tool's view of one project."""

    loaded: bool
    error: str
    models: dict[str, ModelFacts]
    """Models that the project builds (externals left out), by ``schema.table`` name."""
    externals: frozenset[str] = frozenset()
    external_columns: dict[str, dict[str, str]] = field(default_factory=dict)
    """External model -> its declared columns (SQLMesh's side: part of the schema both renders qualify with)."""
    unit_tests: dict[str, TestOutcome] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    """Model (or file) -> why it did not load: set aside, so that the rest of the project is still compared."""


@dataclass(frozen=True)
class Difference:
    item: str
    reason: str


@dataclass(frozen=True)
class Count:
    equal: int
    total: int

    def __str__(self) -> str:
        return f"{self.equal}/{self.total}"


@dataclass(frozen=True)
class ProjectScore:
    name: str
    sqlmesh_loads: bool
    sparkmesh_loads: bool
    models_equal: bool
    deps: Count
    renders: Count
    statements: Count
    """Models whose rendered pre/post-statements are the same (canonical form), of SQLMesh's models with some."""
    unit_tests: Count
    """Tests whose outcome (pass/fail) is the same in both tools, of SQLMesh's tests."""
    sqlmesh_tests_passing: int
    sparkmesh_tests_passing: int
    differences: tuple[Difference, ...]
    spark_rows: SparkRows | None = None
    """The ``--spark`` stage's counts; None when it did not run."""


@dataclass(frozen=True)
class SparkRows:
    """Both tools' fresh builds on Spark, model by model: same rows, of the models compared (the ones the
    non-determinism rule sets apart are counted apart)."""

    rows: Count
    excluded: int

    def __str__(self) -> str:
        return f"{self.rows}" + (f" ({self.excluded} excluded)" if self.excluded else "")
