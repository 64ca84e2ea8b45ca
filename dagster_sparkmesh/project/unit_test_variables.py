"""A unit test's own ``vars`` (other than the interval's) as variables of its SQL model, as SQLMesh renders them.

Project variables are expanded when a model file is read, so the test's model is read again with the test's
variables over the project's: ``@name`` and ``@VAR('name')`` then give the test's values, in the test only."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dagster_sparkmesh.macros.registry import UserMacros
from dagster_sparkmesh.model.records import UnitTest
from dagster_sparkmesh.project.config import ProjectConfig
from dagster_sparkmesh.project.sql.model import ParsedSqlModel, parse_sql_file


def with_model_queries(
    tests: Iterable[UnitTest],
    parsed: Iterable[ParsedSqlModel],
    config: ProjectConfig,
    user_macros: UserMacros,
    external_columns: Mapping[str, Mapping[str, str]],
) -> tuple[UnitTest, ...]:
    """``tests`` where those with variables carry their SQL model's query read with them (``model_query``)."""
    sql_models = {item.model.name: item.model for item in parsed if item.model.path.suffix.lower() == ".sql"}
    done = []
    for test in tests:
        model = sql_models.get(test.model)
        if test.variables and model is not None and model.query is not None:
            variables = {**config.variables, **dict(test.variables)}
            reread = parse_sql_file(model.path, model.path.read_text(encoding="utf-8"), config.model_defaults,
                                    variables, user_macros, gateway=config.default_gateway,
                                    default_catalog=config.default_catalog, external_columns=external_columns)
            query = next((item.model.query for item in reread.models if item.model.name == model.name), None)
            test = test.model_copy(update={"model_query": query})
        done.append(test)
    return tuple(done)

