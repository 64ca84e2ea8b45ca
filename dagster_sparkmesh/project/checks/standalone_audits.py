"""Standalone audits: parsed like a model's query, resolved against the project's models, fingerprinted, rendered.

The query is read as a model query is (the project's macros expanded at load, interval macros kept for rendering,
the canonical text stored), so rendering it is rendering a model's query: model names become the physical tables of
the plan, EMBEDDED models are inlined, ``@start_ds`` and friends get the plan's window.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros import expansion
from dagster_sparkmesh.macros.evaluator import MacroEvaluator
from dagster_sparkmesh.macros.project_macros import user_macros_for
from dagster_sparkmesh.macros.syntax import Source
from dagster_sparkmesh.model.kinds import FullKind
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.model.standalone_audit import StandaloneAudit
from dagster_sparkmesh.project.checks.audits import StandaloneAuditText
from dagster_sparkmesh.project.rendering import TableFor, Variables, render_query
from dagster_sparkmesh.project.sql.model import canonical_sql
from dagster_sparkmesh.project.sql.references import names_a_cte, reference_name
from dagster_sparkmesh.snapshot.fingerprint import external_fingerprint, standalone_audit_fingerprint
from dagster_sparkmesh.macros.parse_errors import parse_error_description


def resolve_standalone_audits(
    texts: Iterable[StandaloneAuditText],
    models: Mapping[str, Model],
    externals: Mapping[str, ExternalModel],
    variables: Mapping[str, object],
    taken: Iterable[str] = (),
) -> dict[str, StandaloneAudit]:
    """Every standalone audit parsed and fingerprinted (``models`` fingerprinted already); ``taken``: the names of the
    other audits, which a standalone audit may not reuse. A model it reads must exist: else a ProjectError there."""
    taken = set(taken)
    result: dict[str, StandaloneAudit] = {}
    for text in texts:
        if text.name in taken or text.name in result:
            raise ProjectError(f"audit {text.name} is defined twice", path=text.path, line=text.line,
                               hint="audit names are unique in the project; rename one of them")
        audit, references = parse_standalone_audit(text, variables)
        _check_reads(text, references, models, externals)
        result[text.name] = with_fingerprint(audit, models, externals)
    return result


def with_fingerprint(
    audit: StandaloneAudit, models: Mapping[str, Model], externals: Mapping[str, ExternalModel]
) -> StandaloneAudit:
    """``audit`` with its fingerprint, over the (fingerprinted) models and external models it reads."""
    parents = {name: models[name].fingerprint if name in models else _external(externals[name])
               for name in audit.depends_on}
    return audit.model_copy(update={"fingerprint": standalone_audit_fingerprint(audit, parents)})


def _external(external: ExternalModel) -> str:
    return external.fingerprint or external_fingerprint(external)


def parse_standalone_audit(
    text: StandaloneAuditText, variables: Mapping[str, object]
) -> tuple[StandaloneAudit, list[tuple[str, int]]]:
    """The audit, and the (name, line) of each table its query names."""
    # Padded to its line in the file: errors and references carry the file's line numbers.
    padded = "\n" * (text.query_line - 1) + text.query
    evaluator = MacroEvaluator(
        dialect=text.dialect,
        variables=variables,
        macros=user_macros_for(text.path),
        deferred=expansion.RENDER_TIME,
        source=Source(text.path, 1, padded),
    )
    try:
        statements = expansion.expand(expansion.parse(padded, text.dialect, evaluator.source), evaluator)
    except ParseError as error:
        detail = error.errors[0] if error.errors else {}
        raise _error(text, f"cannot parse the query of standalone audit {text.name}: {parse_error_description(error)}",
                     detail.get("line") or text.query_line) from None
    except SqlglotError as error:
        raise _error(text, f"cannot parse the query of standalone audit {text.name}: {error}", text.query_line) from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise _error(text, f"standalone audit {text.name} must be one query", text.query_line,
                     hint="select the offending rows with one SELECT (or WITH ... SELECT)")
    references = _references(statements[0])
    audit = StandaloneAudit(
        name=text.name,
        query=canonical_sql(with_spark_equivalents(statements[0], dialect=text.dialect)),
        depends_on=frozenset(name for name, _ in references),
        blocking=text.blocking,
        skip=text.skip,
        description=text.description,
        path=text.path,
        line=text.line,
    )
    return audit, references


def _references(query: exp.Expression) -> list[tuple[str, int]]:
    """(``schema.table``, line) of every table the query names (a bare name in ``default``); CTEs are not models."""
    found = []
    for table in query.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or table.find_ancestor(exp.Hint) is not None:
            continue
        if table.args.get("catalog") or names_a_cte(table):
            continue
        if table.this.name.lower().startswith("__sm"):
            continue  # @this_model and other placeholders: reported by rendering, not a model
        found.append((reference_name(table), table.this.meta.get("line") or 0))
    return found


def _check_reads(
    text: StandaloneAuditText,
    references: list[tuple[str, int]],
    models: Mapping[str, Model],
    externals: Mapping[str, ExternalModel],
) -> None:
    unknown = [(name, line) for name, line in references if name not in models and name not in externals]
    if not references:
        raise _error(text, f"standalone audit {text.name} reads no model", text.query_line,
                     hint="a standalone audit selects the offending rows of the models it names (FROM schema.model)")
    if unknown:
        name, line = unknown[0]
        near = difflib.get_close_matches(name, [*models, *externals], n=1)
        raise _error(text, f"standalone audit {text.name} reads {name}, which is not a model of the project",
                     line or text.query_line,
                     hint=(f"did you mean {near[0]}? " if near else "")
                     + "name a model (schema.table) or declare the table in external_models.yaml")


def _error(text: StandaloneAuditText, message: str, line: int, hint: str | None = None) -> ProjectError:
    lines = text.path.read_text(encoding="utf-8").splitlines() if text.path.is_file() else []
    snippet = lines[line - 1] if 0 < line <= len(lines) else None
    return ProjectError(message, path=text.path, line=line, snippet=snippet, hint=hint)


def tables_read(
    audit: StandaloneAudit, has_table: Callable[[str], bool], parents_of: Callable[[str], Iterable[str]]
) -> set[str]:
    """The tables the audit reads: a model without one (EMBEDDED) is inlined, so what it reads counts instead."""
    tables: set[str] = set()
    stack, seen = list(audit.depends_on), set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if has_table(name):
            tables.add(name)
        else:
            stack.extend(parents_of(name))
    return tables


def render_standalone_audit(
    audit: StandaloneAudit,
    *,
    start: datetime,
    end: datetime,
    execution_time: datetime,
    table_for: TableFor,
    models: Mapping[str, Model],
    variables: Variables | None = None,
) -> str:
    """The Spark SQL returning the audit's offending rows, with models read from ``table_for``'s tables."""
    return render_query(_as_model(audit), start=start, end=end, execution_time=execution_time, table_for=table_for,
                        models=models, variables=variables)


def _as_model(audit: StandaloneAudit) -> Model:
    """The audit as the renderer's input: a query with a file, a line and what it reads (no table of its own)."""
    return Model(name=f"audit.{audit.name}", kind=FullKind(), source="sql", path=audit.path, line=audit.line,
                 query=audit.query, depends_on=audit.depends_on)
