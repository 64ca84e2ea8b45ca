"""``load_project(path)``: config, models (SQL, Python, seeds), external models, audits, unit tests → Project.

The SQL files are parsed through the per-file cache; everything that needs the whole project (seed file contents,
reference resolution, ordering, fingerprints) is done after, on every load, because it is cheap and a cached
entry cannot know about other files.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.builtin_audits import check_audit_names
from dagster_sparkmesh.model.records import AuditDefinition, ExternalModel, Model, UnitTest
from dagster_sparkmesh.model.standalone_audit import StandaloneAudit
from dagster_sparkmesh.macros.registry import UserMacros, load_user_macros
from dagster_sparkmesh.project.load_limit import load_time_limit
from dagster_sparkmesh.project import dag
from dagster_sparkmesh.project.parse_cache_key import PARSER_MODULES
from dagster_sparkmesh.project.sql import header_partitions
from dagster_sparkmesh.project.sql.lateral_aliases import (
    with_window_aliases_in_test_queries,
    with_window_aliases_over_models,
)
from dagster_sparkmesh.project.sql.typed_operands import with_resolved_test_queries, with_typed_operands
from dagster_sparkmesh.project.checks import audits as audit_files
from dagster_sparkmesh.project.broken import BrokenModel, tolerant, without_unresolved
from dagster_sparkmesh.project.cache import RecordCache, cache_dir, cache_salt
from dagster_sparkmesh.project.column_schema import ModelColumns
from dagster_sparkmesh.project.catalogs import placed_in_catalogs
from dagster_sparkmesh.project.config import ProjectConfig
from dagster_sparkmesh.project.config.loader import load_config
from dagster_sparkmesh.project.checks.audits import load_audits
from dagster_sparkmesh.project.externals import load_external_models, undeclared_externals
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.project.seeds import seed_columns, seed_content_hash
from dagster_sparkmesh.project.materializations import bind_materializations
from dagster_sparkmesh.project.sql_files import parsed_sql_files
from dagster_sparkmesh.project.signals import check_signal_names
from dagster_sparkmesh.project.checks.standalone_audits import resolve_standalone_audits
from dagster_sparkmesh.project.checks.audit_only_models import audit_only_audits, split_audit_only
from dagster_sparkmesh.project.sql.model import ParsedSqlFile, ParsedSqlModel
from dagster_sparkmesh.project.sql.references import TableReference
from dagster_sparkmesh.project.unit_test_variables import with_model_queries
from dagster_sparkmesh.project.checks.unit_tests import load_unit_tests, validate_unit_tests
from dagster_sparkmesh.snapshot.fingerprint import chain_fingerprints
from dagster_sparkmesh.snapshot.naming import without_default_catalog



def load_project(
    path: Path | str,
    *,
    use_cache: bool = True,
    gateway: str | None = None,
    more_paths: Sequence[Path | str] = (),
    set_aside_broken: bool = False,
) -> Project:
    """``gateway`` selects one of the configured Spark gateways, as ``sqlmesh --gateway`` does.

    ``more_paths``: further repositories of a multi-repo project (``sparkmesh -p repo_1 -p repo_2``), as in SQLMesh:
    each folder's files are read with its own config (model defaults, variables, macros), and all models form one
    DAG, so a model may read another repository's models. The first folder's config decides the gateway and the
    state store, and holds the generated files.

    ``set_aside_broken``: a model file that does not load, and every model reading it, goes to ``Project.broken``
    instead of stopping the load (``project.broken``); without it the first error is raised."""
    broken: list[BrokenModel] | None = [] if set_aside_broken else None
    with load_time_limit(Path(path).resolve()):
        return _load(path, use_cache, gateway, more_paths, broken)


def _load(
    path: Path | str, use_cache: bool, gateway: str | None, more_paths: Sequence[Path | str], broken: list[BrokenModel] | None
) -> Project:
    repos = [_read_repo(Path(p).resolve(), use_cache, gateway, broken) for p in [path, *more_paths]]
    first = repos[0]
    externals = _merged_externals(repos)
    repos = _with_models_reading_columns(repos, externals)
    parsed = [item.model_copy(update={"model": item.model.model_copy(update={"root": repo.path})})
              for repo in repos for item in repo.parsed]
    models, references = _collect(parsed)
    models = dag.drop_disabled(models, references)
    models = placed_in_catalogs(models, first.config.connection)
    for repo in repos:
        models = bind_materializations(repo.path, models, repo.names, broken)
    not_loaded = {item.name for item in broken or () if item.name}
    undeclared, undeclared_warnings = undeclared_externals(models, references, externals, not_loaded)
    externals = {**externals, **undeclared}
    if broken is not None:
        models = without_unresolved(models, references, externals, broken)
    for repo in repos:
        names = repo.names  # built once: the property builds the set anew on every call
        check_signal_names(repo.path, (m for m in models.values() if m.name in names))
    dag.check_references(models, references, externals)
    models, audit_only = split_audit_only(models, references)
    models = dag.with_self_references(models)
    ordered = {name: models[name] for name in dag.topological_order(models)}
    # Audit-only models read, none reads them.
    typed, untyped_warnings = with_typed_operands({**ordered, **audit_only}, externals)
    typed = with_window_aliases_over_models(typed, externals)
    ordered, audit_only = {name: typed[name] for name in ordered}, {name: typed[name] for name in audit_only}
    unit_tests = tuple(test for repo in repos for test in repo.unit_tests)
    test_warnings = _validate_unit_tests(unit_tests, ordered, externals)
    unit_tests = tuple(test for test in unit_tests if test.model in ordered)  # (a test of no model: warned, left out)
    unit_tests = with_resolved_test_queries(unit_tests, ordered, externals)
    unit_tests = with_window_aliases_in_test_queries(unit_tests, ordered, externals)
    for repo in repos:
        if repo.cache is not None:
            repo.cache.save()
    audits: dict[str, AuditDefinition] = {}
    for repo in repos:
        audits.update(load_audits(repo.path, repo.config.model_defaults.dialect))
    model_audits = {item.model.name: {audit.name: audit for audit in item.audits} for item in parsed if item.audits}
    audits = _with_inline_audits(audits, model_audits)
    check_audit_names(ordered.values(), audits, model_audits)
    check_audit_names(externals.values(), audits)
    fingerprinted = chain_fingerprints(ordered, externals)
    return Project(
        path=first.path,
        config=first.config,
        models=fingerprinted,
        external_models=externals,
        audits=audits,
        model_audits=model_audits,
        standalone_audits=_standalone_audits(repos, fingerprinted, externals, audits, audit_only),
        unit_tests=unit_tests,
        warnings=(*(warning for repo in repos for warning in repo.warnings), *undeclared_warnings, *untyped_warnings, *test_warnings,
                  *header_partitions.partition_warnings(fingerprinted.values())),
        broken=tuple(broken or ()),
    )


@dataclass(frozen=True)
class _Repo:
    """One project folder's files, parsed with its own config."""

    path: Path
    config: ProjectConfig
    warnings: tuple[str, ...]
    parsed: list[ParsedSqlModel]
    reading_columns: tuple[Path, ...]
    """Python model files whose ``is_sql`` function asked for other models' columns: loaded once the rest is."""
    externals: dict
    unit_tests: tuple
    cache: RecordCache[ParsedSqlFile] | None

    @property
    def names(self) -> set[str]:
        return {item.model.name for item in self.parsed}


def _read_repo(project_path: Path, use_cache: bool, gateway: str | None, broken: list[BrokenModel] | None) -> _Repo:
    if not project_path.is_dir():
        raise ProjectError(f"project folder {project_path} does not exist", path=project_path,
                           hint="pass the folder that holds config.yaml and models/")
    loaded = load_config(project_path, gateway=gateway)
    config = loaded.config
    user_macros = load_user_macros(project_path)
    externals = _named_in_schemas(load_external_models(project_path, gateway=config.default_gateway), config.default_catalog)
    external_columns = {name: dict(external.columns) for name, external in externals.items() if external.columns}
    cache = _sql_cache(project_path, config, user_macros, external_columns) if use_cache else None
    parsed = parsed_sql_files(_files(project_path / "models", "*.sql"), config, cache, user_macros, external_columns, broken)
    python, reading_columns = _python_models(project_path, config, broken)
    parsed = [
        item.model_copy(update={"model": _with_seed(_seed_from_root(item.model, project_path), project_path)})
        for item in [*parsed, *python]
    ]
    return _Repo(
        path=project_path,
        config=config,
        warnings=tuple(loaded.warnings),
        parsed=parsed,
        reading_columns=tuple(reading_columns),
        externals=externals,
        unit_tests=with_model_queries((_test_named_in_schemas(test, config.default_catalog)
                                       for test in load_unit_tests(project_path)), parsed, config, user_macros,
                                      external_columns),
        cache=cache,
    )


def _named_in_schemas(externals: dict[str, ExternalModel], catalog: str | None) -> dict[str, ExternalModel]:
    """External models named with the default catalog, as SQLMesh writes them, under their ``schema.table``."""
    named = {}
    for name, external in externals.items():
        short = without_default_catalog(name, catalog)
        named[short] = external if short == name else external.model_copy(update={"name": short})
    return named


def _test_named_in_schemas(test: UnitTest, catalog: str | None) -> UnitTest:
    """A unit test whose model and inputs are named with the default catalog, under their ``schema.table``."""
    def short(name: str) -> str:
        return without_default_catalog(name, catalog)
    return test.model_copy(update={
        "model": short(test.model),
        "inputs": tuple((short(name), rows) for name, rows in test.inputs),
        "input_queries": tuple((short(name), query) for name, query in test.input_queries),
    })


def _merged_externals(repos: list[_Repo]) -> dict:
    """External models of every repository; a table declared by two of them is declared once (the first wins)."""
    merged: dict = {}
    for repo in repos:
        for name, external in repo.externals.items():
            merged.setdefault(name, external)
    return merged


def _validate_unit_tests(unit_tests: tuple, models: dict[str, Model], externals: dict) -> tuple[str, ...]:
    if not unit_tests:
        return ()
    parents = {name: _test_parents(model) for name, model in models.items()}
    return validate_unit_tests(unit_tests, [*models, *externals], parents)


def _test_parents(model: Model) -> frozenset[str]:
    """What a unit test of ``model`` may give rows of: its parents, and its own table when it reads itself (as in
    SQLMesh, whose tests give a self-reading model's table, empty unless the test has rows of it)."""
    return model.depends_on | {model.name} if model.depends_on_self else model.depends_on


def _files(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.rglob(pattern)) if folder.is_dir() else []


def _sql_cache(
    project_path: Path, config: ProjectConfig, user_macros: UserMacros, external_columns: dict[str, dict[str, str]]
) -> RecordCache[ParsedSqlFile]:
    # The macro files' digest: a model's expansion depends on them as much as on its own text; so does @STAR's on
    # the external models' declared columns.
    settings = (config.model_defaults.model_dump_json(), repr(sorted(config.variables.items())), user_macros.digest,
                config.default_gateway, config.default_catalog or "", repr(sorted(external_columns.items())))
    return RecordCache(cache_dir(project_path, "sql_models"), cache_salt(settings, PARSER_MODULES), ParsedSqlFile)


def _python_models(
    project_path: Path, config: ProjectConfig, broken: list[BrokenModel] | None = None
) -> tuple[list[ParsedSqlModel], list[Path]]:
    """The parsed Python models, and the files set aside because a function asked for other models' columns."""
    from dagster_sparkmesh.project.python.sql_models import ColumnsPending

    result: list[ParsedSqlModel] = []
    waiting: list[Path] = []
    not_yet = ModelColumns({}, {}, final=False)  # every question about columns waits for the second pass
    for file in _files(project_path / "models", "*.py"):
        try:
            result += tolerant(lambda: _python_file(file, config, project_path, not_yet), file, broken)
        except ColumnsPending:
            waiting.append(file)
    return result, waiting


def _with_models_reading_columns(repos: list[_Repo], externals: dict) -> list[_Repo]:
    """The set-aside files, loaded with every other model's columns at hand, in rounds: one is_sql model may ask for
    the columns of another. When a round loads nothing, a function asking about a model that no waiting one
    declares gets the final answer (its error, at its line); if every one waits for another, that is a cycle."""
    from dagster_sparkmesh.project.python.sql_models import ColumnsPending

    waiting = [(index, file) for index, repo in enumerate(repos) for file in repo.reading_columns]
    loaded: dict[int, list[ParsedSqlModel]] = {index: [] for index in range(len(repos))}
    while waiting:
        known = [item for index, repo in enumerate(repos) for item in [*repo.parsed, *loaded[index]]]
        models = {item.model.name: item.model for item in known}
        columns = ModelColumns(models, externals, final=False)
        pending: dict[tuple[int, Path], ColumnsPending] = {}
        for index, file in waiting:
            try:
                loaded[index] += _python_file(file, repos[index].config, repos[index].path, columns)
            except ColumnsPending as error:
                pending[(index, file)] = error
        if len(pending) == len(waiting):
            index, file = _unanswerable(pending)
            final = ModelColumns(models, externals, final=True)
            loaded[index] += _python_file(file, repos[index].config, repos[index].path, final)
            del pending[(index, file)]
        waiting = list(pending)
    return [dataclasses.replace(repo, parsed=[*repo.parsed, *loaded[index]]) for index, repo in enumerate(repos)]


def _unanswerable(pending: dict[tuple[int, Path], Any]) -> tuple[int, Path]:
    """The file asking about a model no waiting file declares; a ProjectError if they all wait for each other."""
    asking = {error.asking for error in pending.values()}
    for key, error in pending.items():
        if error.model not in asking:
            return key
    first = next(iter(pending.values()))
    chain = ", ".join(f"{error.asking} asks for those of {error.model}" for error in pending.values())
    raise ProjectError(f"is_sql models wait for each other's columns: {chain}", path=first.path, line=first.line,
                       hint="a model cannot build its query from the columns of a model that needs its own")


def _python_file(file: Path, config: ProjectConfig, project_path: Path, columns: ModelColumns) -> list[ParsedSqlModel]:
    from dagster_sparkmesh.project.python.models import load_python_models  # the sqlmesh surface, when needed

    result = []
    for model in load_python_models(file, config.model_defaults, project_path, columns):
        references = tuple(TableReference(name=name, line=model.line) for name in sorted(model.depends_on))
        result.append(ParsedSqlModel(model=model, references=references))
    return result


def _collect(parsed: list[ParsedSqlModel]) -> tuple[dict[str, Model], dict[str, tuple[TableReference, ...]]]:
    models: dict[str, Model] = {}
    references: dict[str, tuple[TableReference, ...]] = {}
    for item in parsed:
        model = item.model
        if model.name in models:
            other = models[model.name]
            raise ProjectError(
                f"model {model.name} is defined twice: in {other.path} and in {model.path}",
                path=model.path,
                line=model.line,
                hint="rename one of them (model names are unique schema.table names)",
            )
        models[model.name] = model
        references[model.name] = item.references
    return models, references


def _seed_from_root(model: Model, project_path: Path) -> Model:
    """``path '$root/seeds/x.csv'``: SQLMesh's project-root prefix, rewritten relative to the model's folder (the
    form every reader of the path expects; relative, so the fingerprint does not depend on where the project is)."""
    path = getattr(model.kind, "path", None)
    if not model.kind.from_seed_file or not isinstance(path, str) or not path.startswith("$root"):
        return model
    target = project_path / path[len("$root") :].lstrip("/\\")
    relative = os.path.relpath(target, model.path.parent).replace(os.sep, "/")
    return model.model_copy(update={"kind": model.kind.model_copy(update={"path": relative})})


def _with_inline_audits(
    audits: dict[str, AuditDefinition], model_audits: Mapping[str, Mapping[str, AuditDefinition]]
) -> dict[str, AuditDefinition]:
    """The project's audits (``audits/``) and those of model files whose name one model file alone defines (other
    models may call it, as before); a name several model files define stays each file's own."""
    defined: dict[str, list[AuditDefinition]] = {}
    for own in model_audits.values():
        for audit in own.values():
            defined.setdefault(audit.name, []).append(audit)
    merged = dict(audits)
    for name, definitions in defined.items():
        if name not in merged and len(definitions) == 1:
            merged[name] = definitions[0]
    return merged


def _standalone_audits(
    repos: list[_Repo],
    models: dict[str, Model],
    externals: dict,
    audits: dict[str, AuditDefinition],
    audit_only: dict[str, Model],
) -> dict[str, StandaloneAudit]:
    """Each repository's standalone audits, read with its own variables, then the AUDIT_ONLY models; names are
    unique across all of them."""
    found: dict[str, StandaloneAudit] = {}
    for repo in repos:
        texts = audit_files.load_standalone_audits(repo.path, repo.config.model_defaults.dialect).values()
        found.update(resolve_standalone_audits(texts, models, externals, repo.config.variables, taken=[*audits, *found]))
    found.update(audit_only_audits(audit_only, models, externals, taken=[*audits, *found]))
    return found


def _with_seed(model: Model, project_path: Path | None = None) -> Model:
    """Seed models: columns and content hash come from the CSV, which can change without the .sql file."""
    if not model.kind.from_seed_file:
        return model
    csv_path = model.path.parent / model.kind.path  # type: ignore[union-attr]
    if not csv_path.is_file():
        raise ProjectError(
            f"seed file {model.kind.path} not found",  # type: ignore[union-attr]
            path=model.path,
            line=model.line,
            hint=f"the path is relative to the model file's folder; expected {csv_path}",
        )
    try:
        settings = model.kind.csv_settings  # type: ignore[union-attr]
        update = {"seed_content_hash": seed_content_hash(csv_path, settings),
                  "columns": seed_columns(csv_path, model.columns, settings)}
    except ProjectError as error:
        if project_path is None or csv_path.resolve().is_relative_to(project_path.resolve()):
            raise
        # A file outside the project (an absolute path, ../, a symlink) may be anyone's: no line of it is shown.
        raise ProjectError(f"seed file {csv_path.resolve()} (outside the project) is not a usable CSV: {error.message}",
                           path=model.path, line=model.line, hint=error.hint) from None
    return model.model_copy(update=update)
