"""Custom audits from ``audits/**/*.sql``: ``AUDIT (name ..., blocking ..., defaults (...));`` then one query.

A file may hold several audits. One with ``standalone true`` is not attached to models: it reads models by name and
is returned as a ``StandaloneAuditText``, whose query ``project.standalone_audits`` parses with the project's macros. The text is split with sqlglot's tokenizer (so semicolons inside strings and
comments don't split statements) and each header is read property by property, keeping source offsets for errors.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.builtin_audits import BUILTIN_AUDITS, THIS_MODEL
from dagster_sparkmesh.model.records import AuditDefinition
from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents
from dagster_sparkmesh.macros.parse_errors import parse_error_description

_KEYS = ("name", "blocking", "defaults", "dialect", "description", "standalone", "skip")


@dataclass(frozen=True)
class _Source:
    """One audits file: its path, text, and the tokens of each top-level statement."""

    path: Path
    text: str

    def where(self, offset: int) -> dict[str, object]:
        line = self.text.count("\n", 0, offset) + 1
        col = offset - self.text.rfind("\n", 0, offset)
        snippet = self.text.splitlines()[line - 1] if self.text.splitlines() else None
        return {"path": self.path, "line": line, "col": col, "snippet": snippet}

    def between(self, first: Token, last: Token) -> str:
        return self.text[first.start : last.end + 1]


@dataclass(frozen=True)
class StandaloneAuditText:
    """A standalone audit as written: its header values and its query's text (``line``: where the query starts)."""

    name: str
    query: str
    dialect: str
    blocking: bool
    skip: bool
    description: str | None
    path: Path
    line: int
    query_line: int


def load_audits(project_path: Path, dialect: str = "spark") -> dict[str, AuditDefinition]:
    """Every custom audit of the project that models attach, by (lower-case) name. ``dialect``: the project's
    (``model_defaults.dialect``), in which an audit that names none is read, as SQLMesh reads it."""
    return {name: audit for name, audit in _load_all(project_path, dialect).items() if isinstance(audit, AuditDefinition)}


def load_standalone_audits(project_path: Path, dialect: str = "spark") -> dict[str, StandaloneAuditText]:
    """Every ``standalone true`` audit of the project, by (lower-case) name."""
    return {name: audit for name, audit in _load_all(project_path, dialect).items()
            if isinstance(audit, StandaloneAuditText)}


def _load_all(project_path: Path, dialect: str) -> dict[str, AuditDefinition | StandaloneAuditText]:
    folder = project_path / "audits"
    result: dict[str, AuditDefinition | StandaloneAuditText] = {}
    for path in sorted(folder.rglob("*.sql")) if folder.is_dir() else []:
        for audit, offset, source in _read_file(path, dialect):
            if audit.name in result:
                raise ProjectError(
                    f"audit {audit.name} is defined twice",
                    hint=f"it is also defined in {result[audit.name].path}; rename one of them",
                    **source.where(offset),
                )
            result[audit.name] = audit
    return result


def read_inline_audits(path: Path, text: str, dialect: str) -> tuple[AuditDefinition, ...]:
    """The ``AUDIT (...); query`` blocks of a model file (``text``: the file with everything else blanked), read in
    the model's ``dialect`` unless they name their own."""
    audits = []
    for audit, offset, source in _read_source(_Source(path, text), dialect):
        if isinstance(audit, StandaloneAuditText):
            raise ProjectError(f"standalone audit {audit.name} is written in a model file",
                               hint="move it to a file under audits/: a standalone audit belongs to no model",
                               **source.where(offset))
        audits.append(audit)
    return tuple(audits)


def _read_file(path: Path, dialect: str) -> list[tuple[AuditDefinition | StandaloneAuditText, int, _Source]]:
    try:
        source = _Source(path, path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise ProjectError("audit file is not valid UTF-8", path=path, hint="save the file as UTF-8") from error
    return _read_source(source, dialect)


def _read_source(source: _Source, dialect: str) -> list[tuple[AuditDefinition | StandaloneAuditText, int, _Source]]:
    statements = _statements(source)
    audits = []
    index = 0
    while index < len(statements):
        header = statements[index]
        if not _is_header(header):
            raise ProjectError(
                "expected AUDIT (...) before this query", hint="start each audit with AUDIT (name ...);", **source.where(header[0].start)
            )
        body = []
        while index + 1 < len(statements) and not _is_header(statements[index + 1]):
            index += 1
            body.append(statements[index])
        audits.append((_build(source, header, body, dialect), header[0].start, source))
        index += 1
    return audits


def _statements(source: _Source) -> list[list[Token]]:
    try:
        tokens = sqlglot.Dialect.get_or_raise("spark").tokenize(source.text)
    except TokenError as error:
        raise ProjectError(f"cannot read audit file: {error}", path=source.path, hint="check for an unclosed quote") from error
    statements: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if token.token_type == TokenType.SEMICOLON and depth == 0:
            statements.append([])
        else:
            statements[-1].append(token)
    return [statement for statement in statements if statement]


def _is_header(statement: list[Token]) -> bool:
    return len(statement) > 1 and statement[0].text.upper() == "AUDIT" and statement[1].token_type == TokenType.L_PAREN


def _build(
    source: _Source, header: list[Token], body: list[list[Token]], default_dialect: str
) -> AuditDefinition | StandaloneAuditText:
    properties = _properties(source, header)
    if "name" not in properties:
        raise ProjectError("audit without a name", hint="write AUDIT (name my_audit);", **source.where(header[0].start))
    name_tokens = properties["name"]
    name = source.between(name_tokens[0], name_tokens[-1]).strip("`\"").lower()
    if name in BUILTIN_AUDITS:
        raise ProjectError(
            f"custom audit {name} has the name of a built-in audit", hint="choose another name", **source.where(name_tokens[0].start)
        )
    if not body:
        raise ProjectError(
            f"audit {name} has no query",
            hint="follow the AUDIT (...); header with a query selecting the offending rows of @this_model",
            **source.where(header[0].start),
        )
    if len(body) > 1:
        raise ProjectError(f"audit {name} has more than one query", hint="an audit is a single query", **source.where(body[1][0].start))
    written = properties.get("dialect")
    dialect = source.between(*_ends(written)).strip("'\"").lower() if written else default_dialect
    if _flag(source, properties, "standalone", default=False):
        return _standalone(source, header, body[0], properties, name, dialect)
    if "skip" in properties:
        raise ProjectError(f"audit {name}: skip applies to standalone audits only",
                           hint="remove the audit from the model's audits (...) instead, or add standalone true",
                           **source.where(properties["skip"][0].start))
    return AuditDefinition(
        name=name,
        query=_query(source, body[0], dialect, name),
        defaults=_defaults(source, properties.get("defaults", [])),
        blocking=_flag(source, properties, "blocking", default=True),
        path=source.path,
    )


def _standalone(
    source: _Source, header: list[Token], query: list[Token], properties: dict[str, list[Token]], name: str, dialect: str
) -> StandaloneAuditText:
    if "defaults" in properties:
        raise ProjectError(f"standalone audit {name} takes no defaults", hint="nothing passes it arguments: write the values "
                           "in its query, or use project variables (@var)", **source.where(properties["defaults"][0].start))
    description = properties.get("description")
    return StandaloneAuditText(
        name=name,
        query=source.between(query[0], query[-1]),
        dialect=dialect,
        blocking=_flag(source, properties, "blocking", default=True),
        skip=_flag(source, properties, "skip", default=False),
        description=source.between(*_ends(description)).strip("'\"") if description else None,
        path=source.path,
        line=int(source.where(header[0].start)["line"]),
        query_line=int(source.where(query[0].start)["line"]),
    )


def _ends(tokens: list[Token]) -> tuple[Token, Token]:
    return tokens[0], tokens[-1]


def _split_top_level(tokens: list[Token]) -> list[list[Token]]:
    """Split tokens at commas that are not nested in parentheses."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if token.token_type == TokenType.COMMA and depth == 0:
            parts.append([])
        else:
            parts[-1].append(token)
    return [part for part in parts if part]


def _properties(source: _Source, header: list[Token]) -> dict[str, list[Token]]:
    if header[-1].token_type != TokenType.R_PAREN:
        raise ProjectError("AUDIT header is not closed", hint="end it with ');'", **source.where(header[-1].start))
    properties: dict[str, list[Token]] = {}
    for part in _split_top_level(header[2:-1]):
        key = part[0].text.lower()
        if key not in _KEYS:
            near = difflib.get_close_matches(key, _KEYS, n=1)
            raise ProjectError(
                f"unknown audit property {key!r}",
                hint=f"did you mean {near[0]!r}?" if near else f"known properties: {', '.join(_KEYS)}",
                **source.where(part[0].start),
            )
        if len(part) < 2:
            raise ProjectError(f"audit property {key} has no value", **source.where(part[0].start))
        properties[key] = part[1:]
    return properties


def _flag(source: _Source, properties: dict[str, list[Token]], key: str, *, default: bool) -> bool:
    if key not in properties:
        return default
    tokens = properties[key]
    text = source.between(*_ends(tokens)).lower()
    if text not in {"true", "false"}:
        raise ProjectError(f"{key} must be true or false, not {text!r}", **source.where(tokens[0].start))
    return text == "true"


def _defaults(source: _Source, tokens: list[Token]) -> tuple[tuple[str, str], ...]:
    if not tokens:
        return ()
    if tokens[0].token_type != TokenType.L_PAREN or tokens[-1].token_type != TokenType.R_PAREN:
        raise ProjectError("defaults must be a list in parentheses", hint="write defaults (threshold = 0)", **source.where(tokens[0].start))
    defaults = []
    for part in _split_top_level(tokens[1:-1]):
        if len(part) < 3 or part[1].token_type not in {TokenType.EQ, TokenType.COLON_EQ}:
            raise ProjectError("a default must be written name = value", **source.where(part[0].start))
        value = source.between(part[2], part[-1])
        try:
            parsed = sqlglot.parse_one(value, dialect="spark")
        except ParseError as error:
            raise ProjectError(f"cannot parse default {value!r}: {parse_error_description(error)}", **source.where(part[2].start)) from error
        defaults.append((part[0].text.lower(), parsed.sql(dialect="spark")))
    return tuple(defaults)


def _query(source: _Source, tokens: list[Token], dialect: str, name: str) -> str:
    text = source.between(tokens[0], tokens[-1])
    try:
        parsed = sqlglot.parse_one(_hide_parameters(source, tokens), dialect=dialect).transform(_restore_parameter)
    except ParseError as error:
        detail = error.errors[0] if error.errors else {}
        where = source.where(tokens[0].start)
        if detail.get("line"):
            # sqlglot counts lines from the start of the query; report them in the file.
            line = int(where["line"]) + detail["line"] - 1
            where.update(line=line, col=detail.get("col"), snippet=source.text.splitlines()[line - 1])
        raise ProjectError(f"cannot parse the query of audit {name}: {parse_error_description(error)}", **where) from error
    if not any(parameter.name.lower() == THIS_MODEL for parameter in parsed.find_all(exp.Parameter)) and not any(
        isinstance(table.this, exp.Identifier) for table in parsed.find_all(exp.Table)
    ):
        raise ProjectError(
            f"the query of audit {name} reads no table",
            hint="select the offending rows FROM @this_model (or FROM the model's own name, as SQLMesh allows)",
            **source.where(tokens[0].start),
        )
    # Spark keeps the text as written (placeholders stay @name); other dialects are transpiled once, here.
    return text if dialect == "spark" else with_spark_equivalents(parsed, dialect=dialect).sql(dialect="spark")


_HIDDEN = "__sparkmesh_param__"


def _hide_parameters(source: _Source, tokens: list[Token]) -> str:
    """The query with ``@name`` spelled as a plain identifier, which every dialect parses the same way."""
    text, cursor, pieces = source.text, tokens[0].start, []
    for marker, name in zip(tokens, tokens[1:]):
        if marker.token_type == TokenType.PARAMETER and marker.end + 1 == name.start:
            pieces.append(text[cursor : marker.start] + _HIDDEN + name.text)
            cursor = name.end + 1
    pieces.append(text[cursor : tokens[-1].end + 1])
    return "".join(pieces)


def _restore_parameter(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Identifier) and node.name.startswith(_HIDDEN):
        return exp.Parameter(this=exp.Var(this=node.name.removeprefix(_HIDDEN)))
    return node
