"""The SQL model files of one repository, parsed: each from the parse cache, else parsed anew (in forked workers
when there are many, ``parallel_parse``), in the files' order; a file's error is raised, or collected in ``broken``
(Dagster's code location sets the file's models aside)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from dagster_sparkmesh.errors import ProjectError, SparkMeshError
from dagster_sparkmesh.macros.registry import UserMacros
from dagster_sparkmesh.project.broken import BrokenModel, tolerant
from dagster_sparkmesh.project.cache import RecordCache
from dagster_sparkmesh.project.config import ProjectConfig
from dagster_sparkmesh.project.parallel_parse import map_in_workers
from dagster_sparkmesh.project.sql.model import ParsedSqlFile, ParsedSqlModel, parse_sql_file


def parsed_sql_files(
    files: list[Path], config: ProjectConfig, cache: RecordCache[ParsedSqlFile] | None, user_macros: UserMacros,
    external_columns: dict[str, dict[str, str]], broken: list[BrokenModel] | None,
) -> list[ParsedSqlModel]:
    """Every SQL model file's models: from the cache, else parsed (``parallel_parse``: in workers when many)."""
    outcomes: dict[Path, object] = {}
    misses: list[tuple[Path, str]] = []
    for file in files:
        key = cache.key(file, file.read_bytes()) if cache is not None else ""
        cached = cache.get(key) if cache is not None else None
        if cached is not None:
            outcomes[file] = cached
        else:
            misses.append((file, key))
    parse = partial(_parse_sql_file, config=config, user_macros=user_macros, external_columns=external_columns)
    for (file, key), outcome in zip(misses, map_in_workers(parse, [file for file, _ in misses])):
        if cache is not None and isinstance(outcome, ParsedSqlFile):
            cache.put(key, outcome)
        outcomes[file] = outcome
    return [item for file in files for item in tolerant(lambda: _models_of(outcomes[file]), file, broken)]


def _models_of(outcome: object) -> list[ParsedSqlModel]:
    if isinstance(outcome, SparkMeshError):
        raise outcome
    assert isinstance(outcome, ParsedSqlFile)
    return list(outcome.models)


def _parse_sql_file(
    file: Path, config: ProjectConfig, user_macros: UserMacros, external_columns: dict[str, dict[str, str]]
) -> ParsedSqlFile:
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProjectError("the model file is not UTF-8 text", path=file, hint=str(error)) from None
    return parse_sql_file(file, text, config.model_defaults, config.variables, user_macros,
                          gateway=config.default_gateway, default_catalog=config.default_catalog,
                          external_columns=external_columns)
