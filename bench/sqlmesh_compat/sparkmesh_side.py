"""sparkmesh's side of the comparison, in-process through the package API (as the CLI's ``info``, ``render`` and
``test`` commands do): load the project, render every SQL model for the interval, run the YAML unit tests on a
local Spark session."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlmesh_compat.records import Interval, ModelFacts, SideResult, TestOutcome


def sparkmesh_side(folders: list[Path], interval: Interval, spark_folder: Path | None) -> SideResult:
    """``spark_folder``: where the local session keeps its warehouse; None runs no unit tests."""
    from dagster_sparkmesh.project.loader import load_project

    try:
        # Broken models set aside (as Dagster's code location does): one refused model must not hide the others.
        project = load_project(folders[0], more_paths=folders[1:], use_cache=False, set_aside_broken=True)
    except Exception as error:  # a project that does not load is a result, not a crash of the harness
        return SideResult(loaded=False, error=_one_line(error), models={})
    models = {name: _model_facts(project, model, interval) for name, model in project.models.items()}
    tests = _unit_tests(project, spark_folder) if spark_folder is not None and project.unit_tests else {}
    broken = {item.name or item.path.name: _broken_reason(item) for item in project.broken}
    return SideResult(
        loaded=not broken, error=f"{len(broken)} models set aside" if broken else "", models=models,
        externals=frozenset(project.external_models), unit_tests=tests, broken=broken,
    )


def _broken_reason(item) -> str:
    if item.cause:
        return f"reads {item.cause}, which did not load"
    lines = [line.strip() for line in item.error.splitlines() if line.strip()]
    return lines[0] if lines else "did not load"


def _model_facts(project, model, interval: Interval) -> ModelFacts:
    sql, error, statements = None, "", None
    if model.query is not None:
        try:
            sql = _render(project, model, interval)
        except Exception as error_raised:
            error = _one_line(error_raised)
    if model.pre_statements or model.post_statements:
        try:
            statements = tuple(_render_statements(project, model, interval))
        except Exception as error_raised:
            statements = (f"-- error: {_one_line(error_raised)}",)
    return ModelFacts(
        kind=model.kind_name,
        dialect=model.dialect,
        depends_on=tuple(sorted(parent for parent in model.depends_on if parent != model.name)),
        sql=sql,
        sql_dialect="spark",
        render_error=error,
        statements=statements,
    )


def _render(project, model, interval: Interval) -> str:
    """The query with every table named by its model name: physical names are no part of the comparison."""
    from dagster_sparkmesh.project.rendering import render_query

    return render_query(
        model,
        start=datetime.fromisoformat(interval.start),
        end=datetime.fromisoformat(interval.end),
        execution_time=datetime.fromisoformat(interval.execution_time),
        table_for=lambda name: _known(project, name),
        models=project.models,
        variables=project.config.variables,
    )


def _known(project, name: str) -> str | None:
    """A model or external read by its own name; anything else (a file path table) left as written."""
    return name if name in project.models or name in project.external_models else None


def _render_statements(project, model, interval: Interval) -> list[str]:
    from dagster_sparkmesh.project.rendering import render_statements

    return render_statements(
        model,
        [*model.pre_statements, *model.post_statements],
        start=datetime.fromisoformat(interval.start),
        end=datetime.fromisoformat(interval.end),
        execution_time=datetime.fromisoformat(interval.execution_time),
        table_for=lambda name: _known(project, name),
        models=project.models,
        variables=project.config.variables,
    )


def _unit_tests(project, spark_folder: Path) -> dict[str, TestOutcome]:
    from dagster_sparkmesh.engine.adapter import SparkEngine
    from dagster_sparkmesh.engine.session import open_session
    from dagster_sparkmesh.execution.context import ExecutionContext
    from dagster_sparkmesh.execution.unit_tests import run_unit_tests
    from dagster_sparkmesh.project.config import SparkConnection
    from dagster_sparkmesh.state.store import open_state_store

    # One local session for every project of the run: a JVM holds one SparkContext.
    connection = SparkConnection(mode="local", master="local[2]", config={"spark.sql.shuffle.partitions": "2"})
    engine = SparkEngine(open_session(connection, spark_folder))
    state = open_state_store(None, project.path)
    context = ExecutionContext(project=project, state=state, environment="prod", engine_factory=lambda: engine)
    try:
        outcomes = {}
        for test in project.unit_tests:
            try:
                [result] = run_unit_tests(context, {test.name})
                outcomes[test.name] = TestOutcome(passed=result.passed, message=result.message[:300])
            except Exception as error:  # a test that cannot run fails, as in SQLMesh (an error is a failure)
                outcomes[test.name] = TestOutcome(passed=False, message=_one_line(error))
        return outcomes
    finally:
        state.close()


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0][:300] if lines else ''}"
