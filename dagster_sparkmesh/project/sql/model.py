"""One ``.sql`` model file → a Model record plus the raw table references of its query.

The SQL after the header is parsed once (``sqlglot.parse``, the model's dialect), split into pre-statements, the
single query and post-statements, and written back as canonical Spark SQL: identifiers lower-cased (Spark is
case-insensitive, quoted or not), comments dropped, sqlglot's normalized formatting. Formatting, comments,
keyword and identifier case therefore never change ``Model.query``.

References are kept raw (name, line) rather than resolved: resolution needs the whole project, while this
result is cached per file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, SqlglotError

from dagster_sparkmesh.errors import ProjectError, SparkMeshError
from dagster_sparkmesh.model.kinds import ModelKind, ViewKind, with_project_defaults
from dagster_sparkmesh.model.records import AuditDefinition, Model
from dagster_sparkmesh.model.cron_zones import model_zone
from dagster_sparkmesh.model.interval_units import unit_longer_than_cron, unit_longer_than_cron_message
from dagster_sparkmesh.model.table_formats import merged_properties, with_file_format
from dagster_sparkmesh.project.checks.audits import read_inline_audits
from dagster_sparkmesh.macros import sql_text
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.macros import expansion, jinja
from dagster_sparkmesh.macros.parse_errors import parse_error_description
from dagster_sparkmesh.project.sql.blueprints import Blueprint, split_blueprints
from dagster_sparkmesh.macros.code_digest import macro_code_digest
from dagster_sparkmesh.macros.evaluator import MacroEvaluator
from dagster_sparkmesh.macros.header import expand_value
from dagster_sparkmesh.macros.registry import UserMacros
from dagster_sparkmesh.macros.syntax import Source
from dagster_sparkmesh.project.sql.header_kind import read_kind
from dagster_sparkmesh.project.sql.header_values import Value
from dagster_sparkmesh.project.sql.references import TableReference, query_references, unique_references
from dagster_sparkmesh.project.sql.spark_support import check_runs_on_spark, with_spark_equivalents
from dagster_sparkmesh.project.sql.output_names import with_output_names
from dagster_sparkmesh.project.sql.typed_operands import marked_operands, unmarked
from dagster_sparkmesh.project.sql.header import ModelFile, ModelHeader, read_audit_call, read_header, split_model_file
from dagster_sparkmesh.project.sql.virtual_update import split_virtual_update
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import qualified_name

# Identifiers spelled like a keyword are always quoted, so `date` and date give one canonical text (and a
# quoted `select` never comes out as a bare, broken select).
_KEYWORDS = frozenset(word.lower() for word in Spark.tokenizer_class.KEYWORDS if word.replace("_", "").isalpha())


class ParsedSqlModel(Record):
    """What one SQL file yields; this is the cached value."""

    model: Model
    references: tuple[TableReference, ...] = ()
    audits: tuple[AuditDefinition, ...] = ()
    """``AUDIT (...)`` blocks written in the model file after its query."""


class ParsedSqlFile(Record):
    """What one SQL file yields (one model, or one per blueprint); this is the cached value."""

    models: tuple[ParsedSqlModel, ...]


def parse_sql_file(
    path: Path,
    text: str,
    defaults: ModelDefaults,
    variables: Mapping[str, object],
    macros: UserMacros | None = None,
    *,
    gateway: str | None = None,
    default_catalog: str | None = None,
    external_columns: Mapping[str, Mapping[str, str]] | None = None,
) -> ParsedSqlFile:
    """``default_catalog``: the catalog that names mean when they name none (``ProjectConfig.default_catalog``);
    ``external_columns``: the declared columns of the external models, which ``@STAR`` and ``@UNION`` read at load."""
    model_file = split_model_file(text, path)
    blueprints, model_file = split_blueprints(model_file, defaults.dialect)
    arguments = (path, text, defaults, variables, macros, gateway)
    return ParsedSqlFile(models=tuple(
        _parse_model_file(model_file, *arguments, blueprint, default_catalog, external_columns)
        for blueprint in blueprints or [{}]
    ))


def parse_sql_model(
    path: Path,
    text: str,
    defaults: ModelDefaults,
    variables: Mapping[str, object],
    macros: UserMacros | None = None,
    *,
    gateway: str | None = None,
    default_catalog: str | None = None,
) -> ParsedSqlModel:
    """The one model of a file without blueprints."""
    return _parse_model_file(split_model_file(text, path), path, text, defaults, variables, macros, gateway, {},
                             default_catalog)


def _parse_model_file(
    model_file: ModelFile,
    path: Path,
    text: str,
    defaults: ModelDefaults,
    variables: Mapping[str, object],
    macros: UserMacros | None,
    gateway: str | None,
    blueprint: Blueprint,
    default_catalog: str | None = None,
    external_columns: Mapping[str, Mapping[str, str]] | None = None,
) -> ParsedSqlModel:
    if jinja.has_jinja(model_file.body):
        rendered = jinja.render(model_file.body, path=path, variables=variables, gateway=gateway,
                                macros_source=macros.jinja_source if macros else "")
        model_file = replace(model_file, body=rendered)
    evaluator = load_evaluator(path, defaults.dialect, variables, macros, gateway, text, external_columns)
    evaluator.blueprint_variables = blueprint
    header = read_header(_expand_header(model_file, evaluator), defaults.dialect)
    if header.name is None and defaults.infer_names:
        header.name = inferred_name(path)
    if header.name is None:
        raise ProjectError(
            "the MODEL header has no name",
            path=path,
            line=model_file.line,
            snippet=sql_text.line_at(text, text.lower().find("model")),
            hint="add: name schema.table",
        )
    dialect = header.dialect or defaults.dialect
    kind = _kind_with_defaults(header, defaults, path, dialect)
    evaluator.dialect = dialect
    body, audits_text = _split_inline_audits(model_file.body)
    body, virtual_update_text = split_virtual_update(body, path)
    statements = [
        with_spark_equivalents(without_catalog(with_output_names(statement), default_catalog), dialect=dialect,
                               typed_later=True)
        for statement in _parse_statements(body, path, evaluator)
    ]
    on_virtual_update = _parse_statements(virtual_update_text, path, evaluator) if virtual_update_text else []
    default_pre, default_post, default_virtual_update = (
        [with_spark_equivalents(without_catalog(statement, default_catalog), dialect=dialect)
         for statement in _default_statements(texts, path, evaluator)]
        for texts in (defaults.pre_statements, defaults.post_statements, defaults.on_virtual_update)
    )
    on_virtual_update = [*default_virtual_update, *on_virtual_update]
    for statement in [*statements, *on_virtual_update, *default_pre, *default_post]:
        check_runs_on_spark(statement, dialect=dialect, path=path, body=model_file.body)
    pre, query, post = _split_statements(statements, kind, path, body, model_file.line)
    query = marked_operands(query, dialect) if query is not None else None  # resolved once parents are loaded
    pre, post = [*default_pre, *map(unmarked, pre)], [*default_post, *map(unmarked, post)]  # only the query is typed
    references = query_references(query, model_file.body) if query is not None else []
    references += [TableReference(name=name, line=line) for name, line in header.depends_on]
    model = Model(
        name=header.name,
        kind=kind,
        source="seed" if kind.from_seed_file else "sql",
        path=path,
        line=model_file.line,
        dialect=dialect,
        query=canonical_sql(query) if query is not None else None,
        macro_code=macro_code_digest(text, macros.functions) if macros else None,
        sql_code=body.strip() or None,
        pre_statements=tuple(canonical_sql(statement) for statement in pre),
        post_statements=tuple(canonical_sql(statement) for statement in post),
        on_virtual_update=tuple(canonical_sql(statement) for statement in on_virtual_update),
        cron=header.cron or defaults.cron,
        cron_tz=model_zone(header.cron_tz, defaults.cron_tz),
        interval_unit=header.interval_unit or defaults.interval_unit,
        allow_partials=defaults.allow_partials if header.allow_partials is None else header.allow_partials,
        start=header.start or defaults.start,
        end=header.end,
        owner=header.owner or defaults.owner,
        description=header.description,
        tags=header.tags,
        grains=header.grains,
        partitioned_by=header.partitioned_by,
        partition_expressions=header.partition_expressions,
        table_format=header.table_format or defaults.table_format,
        storage_format=header.storage_format or defaults.storage_format,
        stamp=header.stamp,
        physical_properties=with_file_format(
            header.table_format or defaults.table_format,
            header.storage_format or defaults.storage_format,
            merged_properties(defaults.physical_properties, header.physical_properties),
        ),
        session_properties=merged_properties(defaults.session_properties, header.session_properties),
        columns=header.columns,
        column_descriptions=header.column_descriptions,
        audits=(*(read_audit_call(text, dialect, path) for text in defaults.audits), *header.audits),
        signals=header.signals,
        enabled=defaults.enabled if header.enabled is None else header.enabled,
        depends_on=frozenset(reference.name for reference in references),
    )
    _check_interval_unit(model)
    audits = read_inline_audits(path, audits_text, dialect) if audits_text is not None else ()
    return ParsedSqlModel(model=model, references=unique_references(references), audits=audits)


def _default_statements(texts: tuple[str, ...], path: Path, evaluator: MacroEvaluator) -> list[exp.Expression]:
    """``model_defaults``' statements, parsed for this model (its dialect, its macros), put before its own as
    SQLMesh puts them."""
    return [statement for text in texts for statement in _parse_statements(text, path, evaluator)]


def _check_interval_unit(model: Model) -> None:
    """An ``interval_unit`` longer than the cron's, without ``allow_partials``: refused at load, as in SQLMesh
    (Dagster would show partitions of that unit until a plan refused it)."""
    implied = None if model.allow_partials else unit_longer_than_cron(model.interval_unit, model.cron)
    if implied is not None:
        message, hint = unit_longer_than_cron_message(model.interval_unit, model.cron, implied)
        raise ProjectError(f"{model.name}: {message}", path=model.path, line=model.line,
                           snippet=f"interval_unit '{model.interval_unit}'", hint=hint)


_INLINE_AUDIT = re.compile(r"\s*AUDIT\s*\(", re.IGNORECASE)


def _split_inline_audits(body: str) -> tuple[str, str | None]:
    """The model's statements and, when the file has ``AUDIT (...)`` blocks, the text from the first one on.
    Each part keeps the other blanked, so line numbers stay those of the file."""
    if "audit" not in body.lower():
        return body, None
    clean = sql_text.strip_comments(body)
    # A model without a query (SEED) may start with its audits; otherwise they follow a statement.
    starts = (token.end for token in sql_text.tokens(clean) if token.kind == "semicolon")
    start = next((offset for offset in (0, *starts) if _INLINE_AUDIT.match(clean, offset)), None)
    if start is None:
        return body, None
    return body[:start] + sql_text.blank(body[start:]), sql_text.blank(body[:start]) + body[start:]


def _kind_with_defaults(header: ModelHeader, defaults: ModelDefaults, path: Path, dialect: str) -> ModelKind:
    kind: ModelKind = header.kind or ViewKind()  # type: ignore[assignment]
    written = header.kind_fields_written
    if header.kind is None and defaults.kind:  # SQLMesh's model_defaults.kind
        try:
            kind, written = read_kind(Value(defaults.kind, 0, defaults.kind, path), dialect)  # type: ignore[assignment]
        except ProjectError as error:
            raise ProjectError(f"model_defaults.kind {defaults.kind!r}: {error.message}", path=path,
                               hint=error.hint or "fix model_defaults.kind in config.yaml") from None
    return with_project_defaults(kind, defaults.kind_fields, written)  # type: ignore[return-value]


def load_evaluator(
    path: Path,
    dialect: str,
    variables: Mapping[str, object],
    macros: UserMacros | None,
    gateway: str | None,
    text: str | None = None,
    external_columns: Mapping[str, Mapping[str, str]] | None = None,
) -> MacroEvaluator:
    """The evaluator of one model file at load time: interval values are unknown, so macros reading them wait; the
    columns known at load are the external models' declared ones (a model's wait for render time)."""
    known = external_columns or {}
    return MacroEvaluator(
        columns_to_types=lambda name: known.get(name.lower()),
        dialect=dialect,
        variables=variables,
        locals={"gateway": gateway} if gateway else {},
        macros=macros.functions if macros else {},
        deferred=expansion.RENDER_TIME,
        source=Source(path, 1, text),
        gateway=gateway,
    )


def _expand_header(model_file: ModelFile, evaluator: MacroEvaluator) -> ModelFile:
    properties = []
    for prop in model_file.properties:
        value = prop.value
        expanded = expand_value(prop.key, value.text, evaluator)
        if expanded != value.text:
            # The value's source is patched too: a Value's text is always a slice of its source.
            source = value.source[: value.offset] + expanded + value.source[value.offset + len(value.text) :]
            prop = replace(prop, value=Value(expanded, value.offset, source, value.path))
        properties.append(prop)
    return replace(model_file, properties=tuple(properties))


def _parse_statements(body: str, path: Path, evaluator: MacroEvaluator) -> list[exp.Expression]:
    if not sql_text.strip_comments(body).strip(" \t\r\n;"):
        return []
    try:
        parsed = expansion.parse(body, evaluator.dialect, evaluator.source)
    except ParseError as error:
        raise _syntax_error(error, body, path) from None
    except SqlglotError as error:
        raise ProjectError(f"SQL syntax error: {error}", path=path, hint="fix the SQL after the MODEL header") from None
    except RecursionError:
        # The parser recurses once per nesting level: thousands of nested brackets exhaust the stack.
        raise ProjectError(
            "SQL nested too deeply to parse", path=path, hint="flatten the expression (fewer nested brackets)"
        ) from None
    if "@" not in body:  # no macro syntax at all: nothing to expand (most files of a large project)
        return parsed
    return expansion.expand(parsed, evaluator)


def _syntax_error(error: ParseError, body: str, path: Path) -> ProjectError:
    detail = error.errors[0] if error.errors else {}
    line = detail.get("line")
    lines = body.splitlines()
    snippet = lines[line - 1] if line and 0 < line <= len(lines) else None
    description = parse_error_description(error)
    return ProjectError(
        f"SQL syntax error: {description}",
        path=path,
        line=line,
        col=detail.get("col"),
        snippet=snippet,
        hint="fix the SQL after the MODEL header (it is parsed in the model's dialect)",
    )


def _split_statements(
    statements: list[exp.Expression], kind: ModelKind, path: Path, body: str, header_line: int
) -> tuple[list[exp.Expression], exp.Expression | None, list[exp.Expression]]:
    """Pre-statements, the one query, post-statements."""
    query_positions = [index for index, statement in enumerate(statements) if isinstance(statement, exp.Query)]
    if not query_positions and statements and _is_query_macro(statements[-1]):
        query_positions = [len(statements) - 1]  # ``@UNION(...)`` as the whole query, waiting for the columns
    if not kind.has_query:
        if query_positions:
            raise _statement_error(statements[query_positions[0]], body, path, f"a {kind.name} model has no query",
                                   "remove the SELECT: the data comes from the seed file / the existing table")
        return [], None, statements
    if not query_positions:
        raise ProjectError(
            "the model has no query",
            path=path,
            line=header_line,
            snippet="\n".join(line for line in body.splitlines() if line.strip())[-400:] or None,
            hint="write one SELECT (or WITH ... SELECT) after the MODEL header",
        )
    if len(query_positions) > 1:
        raise _statement_error(statements[query_positions[1]], body, path, "a model has exactly one query; found a second one",
                               "keep one SELECT; move other statements before or after it")
    position = query_positions[0]
    return statements[:position], statements[position], statements[position + 1 :]


_QUERY_MACROS = frozenset({"@UNION", "@DEDUPLICATE", "@DATE_SPINE"})


def _is_query_macro(statement: exp.Expression) -> bool:
    """A macro call that waited (for its relations' columns) and will render to the model's whole query."""
    return isinstance(statement, exp.Anonymous) and isinstance(statement.this, str) and statement.this.upper() in _QUERY_MACROS


def _statement_error(statement: exp.Expression, body: str, path: Path, message: str, hint: str) -> ProjectError:
    first = next((node for node in statement.walk() if node.meta.get("line")), None)
    line = first.meta["line"] if first is not None else None
    lines = body.splitlines()
    snippet = lines[line - 1] if line and line <= len(lines) else None
    return ProjectError(message, path=path, line=line, snippet=snippet, hint=hint)


def canonical_sql(expression: exp.Expression) -> str:
    """Spark SQL that is identical for every formatting, comment, keyword-case and identifier-case variant."""
    if isinstance(expression, exp.Set):
        # A setting's key is case-sensitive and may hold keywords (spark.sql.join.preferSortMergeJoin): lower-cased
        # or quoted, Spark sets another key, or refuses the statement.
        return expression.sql(dialect="spark", comments=False)
    for identifier in expression.find_all(exp.Identifier):
        lowered = identifier.name.lower()
        identifier.set("this", lowered)
        identifier.set("quoted", lowered in _KEYWORDS or not exp.SAFE_IDENTIFIER_RE.match(lowered))
    # copy=False: the caller's tree is already being rewritten here, and copying a large query (sqlglot deep-copies
    # every node's position dict) costs more than generating it.
    return expression.sql(dialect="spark", comments=False, normalize=True, copy=False)


def inferred_name(path: Path) -> str:
    """SQLMesh's name of a model without one, under ``model_naming.infer_names``: the folders below ``models/`` and
    the file's name, the last three of them (``models/shop/orders.sql`` is ``shop.orders``, ``models/orders.sql``
    ``default.orders``)."""
    parts = [*path.parts[path.parts.index("models") + 1 : -1], path.stem] if "models" in path.parts else [path.stem]
    try:
        return qualified_name(parts[-3:])
    except SparkMeshError as error:
        raise ProjectError(f"cannot name the model after its file: {error.message}", path=path,
                           hint="put the file in a folder named after its schema (models/shop/orders.sql), or "
                                "give the MODEL header a name") from None


def without_catalog(statement: exp.Expression, catalog: str | None) -> exp.Expression:
    """``catalog.schema.table`` as ``schema.table`` where ``catalog`` is the project's default catalog (SQLMesh's
    fully qualified names of its own models); other catalogs are kept."""
    if catalog:
        for table in statement.find_all(exp.Table):
            if table.args.get("catalog") is not None and table.catalog.lower() == catalog and table.db:
                table.set("catalog", None)
    return statement
